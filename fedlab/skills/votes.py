"""Vote records: how the Committee voted at each meeting a question about votes names, composed
from the passages.

The agent hands a question about votes (fedlab.query.subjects.asks_about_votes: votes, dissents,
unanimity) the vote record of each policy meeting in its range, as passages under the section
fedlab.facts.timeline.VOTE_SECTION: the statement's "Voting for …" sentence, its "Voting against
…" sentence and the rest of that paragraph ("Absent and not voting was …"). Each record gives one
line, in date order: "June 2025: unanimous, 12 voting for [Source 3]." or "July 2025: 9 for, 2
against — Michelle W. Bowman and Christopher J. Waller, who preferred to lower … [Source 4]; absent
and not voting: Adriana D. Kugler." With more than ``FULL_LINES`` meetings the unanimous ones share
one line ("Unanimous at the other 5 meetings: January 2019 [Source 2], …"). A question asking who
voted (who or which, and not about dissents or unanimity) also gets the names voting for at each
of at most two meetings, or over more the names voting at the last meeting but not the first and
the other way round (the annual rotation of the Reserve Bank presidents). A question about dissents
whose meetings were all unanimous opens with "No dissents." (the agent hands the record of every
policy meeting in the question's range).
No record among the passages: no lines ("").
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from fedlab.facts.passage import record_of
from fedlab.facts.timeline import VOTE_SECTION
from fedlab.facts.votes import VoteRecord, read_vote
from fedlab.query.frame import QuestionFrame
from fedlab.skills.base import SkillAnswer
from fedlab.skills.passages import cite_sources, in_section, passage_head
from fedlab.skills.wording import in_label, meeting_labels

FULL_LINES = 3  # meetings that each get a line whatever their vote
VOTE_SENTENCE = re.compile(r"\s*(?:Voting\s+(?:for|against)|Absent\s+and\s+not\s+voting)\b")  # what a record states
# who voted for the action, who voted as an alternate: the roster changes with the rotation, not the policy
ROSTER = re.compile(r"\s*(?:Voting\s+for\b|[A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*){0,3}\s+voted\s+as\s+(?:an\s+)?alternate\b)")
ASKS_WHO_RE = re.compile(r"\b(?:who|which|whom|whose)\b", re.I)
DISSENT_RE = re.compile(r"\bdissent\w*|\bvot\w*\s+against\b", re.I)  # asks whether anyone voted against
SPLIT_RE = re.compile(r"\b(?:dissent\w*|against|unanim\w*|abstain\w*)", re.I)  # asks how the vote split, not who voted


def asks_who_voted(question: str) -> bool:
    return bool(ASKS_WHO_RE.search(question)) and not SPLIT_RE.search(question)


def is_vote_record(passage: str) -> bool:
    return in_section(passage, VOTE_SECTION)


@dataclass(frozen=True)
class MeetingVote:
    vote: VoteRecord
    source: int  # the passage's [Source N]


def is_vote_passage(passage: str) -> bool:
    """A vote record the agent handed over: a passage stating a VoteRecord, or one handed as text
    under the section VOTE_SECTION."""
    return record_of(passage, VoteRecord) is not None or is_vote_record(passage)


def read_votes(passages: list[str]) -> dict[str, MeetingVote]:
    """meeting date -> its vote, from the vote records among the passages (the first for each
    meeting): the record a passage states, or one read from a passage handed as text."""
    found: dict[str, MeetingVote] = {}
    for i, passage in enumerate(passages):
        if not is_vote_passage(passage):
            continue
        n, meeting, _, body = passage_head(passage, i)
        if meeting is None or meeting in found:
            continue
        vote = record_of(passage, VoteRecord) or read_vote(body)
        if vote is not None:
            found[meeting] = MeetingVote(vote, n)
    return found


def _line(label: str, meeting: MeetingVote, names: bool) -> str:
    cite, vote = cite_sources([meeting.source]), meeting.vote
    if vote.n_against:
        line = f"{label}: {len(vote.voters)} for, {vote.n_against} against — {vote.against} {cite}"
    else:
        line = f"{label}: unanimous, {len(vote.voters)} voting for {cite}"
    if names and vote.voters:
        line += f"; voting for: {', '.join(vote.voters)}"
    if vote.absent:
        line += f"; absent and not voting: {vote.absent}"
    return line + "."


def vote_record_answer(question: str, passages: list[str]) -> str:
    """The vote lines (module docstring); "" when the passages hold no vote record."""
    votes = read_votes(passages)
    if not votes:
        return ""
    dates = sorted(votes)
    labels = meeting_labels(dates)
    who = asks_who_voted(question)
    if len(dates) <= FULL_LINES:
        lines = [_line(labels[d], votes[d], who and len(dates) <= 2) for d in dates]
    else:
        split = [d for d in dates if votes[d].vote.n_against]
        unanimous = [d for d in dates if not votes[d].vote.n_against]
        lines = [_line(labels[d], votes[d], False) for d in split]
        if unanimous:
            other = "other " if split else ""
            count = "meeting" if len(unanimous) == 1 else f"{len(unanimous)} meetings"
            lines.append(f"Unanimous at the {other}{count}: "
                         + ", ".join(f"{labels[d]} {cite_sources([votes[d].source])}" for d in unanimous) + ".")
    if who and len(dates) > 2:
        lines.append(_rotation(dates[0], dates[-1], votes, labels))
    if DISSENT_RE.search(question) and not any(votes[d].vote.n_against for d in dates):
        lines.insert(0, "No dissents.")  # what was asked, before the meetings that show it
    return " ".join(lines)


def _rotation(first: str, last: str, votes: dict[str, MeetingVote], labels: dict[str, str]) -> str:
    """Who voted at the last meeting but not the first, and the other way round."""
    before, after = votes[first].vote.voters, votes[last].vote.voters
    cite = cite_sources([votes[first].source, votes[last].source])
    joined = [n for n in after if n not in before] or ["nobody"]
    left = [n for n in before if n not in after] or ["nobody"]
    return (f"Voting {in_label(labels[last])} but not {in_label(labels[first])}: {', '.join(joined)}; "
            f"voting {in_label(labels[first])} but not {in_label(labels[last])}: {', '.join(left)} {cite}.")


class Votes:
    """How the Committee voted (module docstring), from the vote records the agent adds to a
    question about votes; the reader then leaves the records' "Voting for / against" sentences out."""

    name = "votes"
    needs = f"the passages under the section {VOTE_SECTION!r}"

    def applies(self, frame: QuestionFrame) -> bool:
        return frame.votes

    def answer(self, frame: QuestionFrame, passages: list[str]) -> SkillAnswer | None:
        text = vote_record_answer(frame.question, passages)
        if not text:
            return None
        return SkillAnswer(text, [p for p in passages if not is_vote_passage(p)],
                           said=lambda sentence: bool(VOTE_SENTENCE.match(sentence)))


SKILL = Votes()

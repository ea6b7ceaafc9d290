"""The extractive reader's answer to "when did the statements say …": for each run of policy
statements the agent handed over (fedlab.retrieval.mentions; passages whose section ``said_in``
reads), one line saying from when to when and in how many statements (in words, as the rate path
counts, unless more than twenty), then the first and the last statement's sentence and the new
wording in the statement after them (or that statement, cited, when nothing in it is close), each
cited:

    The policy statements said this from March 2023 to December 2023, in all eight statements [1][2].
    March 2023: The U.S. banking system is sound and resilient. [1] December 2023: … [2]
    The January 2024 statement no longer did: … [3]
"""
from __future__ import annotations

from dataclasses import dataclass

from fedlab.facts.passage import record_of
from fedlab.query.frame import QuestionFrame
from fedlab.query.lexicon import NUMBER_WORDS
from fedlab.retrieval.mentions import SaidPlace, said_in
from fedlab.skills.base import SkillAnswer
from fedlab.skills.passages import read_passage
from fedlab.skills.wording import count_word, meeting_labels


@dataclass(frozen=True)
class SaidPassage:
    source: int  # the passage's [Source N]
    meeting_date: str
    place: SaidPlace
    sentence: str


def split_said(passages: list[str], read) -> tuple[list[SaidPassage], list[str]]:
    """The passages placed in a run — the place a passage states (fedlab.facts.passage), or the one
    its section names — and the others; ``read(passage) -> (source n, meeting date, section, text)``
    parses one."""
    said, rest = [], []
    for passage in passages:
        n, meeting, section, text = read(passage)
        place = record_of(passage, SaidPlace) or said_in(section)
        if place is None or meeting is None or n is None:
            rest.append(passage)
        else:
            said.append(SaidPassage(n, meeting, place, " ".join(text.split())))
    return said, rest


def _cite(*sources: int) -> str:
    return "[" + ", ".join(f"Source {n}" for n in dict.fromkeys(sources)) + "]"


def said_answer(said: list[SaidPassage]) -> str:
    """The lines of the module docstring, run by run; "" with no passage placed in a run."""
    runs: dict[int, dict[str, SaidPassage]] = {}
    for p in said:
        runs.setdefault(p.place.run, {}).setdefault(p.place.role, p)
    out = []
    for number in sorted(runs):
        roles = runs[number]
        first = roles.get("first")
        if first is None:
            continue
        last, after, dropped, place = roles.get("last"), roles.get("after"), roles.get("dropped"), first.place
        labels = meeting_labels(sorted({p.meeting_date for p in roles.values()}))
        searched = " (the first statement searched)" if place.opens_range else ""
        if last is None:
            out.append(f"Of the policy statements searched, only that of {labels[first.meeting_date]} said this "
                       f"{_cite(first.source)}.")
        else:
            # in words, as the rate path counts, unless the larger has none: both alike
            spell = count_word if place.statements < len(NUMBER_WORDS) else str
            saying, statements = spell(place.saying), spell(place.statements)
            count = "both" if place.saying == place.statements == 2 else f"all {saying}" \
                if place.saying == place.statements else f"{saying} of the {statements}"
            out.append(f"The policy statements said this from {labels[first.meeting_date]} to "
                       f"{labels[last.meeting_date]}, in {count} statements {_cite(first.source, last.source)}.")
        if last is not None and last.sentence == first.sentence:
            out.append(f"{labels[first.meeting_date]}{searched} and {labels[last.meeting_date]}: {first.sentence} "
                       f"{_cite(first.source, last.source)}")
        else:
            out.append(f"{labels[first.meeting_date]}{searched}: {first.sentence} {_cite(first.source)}")
            if last is not None:
                out.append(f"{labels[last.meeting_date]}: {last.sentence} {_cite(last.source)}")
        if after is not None:
            out.append(f"The {labels[after.meeting_date]} statement no longer did: {after.sentence} {_cite(after.source)}")
        elif dropped is not None:
            out.append(f"The {labels[dropped.meeting_date]} statement no longer did {_cite(dropped.source)}.")
    return " ".join(out)


class SaidRuns:
    """When the statements said something (module docstring), from the passages the agent placed
    in a run of statements (so it applies whenever it is handed them); those passages are its alone."""

    name = "said_run"
    needs = "the passages the agent places in a run of statements, each stating its SaidPlace (fedlab.retrieval.mentions)"

    def applies(self, frame: QuestionFrame) -> bool:
        return True

    def answer(self, frame: QuestionFrame, passages: list[str]) -> SkillAnswer | None:
        said, rest = split_said(passages, read_passage)
        return SkillAnswer(said_answer(said), rest)


SKILL = SaidRuns()

"""Hold-run answers: how long the federal funds target range stayed at one level, read from the passages.

A question that asks how long the range was held ("how many meetings did the FOMC sit at 4-1/4 to
4-1/2 percent before cutting again", "once the Fed made its final hike, how many meetings in a row
did it hold the range": fedlab.retrieval.events.asks_hold_run) is searched over the run's meetings
(the event resolver names the meeting that set the range, those that held it and the move that
ended it). The answer is composed from the decision sentences in the passages (one per meeting,
fedlab.skills.rate_path.read_decisions): the run is the range the question names, else the one in
force after the meeting it dates, else — when the question starts the run at an event or an
extreme, which the search resolved — the longest run of holds found. The answer names the meeting
that set the range, counts and lists the meetings that held it, and gives the move that ended the
run, each cited to the passage it was read from. When two decisions of the run, or its last and
the move, are more than ``MAX_GAP_DAYS`` apart a meeting may be missing: the count reads "at
least", and the move is only given as the next when its sentence says it moved from the run's
range ("by N", "from X"). A directive that only maintains the range (a notation vote) links the
run but is no meeting's hold.

No run with a hold among the passages: no hold-run answer (None); the caller falls back.
"""
from __future__ import annotations

import re

from fedlab.facts.timeline import bp
from fedlab.query.frame import QuestionFrame
from fedlab.retrieval.events import asks_hold_run, named_range
from fedlab.skills.base import SkillAnswer
from fedlab.skills.passages import cite_sources
from fedlab.skills.rate_path import MAX_GAP_DAYS, PassageDecision, days_between, read_decisions
from fedlab.skills.wording import bp_text, count_word, in_label, meeting_labels, points_text, range_text


# the question says where the run starts, by an event the search resolved ("once the Fed made its
# final hike", "after the December 2024 cut") or an extreme ("at their peak")
_STARTS_FROM = re.compile(r"\b(?:after|once|since|following|from|peak|trough|lowest|highest|zero)\b", re.I)


def _runs(decisions: list[PassageDecision]) -> list[list[PassageDecision]]:
    """Consecutive decisions at one range."""
    runs: list[list[PassageDecision]] = []
    for d in decisions:
        if runs and (runs[-1][-1].low, runs[-1][-1].high) == (d.low, d.high):
            runs[-1].append(d)
        else:
            runs.append([d])
    return runs


def _holds(run: list[PassageDecision]) -> list[PassageDecision]:
    return [d for d in run if d.direction == "hold" and d.via == "decision_sentence"]


def _chosen(runs: list[list[PassageDecision]], question: str, hint) -> int | None:
    """The index of the run the question asks about (module docstring), or None."""
    target = named_range(question)
    candidates = [i for i, run in enumerate(runs) if _holds(run)]
    if target is not None:
        candidates = [i for i in candidates if (runs[i][0].low, runs[i][0].high) == target]
    elif hint is not None and hint.scope in ("meeting", "month") and hint.date_from:
        dated = [i for i in candidates
                 if any(hint.date_from <= d.date <= (hint.date_to or hint.date_from) for d in runs[i])]
        candidates = dated[-1:] or candidates
    elif not _STARTS_FROM.search(question):
        return None  # "how long did the Fed stay on hold?": which run is not said
    if not candidates:
        return None
    return max(candidates, key=lambda i: (len(_holds(runs[i])), -i))


def _moved_from(move: PassageDecision, held: PassageDecision) -> bool:
    """Whether ``move``'s sentence says it moved from ``held``'s range ("from X", or "by N" that
    bridges the two)."""
    if move.stated_from is not None:
        return move.stated_from == (held.low, held.high)
    return move.stated_bp is not None and move.stated_bp == abs(bp(move.low, held.low))


def hold_run_answer(question: str, passages: list[str], hint=None) -> str | None:
    """The composed hold-run answer (module docstring), or None when it does not apply."""
    if not asks_hold_run(question):
        return None
    runs = _runs(read_decisions(passages))
    i = _chosen(runs, question, hint)
    if i is None:
        return None
    run = runs[i]
    holds = _holds(run)
    first = run[0]
    ended = runs[i + 1][0] if i + 1 < len(runs) else None
    complete = all(days_between(a.date, b.date) <= MAX_GAP_DAYS for a, b in zip(run, run[1:]))
    if ended is not None and days_between(run[-1].date, ended.date) > MAX_GAP_DAYS:
        complete = False  # a hold may be missing before the move; and the move is the next only if it says
        if not _moved_from(ended, first):  # it moved from this range
            ended = None
    labels = meeting_labels([d.date for d in run] + ([ended.date] if ended is not None else []))
    at = range_text(first.low, first.high)
    n = f"{'' if complete else 'at least '}{'the next ' if first.direction in ('raise', 'cut') else ''}" \
        f"{count_word(len(holds))} meeting{'s' if len(holds) != 1 else ''}"
    listed = ", ".join(labels[d.date] for d in holds)
    hold_cites = cite_sources([d.source for d in holds])
    if first.direction in ("raise", "cut"):
        verb = "raised" if first.direction == "raise" else "lowered"
        answer = (f"The Committee {verb} the target range for the federal funds rate to {at} "
                  f"{in_label(labels[first.date])} {cite_sources([first.source])} and held it there for {n} "
                  f"({listed}) {hold_cites}.")
    else:
        answer = (f"The Committee held the target range for the federal funds rate at {at} for {n} in a row "
                  f"({listed}) {hold_cites}.")
    if ended is not None:
        change = ended.stated_bp if ended.stated_bp is not None else abs(bp(ended.low, first.low))
        direction = ended.direction if ended.direction in ("raise", "cut") else (
            "raise" if ended.low > first.low else "cut")
        verb = "raising" if direction == "raise" else "lowering"
        by = f" by {points_text(change)} ({bp_text(change)})" if change else ""
        answer += (f" It next moved {in_label(labels[ended.date])}, {verb} the range{by} to "
                   f"{range_text(ended.low, ended.high)} {cite_sources([ended.source])}.")
    return answer


class HoldRun:
    """How long the target range was held (module docstring), from the decision sentences of the
    retrieved passages."""

    name = "hold_run"
    needs = "retrieved passages"

    def applies(self, frame: QuestionFrame) -> bool:
        return frame.hold_run

    def answer(self, frame: QuestionFrame, passages: list[str]) -> SkillAnswer | None:
        text = hold_run_answer(frame.question, passages, frame.hint)
        return SkillAnswer(text, passages) if text else None


SKILL = HoldRun()

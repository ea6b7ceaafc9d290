"""Administered-rate paths: how the interest rate on reserve balances, the ON RRP offering rate or
the primary credit rate moved over several meetings, composed from the passages.

A question spanning several meetings (scope span / year / multi_year) that names one of those
rates (fedlab.query.lexicon.RATE_NAMES: "interest on reserves", "IOER", "ON RRP offering rate",
"primary credit rate", …) is answered from the implementation-note sentences in its passages
(the agent adds each meeting's from the timeline): every sentence that sets the rate
(fedlab.facts.timeline.ADMINISTERED_RATES) gives its meeting's value, the meeting being the date
in the passage's head; one value per meeting, the earliest passage first. Inside the question's
range, in date order, the answer says how many times the rate changed ("changed four times", as
the rate path counts), then gives the value at the first meeting, each change ("raised to 5.3
percent in July 2023") and the value at the last meeting, each cited to the passage it was read
from. A meeting whose value was not found is skipped, so the answer says what the notes found
state, not that nothing happened in between. Fewer than two meetings found: no answer
(None), and the caller picks sentences instead.

A question about one meeting gets that meeting's value instead: fedlab.skills.administered_values.
"""
from __future__ import annotations

from fedlab.facts.timeline import ADMINISTERED_RATES, rates_set_in
from fedlab.query.frame import QuestionFrame
from fedlab.query.subjects import rates_named
from fedlab.skills.base import SkillAnswer
from fedlab.skills.passages import cite_sources, passage_head
from fedlab.skills.wording import in_label, meeting_labels, times_text


def read_rate(rate: str, passages: list[str]) -> dict[str, tuple[float, str, int]]:
    """meeting date -> (percent, value as written, source number) of ``rate`` in the passages."""
    found: dict[str, tuple[float, str, int]] = {}
    for i, passage in enumerate(passages):
        n, meeting, _, body = passage_head(passage, i)
        if meeting is None or meeting in found:
            continue
        hit = rates_set_in(body, rates=(rate,)).get(rate)
        if hit is not None:
            value = hit[0].group("value")
            found[meeting] = (float(value), f"{value} percent", n)
    return found


def subject(rate: str) -> str:
    """The rate's name opening a sentence: "The ON RRP offering rate"."""
    name = ADMINISTERED_RATES[rate][0]
    return f"{name[0].upper()}{name[1:]}"


def _path(rate: str, values: dict[str, tuple[float, str, int]]) -> str:
    dates = sorted(values)
    labels = meeting_labels(dates)
    first = values[dates[0]]
    clauses = [f"it was {first[1]} {in_label(labels[dates[0]])} {cite_sources([first[2]])}"]
    last_change, moves = dates[0], 0
    for before, date in zip(dates, dates[1:]):
        was, now = values[before], values[date]
        if now[0] != was[0]:
            verb = "raised" if now[0] > was[0] else "lowered"
            clauses.append(f"{verb} to {now[1]} {in_label(labels[date])} {cite_sources([now[2]])}")
            last_change, moves = date, moves + 1
    last = values[dates[-1]]
    if last_change != dates[-1]:
        clauses.append(f"unchanged at {last[1]} through {labels[dates[-1]]} {cite_sources([last[2]])}")
    changed = f"changed {times_text(moves)}" if moves else "did not change"
    return f"{subject(rate)} {changed}: " + "; ".join(clauses) + "."


def administered_path_answer(question: str, passages: list[str], hint=None) -> str | None:
    """The composed answer (module docstring), or None when it does not apply."""
    spanned = hint.meeting_span() if hint is not None else None
    rates = rates_named(question)
    if spanned is None or not rates:
        return None
    lo, hi = spanned
    paths = []
    for rate in rates:
        values = {d: v for d, v in read_rate(rate, passages).items() if lo <= d <= hi}
        if len(values) >= 2:
            paths.append(_path(rate, values))
    return " ".join(paths) or None


class AdministeredPath:
    """An administered rate over several meetings (module docstring), from the implementation notes
    among the passages."""

    name = "administered_path"
    needs = "retrieved passages (the agent adds each meeting's implementation note)"

    def applies(self, frame: QuestionFrame) -> bool:
        return frame.hint is not None and frame.hint.meeting_span() is not None and bool(rates_named(frame.question))

    def answer(self, frame: QuestionFrame, passages: list[str]) -> SkillAnswer | None:
        text = administered_path_answer(frame.question, passages, frame.hint)
        return SkillAnswer(text, passages) if text else None


SKILL = AdministeredPath()

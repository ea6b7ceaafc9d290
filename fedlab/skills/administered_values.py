"""Administered rates at one meeting: the value the meeting's notes set for the interest rate on
reserve balances, the ON RRP offering rate or the primary credit rate.

A question about one meeting (its date range is not a span of several) that names such a rate
(fedlab.query.subjects.rates_named) is opened with the value the implementation notes among its
passages set at that meeting — "The ON RRP offering rate was set at 0.3 percent in March 2022
[Source 9]." — for each rate whose setting the passages hold for exactly one meeting in the
question's range (fedlab.skills.administered_path.read_rate). The sentence reader picks the rest,
the note itself among its candidates (its other clauses may answer the rest). It opens only an
answer no composing skill gave (fedlab.skills.registry: BESIDE_READER).
"""
from __future__ import annotations

from fedlab.query.frame import QuestionFrame
from fedlab.query.subjects import rates_named
from fedlab.skills.administered_path import read_rate, subject
from fedlab.skills.base import SkillAnswer
from fedlab.skills.passages import cite_sources
from fedlab.skills.wording import in_label, meeting_labels


def administered_values_answer(question: str, passages: list[str], hint=None) -> str | None:
    """For a question about one meeting naming administered rates: "The ON RRP offering rate was
    set at 0.3 percent in March 2022 [Source 9]." for each rate whose setting the passages hold in
    the question's range; None when it does not apply or none is found."""
    if hint is None or hint.meeting_span() is not None or hint.date_from is None or hint.date_to is None:
        return None
    lo, hi = hint.date_from, hint.widened_end(1)
    said = []
    for rate in rates_named(question):
        values = {d: v for d, v in read_rate(rate, passages).items() if lo <= d <= hi}
        if len(values) != 1:  # none, or a range holding several meetings: not one meeting's value
            continue
        [(date, (_, value, n))] = values.items()
        said.append(f"{subject(rate)} was set at {value} {in_label(meeting_labels([date])[date])} "
                    f"{cite_sources([n])}.")
    return " ".join(said) or None


class AdministeredValues:
    """An administered rate at one meeting (module docstring: ``administered_values_answer``): opens
    an answer the sentence reader completes."""

    name = "administered_values"
    needs = "retrieved passages (the agent adds the meeting's implementation note)"

    def applies(self, frame: QuestionFrame) -> bool:
        hint = frame.hint
        return (hint is not None and hint.meeting_span() is None and hint.date_from is not None
                and hint.date_to is not None and bool(rates_named(frame.question)))

    def answer(self, frame: QuestionFrame, passages: list[str]) -> SkillAnswer | None:
        text = administered_values_answer(frame.question, passages, frame.hint)
        return SkillAnswer(text, passages) if text else None


SKILL = AdministeredValues()

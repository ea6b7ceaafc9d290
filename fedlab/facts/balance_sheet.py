"""A balance-sheet action as a statement states it: ``BalanceSheetRecord``.

Read from the text of the action's span (fedlab.facts.timeline.balance_sheet_span: the action's
sentence and the sentences right after it that detail it): its sentences, each with its
whitespace folded, in order.
"""
from __future__ import annotations

from dataclasses import dataclass

from fedlab.facts.timeline import sentences


@dataclass(frozen=True)
class BalanceSheetRecord:
    sentences: tuple[str, ...]  # the action's sentence and those detailing it, as written


def read_balance_sheet(text: str) -> BalanceSheetRecord:
    """The record ``text`` (an action's span) states."""
    return BalanceSheetRecord(tuple(" ".join(text[s:e].split()) for s, e in sentences(text)))

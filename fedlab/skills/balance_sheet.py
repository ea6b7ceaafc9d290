"""Balance-sheet records: what the Committee did with its balance sheet at the meetings a question
about the balance sheet names, composed from the passages.

The agent hands a question about the balance sheet (fedlab.query.subjects.asks_about_balance_sheet:
the balance sheet, asset purchases, taper, runoff, holdings, redemption caps) each balance-sheet
action of the policy statements in its range, as passages under the section
fedlab.facts.timeline.BALANCE_SHEET_SECTION: the action's sentence and the sentences right after
it that detail it (fedlab.facts.timeline.balance_sheet_span). They give one line per meeting, in
date order, each sentence cited: "March 2025: Beginning in April, the Committee will slow the pace
of decline of its securities holdings by reducing the monthly redemption cap on Treasury securities
from $25 billion to $5 billion. [Source 9] The Committee will maintain … [Source 9]"
No record among the passages: no lines ("").
"""
from __future__ import annotations

from fedlab.facts.balance_sheet import BalanceSheetRecord, read_balance_sheet
from fedlab.facts.passage import record_of
from fedlab.facts.timeline import BALANCE_SHEET_SECTION
from fedlab.query.frame import QuestionFrame
from fedlab.skills.base import SkillAnswer
from fedlab.skills.passages import cite_sources, in_section, passage_head
from fedlab.skills.wording import meeting_labels


def is_balance_sheet_record(passage: str) -> bool:
    return in_section(passage, BALANCE_SHEET_SECTION)


def is_balance_sheet_passage(passage: str) -> bool:
    """A balance-sheet record the agent handed over: a passage stating a BalanceSheetRecord, or one
    handed as text under the section BALANCE_SHEET_SECTION."""
    return record_of(passage, BalanceSheetRecord) is not None or is_balance_sheet_record(passage)


def recorded_sentences(passages: list[str]) -> list[tuple[int, str, str]]:
    """(source number, meeting date, sentence) of each sentence of the balance-sheet records, in
    the passages' order (a sentence two records hold, once): the record a passage states, or one
    read from a passage handed as text."""
    out, seen = [], set()
    for i, passage in enumerate(passages):
        if not is_balance_sheet_passage(passage):
            continue
        n, meeting, _, body = passage_head(passage, i)
        if meeting is None:
            continue
        for sentence in (record_of(passage, BalanceSheetRecord) or read_balance_sheet(body)).sentences:
            if sentence.lower() not in seen:
                seen.add(sentence.lower())
                out.append((n, meeting, sentence))
    return out


def balance_sheet_answer(recorded: list[tuple[int, str, str]]) -> str:
    """The balance-sheet lines (module docstring) of the ``recorded_sentences``; "" when none."""
    if not recorded:
        return ""
    dates = sorted({meeting for _, meeting, _ in recorded})
    labels = meeting_labels(dates)
    lines = []
    for d in dates:
        said = " ".join(f"{sentence} {cite_sources([n])}" for n, meeting, sentence in recorded if meeting == d)
        lines.append(f"{labels[d]}: {said}")
    return " ".join(lines)


class BalanceSheet:
    """What the Committee did with its balance sheet (module docstring), from the balance-sheet
    records the agent adds to a question about the balance sheet (so it applies whenever it is
    handed them); the reader then leaves the records' sentences out."""

    name = "balance_sheet"
    needs = f"the passages under the section {BALANCE_SHEET_SECTION!r}"

    def applies(self, frame: QuestionFrame) -> bool:
        return True

    def answer(self, frame: QuestionFrame, passages: list[str]) -> SkillAnswer | None:
        recorded = recorded_sentences(passages)
        text = balance_sheet_answer(recorded)
        if not text:
            return None
        said = {sentence.lower() for _, _, sentence in recorded}
        return SkillAnswer(text, [p for p in passages if not is_balance_sheet_passage(p)],
                           said=lambda sentence: " ".join(sentence.split()).lower() in said)


SKILL = BalanceSheet()

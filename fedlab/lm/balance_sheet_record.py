"""Balance-sheet records: what the Committee did with its balance sheet at the meetings a question
about the balance sheet names, composed from the passages.

The agent hands a question about the balance sheet (fedlab.corpus.timeline.asks_about_balance_sheet:
the balance sheet, asset purchases, taper, runoff, holdings, redemption caps) each balance-sheet
action of the policy statements in its range, as passages under the section
fedlab.corpus.timeline.BALANCE_SHEET_SECTION: the action's sentence and the sentences right after
it that detail it (fedlab.corpus.timeline.balance_sheet_span). They give one line per meeting, in
date order, each sentence cited: "March 2025: Beginning in April, the Committee will slow the pace
of decline of its securities holdings by reducing the monthly redemption cap on Treasury securities
from $25 billion to $5 billion. [Source 9] The Committee will maintain … [Source 9]"
No record among the passages: no lines ("").
"""
from __future__ import annotations

from fedlab.corpus.timeline import BALANCE_SHEET_SECTION, sentences
from fedlab.lm.rate_path import cite_sources, in_section, meeting_labels, passage_head


def is_balance_sheet_record(passage: str) -> bool:
    return in_section(passage, BALANCE_SHEET_SECTION)


def recorded_sentences(passages: list[str]) -> list[tuple[int, str, str]]:
    """(source number, meeting date, sentence) of each sentence of the balance-sheet records, in
    the passages' order (a sentence two records hold, once)."""
    out, seen = [], set()
    for i, passage in enumerate(passages):
        if not is_balance_sheet_record(passage):
            continue
        n, meeting, _, body = passage_head(passage, i)
        if meeting is None:
            continue
        for s, e in sentences(body):
            sentence = " ".join(body[s:e].split())
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

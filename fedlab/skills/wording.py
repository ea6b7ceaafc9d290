"""How the composing skills write what they found: rates in the statements' notation, sizes in
basis and percentage points, counts in words and meetings as "March 2022" (with the day when two
share a month).
"""
from __future__ import annotations

import re
from datetime import date

from fedlab.query.lexicon import MONTH_NAMES, NUMBER_WORDS


def fraction(value: float) -> str:
    """A rate in the statements' notation: 0.25 -> "1/4", 4.25 -> "4-1/4", 5.0 -> "5"."""
    quarters = round(value * 4)
    if abs(quarters / 4 - value) > 1e-9 or value < 0:
        return f"{value:g}"
    whole, rest = divmod(quarters, 4)
    frac = {0: "", 1: "1/4", 2: "1/2", 3: "3/4"}[rest]
    if not frac:
        return str(whole)
    return f"{whole}-{frac}" if whole else frac


def range_text(low: float, high: float) -> str:
    return f"{fraction(low)} to {fraction(high)} percent"


def points_text(size: int) -> str:
    """Basis points as percentage points: 25 -> "1/4 percentage point", 425 -> "4-1/4 percentage points"."""
    value = size / 100
    text = fraction(value) if abs(round(value * 4) - value * 4) < 1e-9 else f"{value:g}"
    return f"{text} percentage point{'s' if value > 1 else ''}"


def bp_text(size: int) -> str:
    return f"{size} basis point{'s' if size != 1 else ''}"


def times_text(n: int) -> str:
    return f"{count_word(n)} time{'s' if n != 1 else ''}"


def count_word(n: int) -> str:
    return NUMBER_WORDS[n] if n < len(NUMBER_WORDS) else str(n)


def _month_label(iso: str, shared: bool) -> str:
    d = date.fromisoformat(iso)
    return f"{MONTH_NAMES[d.month - 1]} {d.day}, {d.year}" if shared else f"{MONTH_NAMES[d.month - 1]} {d.year}"


_LABEL = rf"(?:{'|'.join(MONTH_NAMES)})(?: \d{{1,2}},)? \d{{4}}"
# the meeting labels an answer's sentences open with ("March 2022: ", "June 2022 and July 2022: ")
MEETING_LABELS = re.compile(rf"(^|\]\s+){_LABEL}(?:(?:, | and ){_LABEL})*:\s+")


def meeting_labels(dates: list[str]) -> dict[str, str]:
    """"March 2022" for each meeting date; "March 3, 2020" when two meetings share a month."""
    months = [d[:7] for d in dates]
    return {d: _month_label(d, months.count(d[:7]) > 1) for d in dates}


def in_label(label: str) -> str:
    """The label after its preposition: "on March 3, 2020" (a day), "in March 2020" (a month)."""
    return f"on {label}" if "," in label else f"in {label}"

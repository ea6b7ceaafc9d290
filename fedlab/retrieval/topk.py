"""Adaptive top_k: ask for more passages when the question spans more meetings.

FOMC documents repeat template language from meeting to meeting, so a bi-encoder's top 10
for "inflation in 2022" clusters on two or three meetings. A year has eight meetings (each
with a statement and minutes), hence about 30 passages for a year and 50 for several years;
one meeting or one month keeps the caller's k.
"""
from __future__ import annotations

from collections.abc import Mapping

from fedlab.retrieval.types import DateHint

DEFAULT_SCOPE_K = {"span": 20, "year": 30, "multi_year": 50}


def adaptive_top_k(hint: DateHint | None, base_k: int, scope_k: Mapping[str, int] | None = None) -> int:
    """``base_k`` for no hint, a meeting or a month; otherwise max(base_k, scope_k[scope])."""
    if hint is None or hint.scope in ("meeting", "month"):
        return base_k
    table = {**DEFAULT_SCOPE_K, **(scope_k or {})}
    return max(base_k, int(table[hint.scope]))

"""A passage that states a record: ``FactPassage``.

The agent hands its answer step passages as text ("[Source N] title, date, section" then the
text of a span). One it composed from a record of the meeting timeline is a ``FactPassage``: the
same text — what a language model reads and what a citation points at, the record's span — with
``record``, the typed record it states, which the skills compose from (``record_of``).
"""
from __future__ import annotations

from typing import TypeVar

R = TypeVar("R")


class FactPassage(str):
    """``str(passage)`` is the passage as shown; ``passage.record`` the record it states."""

    def __new__(cls, text: str, record):
        passage = super().__new__(cls, text)
        passage.record = record
        return passage


def record_of(passage: str, kind: type[R]) -> R | None:
    """The ``kind`` record ``passage`` states; None for a passage that states none (or another kind)."""
    record = getattr(passage, "record", None)
    return record if isinstance(record, kind) else None

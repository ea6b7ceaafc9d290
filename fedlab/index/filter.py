"""The metadata filter every index applies: the storage side of a date-aware search."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MetadataFilter:
    """Inclusive ISO date range on meeting_date and/or a set of doc types; None = no constraint."""

    date_from: str | None = None
    date_to: str | None = None
    doc_types: tuple[str, ...] | None = None

    def matches(self, meeting_date: str, doc_type: str) -> bool:
        if self.date_from is not None and meeting_date < self.date_from:
            return False
        if self.date_to is not None and meeting_date > self.date_to:
            return False
        if self.doc_types is not None and doc_type not in self.doc_types:
            return False
        return True

    @property
    def empty(self) -> bool:
        return self.date_from is None and self.date_to is None and not self.doc_types

"""The corpus's boundary types: a cleaned FOMC document and its sections."""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

DOC_ID_RE = re.compile(r"^(statement|minutes)-(\d{4})-(\d{2})-(\d{2})$")
DOC_TYPES = ("statement", "minutes")


@dataclass(frozen=True)
class Section:
    title: str
    start: int  # character offset of the header line in Document.text
    end: int  # end of the section's last character (exclusive)


@dataclass(frozen=True)
class Document:
    doc_id: str  # statement-YYYY-MM-DD / minutes-YYYY-MM-DD (decision date)
    doc_type: str  # "statement" | "minutes"
    meeting_date: str  # ISO decision date, from the page URL
    release_date: str | None
    title: str
    url: str
    text: str
    sections: list[Section] = field(default_factory=list)
    meeting: str | None = None  # the calendar's label, e.g. "January 30-31"

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, row: dict) -> "Document":
        row = dict(row)
        row["sections"] = [Section(**s) for s in row.get("sections", [])]
        return cls(**row)

    def section_at(self, offset: int) -> str | None:
        """Title of the section that contains character ``offset`` (None before the first)."""
        found = None
        for sec in self.sections:
            if sec.start <= offset:
                found = sec.title
            else:
                break
        return found


def doc_id_for(doc_type: str, meeting_date: str) -> str:
    return f"{doc_type}-{meeting_date}"

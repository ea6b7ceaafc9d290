"""The chunk: the unit that is embedded, indexed, searched and judged for relevance."""
from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from functools import cached_property


@dataclass(frozen=True)
class Chunk:
    chunk_id: str  # stable: derived from doc_id, span and chunker fingerprint
    doc_id: str
    doc_type: str
    meeting_date: str  # ISO
    section: str | None
    start: int  # span searched, as character offsets into Document.text
    end: int
    text: str  # shown text == Document.text[start:end]
    embed_text: str  # what the embedder sees (contextual chunkers prepend a template line)
    # The passage returned to the user. Equal to (start, end) except for small_to_big,
    # where a small child is searched and its parent passage is returned.
    parent_start: int | None = None
    parent_end: int | None = None

    @property
    def span(self) -> tuple[int, int]:
        """The span returned (and judged): the parent passage when there is one."""
        if self.parent_start is not None and self.parent_end is not None:
            return self.parent_start, self.parent_end
        return self.start, self.end

    @cached_property  # read for every hit of every search (deduplication, judging)
    def passage_key(self) -> str:
        """The passage the user is shown, "doc_id:start-end": chunks that return the same
        passage (small_to_big children of one parent) share it."""
        start, end = self.span
        return f"{self.doc_id}:{start}-{end}"

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, row: dict) -> "Chunk":
        return cls(**row)


def make_chunk_id(doc_id: str, start: int, end: int, fingerprint: str) -> str:
    digest = hashlib.sha1(f"{doc_id}:{start}:{end}:{fingerprint}".encode()).hexdigest()[:10]
    return f"{doc_id}#{start}-{end}-{digest}"

"""The chunker interface: documents + the embedder's tokenizer → chunks + stats."""
from __future__ import annotations

import hashlib
import json
import time
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from typing import ClassVar, Iterable

from fedlab.chunking.chunk import Chunk, make_chunk_id
from fedlab.chunking.splitting import WORD_RE, TokenIndex
from fedlab.chunking.stats import ChunkingStats
from fedlab.chunking.tokenizers import TokenCounter, content_capacity, token_spans_many, tokenizer_fingerprint
from fedlab.corpus.document import Document
from fedlab.corpus.recorded import recorded_meetings
from fedlab.errors import FedlabError

# Bump when the splitting algorithm changes, so cached chunks keyed on fingerprints are rebuilt.
# 2: a chunk in a minutes section recording another meeting is dated by that meeting (fedlab.corpus.recorded)
ALGORITHM_VERSION = 2


@dataclass
class ChunkingResult:
    chunks: list[Chunk]
    token_counts: list[int]  # tokens of each chunk's embed_text (no special tokens), same order
    stats: ChunkingStats
    fingerprint: str  # chunker params + tokenizer: the cache key for these chunks


@dataclass(frozen=True)
class DocContext:
    """One document with its tokens, measured once and shared by every split of it."""

    doc: Document
    tokens: TokenIndex
    word_starts: list[int]
    tokenizer: TokenCounter
    section_meetings: dict[str, str] = field(default_factory=dict)  # section title -> the meeting it records

    def meeting_of(self, section: str | None) -> str:
        """The meeting a passage of ``section`` belongs to: the document's, unless the section
        records another (fedlab.corpus.recorded)."""
        return self.section_meetings.get(section, self.doc.meeting_date)


class Chunker(ABC):
    name: ClassVar[str] = ""

    def params(self) -> dict:
        return asdict(self)

    def fingerprint(self) -> str:
        """Stable across processes: chunker kind, parameters and algorithm version."""
        blob = json.dumps(
            {"class": type(self).__qualname__, "params": self.params(), "version": ALGORITHM_VERSION}, sort_keys=True
        )
        return f"{self.name}-{hashlib.sha1(blob.encode()).hexdigest()[:12]}"

    def chunk(self, docs: Iterable[Document], tokenizer: TokenCounter) -> ChunkingResult:
        t0 = time.perf_counter()
        docs = list(docs)
        all_spans = token_spans_many(tokenizer, [d.text for d in docs])
        recorded = recorded_meetings(docs)
        chunks: list[Chunk] = []
        counts: list[int] = []
        for doc, spans in zip(docs, all_spans):
            ctx = DocContext(doc, TokenIndex(spans), [m.start() for m in WORD_RE.finditer(doc.text)], tokenizer,
                             recorded.get(doc.doc_id, {}))
            for chunk, n_tokens in self.chunk_document(ctx):
                chunks.append(chunk)
                counts.append(n_tokens)
        stats = ChunkingStats.compute(
            chunks, counts, len(docs), int(tokenizer.max_seq_length), content_capacity(tokenizer),
            time.perf_counter() - t0,
        )
        return ChunkingResult(chunks, counts, stats, f"{self.fingerprint()}+{tokenizer_fingerprint(tokenizer)}")

    @abstractmethod
    def chunk_document(self, ctx: DocContext) -> list[tuple[Chunk, int]]:
        """Chunks of one document, each with the token count of its embed_text."""

    def make_chunk(
        self, ctx: DocContext, start: int, end: int, section: str | None, embed_text: str | None = None,
        parent: tuple[int, int] | None = None,
    ) -> Chunk:
        doc = ctx.doc
        text = doc.text[start:end]
        return Chunk(
            chunk_id=make_chunk_id(doc.doc_id, start, end, self.fingerprint()),
            doc_id=doc.doc_id,
            doc_type=doc.doc_type,
            meeting_date=ctx.meeting_of(section),
            section=section,
            start=start,
            end=end,
            text=text,
            embed_text=text if embed_text is None else embed_text,
            parent_start=parent[0] if parent else None,
            parent_end=parent[1] if parent else None,
        )


def section_regions(doc: Document) -> list[tuple[int, int, str | None]]:
    """The document cut at every section start and end: (start, end, section title or None)."""
    cuts = sorted({0, len(doc.text), *(s.start for s in doc.sections), *(s.end for s in doc.sections)})
    out = []
    for a, b in zip(cuts, cuts[1:]):
        title = next((s.title for s in doc.sections if s.start <= a and b <= s.end), None)
        out.append((a, b, title))
    return out


def majority_section(doc: Document, start: int, end: int) -> str | None:
    """The section holding most of [start, end) (None when most of it is outside any section)."""
    best, best_len = None, 0
    outside = end - start
    for s in doc.sections:
        n = min(end, s.end) - max(start, s.start)
        if n > 0:
            outside -= n
            if n > best_len:
                best, best_len = s.title, n
    return best if best_len >= outside else None


def check_size(key: str, size: int) -> None:
    if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
        raise FedlabError(f"chunker.{key} must be a positive number of tokens, got {size!r}: set chunker.{key}=200 or similar")


def check_overlap(overlap: int, size: int, size_key: str = "size") -> None:
    if not isinstance(overlap, int) or isinstance(overlap, bool) or overlap < 0:
        raise FedlabError(f"chunker.overlap must be a non-negative number of tokens, got {overlap!r}: set chunker.overlap=0 or more")
    if overlap >= size:
        raise FedlabError(
            f"chunker.overlap ({overlap}) must be smaller than chunker.{size_key} ({size}): "
            f"lower chunker.overlap or raise chunker.{size_key}"
        )

"""Recursive token-budgeted chunking, over the whole document or within each section."""
from __future__ import annotations

from dataclasses import dataclass

from fedlab.chunking.base import Chunker, DocContext, check_overlap, check_size, majority_section, section_regions
from fedlab.chunking.chunk import Chunk
from fedlab.chunking.splitting import split_span


@dataclass(frozen=True)
class RecursiveChunker(Chunker):
    """Chunks of at most ``size`` tokens cut at paragraph → line → sentence → word boundaries,
    each overlapping the previous by up to ``overlap`` tokens. Chunks may cross section
    boundaries; a chunk is labelled with the section holding most of it."""

    name = "recursive"
    size: int = 200
    overlap: int = 40

    def __post_init__(self):
        check_size("size", self.size)
        check_overlap(self.overlap, self.size)

    def regions(self, ctx: DocContext) -> list[tuple[int, int, str | None]]:
        return [(0, len(ctx.doc.text), None)]

    def chunk_document(self, ctx: DocContext) -> list[tuple[Chunk, int]]:
        out = []
        for lo, hi, _ in self.regions(ctx):
            for start, end in split_span(ctx.doc.text, lo, hi, self.size, self.overlap, ctx.tokens, ctx.word_starts):
                section = majority_section(ctx.doc, start, end)
                out.append((self.make_chunk(ctx, start, end, section), ctx.tokens.count(start, end)))
        return out


@dataclass(frozen=True)
class SectionChunker(RecursiveChunker):
    """Header-aware: recursive chunking inside each section, never across a section boundary
    (text before the first section, e.g. the minutes' attendance list, is its own region)."""

    name = "section"

    def regions(self, ctx: DocContext) -> list[tuple[int, int, str | None]]:
        return section_regions(ctx.doc)

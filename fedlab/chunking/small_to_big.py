"""Small-to-big: small children are embedded and searched, their parent passage is returned."""
from __future__ import annotations

from dataclasses import dataclass

from fedlab.chunking.base import Chunker, DocContext, check_overlap, check_size, section_regions
from fedlab.chunking.chunk import Chunk
from fedlab.chunking.splitting import split_span
from fedlab.errors import FedlabError


@dataclass(frozen=True)
class SmallToBigChunker(Chunker):
    """Parents: non-overlapping passages of at most ``parent_size`` tokens within each section.
    Children: chunks of at most ``size`` tokens overlapping by ``overlap``, inside one parent.
    Each chunk's start/end is the child span; parent_start/parent_end the parent span."""

    name = "small_to_big"
    size: int = 96
    overlap: int = 16
    parent_size: int = 400

    def __post_init__(self):
        check_size("size", self.size)
        check_size("parent_size", self.parent_size)
        check_overlap(self.overlap, self.size)
        if self.size > self.parent_size:
            raise FedlabError(
                f"chunker.size ({self.size}, the child) is larger than chunker.parent_size ({self.parent_size}): "
                "lower chunker.size or raise chunker.parent_size"
            )

    def chunk_document(self, ctx: DocContext) -> list[tuple[Chunk, int]]:
        text, tokens, words = ctx.doc.text, ctx.tokens, ctx.word_starts
        out = []
        for lo, hi, section in section_regions(ctx.doc):
            for p_start, p_end in split_span(text, lo, hi, self.parent_size, 0, tokens, words):
                for start, end in split_span(text, p_start, p_end, self.size, self.overlap, tokens, words):
                    chunk = self.make_chunk(ctx, start, end, section, parent=(p_start, p_end))
                    out.append((chunk, tokens.count(start, end)))
        return out

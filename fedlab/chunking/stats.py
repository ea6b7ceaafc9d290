"""Chunking statistics: plain numbers, ready to be logged as run metrics."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from fedlab.chunking.chunk import Chunk


@dataclass
class ChunkingStats:
    n_docs: int
    n_chunks: int
    n_passages: int  # distinct spans returned (fewer than n_chunks for small_to_big)
    mean_tokens: float  # tokens of embed_text, without the model's special tokens
    max_tokens: int
    min_tokens: int
    max_seq_length: int  # the embedder's window, special tokens included
    n_over_max_seq_length: int  # chunks the embedder would truncate
    chunks_per_doc_type: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    @classmethod
    def compute(
        cls, chunks: list[Chunk], token_counts: list[int], n_docs: int, max_seq_length: int, capacity: int, seconds: float
    ) -> "ChunkingStats":
        per_type: dict[str, int] = {}
        for c in chunks:
            per_type[c.doc_type] = per_type.get(c.doc_type, 0) + 1
        return cls(
            n_docs=n_docs,
            n_chunks=len(chunks),
            n_passages=len({(c.doc_id, *c.span) for c in chunks}),
            mean_tokens=round(sum(token_counts) / len(token_counts), 2) if token_counts else 0.0,
            max_tokens=max(token_counts, default=0),
            min_tokens=min(token_counts, default=0),
            max_seq_length=max_seq_length,
            n_over_max_seq_length=sum(1 for n in token_counts if n > capacity),
            chunks_per_doc_type=dict(sorted(per_type.items())),
            seconds=round(seconds, 3),
        )

    def as_metrics(self, prefix: str = "chunking.") -> dict[str, float]:
        """Flat name → number mapping (per-doc-type counts become ``n_chunks_<type>``)."""
        row = asdict(self)
        out = {f"{prefix}{k}": float(v) for k, v in row.items() if k != "chunks_per_doc_type"}
        for doc_type, n in row["chunks_per_doc_type"].items():
            out[f"{prefix}n_chunks_{doc_type}"] = float(n)
        return out

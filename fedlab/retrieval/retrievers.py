"""First-stage retrievers: dense, BM25 and their fused hybrid (reciprocal rank or convex).

Each answers ``search(query, k, flt=None, timings=None) -> list[Hit]``: at most k hits, ranks
1-based, one hit per *returned passage* (doc_id + chunk.span). With the small_to_big chunker
several child chunks share one parent passage; only the best-scoring child is kept, and the
underlying index is asked for more rows until k distinct passages are found (or it runs out).
``timings``, when given, accumulates ``embed_ms`` (query embedding time).
"""
from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TypeVar

import numpy as np

from fedlab.chunking.chunk import Chunk
from fedlab.errors import FedlabError
from fedlab.retrieval.fusion import convex, rrf
from fedlab.index.filter import MetadataFilter
from fedlab.retrieval.types import Hit

Pairs = list[tuple[int, float]]
T = TypeVar("T")


def first_per_passage(items: Iterable[T], chunk_of: Callable[[T], Chunk]) -> Iterator[T]:
    """The items whose chunk is the first (best) of its returned passage, in order."""
    seen: set[str] = set()
    for item in items:
        key = chunk_of(item).passage_key
        if key not in seen:
            seen.add(key)
            yield item


def dedupe_passages(hits: Sequence[Hit]) -> list[Hit]:
    """Keep the first (best) hit per returned passage; ranks renumbered from 1."""
    return [Hit(h.chunk, h.score, rank, dict(h.sources))
            for rank, h in enumerate(first_per_passage(hits, lambda h: h.chunk), start=1)]


class _RowRetriever:
    """Shared part of dense and BM25: row ids -> deduplicated Hits, widening the fetch as needed."""

    name = "rows"

    def __init__(self, chunks: Sequence[Chunk]):
        self.chunks = list(chunks)
        passages = len({c.passage_key for c in self.chunks}) or 1
        self._fanout = max(1, math.ceil(len(self.chunks) / passages))  # chunks per passage

    def _collect(self, fetch: Callable[[int], Pairs], k: int) -> list[Hit]:
        if k <= 0 or not self.chunks:
            return []
        n = min(len(self.chunks), k * self._fanout)
        while True:
            pairs = fetch(n)
            best = itertools.islice(first_per_passage(pairs, lambda p: self.chunks[p[0]]), k)  # no Hit per row
            hits = [Hit(self.chunks[row], float(score), rank, {self.name: float(score)})
                    for rank, (row, score) in enumerate(best, start=1)]
            if len(hits) >= k or len(pairs) < n or n >= len(self.chunks):
                return hits
            n = min(len(self.chunks), n * 2)


class DenseRetriever(_RowRetriever):
    """Bi-encoder search: ``embedder.embed_query`` then ``index.search`` (rows = positions in chunks).

    The last query's vector is reused (the two passes, an agent's retries), so ``embed_ms`` is
    recorded only when the embedder actually ran.
    """

    name = "dense"

    def __init__(self, embedder, index, chunks: Sequence[Chunk]):
        super().__init__(chunks)
        self.embedder = embedder
        self.index = index
        self._last: tuple[str, np.ndarray] | None = None  # two-pass search embeds the query once

    def embed(self, query: str, timings: dict[str, float] | None = None) -> np.ndarray:
        if self._last is None or self._last[0] != query:
            t0 = time.perf_counter()
            self._last = (query, self.embedder.embed_query(query))
            if timings is not None:
                timings["embed_ms"] = timings.get("embed_ms", 0.0) + (time.perf_counter() - t0) * 1000
        return self._last[1]

    def search(self, query: str, k: int, flt: MetadataFilter | None = None,
               timings: dict[str, float] | None = None) -> list[Hit]:
        vec = self.embed(query, timings)
        return self._collect(lambda n: self.index.search(vec, n, flt), k)


class BM25Retriever(_RowRetriever):
    """Lexical search over a fedlab BM25 index (``search(text, k, flt)``, rows = positions in chunks)."""

    name = "bm25"

    def __init__(self, bm25, chunks: Sequence[Chunk]):
        super().__init__(chunks)
        self.bm25 = bm25

    def search(self, query: str, k: int, flt: MetadataFilter | None = None,
               timings: dict[str, float] | None = None) -> list[Hit]:
        return self._collect(lambda n: self.bm25.search(query, n, flt), k)


FUSIONS = ("rrf", "convex")


def check_fusion(fusion, alpha) -> tuple[str, float]:
    """``retriever.fusion`` and ``retriever.alpha``, or a one-line FedlabError."""
    if fusion not in FUSIONS:
        raise FedlabError(f"retriever.fusion={fusion!r} is unknown: use one of {', '.join(FUSIONS)}")
    try:
        if isinstance(alpha, bool):
            raise ValueError
        a = float(alpha)
    except (TypeError, ValueError):
        raise FedlabError(f"retriever.alpha={alpha!r} is not a number: use a value from 0 to 1") from None
    if not 0.0 <= a <= 1.0:  # also refuses nan
        raise FedlabError(f"retriever.alpha={alpha!r} is out of range: use a value from 0 to 1 (1 = dense only)")
    return fusion, a


class HybridRetriever:
    """Dense + BM25 fused over passages.

    Each side returns ``max(candidates, k)`` passages. fusion "rrf": reciprocal rank (``rrf_k``,
    ``weights``); "convex": ``alpha * norm(dense) + (1 - alpha) * norm(bm25)`` over the union,
    min-max normalised per side (a passage one side did not return gets 0 from it; ``weights``
    are not used). With ``dense2`` (a second embedder's dense side, RRF only, weight key
    ``dense2``) three rankings are fused. The fused score is the hit's score; ``sources`` holds each side's own score
    (absent when that side did not return it) and the fused one under ``rrf`` or ``convex``.
    """

    name = "hybrid"

    def __init__(self, dense, bm25, rrf_k: int = 60, weights: Mapping[str, float] | None = None,
                 candidates: int = 50, fusion: str = "rrf", alpha: float = 0.5, dense2=None):
        self.dense = dense
        self.bm25 = bm25
        self.dense2 = dense2  # a second dense side (another embedder over the same chunks), RRF only
        self.rrf_k = int(rrf_k)
        self.weights = dict(weights or {})
        self.candidates = int(candidates)
        self.fusion, self.alpha = check_fusion(fusion, alpha)
        if dense2 is not None and self.fusion != "rrf":
            raise FedlabError("retriever.second_dense fuses three rankings: use retriever.fusion=rrf")

    def search(self, query: str, k: int, flt: MetadataFilter | None = None,
               timings: dict[str, float] | None = None) -> list[Hit]:
        n = max(self.candidates, k)
        sides = {"dense": self.dense.search(query, n, flt, timings), "bm25": self.bm25.search(query, n, flt, timings)}
        if self.dense2 is not None:
            sides["dense2"] = self.dense2.search(query, n, flt, timings)
        by_key: dict[str, Hit] = {}
        sources: dict[str, dict[str, float]] = {}
        for name, hits in sides.items():
            for h in hits:
                key = h.chunk.passage_key
                by_key.setdefault(key, h)
                sources.setdefault(key, {})[name] = h.score
        if self.fusion == "convex":
            fused = convex({h.chunk.passage_key: h.score for h in sides["dense"]},
                           {h.chunk.passage_key: h.score for h in sides["bm25"]}, self.alpha)
        else:
            fused = rrf({name: [h.chunk.passage_key for h in hits] for name, hits in sides.items()},
                        k=self.rrf_k, weights=self.weights)
        return [Hit(by_key[key].chunk, score, rank, {**sources[key], self.fusion: score})
                for rank, (key, score) in enumerate(fused[:k], start=1)]

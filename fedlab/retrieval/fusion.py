"""Reciprocal rank fusion (Cormack et al., 2009).

Hand-written rather than ranx.fuse: ranx builds Run objects (and numba-compiles) for each
call, which is heavy for one query's two short lists.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence


def rrf(ranked: Mapping[str, Sequence[str]], k: int = 60,
        weights: Mapping[str, float] | None = None) -> list[tuple[str, float]]:
    """Fuse ranked id lists: score(d) = sum over lists L of w_L / (k + rank_L(d)), ranks 1-based.

    ``ranked`` maps a retriever name to its ids, best first; ``weights`` maps names to weights
    (missing names weigh 1). Returns (id, score) best first; ties broken by id.
    """
    weights = weights or {}
    scores: dict[str, float] = {}
    for name, ids in ranked.items():
        w = float(weights.get(name, 1.0))
        for rank, doc in enumerate(ids, start=1):
            scores[doc] = scores.get(doc, 0.0) + w / (k + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))

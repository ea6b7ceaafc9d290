"""Fusion of ranked lists: reciprocal rank fusion (Cormack et al., 2009) and convex combination.

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


def min_max(scores: Mapping[str, float]) -> dict[str, float]:
    """Scores scaled to [0, 1] (best 1, worst 0); a list whose scores are all equal maps to 1."""
    if not scores:
        return {}
    lo, hi = min(scores.values()), max(scores.values())
    if hi == lo:
        return {doc: 1.0 for doc in scores}
    return {doc: (s - lo) / (hi - lo) for doc, s in scores.items()}


def convex(dense: Mapping[str, float], lexical: Mapping[str, float], alpha: float) -> list[tuple[str, float]]:
    """Convex combination over the union of two scored lists (Bruch et al., 2023):
    score(d) = alpha * norm_dense(d) + (1 - alpha) * norm_lexical(d), each list min-max normalised
    on its own; an id missing from a list gets that list's minimum (0 after normalisation).
    Returns (id, score) best first; ties broken by id."""
    nd, nl = min_max(dense), min_max(lexical)
    scores = {doc: alpha * nd.get(doc, 0.0) + (1.0 - alpha) * nl.get(doc, 0.0) for doc in {*nd, *nl}}
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))

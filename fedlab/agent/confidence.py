"""evaluate_confidence: how well the retrieved passages support an answer, from retrieval alone.

The score never asks the language model how sure it is. Signals, each in [0, 1] (absent when
it does not apply):
  top_score      the best hit's own score: dense cosine when the retriever is dense or hybrid,
                 else BM25 squashed as s / (s + bm25_half)
  margin         how far the best hit stands above the second: (s1 - s2) / s1 on that score
  term_coverage  share of the question's content terms (date words aside) found in the top
                 passages — BM25's stemmed tokens, so it works for every retriever
  agreement      hybrid only: overlap of the top-n by dense score and the top-n by BM25 score
  date_coverage  with a date hint: share of the top passages dated inside the hinted range
The retrieval score is their weighted mean over the signals present: uncalibrated, it is what
an agent without an answerability model reports, and one feature of that model
(fedlab.agent.answerability), which takes every decision and reports the confidence. The levels
are read from a reported confidence with the thresholds of conf/agent/default.yaml.
"""
from __future__ import annotations

from fedlab.agent.types import CONFIDENCE_LEVELS
from fedlab.errors import FedlabError
from fedlab.retrieval.types import DateHint, Hit

DEFAULT_WEIGHTS = {"top_score": 1.0, "margin": 0.5, "term_coverage": 2.0, "agreement": 0.5, "date_coverage": 1.0}
DEFAULT_THRESHOLDS = {"high": 0.75, "medium": 0.50, "low": 0.25}


def level_for(value: float, thresholds: dict[str, float]) -> str:
    for level in CONFIDENCE_LEVELS[:-1]:
        if value >= thresholds[level]:
            return level
    return CONFIDENCE_LEVELS[-1]


def check_thresholds(thresholds: dict[str, float]) -> dict[str, float]:
    t = {k: float(v) for k, v in thresholds.items()}
    if set(t) != {"high", "medium", "low"} or not (1 >= t["high"] >= t["medium"] >= t["low"] >= 0):
        raise FedlabError(f"agent.thresholds must be high >= medium >= low in [0, 1], got {thresholds}")
    return t


def _clip(x: float) -> float:
    return min(1.0, max(0.0, float(x)))


def _score(hit: Hit, kind: str, bm25_half: float) -> float:
    """The hit's score on the primary side; 0 when that side did not return it."""
    if kind == "dense":
        return _clip(hit.sources.get("dense", 0.0))
    bm25 = hit.sources.get("bm25", hit.score)
    return _clip(bm25 / (bm25 + bm25_half)) if bm25 > 0 else 0.0


def retrieval_signals(question_terms: set[str], hits: list[Hit], passage_terms, hint: DateHint | None,
                      top_n: int = 5, bm25_half: float = 10.0, end_grace_days: int = 1) -> dict[str, float]:
    """The signals for one search; ``passage_terms(hit) -> set[str]`` tokenises a passage."""
    if not hits:
        return {"top_score": 0.0, "term_coverage": 0.0}
    top = hits[:top_n]
    kind = "dense" if any("dense" in h.sources for h in hits) else "bm25"
    scores = sorted((_score(h, kind, bm25_half) for h in hits), reverse=True)
    s1 = scores[0]
    signals = {"top_score": s1}
    if len(scores) > 1:
        s2 = scores[1]
        signals["margin"] = _clip((s1 - s2) / s1) if s1 > 0 else 0.0
    if question_terms:
        found = set().union(*(passage_terms(h) for h in top[:3]))
        signals["term_coverage"] = len(question_terms & found) / len(question_terms)
    if any("dense" in h.sources for h in hits) and any("bm25" in h.sources for h in hits):
        def best(side: str) -> set[str]:
            ranked = sorted(hits, key=lambda h: -h.sources.get(side, float("-inf")))
            return {h.chunk.chunk_id for h in ranked[:top_n] if side in h.sources}

        n = min(top_n, len(hits))
        signals["agreement"] = len(best("dense") & best("bm25")) / n
    if hint is not None:
        hi = hint.widened_end(end_grace_days)
        inside = [(hint.date_from is None or h.chunk.meeting_date >= hint.date_from)
                  and (hi is None or h.chunk.meeting_date <= hi) for h in top]
        signals["date_coverage"] = sum(inside) / len(inside)
    return {k: round(v, 6) for k, v in signals.items()}


def combine(signals: dict[str, float], weights: dict[str, float]) -> float:
    used = {k: float(weights.get(k, 0.0)) for k in signals if weights.get(k, 0.0) > 0}
    total = sum(used.values())
    return _clip(sum(signals[k] * w for k, w in used.items()) / total) if total else 0.0

"""Pseudo-relevance feedback: RM3 on BM25 (as Anserini does it) and Rocchio on dense vectors.

Both run a first search, take its top ``fb_docs`` passages as relevant and search again with a
query moved toward them; the second search is what they return. Both honour the filter, so
inside the date-aware pass the feedback comes from the in-range passages.

RM3 (Abdul-Jaleel et al., 2004; Anserini's ``Rm3Reranker``): each feedback passage's term
vector (index tokens, so the BM25 tokenizer's stemming and stop words apply) is L1-normalised
and weighted by the passage's first-pass BM25 score; the weighted sum, without terms held by
more than ``max_doc_share`` of all passages (Anserini's ``filterTerms``: df / N > 0.1), is cut
to its ``fb_terms`` heaviest terms and L1-normalised (the relevance model); the new query is
``orig_weight * q + (1 - orig_weight) * rm`` with ``q`` the original query's L1-normalised
term counts. rank-bm25 cannot take weighted query terms, so the expanded query is scored by
``BM25Index.weighted_scores``: sum of weight x the term's BM25 contribution (a Lucene query of
boosted term clauses).

Rocchio: ``q' = alpha * q + beta * mean(top passages' vectors)``, normalised to unit length.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from fedlab.chunking.chunk import Chunk
from fedlab.errors import FedlabError
from fedlab.index.filter import MetadataFilter
from fedlab.retrieval.retrievers import BM25Retriever, DenseRetriever
from fedlab.retrieval.types import Hit

PRF_KINDS = ("rm3",)


def _number(name: str, value, lo: float, hi: float, integer: bool = False) -> float:
    ok = not isinstance(value, bool)
    try:
        x = float(value)
    except (TypeError, ValueError):
        ok = False
    if not ok or not lo <= x <= hi or (integer and x != int(x)):
        kind = "a whole number" if integer else "a number"
        raise FedlabError(f"{name}={value!r} is not {kind} from {lo:g} to {hi:g}: fix it in the retriever config")
    return int(x) if integer else x


@dataclass(frozen=True)
class RM3Options:
    fb_docs: int = 10
    fb_terms: int = 10
    orig_weight: float = 0.5
    max_doc_share: float = 0.1

    @classmethod
    def parse(cls, prf: Mapping | None) -> "RM3Options | None":
        """``retriever.prf`` ({kind: rm3|null, fb_docs, fb_terms, orig_weight}) -> options, or None (off)."""
        prf = dict(prf or {})
        kind = prf.pop("kind", None)
        if kind is None:
            return None
        if kind not in PRF_KINDS:
            raise FedlabError(f"retriever.prf.kind={kind!r} is unknown: use rm3 or null")
        unknown = set(prf) - {"fb_docs", "fb_terms", "orig_weight", "max_doc_share"}
        if unknown:
            raise FedlabError(f"retriever.prf has unknown keys {sorted(unknown)}: use kind, fb_docs, fb_terms, orig_weight")
        return cls(fb_docs=_number("retriever.prf.fb_docs", prf.get("fb_docs", 10), 1, 1000, True),
                   fb_terms=_number("retriever.prf.fb_terms", prf.get("fb_terms", 10), 1, 1000, True),
                   orig_weight=_number("retriever.prf.orig_weight", prf.get("orig_weight", 0.5), 0, 1),
                   max_doc_share=_number("retriever.prf.max_doc_share", prf.get("max_doc_share", 0.1), 0, 1))


def rm3_query(bm25, query_terms: Sequence[str], feedback: Sequence[tuple[int, float]],
              options: RM3Options) -> dict[str, float]:
    """The RM3 query (index token -> weight, summing to 1) for ``query_terms`` given the first
    pass's (row, BM25 score) ``feedback``; the original query alone when there is no feedback."""
    counts = Counter(query_terms)
    total = sum(counts.values())
    original = {t: c / total for t, c in counts.items()} if total else {}
    if not feedback or options.orig_weight >= 1.0:
        return original
    n_docs = max(1, bm25.n)
    model: Counter[str] = Counter()
    for row, score in feedback[:options.fb_docs]:
        terms = bm25.doc_terms(row)
        length = sum(terms.values())
        if length == 0 or score <= 0:
            continue
        for t, c in terms.items():
            model[t] += float(score) * c / length
    model = Counter({t: w for t, w in model.items() if bm25.doc_freq(t) / n_docs <= options.max_doc_share})
    top = sorted(model.items(), key=lambda item: (-item[1], item[0]))[:options.fb_terms]
    mass = sum(w for _, w in top)
    if mass <= 0:
        return original
    out: dict[str, float] = {t: options.orig_weight * w for t, w in original.items()}
    for t, w in top:
        out[t] = out.get(t, 0.0) + (1.0 - options.orig_weight) * w / mass
    return out


class RM3Retriever(BM25Retriever):
    """BM25 with RM3 expansion: the first pass's top ``fb_docs`` rows (under the same filter)
    build the expanded query, whose weighted BM25 search is returned. ``last_query`` keeps the
    last expanded query (index token -> weight) for inspection."""

    def __init__(self, bm25, chunks: Sequence[Chunk], options: RM3Options):
        super().__init__(bm25, chunks)
        self.options = options
        self.last_query: dict[str, float] = {}

    def search(self, query: str, k: int, flt: MetadataFilter | None = None,
               timings: dict[str, float] | None = None) -> list[Hit]:
        terms = self.bm25.tokenizer(query)
        feedback = self.bm25.search(query, self.options.fb_docs, flt)
        weights = rm3_query(self.bm25, terms, feedback, self.options)
        self.last_query = weights
        return self._collect(lambda n: self.bm25.search_weighted(weights, n, flt), k)


@dataclass(frozen=True)
class RocchioOptions:
    fb_docs: int = 5
    alpha: float = 1.0
    beta: float = 0.5

    @classmethod
    def parse(cls, rocchio: Mapping | None) -> "RocchioOptions | None":
        """``retriever.rocchio`` ({enabled, fb_docs, alpha, beta}) -> options, or None (off)."""
        rocchio = dict(rocchio or {})
        if not rocchio.pop("enabled", False):
            return None
        unknown = set(rocchio) - {"fb_docs", "alpha", "beta"}
        if unknown:
            raise FedlabError(f"retriever.rocchio has unknown keys {sorted(unknown)}: use enabled, fb_docs, alpha, beta")
        return cls(fb_docs=_number("retriever.rocchio.fb_docs", rocchio.get("fb_docs", 5), 1, 1000, True),
                   alpha=_number("retriever.rocchio.alpha", rocchio.get("alpha", 1.0), 0, 100),
                   beta=_number("retriever.rocchio.beta", rocchio.get("beta", 0.5), 0, 100))


def rocchio_vector(query: np.ndarray, feedback: np.ndarray, options: RocchioOptions) -> np.ndarray:
    """``alpha * query + beta * mean(feedback rows)``, unit length (the query itself when there
    is no feedback or the sum vanishes)."""
    if feedback.size == 0:
        return query
    moved = options.alpha * np.asarray(query, dtype=np.float32) + options.beta * feedback.mean(axis=0)
    norm = float(np.linalg.norm(moved))
    return query if norm == 0.0 else (moved / norm).astype(np.float32)


class RocchioDenseRetriever(DenseRetriever):
    """Dense search with Rocchio feedback: the query vector moved toward the mean of the first
    search's top ``fb_docs`` rows' vectors (``vectors``: the index's rows, normalised), searched
    again under the same filter."""

    def __init__(self, embedder, index, chunks: Sequence[Chunk], vectors: np.ndarray, options: RocchioOptions):
        super().__init__(embedder, index, chunks)
        if vectors is None or len(vectors) != len(self.chunks):
            raise FedlabError("retriever.rocchio needs the chunks' vectors (one per chunk): build it through the pipeline")
        self.vectors = vectors
        self.options = options

    def search(self, query: str, k: int, flt: MetadataFilter | None = None,
               timings: dict[str, float] | None = None) -> list[Hit]:
        vec = self.embed(query, timings)
        first = self.index.search(vec, self.options.fb_docs, flt)
        rows = np.array([row for row, _ in first], dtype=np.int64)
        moved = rocchio_vector(vec, self.vectors[rows] if rows.size else np.empty((0, len(vec))), self.options)
        return self._collect(lambda n: self.index.search(moved, n, flt), k)

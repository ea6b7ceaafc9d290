"""Build the query-side pipeline from config values plus runtime objects.

conf/retriever/*.yaml target :func:`build_retriever` with ``_partial_: true``; the runtime
objects are passed when the pipeline has built them:

    from hydra.utils import instantiate
    reranker = instantiate(cfg.reranker)            # NoReranker / CrossEncoderReranker / LateInteractionReranker
    make = instantiate(cfg.retriever)               # functools.partial(build_retriever, kind=..., ...)
    retriever = make(chunks=chunks, embedder=embedder, index=index, bm25=bm25, reranker=reranker)
    result = retriever.search("What did the Fed say about inflation in January 2024?")
    result.hits, result.hint, result.k_used, result.timings

``chunks`` is the list whose positions are the index rows; ``embedder`` + ``index`` are needed
for dense and hybrid, ``bm25`` for bm25 and hybrid.

Options that reshape the in-range pass (see fedlab.retrieval.ranking), all off by default:
per_meeting, statement_quota, length_norm, doc_first (+ doc_first_docs), diversity_candidates.
Hybrid fusion: fusion "rrf" (rrf_k, weights; default) or "convex" (alpha).
Paraphrase options, all off by default: prf (RM3), rocchio, multi_query, second_dense.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from fedlab.chunking.chunk import Chunk
from fedlab.errors import FedlabError
from fedlab.retrieval.multi_query import MultiQueryOptions, MultiQueryRetriever
from fedlab.retrieval.prf import RM3Options, RM3Retriever, RocchioDenseRetriever, RocchioOptions
from fedlab.retrieval.ranking import RankingOptions, passages_per_document, whole_number
from fedlab.retrieval.retrievers import BM25Retriever, DenseRetriever, HybridRetriever, check_fusion
from fedlab.retrieval.topk import DEFAULT_SCOPE_K
from fedlab.retrieval.two_pass import DateAwareRetriever

KINDS = ("dense", "bm25", "hybrid")
MAX_TOP_K = 1000


def check_top_k(top_k) -> int:
    """``retriever.top_k`` as a positive int; anything else is refused in one line (0 or -3 would
    run and measure every metric as 0, "abc" would fail deep inside the search)."""
    try:
        k = whole_number(top_k)
    except ValueError:
        raise FedlabError(f"retriever.top_k={top_k!r} is not a whole number: use e.g. retriever.top_k=10") from None
    if not 1 <= k <= MAX_TOP_K:
        raise FedlabError(f"retriever.top_k={k} is out of range: use a number from 1 to {MAX_TOP_K}")
    return k


def build_retriever(kind: str, *, chunks: Sequence[Chunk], embedder=None, index=None, bm25=None, reranker=None,
                    top_k: int = 10, date_aware: bool = True, adaptive_top_k: Mapping | None = None,
                    rrf_k: int = 60, weights: Mapping[str, float] | None = None, candidates: int = 50,
                    corpus_end: str | None = None, end_grace_days: int = 1, fusion: str = "rrf",
                    alpha: float = 0.5, per_meeting: int | None = None, statement_quota: int | None = None,
                    length_norm: str | None = None, doc_first: bool = False, doc_first_docs: int = 3,
                    diversity_candidates: int = 3, events: bool = False, timeline=None,
                    prf: Mapping | None = None, rocchio: Mapping | None = None, multi_query: Mapping | None = None,
                    second_dense: str | None = None, vectors=None, second=None) -> DateAwareRetriever:
    """adaptive_top_k: {enabled: bool, span: int, year: int, multi_year: int} (missing keys: defaults).
    events: resolve meetings named by what happened ("the first cut after the 2022-23 tightening")
    over ``timeline`` (fedlab.facts.timeline) when a question carries no date of its own.
    Paraphrase options (off by default; fedlab.retrieval.prf, fedlab.retrieval.multi_query):
    prf {kind: rm3, fb_docs, fb_terms, orig_weight} on the BM25 side; rocchio {enabled, fb_docs,
    alpha, beta} on the dense side (needs ``vectors``, the chunks' vectors); multi_query {enabled,
    variants, ...} around the first stage; second_dense: the name of a second embedder (hybrid,
    RRF), whose (query embedder, vector index) over the same chunks the pipeline passes as ``second``."""
    if kind not in KINDS:
        raise FedlabError(f"unknown retriever kind {kind!r}: choose one of {', '.join(KINDS)}")
    top_k = check_top_k(top_k)
    fusion, alpha = check_fusion(fusion, alpha)
    ranking = RankingOptions(per_meeting=per_meeting, statement_quota=statement_quota, length_norm=length_norm,
                             doc_first=doc_first, doc_first_docs=doc_first_docs,
                             diversity_candidates=diversity_candidates)
    if ranking.length_norm:
        ranking = replace(ranking, doc_passages=passages_per_document(chunks))
    if kind in ("dense", "hybrid") and (embedder is None or index is None):
        raise FedlabError(f"retriever {kind!r} needs an embedder and a vector index")
    if kind in ("bm25", "hybrid") and bm25 is None:
        raise FedlabError(f"retriever {kind!r} needs a BM25 index")
    rm3, feedback = RM3Options.parse(prf), RocchioOptions.parse(rocchio)
    if rm3 is not None and kind == "dense":
        raise FedlabError("retriever.prf (RM3) works on the BM25 side: use retriever.kind=bm25 or hybrid")
    if feedback is not None and kind == "bm25":
        raise FedlabError("retriever.rocchio works on the dense side: use retriever.kind=dense or hybrid")
    if second_dense is not None and kind != "hybrid":
        raise FedlabError("retriever.second_dense adds a dense side to hybrid fusion: use retriever.kind=hybrid")
    if second_dense is not None and second is None:
        raise FedlabError(f"retriever.second_dense={second_dense!r} needs its embedder and index: build the "
                          "retriever through the pipeline (fedlab.pipeline.build_pipeline)")

    def dense_side(emb, idx, vecs):
        if feedback is None:
            return DenseRetriever(emb, idx, chunks)
        return RocchioDenseRetriever(emb, idx, chunks, vecs, feedback)

    def lexical_side():
        return BM25Retriever(bm25, chunks) if rm3 is None else RM3Retriever(bm25, chunks, rm3)

    if kind == "dense":
        base = dense_side(embedder, index, vectors)
    elif kind == "bm25":
        base = lexical_side()
    else:
        dense2 = None if second_dense is None else DenseRetriever(second[0], second[1], chunks)
        base = HybridRetriever(dense_side(embedder, index, vectors), lexical_side(),
                               rrf_k=rrf_k, weights=dict(weights or {}), candidates=candidates, fusion=fusion,
                               alpha=alpha, dense2=dense2)
    mq = MultiQueryOptions.parse(multi_query)
    if mq is not None:
        base = MultiQueryRetriever(base, chunks, mq)
    adaptive = dict(adaptive_top_k or {})
    enabled = bool(adaptive.pop("enabled", True))
    unknown = set(adaptive) - set(DEFAULT_SCOPE_K)
    if unknown:
        raise FedlabError(f"retriever.adaptive_top_k has unknown keys {sorted(unknown)}: "
                          f"use enabled, {', '.join(DEFAULT_SCOPE_K)}")
    return DateAwareRetriever(base, enabled=date_aware, reranker=reranker, top_k=top_k, adaptive=enabled,
                              scope_k={k: int(v) for k, v in adaptive.items()}, corpus_end=corpus_end,
                              end_grace_days=end_grace_days, ranking=ranking,
                              timeline=timeline if events else None)

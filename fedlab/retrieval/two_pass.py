"""Date-aware two-pass retrieval (FedQuery's design), adaptive top_k and reranking.

FOMC statements reuse near-identical language from meeting to meeting, so "inflation in
January 2024" retrieves well-matching passages from the wrong meetings. With a date hint:
pass 1 searches only inside the hinted range, pass 2 searches everything (skipped when pass 1
already filled the list); in-range passages come first, duplicates are dropped, the list is
capped. Ranking options (fedlab.retrieval.ranking: per-meeting diversity, a statement quota,
length normalisation, documents first) reshape the first pass only. A reranker, when set,
reorders the over-fetched candidates but keeps in-range passages ahead of out-of-range ones.
"""
from __future__ import annotations

import time
from datetime import date

from fedlab.retrieval.dates import parse_date_hint
from fedlab.retrieval.ranking import STATEMENT, RankingOptions
from fedlab.retrieval.rerank import NoReranker
from fedlab.retrieval.retrievers import dedupe_passages
from fedlab.retrieval.topk import adaptive_top_k
from fedlab.index.filter import MetadataFilter
from fedlab.retrieval.types import DateHint, Hit, RetrievalResult


def hint_filter(hint: DateHint, flt: MetadataFilter | None = None, end_grace_days: int = 0) -> MetadataFilter:
    """``flt`` narrowed to the hint's range, its end widened by ``end_grace_days``."""
    flt = flt or MetadataFilter()
    hint_to = hint.widened_end(end_grace_days)
    lows = [d for d in (flt.date_from, hint.date_from) if d is not None]
    highs = [d for d in (flt.date_to, hint_to) if d is not None]
    return MetadataFilter(max(lows) if lows else None, min(highs) if highs else None, flt.doc_types)


def preferring_doc_types(result: RetrievalResult, typed: RetrievalResult, doc_types: tuple[str, ...],
                         end_grace_days: int = 1) -> RetrievalResult:
    """``result``'s and ``typed``'s passages (``typed``: the same search restricted to ``doc_types``)
    as one list of ``result.k_used``: inside the hinted range the passages of ``doc_types`` first, then the
    others; outside it likewise; each group in its search's order. For a question that names a
    document type ("according to the March 2019 minutes"): the type it names would otherwise be
    crowded out by the other type's passages of the same meeting."""
    in_range = hint_filter(result.hint, None, end_grace_days) if result.hint is not None else MetadataFilter()
    hits = dedupe_passages([*typed.hits, *result.hits])
    hits = sorted(hits, key=lambda h: (not in_range.matches(h.chunk.meeting_date, h.chunk.doc_type),
                                       h.chunk.doc_type not in doc_types))[:result.k_used]
    timings = {k: result.timings.get(k, 0.0) + typed.timings.get(k, 0.0) for k in {*result.timings, *typed.timings}}
    return RetrievalResult([Hit(h.chunk, h.score, rank, h.sources) for rank, h in enumerate(hits, start=1)],
                           result.hint, result.k_used, timings)


class DateAwareRetriever:
    """The query-side pipeline around a first-stage retriever (dense, BM25 or hybrid).

    enabled: parse date hints from the query and run two passes; False = one unfiltered pass,
      base k, and supplied hints are ignored (a clean ablation).
    reranker: an object with ``overfetch`` and ``rerank(query, hits, k)``; None or NoReranker = none.
    Result timings (ms): ``search_ms`` and ``total_ms`` always, ``embed_ms`` when a query was
    embedded (dense, hybrid), ``rerank_ms`` when a reranker ran.
    top_k: k when ``search`` is not given one. adaptive: widen k by the hint's scope (scope_k).
    corpus_end: ISO date that ends open ranges ("since 2023"); None = today.
    end_grace_days: a two-day meeting that starts on a month's last day is dated by its decision
      day, the 1st of the next month (2023-02-01 for "January 2023"); 1 day covers it.
    ranking: RankingOptions for the in-range pass (None = plain first-stage order).
    """

    def __init__(self, base, enabled: bool = True, reranker=None, top_k: int = 10, adaptive: bool = True,
                 scope_k: dict[str, int] | None = None, corpus_end: str | None = None, end_grace_days: int = 1,
                 ranking: RankingOptions | None = None, timeline=None):
        self.base = base
        self.timeline = timeline  # a fedlab.facts.timeline.Timeline: event questions resolve over it
        self.enabled = bool(enabled)
        self.reranker = reranker
        self.top_k = int(top_k)
        self.adaptive = bool(adaptive)
        self.scope_k = dict(scope_k or {})
        self.corpus_end = date.fromisoformat(corpus_end) if corpus_end else None
        self.end_grace_days = int(end_grace_days)
        self.ranking = ranking or RankingOptions()

    def hint_for(self, query: str) -> DateHint | None:
        """The question's date range: its own dates, or (with a timeline) the meeting(s) it names
        by an event ("when runoff was first slowed")."""
        if not self.enabled:
            return None
        parsed = parse_date_hint(query, today=self.corpus_end)
        event = self._event(query, parsed)
        return event.hint if event is not None else parsed

    def event_for(self, query: str):
        """The EventHint (meetings and how they were read) of an event reference in ``query``, or
        None (no timeline, date-aware search off, no event, or the question's own date governs)."""
        if not self.enabled:
            return None
        return self._event(query, parse_date_hint(query, today=self.corpus_end))

    def _event(self, query: str, parsed: DateHint | None):
        if self.timeline is None:
            return None
        from fedlab.retrieval.events import LOCATE_PASSAGES, resolve_event

        def locate(phrase: str) -> list[str]:  # meeting retrieval for an anchor the timeline does not know
            return [h.chunk.meeting_date for h in self.base.search(phrase, LOCATE_PASSAGES)]

        return resolve_event(query, self.timeline, parsed, locate=locate)

    def search(self, query: str, k: int | None = None, flt: MetadataFilter | None = None,
               hint: DateHint | None = None) -> RetrievalResult:
        """Retrieve for ``query``; ``hint`` (from an agent) replaces the parsed one."""
        t0 = time.perf_counter()
        timings: dict[str, float] = {}
        reranker = None if isinstance(self.reranker, NoReranker) else self.reranker
        base_k = self.top_k if k is None else int(k)
        used = (hint if hint is not None else self.hint_for(query)) if self.enabled else None
        k_used = adaptive_top_k(used, base_k, self.scope_k) if self.adaptive else base_k
        n = k_used * (max(1, int(reranker.overfetch)) if reranker is not None else 1)

        t_search = time.perf_counter()
        in_range = None
        if used is None:
            hits = self.base.search(query, n, flt, timings)
        else:
            in_range = hint_filter(used, flt, self.end_grace_days)
            hits = self._first_pass(query, n, in_range, timings, window=base_k)
            if len(hits) < n:
                hits = dedupe_passages(hits + self.base.search(query, n, flt, timings))[:n]
        timings["search_ms"] = (time.perf_counter() - t_search) * 1000 - timings.get("embed_ms", 0.0)

        if reranker is not None:
            t_rerank = time.perf_counter()
            hits = reranker.rerank(query, hits, len(hits)) if hits else hits
            timings["rerank_ms"] = (time.perf_counter() - t_rerank) * 1000
        if in_range is not None:  # stable: in-range passages first, each group in its own order
            hits = sorted(hits, key=lambda h: not in_range.matches(h.chunk.meeting_date, h.chunk.doc_type))
        hits = [Hit(h.chunk, h.score, rank, h.sources) for rank, h in enumerate(hits[:k_used], start=1)]
        timings["total_ms"] = (time.perf_counter() - t0) * 1000
        return RetrievalResult(hits, used, k_used, timings)

    def _first_pass(self, query: str, n: int, in_range: MetadataFilter, timings: dict[str, float],
                    window: int) -> list[Hit]:
        """The in-range search: the first stage's best n, or the ranking options' choice among
        ``diversity_candidates`` x n of them (the statement quota holding in the first ``window``)."""
        if not self.ranking.active:
            return self.base.search(query, n, in_range, timings)
        fetch = self.ranking.fetch(n)
        pool = self.base.search(query, fetch, in_range, timings)
        statements = None
        if self.ranking.statement_quota and len(pool) >= fetch and (
                in_range.doc_types is None or STATEMENT in in_range.doc_types):
            only = MetadataFilter(in_range.date_from, in_range.date_to, (STATEMENT,))

            def statements(m: int) -> list[Hit]:
                return self.base.search(query, m, only, timings)
        return self.ranking.apply(pool, n, statements, window=window)

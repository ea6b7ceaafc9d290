"""In-range ranking options (per-meeting diversity, statement quota, length normalisation,
documents first) and convex fusion: the rules on hand-made hit lists, then through
build_retriever on real BM25 / exact indexes, then on the real corpus."""
from __future__ import annotations

import math
import re

import pytest
from hydra.utils import instantiate

from fedlab.chunking.chunk import Chunk
from fedlab.errors import FedlabError
from fedlab.index.bm25 import BM25Index
from fedlab.index.exact import ExactIndex
from fedlab.pipeline import chunk_meta
from fedlab.retrieval.factory import build_retriever
from fedlab.retrieval.fusion import convex, min_max
from fedlab.retrieval.ranking import (RankingOptions, documents_first, length_normalised, passages_per_document,
                                      round_robin_by_meeting, statement_quota)
from fedlab.retrieval.retrievers import BM25Retriever, DenseRetriever
from fedlab.retrieval.two_pass import DateAwareRetriever, hint_filter
from fedlab.index.filter import MetadataFilter
from fedlab.retrieval.types import Hit

from statements import statement_stack


def chunk(doc_date: str, start: int, doc_type: str = "minutes", text: str | None = None) -> Chunk:
    doc_id = f"{doc_type}-{doc_date}"
    text = text or f"{doc_id} {start}"
    return Chunk(f"{doc_id}#{start}", doc_id, doc_type, doc_date, None, start, start + len(text), text, text)


def hits(*specs) -> list[Hit]:
    """(date, start, doc_type, score) -> Hits ranked in the given order."""
    return [Hit(chunk(d, s, t), score, r) for r, (d, s, t, score) in enumerate(specs, start=1)]


def names(hs) -> list[str]:
    return [f"{h.chunk.doc_type[0]}{h.chunk.meeting_date[5:7]}.{h.chunk.start}" for h in hs]


# ---------------------------------------------------------------- the rules, on hand-made lists
def test_round_robin_takes_each_meetings_best_then_second_best():
    ranked = hits(("2023-02-01", 0, "minutes", 9), ("2023-02-01", 1, "minutes", 8), ("2023-05-03", 0, "minutes", 7),
                  ("2023-02-01", 2, "minutes", 6), ("2023-07-26", 0, "statement", 5), ("2023-05-03", 1, "minutes", 4))
    assert names(round_robin_by_meeting(ranked, 2)) == ["m02.0", "m05.0", "s07.0", "m02.1", "m05.1", "m02.2"]
    # one round: each meeting's best, then the rest in ranking order (nothing is dropped)
    assert names(round_robin_by_meeting(ranked, 1)) == ["m02.0", "m05.0", "s07.0", "m02.1", "m02.2", "m05.1"]


def test_documents_first_ranks_documents_by_their_best_passage():
    ranked = hits(("2023-02-01", 0, "minutes", 9), ("2023-05-03", 0, "statement", 8), ("2023-02-01", 1, "minutes", 7),
                  ("2023-07-26", 0, "minutes", 6), ("2023-05-03", 1, "statement", 5), ("2023-07-26", 1, "minutes", 4))
    assert names(documents_first(ranked, 1)) == ["m02.0", "m02.1", "s05.0", "m07.0", "s05.1", "m07.1"]
    assert names(documents_first(ranked, 2)) == ["m02.0", "m02.1", "s05.0", "s05.1", "m07.0", "m07.1"]


def test_length_norm_divides_minmax_scores_by_log_of_document_passages():
    ranked = hits(("2023-02-01", 0, "minutes", 10.0), ("2023-02-01", 0, "statement", 8.0),
                  ("2023-05-03", 0, "minutes", 2.0))
    sizes = {"minutes-2023-02-01": 63, "statement-2023-02-01": 3, "minutes-2023-05-03": 63}
    out = length_normalised(ranked, sizes)
    assert names(out) == ["s02.0", "m02.0", "m05.0"]
    assert out[0].sources["length_norm"] == pytest.approx(0.75 / math.log2(4))
    assert out[1].sources["length_norm"] == pytest.approx(1.0 / math.log2(64))
    assert out[2].sources["length_norm"] == 0.0
    assert [h.score for h in out] == [8.0, 10.0, 2.0]  # first-stage scores are kept
    counted = passages_per_document([chunk("2023-02-01", i) for i in range(4)] + [chunk("2023-02-01", 0, "statement")])
    assert counted == {"minutes-2023-02-01": 4, "statement-2023-02-01": 1}


def test_statement_quota_fills_the_window_end_and_moves_the_displaced_down():
    ranked = hits(*[("2023-02-01", i, "minutes", 10 - i) for i in range(5)], ("2023-02-01", 0, "statement", 4),
                  ("2023-05-03", 0, "minutes", 3), ("2023-05-03", 0, "statement", 2))
    out = statement_quota(ranked, 2, window=4, n=6)
    assert names(out) == ["m02.0", "m02.1", "s02.0", "s05.0", "m02.2", "m02.3"]
    assert names(statement_quota(ranked, 2, window=4, n=4)) == ["m02.0", "m02.1", "s02.0", "s05.0"]
    assert statement_quota(ranked, 0, window=4, n=6) == ranked[:6]
    # missing from the candidates: the statement-only search supplies them (duplicates skipped)
    extra = hits(("2023-07-26", 0, "statement", 1.0), ("2023-07-26", 1, "statement", 0.5))
    asked = []
    out = statement_quota(ranked[:5], 2, window=4, n=4,
                          statements=lambda m: asked.append(m) or extra)
    assert names(out) == ["m02.0", "m02.1", "s07.0", "s07.1"] and asked == [2]
    # a range without statements: the list is unchanged
    assert statement_quota(ranked[:5], 2, window=4, n=5, statements=lambda m: []) == ranked[:5]


def test_ranking_options_are_off_by_default_and_validated():
    off = RankingOptions()
    assert not off.active and off.fetch(10) == 10
    on = RankingOptions(per_meeting=2, diversity_candidates=4)
    assert on.active and on.fetch(10) == 40
    assert RankingOptions(length_norm="none").length_norm is None
    for bad, words in [({"per_meeting": 0}, "per_meeting"), ({"per_meeting": "two"}, "per_meeting"),
                       ({"statement_quota": -1}, "statement_quota"), ({"length_norm": "sqrt"}, "length_norm"),
                       ({"diversity_candidates": 0}, "diversity_candidates"),
                       ({"doc_first_docs": None}, "doc_first_docs"),
                       ({"doc_first": "yes"}, "doc_first")]:
        with pytest.raises(FedlabError, match=words) as err:
            RankingOptions(**bad)
        assert "\n" not in str(err.value)


def test_convex_fusion_by_hand():
    fused = dict(convex({"a": 0.9, "b": 0.5, "c": 0.1}, {"b": 12.0, "d": 4.0, "a": 8.0}, alpha=0.25))
    # dense normalised: a 1, b 0.5, c 0; bm25 normalised: b 1, a 0.5, d 0 (missing: 0)
    assert fused == pytest.approx({"a": 0.25 * 1 + 0.75 * 0.5, "b": 0.25 * 0.5 + 0.75 * 1, "c": 0.0, "d": 0.0})
    assert [d for d, _ in convex({"a": 1.0, "b": 0.0}, {"b": 5.0, "a": 1.0}, alpha=1.0)] == ["a", "b"]
    assert [d for d, _ in convex({"a": 1.0, "b": 0.0}, {"b": 5.0, "a": 1.0}, alpha=0.0)] == ["b", "a"]
    assert min_max({"x": 3.0, "y": 3.0}) == {"x": 1.0, "y": 1.0} and min_max({}) == {}


@pytest.mark.parametrize("kwargs,words", [({"fusion": "weighted"}, "retriever.fusion"),
                                          ({"fusion": "convex", "alpha": 1.5}, "retriever.alpha"),
                                          ({"fusion": "convex", "alpha": -0.1}, "retriever.alpha"),
                                          ({"fusion": "convex", "alpha": "half"}, "retriever.alpha"),
                                          ({"fusion": "convex", "alpha": float("nan")}, "retriever.alpha"),
                                          ({"per_meeting": 0}, "retriever.per_meeting"),
                                          ({"length_norm": "bm25"}, "retriever.length_norm")])
def test_bad_options_fail_at_construction_in_one_line(kwargs, words):
    bm25 = BM25Index()
    bm25.build(["the committee met"], [{"meeting_date": "2023-02-01", "doc_type": "statement"}])
    with pytest.raises(FedlabError, match=re.escape(words)) as err:
        build_retriever("bm25", chunks=[chunk("2023-02-01", 0, "statement")], bm25=bm25, **kwargs)
    assert "\n" not in str(err.value)


# ---------------------------------------------------------------- through build_retriever, real BM25
def _paragraph(topic_words: int, filler: str) -> str:
    return " ".join(["balance sheet runoff"] * topic_words + [filler])


@pytest.fixture(scope="module")
def lexical():
    """2023: three meetings, each minutes long and on topic (February's most), statements short
    and barely on topic; one 2024 meeting outside the range."""
    chunks = []
    for date, strength in [("2023-02-01", 6), ("2023-05-03", 3), ("2023-07-26", 2), ("2024-01-31", 9)]:
        for i in range(8):
            text = _paragraph(max(1, strength - i // 3), f"participants discussed item {date} {i} at length")
            chunks.append(chunk(date, i * 1000, "minutes", text))
        for i in range(2):
            chunks.append(chunk(date, i * 1000, "statement",
                                f"the committee decided policy {date} {i}; balance sheet plans continue"))
    bm25 = BM25Index()
    bm25.build([c.text for c in chunks], chunk_meta(chunks))
    return chunks, bm25


def _build(lexical, **kwargs):
    chunks, bm25 = lexical
    return build_retriever("bm25", chunks=chunks, bm25=bm25, **kwargs)


YEAR_Q = "How did balance sheet runoff proceed in 2023?"


def test_defaults_give_todays_ranking(lexical):
    chunks, bm25 = lexical
    built = _build(lexical, top_k=6)
    plain = DateAwareRetriever(BM25Retriever(bm25, chunks), top_k=6)
    assert not built.ranking.active
    for q in (YEAR_Q, "balance sheet runoff at the May 2023 meeting", "balance sheet runoff"):
        got, want = built.search(q).hits, plain.search(q).hits
        assert [h.chunk.passage_key for h in got] == [h.chunk.passage_key for h in want]


def test_per_meeting_spreads_a_range_over_its_meetings(lexical):
    base = _build(lexical, top_k=6, adaptive_top_k={"enabled": False})
    diverse = _build(lexical, top_k=6, adaptive_top_k={"enabled": False}, per_meeting=1)
    before, after = base.search(YEAR_Q).hits, diverse.search(YEAR_Q).hits
    assert {h.chunk.meeting_date for h in before} == {"2023-02-01"}  # February's minutes swamp the range
    assert [h.chunk.meeting_date for h in after[:3]] == ["2023-02-01", "2023-05-03", "2023-07-26"]
    assert after[0].chunk == before[0].chunk  # each round in ranking order: the best passage stays first
    assert all(h.chunk.meeting_date.startswith("2023") for h in after) and len(after) == 6
    assert [h.rank for h in after] == list(range(1, 7))
    # one meeting in range: nothing to spread, same list
    q = "balance sheet runoff at the May 2023 meeting"
    assert [h.chunk for h in diverse.search(q).hits] == [h.chunk for h in base.search(q).hits]
    # no date: the options act on the in-range pass only
    assert [h.chunk for h in diverse.search("balance sheet runoff").hits] == \
           [h.chunk for h in base.search("balance sheet runoff").hits]


def test_statement_quota_promotes_the_best_statements_of_the_range(lexical):
    chunks, bm25 = lexical
    base = _build(lexical, top_k=4, adaptive_top_k={"year": 6})
    quota = _build(lexical, top_k=4, adaptive_top_k={"year": 6}, statement_quota=2)
    before, after = base.search(YEAR_Q), quota.search(YEAR_Q)
    assert before.k_used == after.k_used == 6
    assert not any(h.chunk.doc_type == "statement" for h in before.hits)
    in_range = hint_filter(after.hint, None, 1)
    best_statements = BM25Retriever(bm25, chunks).search(
        YEAR_Q, 2, MetadataFilter(in_range.date_from, in_range.date_to, ("statement",)))
    b, a = [h.chunk for h in before.hits], [h.chunk for h in after.hits]
    assert a == b[:2] + [h.chunk for h in best_statements] + b[2:4]
    assert all(c.meeting_date.startswith("2023") for c in a)


def test_doc_first_lists_the_best_documents_passages_first(lexical):
    chunks, bm25 = lexical
    base = _build(lexical, top_k=18, adaptive_top_k={"enabled": False})
    first = _build(lexical, top_k=18, adaptive_top_k={"enabled": False}, doc_first=True, doc_first_docs=2)
    before, after = base.search(YEAR_Q).hits, first.search(YEAR_Q).hits
    docs = list(dict.fromkeys(h.chunk.doc_id for h in before))[:2]
    pool = BM25Retriever(bm25, chunks).search(YEAR_Q, 54, hint_filter(base.hint_for(YEAR_Q), None, 1))
    expected = [h.chunk for d in docs for h in pool if h.chunk.doc_id == d]
    expected += [h.chunk for h in pool if h.chunk not in expected]
    assert [h.chunk for h in after] == expected[:18]
    assert [h.chunk for h in after] != [h.chunk for h in before]  # the plain ranking mixes in a third document


def test_length_norm_ranks_the_pool_by_the_normalised_score(lexical):
    chunks, bm25 = lexical
    normed = _build(lexical, top_k=5, adaptive_top_k={"enabled": False}, length_norm="log", diversity_candidates=4)
    result = normed.search(YEAR_Q)
    pool = BM25Retriever(bm25, chunks).search(YEAR_Q, 20, hint_filter(result.hint, None, 1))
    lo, hi = min(h.score for h in pool), max(h.score for h in pool)
    sizes = {"minutes": 8, "statement": 2}
    want = sorted(pool, key=lambda h: -((h.score - lo) / (hi - lo) / math.log2(1 + sizes[h.chunk.doc_type])))[:5]
    assert [h.chunk for h in result.hits] == [h.chunk for h in want]
    values = [h.sources["length_norm"] for h in result.hits]
    assert values == sorted(values, reverse=True)


# ---------------------------------------------------------------- the real corpus
@pytest.fixture(scope="module")
def year_2022(documents):
    """Every 2022 statement and minutes paragraph (minutes are about 20 times longer), real BM25."""
    chunks = []
    for d in documents:
        if d.meeting_date.startswith("2022"):
            for m in re.finditer(r"[^\n]+", d.text):
                if len(m.group()) > 80:
                    chunks.append(Chunk(f"{d.doc_id}#{m.start()}", d.doc_id, d.doc_type, d.meeting_date, None,
                                        m.start(), m.end(), m.group(), m.group()))
    bm25 = BM25Index()
    bm25.build([c.text for c in chunks], chunk_meta(chunks))
    return chunks, bm25


DECISION_Q = "How did the Committee change the target range for the federal funds rate during 2022?"


def _statements(hs) -> int:
    return sum(h.chunk.doc_type == "statement" for h in hs)


def test_real_minutes_swamp_statements_and_both_remedies_lift_them(year_2022):
    chunks, bm25 = year_2022
    n_statements = sum(c.doc_type == "statement" for c in chunks)
    assert n_statements * 10 < len(chunks)
    base = build_retriever("bm25", chunks=chunks, bm25=bm25).search(DECISION_Q)
    quota = build_retriever("bm25", chunks=chunks, bm25=bm25, statement_quota=4).search(DECISION_Q)
    normed = build_retriever("bm25", chunks=chunks, bm25=bm25, length_norm="log").search(DECISION_Q)
    assert base.hint.scope == "year" and base.k_used == quota.k_used == normed.k_used == 30
    assert _statements(base.hits[:10]) < 4 <= _statements(quota.hits[:10])
    assert _statements(normed.hits[:10]) > _statements(base.hits[:10])
    for result in (quota, normed):
        assert all(h.chunk.meeting_date.startswith("2022") for h in result.hits)


def test_real_per_meeting_covers_every_meeting_of_the_year(year_2022):
    chunks, bm25 = year_2022
    meetings = sorted({c.meeting_date for c in chunks})
    assert len(meetings) == 8
    q = "What did participants say about reducing the Federal Reserve's securities holdings during 2022?"
    base = build_retriever("bm25", chunks=chunks, bm25=bm25).search(q)
    diverse = build_retriever("bm25", chunks=chunks, bm25=bm25, per_meeting=2).search(q)
    assert sorted({h.chunk.meeting_date for h in diverse.hits[:8]}) == meetings
    assert len({h.chunk.meeting_date for h in diverse.hits[:10]}) >= len({h.chunk.meeting_date for h in base.hits[:10]})
    assert diverse.hits[0].chunk == base.hits[0].chunk
    for r in range(2):  # rounds: no meeting twice inside one round of the first two
        row = [h.chunk.meeting_date for h in diverse.hits[8 * r:8 * r + 8]]
        assert len(set(row)) == len(row)


def test_real_doc_first_groups_the_best_document(year_2022):
    chunks, bm25 = year_2022
    base = build_retriever("bm25", chunks=chunks, bm25=bm25).search(DECISION_Q)
    first = build_retriever("bm25", chunks=chunks, bm25=bm25, doc_first=True, doc_first_docs=1).search(DECISION_Q)
    top_doc = base.hits[0].chunk.doc_id
    lead = [h.chunk.doc_id for h in first.hits]
    n_top = lead.count(top_doc)
    assert n_top >= 2 and lead[:n_top] == [top_doc] * n_top  # the best document's passages, together, first
    assert len({h.chunk.doc_id for h in base.hits[:n_top]}) > 1  # the plain ranking interleaves documents


@pytest.fixture(scope="module")
def statements_2023(documents):
    """2023 statements in paragraphs, the packaged paraphrase-MiniLM-L3 (ONNX), exact index, BM25."""
    return statement_stack(documents, lambda day: day.startswith("2023"))


def test_real_convex_fusion_matches_its_formula_and_its_ends(statements_2023):
    chunks, embedder, index, bm25 = statements_2023
    q = "inflation remains elevated and the Committee is highly attentive to inflation risks"
    parts = dict(chunks=chunks, embedder=embedder, index=index, bm25=bm25, date_aware=False, top_k=8)
    dense = DenseRetriever(embedder, index, chunks).search(q, 50)
    lexical = BM25Retriever(bm25, chunks).search(q, 50)
    d = min_max({h.chunk.passage_key: h.score for h in dense})
    b = min_max({h.chunk.passage_key: h.score for h in lexical})
    fused = build_retriever("hybrid", fusion="convex", alpha=0.3, **parts).search(q).hits
    for h in fused:
        key = h.chunk.passage_key
        assert h.score == pytest.approx(0.3 * d.get(key, 0.0) + 0.7 * b.get(key, 0.0))
        assert h.sources["convex"] == h.score and "rrf" not in h.sources
    assert [h.score for h in fused] == sorted((h.score for h in fused), reverse=True)
    only_dense = build_retriever("hybrid", fusion="convex", alpha=1.0, **parts).search(q).hits
    only_bm25 = build_retriever("hybrid", fusion="convex", alpha=0.0, **parts).search(q).hits
    assert [h.chunk for h in only_dense] == [h.chunk for h in dense[:8]]
    assert [h.chunk for h in only_bm25] == [h.chunk for h in lexical[:8]]
    default = build_retriever("hybrid", **parts)
    assert default.base.fusion == "rrf" and "convex" not in default.search(q).hits[0].sources


def test_real_hybrid_per_meeting_over_a_year_of_statements(statements_2023):
    chunks, embedder, index, bm25 = statements_2023
    parts = dict(chunks=chunks, embedder=embedder, index=index, bm25=bm25, top_k=8,
                 adaptive_top_k={"enabled": False})
    q = "What did the Committee say about the target range over 2023?"
    meetings = {c.meeting_date for c in chunks}
    diverse = build_retriever("hybrid", fusion="convex", per_meeting=1, **parts).search(q)
    assert diverse.hint.scope == "year"
    assert {h.chunk.meeting_date for h in diverse.hits} == meetings and len(meetings) == 8


# ---------------------------------------------------------------- Hydra: sweepable keys, defaults unchanged
def test_options_are_sweepable_hydra_keys_with_todays_defaults(lexical):
    from fedlab.config import compose

    chunks, bm25 = lexical
    for kind in ("dense", "bm25", "hybrid"):
        cfg = compose("evaluate", [f"retriever={kind}"])
        for key, value in {"per_meeting": None, "statement_quota": None, "length_norm": None, "doc_first": False,
                           "doc_first_docs": 3, "diversity_candidates": 3}.items():
            assert cfg.retriever[key] == value, (kind, key)
    hybrid = compose("evaluate", ["retriever=hybrid"]).retriever
    assert (hybrid.fusion, hybrid.alpha) == ("rrf", 0.5)
    cfg = compose("evaluate", ["retriever=bm25", "retriever.per_meeting=2", "retriever.statement_quota=1",
                               "retriever.length_norm=log", "retriever.doc_first=true", "retriever.doc_first_docs=4",
                               "retriever.diversity_candidates=5"])
    retriever = instantiate(cfg.retriever)(chunks=chunks, bm25=bm25)
    opts = retriever.ranking
    assert (opts.per_meeting, opts.statement_quota, opts.length_norm, opts.doc_first, opts.doc_first_docs,
            opts.diversity_candidates) == (2, 1, "log", True, 4, 5)
    assert opts.doc_passages["minutes-2023-02-01"] == 8 and opts.doc_passages["statement-2023-02-01"] == 2
    convex_cfg = compose("evaluate", ["retriever=hybrid", "retriever.fusion=convex", "retriever.alpha=0.7"])
    assert (convex_cfg.retriever.fusion, convex_cfg.retriever.alpha) == ("convex", 0.7)
    bad = compose("evaluate", ["retriever=hybrid", "retriever.fusion=convex", "retriever.alpha=2"]).retriever
    with pytest.raises(FedlabError, match="retriever.alpha"):
        instantiate(bad)(chunks=chunks, bm25=bm25, embedder=object(), index=object())

"""Retrievers, RRF, passage dedupe, two-pass date-aware search, ordering and the YAML configs."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hydra.utils import instantiate
from omegaconf import OmegaConf

from fedlab.chunking.chunk import Chunk
from fedlab.index.bm25 import BM25Index
from fedlab.index.exact import ExactIndex
from fedlab.pipeline import chunk_meta
from fedlab.retrieval.factory import build_retriever
from fedlab.retrieval.fusion import rrf
from fedlab.retrieval.ordering import lost_in_the_middle
from fedlab.retrieval.rerank import NoReranker
from fedlab.retrieval.retrievers import BM25Retriever, DenseRetriever, HybridRetriever
from fedlab.retrieval.two_pass import DateAwareRetriever, hint_filter, preferring_doc_types
from fedlab.index.filter import MetadataFilter
from fedlab.retrieval.types import DateHint, Hit

from statements import statement_stack

CONF = Path(__file__).resolve().parent.parent / "conf"


def chunk(doc_date: str, start: int, end: int, parent: tuple[int, int] | None = None, doc_type="statement",
          text: str | None = None) -> Chunk:
    doc_id = f"{doc_type}-{doc_date}"
    text = text or f"{doc_id} {start}-{end}"
    return Chunk(f"{doc_id}#{start}-{end}", doc_id, doc_type, doc_date, None, start, end, text, text,
                 parent[0] if parent else None, parent[1] if parent else None)


class TableRetriever:
    """Scores fixed per chunk, honours the filter; records each call (the input of the pipeline under test)."""

    def __init__(self, chunks, scores):
        self.chunks, self.scores, self.calls = chunks, scores, []

    def search(self, query, k, flt=None, timings=None):
        self.calls.append((k, flt))
        rows = [c for c in self.chunks if flt is None or flt.matches(c.meeting_date, c.doc_type)]
        rows.sort(key=lambda c: -self.scores[c.chunk_id])
        return [Hit(c, self.scores[c.chunk_id], r, {"table": self.scores[c.chunk_id]})
                for r, c in enumerate(rows[:k], start=1)]


class FixedEmbedder:
    """Query text -> a given vector (the dense retriever's input, not a library stand-in)."""

    def __init__(self, vectors):
        self.vectors = vectors

    def embed_query(self, text):
        return self.vectors[text]


# ---------------------------------------------------------------- fusion and ordering
def test_rrf_matches_hand_computed_scores():
    fused = rrf({"dense": ["a", "b", "c"], "bm25": ["c", "a", "d"]}, k=60)
    expected = {"a": 1 / 61 + 1 / 62, "b": 1 / 62, "c": 1 / 63 + 1 / 61, "d": 1 / 63}
    assert [d for d, _ in fused] == ["a", "c", "b", "d"]
    for doc, score in fused:
        assert score == pytest.approx(expected[doc])


def test_rrf_weights_and_small_k():
    fused = dict(rrf({"dense": ["a", "b"], "bm25": ["b", "a"]}, k=1, weights={"bm25": 3.0}))
    assert fused["a"] == pytest.approx(1 / 2 + 3 / 3)
    assert fused["b"] == pytest.approx(1 / 3 + 3 / 2)
    assert max(fused, key=fused.get) == "b"


def test_lost_in_the_middle_puts_best_at_both_ends():
    hits = [Hit(chunk("2024-01-31", i, i + 1), 1.0 - i / 10, i + 1) for i in range(6)]
    order = [h.rank for h in lost_in_the_middle(hits)]
    assert order == [1, 3, 5, 6, 4, 2]
    assert lost_in_the_middle(hits[:1]) == hits[:1] and lost_in_the_middle([]) == []


# ---------------------------------------------------------------- dense / bm25 / hybrid
@pytest.fixture
def small_to_big():
    """Three parents, each with children; child vectors make parent P0's children the closest."""
    chunks = [chunk("2024-01-31", 0, 10, (0, 30)), chunk("2024-01-31", 10, 20, (0, 30)),
              chunk("2024-01-31", 20, 30, (0, 30)), chunk("2024-01-31", 30, 40, (30, 60)),
              chunk("2024-01-31", 40, 50, (30, 60)), chunk("2023-12-13", 0, 10, (0, 20)),
              chunk("2023-12-13", 10, 20, (0, 20))]
    q = np.array([1.0, 0.0], dtype=np.float32)
    angles = [0.05, 0.1, 0.15, 0.4, 0.5, 0.2, 0.9]  # radians from the query
    vecs = np.array([[np.cos(a), np.sin(a)] for a in angles], dtype=np.float32)
    index = ExactIndex()
    index.build(vecs, chunk_meta(chunks))
    return chunks, index, FixedEmbedder({"q": q})


def test_dense_dedupes_children_of_one_parent(small_to_big):
    chunks, index, emb = small_to_big
    hits = DenseRetriever(emb, index, chunks).search("q", 3)
    keys = [(h.chunk.doc_id, h.chunk.span) for h in hits]
    # best child per parent: P0 via angle 0.05, then 2023's parent via 0.2, then P1 via 0.4
    assert keys == [("statement-2024-01-31", (0, 30)), ("statement-2023-12-13", (0, 20)),
                    ("statement-2024-01-31", (30, 60))]
    assert [h.chunk.start for h in hits] == [0, 0, 30]
    assert [h.rank for h in hits] == [1, 2, 3]
    assert hits[0].score == pytest.approx(np.cos(0.05), abs=1e-5)


def test_dense_filter_and_timings(small_to_big):
    chunks, index, emb = small_to_big
    timings = {}
    hits = DenseRetriever(emb, index, chunks).search("q", 5, MetadataFilter("2024-01-01", "2024-12-31"), timings)
    assert [h.chunk.span for h in hits] == [(0, 30), (30, 60)]  # only two 2024 passages exist
    assert timings["embed_ms"] >= 0


def test_bm25_retriever_on_real_index():
    texts = ["the committee raised the target range", "inflation remains elevated",
             "the committee kept the target range", "labor market tight"]
    chunks = [chunk("2023-0%d-01" % (i + 1), 0, len(t), text=t) for i, t in enumerate(texts)]
    bm25 = BM25Index()
    bm25.build(texts, chunk_meta(chunks))
    hits = BM25Retriever(bm25, chunks).search("raised target range", 3)
    assert hits[0].chunk.text == texts[0]
    assert {h.chunk.text for h in hits} == {texts[0], texts[2]}  # only documents sharing a term
    assert hits[0].sources["bm25"] == hits[0].score


def test_hybrid_fuses_by_passage_across_children():
    parent = (0, 30)
    a, b = chunk("2024-01-31", 0, 10, parent), chunk("2024-01-31", 10, 20, parent)
    c, d = chunk("2023-12-13", 0, 10), chunk("2023-11-01", 0, 10)
    dense = TableRetriever([a, b, c, d], {a.chunk_id: 0.9, b.chunk_id: 0.1, c.chunk_id: 0.8, d.chunk_id: 0.2})
    lexical = TableRetriever([a, b, c, d], {a.chunk_id: 0.0, b.chunk_id: 9.0, c.chunk_id: 1.0, d.chunk_id: 5.0})
    hits = HybridRetriever(_dedup(dense), _dedup(lexical), rrf_k=60).search("q", 10)
    # dense passages: P(a) 1, c 2, d 3 ; bm25: P(b) 1, d 2, c 3
    assert [h.chunk.passage_key for h in hits] == [a.passage_key, d.passage_key, c.passage_key]
    assert hits[0].score == pytest.approx(2 / 61)
    assert hits[0].sources == {"dense": 0.9, "bm25": 9.0, "rrf": pytest.approx(2 / 61)}
    assert hits[1].score == pytest.approx(1 / 63 + 1 / 62)
    assert len(HybridRetriever(_dedup(dense), _dedup(lexical)).search("q", 2)) == 2


class _dedup:
    """Passage-level view of a TableRetriever, as DenseRetriever/BM25Retriever give."""

    def __init__(self, inner):
        self.inner = inner

    def search(self, query, k, flt=None, timings=None):
        from fedlab.retrieval.retrievers import dedupe_passages
        return dedupe_passages(self.inner.search(query, 100, flt, timings))[:k]


# ---------------------------------------------------------------- two-pass
@pytest.fixture
def meetings():
    """Three chunks per meeting; later meetings score higher, so 2024 beats 2022 unfiltered."""
    dates = ["2022-01-26", "2022-06-15", "2023-02-01", "2023-06-14", "2024-01-31", "2024-06-12"]
    chunks = [chunk(d, i * 10, i * 10 + 10) for d in dates for i in range(3)]
    scores = {c.chunk_id: float(n) for n, c in enumerate(chunks)}
    return chunks, scores


def test_two_pass_puts_in_range_first_then_fills(meetings):
    chunks, scores = meetings
    base = TableRetriever(chunks, scores)
    result = DateAwareRetriever(base).search("What happened at the June 2022 meeting?", k=5)
    assert result.hint.scope == "meeting" and result.k_used == 5
    dates = [h.chunk.meeting_date for h in result.hits]
    assert dates[:3] == ["2022-06-15"] * 3 and all(d != "2022-06-15" for d in dates[3:])
    assert dates[3:] == ["2024-06-12", "2024-06-12"]  # best of the rest, unfiltered pass
    assert [h.rank for h in result.hits] == [1, 2, 3, 4, 5]
    assert len({h.chunk.passage_key for h in result.hits}) == 5
    assert base.calls[0][1].date_from == "2022-06-01" and base.calls[1][1] is None
    assert set(result.timings) == {"search_ms", "total_ms"}  # nothing embedded, no reranker


def test_straddling_meeting_is_in_range_for_its_first_month(meetings):
    chunks, scores = meetings
    result = DateAwareRetriever(TableRetriever(chunks, scores)).search("inflation in January 2023", k=3)
    assert [h.chunk.meeting_date for h in result.hits] == ["2023-02-01"] * 3
    strict = DateAwareRetriever(TableRetriever(chunks, scores), end_grace_days=0)
    assert strict.search("inflation in January 2023", k=3).hits[0].chunk.meeting_date == "2024-06-12"


def test_second_pass_skipped_when_first_fills(meetings):
    chunks, scores = meetings
    base = TableRetriever(chunks, scores)
    result = DateAwareRetriever(base, adaptive=False).search("policy in 2022", k=4)
    assert len(base.calls) == 1
    assert all(h.chunk.meeting_date.startswith("2022") for h in result.hits)


def test_adaptive_k_and_caller_hint(meetings):
    chunks, scores = meetings
    base = TableRetriever(chunks, scores)
    retriever = DateAwareRetriever(base, top_k=4, scope_k={"year": 6, "multi_year": 12})
    year = retriever.search("policy in 2023")
    assert year.k_used == 6 and len(year.hits) == 6
    assert [h.chunk.meeting_date[:4] for h in year.hits] == ["2023"] * 6
    supplied = DateHint("2022-01-01", "2023-12-31", "multi_year")
    result = retriever.search("policy in 2024", hint=supplied)
    assert result.hint == supplied and result.k_used == 12
    assert all(h.chunk.meeting_date < "2024" for h in result.hits)
    plain = retriever.search("what is the policy stance?")
    assert plain.hint is None and plain.k_used == 4
    assert [h.chunk.meeting_date for h in plain.hits] == ["2024-06-12"] * 3 + ["2024-01-31"]


def test_disabled_ignores_dates_and_hints(meetings):
    chunks, scores = meetings
    base = TableRetriever(chunks, scores)
    retriever = DateAwareRetriever(base, enabled=False)
    result = retriever.search("the June 2022 meeting", k=3, hint=DateHint("2022-06-01", "2022-06-30", "meeting"))
    assert result.hint is None and len(base.calls) == 1 and base.calls[0][1] is None
    assert result.hits[0].chunk.meeting_date == "2024-06-12"


def test_caller_filter_is_kept_in_both_passes():
    chunks = [chunk("2022-06-15", 0, 10), chunk("2022-06-15", 0, 10, doc_type="minutes"),
              chunk("2024-06-12", 0, 10, doc_type="minutes")]
    base = TableRetriever(chunks, {c.chunk_id: float(i) for i, c in enumerate(chunks)})
    result = DateAwareRetriever(base).search("June 2022", k=3, flt=MetadataFilter(doc_types=("minutes",)))
    assert [h.chunk.doc_id for h in result.hits] == ["minutes-2022-06-15", "minutes-2024-06-12"]
    narrowed = hint_filter(DateHint("2022-01-01", "2022-12-31", "year"), MetadataFilter("2022-06-01", "2023-06-30"), 1)
    assert (narrowed.date_from, narrowed.date_to) == ("2022-06-01", "2023-01-01")


def test_a_named_document_type_comes_first_inside_the_range_and_outside_it():
    """Minutes of the asked meeting first, then its statement, then the other meetings' minutes and
    statements; one passage once; k_used passages; both searches' time counted."""
    chunks = [chunk("2022-06-15", i * 10, i * 10 + 10) for i in range(3)]
    chunks += [chunk("2022-06-15", i * 10, i * 10 + 10, doc_type="minutes") for i in range(3)]
    chunks += [chunk("2024-06-12", 0, 10), chunk("2024-06-12", 0, 10, doc_type="minutes")]
    scores = {c.chunk_id: float(i) for i, c in enumerate(chunks)}
    scores.update({c.chunk_id: 100.0 + i for i, c in enumerate(chunks) if c.doc_type == "statement"})
    retriever = DateAwareRetriever(TableRetriever(chunks, scores))
    plain = retriever.search("June 2022", k=4)
    assert [h.chunk.doc_type for h in plain.hits] == ["statement"] * 3 + ["minutes"]  # statements score higher
    typed = retriever.search("June 2022", k=4, flt=MetadataFilter(doc_types=("minutes",)))
    merged = preferring_doc_types(plain, typed, ("minutes",))
    assert [(h.chunk.meeting_date, h.chunk.doc_type) for h in merged.hits] == \
        [("2022-06-15", "minutes")] * 3 + [("2022-06-15", "statement")]
    assert [h.rank for h in merged.hits] == [1, 2, 3, 4] and merged.k_used == 4
    assert len({h.chunk.passage_key for h in merged.hits}) == 4
    assert merged.timings["search_ms"] == pytest.approx(plain.timings["search_ms"] + typed.timings["search_ms"])
    wide = preferring_doc_types(retriever.search("June 2022", k=8),
                                retriever.search("June 2022", k=8, flt=MetadataFilter(doc_types=("minutes",))),
                                ("minutes",))
    assert [(h.chunk.meeting_date, h.chunk.doc_type) for h in wide.hits][4:] == \
        [("2022-06-15", "statement")] * 2 + [("2024-06-12", "minutes"), ("2024-06-12", "statement")]


# ---------------------------------------------------------------- configs
@pytest.mark.parametrize("name", ["dense", "bm25", "hybrid"])
def test_retriever_yaml_builds_pipeline(name, small_to_big):
    chunks, index, emb = small_to_big
    bm25 = BM25Index()
    bm25.build([c.text for c in chunks], chunk_meta(chunks))
    cfg = OmegaConf.load(CONF / "retriever" / f"{name}.yaml")
    make = instantiate(cfg)
    retriever = make(chunks=chunks, embedder=emb, index=index, bm25=bm25,
                     reranker=instantiate(OmegaConf.load(CONF / "reranker" / "none.yaml")))
    assert isinstance(retriever, DateAwareRetriever) and retriever.enabled
    assert isinstance(retriever.reranker, NoReranker)
    assert retriever.top_k == 10 and retriever.scope_k == {"span": 20, "year": 30, "multi_year": 50}
    expected = {"dense": DenseRetriever, "bm25": BM25Retriever, "hybrid": HybridRetriever}[name]
    assert type(retriever.base) is expected
    assert not retriever.ranking.active and retriever.ranking.diversity_candidates == 3  # options off: today's ranking
    if name == "hybrid":
        assert retriever.base.rrf_k == 60 and retriever.base.weights == {"dense": 1.0, "bm25": 1.0}
        assert retriever.base.fusion == "rrf"
    if name != "bm25":
        result = retriever.search("q", k=2)
        assert len(result.hits) == 2 and set(result.timings) == {"embed_ms", "search_ms", "total_ms"}


def test_build_retriever_names_missing_parts():
    from fedlab.errors import FedlabError
    with pytest.raises(FedlabError, match="BM25"):
        build_retriever("hybrid", chunks=[], embedder=object(), index=object())
    with pytest.raises(FedlabError, match="unknown retriever kind"):
        build_retriever("sparse", chunks=[])
    with pytest.raises(FedlabError, match="adaptive_top_k"):
        build_retriever("bm25", chunks=[], bm25=object(), adaptive_top_k={"decade": 80})


# ---------------------------------------------------------------- real corpus, real models
@pytest.fixture(scope="module")
def statement_pipeline(documents):
    """Statements 2022-2024 in paragraph chunks, ONNX paraphrase-MiniLM-L3, exact index, BM25."""
    return statement_stack(documents, lambda day: "2022" <= day[:4] <= "2024")


@pytest.mark.parametrize("kind", ["dense", "hybrid"])
def test_date_aware_finds_the_meeting_on_real_statements(statement_pipeline, kind):
    chunks, embedder, index, bm25 = statement_pipeline
    query = "What did the Committee decide about the target range for the federal funds rate in January 2024?"
    on = build_retriever(kind, chunks=chunks, embedder=embedder, index=index, bm25=bm25)
    off = build_retriever(kind, chunks=chunks, embedder=embedder, index=index, bm25=bm25, date_aware=False)
    hit_on, hit_off = on.search(query), off.search(query)
    assert hit_on.hint.date_from == "2024-01-01"
    n_doc = sum(c.doc_id == "statement-2024-01-31" for c in chunks)
    assert {h.chunk.doc_id for h in hit_on.hits[:n_doc]} == {"statement-2024-01-31"}
    # template language: without the date the same meeting holds few of the top 10
    assert sum(h.chunk.doc_id == "statement-2024-01-31" for h in hit_off.hits) < n_doc
    assert hit_on.timings["embed_ms"] > 0 and hit_on.timings["total_ms"] >= hit_on.timings["search_ms"]

    year = on.search("How did the Committee describe inflation in 2023?")
    assert year.k_used == 30 and year.hint.scope == "year"
    meetings_2023 = {c.meeting_date for c in chunks if c.meeting_date.startswith("2023")}
    assert {h.chunk.meeting_date for h in year.hits if h.chunk.meeting_date.startswith("2023")} == meetings_2023


def test_a_hint_at_the_end_of_the_calendar_does_not_overflow():
    """"What happened on 9999-12-31?" widened by the grace day must not raise OverflowError."""
    from fedlab.retrieval.two_pass import hint_filter
    from fedlab.retrieval.types import DateHint

    flt = hint_filter(DateHint("9999-12-31", "9999-12-31", "meeting", "9999-12-31"), None, end_grace_days=1)
    assert flt.date_to == "9999-12-31"


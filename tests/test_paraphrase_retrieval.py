"""Retrieval that bridges paraphrase: RM3 on BM25, Rocchio on dense, multi-query fusion, a second
dense side; each built through the factory, on real BM25 / exact indexes and real wordfreq."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hydra.utils import instantiate
from omegaconf import OmegaConf

from fedlab.chunking.chunk import Chunk
from fedlab.errors import FedlabError
from fedlab.index.bm25 import BM25Index
from fedlab.index.exact import ExactIndex
from fedlab.index.filter import MetadataFilter
from fedlab.pipeline import chunk_meta
from fedlab.retrieval.factory import build_retriever
from fedlab.retrieval.multi_query import (MultiQueryOptions, MultiQueryRetriever, Vocabulary, key_phrases,
                                          normalised)
from fedlab.retrieval.prf import (RM3Options, RM3Retriever, RocchioDenseRetriever, RocchioOptions, rm3_query,
                                  rocchio_vector)
from fedlab.retrieval.retrievers import BM25Retriever, DenseRetriever, HybridRetriever

CONF = Path(__file__).resolve().parent.parent / "conf"

# Two passages about a hike share vocabulary with a third that says it without "hike" or "rate";
# thirty unrelated passages make the document frequencies realistic (a term in three passages of
# 33 is rare enough for RM3's filter, df / N <= 0.1).
TOPIC = ["the committee decided on a rate hike and further tightening of policy firming",
         "a rate hike of 75 basis points continued the tightening of policy firming",
         "further tightening and policy firming were judged appropriate by members"]
FILLER = [f"unrelated passage number {i} about {w} conditions" for i, w in enumerate(
    "labor housing energy trade wages shipping farming mining travel lending retail tourism "
    "factories exports imports savings pensions insurance utilities software hospitals schools "
    "railways airlines banking fisheries forestry chemicals textiles media".split())]
TEXTS = TOPIC + FILLER


def chunk(i: int, text: str, day: str = "2022-06-15") -> Chunk:
    doc_id = f"minutes-{day}-{i}"
    return Chunk(f"{doc_id}#0-{len(text)}", doc_id, "minutes", day, None, 0, len(text), text, text)


@pytest.fixture(scope="module")
def lexical():
    chunks = [chunk(i, t, "2022-06-15" if i < 2 else "2023-03-22") for i, t in enumerate(TEXTS)]
    bm25 = BM25Index()
    bm25.build(TEXTS, chunk_meta(chunks))
    return chunks, bm25


# ---------------------------------------------------------------- BM25 weighted queries
def test_weighted_scores_are_bm25_scaled_by_weight(lexical):
    _, bm25 = lexical
    hike, policy = bm25.tokenizer("hike policy")  # index tokens (stemmed)
    assert np.array_equal(bm25.weighted_scores({hike: 1.0}), bm25.scores([hike]))
    assert np.allclose(bm25.weighted_scores({hike: 2.0, policy: 0.5}),
                       2.0 * bm25.scores([hike]) + 0.5 * bm25.scores([policy]))
    rows = {row for row, _ in bm25.search_weighted({hike: 1.0, "absentterm": 3.0}, 10)}
    assert rows == {0, 1}  # only documents holding a term, unknown terms ignored
    assert bm25.doc_freq(hike) == 2 and bm25.doc_freq("absentterm") == 0


# ---------------------------------------------------------------- RM3
def test_rm3_query_interpolates_and_filters_common_terms(lexical):
    chunks, bm25 = lexical
    terms = bm25.tokenizer("rate hike")
    feedback = bm25.search("rate hike", 2)
    weights = rm3_query(bm25, terms, feedback, RM3Options(fb_docs=2, fb_terms=5, orig_weight=0.6))
    assert sum(weights.values()) == pytest.approx(1.0)
    assert all(weights[t] >= 0.6 / 2 for t in terms)  # the original query keeps its share
    assert bm25.tokenizer("tightening")[0] in weights  # learnt from the feedback passages
    common = [t for t in bm25.tokenizer(" ".join(TEXTS)) if bm25.doc_freq(t) / bm25.n > 0.1]
    assert common and not set(common) & (set(weights) - set(terms))  # Anserini's filter: df/N > 0.1 never expands
    assert rm3_query(bm25, terms, [], RM3Options()) == {t: 0.5 for t in terms}  # no feedback: the query alone


def test_rm3_finds_the_paraphrase_plain_bm25_misses(lexical):
    chunks, bm25 = lexical
    plain = BM25Retriever(bm25, chunks).search("rate hike", 5)
    rm3 = RM3Retriever(bm25, chunks, RM3Options(fb_docs=2, fb_terms=6, orig_weight=0.5))
    hits = rm3.search("rate hike", 5)
    assert TOPIC[2] not in {h.chunk.text for h in plain}  # shares no term with the question
    assert [h.chunk.text for h in hits[:3]] == [TOPIC[0], TOPIC[1], TOPIC[2]] or \
        [h.chunk.text for h in hits[:3]] == [TOPIC[1], TOPIC[0], TOPIC[2]]
    # the filter holds in the feedback pass too: inside 2023 the 2022 hike passages teach nothing
    in_2023 = rm3.search("rate hike", 5, MetadataFilter("2023-01-01", "2023-12-31"))
    assert in_2023 == [] and bm25.tokenizer("tightening")[0] not in rm3.last_query


def test_rm3_options_refuse_bad_values_in_one_line():
    assert RM3Options.parse({"kind": None}) is None
    assert RM3Options.parse({"kind": "rm3", "fb_docs": 3}).fb_docs == 3
    for bad, match in (({"kind": "rm4"}, "prf.kind"), ({"kind": "rm3", "fb_terms": 0}, "fb_terms"),
                       ({"kind": "rm3", "orig_weight": 1.5}, "orig_weight"), ({"kind": "rm3", "docs": 3}, "unknown")):
        with pytest.raises(FedlabError, match=match) as err:
            RM3Options.parse(bad)
        assert "\n" not in str(err.value)


# ---------------------------------------------------------------- Rocchio
def unit(v):
    v = np.asarray(v, dtype=np.float32)
    return v / np.linalg.norm(v)


class FixedEmbedder:
    def __init__(self, vectors):
        self.vectors = vectors

    def embed_query(self, text):
        return self.vectors[text]


@pytest.fixture
def dense():
    vecs = np.stack([unit([1, 0.5, 0]), unit([1, 0, 0.9]), unit([0.7, 1, 0])])
    chunks = [chunk(i, f"passage {i}", day) for i, day in enumerate(["2022-06-15", "2022-06-15", "2023-03-22"])]
    index = ExactIndex()
    index.build(vecs, chunk_meta(chunks))
    return chunks, index, vecs, FixedEmbedder({"q": unit([1, 0, 0])})


def test_rocchio_vector_is_the_normalised_move():
    q, fb = unit([1, 0, 0]), np.stack([unit([0, 1, 0]), unit([0, 0, 1])])
    moved = rocchio_vector(q, fb, RocchioOptions(fb_docs=2, alpha=1.0, beta=2.0))
    assert moved == pytest.approx(unit([1, 1, 1]), abs=1e-6)
    assert rocchio_vector(q, np.empty((0, 3)), RocchioOptions()) is q


def test_rocchio_moves_toward_the_top_passage(dense):
    chunks, index, vecs, emb = dense
    plain = DenseRetriever(emb, index, chunks).search("q", 3)
    moved = RocchioDenseRetriever(emb, index, chunks, vecs, RocchioOptions(fb_docs=1, alpha=1.0, beta=1.0)).search("q", 3)
    assert [h.chunk.text for h in plain] == ["passage 0", "passage 1", "passage 2"]
    assert [h.chunk.text for h in moved] == ["passage 0", "passage 2", "passage 1"]  # 2 shares passage 0's direction
    only_2022 = RocchioDenseRetriever(emb, index, chunks, vecs, RocchioOptions(fb_docs=1, beta=1.0)).search(
        "q", 3, MetadataFilter("2022-01-01", "2022-12-31"))
    assert [h.chunk.text for h in only_2022] == ["passage 0", "passage 1"]


def test_rocchio_needs_the_vectors(dense):
    chunks, index, _, emb = dense
    with pytest.raises(FedlabError, match="vectors"):
        build_retriever("dense", chunks=chunks, embedder=emb, index=index, rocchio={"enabled": True})


# ---------------------------------------------------------------- multi-query
def test_normalised_drops_only_english_words_the_corpus_lacks():
    vocab = Vocabulary(TEXTS)
    out = normalised("hey guys, what rate hike did the committee decide?", vocab, MultiQueryOptions())
    words = out.split()
    assert "hey" not in words and "guys" not in words  # frequent in English, absent from the corpus
    assert {"rate", "hike", "committee", "decide"} <= set(words)  # "rate" is frequent in English too, but a corpus word
    strict = MultiQueryOptions(filler_zipf=8.0)  # nothing is that frequent: nothing dropped
    assert normalised("hey guys rate", vocab, strict) == "hey guys rate"


def test_key_phrases_are_the_most_informative_corpus_words():
    vocab = Vocabulary(TEXTS)
    out = key_phrases("so basically the zzqx rate hike and firming thing", vocab, MultiQueryOptions(key_terms=2))
    assert out.split() == ["hike", "firming"]  # rare in the corpus and in English; "zzqx" is in no passage
    assert key_phrases("the of and", vocab, MultiQueryOptions()) == ""


def test_multi_query_fuses_the_forms(lexical):
    chunks, bm25 = lexical
    mq = MultiQueryRetriever(BM25Retriever(bm25, chunks), chunks, MultiQueryOptions(key_terms=1))
    forms = mq.forms("hey guys any rate hike news")
    assert forms["question"] == "hey guys any rate hike news" and "hey" not in forms["normalised"]
    assert forms["key_phrases"] == "hike"
    hits = mq.search("hey guys any rate hike news", 4)
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    assert {h.chunk.text for h in hits[:2]} == {TOPIC[0], TOPIC[1]}  # in every form's list: fused first
    assert all("multi_query" in h.sources and "bm25" in h.sources for h in hits)
    assert hits[0].score > hits[-1].score
    one = MultiQueryRetriever(BM25Retriever(bm25, chunks), chunks, MultiQueryOptions(variants=("question",)))
    assert [h.chunk.text for h in one.search("rate hike", 3)] == \
        [h.chunk.text for h in BM25Retriever(bm25, chunks).search("rate hike", 3)]


def test_multi_query_options_refuse_unknown_forms():
    assert MultiQueryOptions.parse({"enabled": False}) is None
    with pytest.raises(FedlabError, match="unknown forms"):
        MultiQueryOptions.parse({"enabled": True, "variants": ["question", "hyde"]})


# ---------------------------------------------------------------- factory and configs
def test_factory_wires_each_option(lexical, dense):
    chunks, bm25 = lexical
    plain = build_retriever("bm25", chunks=chunks, bm25=bm25)
    assert type(plain.base) is BM25Retriever
    assert type(build_retriever("bm25", chunks=chunks, bm25=bm25, prf={"kind": "rm3"}).base) is RM3Retriever
    mq = build_retriever("bm25", chunks=chunks, bm25=bm25, prf={"kind": "rm3"}, multi_query={"enabled": True})
    assert type(mq.base) is MultiQueryRetriever and type(mq.base.base) is RM3Retriever
    # composes with the date-aware pass: "June 2022" narrows every form's search to that meeting
    result = mq.search("what about the rate hike in June 2022?")
    assert result.hint is not None and {h.chunk.text for h in result.hits[:2]} == {TOPIC[0], TOPIC[1]}

    dchunks, index, vecs, emb = dense
    roc = build_retriever("dense", chunks=dchunks, embedder=emb, index=index, vectors=vecs,
                          rocchio={"enabled": True, "fb_docs": 1, "beta": 1.0})
    assert type(roc.base) is RocchioDenseRetriever
    assert [h.chunk.text for h in roc.search("q").hits] == ["passage 0", "passage 2", "passage 1"]


def test_factory_refuses_options_on_the_wrong_side(lexical, dense):
    chunks, bm25 = lexical
    dchunks, index, vecs, emb = dense
    with pytest.raises(FedlabError, match="BM25 side"):
        build_retriever("dense", chunks=dchunks, embedder=emb, index=index, prf={"kind": "rm3"})
    with pytest.raises(FedlabError, match="dense side"):
        build_retriever("bm25", chunks=chunks, bm25=bm25, rocchio={"enabled": True})
    with pytest.raises(FedlabError, match="kind=hybrid"):
        build_retriever("bm25", chunks=chunks, bm25=bm25, second_dense="e5_small")
    with pytest.raises(FedlabError, match="pipeline"):
        build_retriever("hybrid", chunks=dchunks, embedder=emb, index=index, bm25=bm25, second_dense="e5_small")


def test_second_dense_is_a_third_rrf_side(dense):
    chunks, index, vecs, emb = dense
    bm25 = BM25Index()
    bm25.build([c.text for c in chunks], chunk_meta(chunks))
    other = ExactIndex()  # a second "model": its own vectors over the same chunks, passage 2 first
    other.build(np.stack([unit([0, 1, 0]), unit([0, 0, 1]), unit([1, 0, 0])]), chunk_meta(chunks))
    r = build_retriever("hybrid", chunks=chunks, embedder=emb, index=index, bm25=bm25, second_dense="other",
                        second=(emb, other), date_aware=False)
    assert isinstance(r.base, HybridRetriever) and r.base.dense2 is not None
    hits = r.search("q", k=3).hits
    assert all("dense2" in h.sources for h in hits)
    top2 = next(h for h in hits if h.chunk.text == "passage 2")
    assert top2.sources["rrf"] == pytest.approx(1 / 63 + 1 / 61)  # third by the first model, first by the second
    with pytest.raises(FedlabError, match="fusion=rrf"):
        build_retriever("hybrid", chunks=chunks, embedder=emb, index=index, bm25=bm25, second_dense="other",
                        second=(emb, other), fusion="convex")


@pytest.mark.parametrize("name", ["dense", "bm25", "hybrid"])
def test_retriever_yaml_leaves_every_option_off(name, lexical):
    cfg = OmegaConf.load(CONF / "retriever" / f"{name}.yaml")
    assert cfg.prf.kind is None and not cfg.rocchio.enabled and not cfg.multi_query.enabled
    assert cfg.second_dense is None
    chunks, bm25 = lexical
    if name == "bm25":
        r = instantiate(cfg)(chunks=chunks, bm25=bm25)
        assert type(r.base) is BM25Retriever


def test_pipeline_names_an_unknown_second_embedder(lexical, tmp_path):
    from fedlab.cache import ArtifactCache
    from fedlab.pipeline import second_dense

    chunks, _ = lexical
    cfg = OmegaConf.create({"retriever": {"second_dense": "nope"}, "index": {"_target_": "fedlab.index.exact.ExactIndex"}})
    with pytest.raises(FedlabError, match="not an embedder: use one of .*e5_small"):
        second_dense(cfg, chunks, ArtifactCache(tmp_path), progress=False)


def test_pipeline_builds_the_second_dense_side_through_the_cache(lexical, tmp_path):
    """A real second embedder (the packaged ONNX paraphrase-MiniLM-L3) over the same chunks: its
    vectors and index come from the cache the second time, and its dense side answers a query."""
    from fedlab.cache import ArtifactCache
    from fedlab.pipeline import second_dense

    chunks, bm25 = lexical
    cfg = OmegaConf.create({"retriever": {"second_dense": "paraphrase_minilm_l3"},
                            "index": {"_target_": "fedlab.index.exact.ExactIndex"}})
    embedder, index = second_dense(cfg, chunks, ArtifactCache(tmp_path), progress=False)
    assert index.n == len(chunks)
    def stored():  # the cached vector files and their inodes: a rebuild would replace them
        return sorted((str(p), p.stat().st_ino) for p in (tmp_path / "embeddings").rglob("vectors.npy"))

    first = stored()
    again_embedder, again = second_dense(cfg, chunks, ArtifactCache(tmp_path), progress=False)
    assert len(first) == 1 and stored() == first
    r = build_retriever("hybrid", chunks=chunks, embedder=embedder, index=index, bm25=bm25,
                        second_dense="paraphrase_minilm_l3", second=(again_embedder, again), date_aware=False)
    hits = r.search("tightening of policy", k=3).hits
    assert hits[0].chunk.text in TOPIC and "dense2" in hits[0].sources

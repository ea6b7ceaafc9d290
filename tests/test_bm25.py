"""BM25: tokenizer, ranking, metadata filters, persistence, config."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hydra.utils import instantiate
from omegaconf import OmegaConf
from rank_bm25 import BM25L, BM25Okapi, BM25Plus

from fedlab.errors import FedlabError
from fedlab.index import load_index
from fedlab.index.bm25 import VARIANTS as VARIANTS_BY_NAME, BM25Index, counted_bm25
from fedlab.index.tokens import Tokenizer, stem
from fedlab.index.filter import MetadataFilter

ROOT = Path(__file__).resolve().parent.parent

DOCS = [
    ("2019-07-31", "statement", "The Committee decided to lower the target range for the federal funds rate "
                                "to 2 to 2-1/4 percent."),
    ("2019-07-31", "minutes", "Participants discussed trade tensions and weak global growth; inflation "
                              "remained below 2 percent."),
    ("2020-03-15", "statement", "The coronavirus outbreak has harmed communities; the Committee lowered the "
                                "target range to 0 to 1/4 percent."),
    ("2020-03-15", "minutes", "Participants noted the pandemic disrupted economic activity and financial "
                              "markets; Treasury market functioning deteriorated."),
    ("2022-06-15", "statement", "The Committee decided to raise the target range to 1-1/2 to 1-3/4 percent "
                                "and is strongly committed to returning inflation to 2 percent."),
    ("2022-06-15", "minutes", "Participants judged that raising rates expeditiously was appropriate as "
                              "inflation was elevated; balance sheet runoff continued."),
    ("2023-07-26", "statement", "The Committee decided to raise the target range to 5-1/4 to 5-1/2 percent; "
                                "the banking system is sound and resilient."),
    ("2023-07-26", "minutes", "Participants observed tighter credit conditions following the banking stress "
                              "in March; some rates reached 5.25 percent."),
    ("2024-09-18", "statement", "The Committee decided to lower the target range by 1/2 percentage point "
                                "in light of progress on inflation."),
    ("2024-09-18", "minutes", "Participants discussed recalibrating the policy stance; labor market "
                              "conditions had eased."),
]
TEXTS = [t for _, _, t in DOCS]
META = [{"meeting_date": d, "doc_type": ty} for d, ty, _ in DOCS]


@pytest.fixture(scope="module")
def bm25() -> BM25Index:
    index = BM25Index()
    index.build(TEXTS, META)
    return index


def test_tokenizer_lowercases_drops_stopwords_keeps_numbers():
    tok = Tokenizer(stemming=False)
    assert tok("The Committee raised the rate to 2-1/4 percent, i.e. 5.25%.") == [
        "committee", "raised", "rate", "2-1/4", "percent", "e", "5.25"]
    assert tok("Rates: 1,000 basis points in 2019-2020") == ["rates", "1,000", "basis", "points", "2019-2020"]
    # directional words carry the stance and are kept
    assert tok("rates moved up, not down") == ["rates", "moved", "up", "not", "down"]


def test_tokenizer_switches():
    text = "The Committee's Raised Rates"
    assert Tokenizer(lowercase=False, stopwords=False, stemming=False)(text) == ["The", "Committee's", "Raised", "Rates"]
    assert Tokenizer(stopwords=False, stemming=False)(text) == ["the", "committee's", "raised", "rates"]
    assert Tokenizer()(text) == ["committe", "rais", "rat"]
    assert Tokenizer()("Committee\u2019s") == ["committe"]


@pytest.mark.parametrize("words, root", [
    (["raise", "raised", "raises", "raising"], "rais"),
    (["policy", "policies"], "policy"),
    (["tighten", "tightened", "tightening", "tightens"], "tighten"),
    (["stop", "stopped", "stopping"], "stop"),
    (["gradual", "gradually"], "gradual"),
    (["rate", "rates", "rated"], "rat"),
])
def test_stemmer_conflates_inflections(words, root):
    assert {stem(w) for w in words} == {root}


def test_stemmer_leaves_short_words_numbers_and_s_endings():
    for word in ("fed", "us", "2-1/2", "5.25", "status", "basis", "stress"):
        assert stem(word) == word


def test_rare_term_ranks_its_document_first(bm25):
    assert bm25.search("coronavirus", 3)[0][0] == 2
    assert bm25.search("treasury market functioning", 3)[0][0] == 3
    assert bm25.search("runoff of the balance sheet", 3)[0][0] == 5
    hits = bm25.search("raising the target range", 10)
    scores = [s for _, s in hits]
    assert scores == sorted(scores, reverse=True)
    assert scores[0] > 0 and min(scores) >= 0  # Okapi IDF is 0 for a term in exactly half the docs


def test_numbers_are_searchable(bm25):
    assert bm25.search("5.25", 5) == [(7, pytest.approx(bm25.search("5.25", 1)[0][1]))]
    assert bm25.search("5-1/2 percent", 1)[0][0] == 6


def test_only_documents_sharing_a_term_are_returned(bm25):
    assert bm25.search("zebra unicorn", 5) == []
    assert bm25.search("the of and", 5) == []  # stop words only
    assert len(bm25.search("coronavirus", 100)) == 1
    assert bm25.search("coronavirus", 0) == []


def test_filter(bm25):
    flt = MetadataFilter(date_from="2022-01-01", doc_types=("statement",))
    hits = bm25.search("Committee decided target range", 10, flt)
    assert {i for i, _ in hits} == {4, 6, 8}
    assert bm25.search("coronavirus", 5, flt) == []
    assert bm25.search("Committee", 5, MetadataFilter(date_from="2030-01-01")) == []
    assert bm25.search_many(["coronavirus", "banking"], 2, MetadataFilter(date_to="2020-12-31")) == [
        bm25.search("coronavirus", 2), []]


@pytest.mark.parametrize("variant", ["okapi", "plus", "l"])
def test_save_load_round_trip(variant, tmp_path):
    index = BM25Index(variant=variant, k1=1.2, b=0.6, stemming=False)
    index.build(TEXTS, META)
    queries = ["inflation target", "banking stress March", "pandemic"]
    before = index.search_many(queries, 5)
    index.save(tmp_path / "bm25")
    for loaded in (BM25Index.load(tmp_path / "bm25"), load_index(tmp_path / "bm25")):
        assert loaded.params() == index.params()
        assert loaded.fingerprint() == index.fingerprint()
        assert loaded.search_many(queries, 5) == before
        assert loaded.size_bytes() > 0
    assert before[2][0][0] == 3  # "pandemic" without stemming still finds its document


def test_params_change_scores_and_fingerprint():
    a, b = BM25Index(), BM25Index(k1=0.9, b=0.4)
    a.build(TEXTS, META)
    b.build(TEXTS, META)
    assert a.fingerprint() != b.fingerprint()
    assert a.search("inflation percent", 3) != b.search("inflation percent", 3)


def test_user_errors():
    with pytest.raises(FedlabError, match="variant"):
        BM25Index(variant="bm99")
    with pytest.raises(FedlabError, match="empty"):
        BM25Index().search("rates", 5)
    with pytest.raises(FedlabError, match="metadata"):
        BM25Index().build(TEXTS, META[:3])


def test_config_instantiates():
    cfg = OmegaConf.load(ROOT / "conf" / "bm25" / "default.yaml")
    index = instantiate(cfg)
    assert isinstance(index, BM25Index)
    assert {k for k in cfg if k != "_target_"} == set(index.params())


@pytest.mark.parametrize("cls,kwargs", [(BM25Okapi, {"k1": 1.2, "b": 0.7, "epsilon": 0.3}), (BM25Plus, {}),
                                        (BM25L, {"k1": 1.5, "b": 0.75, "delta": 0.4})])
def test_counted_bm25_is_rank_bm25_exactly(cls, kwargs):
    """The fast load (Counter-based term counts) gives rank-bm25's statistics and scores, bit for bit."""
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(60)]
    docs = [[words[j] for j in rng.zipf(1.3, size=rng.integers(1, 40)) % 60] for _ in range(300)]
    fast, slow = counted_bm25(cls, docs, **kwargs), cls(docs, **kwargs)
    assert fast.idf == slow.idf and list(fast.idf) == list(slow.idf)
    assert [dict(c) for c in fast.doc_freqs] == slow.doc_freqs and fast.avgdl == slow.avgdl
    for _ in range(20):
        query = list(rng.choice(words + ["unseen"], size=rng.integers(1, 6)))
        assert np.array_equal(fast.get_scores(query), slow.get_scores(query))


@pytest.mark.parametrize("variant,params", [("okapi", {"k1": 1.2, "b": 0.7, "epsilon": 0.3}), ("plus", {}),
                                            ("l", {"k1": 1.5, "b": 0.75, "delta": 0.4})])
def test_index_scores_are_rank_bm25s_bit_for_bit(variant, params, documents):
    """BM25Index.scores (term frequencies from the postings) equals rank-bm25's get_scores on the
    real corpus, for repeated, rare and unseen query terms."""
    index = BM25Index(variant=variant, **params)
    texts = [d.text for d in documents][:120]
    index.build(texts, [{"meeting_date": d.meeting_date, "doc_type": d.doc_type} for d in documents[:120]])
    reference = VARIANTS_BY_NAME[variant](index._tokens, **params)
    queries = ["federal funds rate target range", "inflation inflation expectations longer-run",
               "balance sheet runoff Treasury securities agency mortgage-backed", "zyzzyva unseen term", "2 percent"]
    for query in queries:
        terms = index.tokenizer(query)
        assert np.array_equal(index.scores(terms), reference.get_scores(terms)), query

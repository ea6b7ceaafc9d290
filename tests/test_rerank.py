"""Rerankers: none, a tiny self-built cross-encoder, late interaction (MaxSim) on all-MiniLM."""
from __future__ import annotations

import time

import pytest

from fedlab.chunking.chunk import Chunk
from fedlab.errors import FedlabError
from fedlab.retrieval.rerank import CrossEncoderReranker, LateInteractionReranker, NoReranker
from fedlab.retrieval.two_pass import DateAwareRetriever
from fedlab.retrieval.types import Hit

PASSAGES = [
    "The Committee decided to maintain the target range for the federal funds rate at 5-1/4 to 5-1/2 percent.",
    "Inflation has eased over the past year but remains elevated.",
    "Job gains have moderated since early last year but remain strong, and the unemployment rate has remained low.",
    "The Committee will continue reducing its holdings of Treasury securities and agency debt.",
    "Recent indicators suggest that economic activity has been expanding at a solid pace.",
    "The U.S. banking system is sound and resilient.",
    "In support of its goals, the Committee decided to raise the target range by 1/4 percentage point.",
    "Participants noted that supply chain bottlenecks had contributed to elevated inflation.",
]


def hits_for(texts, dates=None):
    out = []
    for i, t in enumerate(texts):
        d = dates[i] if dates else "2024-01-31"
        c = Chunk(f"statement-{d}#{i}", f"statement-{d}", "statement", d, None, i * 200, i * 200 + len(t), t, t)
        out.append(Hit(c, 1.0 - i / 100, i + 1, {"dense": 1.0 - i / 100}))
    return out


def test_no_reranker_keeps_order_and_caps():
    hits = hits_for(PASSAGES)
    out = NoReranker().rerank("q", hits, 3)
    assert [h.chunk.chunk_id for h in out] == [h.chunk.chunk_id for h in hits[:3]] and NoReranker.overfetch == 1


# ---------------------------------------------------------------- cross-encoder
@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory):
    """A randomly initialised 2-layer BERT with one output, saved like a hub cross-encoder."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    from fedlab.embedding.packaged import minilm_dir

    torch.manual_seed(0)
    tokenizer = BertTokenizerFast.from_pretrained(str(minilm_dir()))
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=512, num_labels=1)
    model = BertForSequenceClassification(config).eval()
    path = tmp_path_factory.mktemp("tiny-cross-encoder")
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path, model, tokenizer


def test_cross_encoder_reorders_by_its_own_scores(tiny_cross_encoder):
    import torch

    path, model, tokenizer = tiny_cross_encoder
    reranker = CrossEncoderReranker(model=str(path), overfetch=3)
    query = "What did the Committee decide about the target range?"
    hits = hits_for(PASSAGES)
    out = reranker.rerank(query, hits, len(hits))

    with torch.no_grad():
        batch = tokenizer([query] * len(PASSAGES), PASSAGES, padding=True, truncation=True, return_tensors="pt")
        logits = model(**batch).logits[:, 0].tolist()
    expected = sorted(range(len(PASSAGES)), key=lambda i: -logits[i])
    assert [h.chunk.text for h in out] == [PASSAGES[i] for i in expected]
    assert expected != list(range(len(PASSAGES)))  # the order really changed
    assert {h.chunk.chunk_id for h in out} == {h.chunk.chunk_id for h in hits}
    assert [h.rank for h in out] == list(range(1, len(hits) + 1))
    assert all(a.score >= b.score for a, b in zip(out, out[1:]))
    top = out[0]
    original = next(h for h in hits if h.chunk.chunk_id == top.chunk.chunk_id)
    assert top.sources["retrieval"] == original.score and top.sources["dense"] == original.sources["dense"]
    assert top.sources["cross_encoder"] == top.score
    assert len(reranker.rerank(query, hits, 3)) == 3


def test_pipeline_overfetches_for_the_reranker(tiny_cross_encoder):
    path, _, _ = tiny_cross_encoder
    pool = hits_for(PASSAGES * 4)

    class Pool:
        asked = []

        def search(self, query, k, flt=None, timings=None):
            self.asked.append(k)
            return pool[:k]

    base = Pool()
    reranker = CrossEncoderReranker(model=str(path), overfetch=3)
    result = DateAwareRetriever(base, reranker=reranker).search("target range", k=5)
    assert base.asked == [15] and len(result.hits) == 5
    assert all("cross_encoder" in h.sources for h in result.hits)
    assert result.timings["rerank_ms"] > 0


def test_cross_encoder_missing_offline_fails_fast(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    t0 = time.perf_counter()
    with pytest.raises(FedlabError) as err:
        CrossEncoderReranker(model="cross-encoder/ms-marco-MiniLM-L-6-v2")
    assert time.perf_counter() - t0 < 5
    message = str(err.value)
    assert "\n" not in message and "reranker.model=" in message and "offline" in message
    with pytest.raises(FedlabError, match="does not exist"):
        CrossEncoderReranker(model="/nonexistent/cross-encoder")


def test_cross_encoder_unfetchable_name_is_one_line_error(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    with pytest.raises(FedlabError) as err:  # the hub is unreachable here (and refused by the test guard)
        CrossEncoderReranker(model="cross-encoder/ms-marco-MiniLM-L-6-v2")
    assert "\n" not in str(err.value) and "could not be fetched" in str(err.value)


# ---------------------------------------------------------------- late interaction
@pytest.fixture(scope="module")
def late():
    return LateInteractionReranker()


def test_late_interaction_ranks_verbatim_source_first(late):
    source = PASSAGES[2]
    hits = hits_for(PASSAGES)
    out = late.rerank(source, hits, len(hits))
    assert out[0].chunk.text == source
    assert out[0].sources["late_interaction"] == out[0].score and "retrieval" in out[0].sources
    query = "Has the unemployment rate stayed low while job gains moderated?"
    assert late.rerank(query, hits, 3)[0].chunk.text == source


def test_late_interaction_maxsim_of_identical_text_is_token_count(late):
    text = "inflation remains elevated"
    n_tokens = len(late.model.tokenizer(text)["input_ids"]) - 2  # without [CLS]/[SEP]
    [self_score, other] = late.scores(text, [text, "the labor market is tight"])
    assert self_score == pytest.approx(n_tokens, abs=5e-3)  # passage vectors are float16-rounded
    assert other < self_score


def test_late_interaction_cache_gives_same_scores_and_is_bounded():
    reranker = LateInteractionReranker(cache_size=3)
    query = "Has inflation eased?"
    first = reranker.scores(query, PASSAGES[:5])
    assert len(reranker._cache) == 3 and list(reranker._cache) == PASSAGES[2:5]  # least recent evicted
    again = reranker.scores(query, PASSAGES[:5])
    # the evicted passages are re-encoded in a smaller batch: float32 sums in another order
    # (seen: 1.2e-6 apart on a busy machine), so equal to float32 precision, not bit for bit
    assert again == pytest.approx(first, rel=1e-5)
    reranker.scores(query, [PASSAGES[3]])  # a hit moves to the most-recent end
    assert list(reranker._cache)[-1] == PASSAGES[3]


def test_reranker_yamls_instantiate(tiny_cross_encoder):
    from pathlib import Path

    from hydra.utils import instantiate
    from omegaconf import OmegaConf

    conf = Path(__file__).resolve().parent.parent / "conf" / "reranker"
    cross = OmegaConf.load(conf / "cross_encoder.yaml")
    assert cross.model == "cross-encoder/ms-marco-MiniLM-L-6-v2" and cross.overfetch == 3
    cross.model = str(tiny_cross_encoder[0])
    assert isinstance(instantiate(cross), CrossEncoderReranker)
    late = instantiate(OmegaConf.load(conf / "late_interaction.yaml"))
    assert isinstance(late, LateInteractionReranker) and late.overfetch == 3 and late.cache_size == 2048
    assert isinstance(instantiate(OmegaConf.load(conf / "none.yaml")), NoReranker)


def test_token_store_scores_equal_on_the_fly_scores(tmp_path):
    """The per-chunk-set token store (computed once, memory-mapped) changes no score."""
    from fedlab.retrieval.rerank import LateInteractionReranker

    passages = [
        "The Committee decided to maintain the target range for the federal funds rate.",
        "Participants noted that inflation remained elevated.",
        "The staff projection for real GDP growth was revised down.",
    ]
    fresh = LateInteractionReranker(cache_size=0)
    expected = fresh.scores("What did the Committee decide?", passages)
    stored = LateInteractionReranker(cache_size=0)
    stored.encode_store(passages, tmp_path)
    stored.attach_store(passages, tmp_path)
    assert stored.scores("What did the Committee decide?", passages) == pytest.approx(expected, abs=1e-5)
    assert stored.fingerprint() == fresh.fingerprint()

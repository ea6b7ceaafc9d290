"""Embedders on the real packaged models: shapes, normalisation, prefixes, token spans,
fingerprints, offline failure for unknown models, Hydra configs."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hydra.utils import instantiate
from omegaconf import OmegaConf

from fedlab.chunking.tokenizers import TokenCounter
from fedlab.embedding.base import Embedder
from fedlab.embedding.onnx import OnnxBertEmbedder
from fedlab.embedding.st import SentenceTransformerEmbedder
from fedlab.embedding.throughput import measure_throughput
from fedlab.errors import FedlabError

ROOT = Path(__file__).resolve().parent.parent
CONF = ROOT / "conf" / "embedder"
OFFLINE_BACKENDS = ["minilm", "minilm_int8", "paraphrase_minilm_l3", "e5_small"]
ALL_CONFIGS = OFFLINE_BACKENDS + ["bge_small"]
BGE_INSTRUCTION = "Represent this sentence for searching relevant passages: "

# Sentences from FOMC statements and minutes.
SENTENCES = [
    "The Committee decided to maintain the target range for the federal funds rate at 5-1/4 to 5-1/2 percent.",
    "Inflation has eased over the past year but remains elevated.",
    "Job gains have moderated since earlier in the year but remain strong, and the unemployment rate has "
    "remained low.",
    "Participants noted that the economic outlook was uncertain, and that the Committee remains highly "
    "attentive to inflation risks.",
    "In support of its goals, the Committee decided to lower the target range for the federal funds rate "
    "by 1/4 percentage point to 4-1/4 to 4-1/2 percent.",
]
ODD_TEXT = "  Real GDP rose 2.8% in Q3\u2014“strong”\u00a0growth; PCE ½ pt.\n\nLabor-market (tight) conditions…  "


def load(name: str) -> Embedder:
    return instantiate(OmegaConf.load(CONF / f"{name}.yaml"))


@pytest.fixture(scope="module")
def embedders() -> dict[str, Embedder]:
    return {}


@pytest.fixture(params=OFFLINE_BACKENDS)
def embedder(request, embedders) -> Embedder:
    if request.param not in embedders:
        embedders[request.param] = load(request.param)
    return embedders[request.param]


@pytest.mark.parametrize("name", ALL_CONFIGS)
def test_config_instantiates_without_loading(name):
    emb = load(name)
    assert isinstance(emb, Embedder)
    assert emb.name == name
    assert not emb._loaded
    if name in OFFLINE_BACKENDS:  # bge_small resolves its model (absent offline) on first use
        assert isinstance(emb, TokenCounter)  # usable by the chunkers as their tokenizer


def test_embeddings_shapes_normalised_deterministic(embedder):
    docs = embedder.embed_documents(SENTENCES)
    assert docs.dtype == np.float32 and docs.shape == (len(SENTENCES), embedder.dim) and embedder.dim == 384
    np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(docs, embedder.embed_documents(SENTENCES))
    # a text's vector does not depend on the batch it was embedded in (cache safety)
    alone = embedder.embed_documents([SENTENCES[2]])[0]
    np.testing.assert_allclose(alone, docs[2], atol=1e-4)
    q = embedder.embed_query(SENTENCES[1])
    assert q.dtype == np.float32 and q.shape == (embedder.dim,)
    assert abs(float(np.linalg.norm(q)) - 1.0) < 1e-5
    assert int(np.argmax(docs @ q)) == 1
    assert embedder.embed_documents([]).shape == (0, embedder.dim)


def test_token_spans_map_onto_text(embedder):
    for text in SENTENCES + [ODD_TEXT]:
        spans = embedder.token_spans(text)
        assert spans and all(isinstance(a, int) and isinstance(b, int) for a, b in spans)
        prev_end = 0
        covered = set()
        for a, b in spans:
            assert prev_end <= a <= b <= len(text)
            prev_end = b
            covered.update(range(a, b))
        # every visible character belongs to a token
        assert {i for i, ch in enumerate(text) if not ch.isspace()} <= covered
    words = [SENTENCES[1][a:b] for a, b in embedder.token_spans(SENTENCES[1])]
    assert "".join(words) == SENTENCES[1].replace(" ", "")  # tokens are the words' pieces, in order
    assert embedder.token_spans_batch(SENTENCES[:2]) == [embedder.token_spans(t) for t in SENTENCES[:2]]


def test_bert_spans_are_wordpieces():
    emb = load("minilm_int8")
    text = "The Committee's assessments"
    assert [text[a:b] for a, b in emb.token_spans(text)] == ["The", "Committee", "'", "s", "assessments"]
    assert emb.num_special_tokens == 2 and emb.max_seq_length == 256


def test_e5_spans_follow_the_engine_tokenizer(embedders):
    emb = embedders.get("e5_small") or load("e5_small")
    emb.ensure_loaded()
    for text in SENTENCES + [ODD_TEXT, "", "x"]:
        # the engine counts "passage: " + text plus <s> and </s>
        assert len(emb.token_spans("passage: " + text)) + 2 == emb._model.token_count(text)
    assert emb.num_special_tokens == 2 + len(emb.token_spans("passage:"))
    assert emb.max_seq_length == 512


def test_e5_applies_query_and_passage_prefixes(embedders):
    emb = embedders.get("e5_small") or load("e5_small")
    q = emb.embed_query(SENTENCES[0])
    p = emb.embed_documents([SENTENCES[0]])[0]
    assert 0.7 < float(q @ p) < 0.999


def test_generic_backend_local_path_and_query_instruction():
    from fedlab.embedding import packaged

    plain = load("minilm")
    generic = SentenceTransformerEmbedder(name="minilm_instructed", model=str(packaged.minilm_dir()),
                                          query_prefix=BGE_INSTRUCTION)
    text = SENTENCES[3]
    np.testing.assert_allclose(generic.embed_documents([text]), plain.embed_documents([text]), atol=1e-5)
    np.testing.assert_allclose(generic.embed_query(text), plain.embed_documents([BGE_INSTRUCTION + text])[0],
                               atol=1e-5)
    assert float(generic.embed_query(text) @ plain.embed_query(text)) < 0.99
    assert generic.fingerprint() != plain.fingerprint()  # prefixes are part of the key


def test_int8_onnx_agrees_with_torch_minilm():
    torch_vecs = load("minilm").embed_documents(SENTENCES)
    int8_vecs = load("minilm_int8").embed_documents(SENTENCES)
    cosines = (torch_vecs * int8_vecs).sum(axis=1)
    assert cosines.min() > 0.95, cosines  # measured here: about 0.999


FINGERPRINT_SCRIPT = """
import json, sys
from hydra.utils import instantiate
from omegaconf import OmegaConf
out = {}
for name in %r:
    emb = instantiate(OmegaConf.load(%r + "/" + name + ".yaml"))
    out[name] = emb.fingerprint()
    emb.token_spans("The Committee")
out["_heavy"] = sorted(m for m in ("sentence_transformers", "torch", "transformers") if m in sys.modules)
print(json.dumps(out))
"""


def test_fingerprints_stable_across_processes_and_cheap():
    script = FINGERPRINT_SCRIPT % (OFFLINE_BACKENDS, str(CONF))
    runs = [json.loads(subprocess.run([sys.executable, "-c", script], check=True, capture_output=True,
                                      text=True, cwd=ROOT).stdout) for _ in range(2)]
    assert runs[0] == runs[1]
    assert runs[0].pop("_heavy") == []  # fingerprints and spans never load a model library
    assert runs[0] == {name: load(name).fingerprint() for name in OFFLINE_BACKENDS}
    assert len(set(runs[0].values())) == len(OFFLINE_BACKENDS)


def test_unknown_model_fails_at_once_offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    emb = SentenceTransformerEmbedder(name="nope", model="fedlab-tests/no-such-embedding-model")
    with pytest.raises(FedlabError) as err:
        emb.embed_documents(["text"])
    message = str(err.value)
    assert "\n" not in message and "no-such-embedding-model" in message
    assert "embedder.model=/path/to/local/copy" in message and "HF_HOME" in message


def test_unknown_model_without_offline_switch_is_still_one_line_error(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    emb = SentenceTransformerEmbedder(name="nope", model="fedlab-tests/no-such-embedding-model")
    with pytest.raises(FedlabError) as err:
        emb.fingerprint()
    assert "\n" not in str(err.value) and "embedder.model=" in str(err.value)


def test_bad_paths_and_outputs_are_user_errors(tmp_path):
    with pytest.raises(FedlabError, match="does not exist"):
        SentenceTransformerEmbedder(name="x", model=str(tmp_path / "missing")).fingerprint()
    with pytest.raises(FedlabError, match="not found"):
        OnnxBertEmbedder(name="x", model=str(tmp_path / "missing.onnx")).ensure_loaded()
    with pytest.raises(FedlabError, match="no output"):
        OnnxBertEmbedder(name="x", model="paraphrase_minilm_l3", pooled_output="nope").ensure_loaded()


def test_progress_and_throughput(capsys):
    emb = load("paraphrase_minilm_l3")
    with_bar = emb.embed_documents(SENTENCES * 3, progress=True)
    assert np.array_equal(with_bar, emb.embed_documents(SENTENCES * 3))
    result = measure_throughput(emb, SENTENCES * 4, warmup=2)
    assert result.passages == 20 and result.passages_per_second > 0 and result.mean_tokens > 10
    assert result.fingerprint == emb.fingerprint()

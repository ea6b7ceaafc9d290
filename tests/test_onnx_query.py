"""MiniLM's query side on its ONNX export: the same vectors as the torch model (within 1e-5),
exported once into the cache, and asked for queries without importing torch."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fedlab.cache import ArtifactCache
from fedlab.embedding.onnx_query import KIND, MODEL_FILE, OnnxQueryEmbedder, check_exportable, export_key
from fedlab.embedding.st import MiniLMEmbedder
from fedlab.errors import FedlabError

ROOT = Path(__file__).resolve().parent.parent
TOLERANCE = 1e-5
LONG = ("Over the course of 2022 and 2023, how did the Committee describe the pace of increases in the target "
        "range for the federal funds rate, the reduction of its holdings of Treasury securities and agency "
        "mortgage-backed securities, the tightness of labor markets, the elevated level of inflation, the "
        "effects of Russia's war against Ukraine on commodity prices, the banking-sector developments of "
        "March 2023, the tightening of credit conditions for households and businesses, and the risks "
        "to the outlook that participants saw for economic activity, hiring, and inflation? ") * 3
QUERIES = [
    "What did the FOMC decide in January 2024?",
    "Why did the Committee cut rates by 50 basis points in September 2024?",
    "How did participants describe inflation risks at the June 2022 meeting?",
    "balance sheet runoff",
    "Real GDP rose 2.8% in Q3—“strong” growth; PCE ½ pt. (tight) labor-market conditions…",
    LONG,
]


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> ArtifactCache:
    return ArtifactCache(tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="module")
def torch_model() -> MiniLMEmbedder:
    return MiniLMEmbedder(name="minilm", query_backend="torch")


@pytest.fixture(scope="module")
def onnx_model(torch_model, cache) -> OnnxQueryEmbedder:
    query = MiniLMEmbedder(name="minilm").query_embedder(cache)
    assert isinstance(query, OnnxQueryEmbedder)
    return query


def test_onnx_queries_equal_the_torch_model(torch_model, onnx_model):
    assert onnx_model.count_tokens(LONG) > onnx_model.max_seq_length  # the long one is truncated
    for q in QUERIES:
        expected, got = torch_model.embed_query(q), onnx_model.embed_query(q)
        assert got.shape == expected.shape == (384,) and got.dtype == np.float32
        assert float(np.abs(got - expected).max()) <= TOLERANCE, q
    # the export's own batch path (padded, masked) agrees too
    batch = onnx_model._run(QUERIES)
    rows = batch / np.linalg.norm(batch, axis=1, keepdims=True)
    assert float(np.abs(rows - torch_model.embed_documents(QUERIES)).max()) <= TOLERANCE


def test_exported_once_into_the_cache(onnx_model, cache):
    onnx_model.ensure_loaded()
    key = export_key(onnx_model.source.model_dir())
    assert onnx_model.onnx_path() == cache.path(KIND, key) / MODEL_FILE and onnx_model.onnx_path().is_file()
    again = MiniLMEmbedder(name="minilm").query_embedder(cache)
    again.embed_query("What did the FOMC decide in March 2020?")
    assert cache.stats[f"{KIND}.hit"] >= 1 and cache.stats[f"{KIND}.miss"] == 1


def test_query_cache_keys_name_the_backend(torch_model, onnx_model):
    """Vectors cached from the torch model are not served as the export's, and vice versa."""
    assert onnx_model.fingerprint() != torch_model.fingerprint()
    assert onnx_model.fingerprint().startswith("minilm-")
    assert torch_model.query_embedder(None) is torch_model


def test_unknown_query_backend_and_unexportable_folder_are_one_line(tmp_path):
    with pytest.raises(FedlabError, match="query_backend"):
        MiniLMEmbedder(name="minilm", query_backend="tensorflow")
    with pytest.raises(FedlabError, match="query_backend=torch"):
        check_exportable(tmp_path)


def test_asking_a_query_imports_neither_torch_nor_sentence_transformers(onnx_model, cache):
    onnx_model.ensure_loaded()  # the export exists in this cache now
    code = ("import sys\n"
            "from fedlab.cache import ArtifactCache\n"
            "from fedlab.embedding.st import MiniLMEmbedder\n"
            f"q = MiniLMEmbedder(name='minilm').query_embedder(ArtifactCache({str(cache.root)!r}))\n"
            "assert q.embed_query('What did the FOMC decide in May 2022?').shape == (384,)\n"
            "print(sorted(m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"

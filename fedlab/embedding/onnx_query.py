"""A sentence-transformers model's query side, served from its own ONNX export.

A query needs a tokenizer and one small forward pass; importing torch and sentence-transformers
for it costs seconds in a fresh process. The model is exported once (torch → ONNX, the
TorchScript exporter) into the content-addressed cache — keyed on the model files and the
export settings — and queries then run on onnxruntime + ``tokenizers`` with the model's own
mean pooling and normalisation (fedlab.embedding.onnx.OnnxBertEmbedder). The export needs torch,
so the first query after a fresh checkout pays for it once. Passages stay on torch: they are
embedded once and cached.
"""
from __future__ import annotations

import importlib.metadata
import json
import logging
import shutil
import warnings
from pathlib import Path

import numpy as np

from fedlab.cache import ArtifactCache, content_key
from fedlab.embedding.base import files_signature
from fedlab.embedding.onnx import OnnxBertEmbedder
from fedlab.errors import FedlabError

log = logging.getLogger(__name__)
EXPORT_VERSION = 1  # bump when the export below changes what it writes
OPSET = 17
KIND = "onnx_models"
MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
POOLING = "mean"  # the only pooling OnnxBertEmbedder reproduces (besides a pooled output)


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "missing"


def export_settings() -> dict:
    """Everything besides the model files that decides the exported graph."""
    return {"v": EXPORT_VERSION, "opset": OPSET, "inputs": list(INPUTS), "exporter": "torchscript",
            "torch": _version("torch"), "transformers": _version("transformers")}


def export_key(model_dir: Path) -> str:
    return content_key("onnx_export", files_signature(model_dir), export_settings())


def check_exportable(model_dir: Path) -> None:
    """A folder whose modules are Transformer → mean Pooling (→ Normalize): what the ONNX query
    side reproduces. Anything else is refused in one line rather than embedded differently."""
    modules = model_dir / "modules.json"
    pooling = model_dir / "1_Pooling" / "config.json"
    if not modules.is_file() or not pooling.is_file():
        raise FedlabError(f"{model_dir} is not a sentence-transformers folder with a pooling module: "
                          "set embedder.query_backend=torch")
    kinds = [m.get("type", "").rsplit(".", 1)[-1] for m in json.loads(modules.read_text())]
    config = json.loads(pooling.read_text())
    mean = config.get("pooling_mode_mean_tokens") or config.get("pooling_mode") == POOLING
    if kinds[:2] != ["Transformer", "Pooling"] or set(kinds[2:]) - {"Normalize"} or not mean \
            or not (model_dir / TOKENIZER_FILE).is_file():
        raise FedlabError(f"{model_dir} is not Transformer → mean pooling (→ Normalize) with a tokenizer.json "
                          f"(modules: {', '.join(kinds)}): set embedder.query_backend=torch")


def export_model(model_dir: Path, out_dir: Path) -> None:
    """Export the model's transformer (token embeddings out) to ``out_dir``/model.onnx, with its
    tokenizer.json. Heavy: imports torch and sentence-transformers."""
    import torch
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(str(model_dir), device="cpu")
    bert = st[0].auto_model.eval()

    class TokenEmbeddings(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.model(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids)[0]

    # Two texts of different lengths, so the trace keeps the attention mask (an all-ones mask
    # may be dropped by the attention code, and a padded batch would then be wrong).
    enc = st.tokenizer(["the Committee decided", "a longer second text for the padded batch"],
                       padding=True, return_tensors="pt")
    args = tuple(enc.get(name, torch.zeros_like(enc["input_ids"])) for name in INPUTS)
    axes = {name: {0: "batch", 1: "tokens"} for name in (*INPUTS, "token_embeddings")}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tracer's notes on shapes it fixes (checked by the tests)
        torch.onnx.export(TokenEmbeddings(bert), args, str(out_dir / MODEL_FILE), input_names=list(INPUTS),
                          output_names=["token_embeddings"], dynamic_axes=axes, opset_version=OPSET,
                          dynamo=False)
    shutil.copyfile(model_dir / TOKENIZER_FILE, out_dir / TOKENIZER_FILE)


def exported_model(model_dir: Path, cache: ArtifactCache) -> Path:
    """The artifact directory holding model.onnx and tokenizer.json; exported on a miss (once)."""
    check_exportable(model_dir)

    def build(tmp: Path) -> None:
        from fedlab.progress import note

        note(log, f"exporting {model_dir.name} to ONNX for queries (once) — needs torch")
        try:
            export_model(model_dir, tmp)
        except ImportError as exc:
            raise FedlabError(f"exporting the query model to ONNX needs {exc.name or 'onnx'}: run `make install`, "
                              "or set embedder.query_backend=torch") from None

    return cache.get_or_build(KIND, export_key(model_dir), build)


class OnnxQueryEmbedder(OnnxBertEmbedder):
    """The queries of ``source`` (a SentenceTransformerEmbedder) embedded by its ONNX export.

    Its fingerprint names the source model and the export, so query vectors cached from the
    torch model are not served as this one's (they agree within 1e-5, but a cache says where
    a vector came from)."""

    def __init__(self, source, cache: ArtifactCache):
        super().__init__(name=source.name, model="", max_seq_length=source.max_seq_length,
                         query_prefix=source.query_prefix, passage_prefix=source.passage_prefix,
                         batch_size=source.batch_size)
        self.source = source
        self.cache = cache
        self._dir: Path | None = None

    def artifact(self) -> Path:
        if self._dir is None:
            self._dir = exported_model(self.source.model_dir(), self.cache)
        return self._dir

    def onnx_path(self) -> Path:
        return self.artifact() / MODEL_FILE

    def tokenizer_path(self) -> Path:
        return self.artifact() / TOKENIZER_FILE

    def _signature(self) -> dict:
        return {"source": self.source.fingerprint(), "export": export_key(self.source.model_dir()),
                "pooling": POOLING, "max_seq_length": self.max_seq_length}

    def embed_documents(self, texts: list[str], progress: bool | None = None) -> np.ndarray:
        """Passages are the source model's (torch) business."""
        return self.source.embed_documents(texts, progress=progress)

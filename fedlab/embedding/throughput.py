"""Embedding throughput: passages per second of an embedder on given texts."""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass

from fedlab.embedding.base import Embedder


@dataclass(frozen=True)
class Throughput:
    embedder: str
    fingerprint: str
    passages: int
    mean_tokens: float  # by the embedder's own tokenizer
    load_seconds: float  # model load + warm-up batch
    seconds: float  # embedding the passages, after warm-up
    passages_per_second: float

    def to_json(self) -> dict:
        return asdict(self)


def measure_throughput(embedder: Embedder, texts: list[str], warmup: int = 4) -> Throughput:
    """Load the model and warm it up on ``warmup`` texts (not timed in ``seconds``), then
    time ``embed_documents`` over all ``texts`` (so its batching is what is measured)."""
    if not texts:
        raise ValueError("measure_throughput needs at least one text")
    t0 = time.perf_counter()
    embedder.ensure_loaded()
    embedder.embed_documents(texts[:max(1, warmup)], progress=False)
    load = time.perf_counter() - t0
    t1 = time.perf_counter()
    embedder.embed_documents(texts, progress=False)
    elapsed = time.perf_counter() - t1
    mean_tokens = sum(embedder.count_tokens(t) for t in texts) / len(texts)
    return Throughput(embedder.name, embedder.fingerprint(), len(texts), round(mean_tokens, 1),
                      round(load, 3), round(elapsed, 3), round(len(texts) / elapsed, 2))

"""Embedder throughput on real chunks, and what the embedding cache saves (a miss vs a hit)."""
from __future__ import annotations

import tempfile
import time
from dataclasses import asdict, dataclass
from typing import Callable, Sequence

import numpy as np

from fedlab.cache import ArtifactCache
from fedlab.chunking.chunk import Chunk
from fedlab.embedding.throughput import measure_throughput
from fedlab.pipeline import BuildInfo, embed_chunks


@dataclass(frozen=True)
class ThroughputRow:
    embedder: str
    fingerprint: str
    passages: int
    mean_tokens: float
    load_s: float  # model load + warm-up batch (first round: later rounds find the model loaded)
    seconds: float
    passages_per_s: float
    ratio_vs_reference: float | None  # passages/s divided by the reference embedder's

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class CacheTiming:
    """Getting chunk embeddings through ``embed_chunks``: cold cache (embeds) vs warm (loads)."""

    embedder: str
    chunks: int
    miss_s: float
    hit_s: float
    miss_over_hit: float
    stats: dict[str, int]  # the cache's hit/miss counters after both calls
    outcomes: list[str]  # BuildInfo.cache["embeddings"] of the two calls: ["miss", "hit"]
    identical: bool  # the hit returned exactly the vectors the miss computed

    def to_json(self) -> dict:
        return asdict(self)


def sample_chunks(chunks: Sequence[Chunk], n: int | None, seed: int) -> list[Chunk]:
    """``n`` chunks drawn without replacement (seeded), in corpus order; all of them for None."""
    if n is None or n >= len(chunks):
        return list(chunks)
    picked = np.sort(np.random.default_rng(seed).choice(len(chunks), size=n, replace=False))
    return [chunks[i] for i in picked]


def measure_embedders(embedders: dict[str, object], texts: Sequence[str], passages: dict[str, int],
                      reference: str | None = "minilm", rounds: int = 1,
                      step: Callable[[str], None] | None = None) -> list[ThroughputRow]:
    """Passages/s of each embedder on the first ``passages[name]`` texts (slow models get fewer).

    With ``rounds`` > 1 the embedders are measured in turn, round after round, and each keeps
    its fastest round: on a shared machine that is the round least slowed by other jobs, and
    interleaving exposes every model to the same load pattern.
    """
    best: dict[str, object] = {}
    load: dict[str, float] = {}
    for r in range(max(1, rounds)):
        for name, embedder in embedders.items():
            if step:
                step(f"throughput: {name}" + (f" (round {r + 1})" if rounds > 1 else ""))
            t = measure_throughput(embedder, list(texts[: passages.get(name, len(texts))]))
            load.setdefault(name, t.load_seconds)
            if name not in best or t.passages_per_second > best[name].passages_per_second:
                best[name] = t
    ref = next((t.passages_per_second for t in best.values() if t.embedder == reference), None)
    return [ThroughputRow(t.embedder, t.fingerprint, t.passages, t.mean_tokens, load[name], t.seconds,
                          t.passages_per_second, round(t.passages_per_second / ref, 3) if ref else None)
            for name, t in best.items()]


def time_cache(chunks: Sequence[Chunk], embedder) -> CacheTiming:
    """Time ``embed_chunks`` twice on a fresh temporary cache: the first call misses (embeds),
    the second hits (reads and verifies the stored vectors). The model is loaded beforehand so
    the miss is embedding time, not model start-up."""
    embedder.ensure_loaded()
    chunks = list(chunks)
    with tempfile.TemporaryDirectory(prefix="fedlab-bench-cache-") as tmp:
        cache = ArtifactCache(tmp)
        cold, warm = BuildInfo(), BuildInfo()
        t0 = time.perf_counter()
        computed = embed_chunks(chunks, embedder, cache, cold, progress=False)
        miss = time.perf_counter() - t0
        t0 = time.perf_counter()
        loaded = embed_chunks(chunks, embedder, cache, warm, progress=False)
        hit = time.perf_counter() - t0
        stats = {k: int(v) for k, v in sorted(cache.stats.items())}
    return CacheTiming(embedder.name, len(chunks), round(miss, 4), round(hit, 5), round(miss / hit, 1), stats,
                       [cold.cache["embeddings"], warm.cache["embeddings"]], bool(np.array_equal(computed, loaded)))

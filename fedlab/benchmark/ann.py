"""ANN index benchmark: recall@k against exact search, single-query latency, build time, size.

Every index is measured through fedlab's own ``VectorIndex.search`` (one query per call), so
latencies include the wrapper's validation and result conversion, as retrieval pays them.
Absolute times move with machine load. ``latency_ratio_vs_exact`` is robust to that: exact search
is timed on the same query right after each index's search, so both see the same load.
"""
from __future__ import annotations

import logging
import math
import re
import tempfile
import time
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
from hydra.utils import instantiate

from fedlab.errors import FedlabError
from fedlab.index.base import VectorIndex

log = logging.getLogger(__name__)
ALL_PROBES = "all"  # nprobe: all = every IVF list (IVF degrades to brute force)
_SQRT = re.compile(r"^\s*(?:(\d+(?:\.\d+)?)\s*\*\s*)?sqrt\(n\)\s*$")
TIE_EPS = 1e-5  # similarities this close to the k-th exact one count as ties


@dataclass(frozen=True)
class IndexSpec:
    """One benchmarked configuration: ``kind`` names a base index config, ``params`` override it.

    A parameter may be written ``"sqrt(n)"`` or ``"4*sqrt(n)"`` (n = vectors indexed), and
    ``nprobe: all`` probes every IVF list.
    """

    name: str
    kind: str
    params: dict = field(default_factory=dict)


@dataclass
class Dataset:
    label: str  # "real", "random": suffix of the per-dataset keys
    vectors: np.ndarray  # (n, d), L2-normalised
    queries: np.ndarray  # (q, d), L2-normalised
    meta: list[dict]  # one {meeting_date, doc_type} per vector, as indexes require


@dataclass
class Measurement:
    recall: float
    miss_gap: float  # median similarity shortfall of returned rows outside the exact top k (0: none)
    latency_ms: np.ndarray  # per query: median over the timed passes
    build_s: float
    size_kb: float
    params: dict

    @property
    def avg_ms(self) -> float:
        return float(self.latency_ms.mean())

    @property
    def p99_ms(self) -> float:
        return float(np.percentile(self.latency_ms, 99))


@dataclass
class AnnRow:
    index: str
    kind: str
    by_data: dict[str, Measurement]  # dataset label -> measurement (first label is primary)
    ratio: dict[str, float] = field(default_factory=dict)  # label -> avg latency / exact's

    @property
    def params(self) -> dict:
        return next(iter(self.by_data.values())).params

    def to_json(self, k: int) -> dict:
        """The BENCH_OUT contract keys (primary dataset for latency/build/size), then per-dataset extras."""
        labels = list(self.by_data)
        first = self.by_data[labels[0]]
        row: dict[str, Any] = {"index": self.index, "kind": self.kind, "params": self.params}
        for label in labels:
            row[f"recall@{k}_{label}"] = round(self.by_data[label].recall, 4)
            row[f"miss_gap_{label}"] = round(self.by_data[label].miss_gap, 5)
        row.update({
            "latency_ms_avg": round(first.avg_ms, 4),
            "latency_ms_p99": round(first.p99_ms, 4),
            "latency_ratio_vs_exact": round(self.ratio[labels[0]], 3),
            "build_s": round(first.build_s, 4),
            "size_kb": round(first.size_kb, 1),
        })
        for label in labels[1:]:
            m = self.by_data[label]
            row.update({f"latency_ms_avg_{label}": round(m.avg_ms, 4), f"latency_ms_p99_{label}": round(m.p99_ms, 4),
                        f"latency_ratio_vs_exact_{label}": round(self.ratio[label], 3),
                        f"build_s_{label}": round(m.build_s, 4), f"size_kb_{label}": round(m.size_kb, 1)})
        return row


def parse_specs(entries: Sequence[dict]) -> list[IndexSpec]:
    specs = [IndexSpec(str(e["name"]), str(e["kind"]), dict(e.get("params") or {})) for e in entries]
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise FedlabError(f"duplicate index names in ann.indexes: {sorted({n for n in names if names.count(n) > 1})}")
    if not specs or specs[0].kind != "exact":
        raise FedlabError("ann.indexes must start with an exact index: it is the recall and latency reference")
    return specs


def resolve_param(value: Any, n: int) -> Any:
    """``"sqrt(n)"`` / ``"4*sqrt(n)"`` -> a rounded int; anything else unchanged."""
    if isinstance(value, str):
        m = _SQRT.match(value)
        if m:
            return max(1, round(float(m[1] or 1) * math.sqrt(n)))
    return value


def random_unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    x = rng.standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def kth_similarity(vectors: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    """The k-th best exact similarity per query (the recall threshold)."""
    scores = queries @ vectors.T
    k = min(k, vectors.shape[0])
    return -np.partition(-scores, k - 1, axis=1)[:, k - 1]


def recall_at_k(found: list[list[int]], vectors: np.ndarray, queries: np.ndarray, kth: np.ndarray, k: int
                ) -> tuple[float, float]:
    """Mean overlap of each top-k with the exact top-k, and the median similarity gap of the misses.

    Tie-aware: a returned row whose true similarity equals the k-th exact one is as good as the
    row exact search chose (duplicate chunks have identical vectors, and either may rank k-th).
    The gap (k-th exact similarity minus a missed row's) tells a near-tie from a real miss.
    """
    k = min(k, vectors.shape[0])
    total = 0.0
    gaps: list[float] = []
    for rows, q, threshold in zip(found, queries, kth):
        rows = list(dict.fromkeys(rows))[:k]
        sims = vectors[rows] @ q if rows else np.empty(0)
        good = sims >= threshold - TIE_EPS
        total += min(k, int(good.sum())) / k
        gaps.extend((threshold - sims[~good]).tolist())
    return total / len(found), float(np.median(gaps)) if gaps else 0.0


def time_queries(index: VectorIndex, queries: np.ndarray, k: int, warmup: int, repeats: int,
                 reference: VectorIndex | None = None) -> tuple[list[list[int]], np.ndarray, np.ndarray | None]:
    """Rows found (first pass) and per-query latency in ms (median over ``repeats`` passes);
    with a ``reference`` index, also its latency on each query, timed right after the index's."""
    for q in queries[:warmup]:
        index.search(q, k)
        if reference is not None:
            reference.search(q, k)
    times = np.empty((max(1, repeats), len(queries)))
    ref_times = np.empty_like(times)
    found: list[list[int]] = []
    for r in range(times.shape[0]):
        for i, q in enumerate(queries):
            t0 = time.perf_counter_ns()
            hits = index.search(q, k)
            times[r, i] = time.perf_counter_ns() - t0
            if reference is not None:
                t0 = time.perf_counter_ns()
                reference.search(q, k)
                ref_times[r, i] = time.perf_counter_ns() - t0
            if r == 0:
                found.append([row for row, _ in hits])
    ref = np.median(ref_times, axis=0) / 1e6 if reference is not None else None
    return found, np.median(times, axis=0) / 1e6, ref


@contextmanager
def limit_threads(threads: int | None):
    """Limit FAISS's OpenMP and numpy's BLAS pools. One query gains nothing from threads, and on a
    busy machine their synchronisation can make a millisecond search 100x slower."""
    if not threads:
        yield
        return
    import faiss

    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # a scikit-learn dependency; without it BLAS keeps its default pool
        log.warning("threadpoolctl is not installed: numpy's BLAS threads are not limited")
        blas = nullcontext()
    else:
        blas = threadpool_limits(limits=int(threads), user_api="blas")
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(int(threads))
    try:
        with blas:
            yield
    finally:
        faiss.omp_set_num_threads(before)


class _Builder:
    """Builds (and saves) each distinct index structure once per dataset: rows that differ only
    in search-time parameters (efSearch, nprobe, ef) share it and report its build time and size."""

    def __init__(self, bases: dict[str, dict], save_root: Path):
        self.bases = bases
        self.save_root = save_root
        self._built: dict[tuple, tuple[VectorIndex, float, float]] = {}

    def get(self, spec: IndexSpec, data: Dataset) -> tuple[VectorIndex, float, float]:
        if spec.kind not in self.bases:
            raise FedlabError(f"index {spec.name!r}: no base config for kind {spec.kind!r} "
                              f"(have {', '.join(sorted(self.bases))})")
        n = data.vectors.shape[0]
        params = {k: resolve_param(v, n) for k, v in spec.params.items()}
        probe_all = params.get("nprobe") == ALL_PROBES
        if probe_all:
            params.pop("nprobe")
        if ALL_PROBES in params.values():
            raise FedlabError(f"index {spec.name!r}: only nprobe may be 'all'")
        index: VectorIndex = instantiate({**self.bases[spec.kind], **params})
        search = type(index).SEARCH_PARAMS
        key = (data.label, spec.kind, tuple(sorted((k, str(v)) for k, v in index.params().items() if k not in search)))
        if key in self._built:
            built, build_s, size_kb = self._built[key]
            for name in search:  # this spec's search-time values, not the previous spec's
                setattr(built, name, getattr(index, name))
            index = built
        else:
            t0 = time.perf_counter()
            index.build(data.vectors, data.meta)
            build_s = time.perf_counter() - t0
            index.save(self.save_root / f"{data.label}-{len(self._built)}")
            size_kb = index.size_bytes() / 1024
            self._built[key] = (index, build_s, size_kb)
        if probe_all:
            index.nprobe = index.nlist_effective
        return index, build_s, size_kb


def _params(index: VectorIndex) -> dict:
    params = index.params()
    if hasattr(index, "nlist_effective") and index.nlist_effective != params.get("nlist"):
        params["nlist_effective"] = index.nlist_effective  # lowered for a small corpus
    return params


def run_ann(specs: Sequence[IndexSpec], datasets: Sequence[Dataset], bases: dict[str, dict], k: int = 5,
            warmup: int = 20, repeats: int = 3, threads: int | None = 1,
            step: Callable[[str], None] | None = None) -> list[AnnRow]:
    """Measure every spec on every dataset; ``step(description)`` is called before each measurement.

    The first spec (exact search) is the reference: each other index's latency ratio divides its
    average by exact search's average over the same queries, timed interleaved with it.
    """
    if specs[0].kind != "exact":
        raise FedlabError("the first index spec must be exact search (the reference)")
    rows = [AnnRow(s.name, s.kind, {}) for s in specs]
    with tempfile.TemporaryDirectory(prefix="fedlab-bench-", ignore_cleanup_errors=True) as tmp, \
            limit_threads(threads):
        for data in datasets:
            builder = _Builder(bases, Path(tmp))
            kth = kth_similarity(data.vectors, data.queries, k)
            exact = None
            for spec, row in zip(specs, rows):
                if step:
                    step(f"{data.label}: {spec.name}")
                index, build_s, size_kb = builder.get(spec, data)
                found, latency, ref = time_queries(index, data.queries, k, warmup, repeats, reference=exact)
                recall, gap = recall_at_k(found, data.vectors, data.queries, kth, k)
                row.by_data[data.label] = Measurement(recall, gap, latency, build_s, size_kb, _params(index))
                row.ratio[data.label] = 1.0 if ref is None else float(latency.mean() / ref.mean())
                if exact is None:
                    exact = index
    return rows

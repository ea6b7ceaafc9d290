"""Per-stage latency summaries, as flat metric names MLflow accepts.

Input: one timings dict per question, in milliseconds, keyed by stage; a ``_ms`` suffix is
dropped, so ``RetrievalResult.timings`` (``embed_ms``, ``search_ms``, ``rerank_ms``,
``total_ms``) can be passed as is. Output names:

    latency_p50_ms_<stage>, latency_p95_ms_<stage>

e.g. ``latency_p50_ms_embed``, ``latency_p95_ms_search``, ``latency_p50_ms_rerank``,
``latency_p95_ms_total``. A stage is summarised over the questions that timed it (a config
without a reranker has no rerank stage, so no rerank metrics). Percentiles are numpy's
linear interpolation.
"""
from __future__ import annotations

import re
import time
from contextlib import contextmanager
from typing import Iterable, Iterator, Mapping

import numpy as np

STAGES = ("embed", "search", "rerank", "total")
PERCENTILES = (50, 95)
_STAGE_RE = re.compile(r"^[A-Za-z0-9_]+$")


def stage_name(key: str) -> str:
    stage = key[:-3] if key.endswith("_ms") else key
    if not _STAGE_RE.match(stage):
        raise ValueError(f"latency stage name {key!r} must be letters, digits and underscores")
    return stage


def metric_name(stage: str, percentile: int) -> str:
    return f"latency_p{percentile}_ms_{stage}"


def latency_summary(timings: Iterable[Mapping[str, float]]) -> dict[str, float]:
    """{``latency_p50_ms_<stage>`` / ``latency_p95_ms_<stage>``: ms} over per-question timings."""
    samples: dict[str, list[float]] = {}
    for row in timings:
        for key, value in row.items():
            if value is None:
                continue
            samples.setdefault(stage_name(key), []).append(float(value))
    ordered = [s for s in STAGES if s in samples] + sorted(s for s in samples if s not in STAGES)
    out: dict[str, float] = {}
    for p in PERCENTILES:
        for stage in ordered:
            out[metric_name(stage, p)] = float(np.percentile(samples[stage], p))
    return out


class StageTimer:
    """Collects one question's stage timings in ms: ``with timer.stage("search"): ...``."""

    def __init__(self) -> None:
        self.timings: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        stage_name(name)
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = self.timings.get(name, 0.0) + (time.perf_counter() - t0) * 1000.0

"""The report's measures of a group of questions, each with a 95% bootstrap interval.

Contract and design notes: docs/datasets-and-protocol.md#design-notes-fedlabevaluationreportintervalspy.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

N_BINS = 10
TARGET_PRECISION = 0.9
COVERAGE = f"coverage@precision{TARGET_PRECISION:g}"
ANSWER_MEASURES = ("answer_accuracy", "abstention_accuracy", "false_abstention_rate", "citation_validity",
                   "ece", "auroc", "brier", COVERAGE)
RETRIEVAL_MEASURES = ("recall@10", "meeting_recall@5", "mrr@10")
LATENCY_MEASURES = ("latency_p50_ms", "latency_p95_ms")
MEASURES = (*ANSWER_MEASURES, *RETRIEVAL_MEASURES, *LATENCY_MEASURES)
LOWER_IS_BETTER = frozenset({"false_abstention_rate", "ece", "brier", "latency_p50_ms", "latency_p95_ms"})
FIELDS = ("answerable", "abstained", "answer_correct", "correct", "confidence", "n_citations", "valid_citations",
          *RETRIEVAL_MEASURES, "latency_ms")


@dataclass
class Outcomes:
    """Per-question values, aligned: ``ids[i]`` and ``values[field][i]`` (floats, NaN = not measured)."""

    ids: list[str]
    values: dict[str, np.ndarray]
    labels: dict[str, list[str]] = field(default_factory=dict)  # group-by fields: category, style, …

    @classmethod
    def from_rows(cls, rows: list[dict], label_fields: tuple[str, ...] = ()) -> "Outcomes":
        def num(row: dict, name: str) -> float:
            value = row.get(name)
            if isinstance(value, bool):
                return float(value)
            return float(value) if isinstance(value, (int, float)) else np.nan

        values = {name: np.array([num(r, name) for r in rows], dtype=float) for name in FIELDS}
        labels = {name: ["" if r.get(name) is None else str(r.get(name)) for r in rows] for name in label_fields}
        return cls([str(r["id"]) for r in rows], values, labels)

    def __len__(self) -> int:
        return len(self.ids)

    def subset(self, mask: np.ndarray) -> "Outcomes":
        keep = np.flatnonzero(mask)
        return Outcomes([self.ids[i] for i in keep], {k: v[keep] for k, v in self.values.items()},
                        {k: [v[i] for i in keep] for k, v in self.labels.items()})

    @staticmethod
    def concat(parts: list["Outcomes"]) -> "Outcomes":
        names = set().union(*(p.labels for p in parts)) if parts else set()
        return Outcomes([i for p in parts for i in p.ids],
                        {k: np.concatenate([p.values[k] for p in parts]) for k in FIELDS},
                        {k: [x for p in parts for x in p.labels.get(k, [""] * len(p))] for k in sorted(names)})

    @property
    def has_agent(self) -> bool:
        return bool(np.isfinite(self.values["correct"]).any())


def _masked_mean(values: np.ndarray, mask: np.ndarray, idx: np.ndarray) -> np.ndarray:
    v, m = np.nan_to_num(values)[idx], mask[idx]
    n = m.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, (v * m).sum(axis=1) / np.maximum(n, 1), np.nan)


def _counts(idx: np.ndarray, n: int) -> np.ndarray:
    """How often each question is drawn in each resample: (B, n)."""
    b = idx.shape[0]
    flat = (idx + n * np.arange(b)[:, None]).ravel()
    return np.bincount(flat, minlength=b * n).reshape(b, n).astype(float)


def _ece(conf: np.ndarray, correct: np.ndarray, idx: np.ndarray) -> np.ndarray:
    p = np.clip(conf, 0.0, 1.0)
    bins = np.minimum((p * N_BINS).astype(int), N_BINS - 1)
    b, n = idx.shape
    slot = (bins[idx] + N_BINS * np.arange(b)[:, None]).ravel()
    conf_sum = np.bincount(slot, weights=p[idx].ravel(), minlength=b * N_BINS).reshape(b, N_BINS)
    right_sum = np.bincount(slot, weights=correct[idx].ravel(), minlength=b * N_BINS).reshape(b, N_BINS)
    return np.abs(conf_sum - right_sum).sum(axis=1) / n


def _tie_groups(sorted_values: np.ndarray) -> np.ndarray:
    """Start index of each run of equal values in a sorted array."""
    return np.flatnonzero(np.r_[True, sorted_values[1:] != sorted_values[:-1]])


def _auroc(conf: np.ndarray, correct: np.ndarray, counts: np.ndarray) -> np.ndarray:
    order = np.argsort(conf, kind="stable")
    starts = _tie_groups(conf[order])
    y = correct[order]
    c = counts[:, order]
    pos = np.add.reduceat(c * y, starts, axis=1)
    neg = np.add.reduceat(c * (1 - y), starts, axis=1)
    below = np.cumsum(neg, axis=1) - neg  # negatives with a strictly lower confidence
    n_pos, n_neg = pos.sum(axis=1), neg.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        auc = (pos * (below + 0.5 * neg)).sum(axis=1) / (n_pos * n_neg)
    return np.where((n_pos > 0) & (n_neg > 0), auc, np.nan)


def _coverage(conf: np.ndarray, correct: np.ndarray, counts: np.ndarray) -> np.ndarray:
    order = np.argsort(-conf, kind="stable")
    starts = _tie_groups(conf[order])
    c = counts[:, order]
    kept = np.cumsum(np.add.reduceat(c, starts, axis=1), axis=1)
    right = np.cumsum(np.add.reduceat(c * correct[order], starts, axis=1), axis=1)
    ok = right >= TARGET_PRECISION * kept
    total = c.sum(axis=1)
    return np.where(ok, kept, 0.0).max(axis=1) / total


def measure(outcomes: Outcomes, idx: np.ndarray) -> dict[str, np.ndarray]:
    """Every measure of the module docstring on each row of ``idx`` (B resamples of question indices)."""
    v = outcomes.values
    n = len(outcomes)
    answerable = v["answerable"] == 1.0
    out: dict[str, np.ndarray] = {"n": np.full(idx.shape[0], float(n))}
    if outcomes.has_agent:
        judged = np.isfinite(v["correct"])
        out["answer_accuracy"] = _masked_mean(v["answer_correct"], answerable & judged, idx)
        out["false_abstention_rate"] = _masked_mean(v["abstained"], answerable & judged, idx)
        out["abstention_accuracy"] = _masked_mean(v["abstained"], ~answerable & judged, idx)
        cited, valid = np.nan_to_num(v["n_citations"])[idx].sum(axis=1), np.nan_to_num(v["valid_citations"])[idx].sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out["citation_validity"] = np.where(cited > 0, valid / np.maximum(cited, 1), 1.0)
        conf, correct = np.nan_to_num(v["confidence"]), np.nan_to_num(v["correct"])
        out["brier"] = ((conf - correct) ** 2)[idx].mean(axis=1)
        out["ece"] = _ece(conf, correct, idx)
        counts = _counts(idx, n)
        out["auroc"] = _auroc(conf, correct, counts)
        out[COVERAGE] = _coverage(conf, correct, counts)
    for name in RETRIEVAL_MEASURES:
        values = v[name]
        out[name] = _masked_mean(values, answerable & np.isfinite(values), idx)
    latency = v["latency_ms"]
    if np.isfinite(latency).any():
        if np.isfinite(latency).all():  # the usual case: np.percentile is vectorised, nanpercentile is not
            out["latency_p50_ms"], out["latency_p95_ms"] = np.percentile(latency[idx], [50, 95], axis=1)
        else:
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                out["latency_p50_ms"], out["latency_p95_ms"] = np.nanpercentile(latency[idx], [50, 95], axis=1)
    return out


@dataclass(frozen=True)
class Estimate:
    value: float  # on the questions as they are (NaN when the group cannot have it)
    lo: float  # 2.5th percentile of the resamples
    hi: float  # 97.5th percentile

    def to_json(self) -> dict:
        def clean(x: float) -> float | None:
            return None if not np.isfinite(x) else round(float(x), 6)

        return {"value": clean(self.value), "lo": clean(self.lo), "hi": clean(self.hi)}


@dataclass
class GroupEstimate:
    """A group's measures with intervals, and its replicates (kept for differences)."""

    n: int
    estimates: dict[str, Estimate]
    replicates: dict[str, np.ndarray] = field(repr=False, default_factory=dict)

    def to_json(self) -> dict:
        return {"n": self.n, **{k: e.to_json() for k, e in self.estimates.items()}}


def _interval(reps: np.ndarray) -> tuple[float, float]:
    finite = reps[np.isfinite(reps)]
    if finite.size == 0:
        return np.nan, np.nan
    lo, hi = np.percentile(finite, [2.5, 97.5])
    return float(lo), float(hi)


def estimate(outcomes: Outcomes, n_boot: int = 1000, seed: int = 0) -> GroupEstimate:
    """The group's measures on its questions and their 95% bootstrap intervals."""
    n = len(outcomes)
    if n == 0:
        return GroupEstimate(0, {})
    point = measure(outcomes, np.arange(n)[None, :])
    rng = np.random.default_rng(seed)
    reps = measure(outcomes, rng.integers(0, n, size=(n_boot, n)))
    estimates = {}
    for name in (m for m in MEASURES if m in point):
        lo, hi = _interval(reps[name])
        estimates[name] = Estimate(float(point[name][0]), lo, hi)
    return GroupEstimate(n, estimates, {k: v for k, v in reps.items() if k != "n"})


def difference(a: GroupEstimate, b: GroupEstimate) -> dict[str, Estimate]:
    """a minus b for every measure both have, with the interval of the difference of their
    (independent) resamples."""
    out = {}
    for name in MEASURES:
        if name in a.estimates and name in b.estimates and name in a.replicates and name in b.replicates:
            k = min(len(a.replicates[name]), len(b.replicates[name]))
            lo, hi = _interval(a.replicates[name][:k] - b.replicates[name][:k])
            out[name] = Estimate(a.estimates[name].value - b.estimates[name].value, lo, hi)
    return out

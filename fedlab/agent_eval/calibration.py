"""Confidence calibration: fit a map raw score -> P(correct), store it as plain JSON, measure it.

Two methods (``method`` in the JSON):

- ``isotonic``: a non-decreasing step-linear map fitted by sklearn's IsotonicRegression;
  stored as its breakpoints ``x`` / ``y`` and applied with ``numpy.interp`` (values outside
  the fitted range are clipped to the end values, as sklearn does with out_of_bounds="clip").
- ``platt``: ``p = 1 / (1 + exp(-(a * raw + b)))``, a one-feature logistic regression
  (unregularised) on the raw score.

Measures (``ece``, ``brier``, ``reliability_bins``) are written out in numpy: ECE uses 10
equal-width bins on [0, 1] (the last bin includes 1.0) and weighs each bin by its share of
the samples: ECE = sum_b n_b / N * |mean confidence_b - accuracy_b|.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from fedlab.errors import FedlabError

METHODS = ("isotonic", "platt")
N_BINS = 10


@dataclass
class Calibrator:
    method: str
    x: list[float] = field(default_factory=list)  # isotonic breakpoints (raw scores)
    y: list[float] = field(default_factory=list)  # isotonic values at the breakpoints
    a: float = 0.0  # platt slope
    b: float = 0.0  # platt intercept
    meta: dict = field(default_factory=dict)  # provenance: split, n, dataset hash, config

    def predict(self, raw: float) -> float:
        return float(self.predict_many([raw])[0])

    def predict_many(self, raw: Sequence[float]) -> np.ndarray:
        r = np.asarray(raw, dtype=float)
        if self.method == "isotonic":
            return np.clip(np.interp(r, self.x, self.y), 0.0, 1.0)
        return 1.0 / (1.0 + np.exp(-(self.a * r + self.b)))

    def to_json(self) -> dict:
        params = {"x": self.x, "y": self.y} if self.method == "isotonic" else {"a": self.a, "b": self.b}
        return {"method": self.method, **params, "meta": self.meta}

    @classmethod
    def from_json(cls, data: dict) -> Calibrator:
        method = data.get("method")
        if method == "isotonic":
            x, y = [float(v) for v in data["x"]], [float(v) for v in data["y"]]
            if not x or len(x) != len(y) or any(b < a for a, b in zip(x, x[1:])):
                raise ValueError("isotonic calibrator needs equal-length, non-empty x (sorted) and y")
            return cls("isotonic", x=x, y=y, meta=dict(data.get("meta") or {}))
        if method == "platt":
            return cls("platt", a=float(data["a"]), b=float(data["b"]), meta=dict(data.get("meta") or {}))
        raise ValueError(f"unknown calibration method {method!r}: use one of {', '.join(METHODS)}")

    def save(self, path: str | Path) -> None:
        from fedlab.io import write_text

        write_text(path, json.dumps(self.to_json(), indent=2) + "\n")


def load_calibrator(path: str | Path) -> Calibrator:
    p = Path(path)
    try:
        data = json.loads(p.read_text())
        return Calibrator.from_json(data)
    except FileNotFoundError:
        raise FedlabError(f"agent.calibration={path} does not exist: fit one with "
                          "`python -m fedlab.agent_eval.calibrate`, or set agent.calibration=null") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise FedlabError(f"agent.calibration={path} is not a calibrator file ({exc}): refit it with "
                          "`python -m fedlab.agent_eval.calibrate`") from None


def fit_calibrator(raw_scores: Sequence[float], correct: Sequence[bool], method: str = "isotonic",
                   meta: dict | None = None) -> Calibrator:
    """Fit P(correct | raw score) on paired samples."""
    x = np.asarray(raw_scores, dtype=float)
    y = np.asarray(correct, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or len(x) == 0:
        raise FedlabError("calibration needs one raw score per answer and at least one answer")
    meta = dict(meta or {})
    meta.setdefault("n", len(x))
    meta.setdefault("accuracy", float(y.mean()))
    if method == "isotonic":
        from sklearn.isotonic import IsotonicRegression

        iso = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip").fit(x, y)
        return Calibrator("isotonic", x=[float(v) for v in iso.X_thresholds_],
                          y=[float(v) for v in iso.y_thresholds_], meta=meta)
    if method == "platt":
        if y.min() == y.max():
            raise FedlabError("Platt calibration needs both correct and incorrect answers in the fitting split; "
                              "use method isotonic")
        from sklearn.linear_model import LogisticRegression

        lr = LogisticRegression(C=1e6, max_iter=1000).fit(x.reshape(-1, 1), y.astype(int))
        return Calibrator("platt", a=float(lr.coef_[0, 0]), b=float(lr.intercept_[0]), meta=meta)
    raise FedlabError(f"calibration method {method!r}: use one of {', '.join(METHODS)}")


MIN_DISTINCT = 5  # a calibrator that maps a split to fewer values cannot rank its answers


def distinct_outputs(cal: Calibrator, raw_scores: Sequence[float], decimals: int = 3) -> int:
    """How many different confidences ``cal`` reports over ``raw_scores`` (at the shown precision)."""
    return len(set(np.round(cal.predict_many(list(raw_scores)), decimals).tolist()))


def collapse_problem(cal: Calibrator, raw_scores: Sequence[float]) -> str | None:
    """Why ``cal`` cannot discriminate on ``raw_scores`` (None when it can): it reports fewer than
    ``MIN_DISTINCT`` values where the raw scores had more. An isotonic fit on a small split can
    pool nearly every answer into one step, so that every answer reports the same number."""
    raw_distinct = len(set(np.round(np.asarray(raw_scores, dtype=float), 3).tolist()))
    got = distinct_outputs(cal, raw_scores)
    if got < min(MIN_DISTINCT, raw_distinct):
        return (f"the {cal.method} calibrator maps {len(raw_scores)} answers ({raw_distinct} distinct raw scores) "
                f"to only {got} confidence value(s)")
    return None


@dataclass(frozen=True)
class ReliabilityBin:
    lo: float
    hi: float
    count: int
    confidence: float  # mean confidence in the bin (NaN when empty)
    accuracy: float  # share correct in the bin (NaN when empty)


def _arrays(confidence: Sequence[float], correct: Sequence[bool]) -> tuple[np.ndarray, np.ndarray]:
    p = np.clip(np.asarray(confidence, dtype=float), 0.0, 1.0)
    y = np.asarray(correct, dtype=float)
    if p.shape != y.shape:
        raise ValueError("confidence and correct must have the same length")
    return p, y


def reliability_bins(confidence: Sequence[float], correct: Sequence[bool], n_bins: int = N_BINS) -> list[ReliabilityBin]:
    p, y = _arrays(confidence, correct)
    idx = np.minimum((p * n_bins).astype(int), n_bins - 1)
    out = []
    for b in range(n_bins):
        mask = idx == b
        n = int(mask.sum())
        out.append(ReliabilityBin(b / n_bins, (b + 1) / n_bins, n,
                                  float(p[mask].mean()) if n else math.nan,
                                  float(y[mask].mean()) if n else math.nan))
    return out


def ece(confidence: Sequence[float], correct: Sequence[bool], n_bins: int = N_BINS) -> float:
    """Expected calibration error over equal-width bins (0 for no samples)."""
    bins = reliability_bins(confidence, correct, n_bins)
    total = sum(b.count for b in bins)
    if not total:
        return 0.0
    return float(sum(b.count / total * abs(b.confidence - b.accuracy) for b in bins if b.count))


def brier(confidence: Sequence[float], correct: Sequence[bool]) -> float:
    p, y = _arrays(confidence, correct)
    return float(np.mean((p - y) ** 2)) if len(p) else 0.0


def reliability_figure(curves: dict[str, list[ReliabilityBin]], title: str = "reliability"):
    """A reliability diagram: accuracy against mean confidence per bin, one line per curve."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, hist) = plt.subplots(2, 1, figsize=(5, 6), sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    ax.plot([0, 1], [0, 1], linestyle=":", color="grey", label="perfect calibration")
    width = 1.0 / max(len(next(iter(curves.values()), [])) or N_BINS, 1)
    for i, (name, bins) in enumerate(curves.items()):
        used = [b for b in bins if b.count]
        ax.plot([b.confidence for b in used], [b.accuracy for b in used], marker="o", label=name)
        offset = (i - (len(curves) - 1) / 2) * width / max(len(curves), 1)
        hist.bar([(b.lo + b.hi) / 2 + offset for b in bins], [b.count for b in bins],
                 width=width / max(len(curves), 1), label=name, alpha=0.7)
    ax.set(xlim=(0, 1), ylim=(0, 1), ylabel="share correct", title=title)
    ax.legend(loc="upper left", fontsize=8)
    hist.set(xlabel="confidence", ylabel="answers")
    fig.tight_layout()
    return fig


load = load_calibrator  # the name fedlab.agent.confidence looks up

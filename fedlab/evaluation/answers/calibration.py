"""Calibration measures of a reported confidence against correctness, written out in numpy.

ECE uses 10 equal-width bins on [0, 1] (the last bin includes 1.0) and weighs each bin by its
share of the samples: ECE = sum_b n_b / N * |mean confidence_b - accuracy_b|; Brier is the mean
squared error; ``reliability_figure`` draws the diagram. On a small set ECE is biased upwards (a
bin of a few outputs rarely shows exactly its mean confidence as accuracy): ``ece_if_calibrated``
is the ECE a perfectly calibrated model would show on the same confidences, the noise floor an
ECE is read against. The confidence itself comes from the
agent's answerability model (fedlab.agent.answerability).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

N_BINS = 10


@dataclass(frozen=True)
class ReliabilityBin:
    lo: float
    hi: float
    count: int
    confidence: float  # mean confidence in the bin (NaN when empty)
    accuracy: float  # share correct in the bin (NaN when empty)


def _clipped(confidence: Sequence[float]) -> np.ndarray:
    return np.clip(np.asarray(confidence, dtype=float), 0.0, 1.0)


def _arrays(confidence: Sequence[float], correct: Sequence[bool]) -> tuple[np.ndarray, np.ndarray]:
    p = _clipped(confidence)
    y = np.asarray(correct, dtype=float)
    if p.shape != y.shape:
        raise ValueError("confidence and correct must have the same length")
    return p, y


def _bin_of(p: np.ndarray, n_bins: int) -> np.ndarray:
    """Each confidence's equal-width bin (the last one includes 1.0)."""
    return np.minimum((p * n_bins).astype(int), n_bins - 1)


def reliability_bins(confidence: Sequence[float], correct: Sequence[bool], n_bins: int = N_BINS) -> list[ReliabilityBin]:
    p, y = _arrays(confidence, correct)
    idx = _bin_of(p, n_bins)
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


def ece_if_calibrated(confidence: Sequence[float], n_bins: int = N_BINS, draws: int = 2000, seed: int = 0) -> float:
    """Mean ECE over ``draws`` outcome sets in which each output is right with probability equal to
    its confidence (seeded: the same confidences give the same value)."""
    p = _clipped(confidence)
    if not len(p):
        return 0.0
    idx = _bin_of(p, n_bins)
    counts = np.bincount(idx, minlength=n_bins).astype(float)
    used = counts > 0
    mean_conf = np.bincount(idx, weights=p, minlength=n_bins)[used] / counts[used]
    outcomes = np.random.default_rng(seed).random((draws, len(p))) < p  # draws x N
    onehot = np.zeros((len(p), n_bins))
    onehot[np.arange(len(p)), idx] = 1.0
    accuracy = (outcomes @ onehot)[:, used] / counts[used]
    return float(np.mean(np.abs(accuracy - mean_conf) @ (counts[used] / len(p))))


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


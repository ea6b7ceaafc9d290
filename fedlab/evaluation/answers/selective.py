"""Selective prediction: how well the agent's confidence ranks its right outputs above its wrong ones.

A prediction is every agent output, an answer or an abstention; it is correct as in
``QuestionRecord.correct``. Keeping only the outputs whose confidence is at least a threshold
trades coverage (share of questions kept) against risk (1 - accuracy among those kept):

- ``auroc``: ROC AUC of confidence against correctness (None when only one class is present);
- ``risk_coverage``: one point per distinct confidence, highest first; tied confidences are
  kept or dropped together, so the curve does not depend on the order of the outputs;
- ``coverage_at_precision``: the largest coverage on that curve whose accuracy reaches a target.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

TARGET_PRECISION = 0.9
COVERAGE_METRIC = f"coverage@precision{TARGET_PRECISION:g}"  # the name summarize reports it under


@dataclass(frozen=True)
class RiskPoint:
    threshold: float  # outputs with confidence >= threshold are kept
    coverage: float  # share of outputs kept
    risk: float  # 1 - accuracy among the kept outputs


def _arrays(confidence: Sequence[float], correct: Sequence[bool]) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(confidence, dtype=float)
    y = np.asarray(correct, dtype=bool)
    if p.shape != y.shape or p.ndim != 1:
        raise ValueError("confidence and correct must be 1-D and of the same length")
    return p, y


def _steps(confidence: Sequence[float], correct: Sequence[bool]) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Distinct thresholds (descending), outputs kept and correct outputs kept at each, and the total."""
    p, y = _arrays(confidence, correct)
    order = np.argsort(-p, kind="stable")
    p, y = p[order], y[order]
    last_of_tie = np.flatnonzero(np.append(p[1:] != p[:-1], True)) if len(p) else np.array([], dtype=int)
    return p[last_of_tie], last_of_tie + 1, np.cumsum(y)[last_of_tie], len(p)


def auroc(confidence: Sequence[float], correct: Sequence[bool]) -> float | None:
    """ROC AUC of confidence as a score for correctness; None unless both classes are present."""
    p, y = _arrays(confidence, correct)
    if y.all() or not y.any():
        return None
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(y, p))


def risk_coverage(confidence: Sequence[float], correct: Sequence[bool]) -> list[RiskPoint]:
    """The risk-coverage curve, one point per distinct confidence from the highest down."""
    thresholds, kept, right, n = _steps(confidence, correct)
    return [RiskPoint(float(t), float(k / n), float(1 - r / k)) for t, k, r in zip(thresholds, kept, right)]


def coverage_at_precision(confidence: Sequence[float], correct: Sequence[bool],
                          target: float = TARGET_PRECISION) -> float:
    """The largest coverage on the risk-coverage curve with accuracy >= ``target`` (0.0 when none)."""
    _, kept, right, n = _steps(confidence, correct)
    ok = right >= target * kept  # accuracy >= target, without the rounding of 1 - risk
    return float(kept[ok].max() / n) if ok.any() else 0.0


def risk_coverage_figure(curves: dict[str, list[RiskPoint]], title: str = "risk-coverage",
                         target: float = TARGET_PRECISION):
    """Risk against coverage, one line per curve, with the risk a ``target`` precision allows."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 4))
    ax.axhline(1 - target, linestyle=":", color="grey", label=f"precision {target:g}")
    for name, points in curves.items():
        ax.plot([pt.coverage for pt in points], [pt.risk for pt in points], marker="o", markersize=3,
                label=name)
    ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="coverage (share of questions kept)",
           ylabel="risk (1 - accuracy kept)", title=title)
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    return fig

"""Paired comparison of two agent runs on the measures of the whole set of outputs.

AUROC, ECE and coverage@precision0.9 are not means over questions, so no per-question test
applies to them. They are compared by a paired bootstrap: both runs are resampled on the same
questions (with replacement, ``n_resamples`` times), and p is two-sided, twice the smaller share
of resampled differences (B - A) on either side of zero (1.0 when the runs never differ). A
resample on which a measure is undefined (AUROC with one class) is left out.

The measures that are means over questions (answer_accuracy, brier, …) are compared question by
question instead (fedlab.evaluation.retrieval.significance, on measures.question_scores).
"""
from __future__ import annotations

from typing import Callable, Mapping, Sequence

import numpy as np

from fedlab.evaluation.answers.calibration import ece
from fedlab.evaluation.answers.measures import LOWER_IS_BETTER
from fedlab.evaluation.answers.selective import COVERAGE_METRIC, auroc, coverage_at_precision
from fedlab.evaluation.retrieval.significance import MetricComparison

ROUTE_BOOTSTRAP = "boot"
Measure = Callable[[Sequence[float], Sequence[bool]], "float | None"]
SET_MEASURES: dict[str, Measure] = {"auroc": auroc, "ece": ece, COVERAGE_METRIC: coverage_at_precision}
Outputs = Mapping[str, tuple[float, bool]]  # {question id: (confidence as reported, correct)}


def paired_bootstrap_p(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray], measure: Measure,
                       n_resamples: int = 1000, seed: int = 42) -> float:
    """The two-sided p of the module docstring for ``measure`` on paired (confidence, correct) arrays."""
    rng = np.random.default_rng(seed)
    n = len(a[0])
    below = above = kept = 0
    for _ in range(n_resamples):
        idx = rng.integers(0, n, n)
        ma, mb = measure(a[0][idx], a[1][idx]), measure(b[0][idx], b[1][idx])
        if ma is None or mb is None:
            continue
        kept += 1
        below += mb - ma <= 0
        above += mb - ma >= 0
    return min(1.0, 2 * min(below, above) / kept) if kept else 1.0


def compare_outputs(a: Outputs, b: Outputs, metrics: Sequence[str], alpha: float = 0.05,
                    n_resamples: int = 1000) -> list[MetricComparison]:
    """One row per metric of SET_MEASURES, over the questions both runs answered."""
    unknown = [m for m in metrics if m not in SET_MEASURES]
    if unknown:
        raise ValueError(f"{unknown[0]} is not a measure of the whole set ({', '.join(SET_MEASURES)})")
    common = sorted(set(a) & set(b))
    if len(common) < 2:
        raise ValueError(f"the two runs share {len(common)} answered question(s); a paired bootstrap needs 2+")
    arrays = [(np.array([run[q][0] for q in common], dtype=float), np.array([run[q][1] for q in common], dtype=bool))
              for run in (a, b)]
    rows = []
    for metric in metrics:
        measure = SET_MEASURES[metric]
        ma, mb = measure(*arrays[0]), measure(*arrays[1])
        if ma is None or mb is None:
            raise ValueError(f"{metric} is undefined on these runs (every output right, or every one wrong)")
        p = paired_bootstrap_p(arrays[0], arrays[1], measure, n_resamples)
        rows.append(MetricComparison(metric, float(ma), float(mb), p, bool(p <= alpha), None, None, None,
                                     len(common), ROUTE_BOOTSTRAP, metric in LOWER_IS_BETTER))
    return rows

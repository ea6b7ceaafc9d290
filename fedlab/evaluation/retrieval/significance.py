"""Paired significance tests between two runs over the same questions.

Two routes, chosen per metric by ``compare_runs``:

- **ranx.compare on the TREC files** when both runs have identical qrels (same chunker, so
  the same chunk ids) and the metric is one ranx computes (``mrr@10``, ``ndcg@10``,
  ``hit@k``). ranx re-evaluates both runs from ``run.trec``/``qrels.trec``; its question set
  is the questions with at least one relevant chunk in the qrels.
- **per-question scores** (``per_question.jsonl``) otherwise: runs with different chunkers
  have different chunk ids and qrels, so only their per-question metric values are
  comparable; ``recall@k``/``doc_recall@k`` exist only there. Pairs are the questions
  both runs scored on that metric.

Both routes use ranx's tests: ``student`` (two-sided paired t-test, the default),
``fisher`` (randomization test, ``n_permutations`` shuffles) or ``tukey`` (Tukey's HSD).
When every paired difference is zero the t-test is undefined; p is reported as 1.0.
A difference is significant when p <= alpha.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from fedlab.evaluation.retrieval.metrics import RANX_METRICS, to_ranx

STAT_TESTS = ("student", "fisher", "tukey")
ROUTE_RANX = "ranx"
ROUTE_PER_QUESTION = "per-q"


@dataclass
class MetricComparison:
    metric: str
    mean_a: float
    mean_b: float
    p_value: float
    significant: bool
    wins_b: int | None  # questions where B scored higher than A (None: a measure of the whole set)
    ties: int | None
    wins_a: int | None
    n_questions: int
    route: str  # ROUTE_RANX ("ranx": ranx.compare on TREC files), ROUTE_PER_QUESTION ("per-q") or another module's
    lower_is_better: bool = False  # ece, brier, false_abstention_rate

    @property
    def delta(self) -> float:
        """B minus A."""
        return self.mean_b - self.mean_a

    @property
    def better(self) -> str | None:
        """"A" or "B", the better run when the difference is significant; None otherwise."""
        if not self.significant or self.delta == 0:
            return None
        return "B" if (self.delta > 0) != self.lower_is_better else "A"


@dataclass
class Comparison:
    name_a: str
    name_b: str
    stat_test: str
    alpha: float
    rows: list[MetricComparison]
    only_a: list[str] = field(default_factory=list)  # questions only run A scored (left out)
    only_b: list[str] = field(default_factory=list)


@dataclass
class RunData:
    """What a comparison needs of one run (qrels/run as ``fedlab.evaluation.retrieval.trec`` reads them)."""

    name: str
    per_question: dict[str, dict[str, float]]  # {qid: {metric name: value}}
    qrels: dict[str, dict[str, int]] | None = None  # None: no TREC files
    run: dict[str, list[str]] | None = None


def _check_test(stat_test: str) -> None:
    if stat_test not in STAT_TESTS:
        raise ValueError(f"stat_test must be one of {', '.join(STAT_TESTS)}, got {stat_test!r}")


def _fix_p(p: float, a: np.ndarray, b: np.ndarray) -> float:
    """The t-test and Tukey return NaN on zero variance: p = 1 when A and B never differ,
    p = 0 when they differ by the same amount on every question."""
    p = float(p)
    if math.isnan(p):
        return 1.0 if np.array_equal(a, b) else 0.0
    return p


def paired_p_value(a: Sequence[float], b: Sequence[float], stat_test: str = "student",
                   n_permutations: int = 1000, random_seed: int = 42) -> float:
    """p-value of ranx's ``stat_test`` on paired per-question scores ``a`` and ``b``."""
    from ranx.statistical_tests import compute_statistical_significance

    _check_test(stat_test)
    a_arr, b_arr = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if len(a_arr) != len(b_arr) or len(a_arr) < 2:
        raise ValueError(f"a paired test needs two equally long score lists of 2+ questions, got {len(a_arr)} and {len(b_arr)}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy's precision-loss warning on identical samples
        out = compute_statistical_significance(
            ["A", "B"], {"A": {"m": a_arr}, "B": {"m": b_arr}},
            stat_test=stat_test, n_permutations=n_permutations, random_seed=random_seed,
        )
    return _fix_p(out[frozenset(["A", "B"])]["m"]["p_value"], a_arr, b_arr)


def _row(metric: str, a: np.ndarray, b: np.ndarray, p: float, alpha: float, route: str,
         lower_is_better: frozenset[str] = frozenset()) -> MetricComparison:
    """A row; a win is the better value of the metric (the lower one when ``metric in lower_is_better``)."""
    low = metric in lower_is_better
    return MetricComparison(
        metric=metric, mean_a=float(a.mean()), mean_b=float(b.mean()), p_value=p,
        significant=bool(p <= alpha), wins_b=int(((b < a) if low else (b > a)).sum()), ties=int((b == a).sum()),
        wins_a=int(((a < b) if low else (a > b)).sum()), n_questions=len(a), route=route, lower_is_better=low,
    )


def compare_per_question(a: RunData, b: RunData, metrics: Sequence[str], stat_test: str = "student",
                         alpha: float = 0.05, n_permutations: int = 1000,
                         lower_is_better: frozenset[str] = frozenset()) -> Comparison:
    """Paired tests on per-question metric values.

    A metric pairs the questions that carry it in both runs (rows of unanswerable questions
    carry no retrieval metrics); ``lower_is_better``: the metrics whose lower value wins.
    """
    _check_test(stat_test)
    rows = []
    for metric in metrics:
        common = sorted(q for q in set(a.per_question) & set(b.per_question)
                        if metric in a.per_question[q] and metric in b.per_question[q])
        if len(common) < 2:
            raise ValueError(f"runs {a.name} and {b.name} share {len(common)} question(s) scored on {metric}; "
                             "a paired test needs 2+")
        sa = np.array([a.per_question[q][metric] for q in common], dtype=np.float64)
        sb = np.array([b.per_question[q][metric] for q in common], dtype=np.float64)
        p = paired_p_value(sa, sb, stat_test, n_permutations)
        rows.append(_row(metric, sa, sb, p, alpha, ROUTE_PER_QUESTION, lower_is_better))
    return Comparison(
        a.name, b.name, stat_test, alpha, rows,
        only_a=sorted(set(a.per_question) - set(b.per_question)),
        only_b=sorted(set(b.per_question) - set(a.per_question)),
    )


def compare_trec(qrels: Mapping[str, Mapping[str, int]], run_a: Mapping[str, Sequence[str]],
                 run_b: Mapping[str, Sequence[str]], metrics: Sequence[str], stat_test: str = "student",
                 alpha: float = 0.05, n_permutations: int = 1000) -> list[MetricComparison]:
    """``ranx.compare`` of two ranked runs judged by one set of qrels (fedlab metric names)."""
    from ranx import compare

    _check_test(stat_test)
    unknown = [m for m in metrics if m not in RANX_METRICS]
    if unknown:
        raise ValueError(f"ranx does not compute {', '.join(unknown)}; compare them per question")
    ranx_qrels, runs = to_ranx(qrels, run_a, run_b, names=("A", "B"))
    if ranx_qrels is None or any(run is None for run in runs):
        raise ValueError("ranx.compare needs qrels with a relevant chunk and two non-empty runs")
    ranx_names = [RANX_METRICS[m] for m in metrics]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = compare(ranx_qrels, runs, ranx_names, stat_test=stat_test, max_p=alpha,
                         n_permutations=n_permutations, make_comparable=True)
    rows = []
    for metric, ranx_name in zip(metrics, ranx_names):
        qids = sorted(runs[0].scores[ranx_name])
        sa = np.asarray([runs[0].scores[ranx_name][q] for q in qids], dtype=np.float64)
        sb = np.asarray([runs[1].scores[ranx_name][q] for q in qids], dtype=np.float64)
        p = _fix_p(report.comparisons[frozenset(["A", "B"])][ranx_name]["p_value"], sa, sb)
        rows.append(_row(metric, sa, sb, p, alpha, ROUTE_RANX))
    return rows


def ranx_route(a: RunData, b: RunData) -> bool:
    """True when both runs carry TREC files judged by identical qrels, with something to judge."""
    if a.run is None or b.run is None or a.qrels is None or a.qrels != b.qrels:
        return False
    judged = [q for q, rels in a.qrels.items() if any(g > 0 for g in rels.values())]
    return any(a.run.get(q) for q in judged) and any(b.run.get(q) for q in judged)


def compare_runs(a: RunData, b: RunData, metrics: Sequence[str], stat_test: str = "student",
                 alpha: float = 0.05, n_permutations: int = 1000,
                 lower_is_better: frozenset[str] = frozenset()) -> Comparison:
    """Compare two runs metric by metric, by the route the module docstring describes."""
    via_ranx = [m for m in metrics if m in RANX_METRICS] if ranx_route(a, b) else []
    per_question = [m for m in metrics if m not in via_ranx]
    rows = {}
    if per_question:
        for row in compare_per_question(a, b, per_question, stat_test, alpha, n_permutations, lower_is_better).rows:
            rows[row.metric] = row
    if via_ranx:
        for row in compare_trec(a.qrels, a.run, b.run, via_ranx, stat_test, alpha, n_permutations):
            rows[row.metric] = row
    common = set(a.per_question) & set(b.per_question)
    return Comparison(
        a.name, b.name, stat_test, alpha, [rows[m] for m in metrics],
        only_a=sorted(set(a.per_question) - common), only_b=sorted(set(b.per_question) - common),
    )

"""Selective prediction: AUROC, the risk-coverage curve, coverage at a target precision, and summarize."""
from __future__ import annotations

import numpy as np
import pytest

from fedlab.evaluation.answers.measures import summarize
from fedlab.evaluation.answers.selective import (
    COVERAGE_METRIC, RiskPoint, auroc, coverage_at_precision, risk_coverage, risk_coverage_figure)
from fedlab.evaluation.record import QuestionRecord


def _points(curve):
    return [(p.threshold, pytest.approx(p.coverage), pytest.approx(p.risk)) for p in curve]


def test_perfect_ranking():
    conf = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]
    right = [True, True, True, False, False, False]
    assert auroc(conf, right) == 1.0
    assert coverage_at_precision(conf, right) == pytest.approx(0.5)  # the share of correct outputs
    curve = risk_coverage(conf, right)
    assert [p.coverage for p in curve] == pytest.approx([1 / 6, 2 / 6, 3 / 6, 4 / 6, 5 / 6, 1.0])
    assert [p.risk for p in curve] == pytest.approx([0.0, 0.0, 0.0, 0.25, 0.4, 0.5])


def test_reversed_ranking():
    conf = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]
    right = [False, False, False, True, True, True]
    assert auroc(conf, right) == 0.0
    assert coverage_at_precision(conf, right) == 0.0  # accuracy never reaches 0.9
    assert risk_coverage(conf, right)[0].risk == 1.0


def test_precision_exactly_at_target_counts():
    conf = np.linspace(1.0, 0.1, 10)
    right = [True] * 9 + [False]  # 9 / 10 = 0.9 at full coverage
    assert coverage_at_precision(conf, right) == 1.0
    assert coverage_at_precision(conf, right, target=0.95) == pytest.approx(0.9)


def test_tied_confidences_are_one_step_whatever_the_order():
    a = risk_coverage([0.8, 0.8, 0.5], [True, False, True])
    b = risk_coverage([0.5, 0.8, 0.8], [True, False, True])
    assert a == b
    assert _points(a) == [(0.8, 2 / 3, 0.5), (0.5, 1.0, 1 / 3)]
    # with one step per output, keeping only the first tied output would give coverage 1/3 at precision 1
    assert coverage_at_precision([0.8, 0.8, 0.5], [True, False, True]) == 0.0
    assert coverage_at_precision([0.8, 0.8, 0.5], [False, True, True]) == 0.0
    assert auroc([0.8, 0.8, 0.5], [True, False, True]) == auroc([0.8, 0.8, 0.5], [False, True, True]) == 0.25


def test_one_class_has_no_auroc():
    assert auroc([0.2, 0.9], [True, True]) is None
    assert auroc([0.2, 0.9], [False, False]) is None
    assert coverage_at_precision([0.2, 0.9], [True, True]) == 1.0
    assert coverage_at_precision([0.2, 0.9], [False, False]) == 0.0


def test_empty_and_mismatched_input():
    assert risk_coverage([], []) == [] and coverage_at_precision([], []) == 0.0 and auroc([], []) is None
    with pytest.raises(ValueError):
        risk_coverage([0.5, 0.6], [True])


def _brute_curve(conf, right):
    out = []
    for t in sorted(set(conf.tolist()), reverse=True):
        kept = conf >= t
        out.append((t, kept.mean(), 1 - right[kept].mean()))
    return out


def _brute_auroc(conf, right):
    pos, neg = conf[right], conf[~right]
    wins = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return wins / (len(pos) * len(neg))


@pytest.mark.parametrize("seed", range(25))
def test_agrees_with_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    conf = np.round(rng.random(n), 1)  # one decimal: plenty of ties
    right = rng.random(n) < conf  # correctness loosely follows confidence
    curve = risk_coverage(conf, right)
    assert _points(curve) == _brute_curve(conf, right)
    target = float(rng.choice([0.5, 0.7, 0.9]))
    ok = [cov for _, cov, risk in _brute_curve(conf, right) if 1 - risk >= target - 1e-12]
    assert coverage_at_precision(conf, right, target) == pytest.approx(max(ok, default=0.0))
    expected = _brute_auroc(conf, right) if 0 < right.sum() < n else None
    assert auroc(conf, right) == pytest.approx(expected)
    perm = rng.permutation(n)
    assert risk_coverage(conf[perm], right[perm]) == curve


def test_figure_draws_every_curve_and_the_target(tmp_path):
    curve = risk_coverage([0.9, 0.5, 0.1], [True, False, True])
    fig = risk_coverage_figure({"raw score": curve, "calibrated": [RiskPoint(1.0, 1.0, 0.0)]}, title="t")
    ax = fig.axes[0]
    assert [line.get_label() for line in ax.get_lines()] == ["precision 0.9", "raw score", "calibrated"]
    assert list(ax.get_lines()[0].get_ydata()) == pytest.approx([0.1, 0.1])
    fig.savefig(tmp_path / "rc.png")
    assert (tmp_path / "rc.png").stat().st_size > 0


# ---------------------------------------------------------------- summarize

def _r(qid, category, abstained, correct, conf, raw):
    answerable = category not in ("unanswerable", "off_topic")
    return QuestionRecord(id=qid, category=category, answerable=answerable, abstained=abstained,
                          answer_correct=correct and answerable, correct=correct, missing_facts=[], n_citations=0,
                          valid_citations=0, supporting_citations=None, raw_confidence=raw, confidence=conf)


def test_summarize_reports_selective_measures():
    results = [
        _r("a1", "factual", False, True, 0.9, 0.1),
        _r("a2", "factual", True, False, 0.3, 0.7),  # false abstention
        _r("a3", "temporal", False, False, 0.8, 0.2),
        _r("u1", "unanswerable", True, True, 0.7, 0.3),  # a right abstention is a correct output
        _r("o1", "off_topic", False, False, 0.2, 0.8),
    ]
    m = summarize(results, [])
    # correct {0.9, 0.7} vs wrong {0.3, 0.8, 0.2}: 0.9 beats 3, 0.7 beats 2 -> 5/6 (the raw score gives 1/6)
    assert m["auroc"] == pytest.approx(5 / 6)
    # by confidence: 0.9 right (1/1), 0.8 wrong (1/2), 0.7 right (2/3), ... -> only the first step reaches 0.9
    assert m[COVERAGE_METRIC] == pytest.approx(0.2)
    assert COVERAGE_METRIC == "coverage@precision0.9"
    assert {k: v for k, v in m.items() if k.startswith("abstention_rate.")} == {
        "abstention_rate.factual": 0.5, "abstention_rate.temporal": 0.0,
        "abstention_rate.unanswerable": 1.0, "abstention_rate.off_topic": 0.0}
    assert m["answer_accuracy.factual"] == 0.5 and m["abstention_accuracy"] == 0.5  # existing names unchanged


def test_summarize_leaves_auroc_out_for_one_class():
    m = summarize([_r("a1", "factual", False, True, 0.4, 0.4), _r("a2", "factual", False, True, 0.6, 0.6)], [])
    assert "auroc" not in m
    assert m[COVERAGE_METRIC] == 1.0 and m["abstention_rate.factual"] == 0.0

"""Calibration measures: hand-computed ECE / Brier / reliability (the model is tests/test_answerability.py)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from fedlab.evaluation.answers.calibration import brier, ece, ece_if_calibrated, reliability_bins, reliability_figure


def _synthetic(n: int, seed: int, truth):
    rng = np.random.default_rng(seed)
    raw = rng.uniform(0, 1, n)
    correct = rng.uniform(0, 1, n) < truth(raw)
    return raw, correct


def test_brier_hand_computed():
    # (0.9-1)^2 + (0.2-0)^2 + (0.6-1)^2 + (0.6-0)^2 = 0.01 + 0.04 + 0.16 + 0.36 = 0.57; / 4
    assert brier([0.9, 0.2, 0.6, 0.6], [1, 0, 1, 0]) == pytest.approx(0.1425)
    assert brier([1.0, 0.0], [True, False]) == 0.0
    assert brier([], []) == 0.0


def test_ece_hand_computed():
    conf = [0.05, 0.15, 0.15, 0.95, 0.95, 0.95, 0.95, 1.0]
    correct = [0, 0, 1, 1, 1, 1, 0, 1]
    # bin 0: n=1, conf .05, acc 0 -> |.05| ; bin 1: n=2, conf .15, acc .5 -> .35
    # bin 9 (1.0 included): n=5, conf (4*.95+1)/5=.96, acc .8 -> .16
    expected = (1 * 0.05 + 2 * 0.35 + 5 * 0.16) / 8
    assert ece(conf, correct) == pytest.approx(expected)
    bins = reliability_bins(conf, correct)
    assert [b.count for b in bins] == [1, 2, 0, 0, 0, 0, 0, 0, 0, 5]
    assert bins[9].confidence == pytest.approx(0.96) and bins[9].accuracy == pytest.approx(0.8)
    assert math.isnan(bins[4].confidence)
    assert bins[0].lo == 0.0 and bins[9].hi == 1.0


def test_ece_edges():
    assert ece([], []) == 0.0
    assert ece([0.7, 0.7], [1, 0]) == pytest.approx(0.2)
    assert ece([1.0, 0.0], [1, 0]) == 0.0
    with pytest.raises(ValueError):
        ece([0.5], [1, 0])


def test_perfectly_calibrated_set_has_small_ece():
    n, bins = 20000, 10
    conf, correct = _synthetic(n, seed=7, truth=lambda p: p)
    # Within a bin of n_b samples the accuracy's standard error is at most sqrt(0.25 / n_b);
    # E|error| = sqrt(2/pi) * se. Three times that bound (n_b ~ n / bins) is far beyond noise.
    bound = 3 * math.sqrt(2 / math.pi) * math.sqrt(0.25 / (n / bins))
    assert ece(conf, correct) < bound
    assert ece(conf, correct) < 0.03
    # the same scores shifted by 0.2 are miscalibrated by about 0.2
    assert ece(np.clip(conf + 0.2, 0, 1), correct) > 0.15


def test_ece_if_calibrated_hand_computed():
    # certain outputs have one possible outcome: no noise
    assert ece_if_calibrated([0.0, 1.0, 1.0]) == 0.0
    assert ece_if_calibrated([]) == 0.0
    # two outputs at 0.5 in one bin: accuracy 0, 1/2 or 1 with chance 1/4, 1/2, 1/4 -> E|acc - 1/2| = 1/4
    assert ece_if_calibrated([0.5, 0.5], draws=40000) == pytest.approx(0.25, abs=0.01)
    assert ece_if_calibrated([0.3, 0.5, 0.9]) == ece_if_calibrated([0.3, 0.5, 0.9])  # seeded


def test_ece_if_calibrated_is_the_mean_ece_of_calibrated_outcomes():
    conf = np.random.default_rng(3).uniform(0, 1, 130)
    observed = [ece(conf, np.random.default_rng(seed).uniform(0, 1, len(conf)) < conf) for seed in range(400)]
    assert ece_if_calibrated(conf) == pytest.approx(np.mean(observed), abs=0.01)
    # the floor falls as the set grows: the bias of a small set, not a property of the model
    big = np.random.default_rng(3).uniform(0, 1, 13000)
    assert ece_if_calibrated(big, draws=200) < ece_if_calibrated(conf) / 5


def test_reliability_figure_renders(tmp_path):
    raw, correct = _synthetic(300, seed=2, truth=lambda p: p ** 2)
    fig = reliability_figure({"raw": reliability_bins(raw, correct),
                              "calibrated": reliability_bins(raw ** 2, correct)})
    out = tmp_path / "r.png"
    fig.savefig(out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

"""Calibration: fitting, JSON round trips, and hand-computed ECE / Brier / reliability."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from fedlab.agent_eval.calibration import (
    Calibrator, brier, ece, fit_calibrator, load_calibrator, reliability_bins, reliability_figure,
)
from fedlab.errors import FedlabError


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


@pytest.mark.parametrize("method", ["isotonic", "platt"])
def test_fit_recovers_a_known_truth(method):
    truth = lambda r: 1 / (1 + np.exp(-(8 * r - 4)))  # noqa: E731  (a logistic: Platt's family)
    raw, correct = _synthetic(8000, seed=3, truth=truth)
    cal = fit_calibrator(raw, correct, method)
    grid = np.linspace(0.05, 0.95, 19)
    predicted = cal.predict_many(grid)
    assert np.max(np.abs(predicted - truth(grid))) < 0.1
    assert np.all(np.diff(predicted) >= -1e-12)  # monotonic
    assert all(0.0 <= cal.predict(r) <= 1.0 for r in (-5.0, 0.0, 0.5, 1.0, 5.0))
    held_raw, held_correct = _synthetic(8000, seed=4, truth=truth)
    # miscalibrated raw scores (the raw score is not a probability) improve after calibration
    assert ece(cal.predict_many(held_raw), held_correct) < ece(held_raw, held_correct)
    assert ece(cal.predict_many(held_raw), held_correct) < 0.04
    if method == "platt":
        assert cal.a == pytest.approx(8, rel=0.15) and cal.b == pytest.approx(-4, rel=0.15)


def test_isotonic_is_a_step_through_the_fitted_points():
    cal = fit_calibrator([0.1, 0.2, 0.3, 0.4], [0, 1, 0, 1], "isotonic")
    # pool-adjacent-violators: (1, 0) pool to 0.5
    assert cal.predict(0.1) == 0.0
    assert cal.predict(0.25) == pytest.approx(0.5)
    assert cal.predict(0.4) == 1.0
    assert cal.predict(-1) == 0.0 and cal.predict(2) == 1.0  # clipped outside the fitted range


@pytest.mark.parametrize("method", ["isotonic", "platt"])
def test_json_round_trip(tmp_path, method):
    raw, correct = _synthetic(500, seed=1, truth=lambda p: p)
    cal = fit_calibrator(raw, correct, method, meta={"split": "dev"})
    path = tmp_path / "cal.json"
    cal.save(path)
    data = json.loads(path.read_text())
    assert data["method"] == method and data["meta"]["split"] == "dev" and data["meta"]["n"] == 500
    back = load_calibrator(path)
    grid = np.linspace(-0.5, 1.5, 41)
    assert np.allclose(back.predict_many(grid), cal.predict_many(grid))
    assert Calibrator.from_json(cal.to_json()) == cal


def test_bad_inputs_are_one_line_errors(tmp_path):
    with pytest.raises(FedlabError, match="does not exist"):
        load_calibrator(tmp_path / "nope.json")
    (tmp_path / "bad.json").write_text('{"method": "magic"}')
    with pytest.raises(FedlabError, match="not a calibrator"):
        load_calibrator(tmp_path / "bad.json")
    with pytest.raises(FedlabError, match="both correct and incorrect"):
        fit_calibrator([0.1, 0.2], [1, 1], "platt")
    with pytest.raises(FedlabError, match="method"):
        fit_calibrator([0.1, 0.2], [1, 0], "histogram")
    assert fit_calibrator([0.1, 0.2], [1, 1], "isotonic").predict(0.0) == 1.0


def test_reliability_figure_renders(tmp_path):
    raw, correct = _synthetic(300, seed=2, truth=lambda p: p ** 2)
    fig = reliability_figure({"raw": reliability_bins(raw, correct),
                              "calibrated": reliability_bins(raw ** 2, correct)})
    out = tmp_path / "r.png"
    fig.savefig(out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_collapsed_calibrator_is_caught():
    """The calibrator that landed first mapped the whole dev split to 0.308 / 0.565 / 1.0."""
    from fedlab.agent_eval.calibration import Calibrator, collapse_problem

    landed = Calibrator("isotonic", x=[0.0, 0.707962, 0.71071, 0.796305, 0.812291],
                        y=[0.308411, 0.308411, 0.565217, 0.565217, 1.0])
    rng = np.random.default_rng(0)
    raw = np.concatenate([rng.uniform(0.2, 0.7, size=125), rng.uniform(0.82, 0.95, size=6)])  # as dev's were
    correct = rng.uniform(size=131) < raw
    assert "only 2 confidence value" in collapse_problem(landed, raw)
    assert collapse_problem(fit_calibrator(raw, correct, "platt"), raw) is None


def test_the_shipped_calibrator_discriminates_on_dev():
    """conf/calibration/production.json records, from its fit on the dev split, how many distinct
    confidences it reported there; a calibrator that pools dev into a few values fails here."""
    import json

    from fedlab.agent_eval.calibration import MIN_DISTINCT

    shipped = json.loads((Path(__file__).resolve().parent.parent / "conf/calibration/production.json").read_text())
    assert shipped["meta"]["split"] == "dev"
    assert shipped["meta"].get("distinct_outputs", 0) >= MIN_DISTINCT

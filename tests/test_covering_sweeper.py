"""The grid sweeper checks a covering subset of a batch before launching it: every override value is
composed once, and a bad one still stops the sweep before any job runs."""
from __future__ import annotations

import itertools

from clirun import ROOT, run_python
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

import fedlab.config  # noqa: F401  (registers the fedlab_root resolver)
from fedlab.sweeps.grid import covering_jobs, expand, sweep_grid


def _compose(overrides: list[str]):
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        return compose(config_name="evaluate", overrides=overrides, return_hydra_config=True)


def _jobs(values: dict[str, list[str]]) -> list[list[str]]:
    keys = list(values)
    return [[f"{k}={v}" for k, v in zip(keys, combo)] for combo in itertools.product(*values.values())]


def test_the_covering_jobs_hold_every_override_of_the_batch():
    batch = _jobs({"a": ["1", "2", "3"], "b": ["x", "y"], "c": ["p", "q", "r", "s"]})
    chosen = covering_jobs(batch)
    assert {o for job in chosen for o in job} == {o for job in batch for o in job}
    assert all(job in batch for job in chosen)
    assert len(chosen) == 4  # as many as the key with the most values: one job per value
    assert covering_jobs([]) == []
    assert covering_jobs([["a=1"]]) == [["a=1"]]


def test_the_default_study_is_checked_with_a_few_of_its_jobs():
    values = expand(sweep_grid(_compose(["experiment=default"])))
    batch = _jobs(values)
    assert len(batch) == 72
    assert len(covering_jobs(batch)) == max(len(v) for v in values.values())


def test_grid_studies_use_the_covering_sweeper_and_the_search_study_optuna():
    grid = _compose(["experiment=default"])
    assert OmegaConf.select(grid, "hydra.sweeper._target_").endswith("covering_sweeper.CoveringSweeper")
    search = _compose(["experiment=tpe"])
    assert "optuna" in OmegaConf.select(search, "hydra.sweeper._target_").lower()


def test_a_bad_value_in_a_later_job_stops_the_sweep_before_any_job_runs(tmp_path):
    proc = run_python(["-m", "fedlab.evaluate", "-m", "experiment=smoke", "retriever=dense,no_such_retriever",
                       f"hydra.sweep.dir={tmp_path / 'sweep'}", f"mlflow.tracking_uri=sqlite:///{tmp_path / 'm.db'}",
                       f"paths.log_dir={tmp_path / 'logs'}"], timeout=300)
    assert proc.returncode != 0
    assert "no_such_retriever" in proc.stderr
    assert not (tmp_path / "sweep" / "0").exists()  # the first job (retriever=dense) never started

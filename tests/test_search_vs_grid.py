"""Model-based search against the grid (fedlab.sweeps.search), how many configs a sweep plans,
and what a remote job inherits from the launching process (fedlab.env.job_env)."""
from __future__ import annotations

import itertools
import statistics

import pytest
from omegaconf import OmegaConf

from fedlab.sweeps.callback import planned_configs
from fedlab.sweeps.search import SearchComparison, best_so_far, expected_best_of_random_order, report_search


@pytest.mark.parametrize("values", [[0.3, 0.7, 0.5], [0.2, 0.2, 0.9, 0.4], [0.5, 0.1, 0.5, 0.3, 0.8]])
def test_expected_best_of_a_random_order_is_the_mean_over_every_order(values):
    exact = expected_best_of_random_order(values)
    orders = list(itertools.permutations(values))
    for n in range(1, len(values) + 1):
        assert exact[n - 1] == pytest.approx(statistics.fmean(max(o[:n]) for o in orders))
    assert exact[-1] == max(values)


def test_the_comparison_counts_configs_to_the_grids_best():
    cmp = SearchComparison("recall@5", "tpe", "default", search=[0.4, 0.6, 0.8, 0.7], grid=[0.1, 0.8, 0.5])
    assert best_so_far(cmp.search) == [0.4, 0.6, 0.8, 0.8]
    assert cmp.trials_to_grid_best() == 3 and cmp.grid_configs_to_best() == 2
    summary = cmp.summary()
    assert summary["search.best"] == 0.8 and summary["search.grid_best"] == 0.8
    # 4 trials against a 3-config grid: a random order of the grid has found its best by then
    assert summary["search.random_expected_best"] == 0.8
    never = SearchComparison("recall@5", "tpe", "default", search=[0.1, 0.2], grid=[0.1, 0.8, 0.5])
    assert never.trials_to_grid_best() is None and "search.trials_to_grid_best" not in never.summary()


def _sweep(client, exp: str, study: str, values: list[float]) -> str:
    parent = client.create_run(exp, run_name=f"sweep:{study}", tags={"fedlab.sweep": "parent"}).info.run_id
    for i, v in enumerate(values):
        child = client.create_run(exp, run_name=f"{study}-{i}", tags={"mlflow.parentRunId": parent},
                                  start_time=1_000_000 + i)
        client.log_metric(child.info.run_id, "recall_at_5", v)
        client.set_terminated(child.info.run_id, "FINISHED")
    return parent


def test_report_search_logs_the_comparison_to_the_search_parent(tmp_path):
    from mlflow.tracking import MlflowClient

    client = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    exp = client.create_experiment("fedlab", artifact_location=str(tmp_path / "artifacts"))
    grid = _sweep(client, exp, "default", [0.2, 0.9, 0.4])
    client.set_terminated(grid, "FINISHED")
    unfinished = _sweep(client, exp, "default", [0.95])  # a later grid that never finished: not compared
    search = _sweep(client, exp, "tpe", [0.5, 0.9])
    cmp = report_search(client, exp, search, "tpe", "default", "recall@5")
    assert cmp is not None and cmp.grid == [0.2, 0.9, 0.4] and cmp.search == [0.5, 0.9]
    run = client.get_run(search)
    assert run.data.tags["search.grid_run_id"] == grid != unfinished
    assert run.data.metrics["search.trials_to_grid_best"] == 2
    assert {"sweep/search_vs_grid.png", "sweep/search_vs_grid.md"} <= {
        a.path for a in client.list_artifacts(search, "sweep")}
    assert report_search(client, exp, search, "tpe", "no_such_study", "recall@5") is None


def test_a_sweep_plans_its_grid_or_its_samplers_trials():
    grid = OmegaConf.create({"hydra": {"sweeper": {"params": {"a": "1,2"}}}})
    assert planned_configs(grid, 6) == (6, "grid")
    tpe = OmegaConf.create({"hydra": {"sweeper": {"n_trials": 24, "sampler": {"_target_": "optuna.samplers.TPESampler"}}}})
    assert planned_configs(tpe, 72) == (24, "TPESampler")


def test_a_remote_job_inherits_settings_but_never_secrets(monkeypatch):
    from fedlab.env import job_env

    monkeypatch.setenv("FEDLAB_DATA_DIR", "/shared/fedlab")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://tracking:5000")
    monkeypatch.setenv("MLFLOW_TRACKING_TOKEN", "s3cr3t")
    monkeypatch.setenv("MLFLOW_EXPERIMENT_ID", "7")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-xyz")
    monkeypatch.setenv("HF_TOKEN", "hf_abc")
    env = job_env()
    assert env["FEDLAB_DATA_DIR"] == "/shared/fedlab" and env["MLFLOW_TRACKING_URI"] == "http://tracking:5000"
    assert env["RAY_USAGE_STATS_ENABLED"] == "0"
    assert not {"MLFLOW_TRACKING_TOKEN", "ANTHROPIC_API_KEY", "HF_TOKEN", "MLFLOW_EXPERIMENT_ID"} & set(env)
    assert not {"s3cr3t", "sk-ant-xyz", "hf_abc"} & set(env.values())

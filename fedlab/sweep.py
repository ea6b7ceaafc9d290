"""Sweeps: a parent MLflow run per Hydra multirun, a child run per config, and a closing report.

The Hydra callback creates the parent run when the multirun starts and records its id in the
sweep directory, where every job (in this process or a joblib worker) finds it. When the
multirun ends it ranks the children, plots recall against latency with the Pareto frontier
highlighted, measures what the cache saved, and logs all of it to the parent run.
"""
from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

log = logging.getLogger(__name__)
PARENT_FILE = "mlflow_parent_run.json"


def parent_run_for_job() -> str | None:
    """The sweep's parent run id when this job is part of a multirun, else None."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    try:
        hc = HydraConfig.get()
    except ValueError:
        return None
    if hc.mode != RunMode.MULTIRUN:
        return None
    path = Path(hc.sweep.dir) / PARENT_FILE
    return json.loads(path.read_text())["run_id"] if path.is_file() else None


def pareto_front(points: list[tuple[float, float]]) -> list[int]:
    """Indexes of points not dominated by another (higher quality, lower latency)."""
    front = []
    for i, (q, lat) in enumerate(points):
        dominated = any(
            (q2 >= q and l2 <= lat) and (q2 > q or l2 < lat) for j, (q2, l2) in enumerate(points) if j != i
        )
        if not dominated:
            front.append(i)
    return front


class SweepCallback(Callback):
    def __init__(self, objective: str = "recall@5", latency: str = "latency_p95_ms_total") -> None:
        self.objective = objective
        self.latency = latency
        self.started = 0.0

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        from fedlab.tracking import Tracker, git_commit

        self.started = time.time()
        study = OmegaConf.select(config, "study", default=None) or {}
        tracker = Tracker(config.mlflow.tracking_uri, config.mlflow.experiment)
        client = tracker.mlflow.MlflowClient()
        exp = client.get_experiment_by_name(config.mlflow.experiment)
        run = client.create_run(
            exp.experiment_id, run_name=f"sweep:{study.get('name', 'adhoc')}",
            tags={"fedlab.sweep": "parent", "git_commit": git_commit(),
                  "study.purpose": str(study.get("purpose", ""))[:4000]},
        )
        sweep_dir = Path(config.hydra.sweep.dir)
        sweep_dir.mkdir(parents=True, exist_ok=True)
        (sweep_dir / PARENT_FILE).write_text(json.dumps({"run_id": run.info.run_id}))
        params = OmegaConf.to_container(config.hydra.sweeper.params, resolve=False) if OmegaConf.select(
            config, "hydra.sweeper.params") else {}
        for key, value in (params or {}).items():
            client.log_param(run.info.run_id, f"grid.{key}", str(value)[:6000])
        log.info("sweep parent run %s", run.info.run_id)

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        from fedlab.sweep_report import report_sweep

        sweep_dir = Path(config.hydra.sweep.dir)
        parent = json.loads((sweep_dir / PARENT_FILE).read_text())["run_id"]
        report_sweep(config.mlflow.tracking_uri, config.mlflow.experiment, parent,
                     wall_s=time.time() - self.started, objective=self.objective, latency=self.latency)

"""`python -m fedlab.evaluate`: compose a pipeline, evaluate a question set, log one MLflow run.

The Hydra app over ``fedlab.evaluation.run.evaluate`` (config ``conf/evaluate.yaml``); in a
``--multirun`` sweep each job is a child of the sweep's parent run and returns its
``objective`` metric to the sweeper.
"""
from __future__ import annotations

import time

import fedlab.config  # noqa: F401  (resolvers, telemetry defaults)
import hydra
from omegaconf import DictConfig

from fedlab.cli import run_cli, user_errors


@hydra.main(version_base="1.3", config_path="../conf", config_name="evaluate")
@user_errors
def main(cfg: DictConfig) -> float:
    from fedlab.evaluation.run import evaluate
    from fedlab.sweeps.record import parent_run_for_job, varying_keys_for_job

    say_sweep_position()
    result = evaluate(cfg, parent_run_id=parent_run_for_job(), varying=varying_keys_for_job())
    return float(result.metrics.get(cfg.objective, 0.0))


def say_sweep_position() -> None:
    """``config i of N: <overrides> (sweep elapsed, ETA)`` at a sweep job's start, in the job's
    log file and on stderr (fedlab.progress), so a sweep piped to a file shows where it is."""
    import logging

    from hydra.core.hydra_config import HydraConfig

    from fedlab.progress import config_line, note
    from fedlab.sweeps.record import sweep_position, sweep_started, varying_keys_for_job

    position = sweep_position()
    if position is None:
        return
    started = sweep_started()
    elapsed = None if started is None else max(0.0, time.time() - started)
    varying = set(varying_keys_for_job())  # what tells this config from the others, when the grid says
    task = list(HydraConfig.get().overrides.task)
    overrides = ([o for o in task if o.split("=", 1)[0].lstrip("+~") in varying] if varying
                 else [o for o in task if not o.startswith(("experiment=", "mlflow."))])
    note(logging.getLogger("fedlab.sweep"), config_line(*position, overrides, elapsed))


if __name__ == "__main__":
    run_cli(main)

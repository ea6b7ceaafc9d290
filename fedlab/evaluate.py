"""`python -m fedlab.evaluate`: compose a pipeline, evaluate a question set, log one MLflow run.

The Hydra app over ``fedlab.evaluation.run.evaluate`` (config ``conf/evaluate.yaml``); in a
``--multirun`` sweep each job is a child of the sweep's parent run and returns its
``objective`` metric to the sweeper.
"""
from __future__ import annotations

import fedlab.config  # noqa: F401  (resolvers, telemetry defaults)
import hydra
from omegaconf import DictConfig

from fedlab.cli import run_cli, user_errors


@hydra.main(version_base="1.3", config_path="../conf", config_name="evaluate")
@user_errors
def main(cfg: DictConfig) -> float:
    from fedlab.evaluation.run import evaluate
    from fedlab.sweeps.record import parent_run_for_job, varying_keys_for_job

    result = evaluate(cfg, parent_run_id=parent_run_for_job(), varying=varying_keys_for_job())
    return float(result.metrics.get(cfg.objective, 0.0))


if __name__ == "__main__":
    run_cli(main)

"""`python -m fedlab.bench` (make bench): ANN indexes, embedder throughput, embedding cache.

The Hydra app (config ``conf/bench.yaml``) over ``fedlab.benchmark.run.run``; the report goes to
reports/ann_benchmark.md, MLflow (experiment ``fedlab-bench``) and, with BENCH_OUT, JSON.
"""
from __future__ import annotations

import fedlab.config  # noqa: F401  (resolvers, telemetry defaults)
import hydra
from omegaconf import DictConfig

from fedlab.cli import run_cli, user_errors


@hydra.main(version_base="1.3", config_path="../conf", config_name="bench")
@user_errors
def main(cfg: DictConfig) -> None:
    from fedlab.benchmark.run import run

    run(cfg)


if __name__ == "__main__":
    run_cli(main)

"""`python -m fedlab.export`: the best run of a sweep → conf/production.yaml.

    python -m fedlab.export [sweep_run_id=ID] [objective.metric=mrr@10] [calibration.fit=false] ...

The Hydra app (config ``conf/export.yaml``) over ``fedlab.sweeps.production.export_production``.
"""
from __future__ import annotations

import fedlab.config  # noqa: F401
import hydra
from omegaconf import DictConfig

from fedlab.cli import run_cli, user_errors


@hydra.main(version_base="1.3", config_path="../conf", config_name="export")
@user_errors
def main(cfg: DictConfig) -> None:
    from fedlab.sweeps.production import export_production

    export_production(cfg)


if __name__ == "__main__":
    run_cli(main)

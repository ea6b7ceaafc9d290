"""The sweep record: how the callback tells every job of a multirun its parent run.

The callback writes the parent run's id (and the keys the grid varies) to a file in the sweep
directory, where every job finds it, in this process or in a joblib worker.
"""
from __future__ import annotations

import json
from pathlib import Path

PARENT_FILE = "mlflow_parent_run.json"


def write_record(sweep_dir: Path, run_id: str, varying: list[str]) -> None:
    sweep_dir.mkdir(parents=True, exist_ok=True)
    (sweep_dir / PARENT_FILE).write_text(json.dumps({"run_id": run_id, "varying": varying}))


def read_parent(sweep_dir: Path) -> str:
    return json.loads((sweep_dir / PARENT_FILE).read_text())["run_id"]


def _record_for_job() -> dict:
    """What the callback recorded in the sweep directory for its jobs ({} outside a multirun)."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    try:
        hc = HydraConfig.get()
    except ValueError:
        return {}
    if hc.mode != RunMode.MULTIRUN:
        return {}
    path = Path(hc.sweep.dir) / PARENT_FILE
    return json.loads(path.read_text()) if path.is_file() else {}


def parent_run_for_job() -> str | None:
    """The sweep's parent run id when this job is part of a multirun, else None."""
    return _record_for_job().get("run_id")


def varying_keys_for_job() -> list[str]:
    """The config keys this job's sweep varies (empty outside a multirun)."""
    return list(_record_for_job().get("varying", []))

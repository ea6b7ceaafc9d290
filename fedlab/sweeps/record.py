"""The sweep record: how the callback tells every job of a multirun its parent run.

The callback writes the parent run's id (and the keys the grid varies) to a file in the sweep
directory, where every job finds it, in this process or in a joblib worker.
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

PARENT_FILE = "mlflow_parent_run.json"


def write_record(sweep_dir: Path, run_id: str, varying: list[str], n_configs: int | None = None) -> None:
    from fedlab.io import write_text

    sweep_dir.mkdir(parents=True, exist_ok=True)
    write_text(sweep_dir / PARENT_FILE, json.dumps({"run_id": run_id, "varying": varying, "n_configs": n_configs,
                                                       "started": time.time()}))


def read_parent(sweep_dir: Path) -> str:
    return json.loads((sweep_dir / PARENT_FILE).read_text())["run_id"]


def _job() -> tuple[Any, dict] | None:
    """(Hydra's config of this job, what the callback recorded for the sweep's jobs) in a
    multirun; None outside one. The record is {} when the sweep directory holds none."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    try:
        hc = HydraConfig.get()
    except ValueError:
        return None
    if hc.mode != RunMode.MULTIRUN:
        return None
    path = Path(hc.sweep.dir) / PARENT_FILE
    return hc, (json.loads(path.read_text()) if path.is_file() else {})


def _record_for_job() -> dict:
    """What the callback recorded in the sweep directory for its jobs ({} outside a multirun)."""
    job = _job()
    return job[1] if job else {}


def parent_run_for_job() -> str | None:
    """The sweep's parent run id when this job is part of a multirun, else None."""
    return _record_for_job().get("run_id")


def varying_keys_for_job() -> list[str]:
    """The config keys this job's sweep varies (empty outside a multirun)."""
    return list(_record_for_job().get("varying", []))


def say_position() -> None:
    """``config i of N: <overrides> (sweep elapsed, ETA)`` at a sweep job's start, in the job's
    log file and on stderr (fedlab.progress), so a sweep piped to a file shows where it is."""
    import logging

    from fedlab.progress import config_line, note

    job = _job()
    if job is None:
        return
    hc, record = job
    n = int(record["n_configs"]) if record.get("n_configs") else None
    started = record.get("started")
    elapsed = max(0.0, time.time() - float(started)) if started else None
    varying = set(record.get("varying", []))  # what tells this config from the others, when the grid says
    task = list(hc.overrides.task)
    overrides = ([o for o in task if o.split("=", 1)[0].lstrip("+~") in varying] if varying
                 else [o for o in task if not o.startswith(("experiment=", "mlflow."))])
    note(logging.getLogger("fedlab.sweep"), config_line(int(hc.job.num) + 1, n, overrides, elapsed))

"""The sweep record: how the callback tells every job of a multirun its parent run.

The callback writes the parent run's id (and the keys the grid varies) to a file in the sweep
directory, where every job finds it, in this process or in a joblib worker.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

PARENT_FILE = "mlflow_parent_run.json"


def write_record(sweep_dir: Path, run_id: str, varying: list[str], n_configs: int | None = None) -> None:
    from fedlab.io import write_text

    sweep_dir.mkdir(parents=True, exist_ok=True)
    write_text(sweep_dir / PARENT_FILE, json.dumps({"run_id": run_id, "varying": varying, "n_configs": n_configs,
                                                       "started": time.time()}))


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


def sweep_position() -> tuple[int, int | None] | None:
    """(this job's number from 1, the sweep's number of configs or None) in a multirun; None
    outside one."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    try:
        hc = HydraConfig.get()
    except ValueError:
        return None
    if hc.mode != RunMode.MULTIRUN:
        return None
    n = _record_for_job().get("n_configs")
    return int(hc.job.num) + 1, (int(n) if n else None)


def sweep_started() -> float | None:
    """When this job's sweep started (epoch seconds), or None."""
    started = _record_for_job().get("started")
    return float(started) if started else None


def say_position() -> None:
    """``config i of N: <overrides> (sweep elapsed, ETA)`` at a sweep job's start, in the job's
    log file and on stderr (fedlab.progress), so a sweep piped to a file shows where it is."""
    import logging

    from hydra.core.hydra_config import HydraConfig

    from fedlab.progress import config_line, note

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

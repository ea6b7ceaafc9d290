"""Sweeps: a parent MLflow run per Hydra multirun, a child run per config, and a closing report.

The Hydra callback creates the parent run when the multirun starts and records its id in the
sweep directory, where every job (in this process or a joblib worker) finds it. When the
multirun ends it ranks the children, plots recall against latency with the Pareto frontier
highlighted, measures what the cache saved, and logs all of it to the parent run.
"""
from __future__ import annotations

import json
import logging
import math
import time
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

log = logging.getLogger(__name__)
PARENT_FILE = "mlflow_parent_run.json"


def _sweep_record() -> dict:
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
    return _sweep_record().get("run_id")


def varying_keys_for_job() -> list[str]:
    """The config keys this job's sweep varies (empty outside a multirun)."""
    return list(_sweep_record().get("varying", []))


def sweep_grid(config: DictConfig) -> dict[str, str]:
    """The grid a multirun expands: the study's ``hydra.sweeper.params`` with the command line's
    overrides on top (``make sweep ARGS='retriever.top_k=5,10'`` varies top_k too; a plain
    ``retriever=bm25`` there pins what the study varied)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    params = OmegaConf.to_container(config.hydra.sweeper.params, resolve=False) if OmegaConf.select(
        config, "hydra.sweeper.params") else {}
    grid = {str(k): str(v) for k, v in (params or {}).items()}
    for override in OverridesParser.create().parse_overrides(list(config.hydra.overrides.task)):
        grid[override.get_key_element().lstrip("+~")] = override.input_line.split("=", 1)[1]
    return grid


def expand(grid: dict[str, str]) -> dict[str, list[str]]:
    """Each grid key's values (``a,b`` → [a, b]; a plain value → [value])."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = OverridesParser.create()
    out = {}
    for key, value in grid.items():
        override = parser.parse_overrides([f"{key}={value}"])[0]
        out[key] = list(override.sweep_string_iterator()) if override.is_sweep_override() else [value]
    return out


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


def grid_size(values: dict[str, list[str]]) -> int:
    """How many configs an expanded basic-sweeper grid runs (``a,b`` × ``range(1,4)`` …)."""
    return math.prod(len(v) for v in values.values())


def varying(values: dict[str, list[str]]) -> list[str]:
    return [k for k, v in values.items() if len(v) > 1]


def unfinished_sweeps(client, experiment_id: str, study: str, exclude: str) -> list:
    """Earlier parents of the same study that never finished (interrupted, failed, or killed)."""
    runs = client.search_runs([experiment_id], filter_string="tags.`fedlab.sweep` = 'parent'",
                              order_by=["attributes.start_time DESC"], max_results=50)
    return [r for r in runs if r.info.run_id != exclude and r.info.run_name == f"sweep:{study}"
            and r.info.status != "FINISHED"]


def children_of(client, experiment_id: str, parent_id: str) -> list:
    return client.search_runs([experiment_id], filter_string=f"tags.mlflow.parentRunId = '{parent_id}'",
                              max_results=5000)


def close_parent(client, experiment_id: str, parent_id: str, status: str) -> int:
    """Mark an unfinished sweep and its still-running children ``status``; the finished children
    keep their results. Returns how many children had finished."""
    children = children_of(client, experiment_id, parent_id)
    for child in children:
        if child.info.status == "RUNNING":
            client.set_terminated(child.info.run_id, status)
    finished = sum(1 for c in children if c.info.status == "FINISHED")
    client.set_tag(parent_id, "sweep.n_finished", str(finished))
    client.set_terminated(parent_id, status)
    return finished


class SweepCallback(Callback):
    """Opens the parent run when a multirun starts and closes it however the multirun ends:
    FINISHED with its report, KILLED on Ctrl-C or SIGTERM, FAILED when a job raised."""

    def __init__(self, objective: str = "recall@5", latency: str = "latency_p95_ms_total") -> None:
        self.objective = objective
        self.latency = latency
        self.started = 0.0
        self._open: tuple[str, str, str] | None = None  # (tracking uri, experiment id, parent id)

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        from fedlab.tracking import Tracker, git_commit

        self.started = time.time()
        study = OmegaConf.select(config, "study", default=None) or {}
        name = str(study.get("name", "adhoc"))
        purpose = str(study.get("purpose", "")).strip()
        grid = sweep_grid(config)
        values = expand(grid)
        n_configs = grid_size(values)
        tracker = Tracker(config.mlflow.tracking_uri, config.mlflow.experiment)
        client = tracker.mlflow.MlflowClient()
        run = client.create_run(
            tracker.experiment_id, run_name=f"sweep:{name}",
            tags={"fedlab.sweep": "parent", "git_commit": git_commit(), "study.purpose": purpose[:4000],
                  "mlflow.note.content": f"Study `{name}` ({n_configs} configs): {purpose}",
                  "sweep.n_configs": str(n_configs)},
        )
        sweep_dir = Path(config.hydra.sweep.dir)
        sweep_dir.mkdir(parents=True, exist_ok=True)
        (sweep_dir / PARENT_FILE).write_text(json.dumps({"run_id": run.info.run_id, "varying": varying(values)}))
        for key, value in grid.items():
            client.log_param(run.info.run_id, f"grid.{key}", str(value)[:6000])
        self._open = (tracker.tracking_uri, tracker.experiment_id, run.info.run_id)
        self._install_handlers()
        self._say_what_is_done(client, tracker.experiment_id, name, run.info.run_id)
        log.info("sweep:%s — %d configs, parent run %s", name, n_configs, run.info.run_id)

    def _say_what_is_done(self, client, experiment_id: str, study: str, parent_id: str) -> None:
        """On a re-run after an interruption: what the earlier attempt finished, and what the
        cache will spare this one (configs are re-evaluated; the artifacts they built are reused)."""
        for old in unfinished_sweeps(client, experiment_id, study, exclude=parent_id)[:1]:
            if old.info.status == "RUNNING":  # interrupted before this version closed parents
                finished = close_parent(client, experiment_id, old.info.run_id, "KILLED")
                old = client.get_run(old.info.run_id)
            else:
                finished = sum(c.info.status == "FINISHED" for c in children_of(client, experiment_id, old.info.run_id))
            total = old.data.tags.get("sweep.n_configs", "?")
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(old.info.start_time / 1000))
            log.warning("the previous sweep:%s (run %s, started %s) ended %s after %d of %s configs; their "
                        "results stay in that run, and the artifacts they built are in the cache, so this run "
                        "re-evaluates them without rebuilding", study, old.info.run_id, when, old.info.status,
                        finished, total)

    def _install_handlers(self) -> None:
        """SIGTERM (a CI timeout, ``kill``) ends the sweep as Ctrl-C does; at exit an unclosed
        parent is marked KILLED (interrupted) or FAILED (a job raised), never left RUNNING."""
        import atexit
        import signal
        import threading

        from fedlab import cli

        if threading.current_thread() is threading.main_thread():
            def _interrupt(signum, frame):
                # The first signal stops the sweep at the next config boundary (on_job_start): an
                # exception raised at an arbitrary point can be swallowed (Python drops one raised
                # inside a garbage-collector callback) or leave Hydra's config state half-built.
                # A second signal stops at once.
                if cli.INTERRUPTED:
                    raise KeyboardInterrupt(f"signal {signum}")
                cli.INTERRUPTED = True
                log.warning("stopping the sweep after the current config (signal %d again: stop now)", signum)

            signal.signal(signal.SIGINT, _interrupt)
            signal.signal(signal.SIGTERM, _interrupt)
        atexit.register(self._close_unfinished)

    def on_job_start(self, config: DictConfig, **kwargs: Any) -> None:
        from fedlab import cli

        if cli.INTERRUPTED:
            raise KeyboardInterrupt("the sweep was interrupted")

    def _close_unfinished(self) -> None:
        if self._open is None:
            return
        from fedlab import cli

        uri, experiment_id, parent_id = self._open
        self._open = None
        status = "KILLED" if cli.INTERRUPTED else "FAILED"
        try:
            import mlflow

            finished = close_parent(mlflow.MlflowClient(uri), experiment_id, parent_id, status)
            log.warning("sweep parent run %s marked %s after %d finished configs", parent_id, status, finished)
        except Exception as exc:  # noqa: BLE001 — exiting anyway
            log.warning("could not mark sweep parent run %s %s: %s", parent_id, status, type(exc).__name__)

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        from fedlab.sweep_report import report_sweep

        sweep_dir = Path(config.hydra.sweep.dir)
        parent = json.loads((sweep_dir / PARENT_FILE).read_text())["run_id"]
        report_sweep(config.mlflow.tracking_uri, config.mlflow.experiment, parent,
                     wall_s=time.time() - self.started, objective=self.objective, latency=self.latency)
        self._open = None

"""The Hydra callback that gives a multirun its parent MLflow run and closing report.

It creates the parent run when the multirun starts and records its id in the sweep directory
(:mod:`fedlab.sweeps.record`), where every job finds it. When the multirun ends it logs the
closing report (:mod:`fedlab.sweeps.report`) to the parent run; however else it ends, the parent
is closed KILLED or FAILED, never left RUNNING.
"""
from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

from fedlab.sweeps.grid import expand, grid_size, sweep_grid, varying
from fedlab.sweeps.record import read_parent, say_position, write_record
from fedlab.sweeps.runs import children_of, unfinished_sweeps

log = logging.getLogger(__name__)


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


def planned_configs(config: DictConfig, grid_configs: int) -> tuple[int, str]:
    """How many configs the sweep will run, and how it picks them: the whole grid, or a sampler's
    ``n_trials`` (the Optuna sweeper)."""
    n_trials = OmegaConf.select(config, "hydra.sweeper.n_trials", default=None)
    if n_trials is None:
        return grid_configs, "grid"
    target = str(OmegaConf.select(config, "hydra.sweeper.sampler._target_", default="optuna"))
    return int(n_trials), target.rsplit(".", 1)[-1]


class SweepCallback(Callback):
    """Opens the parent run when a multirun starts and closes it however the multirun ends:
    FINISHED with its report, KILLED on Ctrl-C or SIGTERM, FAILED when a job raised.

    The report ranks by ``objective`` (the sweep's ``objective`` key) with the tie-breakers and
    constraints of conf/export.yaml, so with the same metric its best run is export's pick."""

    def __init__(self, objective: str = "recall@5", latency: str = "latency_p95_ms_total") -> None:
        self.objective = objective
        self.latency = latency
        self.started = 0.0
        self._open: tuple[str, str, str] | None = None  # (tracking uri, experiment id, parent id)

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        from fedlab.tracking import Tracker, git_commit, process_tags

        self.started = time.time()
        study = OmegaConf.select(config, "study", default=None) or {}
        name = str(study.get("name", "adhoc"))
        purpose = str(study.get("purpose", "")).strip()
        grid = sweep_grid(config)
        values = expand(grid)
        n_configs, search = planned_configs(config, grid_size(values))
        tracker = Tracker(config.mlflow.tracking_uri, config.mlflow.experiment)
        client = tracker.mlflow.MlflowClient()
        run = client.create_run(
            tracker.experiment_id, run_name=f"sweep:{name}",
            tags={**process_tags(), "fedlab.sweep": "parent", "git_commit": git_commit(), "study.purpose": purpose[:4000],
                  "mlflow.note.content": f"Study `{name}` ({n_configs} configs): {purpose}",
                  "sweep.n_configs": str(n_configs), "sweep.search": search},
        )
        write_record(Path(config.hydra.sweep.dir), run.info.run_id, varying(values), n_configs)
        for key, value in grid.items():
            client.log_param(run.info.run_id, f"grid.{key}", str(value)[:6000])
        self._open = (tracker.tracking_uri, tracker.experiment_id, run.info.run_id)
        self._install_handlers()
        self._say_what_is_done(client, tracker.experiment_id, name, run.info.run_id)
        log.info("sweep:%s — %d configs, parent run %s", name, n_configs, run.info.run_id)

    def _say_what_is_done(self, client, experiment_id: str, study: str, parent_id: str) -> None:
        """On a re-run after an interruption: what the earlier attempt finished, and what the
        cache will spare this one (configs are re-evaluated; the artifacts they built are reused).

        An earlier sweep of the study still RUNNING is closed (KILLED, with its running children)
        only when its process is gone (``fedlab.tracking.process_alive``: killed with -9, or a
        reboot): one whose process still runs — a sweep started alongside this one — or that cannot
        be checked from here (another host, no process tags) is left as it is, and said so."""
        from fedlab.tracking import HOST_TAG, PID_TAG, process_alive

        for old in unfinished_sweeps(client, experiment_id, study, exclude=parent_id):
            if old.info.status == "RUNNING":
                alive = process_alive(old.data.tags)
                if alive is not False:
                    where = f"process {old.data.tags.get(PID_TAG, '?')} on {old.data.tags.get(HOST_TAG, 'another host')}"
                    log.warning("sweep:%s run %s is still running (%s%s): left as it is", study, old.info.run_id,
                                where, "" if alive else ", which cannot be checked from here")
                    continue
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
            break  # the latest attempt that ended is the one to report

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
        say_position()  # "config i of N: …" in the job's log, wherever the job runs

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
        from fedlab.sweeps.report import report_sweep
        from fedlab.sweeps.selection import export_rule

        parent = read_parent(Path(config.hydra.sweep.dir))
        grid_study = OmegaConf.select(config, "study.compare_with", default=None)
        if grid_study:  # before the report closes the parent run
            self._compare_with_grid(config, parent, str(grid_study))
        report_sweep(config.mlflow.tracking_uri, config.mlflow.experiment, parent,
                     wall_s=time.time() - self.started, rule=export_rule(self.objective), latency=self.latency)
        self._open = None

    def _compare_with_grid(self, config: DictConfig, parent: str, grid_study: str) -> None:
        from fedlab.sweeps.search import comparison_markdown, report_search
        from fedlab.tracking import Tracker

        tracker = Tracker(config.mlflow.tracking_uri, config.mlflow.experiment)
        name = str(OmegaConf.select(config, "study.name", default="search"))
        cmp = report_search(tracker.mlflow.MlflowClient(), tracker.experiment_id, parent, name, grid_study,
                            self.objective)
        if cmp is None:
            log.warning("no finished sweep:%s to compare sweep:%s with: run `make sweep STUDY=%s` first",
                        grid_study, name, grid_study)
        else:
            log.info("%s", comparison_markdown(cmp))

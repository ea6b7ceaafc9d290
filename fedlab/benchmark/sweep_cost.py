"""The sweep-cost section of `make bench`: what a study costs beyond building its artifacts.

The real command (``python -m fedlab.evaluate -m experiment=<study>``) runs twice in a
subprocess: cold (a fresh data directory holding a copy of the corpus, so every artifact is
built; a fresh sqlite tracking store) and warm (the same data directory again, every artifact
cached; another fresh store). Unique-artifact time is the sum of the cold sweep's artifact
builds, each counted once (the children's ``build_s.<stage>`` where ``cache.<stage>`` is
``miss``, as the sweep's own closing report counts them). Per-config time is (cold wall −
unique-artifact time) / N and warm wall / N; the ratio cold wall / unique-artifact time is the
issue's target (≤ 1.2).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from fedlab.errors import FedlabError


@dataclass
class SweepCost:
    study: str
    n_configs: int
    cold_wall_s: float
    warm_wall_s: float
    unique_build_s: float
    command: str

    @property
    def per_config_cold_s(self) -> float:
        return max(self.cold_wall_s - self.unique_build_s, 0.0) / max(self.n_configs, 1)

    @property
    def per_config_warm_s(self) -> float:
        return self.warm_wall_s / max(self.n_configs, 1)

    @property
    def ratio(self) -> float | None:
        return self.cold_wall_s / self.unique_build_s if self.unique_build_s > 0 else None

    def to_json(self) -> dict:
        return {**asdict(self), "per_config_cold_s": self.per_config_cold_s,
                "per_config_warm_s": self.per_config_warm_s, "ratio": self.ratio}

    def metrics(self) -> dict[str, float]:
        out = {f"sweep_cost.{k}": float(v) for k, v in self.to_json().items()
               if isinstance(v, (int, float)) and not isinstance(v, bool)}
        return out


def _sweep(study: str, data_dir: Path, work: Path, label: str, args: list[str], root: Path) -> tuple[float, str]:
    """Run the study once in a subprocess; (wall seconds, tracking uri). Its log goes to work/<label>.log."""
    db = work / f"{label}.db"
    uri = f"sqlite:///{db}"
    cmd = [sys.executable, "-m", "fedlab.evaluate", "-m", f"experiment={study}", f"mlflow.tracking_uri={uri}",
           f"hydra.sweep.dir={work / label}", f"paths.log_dir={work / 'logs'}", *args]
    env = {**os.environ, "FEDLAB_DATA_DIR": str(data_dir)}
    env.pop("MLFLOW_TRACKING_URI", None)
    log = work / f"{label}.log"
    t0 = time.perf_counter()
    with open(log, "wb") as fh:
        done = subprocess.run(cmd, cwd=root, env=env, stdout=fh, stderr=subprocess.STDOUT)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        tail = log.read_text(errors="replace").strip().splitlines()[-1:] or ["(no output)"]
        raise FedlabError(f"the {label} sweep of study {study!r} failed (exit {done.returncode}): {tail[0][:200]} "
                          f"(log: {log})")
    return wall, uri


def _unique_builds(uri: str, experiment: str) -> tuple[int, float]:
    """(finished configs, unique-artifact build seconds) of the one sweep in the store at ``uri``."""
    import mlflow

    from fedlab.sweeps.report import cache_savings
    from fedlab.sweeps.runs import finished_children, latest_finished_sweep

    client = mlflow.MlflowClient(uri)
    exp = client.get_experiment_by_name(experiment)
    parent = latest_finished_sweep(client, exp.experiment_id) if exp else None
    if parent is None:
        raise FedlabError(f"no finished sweep in {uri}: see the sweep's log beside it")
    children = finished_children(client, exp.experiment_id, parent)
    return len(children), cache_savings(children, 0.0)["sweep.unique_build_s"]


def measure_sweep_cost(study: str, corpus_dir: str | Path, data_dir: str | Path, args: list[str] = (),
                       experiment: str = "fedlab", root: str | Path | None = None,
                       keep: str | Path | None = None) -> SweepCost:
    """Cold then warm run of ``study`` (see the module doc). ``corpus_dir`` is copied to the same
    place under a fresh data directory (relative to ``data_dir``, the configured one);
    ``keep``: a directory for the logs and stores (default: a temporary one, removed)."""
    from fedlab.config import project_root

    root = Path(root or project_root())
    corpus_dir, data_dir = Path(corpus_dir).resolve(), Path(data_dir).resolve()
    try:
        rel = corpus_dir.relative_to(data_dir)
    except ValueError:
        rel = Path("corpus") / corpus_dir.name
    work = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="fedlab-sweep-cost-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        fresh = work / "data"
        shutil.copytree(corpus_dir, fresh / rel, dirs_exist_ok=True)
        cold, cold_uri = _sweep(study, fresh, work, "cold", list(args), root)
        n, unique = _unique_builds(cold_uri, experiment)
        warm, _ = _sweep(study, fresh, work, "warm", list(args), root)
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    command = f"python -m fedlab.evaluate -m experiment={study}" + "".join(f" {a}" for a in args)
    return SweepCost(study, n, cold, warm, unique, command)

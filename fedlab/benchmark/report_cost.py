"""The report-cost section of `make bench`: the release report against one process per set.

``python -m fedlab.report`` evaluates every set in one process, sharing the loaded corpus,
indexes and models; before it, each set was a ``python -m fedlab.evaluate dataset.path=…`` of its
own. Both run here as subprocesses on the same sets, warm (the cache is built first, untimed),
each logging to a fresh sqlite store: the figures are the report's wall time, its seconds per
question, and its ratio to the separate processes (< 1: sharing pays).
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from fedlab.errors import FedlabError


@dataclass
class ReportCost:
    sets: list[str]
    n_questions: int
    report_wall_s: float
    separate_wall_s: float | None  # None when the baseline was not run
    command: str

    @property
    def per_question_s(self) -> float:
        return self.report_wall_s / max(self.n_questions, 1)

    @property
    def ratio(self) -> float | None:
        return self.report_wall_s / self.separate_wall_s if self.separate_wall_s else None

    def to_json(self) -> dict:
        return {**asdict(self), "per_question_s": self.per_question_s, "ratio": self.ratio}

    def metrics(self) -> dict[str, float]:
        return {f"report_cost.{k}": float(v) for k, v in self.to_json().items()
                if isinstance(v, (int, float)) and not isinstance(v, bool)}


def _run(cmd: list[str], root: Path, env: dict, log: Path) -> float:
    t0 = time.perf_counter()
    with open(log, "ab") as fh:
        done = subprocess.run(cmd, cwd=root, env=env, stdout=fh, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        tail = log.read_text(errors="replace").strip().splitlines()[-1:] or ["(no output)"]
        raise FedlabError(f"{' '.join(cmd[2:4])} failed (exit {done.returncode}): {tail[0][:200]} (log: {log})")
    return time.perf_counter() - t0


def measure_report_cost(config: str, names: list[str] | None, args: list[str] = (), baseline: bool = True,
                        root: str | Path | None = None) -> ReportCost:
    """The report on ``names`` (None: every dev and heldout set) warm, and (``baseline``) the same
    sets as separate evaluations; ``args``: overrides for both (``--set`` form for the report)."""
    from fedlab.config import project_root
    from fedlab.dataset.registry import DEFAULT_REPORT_ROLES, registered, registered_sets
    from fedlab.evaluation.retrieval.harness import load_split

    root = Path(root or project_root())
    sets = [registered(n) for n in names] if names else registered_sets(DEFAULT_REPORT_ROLES)
    n_questions = sum(len(load_split(s.path, s.split, s.ids)) for s in sets)
    work = Path(tempfile.mkdtemp(prefix="fedlab-report-cost-"))
    env = {**os.environ, "MLFLOW_TRACKING_URI": f"sqlite:///{work / 'mlflow.db'}"}
    log = work / "report-cost.log"
    sets_args = [a for item in args for a in ("--set", item)]
    only = ["--only", *[s.name for s in sets]]
    report = [sys.executable, "-m", "fedlab.report", "--config", config, *only, *sets_args, "--no-progress",
              "--bootstrap", "200", "--out", str(work / "report")]
    # warm the cache (and the query encoder's export) on the smallest set, untimed
    smallest = min(sets, key=lambda s: s.path.stat().st_size)
    _run([sys.executable, "-m", "fedlab.report", "--config", config, "--only", smallest.name, *sets_args,
          "--no-progress", "--bootstrap", "50", "--out", str(work / "warm")], root, env, log)
    report_s = _run(report, root, env, log)
    separate_s = None
    if baseline:
        separate_s = 0.0
        for s in sets:
            separate_s += _run([sys.executable, "-m", "fedlab.evaluate", "--config-name", config, f"dataset={s.name}",
                                "eval.progress=false", f"paths.log_dir={work / 'logs'}", *args], root, env, log)
    command = "python -m fedlab.report --config " + config + " " + " ".join(only + sets_args)
    return ReportCost([s.name for s in sets], n_questions, report_s, separate_s, command)

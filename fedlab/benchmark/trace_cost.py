"""The tracing-cost section of `make bench`: an evaluation's wall time with every question traced
(``eval.traces=all``: a trace per question with its spans, passages and assessments) against none
(``eval.traces=off``).

The real command (``python -m fedlab.evaluate --config-name <config>``, the production config by
default) runs in subprocesses against one sqlite tracking store in a temporary directory: first
once untimed (it creates the store's tables and fills the artifact cache), then ``repeats`` rounds
of both settings, the order alternating from round to round so that a drift in the machine's load
falls on both. Each setting keeps its median; the overhead is all / off − 1 (the issue's target:
≤ 0.15). Walls include process start, building the pipeline from the cache, the evaluation, logging
the run and — with traces — waiting until every trace is stored.
"""
from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from fedlab.errors import FedlabError

TARGET = 0.15


@dataclass
class TraceCost:
    config: str
    n_questions: int
    seconds: dict[str, list[float]] = field(default_factory=dict)  # "off" / "all" -> wall of each round
    command: str = ""
    # "off" / "all" -> CPU seconds (user + system) of each round's process: what tracing costs the
    # machine, unlike the wall not stretched by other jobs on a shared one (empty: not measured)
    cpu_seconds: dict[str, list[float]] = field(default_factory=dict)

    def median(self, mode: str) -> float:
        return statistics.median(self.seconds[mode])

    @property
    def ratio(self) -> float:
        return self.median("all") / self.median("off")

    @property
    def overhead(self) -> float:
        return self.ratio - 1.0

    @property
    def cpu_ratio(self) -> float | None:
        if not (self.cpu_seconds.get("off") and self.cpu_seconds.get("all")):
            return None
        return statistics.median(self.cpu_seconds["all"]) / statistics.median(self.cpu_seconds["off"])

    def to_json(self) -> dict:
        return {**asdict(self), "median_s": {m: self.median(m) for m in self.seconds}, "ratio": self.ratio,
                "overhead": self.overhead, "cpu_ratio": self.cpu_ratio, "target": TARGET}

    def metrics(self) -> dict[str, float]:
        out = {"trace_cost.off_s": self.median("off"), "trace_cost.all_s": self.median("all"),
               "trace_cost.ratio": self.ratio, "trace_cost.overhead": self.overhead,
               "trace_cost.n_questions": float(self.n_questions)}
        if self.cpu_ratio is not None:
            out["trace_cost.cpu_ratio"] = self.cpu_ratio
        return out


def _evaluate(config: str, mode: str, work: Path, label: str, args: list[str], root: Path,
              env: dict) -> tuple[float, float]:
    """One evaluation in a subprocess; its wall and CPU seconds. Its log goes to work/<label>.log."""
    import resource

    cmd = [sys.executable, "-m", "fedlab.evaluate", "--config-name", config, f"eval.traces={mode}",
           "eval.progress=false", f"mlflow.tracking_uri=sqlite:///{work / 'mlflow.db'}", f"hydra.run.dir={work / label}",
           f"mlflow.run_name=trace-cost-{label}", f"eval.metrics_out={work / label}.json", *args]
    log = work / f"{label}.log"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with open(log, "wb") as fh:
        done = subprocess.run(cmd, cwd=root, env=env, stdout=fh, stderr=subprocess.STDOUT)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        tail = log.read_text(errors="replace").strip().splitlines()[-1:] or ["(no output)"]
        raise FedlabError(f"the {label} evaluation of {config!r} failed (exit {done.returncode}): {tail[0][:200]} "
                          f"(log: {log})")
    return wall, cpu


def measure_trace_cost(config: str = "production", repeats: int = 2, args: list[str] = (),
                       root: str | Path | None = None, keep: str | Path | None = None, run=None) -> TraceCost:
    """``config`` evaluated with traces off and all, ``repeats`` rounds after an untimed warm-up
    (see the module doc); ``keep``: a directory for the store and logs (default: a temporary one);
    ``run``: what runs one evaluation (``_evaluate``'s signature, returning its wall seconds or
    (wall, CPU) seconds; the tests give their own)."""
    run = run or _evaluate
    import json

    from fedlab.config import project_root

    root = Path(root or project_root())
    if int(repeats) < 1:
        raise FedlabError(f"trace_cost.repeats={repeats}: give at least 1 round")
    work = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="fedlab-trace-cost-"))
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ}
    env.pop("MLFLOW_TRACKING_URI", None)
    try:
        run(config, "off", work, "warmup", list(args), root, env)
        n = int(json.loads((work / "warmup.json").read_text()).get("n_questions", 0))
        seconds: dict[str, list[float]] = {"off": [], "all": []}
        cpu: dict[str, list[float]] = {"off": [], "all": []}
        for i in range(int(repeats)):
            for mode in (("off", "all") if i % 2 == 0 else ("all", "off")):
                took = run(config, mode, work, f"{mode}-{i + 1}", list(args), root, env)
                wall, used = took if isinstance(took, tuple) else (took, None)
                seconds[mode].append(wall)
                if used is not None:
                    cpu[mode].append(used)
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    command = f"python -m fedlab.evaluate --config-name {config} eval.traces=all|off" + "".join(f" {a}" for a in args)
    return TraceCost(config, n, seconds, command, cpu if all(cpu.values()) else {})

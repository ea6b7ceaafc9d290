"""Cold ask: what answering costs in a fresh process, against the import floor.

Each repetition starts fresh Python processes, in turn (so all cases see similar machine load):

- floor: ``python -c "import sentence_transformers, torch, dspy, faiss"`` — what the issue
  measured a new question against (the libraries the old ask path imported);
- import: ``python -c "import fedlab.ask"`` — the floor of the ask command itself;
- new: ``python -m fedlab.ask --json QUESTION`` for a question no process has embedded yet (the
  question with a per-run tag appended; the query-vector cache is checked before and after, so
  a hit would be reported, not timed as a miss);
- repeated: the same command for a question asked before (its query vector is cached).

Each case reports the median wall time over the repetitions.
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from fedlab.errors import FedlabError

CASES = ("floor", "import", "new", "repeated")


@dataclass
class ColdStart:
    config: str
    question: str
    floor_modules: list[str]
    seconds: dict[str, list[float]] = field(default_factory=dict)  # case -> one time per fresh process
    new_misses: int = 0  # new questions whose query vector was computed by the timed process
    new_asked: int = 0

    def median(self, case: str) -> float:
        return statistics.median(self.seconds[case])

    def ratio(self, case: str, to: str = "floor") -> float:
        return self.median(case) / self.median(to)

    def to_json(self) -> dict:
        return {"config": self.config, "question": self.question, "floor_modules": self.floor_modules,
                "seconds": self.seconds, "median_s": {c: round(self.median(c), 4) for c in self.seconds},
                "new_misses": self.new_misses, "new_asked": self.new_asked}


def new_question(question: str, tag: str) -> str:
    """``question`` made new with a tag the retrieval ignores in practice (no date, no FOMC word)."""
    return f"{question} (benchmark run {tag})"


def commands(config: str, floor_modules: list[str]) -> dict[str, list[str]]:
    ask = [sys.executable, "-m", "fedlab.ask", "--config", config, "--json"]
    return {"floor": [sys.executable, "-c", f"import {', '.join(floor_modules)}"],
            "import": [sys.executable, "-c", "import fedlab.ask"],
            "ask": ask}


def timed_run(cmd: list[str], cwd: Path) -> float:
    """Wall seconds of ``cmd`` in a fresh process; a failure is one FedlabError line."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise FedlabError(f"cold-start benchmark: `{' '.join(cmd[1:4])} …` exited {proc.returncode}: {last}")
    return seconds


def query_cached(config: str) -> Callable[[str], bool]:
    """Whether a question's query vector is in the cache ``config`` asks with (False when that
    config embeds no queries)."""
    from hydra.utils import instantiate

    from fedlab.agent.answering import check_question, compose_config
    from fedlab.cache import ArtifactCache
    from fedlab.pipeline import DENSE_KINDS

    cfg = compose_config(config, [])
    if cfg.retriever.kind not in DENSE_KINDS:
        return lambda question: False
    cache = ArtifactCache(cfg.paths.cache_dir)
    fingerprint = instantiate(cfg.embedder).query_embedder(cache).fingerprint()
    return lambda question: cache.query_vector_path(fingerprint, check_question(question)).is_file()


def measure_cold_start(node, root: Path, run: Callable[[list[str], Path], float] = timed_run,
                       cached: Callable[[str], bool] | None = None, step=lambda description: None) -> ColdStart:
    """``node``: conf/bench.yaml's cold_start (config, repeats, question, floor_modules)."""
    config, question, repeats = str(node.config), str(node.question), int(node.repeats)
    floor_modules = [str(m) for m in node.floor_modules]
    cmds = commands(config, floor_modules)
    result = ColdStart(config, question, floor_modules, {c: [] for c in CASES})
    cached = cached or query_cached(config)
    step("cold ask: warm-up")
    run([*cmds["ask"], question], root)  # builds anything missing (the ONNX export once), caches the question
    batch = uuid.uuid4().hex[:8]
    for i in range(repeats):
        step(f"cold ask: run {i + 1}/{repeats}")
        fresh = new_question(question, f"{batch}-{i}")
        was_cached = cached(fresh)
        result.seconds["floor"].append(run(cmds["floor"], root))
        result.seconds["import"].append(run(cmds["import"], root))
        result.seconds["new"].append(run([*cmds["ask"], fresh], root))
        result.seconds["repeated"].append(run([*cmds["ask"], question], root))
        result.new_asked += 1
        result.new_misses += int(not was_cached and cached(fresh))
    return result


def summary(c: ColdStart) -> str:
    return (f"cold ask ({c.config}): new question {c.median('new'):.2f} s, repeated {c.median('repeated'):.2f} s, "
            f"`import fedlab.ask` {c.median('import'):.2f} s; import floor {c.median('floor'):.2f} s "
            f"(new/floor {c.ratio('new'):.2f}×)")

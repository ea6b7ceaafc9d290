"""Changed answers between two evaluated runs: the questions whose answer differs.

A question's answer changed when its answer text, whether it abstained, or the skill that
answered it (``skill``) differs between the two runs' ``agent_answers.jsonl``; a question only one
run holds is not counted. A restructuring that must not move behaviour shows 0 on every set.
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

COMPARED = ("answer", "abstained", "skill")  # what makes two answers to one question differ


@dataclass(frozen=True)
class ChangedAnswers:
    changed: tuple[str, ...]  # the question ids whose answer changed, in the later run's order
    compared: int  # questions both runs answered

    def to_json(self) -> dict:
        return {"n": len(self.changed), "of": self.compared, "ids": list(self.changed)}


def changed_answers(earlier: list[dict], later: list[dict]) -> ChangedAnswers:
    """The questions of ``later`` whose answer differs (COMPARED) from ``earlier``'s; each a row of
    agent_answers.jsonl keyed by ``id``."""
    before = {row["id"]: row for row in earlier}
    both = [row for row in later if row["id"] in before]
    changed = tuple(row["id"] for row in both if any(row.get(k) != before[row["id"]].get(k) for k in COMPARED))
    return ChangedAnswers(changed, len(both))


def run_answers(spec: str, scratch: Path) -> list[dict] | None:
    """The rows of a run's agent_answers.jsonl (``spec``: a run directory or an MLflow run id); None
    when the run has none (evaluated without an agent)."""
    from fedlab.evaluation.compare import AGENT_ANSWERS, resolve
    from fedlab.io import read_jsonl

    path = resolve(spec, scratch) / AGENT_ANSWERS
    return read_jsonl(path) if path.is_file() else None


def changed_between(spec_a: str, spec_b: str) -> ChangedAnswers | None:
    """The answers of run B (now) that changed from run A (earlier); None when either has no answers."""
    with tempfile.TemporaryDirectory() as tmp:
        earlier = run_answers(spec_a, Path(tmp) / "a")
        later = run_answers(spec_b, Path(tmp) / "b")
    if earlier is None or later is None:
        return None
    return changed_answers(earlier, later)

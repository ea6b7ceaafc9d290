"""A compiled agent program on disk: DSPy's JSON state of fedlab.lm.module.AgentModule (what
``program.save(path)`` writes: each predictor's instructions and demos, and the dependency
versions), plus ``metadata.fedlab``: where it came from (git commit, lm, predictor kind,
optimizer, dataset, the metric before and after). Written atomically; read back with
``program.load``. A missing, unreadable or mismatched file is one FedlabError line naming the fix.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from fedlab.errors import FedlabError

HOW = "compile one with `python -m fedlab.optimize lm=…`, or drop agent.program"


def save_program(program, path, provenance: dict) -> Path:
    """Write ``program``'s state with ``provenance`` under metadata.fedlab, atomically."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.stem}.{os.getpid()}.tmp.json")
    try:
        program.save(str(tmp))  # DSPy's own JSON state (needs the .json suffix)
        state = json.loads(tmp.read_text(encoding="utf-8"))
        state.setdefault("metadata", {})["fedlab"] = {**provenance, "predictor": program.kind}
        tmp.write_text(json.dumps(state, indent=2, sort_keys=False) + "\n", encoding="utf-8")
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()
    return target


def read_provenance(path) -> dict:
    """metadata.fedlab of a program file ({} when it has none)."""
    state = _read(Path(path))
    return dict((state.get("metadata") or {}).get("fedlab") or {})


def _read(path: Path) -> dict:
    if not path.is_file():
        raise FedlabError(f"agent.program={path}: no such file: {HOW}")
    if path.suffix != ".json":
        raise FedlabError(f"agent.program={path}: a compiled program is a .json file: {HOW}")
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise FedlabError(f"agent.program={path} is not a readable program file "
                          f"({type(exc).__name__}): {HOW}") from None
    if not isinstance(state, dict) or "metadata" not in state:
        raise FedlabError(f"agent.program={path} is not a DSPy program state (no metadata): {HOW}")
    return state


def load_into(program, path) -> None:
    """Load the state at ``path`` into ``program`` (an AgentModule)."""
    path = Path(str(path))
    state = _read(path)
    kind = ((state.get("metadata") or {}).get("fedlab") or {}).get("predictor")
    if kind and kind != program.kind:
        raise FedlabError(f"agent.program={path} was compiled with lm.predictor={kind}; this config has "
                          f"lm.predictor={program.kind}: add lm.predictor={kind}")
    expected = {name for name, _ in program.named_parameters()}
    missing = sorted(expected - set(state))
    if missing:
        raise FedlabError(f"agent.program={path} holds no state for {', '.join(missing)}: "
                          f"it is not a compiled agent program of this kind: {HOW}")
    try:
        program.load(str(path))
    except Exception as exc:  # noqa: BLE001 — DSPy's own errors on a damaged state: one line
        said = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise FedlabError(f"agent.program={path} could not be loaded ({said}): {HOW}") from None

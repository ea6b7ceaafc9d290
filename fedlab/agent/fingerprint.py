"""What produced the answerability model's features, so a stale model is noticed.

The model (``conf/calibration/*.json``) is fitted on the agent's outputs: the retrieval, the
reader and the agent's evidence signals. ``fingerprint(cfg)`` hashes the code that computes them
(the ``FEATURE_CODE`` packages, docstrings and comments ignored) and the settings that steer it
(``SETTING_GROUPS``, without the model's own outputs and the execution-only keys);
``python -m fedlab.calibrate`` records it in the model's ``meta.fingerprint``. ``check_model``
compares the two: evaluate and ask say in one line when they differ and how to refit, and the gate
refuses to run on a stale model.
"""
from __future__ import annotations

import ast
import functools
import hashlib
import json
import logging
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)
PACKAGE = Path(__file__).resolve().parent.parent
FEATURE_CODE = ("agent", "lm", "query", "skills", "retrieval", "facts", "corpus", "chunking", "embedding", "index", "pipeline.py")
SETTING_GROUPS = ("agent", "lm", "retriever", "chunker", "embedder", "index", "bm25", "reranker")
# agent keys that are the model's own outputs or only read its confidence, never a feature
MODEL_KEYS = frozenset({"calibration", "answerability", "thresholds", "off_topic_threshold", "transport"})


def _sources() -> list[Path]:
    files = []
    for name in FEATURE_CODE:
        path = PACKAGE / name
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return [p for p in files if p.resolve() != Path(__file__).resolve()]


def _without_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
                    and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    return tree


@functools.cache
def code_fingerprints() -> tuple[str, str]:
    """(bytes, code): a hash of the feature code's files as they are, and one of their syntax
    trees without docstrings (a comment or docstring edit changes the first only)."""
    code = hashlib.sha256()
    for path in _sources():
        tree = _without_docstrings(ast.parse(path.read_bytes()))
        code.update(path.relative_to(PACKAGE).as_posix().encode() + b"\0" + ast.dump(tree).encode() + b"\0")
    return _raw_fingerprint(), code.hexdigest()[:16]


def _raw_fingerprint() -> str:
    raw = hashlib.sha256()
    for path in _sources():
        raw.update(path.relative_to(PACKAGE).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return raw.hexdigest()[:16]


def settings_fingerprint(cfg) -> str:
    """A hash of the settings that steer the features (absolute paths and execution keys left out)."""
    import os

    from omegaconf import OmegaConf

    from fedlab.tracking import EXECUTION_KEYS

    def clean(node, top: bool = False, group: str = ""):
        if isinstance(node, dict):
            return {k: clean(v) for k, v in sorted(node.items())
                    if k not in EXECUTION_KEYS and not (top and group == "agent" and k in MODEL_KEYS)}
        if isinstance(node, list):
            return [clean(v) for v in node]
        if isinstance(node, str) and os.path.isabs(node):
            return Path(node).name
        return node

    chosen = {}
    for group in SETTING_GROUPS:
        if group in cfg and cfg[group] is not None:
            node = OmegaConf.to_container(cfg[group], resolve=True)
            chosen[group] = clean(node, top=True, group=group)
    return hashlib.sha256(json.dumps(chosen, sort_keys=True, default=str).encode()).hexdigest()[:16]


def fingerprint(cfg) -> dict[str, str]:
    """What ``python -m fedlab.calibrate`` records in ``meta.fingerprint``."""
    raw, code = code_fingerprints()
    return {"code": code, "code_bytes": raw, "settings": settings_fingerprint(cfg)}


@dataclass(frozen=True)
class ModelCheck:
    stale: bool
    line: str  # one line: current, or what changed and how to refit


def refit_command(meta: dict, path: str) -> str:
    config = meta.get("config") or "production"
    sets = " ".join(f"--set {s}" for s in meta.get("sets") or [])
    return f"python -m fedlab.calibrate --config {config}{' ' + sets if sets else ''} --out {path}"


def check_model(cfg) -> ModelCheck:
    """Whether ``cfg.agent.calibration`` was fitted on the code and settings ``cfg`` runs now."""
    path = cfg.agent.get("calibration")
    try:
        meta = json.loads(Path(str(path)).read_text(encoding="utf-8")).get("meta") or {}
    except (OSError, ValueError, AttributeError):
        return ModelCheck(False, f"{path} cannot be read")
    shown = _shown(path)
    fix = f"refit it: `{refit_command(meta, shown)}` (or `make release`)"
    recorded = meta.get("fingerprint")
    if not isinstance(recorded, dict):
        return ModelCheck(True, f"{shown} records no fingerprint of the code and settings it was fitted on: {fix}")
    changed = []
    if recorded.get("code_bytes") != _raw_fingerprint() and recorded.get("code") != code_fingerprints()[1]:
        changed.append("the agent's code (" + ", ".join(FEATURE_CODE) + ")")
    if recorded.get("settings") != settings_fingerprint(cfg):
        changed.append("its settings (" + ", ".join(g for g in SETTING_GROUPS if g in cfg) + ")")
    if changed:
        return ModelCheck(True, f"{shown} is stale: {' and '.join(changed)} changed since it was fitted; {fix}")
    return ModelCheck(False, f"{shown} matches the code and settings it was fitted on")


def _shown(path) -> str:
    from fedlab.config import project_root

    try:
        return Path(str(path)).resolve().relative_to(Path(project_root()).resolve()).as_posix()
    except ValueError:
        return str(path)


_WARNED: set[str] = set()


def warn_if_stale(cfg) -> ModelCheck | None:
    """``check_model`` for a config with an agent and a model; a stale one is said once per
    process on the log (and so on stderr). None when there is no model to check."""
    if "agent" not in cfg or cfg.agent is None or not cfg.agent.get("calibration"):
        return None
    check = check_model(cfg)
    if check.stale and check.line not in _WARNED:
        _WARNED.add(check.line)
        log.warning("answerability model %s", check.line)
    return check

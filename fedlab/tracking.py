"""MLflow logging for evaluation runs and sweeps. Nothing else in fedlab imports mlflow."""
from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from fedlab.config import project_root
from fedlab.eval.metrics import mlflow_name

log = logging.getLogger(__name__)
SECRET_KEY_RE = re.compile(r"(api[_-]?key|token|secret|password)", re.I)
MAX_PARAM_LEN = 6000


def default_tracking_uri() -> str:
    return os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{Path(project_root()) / 'mlflow.db'}"


def flatten(cfg: Any, prefix: str = "") -> dict[str, str]:
    """Flat {dotted.key: str(value)} of a nested dict/list config; secrets are redacted."""
    out: dict[str, str] = {}
    if isinstance(cfg, dict):
        for k, v in cfg.items():
            out.update(flatten(v, f"{prefix}{k}."))
    elif isinstance(cfg, (list, tuple)) and any(isinstance(v, (dict, list)) for v in cfg):
        for i, v in enumerate(cfg):
            out.update(flatten(v, f"{prefix}{i}."))
    else:
        key = mlflow_name(prefix[:-1])
        value = "***" if SECRET_KEY_RE.search(key.rsplit(".", 1)[-1]) and cfg else cfg
        out[key] = json.dumps(value) if isinstance(value, (list, tuple)) else str(value)
    return out


def git_commit() -> str:
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=project_root(), capture_output=True, text=True, timeout=5
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=project_root(),
            capture_output=True, text=True, timeout=5,
        ).stdout.strip()
        return f"{sha}{'-dirty' if dirty else ''}" if sha else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _artifact_location(tracking_uri: str, experiment: str) -> str | None:
    """Artifacts of a local sqlite store live beside the database, not in ./mlruns of
    whatever directory the process happened to start in. Servers choose their own."""
    if tracking_uri.startswith("sqlite:///"):
        db = Path(tracking_uri.removeprefix("sqlite:///"))
        return (db.parent / "mlartifacts" / experiment).resolve().as_uri()
    return None


class Tracker:
    """A thin wrapper that owns the mlflow import and the experiment set-up."""

    def __init__(self, tracking_uri: str | None, experiment: str):
        import mlflow

        self.mlflow = mlflow
        self.tracking_uri = tracking_uri or default_tracking_uri()
        mlflow.set_tracking_uri(self.tracking_uri)
        if mlflow.get_experiment_by_name(experiment) is None:
            mlflow.create_experiment(experiment, artifact_location=_artifact_location(self.tracking_uri, experiment))
        mlflow.set_experiment(experiment)

    @contextmanager
    def run(self, name: str | None = None, parent_run_id: str | None = None, tags: dict | None = None) -> Iterator[Any]:
        kwargs: dict[str, Any] = {"run_name": name, "tags": tags or {}}
        if parent_run_id:
            kwargs["parent_run_id"] = parent_run_id
            kwargs["nested"] = True
        with self.mlflow.start_run(**kwargs) as run:
            yield run

    def log_params(self, params: dict[str, str]) -> None:
        items = [(k, v[:MAX_PARAM_LEN]) for k, v in params.items()]
        for i in range(0, len(items), 100):
            self.mlflow.log_params(dict(items[i : i + 100]))

    def log_metrics(self, metrics: dict[str, float], step: int | None = None) -> None:
        clean = {mlflow_name(k): float(v) for k, v in metrics.items() if v is not None}
        self.mlflow.log_metrics(clean, step=step)

    def log_artifact_dir(self, directory: str | Path, artifact_path: str | None = None) -> None:
        self.mlflow.log_artifacts(str(directory), artifact_path=artifact_path)

    def log_artifact(self, path: str | Path, artifact_path: str | None = None) -> None:
        self.mlflow.log_artifact(str(path), artifact_path=artifact_path)

    def log_text(self, text: str, artifact_file: str) -> None:
        self.mlflow.log_text(text, artifact_file)

    def log_figure(self, figure: Any, artifact_file: str) -> None:
        self.mlflow.log_figure(figure, artifact_file)


def staging_dir() -> tempfile.TemporaryDirectory:
    return tempfile.TemporaryDirectory(prefix="fedlab-artifacts-")

"""Running fedlab's commands as a user would: a subprocess in the checkout, offline, with no
tracking URI or API key leaking in from the developer's shell."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def cli_env(extra: dict | None = None) -> dict:
    env = dict(os.environ)
    env.update({"HF_HUB_OFFLINE": "1", "MLFLOW_DISABLE_TELEMETRY": "true", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
                "RAGAS_DO_NOT_TRACK": "true"})
    for key in ("MLFLOW_TRACKING_URI", "ANTHROPIC_API_KEY"):
        env.pop(key, None)
    env.update(extra or {})
    return env


def run_python(args: list[str], env: dict | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    """``python ARGS`` in the checkout; output captured as text."""
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=cli_env(env), capture_output=True, text=True,
                          timeout=timeout)

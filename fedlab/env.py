"""Process-wide defaults that keep fedlab offline-friendly and quiet.

Imported first by every entry point. Each switch is only a default: a value the user
exported wins.
"""
from __future__ import annotations

import os

TELEMETRY_OFF = {
    "MLFLOW_DISABLE_TELEMETRY": "true",
    "RAGAS_DO_NOT_TRACK": "true",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "ANONYMIZED_TELEMETRY": "False",  # chromadb
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "DO_NOT_TRACK": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "RAY_USAGE_STATS_ENABLED": "0",
}

# What a job running on another worker (a Ray node) needs from this process's environment: where
# data and runs live, and the offline/telemetry switches. Secrets are never forwarded: a
# cluster's nodes hold their own (ANTHROPIC_API_KEY, MLFLOW_TRACKING_TOKEN, ...).
FORWARDED_PREFIXES = ("FEDLAB_", "MLFLOW_", "HF_", "TRANSFORMERS_", "RAY_USAGE_STATS")
SECRET_MARKERS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL", "AUTH")
PROCESS_STATE = {"MLFLOW_RUN_ID", "MLFLOW_EXPERIMENT_ID"}  # this process's active run, not a setting


def job_env() -> dict[str, str]:
    """The environment variables a remote job inherits from the process that launched it."""
    names = set(TELEMETRY_OFF) | {k for k in os.environ if k.startswith(FORWARDED_PREFIXES)}
    return {k: os.environ[k] for k in sorted(names - PROCESS_STATE)
            if k in os.environ and not any(m in k.upper() for m in SECRET_MARKERS)}


def apply_defaults() -> None:
    for key, value in TELEMETRY_OFF.items():
        os.environ.setdefault(key, value)


apply_defaults()

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
}


def apply_defaults() -> None:
    for key, value in TELEMETRY_OFF.items():
        os.environ.setdefault(key, value)


apply_defaults()

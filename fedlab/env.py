"""Process-wide defaults that keep fedlab offline-friendly and quiet.

Imported first by every entry point. Each switch is only a default: a value the user
exported wins.
"""
from __future__ import annotations

import logging
import os
import re

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


# Credentials written into a URI (MLFLOW_TRACKING_URI=http://alice:PASSWORD@host): the userinfo up to
# the netloc's last "@" (a password may hold one), before any "/", "?", "#" or space.
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*://)(?P<userinfo>[^\s/?#]+)@")


def mask_credentials(text: str) -> str:
    """``text`` with the password of every URI in it masked (``http://alice:***@host``), and a
    userinfo with no password (a token: ``https://TOKEN@host``) masked whole (``https://***@host``)."""
    if "@" not in text or "://" not in text:
        return text

    def masked(m: re.Match) -> str:
        user, colon, _ = m["userinfo"].partition(":")
        return f"{m['scheme']}{user}:***@" if colon else f"{m['scheme']}***@"

    return _USERINFO.sub(masked, text)


def mask_log_records() -> None:
    """Every log record of the process is made with URI credentials masked (httpx logs each
    request's URL; MLflow and Hydra may log the tracking URI): installed once, on import."""
    previous = logging.getLogRecordFactory()
    if getattr(previous, "masks_credentials", False):
        return

    def factory(*args, **kwargs):
        record = previous(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 — a malformed record is logging's to report
            return record
        shown = mask_credentials(message)
        if shown != message:
            record.msg, record.args = shown, None
        return record

    factory.masks_credentials = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(factory)


apply_defaults()
mask_log_records()

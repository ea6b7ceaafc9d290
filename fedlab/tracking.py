"""MLflow logging for evaluation runs and sweeps. Nothing else in fedlab imports mlflow."""
from __future__ import annotations

import json
import logging
import os
import re
import subprocess
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any, Iterator

from fedlab.config import project_root
from fedlab.env import mask_credentials

log = logging.getLogger(__name__)
# Redaction is by exact key name and by value (any secret held in the environment), never by a
# substring of a name: `lm.max_tokens` is a setting, not a secret.
SECRET_KEYS = frozenset({"api_key", "apikey", "auth_token", "access_token", "token", "secret", "secret_key",
                         "password", "passwd", "anthropic_api_key", "openai_api_key"})
SECRET_ENV_RE = re.compile(r"(API_KEY|AUTH_TOKEN|ACCESS_TOKEN|SECRET|PASSWORD)$", re.I)
MAX_PARAM_LEN = 6000
# Groups whose settings can change what a run measures; the rest (paths, tracking, crawler,
# Hydra) stay in the config.yaml artifact only.
RESULT_GROUPS = ("corpus", "chunker", "embedder", "index", "bm25", "retriever", "reranker", "dataset", "agent",
                 "lm", "eval")
# Settings inside those groups that change how fast a run goes, never what it measures.
EXECUTION_KEYS = frozenset({"progress", "device", "batch_size", "threads", "dir", "raw_cache_dir", "mirror",
                            "fetch", "base_url", "allow_shrink", "volatile_ttl_h", "metrics_out", "transport",
                            "concurrency", "timeout_s", "path", "max_doc_chars", "traces", "trace_sample", "api_base",
                            "key_env"})


def mlflow_name(name: str) -> str:
    """A metric or param name MLflow accepts: ``@`` becomes ``_at_`` (``recall@5`` -> ``recall_at_5``)."""
    return name.replace("@", "_at_")


def metric_from_mlflow_name(name: str) -> str:
    """The metric name as fedlab spells it, from the name it was logged under."""
    return name.replace("_at_", "@")


def secret_values() -> set[str]:
    """Values of secret-looking environment variables (long enough not to match by chance)."""
    return {v for k, v in os.environ.items() if SECRET_ENV_RE.search(k) and len(v) >= 8}


def redact(key: str, value: Any, secrets: set[str] | None = None) -> Any:
    """``***`` for a secret: a key named exactly like one, or a value that contains one; a URI
    with credentials in it keeps its host with the password masked (``http://alice:***@host``)."""
    if value in (None, ""):
        return value
    if key.rsplit(".", 1)[-1].lower() in SECRET_KEYS:
        return "***"
    text = str(value)
    for secret in secrets if secrets is not None else secret_values():
        if secret in text:
            return "***"
    if isinstance(value, str) and mask_credentials(value) != value:
        return mask_credentials(value)
    return value


def default_tracking_uri() -> str:
    return os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{Path(project_root()) / 'mlflow.db'}"


def flatten(cfg: Any, prefix: str = "", secrets: set[str] | None = None) -> dict[str, str]:
    """Flat {dotted.key: str(value)} of a nested dict/list config; secrets are redacted."""
    secrets = secret_values() if secrets is None else secrets
    out: dict[str, str] = {}
    if isinstance(cfg, dict):
        for k, v in cfg.items():
            out.update(flatten(v, f"{prefix}{k}.", secrets))
    elif isinstance(cfg, (list, tuple)) and any(isinstance(v, (dict, list)) for v in cfg):
        for i, v in enumerate(cfg):
            out.update(flatten(v, f"{prefix}{i}.", secrets))
    else:
        key = mlflow_name(prefix[:-1])
        value = redact(key, cfg, secrets)
        out[key] = json.dumps(value) if isinstance(value, (list, tuple)) else str(value)
    return out


def _short_target(target: str) -> str:
    return target.rsplit(".", 1)[-1]


def _result_setting(key: str, value: Any, root: Path) -> tuple[bool, Any]:
    """(keep?, value as logged): no Hydra plumbing, no execution settings, no absolute paths
    (a path inside the checkout is logged relative to it: conf/calibration/production.json)."""
    if any(seg.startswith("_") or seg in EXECUTION_KEYS for seg in key.split(".")[1:]):
        return False, None
    if isinstance(value, str) and os.path.isabs(value):
        try:
            return True, Path(value).resolve().relative_to(root).as_posix()
        except ValueError:
            return False, None
    return True, value


def run_params(cfg: dict, choices: dict[str, str] | None = None) -> dict[str, str]:
    """The params of an evaluation run: every setting of the groups the run uses that can change
    its result, and each group's choice (``embedder=minilm``). An embedder on a BM25 run, the
    crawler's timeouts, paths and ``_target_`` keys are left out (they stay in config.yaml)."""
    choices = choices or {}
    kind = (cfg.get("retriever") or {}).get("kind")
    used = [g for g in RESULT_GROUPS if isinstance(cfg.get(g), dict)]
    if kind == "bm25":
        used = [g for g in used if g not in ("embedder", "index")]
    elif kind == "dense":
        used = [g for g in used if g != "bm25"]
    root = Path(project_root()).resolve()
    params: dict[str, Any] = {}
    for group in used:
        node = cfg[group]
        choice = choices.get(group) or (_short_target(node["_target_"]) if "_target_" in node else None)
        if choice and group not in ("corpus", "dataset", "eval"):
            params[group] = choice
        off = _switched_off(node, f"{group}.")
        for key, value in flatten(node, f"{group}.").items():
            if key.startswith("eval.judge") and not cfg.get("agent"):
                continue  # the answer judge matters only when answers are evaluated
            if any(key.startswith(prefix) and key not in switches for prefix, switches in off):
                continue  # a setting of an option switched off cannot change the result
            keep, shown = _result_setting(key, value, root)
            if keep:
                params[key] = shown
    if isinstance(cfg.get("dataset"), dict) and cfg["dataset"].get("path"):
        params["dataset.file"] = Path(str(cfg["dataset"]["path"])).name
    return {k: str(v) for k, v in params.items()}


def _switched_off(node: dict, prefix: str) -> list[tuple[str, set[str]]]:
    """(``prefix.option.``, its switch keys) of every option block below ``node`` that is off:
    ``enabled: false`` or ``kind: null``. Only its switch is a param then."""
    found = []
    for name, value in node.items():
        if not isinstance(value, dict):
            continue
        here = f"{prefix}{name}."
        if value.get("enabled", True) is False or ("kind" in value and value["kind"] is None):
            found.append((here, {f"{here}enabled", f"{here}kind"}))
        else:
            found += _switched_off(value, here)
    return found


def rounded(name: str, value: float) -> float:
    """A metric at the precision a reader can use: milliseconds and seconds to 0.01, everything
    else (rates, scores, counts) to 4 decimals. Per-question artifacts keep full precision."""
    if name.startswith(("latency_", "build_s", "wait_s")) or name.endswith("_s") or "_ms" in name:
        return round(float(value), 2)
    return round(float(value), 4)


def mask_hydra_record() -> None:
    """Hydra writes a job's config and command-line overrides (``.hydra/*.yaml``, a sweep's
    ``multirun.yaml``) before the task runs: a tracking URI given with credentials on the command
    line (``mlflow.tracking_uri=http://alice:PASSWORD@host``) is masked in them too."""
    from hydra.core.hydra_config import HydraConfig

    from fedlab.io import write_text

    try:
        hc = HydraConfig.get()
    except ValueError:
        return
    files = list(Path(hc.runtime.output_dir, hc.output_subdir or ".hydra").glob("*.yaml"))
    files.append(Path(hc.sweep.dir) / "multirun.yaml")
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if mask_credentials(text) != text:
            write_text(path, mask_credentials(text))


def check_tracking_store(uri: str, timeout_s: float = 5.0) -> None:
    """Fail fast, in one line, when the tracking store cannot be reached — before any work is
    done, not after an evaluation has run (MLflow's client would retry for minutes)."""
    from fedlab.errors import FedlabError

    shown = mask_credentials(uri)  # what a message may say of it
    if uri.startswith(("http://", "https://")):
        import httpx

        try:
            resp = httpx.get(uri.rstrip("/") + "/health", timeout=timeout_s)
        except httpx.HTTPError as exc:
            raise FedlabError(f"the MLflow tracking server {shown} cannot be reached ({type(exc).__name__}): start it, "
                              "or unset MLFLOW_TRACKING_URI to log to the local store") from None
        if resp.status_code >= 500:
            raise FedlabError(f"the MLflow tracking server {shown} answers HTTP {resp.status_code} on /health: "
                              "check the server, or unset MLFLOW_TRACKING_URI to log to the local store")
    elif _is_file_store(uri) and os.environ.get("MLFLOW_ALLOW_FILE_STORE", "").lower() != "true":
        raise FedlabError(f"the MLflow tracking URI {shown} is a file store, which MLflow 3 refuses: use a database, "
                          f"sqlite:///{_file_store_dir(uri)}/mlflow.db (or set MLFLOW_ALLOW_FILE_STORE=true)")
    elif uri.startswith("sqlite:///"):
        db = Path(uri.removeprefix("sqlite:///"))
        if db.exists() and not db.is_file():
            raise FedlabError(f"the MLflow store {db} is not a file: point MLFLOW_TRACKING_URI at a sqlite file")
        try:
            with open(db, "rb") as fh:
                head = fh.read(16)
        except OSError:
            head = b""
        if head and head != SQLITE_HEADER:  # an empty file is a store SQLite has yet to write
            raise FedlabError(f"the MLflow store {db} is not an SQLite database (damaged, or another kind of file): "
                              f"{DAMAGED_FIX}")
        try:
            db.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise FedlabError(f"cannot create the MLflow store's directory {db.parent} ({exc.strerror}): "
                              "point MLFLOW_TRACKING_URI elsewhere") from None


SQLITE_HEADER = b"SQLite format 3\x00"
DAMAGED_FIX = ("restore it from a backup, or point MLFLOW_TRACKING_URI (or mlflow.tracking_uri=) at a new store, "
               "e.g. sqlite:///mlflow-new.db")
_DAMAGE = ("file is not a database", "database disk image is malformed", "malformed", "file is encrypted")


def damaged_store(exc: BaseException) -> str | None:
    """What SQLite said of a damaged store ("database disk image is malformed", "file is not a
    database"), from an exception MLflow or SQLAlchemy raised with it somewhere in its chain; None
    for any other failure (a locked store, a server down)."""
    seen, todo = set(), [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        text = " ".join(str(e).split())
        for marker in _DAMAGE:
            if marker in text.lower():
                return marker
        todo += [e.__cause__, e.__context__, getattr(e, "orig", None)]
    return None


@contextmanager
def store_errors(uri: str) -> Iterator[None]:
    """A damaged store, whatever MLflow call meets it, as one FedlabError line (not MLflow's and
    SQLAlchemy's 80-line traceback, nor a first line that says only "Query-invoked autoflush")."""
    from fedlab.errors import FedlabError

    try:
        yield
    except FedlabError:
        raise
    except Exception as exc:  # noqa: BLE001 — re-raised unless it is the store's damage
        why = damaged_store(exc)
        if why is None:
            raise
        raise FedlabError(f"the MLflow store {mask_credentials(uri)} is damaged (SQLite: {why}): {DAMAGED_FIX}") from None


def _is_file_store(uri: str) -> bool:
    """file:… or a plain path (no scheme); "databricks" is a named workspace, not a path."""
    return uri.startswith("file:") or ("://" not in uri and not uri.startswith("databricks"))


def _file_store_dir(uri: str) -> str:
    """The directory a file-store URI names (file:///x/mlruns, file:x, or a plain path), absolute."""
    from urllib.parse import urlparse

    path = urlparse(uri).path if uri.startswith("file:") else uri
    return str(Path(path or ".").resolve().parent)


# -- whose process a RUNNING run is ---------------------------------------------------------------
# Every run fedlab opens carries the host and process that run it, so that a later process can tell
# a run that is still going (leave it alone) from one whose process is gone (killed with -9, a
# machine rebooted: MLflow would show it RUNNING for ever).
HOST_TAG, BOOT_TAG, PID_TAG, PID_START_TAG = "fedlab.host", "fedlab.boot", "fedlab.pid", "fedlab.pid_start"


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def _proc_stat(pid: int) -> tuple[str, str] | None:
    """(state, start time in clock ticks since boot) of a process, from /proc (None elsewhere)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2:].split()  # after "pid (comm) "; the command may hold spaces
    return (fields[0], fields[19]) if len(fields) > 19 else None


def process_tags(pid: int | None = None) -> dict[str, str]:
    """The tags naming this process (or ``pid``) on this host, as ``process_alive`` reads them."""
    import socket

    pid = os.getpid() if pid is None else pid
    stat = _proc_stat(pid)
    return {HOST_TAG: socket.gethostname(), BOOT_TAG: _boot_id(), PID_TAG: str(pid),
            PID_START_TAG: stat[1] if stat else ""}


def process_alive(tags: dict[str, str]) -> bool | None:
    """Whether the process a run's tags name still runs: True, False (gone: no such process, a
    zombie, the pid reused by a later process, or the host rebooted since), or None when it cannot
    be told from here (no such tags: an older fedlab or another tool; another host)."""
    import socket

    host, pid = tags.get(HOST_TAG), tags.get(PID_TAG)
    if not host or not pid or not pid.isdigit():
        return None
    if host != socket.gethostname():
        return None
    boot, now_boot = tags.get(BOOT_TAG), _boot_id()
    if boot and now_boot and boot != now_boot:
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it exists
        pass
    except (OverflowError, ValueError, OSError):
        return None
    stat = _proc_stat(int(pid))
    if stat is None:
        return True
    state, started = stat
    if state == "Z":
        return False
    return not (tags.get(PID_START_TAG) and started != tags[PID_START_TAG])


def close_abandoned_runs(client, experiment_id: str) -> list:
    """Mark KILLED the experiment's RUNNING runs whose process is gone (``process_alive`` False):
    an evaluation killed with -9 left its run RUNNING. Runs of live processes, of other hosts and
    without process tags are left as they are. Returns the runs it closed."""
    closed = []
    for run in client.search_runs([experiment_id], filter_string="attributes.status = 'RUNNING'", max_results=1000):
        if process_alive(run.data.tags) is False:
            client.set_terminated(run.info.run_id, "KILLED")
            closed.append(run)
    return closed


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


EXPERIMENT_DESCRIPTION = (
    "fedlab evaluation runs on the FOMC statements and minutes: one run per pipeline config "
    "(retrieval metrics on the question set, latency measured in the run, answer measures when "
    "an agent is evaluated). Sweep parent runs (tag fedlab.sweep=parent) describe their study.")


def _setting_up(uri: str):
    """A lock beside a local sqlite store, held while a process sets it up: MLflow creates and
    migrates a new store's tables, and creates a missing experiment, with no lock of its own, so
    two evaluations started at once on a fresh checkout fail ("table … already exists")."""
    if not uri.startswith("sqlite:///"):
        return nullcontext()
    from filelock import FileLock  # the cache's lock (fedlab.cache)

    return FileLock(uri.removeprefix("sqlite:///") + ".lock")


class Tracker:
    """A thin wrapper that owns the mlflow import and the experiment set-up."""

    def __init__(self, tracking_uri: str | None, experiment: str, check: bool = True):
        self.tracking_uri = tracking_uri or default_tracking_uri()
        self.shown_uri = mask_credentials(self.tracking_uri)  # the URI as messages say it
        if self.shown_uri != self.tracking_uri:  # MLflow prints "View run … at <the URI>" on stdout
            os.environ["MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT"] = "true"
        if check:
            check_tracking_store(self.tracking_uri)
        import mlflow

        self.mlflow = mlflow
        mlflow.set_tracking_uri(self.tracking_uri)
        with store_errors(self.tracking_uri), _setting_up(self.tracking_uri):
            existing = mlflow.get_experiment_by_name(experiment)
            if existing is None:
                exp_id = mlflow.create_experiment(
                    experiment, artifact_location=_artifact_location(self.tracking_uri, experiment),
                    tags={"mlflow.note.content": EXPERIMENT_DESCRIPTION})
            else:
                exp_id = existing.experiment_id
                if "mlflow.note.content" not in (existing.tags or {}):
                    mlflow.MlflowClient().set_experiment_tag(exp_id, "mlflow.note.content", EXPERIMENT_DESCRIPTION)
        self.experiment_id = exp_id
        mlflow.set_experiment(experiment)

    @classmethod
    def shared(cls, tracking_uri: str | None, experiment: str) -> "Tracker":
        """A Tracker for (store, experiment), set up once per process (the configs of a sweep
        share it); the store is still checked, in one line, every time."""
        from fedlab import memo

        uri = tracking_uri or default_tracking_uri()
        check_tracking_store(uri)
        store = None  # a local store recreated since (same path, new file) gets a new Tracker
        if uri.startswith("sqlite:///") and Path(uri.removeprefix("sqlite:///")).is_file():
            st = Path(uri.removeprefix("sqlite:///")).stat()
            store = (st.st_dev, st.st_ino)
        tracker = memo.remember("tracker", (uri, experiment, store), lambda: cls(uri, experiment, check=False))
        tracker.mlflow.set_tracking_uri(tracker.tracking_uri)
        tracker.mlflow.set_experiment(experiment_id=tracker.experiment_id)
        return tracker

    def close_abandoned(self) -> None:
        """``close_abandoned_runs`` of this store's experiment, once per process (fedlab.memo), each
        closed run named in a warning."""
        from fedlab import memo

        def close() -> bool:
            try:
                closed = close_abandoned_runs(self.mlflow.MlflowClient(), self.experiment_id)
            except Exception as exc:  # noqa: BLE001 — housekeeping: the run itself goes on
                log.warning("could not check the store for runs left RUNNING: %s", type(exc).__name__)
                return False
            for run in closed:
                log.warning("run %s (%s) was left RUNNING by process %s on this host, which is gone: marked KILLED",
                            run.info.run_id, run.info.run_name, run.data.tags.get(PID_TAG))
            return True

        memo.remember("abandoned-runs-closed", (self.tracking_uri, self.experiment_id), close)

    @contextmanager
    def run(self, name: str | None = None, parent_run_id: str | None = None, tags: dict | None = None) -> Iterator[Any]:
        kwargs: dict[str, Any] = {"run_name": name, "tags": {**process_tags(), **(tags or {})}}
        if parent_run_id:
            kwargs["parent_run_id"] = parent_run_id
            kwargs["nested"] = True
        with store_errors(self.tracking_uri):
            run = self.mlflow.start_run(**kwargs)
        try:
            yield run
        except KeyboardInterrupt:
            self._end("KILLED")
            raise
        except BaseException:
            self._end("FAILED")
            raise
        self.mlflow.end_run("FINISHED")

    def _end(self, status: str) -> None:
        """Close the active run on the way out of a failure; the failure itself is what matters."""
        try:
            self.mlflow.end_run(status)
        except Exception as exc:  # noqa: BLE001 — the store may be what failed
            log.warning("could not mark the MLflow run %s: %s", status, type(exc).__name__)

    def log_params(self, params: dict[str, str]) -> None:
        items = [(k, v[:MAX_PARAM_LEN]) for k, v in params.items()]
        for i in range(0, len(items), 100):
            self.mlflow.log_params(dict(items[i : i + 100]))

    def log_metrics(self, metrics: dict[str, float], step: int | None = None, model_id: str | None = None,
                    dataset: Any = None) -> None:
        """The metrics, on the active run; with ``model_id`` (and ``dataset``) also the model's
        (an agent version's evaluation on that dataset)."""
        clean = {mlflow_name(k): rounded(k, v) for k, v in metrics.items() if v is not None}
        extra = {"model_id": model_id, "dataset": dataset} if model_id else {}
        self.mlflow.log_metrics(clean, step=step, **extra)

    def log_artifact_dir(self, directory: str | Path, artifact_path: str | None = None) -> None:
        self.mlflow.log_artifacts(str(directory), artifact_path=artifact_path)

    def log_artifact(self, path: str | Path, artifact_path: str | None = None) -> None:
        self.mlflow.log_artifact(str(path), artifact_path=artifact_path)

    def set_tags(self, tags: dict[str, str]) -> None:
        self.mlflow.set_tags(tags)

    def log_text(self, text: str, artifact_file: str) -> None:
        self.mlflow.log_text(text, artifact_file)

    def log_figure(self, figure: Any, artifact_file: str) -> None:
        self.mlflow.log_figure(figure, artifact_file)

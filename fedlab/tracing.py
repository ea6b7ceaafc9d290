"""MLflow's GenAI side of an evaluation: a trace per question, its assessments, the question set
as the run's dataset input, and agent versions as LoggedModels.

- ``Tracer`` records the ``fedlab.spans`` hooks as MLflow traces of the active run: the root span
  per question (its inputs, the answer, abstention and confidence as outputs), a span per step
  (assess_query, each search as a RETRIEVER span whose documents carry doc_id, chunk id, score and
  meeting date, the reader, citation validation), and the per-question measures as feedback and
  the question set's answer key as expectations on the trace. ``eval.traces`` chooses which
  questions are traced: all, a sample of ``eval.trace_sample`` (the same questions in every run,
  so that runs compare question by question), or none.
- ``traced_ask``: ``python -m fedlab.ask --trace``, one answer as a trace (no run).
- ``log_dataset`` logs the question set as the run's dataset input (name, the set's hash as digest,
  its file as source, role and split), which the UI's Dataset column shows;
  ``register_question_set`` makes a registered set an evaluation dataset with its answer key.
- ``log_agent_version`` / ``find_agent_version``: the exported production config as a LoggedModel
  (its config and answerability model as artifacts, the sweep run it came from), and the one an
  evaluation of that config is linked to.

Secrets never reach a trace: every value is redacted with ``fedlab.tracking.redact``. MLflow is
imported lazily, by what runs with a tracking store: the agent and ``ask`` without ``--trace``
never import it (fedlab.spans is all they know of tracing).
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Sequence

from fedlab import spans
from fedlab.errors import FedlabError
from fedlab.tracking import redact, secret_values

log = logging.getLogger(__name__)
# MLflow says at exit that it flushes its trace queue, which Tracer.flush has already done
logging.getLogger("mlflow.tracing.export.async_export_queue").setLevel(logging.WARNING)
TRACE_MODES = ("all", "sample", "off")
PASSAGE_CHARS = 2000  # a retrieved passage's text in a trace (a chunk is shorter)
AGENT_MODEL_NAME = "fedlab-production"
# the config groups that make an agent version (its pipeline, its agent and its reader)
VERSION_GROUPS = ("chunker", "embedder", "index", "bm25", "retriever", "reranker", "agent", "lm")
VERSION_TAG = "fedlab.version_key"
NO_OP_TRACE_ID = "MLFLOW_NO_OP_SPAN_TRACE_ID"  # mlflow.entities.span.NO_OP_SPAN_TRACE_ID: a span MLflow did not record


def trace_mode(mode: Any) -> Any:
    """``eval.traces`` as given: YAML reads a bare ``off`` as false, which is what it says."""
    return "off" if mode is False else mode


def check_traces(mode: Any, sample: Any = 20) -> None:
    """``eval.traces`` and ``eval.trace_sample``, in one line each when wrong."""
    mode = trace_mode(mode)
    if mode not in TRACE_MODES:
        raise FedlabError(f"eval.traces={mode!r}: use one of {', '.join(TRACE_MODES)} "
                          "(all: every question; sample: eval.trace_sample of them; off: none)")
    if mode == "sample" and (isinstance(sample, bool) or not isinstance(sample, int) or sample < 1):
        raise FedlabError(f"eval.trace_sample={sample!r}: give the number of questions to trace, a whole number ≥ 1")


def sample_ids(ids: Sequence[str], n: int) -> set[str]:
    """``n`` of ``ids``, the same ones in every run that has them (ordered by a hash of the id)."""
    return set(sorted(ids, key=lambda i: hashlib.sha1(str(i).encode()).hexdigest())[:n])


def documents(result: Any) -> list[dict]:
    """A search's hits in MLflow's retriever document format (page_content, metadata, id)."""
    out = []
    for i, hit in enumerate(getattr(result, "hits", None) or [], start=1):
        chunk = hit.chunk
        out.append({
            "page_content": chunk.text[:PASSAGE_CHARS],
            "metadata": {"doc_uri": chunk.doc_id, "doc_id": chunk.doc_id, "chunk_id": chunk.chunk_id,
                         "score": round(float(hit.score), 6), "rank": hit.rank or i,
                         "meeting_date": chunk.meeting_date, "doc_type": chunk.doc_type, "section": chunk.section},
            "id": chunk.chunk_id,
        })
    return out


class _Recorded(spans.Span):
    """A live MLflow span behind the ``fedlab.spans.Span`` interface."""

    recording = True

    def __init__(self, span: Any, tracer: "Tracer", root: bool = False):
        self._span = span
        self._tracer = tracer
        self._root = root

    @property
    def trace_id(self) -> str:
        return self._span.trace_id

    def set_inputs(self, inputs: Any) -> None:
        self._span.set_inputs(self._tracer.clean(inputs))

    def set_outputs(self, outputs: Any) -> None:
        self._span.set_outputs(self._tracer.clean(outputs))
        if self._root and isinstance(outputs, dict) and isinstance(outputs.get("answer"), str):
            self._tracer.preview(response=outputs["answer"])

    def set_attributes(self, attributes: dict[str, Any]) -> None:
        self._span.set_attributes(self._tracer.clean(attributes))

    def retrieved(self, result: Any) -> None:
        self._span.set_outputs(self._tracer.clean(documents(result)))
        hint = getattr(result, "hint", None)
        attributes = {"k_used": getattr(result, "k_used", None),
                      "timings_ms": {k: round(v, 3) for k, v in (getattr(result, "timings", None) or {}).items()}}
        if hint is not None:
            attributes["date_hint"] = {"date_from": hint.date_from, "date_to": hint.date_to, "scope": hint.scope}
        self._span.set_attributes(attributes)
        if self._root:
            hits = getattr(result, "hits", None) or []
            self._tracer.preview(response=f"{len(hits)} passages: " + ", ".join(
                f"{h.chunk.doc_id} ({h.chunk.meeting_date})" for h in hits[:5]) + (" …" if len(hits) > 5 else ""))

    def assess(self, measures: Sequence[tuple]) -> None:
        self._tracer.log_assessments(self._span.trace_id, measures, expectation=False)

    def expect(self, expectations: Sequence[tuple]) -> None:
        self._tracer.log_assessments(self._span.trace_id, expectations, expectation=True)


class Tracer:
    """The recorder of ``fedlab.spans`` for one evaluation (or one ask): a trace per question
    it ``wants``, in the active experiment, linked to the active run and to ``model_id`` (an
    agent version) when given. Tracing never fails the evaluation: MLflow turns a span it cannot
    record into a no-op, and a trace it cannot store into a warning on the log."""

    def __init__(self, mode: str = "all", sample: int = 20, ids: Sequence[str] = (),
                 tags: dict[str, str] | None = None, model_id: str | None = None, source: str = "fedlab"):
        mode = trace_mode(mode)
        check_traces(mode, sample)
        # MLflow drops a trace when its export queue (1000 tasks) is full: an evaluation of a
        # thousand questions on a slow store must keep every one
        os.environ.setdefault("MLFLOW_ASYNC_TRACE_LOGGING_MAX_QUEUE_SIZE", "100000")
        # ... and writes with ten threads by default: a sqlite store takes one writer at a time, and a
        # server's connection pool (10) overflows with a warning; two keep up with an evaluation
        os.environ.setdefault("MLFLOW_ASYNC_TRACE_LOGGING_MAX_WORKERS", "2")
        import mlflow
        from mlflow.entities import AssessmentSource, AssessmentSourceType

        self.mlflow = mlflow
        self.mode = mode
        self.chosen = None if mode == "all" else sample_ids(list(ids), int(sample)) if mode == "sample" else set()
        self.tags = {k: str(v) for k, v in (tags or {}).items()}
        self.model_id = model_id
        self._secrets = secret_values()
        self._code = AssessmentSource(source_type=AssessmentSourceType.CODE, source_id=source)
        self._human = AssessmentSource(source_type=AssessmentSourceType.HUMAN, source_id="question set")
        self.trace_ids: dict[str, str] = {}  # question id (an ask's: "ask") -> its trace
        self.shown_uri = ""  # the store, as messages say it

    # -- what fedlab.spans asks of a recorder ------------------------------------------------
    def wants(self, qid: str | None) -> bool:
        return self.mode != "off" and (self.chosen is None or qid in self.chosen)

    @contextmanager
    def root(self, name: str, kind: str, inputs: dict[str, Any]) -> Iterator[_Recorded]:
        with self.mlflow.start_span(name, span_type=kind) as span:
            recorded = _Recorded(span, self, root=True)
            recorded.set_inputs(inputs)
            qid, question = inputs.get("id"), inputs.get("question")
            try:
                self.mlflow.update_current_trace(
                    tags={**self.tags, **({"fedlab.question_id": str(qid)} if qid is not None else {})},
                    client_request_id=None if qid is None else str(qid),
                    request_preview=None if question is None else self.clean(str(question)),
                    model_id=self.model_id)
            except Exception as exc:  # noqa: BLE001 — a trace without its tags is still a trace
                log.debug("could not tag the trace: %s", exc)
            if getattr(span, "trace_id", None) and span.trace_id != NO_OP_TRACE_ID:  # not a span MLflow left out
                self.trace_ids["ask" if qid is None else str(qid)] = span.trace_id
            yield recorded

    @contextmanager
    def span(self, name: str, kind: str, inputs: dict[str, Any] | None) -> Iterator[_Recorded]:
        with self.mlflow.start_span(name, span_type=kind) as span:
            recorded = _Recorded(span, self)
            if inputs is not None:
                recorded.set_inputs(inputs)
            yield recorded

    # -- helpers ---------------------------------------------------------------------------
    def preview(self, response: str) -> None:
        """The response the trace list shows (the active trace's)."""
        try:
            self.mlflow.update_current_trace(response_preview=self.clean(response)[:1000])
        except Exception as exc:  # noqa: BLE001
            log.debug("could not set the trace's preview: %s", exc)

    def clean(self, value: Any, key: str = "") -> Any:
        """``value`` with every secret redacted (by key name, by a secret's value, a URI's password)."""
        if isinstance(value, dict):
            return {k: self.clean(v, str(k)) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.clean(v, key) for v in value]
        if isinstance(value, str) or key:
            return redact(key, value, self._secrets)
        return value

    def log_assessments(self, trace_id: str, items: Sequence[tuple], expectation: bool) -> None:
        """Feedback (or expectations) on the active trace: (name, value, rationale[, source id])
        each; a value of None is left out. Logged while the trace is open, they are stored with it."""
        from mlflow.entities import AssessmentSource, AssessmentSourceType

        for item in items:
            name, value, rationale = item[:3]
            if value is None:
                continue
            try:
                if expectation:
                    self.mlflow.log_expectation(trace_id=trace_id, name=name, value=self.clean(value, name),
                                                source=self._human)
                else:
                    source = self._code if len(item) < 4 else AssessmentSource(
                        source_type=AssessmentSourceType.CODE, source_id=item[3])
                    self.mlflow.log_feedback(trace_id=trace_id, name=name, value=self.clean(value, name),
                                             rationale=None if rationale is None else self.clean(str(rationale)),
                                             source=source)
            except Exception as exc:  # noqa: BLE001 — a measure that cannot be logged is still in the artifacts
                log.warning("could not log %s on trace %s: %s", name, trace_id, type(exc).__name__)

    def flush(self) -> None:
        """Wait until the traces recorded so far are in the store."""
        try:
            self.mlflow.flush_trace_async_logging()
        except Exception as exc:  # noqa: BLE001
            log.warning("could not flush the traces: %s", type(exc).__name__)


def open_tracer(cfg, questions: Sequence[Any], tags: dict[str, str] | None = None,
                model_id: str | None = None) -> Tracer | None:
    """The Tracer ``cfg.eval.traces`` asks for over ``questions`` (None: off)."""
    from omegaconf import OmegaConf

    mode = trace_mode(OmegaConf.select(cfg, "eval.traces", default="all"))
    sample = OmegaConf.select(cfg, "eval.trace_sample", default=20)
    check_traces(mode, sample)
    if mode == "off":
        return None
    return Tracer(mode, sample, [q.id for q in questions], tags=tags, model_id=model_id)


@contextmanager
def traced_ask(cfg) -> Iterator[Tracer]:
    """``python -m fedlab.ask --trace``: the question answered inside is a trace in the config's
    tracking store and experiment (no run), linked to the agent version of the config when it was
    exported there. ``tracer.trace_ids`` holds its id afterwards (key ``ask``)."""
    from omegaconf import OmegaConf

    from fedlab.tracking import Tracker

    if "mlflow" not in cfg or cfg.mlflow is None:
        raise FedlabError("--trace needs a tracking store and this config has no mlflow group: add "
                          "--set +mlflow=default (MLFLOW_TRACKING_URI, else the local mlflow.db)")
    tracker = Tracker(cfg.mlflow.tracking_uri, cfg.mlflow.experiment)  # an unreachable store: one line
    model_id = find_agent_version(tracker.mlflow, OmegaConf.to_container(cfg, resolve=True))
    tracer = Tracer("all", tags={"fedlab.source": "ask"}, model_id=model_id, source="fedlab.ask")
    tracer.shown_uri = tracker.shown_uri
    with spans.recording(tracer):
        yield tracer
    tracer.flush()


# -- the question set as a dataset input -----------------------------------------------------
def log_dataset(mlflow: Any, questions: Sequence[Any], name: str, digest: str, source: str | None,
                role: str, split: str, ids: str | None = None) -> Any:
    """The run's dataset input: the questions (id, question, category, answerable, split, key
    facts) as a table named ``name`` with ``digest`` (the set's hash), read from ``source``;
    ``role`` is its context (dev, heldout, test), and role, split and ids its tags. Returns the dataset."""
    import pandas as pd

    frame = pd.DataFrame([{"id": q.id, "question": q.question, "category": q.category,
                           "answerable": bool(q.answerable), "split": q.split,
                           "key_facts": json.dumps(list(q.key_facts), ensure_ascii=False)} for q in questions])
    with warnings.catch_warnings():  # a local path "can be interpreted in multiple ways", all of them local files
        warnings.filterwarnings("ignore", message="The specified dataset source can be interpreted")
        dataset = mlflow.data.from_pandas(frame, source=source or "fedlab question sets", name=name, digest=digest)
    tags = {"role": role, "split": split, **({"ids": str(ids)} if ids else {})}
    mlflow.log_input(dataset, context=role, tags=tags)
    return dataset


def register_question_set(mlflow: Any, tracking_uri: str, questions: Sequence[Any], name: str, digest: str,
                          split: str, ids: str | None, experiment_id: str) -> str | None:
    """A registered question set as an MLflow evaluation dataset (the experiment's Datasets tab):
    each question a record, its inputs the question, its expectations whether the documents answer
    it, its key facts, the expected answer and the evidence (document and quote). One dataset per
    set, version (``digest``), split and ids, created by the first evaluation of it in the store.
    Returns its id."""
    from mlflow.genai.datasets import create_dataset, search_datasets

    from fedlab.tracking import _setting_up

    name = f"{name} (ids {ids})" if ids else name  # a part of a set, under a name of its own
    tags = {"fedlab.digest": digest, "fedlab.split": split, "fedlab.ids": str(ids or "")}
    # (a dataset's tag filter takes a dotted key as it is: no backticks)
    wanted = (f"name = '{name}' AND tags.fedlab.digest = '{digest}' AND tags.fedlab.split = '{split}'"
              f" AND tags.fedlab.ids = '{tags['fedlab.ids']}'")
    with _setting_up(tracking_uri):  # two jobs of a sweep starting at once create it once
        found = search_datasets(filter_string=wanted, max_results=1)
        if found:
            return found[0].dataset_id
        dataset = create_dataset(name=name, experiment_id=experiment_id, tags=tags)
        dataset.merge_records([{
            "inputs": {"question": q.question},
            "expectations": {"answerable": bool(q.answerable), "key_facts": list(q.key_facts),
                             "expected_response": q.answer,
                             "evidence": [{"doc_id": e.doc_id, "quote": e.quote} for e in q.evidence]},
            "tags": {"id": q.id, "category": q.category, "split": q.split},
        } for q in questions])
        return dataset.dataset_id


# -- agent versions ----------------------------------------------------------------------------
def version_params(resolved: dict) -> dict[str, str]:
    """The settings that make an agent version: ``run_params`` of its pipeline, agent and reader
    groups (not the group choices, which a Hydra app and a composed config name differently)."""
    from fedlab.tracking import run_params

    return {k: v for k, v in run_params(resolved).items() if "." in k and k.split(".", 1)[0] in VERSION_GROUPS}


def version_key(resolved: dict) -> str:
    """A hash of ``version_params`` and the answerability model's content: equal for the export
    and every evaluation of the same config."""
    params = version_params(resolved)
    calibration = ((resolved.get("agent") or {}).get("calibration")) if isinstance(resolved.get("agent"), dict) else None
    model = ""
    if calibration and Path(str(calibration)).is_file():
        model = hashlib.sha256(Path(str(calibration)).read_bytes()).hexdigest()
    blob = json.dumps({"params": params, "calibration": model}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def log_agent_version(mlflow: Any, config_path: str | Path, resolved: dict, source_run_id: str,
                      experiment_id: str, sweep_id: str | None = None) -> str:
    """The production config at ``config_path`` as a LoggedModel named ``fedlab-production``: its
    settings as params, the config and its answerability model as artifacts, the sweep run it was
    taken from as its source run. Returns the model id."""
    import shutil
    import tempfile

    from mlflow.entities import LoggedModelStatus

    params = version_params(resolved)
    calibration = (resolved.get("agent") or {}).get("calibration")
    tags = {VERSION_TAG: version_key(resolved), "fedlab.config": Path(config_path).name,
            **({"fedlab.sweep_run_id": sweep_id} if sweep_id else {})}
    model = mlflow.initialize_logged_model(name=AGENT_MODEL_NAME, source_run_id=source_run_id, tags=tags,
                                           params=params, model_type="agent", experiment_id=experiment_id)
    try:
        with tempfile.TemporaryDirectory(prefix="fedlab-version-") as tmp:
            shutil.copyfile(config_path, Path(tmp) / Path(config_path).name)
            if calibration and Path(str(calibration)).is_file():
                (Path(tmp) / "calibration").mkdir()
                shutil.copyfile(str(calibration), Path(tmp) / "calibration" / Path(str(calibration)).name)
            mlflow.MlflowClient().log_model_artifacts(model.model_id, tmp)
        mlflow.finalize_logged_model(model.model_id, LoggedModelStatus.READY)
    except BaseException:
        mlflow.finalize_logged_model(model.model_id, LoggedModelStatus.FAILED)
        raise
    return model.model_id


def find_agent_version(mlflow: Any, resolved: dict) -> str | None:
    """The id of the newest ``fedlab-production`` LoggedModel of this config (same settings and
    answerability model) in any experiment of the store; None when it was never exported there."""
    if not isinstance(resolved.get("production"), dict):
        return None
    key = version_key(resolved)
    try:
        client = mlflow.MlflowClient()
        experiments = [e.experiment_id for e in client.search_experiments()]
        found = mlflow.search_logged_models(
            experiment_ids=experiments, output_format="list", max_results=1,
            filter_string=f"name = '{AGENT_MODEL_NAME}' AND tags.`{VERSION_TAG}` = '{key}'",
            order_by=[{"field_name": "creation_time", "ascending": False}])
    except Exception as exc:  # noqa: BLE001 — an older store without LoggedModels: no link
        log.debug("could not search the agent versions: %s", exc)
        return None
    return found[0].model_id if found else None

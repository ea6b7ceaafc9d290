"""MLflow's GenAI side of an evaluation: a trace per question, its assessments, the question set
as the run's dataset input, and agent versions as LoggedModels.

Contract and design notes: docs/tracing.md#design-notes-fedlabtracingpy.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import time
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


class _Step(spans.Span):
    """One step of a question as it ran: its name, span type, times (ns since the epoch), inputs,
    outputs, attributes and children; a root also keeps the question's assessments. Plain data:
    nothing reaches MLflow until ``Tracer.emit``, after the timed work."""

    recording = True

    def __init__(self, name: str, kind: str, inputs: Any):
        self.name, self.kind, self.inputs = name, kind, inputs
        self.outputs: Any = None
        self.attributes: dict[str, Any] = {}
        self.children: list[_Step] = []
        self.result: Any = None  # a search's RetrievalResult: its documents, made at emission
        self.measures: list[tuple] = []
        self.expectations: list[tuple] = []
        self.error: str | None = None
        self.start_ns = time.time_ns()
        self.end_ns = self.start_ns

    def set_inputs(self, inputs: Any) -> None:
        self.inputs = inputs

    def set_outputs(self, outputs: Any) -> None:
        self.outputs = outputs

    def set_attributes(self, attributes: dict[str, Any]) -> None:
        self.attributes.update(attributes)

    def retrieved(self, result: Any) -> None:
        self.result = result

    def assess(self, measures: Sequence[tuple]) -> None:
        self.measures += list(measures)

    def expect(self, expectations: Sequence[tuple]) -> None:
        self.expectations += list(expectations)


class Tracer:
    """The recorder of ``fedlab.spans`` for one evaluation (or one ask): a trace per question it
    ``wants``, in the active experiment, linked to the active run and to ``model_id`` (an agent
    version) when given.

    While the questions are answered it only keeps what the hooks hand it, with the time each step
    started and ended; ``emit`` then writes each question as an MLflow trace with those times
    (``mlflow.start_span_no_context``), its assessments logged while its root is open so that they
    are stored with it. So the latency an evaluation measures is the work's alone, and the store's
    writes (MLflow's, in the background) come after it. Tracing never fails the evaluation: a trace
    MLflow cannot record or store is a line on the log."""

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
        self.source = source
        self._secrets = secret_values()
        self._code = AssessmentSource(source_type=AssessmentSourceType.CODE, source_id=source)
        self._human = AssessmentSource(source_type=AssessmentSourceType.HUMAN, source_id="question set")
        self._pending: list[_Step] = []  # roots recorded, not yet emitted
        self._stack: list[_Step] = []
        self.trace_ids: dict[str, str] = {}  # question id (an ask's: "ask") -> its trace, once emitted
        self.shown_uri = ""  # the store, as messages say it

    # -- what fedlab.spans asks of a recorder ------------------------------------------------
    def wants(self, qid: str | None) -> bool:
        return self.mode != "off" and (self.chosen is None or qid in self.chosen)

    @contextmanager
    def root(self, name: str, kind: str, inputs: dict[str, Any]) -> Iterator[_Step]:
        with self.span(name, kind, inputs) as step:
            yield step
        self._pending.append(step)

    @contextmanager
    def span(self, name: str, kind: str, inputs: dict[str, Any] | None) -> Iterator[_Step]:
        step = _Step(name, kind, inputs)
        if self._stack:
            self._stack[-1].children.append(step)
        self._stack.append(step)
        try:
            yield step
        except BaseException as exc:
            step.error = f"{type(exc).__name__}: {str(exc).strip()[:300]}"
            raise
        finally:
            step.end_ns = time.time_ns()
            self._stack.pop()

    # -- to MLflow -------------------------------------------------------------------------
    def emit(self) -> None:
        """Every question recorded since the last call, as an MLflow trace (stored in the
        background: ``flush`` waits for it)."""
        pending, self._pending = self._pending, []
        for root in pending:
            try:
                self._emit(root)
            except Exception as exc:  # noqa: BLE001 — the evaluation's results do not depend on it
                log.warning("could not record the trace of question %s: %s", (root.inputs or {}).get("id"),
                            (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200])

    def _emit(self, root: _Step) -> None:
        from mlflow.tracing.provider import safe_set_span_in_context

        qid, question = (root.inputs or {}).get("id"), (root.inputs or {}).get("question")
        tags = {**self.tags, **({"fedlab.question_id": str(qid)} if qid is not None else {})}
        span = self.mlflow.start_span_no_context(root.name, span_type=root.kind, inputs=self.clean(root.inputs),
                                                 tags=tags, start_time_ns=root.start_ns)
        trace_id = getattr(span, "trace_id", None)
        with safe_set_span_in_context(span):  # the open trace: what is logged on it now is stored with it
            self._fill(span, root)
            response = self._preview(root)
            self.mlflow.update_current_trace(
                client_request_id=None if qid is None else str(qid),
                request_preview=None if question is None else self.clean(str(question))[:1000],
                response_preview=None if response is None else self.clean(response)[:1000], model_id=self.model_id)
            for child in root.children:
                self._emit_child(child, span)
            self.log_assessments(trace_id, root.expectations, expectation=True)
            self.log_assessments(trace_id, root.measures, expectation=False)
            span.end(end_time_ns=root.end_ns)
        if trace_id and trace_id != NO_OP_TRACE_ID:  # not a span MLflow left out
            self.trace_ids["ask" if qid is None else str(qid)] = trace_id

    def _emit_child(self, step: _Step, parent: Any) -> None:
        span = self.mlflow.start_span_no_context(step.name, span_type=step.kind, parent_span=parent,
                                                 inputs=self.clean(step.inputs), start_time_ns=step.start_ns)
        self._fill(span, step)
        for child in step.children:
            self._emit_child(child, span)
        span.end(end_time_ns=step.end_ns)

    def _fill(self, span: Any, step: _Step) -> None:
        """A span's outputs (a search's: its documents) and attributes, and its error if it failed."""
        attributes = dict(step.attributes)
        if step.result is not None:
            span.set_outputs(self.clean(documents(step.result)))
            hint = getattr(step.result, "hint", None)
            attributes["k_used"] = getattr(step.result, "k_used", None)
            attributes["timings_ms"] = {k: round(v, 3) for k, v in (getattr(step.result, "timings", None) or {}).items()}
            if hint is not None:
                attributes["date_hint"] = {"date_from": hint.date_from, "date_to": hint.date_to, "scope": hint.scope}
        elif step.outputs is not None:
            span.set_outputs(self.clean(step.outputs))
        if attributes:
            span.set_attributes(self.clean(attributes))
        if step.error is not None:
            from mlflow.entities import SpanStatus, SpanStatusCode

            span.set_status(SpanStatus(SpanStatusCode.ERROR, step.error))

    @staticmethod
    def _preview(root: _Step) -> str | None:
        """What the trace list shows as the response: the answer, or a search's first passages."""
        if isinstance(root.outputs, dict) and isinstance(root.outputs.get("answer"), str):
            return root.outputs["answer"]
        hits = getattr(root.result, "hits", None) if root.result is not None else None
        if hits is None:
            return root.error
        return f"{len(hits)} passages: " + ", ".join(
            f"{h.chunk.doc_id} ({h.chunk.meeting_date})" for h in hits[:5]) + (" …" if len(hits) > 5 else "")

    # -- helpers ---------------------------------------------------------------------------
    def clean(self, value: Any, key: str = "") -> Any:
        """``value`` with every secret redacted (by key name, by a secret's value, a URI's password)."""
        if isinstance(value, dict):
            return {k: self.clean(v, str(k)) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.clean(v, key) for v in value]
        if isinstance(value, str) or key:
            return redact(key, value, self._secrets)
        return value

    def log_assessments(self, trace_id: str | None, items: Sequence[tuple], expectation: bool) -> None:
        """Feedback (or expectations) on the open trace ``trace_id``: (name, value, rationale[,
        source id]) each; a value of None is left out."""
        from mlflow.entities import AssessmentSource, AssessmentSourceType

        if not trace_id or trace_id == NO_OP_TRACE_ID:
            return
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
        """Emit what is pending and wait until every trace is in the store."""
        self.emit()
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

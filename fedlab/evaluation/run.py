"""One evaluation run: compose a pipeline, evaluate a question set, log one MLflow run.

The task behind ``python -m fedlab.evaluate`` (and the gate). The run opens when the work
starts (so MLflow shows its real start and duration) and the tracking store is checked before
anything is built. Every artifact and ``eval.metrics_out`` are written to a local run directory
first and only then logged, so a tracking failure never discards a finished evaluation.
"""
from __future__ import annotations

import datetime as dt
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from omegaconf import DictConfig, OmegaConf

from fedlab.errors import FedlabError


@dataclass
class EvaluationResult:
    metrics: dict[str, float]  # names as in the issue: recall@5, …, and the agent's when it ran
    run_id: str  # the MLflow run
    name: str  # the MLflow run name
    out_dir: Path  # the local run directory the artifacts were written to (and logged from)


def group_choices() -> dict[str, str]:
    """Hydra's choice per config group (``embedder: minilm``) when run as a Hydra app."""
    from hydra.core.hydra_config import HydraConfig

    try:
        choices = HydraConfig.get().runtime.choices
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in choices.items() if v is not None and not str(k).startswith("hydra")}


def local_run_dir(cfg: DictConfig) -> Path:
    """Where this run's files are written before they are logged: the Hydra job's output
    directory, or (outside a Hydra app, e.g. the gate) a new one under ``paths.log_dir``."""
    from hydra.core.hydra_config import HydraConfig

    try:
        base = Path(HydraConfig.get().runtime.output_dir)
    except ValueError:
        stamp = dt.datetime.now().strftime("%Y-%m-%d_%H-%M-%S")
        base = Path(cfg.paths.log_dir) / str(cfg.get("task_name", "evaluate")) / "runs" / f"{stamp}-{os.getpid()}"
    out = base / "artifacts"
    out.mkdir(parents=True, exist_ok=True)
    return out


def check_config_sources(cfg: DictConfig) -> None:
    """The config calls only fedlab's own code (``fedlab.config.check_targets``), as every composed
    config must: also one given from outside conf/ (``--config-dir``, ``--config-path``), whose
    files the message names, and a ``_target_`` set on the command line (Hydra's own refusal of
    ``os.system`` and the like would be a traceback)."""
    from hydra.core.hydra_config import HydraConfig

    from fedlab.config import CONF_DIR, check_targets

    try:
        sources = HydraConfig.get().runtime.config_sources
        name = str(HydraConfig.get().job.config_name)
    except ValueError:
        sources, name = [], "the config"
    outside = [str(s.path) for s in sources if s.schema == "file" and Path(str(s.path)).resolve() != CONF_DIR.resolve()]
    check_targets(cfg, ", ".join(outside) if outside else name)


def check_settings(cfg: DictConfig) -> None:
    """Settings that would run but measure nonsense are refused before anything starts: by the
    settings' schema (types and ranges, fedlab.schema), then by the rules of their own."""
    from fedlab.evaluation.retrieval.harness import check_query_timing
    from fedlab.evaluation.retrieval.relevance import check_relevance
    from fedlab.retrieval.factory import check_top_k
    from fedlab.tracing import check_traces
    from fedlab.schema import check_schema

    check_schema(cfg)
    check_top_k(OmegaConf.select(cfg, "retriever.top_k"))
    check_relevance(OmegaConf.select(cfg, "eval.relevance", default="meeting"))
    check_query_timing(OmegaConf.select(cfg, "eval.query_timing", default="per_run"))
    check_traces(OmegaConf.select(cfg, "eval.traces", default="all"), OmegaConf.select(cfg, "eval.trace_sample", default=20))


def evaluate(cfg: DictConfig, parent_run_id: str | None = None, varying: Sequence[str] = (),
             show: bool = True) -> EvaluationResult:
    """The whole evaluation, logged as one MLflow run (a child of ``parent_run_id`` in a sweep,
    named by the config keys the sweep's grid ``varying``); ``show=False`` prints no metric tables
    (the report prints its own)."""
    from rich.console import Console

    from fedlab.agent.fingerprint import warn_if_stale
    from fedlab.dataset.registry import effective_role
    from fedlab.evaluation.naming import run_name
    from fedlab.evaluation.retrieval.harness import load_questions
    from fedlab.tracing import open_tracer
    from fedlab.tracking import Tracker, git_commit, mask_hydra_record, run_params

    console = Console(stderr=True)
    mask_hydra_record()
    check_config_sources(cfg)
    check_settings(cfg)
    questions, data_hash = load_questions(cfg.dataset)
    role = effective_role(cfg.dataset.get("role"), questions)
    model = warn_if_stale(cfg)  # one line when the answerability model no longer matches the code
    tracker = Tracker.shared(cfg.mlflow.tracking_uri, cfg.mlflow.experiment)  # fails fast, in one line
    tracker.close_abandoned()  # runs left RUNNING by a process that is gone (kill -9) are marked KILLED
    name = cfg.mlflow.run_name or run_name(cfg, list(varying))
    out_dir = local_run_dir(cfg)
    resolved = OmegaConf.to_container(cfg, resolve=True)
    tags = {"dataset_hash": data_hash, "dataset_path": str(cfg.dataset.get("path") or ""),
            "dataset_split": cfg.dataset.split, "dataset_name": str(cfg.dataset.get("name") or ""),
            "dataset_role": role, "dataset_ids": str(cfg.dataset.get("ids") or ""),
            **({} if model is None else {"answerability_model": "stale" if model.stale else "current"}), "git_commit": git_commit(), "local_dir": str(out_dir)}
    with tracker.run(name=name, parent_run_id=parent_run_id, tags=tags) as run:
        tracker.log_params(run_params(resolved, group_choices()))
        dataset, model_id = _inputs(tracker, cfg, resolved, questions, data_hash, role)
        tracer = open_tracer(cfg, questions, model_id=model_id, tags={
            "fedlab.dataset": str(getattr(dataset, "name", None) or cfg.dataset.get("name") or ""), "fedlab.dataset_role": role,
            "fedlab.dataset_split": str(cfg.dataset.split), "fedlab.run_name": name})
        metrics, pipeline, agent = _measure(cfg, questions, out_dir, console, run.info.run_id, tracer)
        if cfg.eval.metrics_out:
            from fedlab.io import write_json

            write_json(cfg.eval.metrics_out, metrics)
        try:
            tracker.set_tags({
                "corpus_hash": pipeline.corpus.content_hash,
                **{f"cache.{stage}": status for stage, status in pipeline.info.cache.items()},
                **{f"cache_key.{stage}": key for stage, key in pipeline.info.keys.items()},
            })
            tracker.log_metrics(metrics, model_id=model_id, dataset=dataset if model_id else None)
            tracker.log_artifact_dir(out_dir)
            if tracer is not None:
                tracer.flush()  # the run ends with its traces stored
        except Exception as exc:  # noqa: BLE001 — any tracking failure: the results are kept locally
            from fedlab.tracking import damaged_store

            why = damaged_store(exc)
            first = f"the store is damaged, SQLite: {why}" if why else \
                (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
            kept = f"{out_dir}" + (f" and {cfg.eval.metrics_out}" if cfg.eval.metrics_out else "")
            raise FedlabError(f"logging run {name!r} to MLflow at {tracker.shown_uri} failed "
                              f"({type(exc).__name__}: {first}); the metrics and artifacts are kept in {kept}") from None
        run_id = run.info.run_id
    if not show:
        return EvaluationResult(metrics, run_id, name, out_dir)
    from fedlab.evaluation.retrieval.report import print_metrics

    print_metrics(console, name, metrics, run_id, pipeline.info)
    if agent is not None:
        from fedlab.evaluation.answers.harness import print_agent_metrics

        print_agent_metrics(console, metrics)
    return EvaluationResult(metrics, run_id, name, out_dir)


def _inputs(tracker, cfg: DictConfig, resolved: dict, questions, data_hash: str, role: str):
    """The run's inputs in MLflow: the question set as its dataset input (name, the set's hash as
    digest, its file, role and split); a registered set also as an evaluation dataset with its
    answer key; and, for an exported production config, the agent version it evaluates
    (fedlab.tracing). Returns (the dataset, the model id or None). What a store cannot take is said
    on the log, and the evaluation goes on."""
    import logging

    from fedlab.config import registered_dataset_file
    from fedlab.tracing import find_agent_version, log_dataset, register_question_set

    def attempt(what: str, step):
        try:
            return step()
        except Exception as exc:  # noqa: BLE001 — the run's metrics and artifacts matter more
            logging.getLogger(__name__).warning("could not log %s to MLflow: %s", what,
                                                (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200])
            return None

    name, source = str(cfg.dataset.get("name") or ""), cfg.dataset.get("path") or None
    own = registered_dataset_file(name)
    registered = source is not None and own is not None and Path(str(source)).resolve() == own.resolve()
    if source is not None and not registered:
        name = Path(str(source)).stem  # a file of its own, not the registered set's
    split, ids = str(cfg.dataset.split), cfg.dataset.get("ids")
    dataset = attempt("the run's dataset", lambda: log_dataset(
        tracker.mlflow, questions, name or "questions", data_hash, None if source is None else str(source), role,
        split, ids))
    if registered:
        attempt(f"the question set {name} as an evaluation dataset", lambda: register_question_set(
            tracker.mlflow, tracker.tracking_uri, questions, name, data_hash, split, ids, tracker.experiment_id))

    def version() -> str | None:
        model_id = find_agent_version(tracker.mlflow, resolved)
        if model_id is not None:
            from mlflow.entities import LoggedModelInput

            tracker.mlflow.log_input(model=LoggedModelInput(model_id=model_id))
        return model_id

    return dataset, attempt("the run's agent version", version)


def _measure(cfg: DictConfig, questions, out_dir: Path, console, run_id: str, tracer=None):
    """Build, evaluate and write every artifact to ``out_dir``; (metrics, pipeline, agent outcome).
    ``tracer`` (fedlab.tracing.Tracer; None: none) traces each question: the agent's answer when
    an agent is evaluated, else the pipeline's search."""
    from fedlab.evaluation.retrieval.harness import evaluate_pipeline
    from fedlab.env import mask_credentials
    from fedlab.evaluation.retrieval.trec import write_qrels, write_run
    from fedlab.io import write_json, write_jsonl, write_text
    from fedlab import spans
    from fedlab.pipeline import build_pipeline

    t0 = time.perf_counter()
    pipeline = build_pipeline(cfg, progress=cfg.eval.progress)
    build_s = time.perf_counter() - t0
    with spans.recording(None if "agent" in cfg else tracer):
        outcome = evaluate_pipeline(pipeline, questions, progress=cfg.eval.progress, console=console,
                                    relevance=cfg.eval.get("relevance", "meeting"),
                                    query_timing=cfg.eval.get("query_timing", "per_run"))
    metrics = dict(outcome.metrics)
    metrics.update({f"build_s.{stage}": s for stage, s in pipeline.info.seconds.items()})
    metrics.update({f"wait_s.{stage}": s for stage, s in pipeline.info.waited.items()})  # others' builds
    metrics["build_s.total"] = build_s
    metrics.update(pipeline.info.chunking)
    agent = None
    if "agent" in cfg:  # answer-level measures; the retrieval metrics above stay the pipeline's own
        from fedlab.evaluation.answers.harness import evaluate_agent

        with spans.recording(tracer):
            agent = evaluate_agent(cfg, pipeline, questions, progress=cfg.eval.progress, console=console,
                                   retrieval=outcome.per_question)
        metrics.update(agent.metrics)
    write_text(out_dir / "config.yaml", mask_credentials(OmegaConf.to_yaml(cfg, resolve=True)))  # no password of a URI
    write_jsonl(out_dir / "per_question.jsonl", outcome.per_question, sort_keys=False)
    write_json(out_dir / "metrics.json", metrics)
    write_run(out_dir / "trec" / "run.trec", outcome.run, tag=run_id)
    write_qrels(out_dir / "trec" / "qrels.trec", outcome.qrels)
    if agent is not None:
        _write_agent(out_dir, agent, cfg)
    return metrics, pipeline, agent


def _write_agent(out_dir: Path, agent, cfg: DictConfig) -> None:
    """agent_answers.jsonl, the reliability diagram, the risk-coverage curve and the calibrator in use."""
    import shutil

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fedlab.evaluation.answers.calibration import reliability_figure
    from fedlab.evaluation.answers.selective import risk_coverage_figure
    from fedlab.io import write_jsonl

    write_jsonl(out_dir / "agent_answers.jsonl", agent.rows)
    (out_dir / "agent").mkdir(exist_ok=True)
    if cfg.agent.get("calibration"):  # the answerability model: what is reported is P(what is said is right)
        curves = {"reported confidence": agent.curves["reported"], "P(answerable)": agent.curves["raw"]}
        selective = {"reported confidence": agent.risk_coverage["reported"]}
        shutil.copyfile(cfg.agent.calibration, out_dir / "agent" / "calibration.json")
    else:
        curves = {"retrieval score (uncalibrated)": agent.curves["raw"]}
        selective = {"retrieval score (uncalibrated)": agent.risk_coverage["raw"]}
    fig = reliability_figure(curves, title=f"reliability ({cfg.dataset.split} split)")
    fig.savefig(out_dir / "agent" / "reliability.png")
    plt.close(fig)
    fig = risk_coverage_figure(selective, title=f"risk-coverage ({cfg.dataset.split} split)")
    fig.savefig(out_dir / "agent" / "risk_coverage.png")
    plt.close(fig)


"""`python -m fedlab.evaluate`: compose a pipeline, evaluate a question set, log one MLflow run."""
from __future__ import annotations

import logging
import time
from pathlib import Path

import fedlab.config  # noqa: F401  (resolvers, telemetry defaults)
import hydra
from omegaconf import DictConfig, OmegaConf

from fedlab.cli import run_cli, user_errors

log = logging.getLogger(__name__)


def _short(target: str, suffix: str) -> str:
    return target.rsplit(".", 1)[-1].removesuffix(suffix).lower()


def run_name(cfg: DictConfig) -> str:
    """e.g. hybrid/minilm/exact/recursive200-40/date/k10[/lateinteraction]"""
    parts = [cfg.retriever.kind]
    if cfg.retriever.kind != "bm25":
        index = _short(cfg.index._target_, "Index")
        parts += [cfg.embedder.name, index + ("-postfilter" if cfg.index.get("filter_mode") == "post" else "")]
    parts.append(f"{_short(cfg.chunker._target_, 'Chunker')}{cfg.chunker.size}-{cfg.chunker.overlap}")
    parts += ["date" if cfg.retriever.date_aware else "nodate", f"k{cfg.retriever.top_k}"]
    reranker = _short(cfg.reranker._target_, "Reranker")
    if reranker != "no":
        parts.append(reranker)
    if "agent" in cfg and "lm" in cfg:
        parts.append(f"agent-{_short(cfg.lm._target_, 'Backend')}")
    return "/".join(str(p) for p in parts)


def evaluate(cfg: DictConfig, parent_run_id: str | None = None) -> dict[str, float]:
    """The whole evaluation; returns the metrics (names as in the issue: recall@5, …)."""
    from rich.console import Console

    from fedlab.eval.harness import dataset_hash, evaluate_pipeline, load_split
    from fedlab.eval.report import print_metrics
    from fedlab.eval.trec import write_qrels, write_run
    from fedlab.io import write_json, write_jsonl, write_text
    from fedlab.pipeline import build_pipeline
    from fedlab.tracking import Tracker, flatten, git_commit, staging_dir

    console = Console(stderr=True)
    questions = load_split(cfg.dataset.path, cfg.dataset.split)
    t0 = time.perf_counter()
    pipeline = build_pipeline(cfg, progress=cfg.eval.progress)
    build_s = time.perf_counter() - t0
    outcome = evaluate_pipeline(pipeline, questions, progress=cfg.eval.progress, console=console)
    metrics = dict(outcome.metrics)
    metrics.update({f"build_s.{stage}": s for stage, s in pipeline.info.seconds.items()})
    metrics["build_s.total"] = build_s
    metrics.update(pipeline.info.chunking)
    agent = None
    if "agent" in cfg:  # answer-level measures; the retrieval metrics above stay the pipeline's own
        from fedlab.agent_eval.harness import evaluate_agent

        agent = evaluate_agent(cfg, pipeline, questions, progress=cfg.eval.progress, console=console)
        metrics.update(agent.metrics)

    tracker = Tracker(cfg.mlflow.tracking_uri, cfg.mlflow.experiment)
    tags = {
        "corpus_hash": pipeline.corpus.content_hash,
        "dataset_hash": dataset_hash(cfg.dataset.path),
        "dataset_path": str(cfg.dataset.path),
        "dataset_split": cfg.dataset.split,
        "git_commit": git_commit(),
        **{f"cache.{stage}": status for stage, status in pipeline.info.cache.items()},
        **{f"cache_key.{stage}": key for stage, key in pipeline.info.keys.items()},
    }
    name = cfg.mlflow.run_name or run_name(cfg)
    resolved = OmegaConf.to_container(cfg, resolve=True)
    with tracker.run(name=name, parent_run_id=parent_run_id, tags=tags) as run, staging_dir() as tmp:
        tmp = Path(tmp)
        tracker.log_params(flatten(resolved))
        tracker.log_metrics(metrics)
        write_text(tmp / "config.yaml", OmegaConf.to_yaml(cfg, resolve=True))
        write_jsonl(tmp / "per_question.jsonl", outcome.per_question)
        write_json(tmp / "metrics.json", metrics)
        write_run(tmp / "trec" / "run.trec", outcome.run, tag=run.info.run_id)
        write_qrels(tmp / "trec" / "qrels.trec", outcome.qrels)
        if agent is not None:
            _log_agent(tracker, tmp, agent, cfg)
        tracker.log_artifact_dir(tmp)
        run_id = run.info.run_id
    if cfg.eval.metrics_out:
        write_json(cfg.eval.metrics_out, metrics)
    print_metrics(console, name, metrics, run_id, pipeline.info)
    if agent is not None:
        from fedlab.agent_eval.harness import print_agent_metrics

        print_agent_metrics(console, metrics)
    return metrics


def _log_agent(tracker, tmp: Path, agent, cfg: DictConfig) -> None:
    """agent_answers.jsonl, the reliability diagram and the calibrator in use."""
    import shutil

    import matplotlib.pyplot as plt

    from fedlab.agent_eval.calibration import reliability_figure
    from fedlab.io import write_jsonl

    write_jsonl(tmp / "agent_answers.jsonl", agent.rows)
    curves = {"raw score": agent.curves["raw"]}
    if cfg.agent.get("calibration"):
        curves["calibrated"] = agent.curves["reported"]
        (tmp / "agent").mkdir(exist_ok=True)
        shutil.copyfile(cfg.agent.calibration, tmp / "agent" / "calibration.json")
    fig = reliability_figure(curves, title=f"reliability ({cfg.dataset.split} split)")
    tracker.log_figure(fig, "agent/reliability.png")
    plt.close(fig)


@hydra.main(version_base="1.3", config_path="../conf", config_name="evaluate")
@user_errors
def main(cfg: DictConfig) -> float:
    from fedlab.sweep import parent_run_for_job

    metrics = evaluate(cfg, parent_run_id=parent_run_for_job())
    return float(metrics.get(cfg.objective, 0.0))


if __name__ == "__main__":
    run_cli(main)

"""The production config from a sweep's best run (the task behind ``python -m fedlab.export``).

The best run is ``fedlab.sweeps.selection``'s (the rule the sweep report ranks by); its pipeline
groups are copied, fully resolved, into ``conf/production.yaml`` with its provenance in the
header, and the agent's answerability model is fitted on the dev split with that pipeline
(``fedlab.evaluation.answers.calibrate``) and named in it.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import yaml
from omegaconf import DictConfig

from fedlab.errors import FedlabError
from fedlab.sweeps.runs import ChildRun, finished_children, latest_finished_sweep
from fedlab.sweeps.selection import Rule, print_exclusions, select
from fedlab.tracking import mlflow_name


@dataclass(frozen=True)
class Exported:
    path: str  # the production config written
    run_id: str  # the run it was taken from
    run_name: str
    sweep_id: str
    metric: str  # the objective, and the run's value of it
    value: float
    calibration: str | None  # the answerability model fitted for it (None: calibration.fit=false)


SHARED_DEFAULTS = [{"paths": "default"}, {"corpus": "fomc"}, {"dataset": "fomc_qa"}, {"agent": "default"},
                   {"lm": "extractive"}, {"eval": "default"}, {"mlflow": "default"}, {"hydra": "default"}, "_self_"]
HEADLINE = ("recall@1", "recall@5", "recall@10", "mrr@10", "ndcg@10", "doc_recall@5", "latency_p95_ms_total")


def render_production(best: ChildRun, run_config: dict, keys: list[str], sweep_id: str,
                      calibration: str | None = None, answerability: dict | None = None) -> str:
    m = best.metrics
    header = [
        "# fedlab production config — written by `python -m fedlab.export`; do not edit by hand,",
        "# re-export instead (`make export`). Evaluate it: python -m fedlab.evaluate --config-name production",
        f"# exported: {dt.datetime.now(dt.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}",
        f"# source run: {best.run_id} ({best.name}) of sweep {sweep_id}",
        f"# {best.tags.get('dataset_split', 'dev')} metrics: "
        + ", ".join(f"{k}={m[k]:.3f}" for k in HEADLINE if k in m),
        f"# corpus version: {best.tags.get('corpus_hash', '?')}; dataset version: "
        f"{best.tags.get('dataset_hash', '?')} ({best.tags.get('dataset_path', '?').rsplit('/', 1)[-1]})",
        f"# git commit: {best.tags.get('git_commit', '?')}",
    ]
    body = {"defaults": SHARED_DEFAULTS, "task_name": "evaluate"}
    for key in keys:
        if key not in run_config:
            raise FedlabError(f"run {best.run_id} has no '{key}' in its config: export.pipeline_keys lists it")
        body[key] = run_config[key]
    if calibration:
        body["agent"] = {"calibration": calibration, **({"answerability": answerability} if answerability else {})}
    body["production"] = {
        "source_run_id": best.run_id,
        "sweep_run_id": sweep_id,
        "corpus_hash": best.tags.get("corpus_hash"),
        "dataset_hash": best.tags.get("dataset_hash"),
        "metrics": {k: round(float(m[k]), 6) for k in HEADLINE if k in m},
    }
    return "\n".join(header) + "\n" + yaml.safe_dump(body, sort_keys=False, allow_unicode=True)


def export_production(cfg: DictConfig) -> Exported:
    from mlflow.artifacts import download_artifacts

    from fedlab.io import write_text
    from fedlab.tracking import Tracker

    tracker = Tracker(cfg.mlflow.tracking_uri, cfg.mlflow.experiment)
    client = tracker.mlflow.MlflowClient()
    exp = client.get_experiment_by_name(cfg.mlflow.experiment)
    sweep_id = cfg.sweep_run_id
    if sweep_id is None:
        sweep_id = latest_finished_sweep(client, exp.experiment_id)
        if sweep_id is None:
            raise FedlabError(f"no finished sweep in experiment {cfg.mlflow.experiment!r} at "
                              f"{tracker.tracking_uri}: run `make sweep` first, or pass sweep_run_id=ID")
    rule = Rule.from_config(cfg.objective)
    candidates = finished_children(client, exp.experiment_id, sweep_id, split=rule.split)
    if not candidates:
        raise FedlabError(f"sweep {sweep_id} has no finished runs on the {rule.split!r} split: check sweep_run_id")
    metric = rule.metric
    if not any(metric in c.metrics for c in candidates):
        raise FedlabError(f"objective.metric={metric!r} was not logged by the sweep's runs "
                          f"(logged e.g. {mlflow_name('recall@5')} as recall@5): choose a logged metric")
    selection = select(candidates, rule)
    print_exclusions(selection, metric)
    best = selection.best
    path = download_artifacts(run_id=best.run_id, artifact_path="config.yaml", tracking_uri=tracker.tracking_uri)
    with open(path) as fh:
        run_config = yaml.safe_load(fh)
    keys = list(cfg.pipeline_keys)
    write_text(cfg.out, render_production(best, run_config, keys, sweep_id))
    print(f"wrote {cfg.out}: {best.name} (run {best.run_id}) {metric}={best.metrics[metric]:.3f}")
    if cfg.calibration.fit:
        fit_calibration(cfg.out, cfg.calibration.out, cfg.paths.data_dir, cfg.calibration.get("method", "logistic"))
        write_text(cfg.out, render_production(best, run_config, keys, sweep_id, calibration_ref(cfg.calibration.out),
                                              chosen_threshold(cfg.calibration.out)))
        print(f"the agent's answerability model (fitted on the dev split): {cfg.calibration.out}")
    return Exported(str(cfg.out), best.run_id, best.name, sweep_id, metric, float(best.metrics[metric]),
                    str(cfg.calibration.out) if cfg.calibration.fit else None)


def fit_calibration(production: str, out: str, data_dir: str, method: str = "logistic") -> None:
    """Fit the agent's answerability model on the dev split with the exported pipeline."""
    from rich.console import Console

    from fedlab.evaluation.answers.calibrate import calibrate, compose_for_agent, print_result

    sets = [f"paths.data_dir={data_dir}"]
    console = Console(stderr=True)
    try:
        cfg = compose_for_agent(str(production), sets, "dev")
        result = calibrate(cfg, out=out, config_name=str(production), overrides=sets, console=console, method=method)
    except FedlabError as exc:
        raise FedlabError(f"fitting the answerability model for {production} failed ({exc}); "
                          "pass calibration.fit=false to export without one") from None
    print_result(result, console)


def chosen_threshold(out: str) -> dict:
    """The abstention thresholds the fit chose and the targets they were chosen for, for the config."""
    import math

    from fedlab.agent.answerability import load_model

    model = load_model(out)  # the answer threshold rounded down: a right answer at it stays answered
    budget, withheld = model.meta.get("max_false_abstention"), model.meta.get("max_withheld_correct")
    return {"target_precision": model.meta.get("target_precision"),
            **({"max_false_abstention": budget} if budget is not None else {}), "threshold": round(model.threshold, 6),
            **({"max_withheld_correct": withheld, "answer_threshold": math.floor(model.answer_threshold * 1e6) / 1e6}
               if withheld is not None else {})}


def calibration_ref(out: str) -> str:
    from pathlib import Path

    from fedlab.evaluation.answers.calibrate import config_path

    return config_path(Path(out))

"""`python -m fedlab.export`: the best run of a sweep → conf/production.yaml."""
from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass

import fedlab.config  # noqa: F401
import hydra
import yaml
from omegaconf import DictConfig, OmegaConf

from fedlab.cli import run_cli, user_errors
from fedlab.errors import FedlabError
from fedlab.tracking import metric_from_mlflow_name, mlflow_name

SHARED_DEFAULTS = [{"paths": "default"}, {"corpus": "fomc"}, {"dataset": "fomc_qa"}, {"agent": "default"},
                   {"lm": "extractive"}, {"eval": "default"}, {"mlflow": "default"}, {"hydra": "default"}, "_self_"]
HEADLINE = ("recall@1", "recall@5", "recall@10", "mrr@10", "ndcg@10", "doc_recall@5", "latency_p95_ms_total")


@dataclass
class Candidate:
    run_id: str
    name: str
    metrics: dict[str, float]  # by fedlab names (recall@5)
    tags: dict[str, str]


def sort_key(c: Candidate, metric: str, tie_breakers: list[str]) -> tuple:
    key = [-c.metrics.get(metric, -math.inf)]
    for tb in tie_breakers:
        name, sign = (tb[1:], 1) if tb.startswith("-") else (tb, -1)
        value = c.metrics.get(name, math.nan)
        key.append(math.inf if math.isnan(value) else sign * value)
    return tuple(key)


def breaches(c: Candidate, constraints: dict) -> list[str]:
    """Why ``c`` is not eligible: one reason per constraint it breaks (empty = eligible)."""
    out = []
    for name, bound in constraints.items():
        value = c.metrics.get(name)
        if value is None:
            out.append(f"{name} not logged")
            continue
        if "max" in bound and value > bound["max"]:
            out.append(f"{name}={value:.4g} > max {bound['max']}")
        if "min" in bound and value < bound["min"]:
            out.append(f"{name}={value:.4g} < min {bound['min']}")
    return out


def eligible(c: Candidate, constraints: dict) -> bool:
    return not breaches(c, constraints)


@dataclass
class Selection:
    best: Candidate
    excluded: list[tuple[Candidate, list[str]]]  # runs the constraints ruled out, with the reasons, best first


def select(candidates: list[Candidate], metric: str, tie_breakers: list[str], constraints: dict) -> Selection:
    """The best eligible run, and every run the constraints excluded (with why), in rank order."""
    judged = [(c, breaches(c, constraints)) for c in sorted(candidates, key=lambda c: sort_key(c, metric, tie_breakers))]
    excluded = [(c, why) for c, why in judged if why]
    pool = [c for c, why in judged if not why]
    if not pool:
        top = excluded[0]
        raise FedlabError(
            f"no run of the sweep meets the constraints {constraints} (the best run, {top[0].name}, has "
            f"{'; '.join(top[1])}): relax objective.constraints or sweep again"
        )
    return Selection(pool[0], excluded)


def pick_best(candidates: list[Candidate], metric: str, tie_breakers: list[str], constraints: dict) -> Candidate:
    return select(candidates, metric, tie_breakers, constraints).best


def print_exclusions(selection: Selection, metric: str, console=None) -> None:
    """What the constraints took away: every excluded run that ranks above the chosen one (those
    changed the outcome), then a count of the rest."""
    from rich.console import Console

    console = console or Console(stderr=True, highlight=False)
    if not selection.excluded:
        console.print("constraints excluded no run")
        return
    chosen = selection.best.metrics.get(metric, -math.inf)
    above = [(c, why) for c, why in selection.excluded if c.metrics.get(metric, -math.inf) >= chosen]
    console.print(f"constraints excluded {len(selection.excluded)} run(s); {len(above)} of them rank above the "
                  f"chosen run by {metric}:")
    for c, why in above[:20]:
        console.print(f"  excluded {c.name} ({metric}={c.metrics.get(metric, math.nan):.4f}): {'; '.join(why)}")
    if len(above) > 20:
        console.print(f"  … and {len(above) - 20} more above it")


def render_production(best: Candidate, run_config: dict, keys: list[str], sweep_id: str,
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


def export(cfg: DictConfig) -> str:
    from mlflow.artifacts import download_artifacts

    from fedlab.io import write_text
    from fedlab.tracking import Tracker

    tracker = Tracker(cfg.mlflow.tracking_uri, cfg.mlflow.experiment)
    client = tracker.mlflow.MlflowClient()
    exp = client.get_experiment_by_name(cfg.mlflow.experiment)
    sweep_id = cfg.sweep_run_id
    if sweep_id is None:
        sweeps = client.search_runs([exp.experiment_id], filter_string="tags.`fedlab.sweep` = 'parent'",
                                    order_by=["attributes.start_time DESC"], max_results=20)
        finished = [r for r in sweeps if r.info.status == "FINISHED"]
        if not finished:
            raise FedlabError(f"no finished sweep in experiment {cfg.mlflow.experiment!r} at "
                              f"{tracker.tracking_uri}: run `make sweep` first, or pass sweep_run_id=ID")
        sweep_id = finished[0].info.run_id
    runs = client.search_runs([exp.experiment_id], filter_string=f"tags.mlflow.parentRunId = '{sweep_id}'",
                              max_results=5000)
    split = cfg.objective.split
    candidates = [
        Candidate(r.info.run_id, r.info.run_name or "", {metric_from_mlflow_name(k): v for k, v in r.data.metrics.items()},
                  dict(r.data.tags))
        for r in runs if r.info.status == "FINISHED" and r.data.tags.get("dataset_split") == split
    ]
    if not candidates:
        raise FedlabError(f"sweep {sweep_id} has no finished runs on the {split!r} split: check sweep_run_id")
    metric = cfg.objective.metric
    if not any(metric in c.metrics for c in candidates):
        raise FedlabError(f"objective.metric={metric!r} was not logged by the sweep's runs "
                          f"(logged e.g. {mlflow_name('recall@5')} as recall@5): choose a logged metric")
    selection = select(candidates, metric, list(cfg.objective.tie_breakers),
                       OmegaConf.to_container(cfg.objective.constraints) or {})
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
    return str(cfg.out)


def fit_calibration(production: str, out: str, data_dir: str, method: str = "logistic") -> None:
    """Fit the agent's answerability model on the dev split with the exported pipeline."""
    from fedlab.calibrate import main as calibrate

    args = ["--config", str(production), "--split", "dev", "--out", str(out), "--method", str(method),
            "--set", f"paths.data_dir={data_dir}"]
    if calibrate(args) != 0:
        raise FedlabError(f"fitting the answerability model for {production} failed (see above); "
                          "pass calibration.fit=false to export without one")


def chosen_threshold(out: str) -> dict:
    """The abstention threshold the fit chose and the target it was chosen for, for the config."""
    from fedlab.agent.answerability import load_model

    model = load_model(out)
    return {"target_precision": model.meta.get("target_precision"), "threshold": round(model.threshold, 6)}


def calibration_ref(out: str) -> str:
    from pathlib import Path

    from fedlab.calibrate import config_path

    return config_path(Path(out))


@hydra.main(version_base="1.3", config_path="../conf", config_name="export")
@user_errors
def main(cfg: DictConfig) -> None:
    export(cfg)


if __name__ == "__main__":
    run_cli(main)

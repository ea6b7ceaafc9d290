"""The production config from a sweep's best run (the task behind ``python -m fedlab.export``).

The best run is ``fedlab.sweeps.selection``'s (the rule the sweep report ranks by). What the
tracking store holds of it is data, never code: ``conf/production.yaml`` is rebuilt from fedlab's
own config groups — each pipeline group by the choice the run recorded (``conf/<group>/<choice>.yaml``,
whose ``_target_`` is the only code the config names) with the run's settings of it, plain values
only — and a run whose config names any other code, choice or setting is refused in one line
(``rebuild``). The agent's answerability model is fitted on the dev split with that pipeline
(``fedlab.evaluation.answers.calibrate``) and named in it; the config and its model are written
beside their targets first and renamed into place together once the fit is done, so an interrupted
export leaves the previous pair as it was.
"""
from __future__ import annotations

import datetime as dt
import os
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import yaml
from omegaconf import DictConfig

from fedlab.config import group_configs
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
    model_id: str | None = None  # the agent version it was logged as (an MLflow LoggedModel; None: not logged)


SHARED_DEFAULTS = [{"paths": "default"}, {"corpus": "fomc"}, {"dataset": "fomc_qa"}, {"agent": "default"},
                   {"lm": "extractive"}, {"eval": "default"}, {"mlflow": "default"}, {"hydra": "default"}, "_self_"]
HEADLINE = ("recall@1", "recall@5", "recall@10", "mrr@10", "ndcg@10", "doc_recall@5", "latency_p95_ms_total")


def _refused(run_id: str, what: str) -> FedlabError:
    return FedlabError(f"run {run_id} of the tracking store {what}: export takes only fedlab's own configs and plain "
                       "settings from a store (docs/export-and-gates.md, Trust model); re-run the sweep with this "
                       "checkout's configs")


def _check_data(value: Any, where: str, run_id: str) -> None:
    """A setting is plain data: numbers, booleans, null, text with no interpolation, and lists and
    mappings of those with no Hydra key (``_target_``, ``_partial_``, …)."""
    if value is None or isinstance(value, (bool, int, float)):
        return
    if isinstance(value, str):
        if "${" in value:
            raise _refused(run_id, f"sets {where} to an interpolation ({value[:60]!r})")
        return
    if isinstance(value, list):
        for i, item in enumerate(value):
            _check_data(item, f"{where}.{i}", run_id)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str) or key.startswith("_"):
                raise _refused(run_id, f"sets {where}.{key}, a key fedlab's configs do not have there")
            _check_data(item, f"{where}.{key}", run_id)
        return
    raise _refused(run_id, f"sets {where} to a {type(value).__name__}, not a plain value")


def _choice_for(group: str, node: dict, recorded: str | None, run_id: str) -> str:
    """The config of conf/<group>/ the run used: the choice it recorded (its ``<group>`` param),
    else one whose ``_target_`` the run's node has (its other Hydra keys checked against it)."""
    options = group_configs(group)
    hydra_keys = lambda d: {k: v for k, v in d.items() if isinstance(k, str) and k.startswith("_")}  # noqa: E731
    short_target = str(node.get("_target_", "")).rsplit(".", 1)[-1]
    if recorded is not None and recorded in options:
        choice = recorded
    elif recorded is not None and recorded != short_target:  # a run outside Hydra records the class's name
        raise _refused(run_id, f"records {group}={recorded!r}, which is not one of fedlab's {group} configs "
                               f"({', '.join(options)})")
    else:
        matching = [c for c, d in options.items() if d.get("_target_") == node.get("_target_")]
        if not matching:
            raise _refused(run_id, f"sets {group}._target_={node.get('_target_')!r}, which no config in conf/{group}/ "
                                   "names")
        same = [c for c in matching if hydra_keys(options[c]) == hydra_keys(node)]
        named = [c for c in same if options[c].get("name", c) == node.get("name")]
        choice = (named or same or matching)[0]
    base = options[choice]
    for key in sorted(set(hydra_keys(node)) | set(hydra_keys(base))):
        if node.get(key, base.get(key)) != base.get(key):
            raise _refused(run_id, f"sets {group}.{key}={node.get(key)!r}, which is not fedlab's "
                                   f"(conf/{group}/{choice}.yaml: {base.get(key)!r})")
    return choice


def rebuild(run_config: Any, params: dict[str, str], keys: list[str], run_id: str) -> tuple[dict[str, str], dict]:
    """(choice per config group, settings per key) of the run's ``keys``, taken from its
    ``config.yaml`` and params as data: each group's choice one of conf/<group>/'s, its ``_target_``
    and other Hydra keys that file's, its settings keys that file defines with plain values; a
    key that is no group (``objective``) a plain value. Anything else is a one-line FedlabError
    naming the key."""
    if not isinstance(run_config, dict):
        raise _refused(run_id, "has a config.yaml that is not a mapping of config keys")
    choices: dict[str, str] = {}
    settings: dict[str, Any] = {}
    for key in keys:
        if key not in run_config:
            raise FedlabError(f"run {run_id} has no '{key}' in its config: export.pipeline_keys lists it")
        node = run_config[key]
        if not group_configs(key):
            _check_data(node, key, run_id)
            settings[key] = node
            continue
        if not isinstance(node, dict):
            raise _refused(run_id, f"has {key}: {str(node)[:60]!r}, not a mapping of {key} settings")
        choice = _choice_for(key, node, params.get(key), run_id)
        base = group_configs(key)[choice]
        values = {}
        for name, value in node.items():
            if str(name).startswith("_"):
                continue
            if name not in base:
                raise _refused(run_id, f"sets {key}.{name}, which conf/{key}/{choice}.yaml does not define")
            _check_data(value, f"{key}.{name}", run_id)
            values[name] = value
        choices[key], settings[key] = choice, values
    from fedlab.schema import check_schema

    try:
        check_schema(settings)  # the types and ranges a run of this checkout would be held to
    except FedlabError as exc:
        raise _refused(run_id, f"has {exc}") from None
    return choices, settings


def render_production(best: ChildRun, choices: dict[str, str], settings: dict, sweep_id: str,
                      calibration: str | None = None, answerability: dict | None = None) -> str:
    """The production config: fedlab's shared groups and the run's group choices in its defaults
    list, the run's settings (no ``_target_``: the code is the chosen files'), the answerability
    model fitted for it, and its provenance."""
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
    header = [" ".join(line.splitlines()) for line in header]  # a tag cannot end the comment and start YAML
    defaults = [*SHARED_DEFAULTS[:2], *({g: c} for g, c in choices.items()), *SHARED_DEFAULTS[2:]]
    body = {"defaults": defaults, "task_name": "evaluate", **settings}
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
    from fedlab.io import replace_together, write_text
    from fedlab.tracking import Tracker, mask_hydra_record, store_errors

    mask_hydra_record()
    tracker = Tracker(cfg.mlflow.tracking_uri, cfg.mlflow.experiment)
    with store_errors(tracker.tracking_uri):  # a damaged store: one line, whichever query meets it
        best, sweep_id, metric, run_config, params = _best_run(cfg, tracker)
    choices, settings = rebuild(run_config, params, list(cfg.pipeline_keys), best.run_id)
    out = Path(str(cfg.out))
    if not cfg.calibration.fit:
        write_text(out, render_production(best, choices, settings, sweep_id))
    else:
        calibration = Path(str(cfg.calibration.out))
        with staged(out, ".yaml") as staged_config, staged(calibration, ".json") as staged_model:
            write_text(staged_config, render_production(best, choices, settings, sweep_id))
            fit_calibration(str(staged_config), str(staged_model), cfg.paths.data_dir,
                            cfg.calibration.get("method", "logistic"), name=str(out),
                            overrides=[str(o) for o in cfg.calibration.get("overrides") or ()])
            write_text(staged_config, render_production(best, choices, settings, sweep_id, calibration_ref(calibration),
                                                        chosen_threshold(str(staged_model))))
            replace_together([(staged_model, calibration), (staged_config, out)])
    print(f"wrote {out}: {best.name} (run {best.run_id}) {metric}={best.metrics[metric]:.3f}")
    if cfg.calibration.fit:
        print(f"the agent's answerability model (fitted on the dev split): {cfg.calibration.out}")
    model_id = log_version(tracker, out, best.run_id, sweep_id, str(cfg.paths.data_dir))
    return Exported(str(cfg.out), best.run_id, best.name, sweep_id, metric, float(best.metrics[metric]),
                    str(cfg.calibration.out) if cfg.calibration.fit else None, model_id)


def log_version(tracker, out: Path, run_id: str, sweep_id: str, data_dir: str) -> str | None:
    """The exported config as an agent version in the tracking store (fedlab.tracing.log_agent_version),
    which evaluations of it are linked to; a store that cannot take it is said in one line, and the
    export stands."""
    import sys

    from omegaconf import OmegaConf

    from fedlab.config import compose
    from fedlab.tracing import AGENT_MODEL_NAME, log_agent_version

    try:
        resolved = OmegaConf.to_container(compose(str(out), [f"paths.data_dir={data_dir}"]), resolve=True)
        model_id = log_agent_version(tracker.mlflow, out, resolved, run_id, tracker.experiment_id, sweep_id)
    except Exception as exc:  # noqa: BLE001 — the config is written; its record in MLflow is extra
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        print(f"warning: {out.name} was not logged as an agent version in MLflow ({type(exc).__name__}: {first})",
              file=sys.stderr)
        return None
    print(f"agent version: MLflow LoggedModel {AGENT_MODEL_NAME} {model_id} (the Models tab of experiment "
          f"{tracker.mlflow.get_experiment(tracker.experiment_id).name!r})")
    return model_id


def _best_run(cfg: DictConfig, tracker) -> tuple[ChildRun, str, str, Any, dict[str, str]]:
    """(the best run of the sweep, the sweep's id, the objective's metric, the run's config.yaml as
    data, its params) from the tracking store."""
    from mlflow.artifacts import download_artifacts

    client = tracker.mlflow.MlflowClient()
    exp = client.get_experiment_by_name(cfg.mlflow.experiment)
    sweep_id = cfg.sweep_run_id
    if sweep_id is None:
        sweep_id = latest_finished_sweep(client, exp.experiment_id)
        if sweep_id is None:
            raise FedlabError(f"no finished sweep in experiment {cfg.mlflow.experiment!r} at "
                              f"{tracker.shown_uri}: run `make sweep` first, or pass sweep_run_id=ID")
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
    return best, sweep_id, metric, _read_run_config(path, best.run_id), dict(client.get_run(best.run_id).data.params)


def _read_run_config(path: str, run_id: str) -> Any:
    """The run's config.yaml as plain data (``yaml.safe_load``: no YAML tags, no objects)."""
    try:
        with open(path, encoding="utf-8") as fh:
            return yaml.safe_load(fh)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise _refused(run_id, f"has a config.yaml that cannot be read as YAML ({type(exc).__name__})") from None


def fit_calibration(production: str, out: str, data_dir: str, method: str = "logistic", name: str | None = None,
                    overrides: list[str] | None = None) -> None:
    """Fit the agent's answerability model on the dev split with the exported pipeline
    (``production``, a config file; ``name``: the file it is going to be, as the model records it;
    ``overrides``: ``calibration.overrides``, e.g. ``dataset.fit_sets=[]``)."""
    from rich.console import Console

    from fedlab.evaluation.answers.calibrate import calibrate, compose_for_agent, print_result

    sets = [f"paths.data_dir={data_dir}", *(overrides or ())]
    console = Console(stderr=True)
    try:
        cfg = compose_for_agent(str(production), sets, "dev")
        result = calibrate(cfg, out=out, config_name=name or str(production), overrides=sets, console=console,
                           method=method)
    except FedlabError as exc:
        raise FedlabError(f"fitting the answerability model for {name or production} failed ({exc}); "
                          "pass calibration.fit=false to export without one") from None
    print_result(result, console)


@contextmanager
def staged(target: Path, suffix: str) -> Iterator[Path]:
    """A new file's path beside ``target`` (same directory, so renaming it into place is atomic),
    removed on the way out unless it was renamed."""
    import tempfile

    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=f".new{suffix}", dir=target.parent)
    os.close(fd)
    try:
        yield Path(name)
    finally:
        Path(name).unlink(missing_ok=True)


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


def calibration_ref(out: str | Path) -> str:
    from fedlab.evaluation.answers.calibrate import config_path

    return config_path(Path(out))

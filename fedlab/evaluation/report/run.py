"""The release report: one config on every registered question set of the chosen roles.

Every set is one evaluation (``fedlab.evaluation.run.evaluate``) in one process, so the sets
share the loaded corpus, indexes and models as a sweep's configs do; each is a child run of one
parent run in the ``fedlab-report`` experiment, with the per-question artifacts any evaluation
has. From those artifacts each set, each role's pool, each category and each group-by field gets
its measures with 95% bootstrap intervals (``intervals``); the generalisation gap is the dev pool
minus the heldout pool. ``--against`` adds, per set, the change from an earlier report with a
paired test (``fedlab.evaluation.compare``) and the number of changed answers
(``fedlab.evaluation.report.changed``).
"""
from __future__ import annotations

import datetime as dt
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from fedlab.errors import FedlabError

EXPERIMENT = "fedlab-report"
REPORT_DIR = "reports"
AGAINST_METRICS = ("answer_accuracy", "false_abstention_rate", "abstention_accuracy", "brier", "recall@10")


@dataclass(frozen=True)
class SetSpec:
    name: str
    role: str  # as registered (the evaluation may read it as test: see effective_role)
    overrides: tuple[str, ...]  # what selects it on top of the report's config
    path: Path


@dataclass
class SetResult:
    spec: SetSpec
    role: str  # as evaluated
    run_id: str
    run_dir: Path
    rows: list[dict]
    dataset_hash: str


@dataclass
class Report:
    config: str
    sets: list[SetResult]
    group_by: tuple[str, ...]
    parent_run_id: str | None = None
    test_reads: int | None = None
    test_reads_since: str | None = None
    model_state: str | None = None
    against: dict[str, dict] = field(default_factory=dict)  # set -> {metric: {a, b, delta, p, better}}
    changed: dict[str, dict] = field(default_factory=dict)  # set -> {n, of, ids}: answers changed since
    data: dict = field(default_factory=dict)  # the JSON form (report.json), filled by summarise()


def plan(roles: tuple[str, ...], set_files: list[str], names: list[str] | None = None) -> list[SetSpec]:
    """The sets to evaluate: the registered ones of ``roles`` (or those ``names``), then each file."""
    from fedlab.dataset.registry import registered, registered_sets

    chosen = [registered(n) for n in names] if names else registered_sets(roles)
    specs = [SetSpec(s.name, s.role, (f"dataset={s.name}",), s.path) for s in chosen]
    seen = {s.name for s in specs}
    for raw in set_files:
        path = Path(raw).expanduser()
        if not path.is_file():
            raise FedlabError(f"--set-file {raw} does not exist: pass a JSONL file in the fomc_qa schema")
        name = path.stem
        while name in seen:
            name = f"{name}_"
        seen.add(name)
        specs.append(SetSpec(name, "heldout", (f"dataset.path={path.resolve()}", "dataset.split=all",
                                               f"dataset.name={name}", "dataset.ids=null"), path.resolve()))
    if not specs:
        raise FedlabError(f"no registered question set has role {', '.join(roles)}: choose --roles among "
                          "dev, heldout, test, train, or pass --set-file PATH")
    return specs


def evaluate_sets(config: str, overrides: list[str], specs: list[SetSpec], group_by: tuple[str, ...],
                  progress: bool, console) -> tuple[list[SetResult], str]:
    """Each set evaluated as a child of one parent run; (results, parent run id)."""
    from fedlab.config import compose
    from fedlab.evaluation.report.collect import dataset_records, question_rows
    from fedlab.evaluation.retrieval.harness import dataset_hash
    from fedlab.evaluation.run import evaluate
    from fedlab.tracking import Tracker, git_commit

    base = compose(config, [*overrides, f"mlflow.experiment={EXPERIMENT}", "mlflow.run_name=null"])
    tracker = Tracker.shared(base.mlflow.tracking_uri, EXPERIMENT)
    results: list[SetResult] = []
    stamp = dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    tags = {"fedlab.report": "parent", "git_commit": git_commit(), "config": config}
    with tracker.run(name=f"report {config} {stamp}", tags=tags) as parent:
        parent_id = parent.info.run_id
        for i, spec in enumerate(specs, 1):
            t0 = time.perf_counter()
            cfg = compose(config, [*overrides, *spec.overrides, f"mlflow.experiment={EXPERIMENT}",
                                   f"mlflow.run_name={spec.name}", f"eval.progress={str(progress).lower()}"])
            console.print(f"[bold]set {i} of {len(specs)}[/]: {spec.name} ({spec.role})")
            result = evaluate(cfg, parent_run_id=parent_id, show=False)
            tracker.mlflow.MlflowClient().set_tag(result.run_id, "report_set", spec.name)
            rows = question_rows(result.out_dir, dataset_records(cfg.dataset.path), group_by)
            role = _evaluated_role(cfg, rows, spec)
            results.append(SetResult(spec, role, result.run_id, result.out_dir, rows, dataset_hash(cfg.dataset.path)))
            console.print(f"  {len(rows)} questions in {time.perf_counter() - t0:.1f} s")
    return results, parent_id


def _evaluated_role(cfg, rows: list[dict], spec: SetSpec) -> str:
    from fedlab.dataset.registry import effective_role
    from fedlab.evaluation.retrieval.harness import load_split

    questions = load_split(cfg.dataset.path, cfg.dataset.split, cfg.dataset.get("ids"))
    return effective_role(str(cfg.dataset.get("role") or spec.role), questions)


def _grouped(outcomes, field_name: str, n_boot: int, seed: int) -> dict[str, dict]:
    import numpy as np

    from fedlab.evaluation.report.intervals import estimate

    labels = outcomes.labels.get(field_name)
    if not labels or not any(labels):
        return {}
    out = {}
    for value in sorted({x for x in labels if x}):
        part = outcomes.subset(np.array([x == value for x in labels]))
        out[value] = estimate(part, n_boot, seed).to_json()
    return out


def summarise(report: Report, n_boot: int = 1000, seed: int = 0) -> dict:
    """report.json's content: per set and per role pool, overall and per group, with intervals;
    the dev − heldout gap; the per-set comparison when there is one."""
    from fedlab.evaluation.report.intervals import MEASURES, Outcomes, difference, estimate
    from fedlab.tracking import git_commit

    fields = ("category", *[g for g in report.group_by if g != "category"], "skill")
    per_set, pools = [], {}
    by_role: dict[str, list] = {}
    for res in report.sets:
        outcomes = Outcomes.from_rows(res.rows, fields)
        by_role.setdefault(res.role, []).append(outcomes)
        per_set.append({
            "name": res.spec.name, "role": res.role, "run_id": res.run_id, "local_dir": str(res.run_dir),
            "dataset_hash": res.dataset_hash, "overall": estimate(outcomes, n_boot, seed).to_json(),
            "groups": {f: g for f in fields if (g := _grouped(outcomes, f, n_boot, seed))},
            **({"against": report.against[res.spec.name]} if res.spec.name in report.against else {}),
            **({"changed_answers": report.changed[res.spec.name]} if res.spec.name in report.changed else {}),
        })
    estimates = {}
    for role, parts in by_role.items():
        pooled = Outcomes.concat(parts)
        estimates[role] = estimate(pooled, n_boot, seed)
        pools[role] = {"sets": [r.spec.name for r in report.sets if r.role == role],
                       "overall": estimates[role].to_json(),
                       "groups": {f: g for f in fields if (g := _grouped(pooled, f, n_boot, seed))}}
    gap = None
    if "dev" in estimates and "heldout" in estimates:
        gap = {k: e.to_json() for k, e in difference(estimates["dev"], estimates["heldout"]).items()}
    return {
        "config": report.config, "git_commit": git_commit(),
        "created": dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat(),
        "parent_run_id": report.parent_run_id, "n_boot": n_boot, "seed": seed, "measures": list(MEASURES),
        "group_by": list(fields),
        "test_reads": {"count": report.test_reads, "since": report.test_reads_since},
        "answerability_model": report.model_state,
        "sets": per_set, "pools": pools, "gap": gap,
    }


def compare_against(results: list[SetResult], earlier: dict[str, str]) -> dict[str, dict]:
    """Per set, each of AGAINST_METRICS the earlier run and this one both have: A (earlier), B
    (now), the change and a paired test (fedlab.evaluation.compare). ``earlier``: an earlier
    report's runs (``earlier_runs``); a set the earlier report lacks gets no entry."""
    from fedlab.evaluation.compare import compare

    out: dict[str, dict] = {}
    for res in results:
        base = earlier.get(res.spec.name)
        if base is None:
            continue
        rows = {}
        for metric in AGAINST_METRICS:
            try:
                comparison = compare(base, str(res.run_dir), [metric])
            except FedlabError:
                continue  # a measure one of the two runs does not have (no unanswerable question …)
            row = comparison.rows[0]
            rows[metric] = {"a": row.mean_a, "b": row.mean_b, "delta": row.delta, "p": row.p_value,
                            "better": row.better, "n": row.n_questions}
        out[res.spec.name] = rows
    return out


def changed_against(results: list[SetResult], earlier: dict[str, str]) -> dict[str, dict]:
    """Per set the earlier report has: the answers that changed (fedlab.evaluation.report.changed),
    as {n, of, ids}; a set whose runs hold no agent answers gets no entry."""
    from fedlab.evaluation.report.changed import changed_between

    out: dict[str, dict] = {}
    for res in results:
        base = earlier.get(res.spec.name)
        changed = changed_between(base, str(res.run_dir)) if base is not None else None
        if changed is not None:
            out[res.spec.name] = changed.to_json()
    return out


def earlier_runs(against: str) -> dict[str, str]:
    """{set name: a run directory or MLflow run id} of an earlier report."""
    path = Path(against)
    if path.suffix == ".json" or path.is_file():
        if not path.is_file():
            raise FedlabError(f"--against {against}: no such report.json (pass a report's parent run id or its file)")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            sets = data["sets"]
        except (ValueError, KeyError, TypeError):
            raise FedlabError(f"--against {against} is not a report.json written by python -m fedlab.report") from None
        out = {}
        for s in sets:
            local = Path(str(s.get("local_dir") or ""))
            out[s["name"]] = str(local) if local.is_dir() else str(s.get("run_id"))
        return out
    from mlflow.tracking import MlflowClient

    from fedlab.tracking import default_tracking_uri

    client = MlflowClient(tracking_uri=default_tracking_uri())
    try:
        parent = client.get_run(against)
    except Exception:  # noqa: BLE001 — MLflow raises several kinds for an unknown id
        raise FedlabError(f"--against {against}: no such MLflow run (pass a report's parent run id or its "
                          "report.json)") from None
    if parent.data.tags.get("fedlab.report") != "parent":
        raise FedlabError(f"--against {against} is not a report's parent run (tag fedlab.report=parent)")
    children = client.search_runs([parent.info.experiment_id],
                                  filter_string=f"tags.mlflow.parentRunId = '{against}'", max_results=1000)
    return {r.data.tags["report_set"]: r.info.run_id for r in children if "report_set" in r.data.tags}

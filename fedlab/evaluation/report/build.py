"""``build_report``: plan the sets, evaluate them, measure, write and log the report."""
from __future__ import annotations

from pathlib import Path

from fedlab.errors import FedlabError


def model_state(config: str, overrides: list[str]) -> str | None:
    """One line on the answerability model the config uses: current, or stale and how to refit."""
    from fedlab.agent.fingerprint import check_model
    from fedlab.config import compose

    cfg = compose(config, list(overrides))
    if "agent" not in cfg or not cfg.agent.get("calibration"):
        return None
    return check_model(cfg).line


def build_report(config: str, overrides: list[str], roles: tuple[str, ...], names: list[str] | None,
                 set_files: list[str], group_by: tuple[str, ...], against: str | None, out_dir: Path,
                 n_boot: int, seed: int, progress: bool, console) -> dict:
    """Evaluate ``config`` on the planned sets and write report.json / report.md / the plots to
    ``out_dir``; log them to the report's parent run. Returns report.json's content."""
    from fedlab.evaluation.gates import DEFAULT_RECORD, read_record
    from fedlab.evaluation.report.reads import test_reads
    from fedlab.evaluation.report.render import markdown, write_figures
    from fedlab.evaluation.report.run import (Report, changed_against, compare_against, earlier_runs, evaluate_sets,
                                              plan, summarise)
    from fedlab.io import write_json, write_text
    from fedlab.tracking import default_tracking_uri

    specs = plan(roles, set_files, names)
    earlier = earlier_runs(against) if against else None  # a bad --against is said before any work
    state = model_state(config, overrides)
    if state:
        console.print(f"answerability model: {state}")
    console.print(f"report of {config} on {len(specs)} set(s): {', '.join(s.name for s in specs)}")
    results, parent_id = evaluate_sets(config, overrides, specs, group_by, progress, console)
    report = Report(config, results, group_by, parent_run_id=parent_id, model_state=state)
    if earlier is not None:
        report.against = compare_against(results, earlier)
        report.changed = changed_against(results, earlier)
    try:
        since = read_record(DEFAULT_RECORD).recorded_at if DEFAULT_RECORD.is_file() else None
    except FedlabError:
        since = None
    report.test_reads_since = since
    report.test_reads = test_reads(default_tracking_uri(), since)
    console.print(f"measuring {len(results)} set(s) with {n_boot} bootstrap resamples")
    data = summarise(report, n_boot, seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_json(out_dir / "report.json", data)
    write_text(out_dir / "report.md", markdown(data))
    figures = write_figures(data, {r.spec.name: r.rows for r in results}, out_dir)
    log_parent(parent_id, data, [out_dir / "report.json", out_dir / "report.md", *figures])
    console.print(f"wrote {out_dir / 'report.md'}, {out_dir / 'report.json'} and {len(figures)} plot(s); "
                  f"MLflow parent run {parent_id} (experiment fedlab-report)")
    return data


def log_parent(run_id: str, data: dict, files: list[Path]) -> None:
    """The pooled and per-set headline measures (``dev.answer_accuracy``, ``set.fresh_dev6.recall_at_10``,
    ``gap.answer_accuracy``; ``.lo`` / ``.hi`` their interval) and the report's files, on the parent run."""
    import time

    from mlflow.entities import Metric
    from mlflow.tracking import MlflowClient

    from fedlab.tracking import default_tracking_uri, mlflow_name, rounded

    now = int(time.time() * 1000)
    metrics = []

    def add(prefix: str, block: dict) -> None:
        for name, est in block.items():
            if isinstance(est, dict) and est.get("value") is not None:
                for suffix, key in (("", "value"), (".lo", "lo"), (".hi", "hi")):
                    if est.get(key) is not None:
                        full = f"{prefix}{name}{suffix}"
                        metrics.append(Metric(mlflow_name(full), rounded(full, est[key]), now, 0))

    for role, pool in data["pools"].items():
        add(f"{role}.", pool["overall"])
    for s in data["sets"]:
        add(f"set.{s['name']}.", s["overall"])
    if data.get("gap"):
        add("gap.", data["gap"])
    client = MlflowClient(tracking_uri=default_tracking_uri())
    for i in range(0, len(metrics), 900):
        client.log_batch(run_id, metrics=metrics[i:i + 900])
    if data["test_reads"]["count"] is not None:
        client.log_metric(run_id, "test_reads", float(data["test_reads"]["count"]))
    for path in files:
        client.log_artifact(run_id, str(path))

"""The evaluation harness end to end: a real MLflow store, a real sweep, export and gate."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from clirun import run_python
from servers import mlflow_server

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = ["recall@1", "recall@3", "recall@5", "recall@10", "mrr@10", "ndcg@10",
            "hit@1", "hit@3", "hit@5", "hit@10", "doc_recall@1", "doc_recall@3", "doc_recall@5", "doc_recall@10"]


_run = run_python


@pytest.fixture(scope="module")
def workspace(tmp_path_factory, corpus_dir):
    """A data dir holding the session's corpus, and one sqlite MLflow store for the module."""
    base = tmp_path_factory.mktemp("eval")
    data = corpus_dir.parent.parent  # <data>/corpus/fomc
    return {"data": data, "uri": f"sqlite:///{base / 'mlflow.db'}", "base": base}


def _bm25_args(ws, *extra: str) -> list[str]:
    return ["-m", "fedlab.evaluate", "retriever=bm25", f"paths.data_dir={ws['data']}",
            f"mlflow.tracking_uri={ws['uri']}", "eval.progress=false", *extra]


def test_evaluate_logs_a_traceable_run(workspace):
    from mlflow.tracking import MlflowClient

    out = workspace["base"] / "metrics.json"
    proc = _run(_bm25_args(workspace, f"eval.metrics_out={out}", "mlflow.run_name=bm25-check"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    metrics = json.loads(out.read_text())
    for name in CONTRACT:
        assert 0.0 <= metrics[name] <= 1.0, name
    assert metrics["recall@10"] >= metrics["recall@5"] >= metrics["recall@1"]
    assert metrics["hit@10"] >= metrics["recall@10"] - 1e-9 or metrics["hit@10"] >= metrics["hit@5"]
    assert metrics["latency_p95_ms_total"] >= metrics["latency_p50_ms_total"] > 0
    assert metrics["n_answerable"] > 50

    client = MlflowClient(workspace["uri"])
    run = client.search_runs([client.get_experiment_by_name("fedlab").experiment_id],
                             filter_string="attributes.run_name = 'bm25-check'")[0]
    assert run.data.params["retriever.kind"] == "bm25"
    assert run.data.params["chunker.size"] == "200"
    assert run.data.metrics["recall_at_5"] == pytest.approx(metrics["recall@5"], abs=5e-5)  # logged to 4 decimals
    for tag in ("corpus_hash", "dataset_hash", "git_commit"):
        assert run.data.tags[tag] and run.data.tags[tag] != "?"
    arts = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"config.yaml", "per_question.jsonl", "metrics.json", "trec"} <= arts
    trec = {a.path for a in client.list_artifacts(run.info.run_id, "trec")}
    assert trec == {"trec/run.trec", "trec/qrels.trec"}


def test_any_dataset_file_in_the_schema_works(workspace, tmp_path):
    rows = [json.loads(x) for x in (ROOT / "datasets/fomc_qa/fomc_qa.jsonl").read_text().splitlines()]
    subset = [r for r in rows if r["category"] == "factual"][:6] + [r for r in rows if not r["answerable"]][:2]
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in subset))
    out = tmp_path / "m.json"
    proc = _run(_bm25_args(workspace, f"dataset.path={path}", "dataset.split=all", f"eval.metrics_out={out}"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(out.read_text())["n_questions"] == 8


def test_duplicate_question_ids_are_refused_before_any_run(workspace, tmp_path):
    """evaluate dataset.path=FILE took two questions with one id and dropped one from the metrics."""
    from mlflow.tracking import MlflowClient

    rows = [json.loads(x) for x in (ROOT / "datasets/fomc_qa/fomc_qa.jsonl").read_text().splitlines()][:5]
    rows.append({**rows[3], "question": "Another question under the same id?"})
    path = tmp_path / "dupes.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    proc = _run(_bm25_args(workspace, f"dataset.path={path}", "dataset.split=all", "mlflow.run_name=dupes"))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert errors == [f"error: {path}: question id {rows[3]['id']!r} is used on line 4 and again on line 6: give each "
                      f"question its own id (python -m fedlab.dataset validate {path} lists every duplicate)"]
    client = MlflowClient(workspace["uri"])
    exp = client.get_experiment_by_name("fedlab")
    assert exp is None or not client.search_runs([exp.experiment_id], "attributes.run_name = 'dupes'")


def test_bad_dataset_path_is_one_line(workspace, tmp_path):
    proc = _run(_bm25_args(workspace, f"dataset.path={tmp_path}/nope.jsonl"))
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    assert "dataset.path" in proc.stderr and "does not exist" in proc.stderr


def test_sweep_export_gate(workspace, tmp_path):
    from mlflow.tracking import MlflowClient

    sweep_dir = tmp_path / "sweep"
    args = _bm25_args(workspace, "retriever.date_aware=true,false", f"hydra.sweep.dir={sweep_dir}")
    proc = _run([*args[:2], "--multirun", *args[2:]])
    assert proc.returncode == 0, proc.stderr[-3000:]
    parent = json.loads((sweep_dir / "mlflow_parent_run.json").read_text())["run_id"]
    client = MlflowClient(workspace["uri"])
    exp = client.get_experiment_by_name("fedlab").experiment_id
    children = client.search_runs([exp], filter_string=f"tags.mlflow.parentRunId = '{parent}'")
    assert len(children) == 2
    parent_run = client.get_run(parent)
    assert parent_run.info.status == "FINISHED"
    assert parent_run.data.metrics["sweep.n_runs"] == 2
    assert {"sweep/recall_vs_latency.png", "sweep/ranked.md"} <= {
        a.path for a in client.list_artifacts(parent, "sweep")}
    best_id = parent_run.data.tags["best_run_id"]
    assert best_id in {c.info.run_id for c in children}
    # a sweep traces a sample of the questions (eval.traces: sample in a multirun), the same in every config
    traced = [{t.info.client_request_id for t in client.search_traces(locations=[exp], run_id=c.info.run_id)}
              for c in children]
    assert len(traced[0]) == 20 and traced[0] == traced[1]

    production = tmp_path / "production.yaml"
    calibrator = tmp_path / "calibration.json"
    proc = _run(["-m", "fedlab.export", f"sweep_run_id={parent}", f"out={production}",
                 f"calibration.out={calibrator}", "calibration.overrides=['dataset.fit_sets=[]']",
                 f"mlflow.tracking_uri={workspace['uri']}",
                 f"paths.data_dir={workspace['data']}"])
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = production.read_text()
    best = max(children, key=lambda r: (r.data.metrics["recall_at_5"], r.data.metrics["mrr_at_10"]))
    assert f"source run: {best.info.run_id}" in text
    assert "corpus version:" in text and "dataset version:" in text
    body = yaml.safe_load(text)
    assert body["retriever"]["kind"] == "bm25"
    assert body["production"]["source_run_id"] == best.info.run_id
    # the agent's calibrator was fitted on dev with this pipeline and is named by the config
    assert body["agent"]["calibration"] == str(calibrator.resolve())
    assert json.loads(calibrator.read_text())["meta"]["split"] == "dev"
    # ... and logged as an agent version: an MLflow LoggedModel with the config, its model and source run
    [version] = client.search_logged_models([exp], filter_string="name = 'fedlab-production'")
    assert version.source_run_id == best.info.run_id and version.params["retriever.kind"] == "bm25"
    assert {"production.yaml", "calibration"} <= {a.path for a in client.list_logged_model_artifacts(version.model_id)}
    assert version.model_id in proc.stdout

    gates = tmp_path / "gates.yaml"
    gates.write_text(yaml.safe_dump({"split": "test", "corpus_hash": body["production"]["corpus_hash"],
                                     "dataset_hash": body["production"]["dataset_hash"], "tolerance": 0.0,
                                     "expected": {"recall@5": 0.0, "mrr@10": 0.0}}))
    common = ["-m", "fedlab.gate", "--config", str(production), "--gates", str(gates),
              f"paths.data_dir={workspace['data']}", f"mlflow.tracking_uri={workspace['uri']}", "eval.progress=false"]
    ok = _run(common)
    assert ok.returncode == 0, ok.stderr[-3000:]
    assert "pass" in ok.stdout
    # the gate's evaluation of the exported config is linked to its agent version, and so are its traces
    gated = client.search_runs([exp], filter_string="tags.dataset_split = 'test'")[0].info.run_id
    assert [m.model_id for m in client.get_run(gated).inputs.model_inputs] == [version.model_id]
    assert {t.info.trace_metadata.get("mlflow.modelId")
            for t in client.search_traces(locations=[exp], run_id=gated, max_results=5)} == {version.model_id}
    failing = _run([*common, "--set", "recall@5=1.01"])
    assert failing.returncode == 1
    assert "gate failed: recall@5" in failing.stderr
    assert "Traceback" not in failing.stderr


def test_a_real_mlflow_server_as_tracking_uri(workspace, tmp_path):
    """MLFLOW_TRACKING_URI pointing at a team's server: here a real `mlflow server` on loopback."""
    from mlflow.tracking import MlflowClient

    with mlflow_server(tmp_path) as uri:
        proc = _run(["-m", "fedlab.evaluate", "retriever=bm25", f"paths.data_dir={workspace['data']}",
                     "eval.progress=false", "mlflow.run_name=via-server", "eval.traces=sample", "eval.trace_sample=5"],
                    env={"MLFLOW_TRACKING_URI": uri})
        assert proc.returncode == 0, proc.stderr[-3000:]
        client = MlflowClient(uri)
        runs = client.search_runs([client.get_experiment_by_name("fedlab").experiment_id])
        assert [r.info.run_name for r in runs] == ["via-server"]
        assert "per_question.jsonl" in {a.path for a in client.list_artifacts(runs[0].info.run_id)}
        traces = client.search_traces(locations=[runs[0].info.experiment_id], run_id=runs[0].info.run_id)
        assert len(traces) == 5 and {t.data.spans[0].span_type for t in traces} == {"RETRIEVER"}

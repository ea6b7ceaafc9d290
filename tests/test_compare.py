"""Significance tests and the compare CLI, on local run directories and a real MLflow store."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fedlab.chunking.chunk import Chunk
from fedlab.compare import main
from fedlab.evaluation.retrieval import trec
from fedlab.evaluation.retrieval.metrics import evaluate_retrieval
from fedlab.evaluation.retrieval.relevance import EvidenceSpan
from fedlab.evaluation.retrieval.significance import ROUTE_PER_QUESTION, ROUTE_RANX, compare_runs, paired_p_value
from fedlab.evaluation.compare import load_run
from fedlab.io import write_jsonl

ROOT = Path(__file__).resolve().parent.parent
N = 30  # questions


def _chunks(width: int) -> list[Chunk]:
    """Chunks of ``width`` characters over 30 documents of 1000 characters."""
    return [Chunk(f"d{q}#{s}-w{width}", f"d{q}", "minutes", "2024-01-31", None, s, s + width, "t", "t")
            for q in range(N) for s in range(0, 1000, width)]


EVIDENCE = {f"q{q:02d}": (EvidenceSpan(f"d{q}", 400, 450),) for q in range(N)}


def _write_run(directory: Path, width: int, relevant_rank: dict[str, int], tag: str) -> Path:
    """Evaluate a synthetic pipeline that puts question q's relevant chunk at relevant_rank[q]
    (0 = not returned) among 10, and write the artifacts compare expects."""
    chunks = _chunks(width)
    rankings = {}
    for qid, ev in EVIDENCE.items():
        (span,) = ev
        doc = [c for c in chunks if c.doc_id == span.doc_id]
        rel = [c for c in doc if c.start <= span.start < c.end][0]
        others = [c for c in chunks if c.doc_id != span.doc_id][:10]
        rank = relevant_rank[qid]
        ranked = others[:9]
        if rank:
            ranked.insert(rank - 1, rel)
        rankings[qid] = ranked
    result = evaluate_retrieval(EVIDENCE, rankings, chunks)
    unanswerable = {"id": "u0", "answerable": False, "k_used": 10, "retrieved": ["x"]}  # as the harness logs it
    write_jsonl(directory / "per_question.jsonl", [unanswerable, *(r.to_json() for r in result.per_question)])
    trec.write_qrels(directory / "trec" / "qrels.trec", result.qrels)
    trec.write_run(directory / "trec" / "run.trec", result.run, tag=tag)
    return directory


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("runs")
    good = {q: 1 for q in EVIDENCE}  # relevant chunk first everywhere
    weak = {q: (0 if i % 2 else 5) for i, q in enumerate(EVIDENCE)}  # rank 5 or missing
    weak["q00"] = 1  # not uniformly worse
    return {
        "good": _write_run(base / "good", 100, good, "good"),
        "good_copy": _write_run(base / "good_copy", 100, good, "good"),
        "weak": _write_run(base / "weak", 100, weak, "weak"),
        "good_other_chunker": _write_run(base / "good_wide", 250, good, "wide"),
    }


def test_clearly_better_run_is_significant(runs):
    a, b = load_run(runs["weak"], "weak"), load_run(runs["good"], "good")
    result = compare_runs(a, b, ["recall@1", "mrr@10", "ndcg@10"])
    rows = {r.metric: r for r in result.rows}
    # Same chunker -> same qrels: ranx metrics go through ranx.compare on the TREC files.
    assert rows["mrr@10"].route == ROUTE_RANX and rows["recall@1"].route == ROUTE_PER_QUESTION
    assert rows["mrr@10"].mean_b == pytest.approx(1.0)
    assert rows["mrr@10"].mean_a == pytest.approx((1 + 14 * 0.2) / 30)  # q00 first, 14 at rank 5
    for r in result.rows:
        assert r.significant and r.p_value < 0.001 and r.delta > 0, r
        assert (r.wins_b, r.ties, r.wins_a) == (29, 1, 0)


def test_identical_runs_are_not_significant(runs):
    a, b = load_run(runs["good"], "a"), load_run(runs["good_copy"], "b")
    for stat_test in ("student", "fisher"):
        result = compare_runs(a, b, ["recall@5", "mrr@10", "hit@1"], stat_test=stat_test)
        for r in result.rows:
            assert r.p_value == 1.0 and not r.significant and r.delta == 0.0, (stat_test, r)


def test_runs_with_different_chunkers_compare_per_question(runs):
    a, b = load_run(runs["weak"], "weak"), load_run(runs["good_other_chunker"], "wide")
    assert a.qrels != b.qrels
    result = compare_runs(a, b, ["mrr@10", "ndcg@10"])
    assert {r.route for r in result.rows} == {ROUTE_PER_QUESTION}
    assert all(r.significant and r.n_questions == N for r in result.rows)


def test_paired_p_value_matches_scipy():
    from scipy.stats import ttest_rel

    a, b = [0.1, 0.5, 0.3, 0.9, 0.4], [0.2, 0.4, 0.6, 0.95, 0.8]
    assert paired_p_value(a, b) == pytest.approx(ttest_rel(a, b).pvalue)
    with pytest.raises(ValueError):
        paired_p_value([1.0], [1.0])


def test_cli_on_local_directories(runs, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    assert main([str(runs["weak"]), str(runs["good"]), "--metrics", "recall@5,mrr@10"]) == 0
    out = capsys.readouterr().out
    assert "recall@5" in out and "mrr@10" in out and "ranx" in out


def test_cli_unknown_metric_and_missing_directory(runs, capsys):
    assert main([str(runs["weak"]), str(runs["good"]), "--metrics", "recall@7"]) == 2
    assert "has no metric recall@7" in capsys.readouterr().err
    assert main([str(runs["weak"]), str(runs["weak"].parent / "nope")]) == 2
    assert "is not a directory" in capsys.readouterr().err


@pytest.fixture(scope="module")
def mlflow_store(tmp_path_factory, runs):
    """One real sqlite store (slow to create: once per module) holding two evaluated runs."""
    from mlflow.tracking import MlflowClient

    root = tmp_path_factory.mktemp("mlflow")
    uri = f"sqlite:///{root / 'mlflow.db'}"
    client = MlflowClient(tracking_uri=uri)
    exp = client.create_experiment("compare-test", artifact_location=(root / "artifacts").as_uri())
    ids = {}
    for name in ("weak", "good"):
        run_id = client.create_run(exp).info.run_id
        client.log_artifact(run_id, str(runs[name] / "per_question.jsonl"))
        client.log_artifacts(run_id, str(runs[name] / "trec"), artifact_path="trec")
        client.set_terminated(run_id)
        ids[name] = run_id
    return uri, ids


def test_cli_on_mlflow_run_ids(mlflow_store, capsys, monkeypatch):
    uri, ids = mlflow_store
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.setenv("COLUMNS", "200")
    assert main([ids["weak"], ids["good"], "--metrics", "ndcg@10"]) == 0
    out = capsys.readouterr().out
    assert "ndcg@10" in out and "ranx" in out


def test_cli_missing_run_id_is_one_line_and_exit_2(mlflow_store):
    uri, _ = mlflow_store
    env = {**os.environ, "MLFLOW_TRACKING_URI": uri, "MLFLOW_DISABLE_TELEMETRY": "true"}
    proc = subprocess.run([sys.executable, "-m", "fedlab.compare", "0" * 32, "1" * 32],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: MLflow run '00000000") and "not found" in lines[0]


def test_cli_missing_store_is_an_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'absent.db'}")
    assert main(["abc123", "def456"]) == 2
    assert "no MLflow store" in capsys.readouterr().err
    assert not (tmp_path / "absent.db").exists()

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
def mlflow_store(tmp_path_factory, runs, agent_runs):
    """One real sqlite store (slow to create: once per module) holding two evaluated runs and two
    runs evaluated with an agent."""
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
    for name in ("blind", "informed"):
        run_id = client.create_run(exp).info.run_id
        for artifact in ("per_question.jsonl", "agent_answers.jsonl"):
            client.log_artifact(run_id, str(agent_runs[name][0] / artifact))
        client.set_terminated(run_id)
        ids[name] = run_id
    return uri, ids


@pytest.mark.parametrize("a,b,metrics,route", [("weak", "good", "ndcg@10", "ranx"),
                                                 ("blind", "informed", "answer_accuracy,auroc", "boot")])
def test_cli_on_mlflow_run_ids(mlflow_store, capsys, monkeypatch, a, b, metrics, route):
    """Retrieval metrics, and the agent's measures from the runs' agent_answers.jsonl."""
    uri, ids = mlflow_store
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.setenv("COLUMNS", "200")
    assert main([ids[a], ids[b], "--metrics", metrics]) == 0
    out = capsys.readouterr().out
    assert all(m in out for m in metrics.split(",")) and route in out


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


# -- agent runs -------------------------------------------------------------------------------------
def _answers(directory: Path, informed: bool) -> list:
    """agent_answers.jsonl for 30 answerable questions (q00-q29, 20 answered right) and 10 unanswerable
    ones (u0-u9, 8 abstained on); the confidence ranks right outputs above wrong ones (``informed``)
    or is unrelated to them."""
    from fedlab.evaluation.record import QuestionRecord

    records = []
    for i in range(40):
        answerable = i < 30
        qid = f"q{i:02d}" if answerable else f"u{i - 30}"
        abstained = (not answerable and i < 38) or (answerable and i % 10 == 9)
        answer_correct = answerable and not abstained and i % 3 != 0
        correct = answer_correct or (not answerable and abstained)
        confidence = ((0.9 if correct else 0.2) - i * 0.001) if informed else 0.3 + 0.6 * ((i * 7) % 11) / 11
        records.append(QuestionRecord(id=qid, category="factual" if answerable else "unanswerable",
                                      answerable=answerable, abstained=abstained, answer_correct=answer_correct,
                                      correct=correct, missing_facts=[], n_citations=0, valid_citations=0,
                                      raw_confidence=confidence, confidence=confidence))
    write_jsonl(directory / "agent_answers.jsonl", [r.to_json() for r in records])
    return records


@pytest.fixture(scope="module")
def agent_runs(tmp_path_factory):
    """The same answers twice with an informed confidence, once with a blind one; each run's records."""
    base = tmp_path_factory.mktemp("agent_runs")
    good = {q: 1 for q in EVIDENCE}
    out = {}
    for name, informed in (("blind", False), ("informed", True), ("informed_copy", True)):
        directory = _write_run(base / name, 100, good, name)
        out[name] = (directory, _answers(directory, informed))
    return out


AGENT_METRICS = ["answer_accuracy", "abstention_accuracy", "false_abstention_rate", "correctness", "brier",
                 "auroc", "ece", "coverage@precision0.9"]


def test_agent_measures_compare_with_the_values_evaluate_reports(agent_runs):
    """Each mean a comparison pairs is the value the evaluation summarises from the same answers."""
    from fedlab.evaluation.answers.measures import summarize
    from fedlab.evaluation.compare import compare

    (blind_dir, _), (informed_dir, records) = agent_runs["blind"], agent_runs["informed"]
    reported = summarize(records, [])
    result = compare(str(blind_dir), str(informed_dir), AGENT_METRICS)
    rows = {r.metric: r for r in result.rows}
    for metric in AGENT_METRICS:
        assert rows[metric].mean_b == pytest.approx(reported[metric]), metric
    assert rows["answer_accuracy"].n_questions == 30 and rows["abstention_accuracy"].n_questions == 10
    assert rows["auroc"].route == "boot" and rows["answer_accuracy"].route == ROUTE_PER_QUESTION


def test_a_confidence_that_ranks_right_answers_first_is_significantly_better(agent_runs):
    from fedlab.evaluation.compare import compare

    result = compare(str(agent_runs["blind"][0]), str(agent_runs["informed"][0]), ["auroc", "brier", "answer_accuracy"])
    rows = {r.metric: r for r in result.rows}
    assert rows["auroc"].mean_b == 1.0 and rows["auroc"].mean_a < 0.8
    assert rows["auroc"].better == "B" and rows["auroc"].p_value < 0.01
    # brier: lower is better, and a win is a lower squared error
    assert rows["brier"].delta < 0 and rows["brier"].better == "B" and rows["brier"].wins_b > rows["brier"].wins_a
    assert rows["answer_accuracy"].delta == 0 and rows["answer_accuracy"].better is None  # the same answers


def test_identical_agent_runs_never_differ(agent_runs):
    from fedlab.evaluation.compare import compare

    result = compare(str(agent_runs["informed"][0]), str(agent_runs["informed_copy"][0]), AGENT_METRICS)
    for r in result.rows:
        assert r.p_value == 1.0 and r.better is None and r.delta == 0.0, r


def test_cli_agent_measures_need_agent_answers(runs, agent_runs, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    assert main([str(agent_runs["blind"][0]), str(agent_runs["informed"][0]), "--metrics", "auroc,brier"]) == 0
    out = capsys.readouterr().out
    assert "auroc" in out and "boot" in out and "brier ↓" in out
    assert main([str(runs["good"]), str(agent_runs["informed"][0]), "--metrics", "auroc"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "has no agent_answers.jsonl for auroc" in err[0]
    broken = agent_runs["blind"][0].parent / "broken"
    _write_run(broken, 100, {q: 1 for q in EVIDENCE}, "broken")
    write_jsonl(broken / "agent_answers.jsonl", [{"id": "q00", "confidence": 0.5}])
    assert main([str(broken), str(agent_runs["informed"][0]), "--metrics", "answer_accuracy"]) == 2
    assert "row 1 is not a judged answer" in capsys.readouterr().err

"""Numbers a researcher can trust: latency measured in the run, runs that last as long as the
work, sweeps that close however they end, params worth reading, failures that keep results."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from clirun import cli_env, run_python

ROOT = Path(__file__).resolve().parent.parent


_env = cli_env
_run = run_python


@pytest.fixture(scope="module")
def ws(tmp_path_factory, corpus_dir):
    base = tmp_path_factory.mktemp("trust")
    return {"data": corpus_dir.parent.parent, "uri": f"sqlite:///{base / 'mlflow.db'}", "base": base}


def _bm25(ws, *extra: str) -> list[str]:
    return ["-m", "fedlab.evaluate", "retriever=bm25", f"paths.data_dir={ws['data']}",
            f"mlflow.tracking_uri={ws['uri']}", "eval.progress=false", f"paths.log_dir={ws['base'] / 'logs'}", *extra]


def _one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, proc.stderr[-2000:]
    for needle in needles:
        assert needle in errors[0], errors[0]
    return errors[0]


# -- latency ------------------------------------------------------------------------------------

class _SlowThenFast:
    """An embedder that was slow when a vector was first computed (a loaded machine) and is
    fast now: a cached vector must not carry the old cost into today's latency."""

    def __init__(self):
        self.calls = 0
        self.loaded = False

    def fingerprint(self) -> str:
        return "slow-then-fast"

    def ensure_loaded(self) -> None:
        self.loaded = True

    def embed_query(self, text: str) -> np.ndarray:
        self.calls += 1
        time.sleep(0.3 if self.calls == 1 else 0.0)
        return np.ones(4, dtype=np.float32)


def test_cached_query_vector_latency_is_measured_now(tmp_path):
    from fedlab.cache import ArtifactCache
    from fedlab.pipeline import QueryCachingEmbedder

    model = _SlowThenFast()
    first = QueryCachingEmbedder(model, ArtifactCache(tmp_path))
    first.embed_query("rates in 2022?")
    assert first.compute_ms >= 300  # the miss paid the slow computation
    later = QueryCachingEmbedder(model, ArtifactCache(tmp_path), time_model=True)  # a later run, same cache
    vec = later.embed_query("rates in 2022?")
    assert np.array_equal(vec, np.ones(4, dtype=np.float32))
    assert model.calls == 2  # the model ran again, timed, though the vector came from the cache
    assert later.compute_ms < 300
    later.warm_up()
    assert model.loaded
    serving = QueryCachingEmbedder(model, ArtifactCache(tmp_path))  # ask / MCP: no extra forward pass
    serving.embed_query("rates in 2022?")
    assert model.calls == 3 and serving.compute_ms == 0.0  # the 3rd call was the warm-up; no 4th


def test_the_question_heads_read_of_a_query_vector_is_never_timed(tmp_path):
    """The agent's question head reads the question's vector before the search embeds the same
    text: that read is not charged, and a measured search still times the model on it once."""
    from fedlab.cache import ArtifactCache
    from fedlab.pipeline import QueryCachingEmbedder

    model = _SlowThenFast()
    measuring = QueryCachingEmbedder(model, ArtifactCache(tmp_path), time_model=True)
    assert np.array_equal(measuring.query_vector("rates in 2023?"), np.ones(4, dtype=np.float32))
    assert model.calls == 1 and measuring.compute_ms == 0.0  # computed (a miss), not charged
    measuring.embed_query("rates in 2023?")
    assert model.calls == 2 and measuring.compute_ms > 0.0  # the search's run: timed once
    measuring.query_vector("rates in 2023?")
    assert model.calls == 2  # a cached read: no model run


# -- params, names, precision, redaction --------------------------------------------------------

def _composed(*overrides: str) -> dict:
    from omegaconf import OmegaConf

    from fedlab.config import compose

    return OmegaConf.to_container(compose("evaluate", list(overrides)), resolve=True)


def test_params_are_the_settings_that_change_a_result():
    from fedlab.tracking import run_params

    bm25 = run_params(_composed("retriever=bm25"), {"retriever": "bm25", "chunker": "recursive"})
    assert bm25["retriever"] == "bm25" and bm25["chunker.size"] == "200" and "bm25.k1" in bm25
    assert not any(k.startswith(("embedder", "index", "paths", "mlflow", "hydra", "corpus.fetch")) for k in bm25)
    assert not any("_target_" in k or "_partial_" in k or "_convert_" in k for k in bm25)
    assert not any(os.path.isabs(v) for v in bm25.values())
    dense = run_params(_composed("retriever=dense"), {"embedder": "minilm"})
    assert dense["embedder"] == "minilm" and "index" in dense and not any(k.startswith("bm25") for k in dense)
    hybrid = run_params(_composed("retriever=hybrid"))
    assert {"embedder", "index", "bm25"} <= set(hybrid)
    assert len(hybrid) < 70  # runs once logged 72, most of them plumbing
    # an option switched off is its switch alone: its settings cannot change the result
    assert "retriever.rocchio.enabled" in hybrid and "retriever.rocchio.beta" not in hybrid
    assert "retriever.prf.kind" in hybrid and "retriever.prf.fb_docs" not in hybrid
    rocchio = run_params(_composed("retriever=hybrid", "retriever.rocchio.enabled=true"))
    assert rocchio["retriever.rocchio.beta"] == str(_composed("retriever=hybrid")["retriever"]["rocchio"]["beta"])


def test_redaction_by_exact_name_and_by_value(monkeypatch):
    from fedlab.tracking import flatten

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-abcdefgh12345678")
    flat = flatten({"lm": {"max_tokens": 512, "api_key": "whatever", "api_key_env": "ANTHROPIC_API_KEY",
                           "note": "key sk-ant-abcdefgh12345678 pasted", "token": "t0k3n-value"}})
    assert flat["lm.max_tokens"] == "512"  # a setting whose name merely contains "token"
    assert flat["lm.api_key_env"] == "ANTHROPIC_API_KEY"  # the variable's name is not a secret
    assert flat["lm.api_key"] == flat["lm.note"] == flat["lm.token"] == "***"


def test_metric_precision():
    from fedlab.tracking import rounded

    assert rounded("recall@5", 0.4501811594) == 0.4502
    assert rounded("latency_p95_ms_total", 10.569871) == 10.57
    assert rounded("build_s.embeddings", 55.04871) == 55.05


def test_run_names_lead_with_what_varies():
    from omegaconf import OmegaConf

    from fedlab.config import compose
    from fedlab.evaluation.naming import run_name

    cfg = compose("evaluate", ["retriever=bm25", "retriever.top_k=5"])
    assert run_name(cfg) == "bm25/recursive200-40/date/k5"
    assert run_name(cfg, ["retriever.top_k"]) == "k5 · bm25/recursive200-40/date"
    assert run_name(cfg, ["chunker.size", "retriever"]).startswith("bm25/recursive200-40 · ")
    OmegaConf.set_struct(cfg, False)
    cfg.retriever.rrf_k = 30
    assert run_name(cfg, ["retriever.rrf_k"]).startswith("rrf_k=30 · ")


# -- one evaluation run, as MLflow shows it -------------------------------------------------------

def test_run_lasts_as_long_as_the_work_and_reads_well(ws):
    from mlflow.tracking import MlflowClient

    out = ws["base"] / "m.json"
    started = time.time()
    proc = _run(_bm25(ws, f"eval.metrics_out={out}", "mlflow.run_name=duration-check"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    metrics = json.loads(out.read_text())
    client = MlflowClient(ws["uri"])
    exp = client.get_experiment_by_name("fedlab")
    assert "one run per pipeline config" in exp.tags["mlflow.note.content"]
    run = client.search_runs([exp.experiment_id], filter_string="attributes.run_name = 'duration-check'")[0]
    duration_s = (run.info.end_time - run.info.start_time) / 1000
    # opened before the pipeline was built, closed after the evaluation: it covers the build
    assert duration_s >= metrics["build_s.total"]
    assert run.info.start_time / 1000 >= started - 1
    assert not any(k.startswith(("corpus.fetch", "paths", "mlflow", "embedder")) for k in run.data.params)
    assert all(len(str(v).split(".")[-1]) <= 4 for k, v in run.data.metrics.items() if k.startswith("recall"))
    local = Path(run.data.tags["local_dir"])
    rows = [json.loads(x) for x in (local / "per_question.jsonl").read_text().splitlines()]
    assert list(rows[0])[:3] == ["id", "question", "category"]
    assert rows[0]["question"].strip()
    # per-category metrics: their question-weighted mean is the overall figure
    scored = [r for r in rows if "recall@5" in r]
    counts = {c: sum(r["category"] == c for r in scored) for c in {r["category"] for r in scored}}
    assert len(counts) >= 3
    weighted = sum(metrics[f"recall@5.{c}"] * n for c, n in counts.items()) / len(scored)
    assert weighted == pytest.approx(metrics["recall@5"], abs=1e-9)


@pytest.mark.parametrize("value,needle", [("0", "out of range"), ("-3", "out of range"), ("abc", "not a whole number")])
def test_nonsense_top_k_is_refused_before_any_run(ws, value, needle):
    from mlflow.tracking import MlflowClient

    proc = _run(_bm25(ws, f"retriever.top_k={value}", f"mlflow.run_name=topk-{value}"))
    _one_line_error(proc, "retriever.top_k", needle)
    client = MlflowClient(ws["uri"])
    exp = client.get_experiment_by_name("fedlab")
    if exp is not None:
        assert not client.search_runs([exp.experiment_id], filter_string=f"attributes.run_name = 'topk-{value}'")


@pytest.mark.parametrize("sets,needles", [
    (["retriever=hybrid", "retriever.rrf_k=-60"], ["retriever.rrf_k=-60 is out of range", "greater than 0"]),
    (["retriever=hybrid", "retriever.candidates=lots"], ["retriever.candidates='lots' is not a whole number"]),
    (["retriever=bm25", "bm25.k1=-1"], ["bm25.k1=-1 is out of range"]),
    (["retriever=bm25", "reranker._target_=os.system"], ["reranker._target_='os.system'", "not one of fedlab's own"]),
], ids=["rrf_k", "candidates", "k1", "blocked-target"])
def test_settings_out_of_their_schema_are_refused_before_any_run(ws, sets, needles):
    """retriever.rrf_k=-60 ran (recall@5 0.457 -> 0.147); a target Hydra blocks was a traceback."""
    from mlflow.tracking import MlflowClient

    name = f"schema-{sets[-1].split('=')[0]}"
    proc = _run(["-m", "fedlab.evaluate", *sets, f"paths.data_dir={ws['data']}", f"mlflow.tracking_uri={ws['uri']}",
                 "eval.progress=false", f"paths.log_dir={ws['base'] / 'logs'}", f"mlflow.run_name={name}"])
    _one_line_error(proc, *needles)
    assert "building" not in proc.stderr
    client = MlflowClient(ws["uri"])
    exp = client.get_experiment_by_name("fedlab")
    if exp is not None:
        assert not client.search_runs([exp.experiment_id], filter_string=f"attributes.run_name = '{name}'")


def test_unreachable_tracking_server_fails_fast_in_one_line(ws, tmp_path):
    out = tmp_path / "m.json"
    proc = _run(["-m", "fedlab.evaluate", "--config-name", "production", f"paths.data_dir={ws['data']}",
                 f"eval.metrics_out={out}", "eval.progress=false"], env={"MLFLOW_TRACKING_URI": "http://127.0.0.1:9"},
                timeout=120)
    _one_line_error(proc, "http://127.0.0.1:9", "cannot be reached")
    assert "building" not in proc.stderr  # nothing was built before the store was checked


def test_a_file_store_uri_is_refused_in_one_line_that_names_the_database_to_use(ws, tmp_path):
    """MLflow 3 refuses its file store (./mlruns) with a traceback: say so before any work, with
    the sqlite URI to use instead."""
    store = tmp_path / "mlruns"
    proc = _run(_bm25(ws, f"mlflow.tracking_uri=file://{store}"), env={"MLFLOW_ALLOW_FILE_STORE": ""})
    _one_line_error(proc, f"file://{store}", f"sqlite:///{tmp_path}/mlflow.db")
    assert "building" not in proc.stderr and not store.exists()


def test_a_logging_failure_keeps_the_finished_evaluation(tmp_path, ws):
    """The store accepts the run but cannot take its artifacts (its artifact directory's path
    is blocked by a file): the metrics and artifacts stay on disk, the run is FAILED."""
    from mlflow.tracking import MlflowClient

    (tmp_path / "mlartifacts").write_text("a file where the artifact directory should be")
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    out = tmp_path / "m.json"
    proc = _run(["-m", "fedlab.evaluate", "retriever=bm25", f"paths.data_dir={ws['data']}", f"mlflow.tracking_uri={uri}",
                 "eval.progress=false", f"eval.metrics_out={out}", f"paths.log_dir={tmp_path / 'logs'}",
                 "mlflow.run_name=kept"])
    line = _one_line_error(proc, "logging run 'kept' to MLflow", "kept in")
    assert json.loads(out.read_text())["recall@5"] > 0
    kept = Path(re.search(r"kept in (\S+)", line).group(1))
    assert (kept / "per_question.jsonl").is_file() and (kept / "metrics.json").is_file()
    client = MlflowClient(uri)
    run = client.search_runs([client.get_experiment_by_name("fedlab").experiment_id])[0]
    assert run.info.status == "FAILED"


# -- sweeps --------------------------------------------------------------------------------------

def test_an_interrupted_sweep_is_closed_and_named_on_rerun(ws, tmp_path):
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    args = ["-m", "fedlab.evaluate", "--multirun", "retriever=bm25", "retriever.top_k=3,5,8,10,20",
            f"paths.data_dir={ws['data']}", f"mlflow.tracking_uri={uri}", "eval.progress=false",
            f"paths.log_dir={tmp_path / 'logs'}", "+study.name=interrupt"]
    client = MlflowClient(uri)
    client.search_experiments()  # the store exists before the sweep starts: two processes creating it race
    proc = subprocess.Popen([sys.executable, *args], cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 300
    finished = []
    while time.time() < deadline and not finished:
        time.sleep(0.5)
        assert proc.poll() is None, proc.stderr.read()[-2000:]
        try:
            exp = client.get_experiment_by_name("fedlab")
            finished = exp and client.search_runs([exp.experiment_id], "attributes.status = 'FINISHED'")
        except Exception:  # noqa: BLE001 — the store is still being created
            finished = []
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=120)
    assert proc.returncode == 130
    exp = client.get_experiment_by_name("fedlab")
    parent = client.search_runs([exp.experiment_id], "tags.`fedlab.sweep` = 'parent'")[0]
    assert parent.info.status == "KILLED"
    assert parent.info.run_name == "sweep:interrupt" and parent.data.tags["sweep.n_configs"] == "5"
    children = client.search_runs([exp.experiment_id], f"tags.mlflow.parentRunId = '{parent.info.run_id}'")
    assert children and not [c for c in children if c.info.status == "RUNNING"]
    n_done = sum(c.info.status == "FINISHED" for c in children)
    assert 1 <= n_done < 5

    again = subprocess.run([sys.executable, *args[:4], "retriever.top_k=3", *args[5:]], cwd=ROOT, env=_env(),
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]
    assert f"previous sweep:interrupt (run {parent.info.run_id}" in again.stderr
    assert f"ended KILLED after {n_done} of 5 configs" in again.stderr


# -- the gate ------------------------------------------------------------------------------------

def test_gate_exit_codes_and_data_check(ws, tmp_path):
    from fedlab.evaluation.retrieval.harness import dataset_hash
    from fedlab.corpus.snapshot import load_corpus

    production = yaml.safe_load((ROOT / "conf" / "production.yaml").read_text())
    production["retriever"] = {**production["retriever"], "kind": "bm25"}
    # the answerability model is fitted per retriever kind: the BM25 one, with its own threshold
    production["agent"] = {"calibration": str(ROOT / "conf" / "calibration" / "extractive-bm25.json")}
    production["production"]["corpus_hash"] = load_corpus(Path(ws["data"]) / "corpus" / "fomc").content_hash
    production["production"]["dataset_hash"] = dataset_hash(ROOT / "datasets" / "fomc_qa" / "fomc_qa.jsonl")
    path = tmp_path / "prod.yaml"
    path.write_text(yaml.safe_dump(production))
    gates = tmp_path / "gates.yaml"
    recorded_data = {"split": "test", "corpus_hash": production["production"]["corpus_hash"],
                     "dataset_hash": production["production"]["dataset_hash"]}
    gates.write_text(yaml.safe_dump({**recorded_data, "tolerance": 0.0, "expected": {"recall@5": 0.0}}))
    # a BM25 variant of production with the BM25 model, which was fitted on another config: not a release
    common = ["-m", "fedlab.gate", "--config", str(path), "--gates", str(gates), "--allow-stale-model",
              f"paths.data_dir={ws['data']}",
              f"mlflow.tracking_uri={ws['uri']}", "eval.progress=false"]

    changed = dict(production, production={**production["production"], "corpus_hash": "0000000000000000"})
    stale = tmp_path / "stale.yaml"
    stale.write_text(yaml.safe_dump(changed))
    refused = _run([*common[:3], str(stale), *common[4:]])
    assert refused.returncode == 3, refused.stderr[-2000:]
    assert "data changed" in refused.stderr and "0000000000000000" in refused.stderr
    assert "Traceback" not in refused.stderr

    cannot = _run([*common[:5], str(tmp_path / "no-gates.yaml"), *common[6:]])
    assert cannot.returncode == 2 and "could not run" in cannot.stderr

    unreachable = _run([c for c in common if not c.startswith("mlflow.tracking_uri=")],
                       env={"MLFLOW_TRACKING_URI": "http://127.0.0.1:9"}, timeout=120)
    assert unreachable.returncode == 2 and "could not run" in unreachable.stderr

    passes = _run([*common[:3], str(stale), *common[4:], "--allow-data-change"])
    assert passes.returncode == 0, passes.stderr[-2000:]

    # the record's own data: another corpus than recorded is refused before anything is measured
    other = tmp_path / "other-gates.yaml"
    other.write_text(yaml.safe_dump({**recorded_data, "corpus_hash": "1111111111111111", "tolerance": 0.0,
                                     "expected": {"recall@5": 0.0}}))
    mismatch = _run([*common[:5], str(other), *common[6:]])
    assert mismatch.returncode == 3, mismatch.stderr[-2000:]
    line, = [x for x in mismatch.stderr.splitlines() if x.startswith("gate refused:")]
    assert "data mismatch" in line and "1111111111111111" in line and "--record" in line


def test_gate_record_round_trips(ws, tmp_path):
    """`--record` measures and writes a record that the same config then passes, on the same data."""
    from fedlab.evaluation.retrieval.harness import dataset_hash
    from fedlab.corpus.snapshot import load_corpus

    production = yaml.safe_load((ROOT / "conf" / "production.yaml").read_text())
    production["retriever"] = {**production["retriever"], "kind": "bm25"}
    production["agent"] = {"calibration": str(ROOT / "conf" / "calibration" / "extractive-bm25.json")}
    corpus = load_corpus(Path(ws["data"]) / "corpus" / "fomc").content_hash
    dataset = dataset_hash(ROOT / "datasets" / "fomc_qa" / "fomc_qa.jsonl")
    production["production"].update(corpus_hash=corpus, dataset_hash=dataset)
    path = tmp_path / "prod.yaml"
    path.write_text(yaml.safe_dump(production))
    record = tmp_path / "record.yaml"  # new: the metrics and tolerances of conf/gates.yaml
    common = ["-m", "fedlab.gate", "--config", str(path), "--gates", str(record), "--allow-stale-model",
              f"paths.data_dir={ws['data']}",
              f"mlflow.tracking_uri={ws['uri']}", "eval.progress=false"]
    recorded = _run([*common, "--record"])
    assert recorded.returncode == 0, recorded.stderr[-2000:]
    body = yaml.safe_load(record.read_text())
    shipped = yaml.safe_load((ROOT / "conf" / "gates.yaml").read_text())
    assert (body["corpus_hash"], body["dataset_hash"], body["split"]) == (corpus, dataset, "test")
    assert body["tolerance"] == shipped["tolerance"] and set(body["expected"]) == set(shipped["expected"])
    again = _run(common)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "FAIL" not in again.stdout and "stale" not in again.stdout


def _set_up_tracker(uri: str) -> None:
    from fedlab.tracking import Tracker

    Tracker(uri, "started-together")


def test_evaluations_started_together_on_a_fresh_store_both_set_it_up(tmp_path):
    """MLflow creates and migrates a new sqlite store's tables with no lock of its own: four
    processes setting one up at once used to fail ("table … already exists") but one."""
    import multiprocessing

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_set_up_tracker, args=(uri,)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    from mlflow.tracking import MlflowClient

    assert [e.name for e in MlflowClient(uri).search_experiments() if e.name == "started-together"] == ["started-together"]

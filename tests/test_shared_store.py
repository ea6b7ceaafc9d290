"""A tracking store shared with others: what export takes from it is data, never code; secrets in
its URI stay out of logs, params and artifacts; a sweep or run of another live process is left
alone; an interrupted export keeps the previous config and model together; a damaged store is
one line.

Runs against real sqlite MLflow stores (and a real `mlflow server` on loopback); commands run as a
user runs them, in subprocesses.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from clirun import run_python
from omegaconf import OmegaConf

ROOT = Path(__file__).resolve().parent.parent
PIPELINE_KEYS = ["chunker", "embedder", "index", "bm25", "retriever", "reranker", "objective"]


def one_error_line(proc: subprocess.CompletedProcess, *needles: str) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-3000:])
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, proc.stderr[-3000:]
    for needle in needles:
        assert needle in errors[0], errors[0]
    return errors[0]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> dict:
    """One sqlite store for the module (creating one costs seconds); each test its own experiment."""
    from mlflow.tracking import MlflowClient

    base = tmp_path_factory.mktemp("store")
    uri = f"sqlite:///{base / 'mlflow.db'}"
    MlflowClient(uri).search_experiments()  # created (and migrated) once
    return {"uri": uri, "base": base}


def run_config(*overrides: str) -> dict:
    """The config.yaml an evaluation run of ``overrides`` logs (resolved, as evaluate writes it)."""
    from fedlab.config import compose

    return OmegaConf.to_container(compose("evaluate", list(overrides)), resolve=True)


def logged_sweep(store: dict, experiment: str, config: dict, params: dict[str, str]) -> tuple[str, str]:
    """A finished sweep with one finished child run on dev, as a writer of the store logs it
    (any writer: the config.yaml artifact and the params are whatever it chose). (parent, child)."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(store["uri"])
    exp = client.create_experiment(experiment, artifact_location=(store["base"] / "artifacts" / experiment).as_uri())
    parent = client.create_run(exp, run_name="sweep:planted", tags={"fedlab.sweep": "parent"}).info.run_id
    child = client.create_run(exp, run_name="best", tags={"mlflow.parentRunId": parent, "dataset_split": "dev",
                                                          "corpus_hash": "c0ffee", "dataset_hash": "d00d"})
    cid = child.info.run_id
    for name, value in {"recall_at_5": 0.9, "mrr_at_10": 0.8, "ndcg_at_10": 0.7, "latency_p95_ms_total": 10.0}.items():
        client.log_metric(cid, name, value)
    for key, value in params.items():
        client.log_param(cid, key, value)
    client.log_text(cid, yaml.safe_dump(config), "config.yaml")
    client.set_terminated(cid, "FINISHED")
    client.set_terminated(parent, "FINISHED")
    return parent, cid


def export(store: dict, experiment: str, parent: str, out: Path, *extra: str, env: dict | None = None):
    return run_python(["-m", "fedlab.export", f"sweep_run_id={parent}", f"out={out}", "calibration.fit=false",
                       f"mlflow.tracking_uri={store['uri']}", f"mlflow.experiment={experiment}", *extra], env=env,
                      timeout=300)


# -- 1. export takes data from the store, never code --------------------------------------------

PLANTED = {"reranker": {"_target_": "fedlab.io.write_text", "path": "MARKER", "text": "written by the store"}}


@pytest.mark.parametrize("params", [{}, {"reranker": "none"}], ids=["no-choice", "choice-none"])
def test_export_refuses_code_planted_in_the_best_runs_config(store, tmp_path, params):
    marker = tmp_path / "planted"
    config = {**run_config("retriever=bm25"), "reranker": {**PLANTED["reranker"], "path": str(marker)}}
    experiment = f"planted-{len(params)}"
    parent, child = logged_sweep(store, experiment, config, params)
    out = tmp_path / "production.yaml"
    out.write_text("previous\n")
    proc = export(store, experiment, parent, out)
    line = one_error_line(proc, f"run {child}", "reranker._target_", "fedlab.io.write_text")
    assert "fedlab's own" in line
    assert not marker.exists()  # nothing was called
    assert out.read_text() == "previous\n"  # nothing was written


def test_export_refuses_a_choice_that_is_not_fedlabs(store, tmp_path):
    parent, child = logged_sweep(store, "bad-choice", run_config("retriever=bm25"), {"reranker": "evil"})
    proc = export(store, "bad-choice", parent, tmp_path / "production.yaml")
    one_error_line(proc, "reranker='evil'", "cross_encoder, late_interaction, none")
    assert not (tmp_path / "production.yaml").exists()


@pytest.mark.parametrize("where,value,needle", [
    ("retriever.adaptive_top_k", {"_target_": "os.system", "_args_": ["id"]}, "retriever.adaptive_top_k._target_"),
    ("retriever.corpus_end", "${oc.env:HOME}", "retriever.corpus_end to an interpolation"),
    ("chunker.hook", "x", "chunker.hook, which conf/chunker/recursive.yaml does not define"),
    ("retriever._partial_", False, "retriever._partial_"),
])
def test_export_refuses_anything_but_plain_settings(where, value, needle):
    from fedlab.errors import FedlabError
    from fedlab.sweeps.production import rebuild

    config = run_config("retriever=bm25")
    group, key = where.split(".")
    config[group][key] = value
    with pytest.raises(FedlabError, match="fedlab's own configs") as err:
        rebuild(config, {}, PIPELINE_KEYS, "r1")
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_export_holds_a_stores_settings_to_their_schema():
    from fedlab.errors import FedlabError
    from fedlab.sweeps.production import rebuild

    config = run_config("retriever=hybrid")
    config["retriever"]["rrf_k"] = -60
    with pytest.raises(FedlabError, match=r"run r1 of the tracking store has retriever.rrf_k=-60 is out of range"):
        rebuild(config, {"retriever": "hybrid"}, PIPELINE_KEYS, "r1")


def test_export_rebuilds_the_pipeline_from_fedlabs_groups(store, tmp_path):
    from fedlab.config import compose

    config = run_config("retriever=hybrid", "chunker.size=256", "chunker.overlap=0", "retriever.statement_quota=10",
                        "retriever.length_norm=log", "index=faiss_hnsw")
    params = {"retriever": "hybrid", "chunker": "recursive", "embedder": "minilm", "index": "faiss_hnsw"}
    parent, child = logged_sweep(store, "rebuilt", config, params)
    out = tmp_path / "production.yaml"
    proc = export(store, "rebuilt", parent, out)
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = out.read_text()
    assert "_target_" not in text  # the code is named by the choices, from conf/
    body = yaml.safe_load(text)
    assert {"retriever": "hybrid"} in body["defaults"] and {"index": "faiss_hnsw"} in body["defaults"]
    assert body["production"]["source_run_id"] == child
    composed = OmegaConf.to_container(compose(str(out)), resolve=True)
    for key in PIPELINE_KEYS:  # it runs exactly the pipeline the run measured
        assert composed[key] == config[key], key


def test_a_config_file_from_outside_conf_may_call_only_fedlabs_code(tmp_path):
    """`--config FILE` (ask, gate, mcp, calibrate) and a Hydra app's `--config-dir`: a `_target_`
    that none of fedlab's group files names is refused in one line, before anything is called."""
    marker = tmp_path / "planted"
    production = yaml.safe_load((ROOT / "conf" / "production.yaml").read_text())
    production["reranker"] = {**PLANTED["reranker"], "path": str(marker)}
    planted = tmp_path / "planted.yaml"
    planted.write_text(yaml.safe_dump(production))
    for args in (["-m", "fedlab.ask", "--config", str(planted), "What did the FOMC decide in March 2020?"],
                 ["-m", "fedlab.gate", "--config", str(planted)]):
        proc = run_python(args, timeout=300)
        if args[1] == "fedlab.gate":  # the gate's own exit code for "could not run"
            assert proc.returncode == 2 and "reranker._target_" in proc.stderr and "Traceback" not in proc.stderr
        else:
            one_error_line(proc, str(planted), "reranker._target_='fedlab.io.write_text'", "conf/reranker/")
    (tmp_path / "confdir").mkdir()
    (tmp_path / "confdir" / "planted.yaml").write_text(yaml.safe_dump(production))
    proc = run_python(["-m", "fedlab.evaluate", "--config-dir", str(tmp_path / "confdir"), "--config-name", "planted",
                       f"paths.log_dir={tmp_path / 'logs'}", f"mlflow.tracking_uri=sqlite:///{tmp_path / 'm.db'}"],
                      timeout=300)
    one_error_line(proc, "reranker._target_", "not one of fedlab's own")
    assert not marker.exists()


# -- 5. the config and its answerability model are replaced together ------------------------------

def test_an_interrupted_export_keeps_the_previous_config_and_model(store, tmp_path, corpus_dir):
    """Ctrl-C while the model is being fitted: neither file is replaced, no staged file is left."""
    import signal
    import time

    from clirun import cli_env

    config = run_config("retriever=bm25")
    parent, _ = logged_sweep(store, "interrupted-export", config, {"retriever": "bm25"})
    out, model = tmp_path / "production.yaml", tmp_path / "calibration.json"
    out.write_text("previous config\n")
    model.write_text("previous model\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "fedlab.export", f"sweep_run_id={parent}", f"out={out}", f"calibration.out={model}",
         f"mlflow.tracking_uri={store['uri']}", "mlflow.experiment=interrupted-export",
         f"paths.data_dir={corpus_dir.parent.parent}"],
        cwd=ROOT, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 240
    while time.time() < deadline and not list(tmp_path.glob(".production.yaml.*")):
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        time.sleep(0.1)
    time.sleep(1.0)  # the fit is under way: it builds the pipeline and answers the dev split
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr[-3000:]
    assert out.read_text() == "previous config\n" and model.read_text() == "previous model\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["calibration.json", "production.yaml"]


# -- 2. credentials in the tracking URI ------------------------------------------------------------

SECRET = "S3cret-Pa55w0rd"


def _files_holding(root: Path, text: str) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and text.encode() in p.read_bytes()]


def test_credentials_in_the_tracking_uri_never_reach_logs_params_artifacts_or_errors(tmp_path, corpus_dir):
    """A real `mlflow server` on loopback addressed as http://alice:PASSWORD@host (the server takes
    the Basic credentials and ignores them): the run is logged, and the password is in no output,
    log file, param, tag or artifact — also when the URI is given on the command line."""
    from mlflow.tracking import MlflowClient
    from servers import mlflow_server

    data = corpus_dir.parent.parent
    with mlflow_server(tmp_path / "server") as uri:
        secret_uri = uri.replace("http://", f"http://alice:{SECRET}@")
        masked = uri.replace("http://", "http://alice:***@")
        common = ["-m", "fedlab.evaluate", "retriever=bm25", f"paths.data_dir={data}", "eval.progress=false",
                  f"paths.log_dir={tmp_path / 'logs'}"]
        by_env = run_python([*common, "mlflow.run_name=by-env"], env={"MLFLOW_TRACKING_URI": secret_uri})
        by_arg = run_python([*common, "mlflow.run_name=by-arg", f"mlflow.tracking_uri={secret_uri}"])
        for proc in (by_env, by_arg):
            assert proc.returncode == 0, proc.stderr[-3000:]
            assert SECRET not in proc.stdout + proc.stderr
        client = MlflowClient(uri)
        runs = client.search_runs([client.get_experiment_by_name("fedlab").experiment_id])
        assert sorted(r.info.run_name for r in runs) == ["by-arg", "by-env"]
        for run in runs:
            assert not [v for v in (*run.data.params.values(), *run.data.tags.values()) if SECRET in v]
            config = yaml.safe_load(Path(client.download_artifacts(run.info.run_id, "config.yaml", str(tmp_path)))
                                    .read_text())
            assert config["mlflow"]["tracking_uri"] == masked
        logs = tmp_path / "logs"
        assert list(logs.rglob("evaluate.log")) and list(logs.rglob("overrides.yaml"))
        assert "HTTP Request" in "".join(p.read_text() for p in logs.rglob("evaluate.log"))  # httpx's lines are kept
        assert _files_holding(logs, SECRET) == [] and _files_holding(tmp_path / "server", SECRET) == []
    down = run_python([*common, "mlflow.run_name=down"], env={"MLFLOW_TRACKING_URI": f"http://alice:{SECRET}@127.0.0.1:9"},
                      timeout=120)
    one_error_line(down, "http://alice:***@127.0.0.1:9", "cannot be reached")
    assert SECRET not in down.stdout + down.stderr


def test_uri_credentials_are_masked_in_params_and_log_records(caplog):
    import logging

    from fedlab.env import mask_credentials
    from fedlab.tracking import flatten

    assert mask_credentials("http://alice:p@ss:w0rd@host:5000/x") == "http://alice:***@host:5000/x"
    assert mask_credentials("at https://TOKEN123@host/ and sqlite:///a/b.db") == "at https://***@host/ and sqlite:///a/b.db"
    assert mask_credentials("mail alice@example.com, lm.max_tokens") == "mail alice@example.com, lm.max_tokens"
    assert flatten({"mlflow": {"tracking_uri": f"http://alice:{SECRET}@h:5000"}}) == {
        "mlflow.tracking_uri": "http://alice:***@h:5000"}
    httpx_log = logging.getLogger("httpx")
    record = httpx_log.makeRecord("httpx", logging.INFO, __file__, 1, 'HTTP Request: %s %s "%s"',
                                  ("GET", f"http://alice:{SECRET}@h/health", "200 OK"), None)
    assert record.getMessage() == 'HTTP Request: GET http://alice:***@h/health "200 OK"'  # masked as it is made
    with caplog.at_level(logging.INFO, logger="httpx"):  # (a handler's own filter, litellm's, may mask it again)
        httpx_log.info('HTTP Request: %s %s "%s"', "GET", f"http://alice:{SECRET}@h/health", "200 OK")
    assert SECRET not in caplog.text and "@h/health" in caplog.text


# -- 4 and 12. a RUNNING run is closed only when its process is gone -----------------------------

def _sweep_args(uri: str, data: Path, logs: Path, values: str, study: str) -> list[str]:
    return ["-m", "fedlab.evaluate", "--multirun", "retriever=bm25", f"retriever.top_k={values}",
            f"paths.data_dir={data}", f"mlflow.tracking_uri={uri}", "eval.progress=false", f"paths.log_dir={logs}",
            f"+study.name={study}"]


def _runs(client, **where) -> list:
    exp = client.get_experiment_by_name("fedlab")
    if exp is None:
        return []
    found = client.search_runs([exp.experiment_id], max_results=1000)
    return [r for r in found if all(r.data.tags.get(k) == v or getattr(r.info, k, None) == v for k, v in where.items())]


def _wait_for(predicate, proc: subprocess.Popen, timeout_s: float = 300) -> None:
    import time

    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if predicate():
            return
        assert proc.poll() is None, proc.stderr.read()[-3000:] if proc.stderr else proc.returncode
        time.sleep(0.3)
    raise AssertionError("timed out")


def _sweep_started(client, name: str) -> list:
    return [r for r in _runs(client) if r.info.run_name == name and r.data.tags.get("fedlab.sweep") == "parent"]


@pytest.mark.slow  # two sweeps in subprocesses (minutes); the rule itself: test_only_runs_of_gone_processes_are_closed
def test_a_second_sweep_leaves_a_live_sweep_of_the_same_study_alone(tmp_path, corpus_dir):
    """Two sweeps of one study at once: the second marked the first's live parent and its running
    child KILLED, and the first's ranking (so export) covered 4 of its 5 configs."""
    from mlflow.tracking import MlflowClient

    from clirun import cli_env

    uri, data = f"sqlite:///{tmp_path / 'mlflow.db'}", corpus_dir.parent.parent
    client = MlflowClient(uri)
    client.search_experiments()  # the store exists before either sweep starts
    grid = ",".join(str(k) for k in range(3, 21))  # 18 configs: still running when the second sweep starts
    first = subprocess.Popen([sys.executable, *_sweep_args(uri, data, tmp_path / "l1", grid, "together")],
                             cwd=ROOT, env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(lambda: _sweep_started(client, "sweep:together"), first)
        parent, = _sweep_started(client, "sweep:together")
        second = run_python(_sweep_args(uri, data, tmp_path / "l2", "3", "together"))
        assert second.returncode == 0, second.stderr[-3000:]
        assert f"run {parent.info.run_id} is still running (process {first.pid} on " in second.stderr, second.stderr
        assert "ended KILLED" not in second.stderr
        assert first.wait(timeout=600) == 0, first.stderr.read()[-3000:]
    finally:
        if first.poll() is None:
            first.kill()
    ran = client.get_run(parent.info.run_id)
    children = [r for r in _runs(client) if r.data.tags.get("mlflow.parentRunId") == parent.info.run_id]
    assert ran.info.status == "FINISHED" and ran.data.metrics["sweep.n_runs"] == 18
    assert sorted(c.info.status for c in children) == ["FINISHED"] * 18


@pytest.mark.slow  # an evaluation and two sweeps in subprocesses, killed with -9 (minutes)
def test_runs_of_a_process_killed_with_9_are_closed_by_the_next_run(tmp_path, corpus_dir):
    """kill -9 leaves a run (and a sweep's parent) RUNNING for ever, and a build's temporary
    directory in the cache: the next evaluation or sweep on the store marks them KILLED, by the
    same pid+host check (the sweep says what the killed one finished), and the next build in that
    cache removes the directory."""
    import signal

    from mlflow.tracking import MlflowClient

    from clirun import cli_env

    uri, data = f"sqlite:///{tmp_path / 'mlflow.db'}", corpus_dir.parent.parent
    client = MlflowClient(uri)
    client.search_experiments()
    # one evaluation on a cache of its own, killed while it builds the chunks (its run is open)
    cache = tmp_path / "cache"
    single = subprocess.Popen([sys.executable, "-m", "fedlab.evaluate", "retriever=bm25", f"paths.data_dir={data}",
                               f"paths.cache_dir={cache}", f"mlflow.tracking_uri={uri}", "eval.progress=false",
                               f"paths.log_dir={tmp_path / 'l0'}", "mlflow.run_name=killed"],
                              cwd=ROOT, env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    unfinished = lambda: [p for p in (cache / "chunks").glob(".*.*") if p.is_dir()]  # noqa: E731
    _wait_for(unfinished, single)
    single.send_signal(signal.SIGKILL)
    single.wait(timeout=30)
    killed, = [r for r in _runs(client) if r.info.run_name == "killed"]
    assert killed.info.status == "RUNNING" and killed.data.tags["fedlab.pid"] == str(single.pid)
    assert unfinished()  # kill -9 left its build's temporary directory
    # a sweep, killed after its first config; its first run closed the evaluation's
    log = tmp_path / "sweep.err"
    with open(log, "w") as err:
        sweep = subprocess.Popen([sys.executable, *_sweep_args(uri, data, tmp_path / "l1", "3,5,8,10,20", "killed")],
                                 cwd=ROOT, env=cli_env(), stdout=subprocess.DEVNULL, stderr=err)
        _wait_for(lambda: any(r.info.status == "FINISHED" and r.data.tags.get("mlflow.parentRunId")
                              for r in _runs(client)), sweep)
        sweep.send_signal(signal.SIGKILL)
        sweep.wait(timeout=30)
    assert f"run {killed.info.run_id} (killed) was left RUNNING by process {single.pid}" in log.read_text()
    assert client.get_run(killed.info.run_id).info.status == "KILLED"
    parent, = _sweep_started(client, "sweep:killed")
    assert client.get_run(parent.info.run_id).info.status == "RUNNING"
    done = [c for c in _runs(client) if c.data.tags.get("mlflow.parentRunId") == parent.info.run_id
            and c.info.status == "FINISHED"]

    again = run_python([*_sweep_args(uri, data, tmp_path / "l2", "3", "killed"), f"paths.cache_dir={cache}"])
    assert again.returncode == 0, again.stderr[-3000:]
    assert not unfinished()  # cleaned by the next build there
    assert f"previous sweep:killed (run {parent.info.run_id}" in again.stderr
    assert f"ended KILLED after {len(done)} of 5 configs" in again.stderr
    assert client.get_run(parent.info.run_id).info.status == "KILLED"
    assert not [r for r in _runs(client) if r.info.status == "RUNNING"]


def test_process_liveness(tmp_path):
    from fedlab.tracking import process_alive, process_tags

    assert process_alive(process_tags()) is True
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    assert process_alive(process_tags(gone.pid)) is False
    reused = {**process_tags(), "fedlab.pid_start": "1"}  # this pid, but a process started at another time
    assert process_alive(reused) is False
    assert process_alive({**process_tags(), "fedlab.host": "another-host"}) is None
    assert process_alive({}) is None  # a run of an older fedlab, or of another tool


def test_only_runs_of_gone_processes_are_closed(store):
    """close_abandoned_runs marks KILLED a RUNNING run whose process is gone, and leaves alone a
    live process's run, another host's, one without process tags and a finished one."""
    from mlflow.tracking import MlflowClient

    from fedlab.tracking import close_abandoned_runs, process_tags

    client = MlflowClient(store["uri"])
    exp = client.create_experiment("abandoned", artifact_location=(store["base"] / "artifacts" / "abandoned").as_uri())
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    tags = {"gone": process_tags(gone.pid), "live": process_tags(), "elsewhere": {**process_tags(gone.pid),
            "fedlab.host": "another-host"}, "untagged": {}, "finished": process_tags(gone.pid)}
    runs = {name: client.create_run(exp, tags=t, run_name=name).info.run_id for name, t in tags.items()}
    client.set_terminated(runs["finished"], "FINISHED")
    closed = close_abandoned_runs(client, exp)
    assert [r.info.run_name for r in closed] == ["gone"]
    status = {name: client.get_run(run_id).info.status for name, run_id in runs.items()}
    assert status == {"gone": "KILLED", "live": "RUNNING", "elsewhere": "RUNNING", "untagged": "RUNNING",
                      "finished": "FINISHED"}


# -- 10. a damaged store ------------------------------------------------------------------------------

@pytest.mark.parametrize("damage", ["not-sqlite", "malformed"])
def test_a_damaged_store_is_one_line_in_evaluate_export_and_gate(store, tmp_path, corpus_dir, damage):
    """82-128-line tracebacks from evaluate and export; the gate's line said only "Query-invoked autoflush"."""
    import shutil

    db = tmp_path / "mlflow.db"
    shutil.copyfile(store["uri"].removeprefix("sqlite:///"), db)  # a real store, then damaged
    size = db.stat().st_size
    with open(db, "r+b") as fh:
        if damage == "not-sqlite":
            fh.write(os.urandom(size))
        else:  # the header intact, the pages after it overwritten
            fh.seek(4096)
            fh.write(b"\xff" * (size - 8192))
    uri, data = f"sqlite:///{db}", corpus_dir.parent.parent
    said = "is not an SQLite database" if damage == "not-sqlite" else "is damaged (SQLite: database disk image is malformed)"
    commands = {
        "evaluate": ["-m", "fedlab.evaluate", "retriever=bm25", f"paths.data_dir={data}", f"mlflow.tracking_uri={uri}",
                     "eval.progress=false", f"paths.log_dir={tmp_path / 'logs'}"],
        "export": ["-m", "fedlab.export", f"mlflow.tracking_uri={uri}", f"out={tmp_path / 'p.yaml'}",
                   "calibration.fit=false"],
        "gate": ["-m", "fedlab.gate", "--config", "evaluate", "retriever=bm25", f"paths.data_dir={data}",
                 f"mlflow.tracking_uri={uri}", "eval.progress=false", "--allow-data-change"],
    }
    for name, args in commands.items():
        line = one_error_line(run_python(args, timeout=300), str(db), said, "restore it from a backup")
        assert len(line) < 400, (name, line)

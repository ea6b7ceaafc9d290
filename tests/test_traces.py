"""Every question inspectable in the MLflow UI: traces, their assessments, the dataset input, agent versions.

The unit tests use a recorder of their own (fedlab.spans needs no MLflow); the end-to-end test runs
a small evaluation against a real `mlflow server` on loopback and reads back, through MLflow's REST
API and client, the run's dataset input, its traces with RETRIEVER spans and their assessments.
"""
from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path

import pytest
from clirun import run_python
from servers import mlflow_server

from fedlab import spans
from fedlab.errors import FedlabError

ROOT = Path(__file__).resolve().parent.parent
BM25_MODEL = ROOT / "conf" / "calibration" / "extractive-bm25.json"
FACTUAL = "Where did the FOMC leave the fed funds target range at its January 2019 meeting?"


# -- the knob ----------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["all", "sample", "off", False])
def test_the_trace_modes_are_accepted(mode):
    from fedlab.tracing import check_traces, trace_mode

    check_traces(mode, 20)
    assert trace_mode(mode) in ("all", "sample", "off")  # a bare `traces: off` in YAML reads as false


@pytest.mark.parametrize("mode, sample, said", [
    ("sometimes", 20, "eval.traces='sometimes': use one of all, sample, off"),
    (True, 20, "eval.traces=True: use one of all, sample, off"),
    (None, 20, "eval.traces=None: use one of all, sample, off"),
    ("sample", 0, "eval.trace_sample=0: give the number of questions to trace"),
    ("sample", "ten", "eval.trace_sample='ten': give the number of questions to trace"),
    ("sample", 2.5, "eval.trace_sample=2.5: give the number of questions to trace"),
])
def test_a_bad_trace_setting_is_one_line_naming_the_fix(mode, sample, said):
    from fedlab.tracing import check_traces

    with pytest.raises(FedlabError) as err:
        check_traces(mode, sample)
    assert said in str(err.value) and "\n" not in str(err.value)


def test_a_single_evaluation_traces_every_question_and_a_sweep_a_sample():
    from fedlab.config import compose

    cfg = compose("evaluate", [])
    assert cfg.eval.traces == "all" and cfg.eval.trace_sample == 20
    assert compose("production", []).eval.traces == "all"
    assert compose("evaluate", ["eval.traces=off"]).eval.traces == "off"
    hydra_job = ROOT / "conf" / "eval" / "default.yaml"
    assert "${eval_traces:}" in hydra_job.read_text()  # sample in a multirun: fedlab.config.default_traces


def test_the_trace_setting_is_not_a_run_param():
    from fedlab.tracking import run_params

    params = run_params({"eval": {"traces": "all", "trace_sample": 20, "relevance": "meeting"}})
    assert "eval.relevance" in params and not any("trace" in k for k in params)


def test_evaluate_refuses_a_bad_trace_mode_in_one_line(tmp_path):
    proc = run_python(["-m", "fedlab.evaluate", "retriever=bm25", "eval.traces=sometimes",
                       f"mlflow.tracking_uri=sqlite:///{tmp_path / 'm.db'}"])
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "eval.traces" in line]
    assert lines == ["error: eval.traces='sometimes': use one of all, sample, off "
                     "(all: every question; sample: eval.trace_sample of them; off: none)"]


def test_a_sample_is_the_same_questions_in_every_run():
    from fedlab.tracing import sample_ids

    ids = [f"q-{i:03d}" for i in range(200)]
    chosen = sample_ids(ids, 20)
    assert len(chosen) == 20 and chosen == sample_ids(list(reversed(ids)), 20)
    assert sample_ids(ids[:5], 20) == set(ids[:5])


# -- the hooks -----------------------------------------------------------------------------------
class Recorder:
    """A recorder that keeps what fedlab.spans hands it: (name, kind, inputs, outputs, parent)."""

    def __init__(self, only=None):
        self.only = only
        self.spans: list[dict] = []
        self.assessed: dict[str, list] = {}
        self.expected: dict[str, list] = {}
        self._stack: list[dict] = []

    def wants(self, qid):
        return self.only is None or qid in self.only

    @contextmanager
    def root(self, name, kind, inputs):
        with self.span(name, kind, inputs) as span:
            yield span

    @contextmanager
    def span(self, name, kind, inputs):
        record = {"name": name, "kind": kind, "inputs": inputs, "outputs": None,
                  "parent": self._stack[-1]["name"] if self._stack else None, "documents": None}
        self.spans.append(record)
        self._stack.append(record)
        recorder = self

        class Live(spans.Span):
            recording = True

            def set_outputs(self, outputs):
                record["outputs"] = outputs

            def retrieved(self, result):
                record["documents"] = [h.chunk.chunk_id for h in result.hits]

            def assess(self, measures):
                recorder.assessed[record["inputs"]["id"]] = list(measures)

            def expect(self, expectations):
                recorder.expected[record["inputs"]["id"]] = list(expectations)

        try:
            yield Live()
        finally:
            self._stack.pop()


def test_without_a_recorder_the_hooks_record_nothing():
    with spans.question("q1", "what?") as root, spans.step("search", "RETRIEVER", {"query": "x"}) as step:
        assert root is spans.NULL and step is spans.NULL and not root.recording
        root.set_outputs({"answer": "y"})  # ignored
        root.assess([("correct", True, None)])


def test_a_step_outside_a_question_is_not_a_trace_of_its_own():
    recorder = Recorder()
    with spans.recording(recorder):
        with spans.step("search", "RETRIEVER", {"query": "x"}) as step:
            assert step is spans.NULL
        with spans.question("q1", "what?") as root:
            with spans.step("search", "RETRIEVER", {"query": "x"}) as step:
                assert step.recording
            with spans.question("q2", "nested?") as inner:  # a question inside another is no trace
                assert inner is spans.NULL
        with spans.question("q3", "left out?") as root3:
            pass
    assert [s["name"] for s in recorder.spans] == ["question", "search", "question"]
    assert recorder.spans[1]["parent"] == "question"
    assert root3.recording
    sampled = Recorder(only={"q1"})
    with spans.recording(sampled), spans.question("q2", "not sampled") as root:
        with spans.step("search", "RETRIEVER") as step:
            assert root is spans.NULL and step is spans.NULL
    assert sampled.spans == []


@pytest.fixture(scope="module")
def agent(corpus_dir):
    from fedlab.agent.answering import compose_config
    from fedlab.agent.build import build_agent

    cfg = compose_config("evaluate", ["retriever=bm25", f"paths.data_dir={corpus_dir.parent.parent}",
                                      f"agent.calibration={BM25_MODEL}"])
    return build_agent(cfg)


def test_a_recorded_answer_is_the_same_answer_and_shows_its_steps(agent):
    plain = agent(FACTUAL)
    recorder = Recorder()
    with spans.recording(recorder), spans.question("qa-1", FACTUAL) as root:
        traced = agent(FACTUAL)
        root.set_outputs(traced.outputs())
    strip = lambda a: {k: v for k, v in a.to_json().items() if k != "latency_ms"}  # noqa: E731
    assert strip(traced) == strip(plain)
    names = [(s["name"], s["kind"]) for s in recorder.spans]
    assert names[0] == ("question", "AGENT")
    assert ("assess_query", "CHAIN") in names and ("synthesize_answer", "CHAIN") in names
    assert ("validate_citations", "PARSER") in names
    searches = [s for s in recorder.spans if s["kind"] == "RETRIEVER"]
    assert searches and all(s["parent"] == "question" and s["documents"] for s in searches)
    assert searches[0]["inputs"]["hint"] == {"date_from": "2019-01-01", "date_to": "2019-01-31", "scope": "meeting"}
    assert set(traced.retrieved_chunk_ids) >= {c for s in searches for c in s["documents"]}
    out = recorder.spans[0]["outputs"]
    assert out["answer"] == traced.answer and out["abstained"] is False and out["citations"]
    assert out["skill"] == traced.skill  # the skill that answered, on the root and on the drafting step
    [drafted] = [s for s in recorder.spans if s["name"] == "synthesize_answer"]
    assert drafted["outputs"]["skill"] == traced.skill and drafted["outputs"]["skills"] == traced.skills


def test_the_assessments_of_an_answer(agent, corpus_dir):
    from fedlab.dataset.schema import load_dataset
    from fedlab.evaluation.assessments import answer_measures, expectations
    from fedlab.evaluation.answers.measures import judge_answer

    q = next(q for q in load_dataset(ROOT / "datasets/fomc_qa/fomc_qa.jsonl") if q.id == "qa-a-001")
    a = agent(q.question)
    record = judge_answer(q, a, (), {})
    measures = {name: (value, why) for name, value, why, _ in answer_measures(q, a, record, {"recall@10": 0.5})}
    assert measures["correct"][0] is record.correct
    assert measures["missing_key_facts"][0] == len(record.missing_facts)
    assert measures["abstained"] == (False, "answered")
    assert measures["confidence"][0] == a.confidence and measures["recall@10"][0] == 0.5
    assert measures["citation_validity"][0] == 1.0
    assert "meeting_recall@5" not in measures  # not given: left out
    assert measures["skill"][0] == a.skill and a.skill in measures["skill"][1]
    assert dict((n, v) for n, v, _ in expectations(q))["key_facts"] == list(q.key_facts)


def test_secrets_never_reach_a_trace(monkeypatch):
    from fedlab.tracing import Tracer

    monkeypatch.setenv("FEDLAB_TEST_API_KEY", "s3cr3t-value-123")
    tracer = Tracer("all")
    cleaned = tracer.clean({"question": "what about s3cr3t-value-123?", "api_key": "abc",
                            "base_url": "http://alice:hunter22@host:5000/x", "passages": ["fine", "s3cr3t-value-123"],
                            "k": 10})
    assert cleaned == {"question": "***", "api_key": "***", "base_url": "http://alice:***@host:5000/x",
                       "passages": ["fine", "***"], "k": 10}


def test_a_question_is_written_to_the_store_after_the_timed_work(tmp_path, monkeypatch):
    """The Tracer keeps a question's steps in memory while it is answered and writes them when told
    (spans.release), with their own times: a RETRIEVER span with the passages' doc_id, chunk id,
    score and date, the answer on the root, the assessments on the trace; all in a real store."""
    from types import SimpleNamespace

    import mlflow
    from mlflow.tracking import MlflowClient

    from fedlab.tracing import Tracer

    for name in ("MLFLOW_ASYNC_TRACE_LOGGING_MAX_QUEUE_SIZE", "MLFLOW_ASYNC_TRACE_LOGGING_MAX_WORKERS"):
        monkeypatch.delenv(name, raising=False)  # the Tracer sets them for the process: undone after the test
    monkeypatch.setattr(mlflow.tracking.fluent, "_active_experiment_id", None)  # restored after the test
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    before = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(uri)
    chunk = SimpleNamespace(text="The Committee decided to maintain the target range.", doc_id="statement-2019-01-30",
                            chunk_id="statement-2019-01-30#0-50-ab", meeting_date="2019-01-30", doc_type="statement",
                            section=None)
    result = SimpleNamespace(hits=[SimpleNamespace(chunk=chunk, score=12.5, rank=1)], hint=None, k_used=10,
                             timings={"search": 1.5})
    try:
        experiment = mlflow.set_experiment("traces-unit").experiment_id
        tracer = Tracer("all", ids=["q1"], tags={"fedlab.source": "test"})
        with mlflow.start_run() as run, spans.recording(tracer):
            with spans.question("q1", "Where was the range left?") as root:
                with spans.step("search", "RETRIEVER", {"query": "range"}) as step:
                    step.retrieved(result)
                root.set_outputs({"answer": "It was maintained [1].", "abstained": False, "skill": "hold_run"})
                root.expect([("answerable", True, None)])
                root.assess([("correct", True, "answered with every key fact"), ("recall@10", None, "left out")])
            assert tracer.trace_ids == {}  # nothing written while the work is timed
            spans.release()
            tracer.flush()
        [trace] = MlflowClient(uri).search_traces(locations=[experiment], run_id=run.info.run_id)
    finally:
        mlflow.set_tracking_uri(before)
    assert tracer.trace_ids == {"q1": trace.info.trace_id} and trace.info.client_request_id == "q1"
    root_span, search = trace.data.spans
    assert root_span.outputs["skill"] == "hold_run" and trace.info.request_preview == "Where was the range left?"
    assert search.span_type == "RETRIEVER" and search.parent_id == root_span.span_id
    assert search.start_time_ns >= root_span.start_time_ns and search.end_time_ns <= root_span.end_time_ns
    [doc] = search.outputs
    assert {k: doc["metadata"][k] for k in ("doc_id", "chunk_id", "score", "meeting_date")} == {
        "doc_id": "statement-2019-01-30", "chunk_id": "statement-2019-01-30#0-50-ab", "score": 12.5,
        "meeting_date": "2019-01-30"}
    feedback = {a.name: a for a in trace.info.assessments if a.feedback is not None}
    assert set(feedback) == {"correct"} and feedback["correct"].value is True  # a value of None is left out
    assert feedback["correct"].source.source_type == "CODE"
    assert [a.name for a in trace.info.assessments if a.expectation is not None] == ["answerable"]


# -- end to end: a real MLflow server -------------------------------------------------------------
def small_set(path: Path) -> Path:
    rows = [json.loads(x) for x in (ROOT / "datasets/fomc_qa/fomc_qa.jsonl").read_text().splitlines()]
    dev = [r for r in rows if r["split"] == "dev"]
    chosen = [r for r in dev if r["answerable"] and r["category"] == "factual"][:6] + \
        [r for r in dev if not r["answerable"]][:2]
    path.write_text("".join(json.dumps(r) + "\n" for r in chosen))
    return path


@pytest.mark.slow  # a server, and an agent evaluation through it: over a minute on 2 busy cores
def test_an_evaluation_is_traced_into_a_real_mlflow_server(corpus_dir, tmp_path):
    """The issue's check, against `mlflow server` on loopback: the run has its dataset input,
    one trace per question with RETRIEVER spans carrying the passages, and their assessments."""
    import httpx
    from mlflow.tracking import MlflowClient

    questions = small_set(tmp_path / "small.jsonl")
    with mlflow_server(tmp_path) as uri:
        proc = run_python(["-m", "fedlab.evaluate", "retriever=bm25", "agent=default", "lm=extractive",
                           f"agent.calibration={BM25_MODEL}", f"paths.data_dir={corpus_dir.parent.parent}",
                           f"dataset.path={questions}", "dataset.split=all", "eval.progress=false",
                           "mlflow.run_name=traced"], env={"MLFLOW_TRACKING_URI": uri})
        assert proc.returncode == 0, proc.stderr[-3000:]
        client = MlflowClient(uri)
        experiment = client.get_experiment_by_name("fedlab").experiment_id
        run_id = client.search_runs([experiment])[0].info.run_id

        # the dataset input, as the UI's Dataset column reads it (REST)
        run = httpx.get(f"{uri}/api/2.0/mlflow/runs/get", params={"run_id": run_id}, timeout=30).json()["run"]
        [dataset_input] = run["inputs"]["dataset_inputs"]
        dataset = dataset_input["dataset"]
        assert dataset["name"] == "small" and dataset["digest"] and json.loads(dataset["source"])["uri"] == str(questions)
        tags = {t["key"]: t["value"] for t in dataset_input["tags"]}
        assert tags["mlflow.data.context"] == "heldout" and tags["role"] == "heldout" and tags["split"] == "all"
        assert json.loads(dataset["profile"])["num_rows"] == 8

        # one trace per question, linked to the run (REST search, then the client for the spans)
        found = httpx.post(f"{uri}/api/3.0/mlflow/traces/search", timeout=30, json={
            "locations": [{"type": "MLFLOW_EXPERIMENT", "mlflow_experiment": {"experiment_id": experiment}}],
            "filter": f"metadata.`mlflow.sourceRun` = '{run_id}'", "max_results": 50}).json()
        infos = found["traces"]
        assert len(infos) == 8
        asked = {json.loads(x)["id"] for x in questions.read_text().splitlines()}
        assert {i["client_request_id"] for i in infos} == asked
        traces = client.search_traces(locations=[experiment], run_id=run_id)
        assert len(traces) == 8
        answered = 0
        for trace in traces:
            root = trace.data.spans[0]
            assert root.span_type == "AGENT" and root.inputs["question"] and "abstained" in root.outputs
            feedback = {a.name: a for a in trace.info.assessments if a.feedback is not None}
            expected = {a.name: a for a in trace.info.assessments if a.expectation is not None}
            assert {"correct", "abstained", "confidence"} <= set(feedback)
            assert feedback["correct"].source.source_type == "CODE" and feedback["correct"].rationale
            assert "answerable" in expected
            retrievers = [s for s in trace.data.spans if s.span_type == "RETRIEVER"]
            if not retrievers:  # answered from a fact about the corpus (its coverage): no search
                assert feedback["abstained"].value is True
                continue
            answered += 1
            doc = retrievers[0].outputs[0]
            assert {"doc_id", "chunk_id", "score", "meeting_date"} <= set(doc["metadata"]) and doc["page_content"]
            if expected["answerable"].value:
                assert {"recall@10", "meeting_recall@5", "missing_key_facts"} <= set(feedback)
        assert answered >= 6


def otel(value: dict):
    """A span attribute as the REST API returns it (an OpenTelemetry AnyValue) as data."""
    if "array_value" in value:
        return [otel(v) for v in value["array_value"].get("values", [])]
    if "kvlist_value" in value:
        return {kv["key"]: otel(kv.get("value", {})) for kv in value["kvlist_value"].get("values", [])}
    if not value:  # null
        return None
    [(kind, plain)] = value.items()
    return int(plain) if kind == "int_value" else plain


@pytest.mark.slow  # a server's start and an evaluation through it: ~40 s on 2 idle cores, minutes on busy ones
def test_a_retrieval_run_is_traced_into_a_real_mlflow_server(corpus_dir, tmp_path):
    """Against `mlflow server` on loopback, read back through its REST API: the run's dataset
    input; a trace per question, its search alone (a RETRIEVER root whose documents carry doc_id,
    chunk id, score and date); recall@10 and meeting_recall@5 as code assessments. The registered
    set becomes one MLflow evaluation dataset with its answer key."""
    import httpx
    import mlflow

    with mlflow_server(tmp_path) as uri:
        proc = run_python(["-m", "fedlab.evaluate", "retriever=bm25", f"paths.data_dir={corpus_dir.parent.parent}",
                           "dataset.ids=qa-a-00", "eval.progress=false", "mlflow.run_name=first",
                           f"hydra.run.dir={tmp_path / 'first'}"], env={"MLFLOW_TRACKING_URI": uri})
        assert proc.returncode == 0, proc.stderr[-3000:]
        api = httpx.Client(base_url=f"{uri}/api", timeout=30)
        experiment = api.get("/2.0/mlflow/experiments/get-by-name",
                             params={"experiment_name": "fedlab"}).json()["experiment"]["experiment_id"]
        [run] = api.post("/2.0/mlflow/runs/search", json={"experiment_ids": [experiment]}).json()["runs"]
        run_id, run_tags = run["info"]["run_id"], {t["key"]: t["value"] for t in run["data"]["tags"]}

        # the dataset input, as the UI's Dataset column reads it
        [dataset_input] = run["inputs"]["dataset_inputs"]
        assert dataset_input["dataset"]["name"] == "fomc_qa"
        assert dataset_input["dataset"]["digest"] == run_tags["dataset_hash"]
        assert {t["key"]: t["value"] for t in dataset_input["tags"]}["mlflow.data.context"] == "dev"

        # a trace per question, linked to the run, with its assessments
        rows = {r["id"]: r for r in map(json.loads, (tmp_path / "first" / "artifacts" / "per_question.jsonl").open())}
        infos = api.post("/3.0/mlflow/traces/search", json={
            "locations": [{"type": "MLFLOW_EXPERIMENT", "mlflow_experiment": {"experiment_id": experiment}}],
            "filter": f"metadata.`mlflow.sourceRun` = '{run_id}'", "max_results": 50}).json()["traces"]
        assert {i["client_request_id"] for i in infos} == set(rows) and len(rows) == 5
        for info in infos:
            row = rows[info["client_request_id"]]
            feedback = {a["assessment_name"]: a for a in info["assessments"] if "feedback" in a}
            assert {name: a["feedback"]["value"] for name, a in feedback.items()} == \
                {"recall@10": row["recall@10"], "meeting_recall@5": row["meeting_recall@5"]}
            assert {a["source"]["source_type"] for a in feedback.values()} == {"CODE"}

            # its spans: the search alone, a RETRIEVER with the passages it returned
            trace = api.get("/3.0/mlflow/traces/get", params={"trace_id": info["trace_id"]}).json()["trace"]
            [span] = trace["spans"]
            attributes = {a["key"]: otel(a["value"]) for a in span["attributes"]}
            assert attributes["mlflow.spanType"] == "RETRIEVER"
            docs = attributes["mlflow.spanOutputs"]
            assert [d["id"] for d in docs] == row["retrieved"]
            assert {"doc_id", "chunk_id", "score", "meeting_date"} <= set(docs[0]["metadata"])
        before = mlflow.get_tracking_uri()
        mlflow.set_tracking_uri(uri)
        try:
            from mlflow.genai.datasets import search_datasets

            from fedlab.dataset.registry import registered as registered_set
            from fedlab.evaluation.retrieval.harness import load_split
            from fedlab.tracing import register_question_set

            member = registered_set("fomc_qa")
            again = register_question_set(mlflow, uri, load_split(member.path, "dev", "qa-a-00"), "fomc_qa",
                                          run_tags["dataset_hash"], "dev", "qa-a-00", experiment)
            [registered] = search_datasets(filter_string="name = 'fomc_qa (ids qa-a-00)'")  # the next run finds it
            assert again == registered.dataset_id
            records = registered.to_df()
        finally:
            mlflow.set_tracking_uri(before)
    assert len(records) == 5 and records.iloc[0]["expectations"]["key_facts"]
    assert {"answerable", "expected_response", "evidence"} <= set(records.iloc[0]["expectations"])


@pytest.mark.slow  # a second process building the agent: ~17 s; the hooks' recording is checked above
def test_ask_with_trace_records_the_answer_as_a_trace(corpus_dir, tmp_path):
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    proc = run_python(["-m", "fedlab.ask", "--trace", "--json", "--config", "evaluate", "--set", "retriever=bm25",
                       "--set", f"agent.calibration={BM25_MODEL}", "--set", f"paths.data_dir={corpus_dir.parent.parent}",
                       FACTUAL], env={"MLFLOW_TRACKING_URI": uri})
    assert proc.returncode == 0, proc.stderr[-3000:]
    answer = json.loads(proc.stdout)  # stdout is still the one JSON object
    [line] = [x for x in proc.stderr.splitlines() if x.startswith("trace ")]
    trace_id = line.split()[1]
    trace = MlflowClient(uri).get_trace(trace_id)
    assert trace.info.request_preview == FACTUAL and trace.info.tags["fedlab.source"] == "ask"
    root = trace.data.spans[0]
    assert root.outputs["answer"] == answer["answer"]
    assert any(s.span_type == "RETRIEVER" and s.outputs for s in trace.data.spans)


def test_ask_with_trace_and_an_unreachable_store_is_one_line(corpus_dir):
    proc = run_python(["-m", "fedlab.ask", "--trace", "--config", "evaluate", "--set", "retriever=bm25",
                       "--set", f"paths.data_dir={corpus_dir.parent.parent}", FACTUAL],
                      env={"MLFLOW_TRACKING_URI": "http://127.0.0.1:9"})
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "error: the MLflow tracking server http://127.0.0.1:9 cannot be reached" in proc.stderr


# -- the cost, in make bench ---------------------------------------------------------------------
def test_the_tracing_cost_alternates_the_settings_and_reports_the_overhead(tmp_path):
    from fedlab.benchmark.report import BenchResult, trace_cost_section
    from fedlab.benchmark.trace_cost import measure_trace_cost

    order = []

    def run(config, mode, work, label, args, root, env):
        order.append(label)
        (work / f"{label}.json").write_text(json.dumps({"n_questions": 131}))
        assert f"{mode}" in ("off", "all") and "MLFLOW_TRACKING_URI" not in env and args == ["dataset.split=dev"]
        wall = {"off": 100.0, "all": 110.0}[mode] + len(order) * 0.1
        return wall if label == "warmup" else (wall, {"off": 50.0, "all": 54.0}[mode])  # (wall, CPU) seconds

    cost = measure_trace_cost("production", 2, ["dataset.split=dev"], keep=tmp_path, run=run)
    assert order == ["warmup", "off-1", "all-1", "all-2", "off-2"]
    assert cost.n_questions == 131 and cost.seconds == {"off": [100.2, 100.5], "all": [110.3, 110.4]}
    assert cost.overhead == pytest.approx(110.35 / 100.35 - 1)
    assert cost.cpu_seconds == {"off": [50.0, 50.0], "all": [54.0, 54.0]} and cost.cpu_ratio == pytest.approx(1.08)
    assert set(cost.metrics()) == {"trace_cost.off_s", "trace_cost.all_s", "trace_cost.ratio", "trace_cost.overhead",
                                   "trace_cost.n_questions", "trace_cost.cpu_ratio"}
    text = "\n".join(trace_cost_section(cost))
    assert "## Tracing cost" in text and "+10.0%" in text and "target ≤ 15%" in text and "| 1.080 |" in text
    assert BenchResult({}, [], trace_cost=cost).extra()["trace_cost"]["ratio"] == pytest.approx(cost.ratio)
    with pytest.raises(FedlabError, match="trace_cost.repeats=0"):
        measure_trace_cost("production", 0, keep=tmp_path, run=run)

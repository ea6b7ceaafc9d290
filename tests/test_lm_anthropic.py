"""The anthropic backend's wire format, against a FAKE of the remote Anthropic Messages API.

The real API cannot be reached from here: a small threaded HTTP server on 127.0.0.1 stands in
for it (ANTHROPIC_BASE_URL points at it). It checks the x-api-key / anthropic-version headers
and the Messages request body, and answers each of the agent's signatures in DSPy's chat
adapter format, so the real DSPy program parses the replies.
"""
from __future__ import annotations

import json
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

from chatfake import step_reply

ROOT = Path(__file__).resolve().parent.parent
KEY = "sk-ant-test-0123456789abcdef"
QUESTION = "Where did the FOMC leave the fed funds target range at its January 2019 meeting?"


def reply_for(system: str) -> str:
    return step_reply(system, ("The Committee kept the target range at 2-1/4 to 2-1/2 percent [Source 2], "
                              "as markets expected [Source 1, Source 42]."))


class FakeMessages(BaseHTTPRequestHandler):
    requests: list = []
    status = 200

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        type(self).requests.append((self.path, dict(self.headers), body))
        if type(self).status != 200:
            out = json.dumps({"type": "error", "error": {"type": "authentication_error",
                                                          "message": "invalid x-api-key"}}).encode()
            self.send_response(type(self).status)
        else:
            system = " ".join(part["text"] for part in body.get("system", []))
            out = json.dumps({"id": "msg_fake", "type": "message", "role": "assistant", "model": body["model"],
                              "content": [{"type": "text", "text": reply_for(system)}], "stop_reason": "end_turn",
                              "stop_sequence": None, "usage": {"input_tokens": 120, "output_tokens": 30}}).encode()
            self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


@pytest.fixture()
def fake_api(monkeypatch):
    FakeMessages.requests = []
    FakeMessages.status = 200
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeMessages)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{server.server_port}")
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    yield FakeMessages
    server.shutdown()


@pytest.fixture(scope="module")
def search(corpus_dir):
    from fedlab.agent.answering import compose_config

    cfg = compose_config("evaluate", ["retriever=bm25", f"paths.data_dir={corpus_dir.parent.parent}"])
    return open_search(cfg, "direct")


def backend(**kw):
    from fedlab.lm.anthropic import AnthropicBackend

    return AnthropicBackend(model="claude-test", max_retries=0, timeout_s=5, **kw)


def test_program_speaks_the_messages_api(fake_api, search):
    a = AgentProgram(search, backend(), AgentSettings())(QUESTION)
    assert len(fake_api.requests) == 2  # assess_query, synthesize_answer
    for path, headers, body in fake_api.requests:
        assert path == "/v1/messages"
        assert headers["x-api-key"] == KEY and headers["anthropic-version"]
        assert body["model"] == "claude-test" and body["max_tokens"] == 1024
        assert body["messages"][0]["role"] == "user" and isinstance(body["system"], list)
    synth = fake_api.requests[1][2]["messages"][0]["content"][0]["text"]
    assert "[Source 1]" in synth and "[[ ## passages ## ]]" in synth
    # the LM's date range was used: every passage cited is from the January 2019 meeting
    assert not a.abstained and [c.n for c in a.citations] == [1, 2]
    assert a.answer.endswith("[1], as markets expected [2].")
    assert a.dropped_citations == 1  # [Source 42] is not in the context
    assert all(c.meeting_date == "2019-01-30" for c in a.citations)
    assert a.lm_usage == {"prompt_tokens": 240, "completion_tokens": 60}


def test_missing_key_is_one_clear_line(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(LMUnavailable) as err:
        backend()
    assert "ANTHROPIC_API_KEY" in str(err.value) and "\n" not in str(err.value)


def test_unreachable_api_fails_fast_in_one_line(monkeypatch, search):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    t0 = time.perf_counter()
    with pytest.raises(LMUnavailable) as err:
        AgentProgram(search, backend(), AgentSettings())(QUESTION)
    assert time.perf_counter() - t0 < 10
    message = str(err.value)
    assert message.startswith("lm=anthropic failed") and "\n" not in message and KEY not in message


def test_rejected_key_never_appears_in_the_error(fake_api, search):
    fake_api.status = 401
    with pytest.raises(LMUnavailable) as err:
        AgentProgram(search, backend(), AgentSettings())(QUESTION)
    assert KEY not in str(err.value) and "\n" not in str(err.value)
    assert KEY not in repr(backend())


def test_ask_without_key_prints_one_line_and_the_sources(corpus_dir):
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")}
    env["FEDLAB_DATA_DIR"] = str(corpus_dir.parent.parent)
    proc = subprocess.run([sys.executable, "-m", "fedlab.ask", "--config", "evaluate", "--set", "retriever=bm25",
                           "--set", f"agent.calibration={ROOT / 'conf/calibration/extractive-bm25.json'}",
                           "--set", "lm=anthropic", QUESTION], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=120)
    assert proc.returncode == 3
    errors = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and "ANTHROPIC_API_KEY" in errors[0] and "Traceback" not in proc.stderr
    assert "Retrieved sources" in proc.stdout and "minutes-2019-01-30" in proc.stdout

"""A FAKE OpenAI-compatible chat-completions server on 127.0.0.1 that answers any DSPy signature.

It reads the output fields the request's system message asks for (DSPy's chat adapter lists them)
and answers each in the adapter's format: ``reasoning`` (ChainOfThought), the agent's steps'
fields, and any other field (an optimizer's own prompts) with a plain sentence. Its answers are
fixed rules, not a model: the question's first year is its date range; the answer quotes the
January 2019 decision and cites [Source 1]. It counts tokens as a server does, can be made slow
(``delay_s``), and records every request. As ragas' faithfulness judge it finds one of two
statements supported (0.5).
"""
from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ANSWER = ("The Committee decided to maintain the target range for the federal funds rate at 2-1/4 to 2-1/2 "
          "percent [Source 1].")
_FIELDS = re.compile(r"Your output fields are:(.*?)(?:All interactions|\Z)", re.S)
_QUESTION = re.compile(r"\[\[ ## question ## \]\]\s*\n(.*?)(?:\n\n|\Z)", re.S)


# ragas' faithfulness judge (its response model as a DSPy output field): two statements, one supported
STATEMENTS = ["The Committee kept the target range.", "The Committee cut rates."]
VERDICTS = [{"statement": STATEMENTS[0], "reason": "stated", "verdict": 1},
            {"statement": STATEMENTS[1], "reason": "not stated", "verdict": 0}]


def step_reply(system: str, answer: str) -> str:
    """A fixed chat-adapter reply to one of the agent's three steps, told apart by the output field its
    system message asks for: January 2019 for assess_query, a rewritten query, else ``answer``."""
    if "`intent`" in system:
        return ("[[ ## intent ## ]]\nfomc\n\n[[ ## date_from ## ]]\n2019-01-01\n\n[[ ## date_to ## ]]\n2019-01-31\n\n"
                "[[ ## scope ## ]]\nmeeting\n\n[[ ## completed ## ]]")
    if "`query`" in system:
        return "[[ ## query ## ]]\ntarget range federal funds rate\n\n[[ ## completed ## ]]"
    return f"[[ ## answer ## ]]\n{answer}\n\n[[ ## completed ## ]]"


def value_for(field: str, question: str, system: str = "") -> str:
    if field == "response":
        return json.dumps({"statements": VERDICTS if "verdict" in system else STATEMENTS})
    year = re.search(r"\b(19\d\d|20\d\d)\b", question)
    if field == "intent":
        return "fomc"
    if field in ("date_from", "date_to"):
        return "" if not year else f"{year.group(1)}-{'01-01' if field == 'date_from' else '12-31'}"
    if field == "scope":
        return "year" if year else "none"
    if field == "query":
        return "target range federal funds rate"
    if field == "answer":
        return ANSWER
    if field == "reasoning":
        return "The passages state the decision."
    return "Answer from the numbered passages and cite each one."


def reply(messages: list[dict]) -> str:
    system = " ".join(m["content"] for m in messages if m["role"] == "system")
    found = _FIELDS.search(system)
    fields = re.findall(r"`(\w+)`", found.group(1)) if found else ["answer"]
    asked = _QUESTION.search(messages[-1]["content"]) if messages else None
    question = asked.group(1) if asked else ""
    return "".join(f"[[ ## {f} ## ]]\n{value_for(f, question, system)}\n\n" for f in dict.fromkeys(fields)) + \
        "[[ ## completed ## ]]"


class ChatFake(BaseHTTPRequestHandler):
    requests: list = []
    delay_s = 0.0

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        cls = type(self)
        cls.requests.append(body)
        time.sleep(cls.delay_s)
        out = {"id": "chatcmpl-fake", "object": "chat.completion", "created": 1, "model": body.get("model"),
               "choices": [{"index": 0, "finish_reason": "stop",
                            "message": {"role": "assistant", "content": reply(body.get("messages") or [])}}],
               "usage": {"prompt_tokens": 150, "completion_tokens": 25, "total_tokens": 175}}
        data = json.dumps(out).encode()
        try:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client gave up waiting
            pass

    def log_message(self, *args):
        pass


class running:
    """``with running() as fake:`` a ChatFake on a free loopback port; ``fake.api_base``."""

    def __enter__(self):
        handler = type("Fake", (ChatFake,), {"requests": [], "delay_s": 0.0})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        handler.api_base = f"http://127.0.0.1:{self.server.server_port}/v1"
        return handler

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

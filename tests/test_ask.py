"""`python -m fedlab.ask` as a user runs it: a subprocess on the real corpus (BM25, extractive)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fedlab.agent.answering import check_question
from fedlab.agent.settings import group_overrides
from fedlab.errors import FedlabError

ROOT = Path(__file__).resolve().parent.parent
JSON_KEYS = {"answer", "abstained", "confidence", "confidence_level", "abstain_reason", "coverage_note",
             "unknown_words", "skill", "citations", "latency_ms"}
CITATION_KEYS = {"n", "doc_id", "chunk_id", "title", "meeting_date", "section"}


def ask(corpus_dir, *args, timeout=120, stdout=subprocess.PIPE):
    env = {**os.environ, "FEDLAB_DATA_DIR": str(corpus_dir.parent.parent)}
    return subprocess.run([sys.executable, "-m", "fedlab.ask", "--config", "evaluate", "--set", "retriever=bm25",
                           "--set", f"agent.calibration={ROOT / 'conf/calibration/extractive-bm25.json'}", *args],
                          stdout=stdout, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT, timeout=timeout)


def test_json_output_has_exactly_the_documented_keys(corpus_dir):
    proc = ask(corpus_dir, "--json", "What did the FOMC decide about the federal funds rate in March 2020?")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert set(out) == JSON_KEYS
    assert out["abstained"] is False and out["citations"]
    assert all(set(c) == CITATION_KEYS for c in out["citations"])
    assert [c["n"] for c in out["citations"]] == list(range(1, len(out["citations"]) + 1))
    assert all(c["meeting_date"].startswith("2020-03") for c in out["citations"])
    assert 0 <= out["confidence"] <= 1 and isinstance(out["latency_ms"], (int, float)) and out["latency_ms"] > 0


def test_a_reader_that_goes_away_is_not_a_traceback(corpus_dir):
    """`ask … | head -1`: the pipe's reader has gone when the answer is written."""
    read, write = os.pipe()
    os.close(read)
    try:
        proc = ask(corpus_dir, "--json", "What did the FOMC decide about the federal funds rate in March 2020?",
                   stdout=write)
    finally:
        os.close(write)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr


def test_panel_shows_answer_confidence_and_sources(corpus_dir):
    proc = ask(corpus_dir, "Who dissented at the June 2019 meeting?")
    assert proc.returncode == 0, proc.stderr
    assert "Confidence:" in proc.stdout and "Sources:" in proc.stdout and "[1]" in proc.stdout
    assert "chunk " in proc.stdout and "2019-06-19" in proc.stdout


def test_off_topic_question_abstains(corpus_dir):
    proc = ask(corpus_dir, "--json", "How many calories are in a medium banana?")
    out = json.loads(proc.stdout)
    assert proc.returncode == 0 and out["abstained"] is True and out["citations"] == []


def test_an_abstention_names_the_words_no_document_uses(corpus_dir):
    """The FOMC's documents never name the Fed's payment service: the user is told which word to put
    otherwise. Shorthand the agent reads in the documents' words is not among them ("QT": "balance
    sheet runoff", fedlab.query.shorthand). Whether the agent abstains is the model's call; what an
    abstention says is checked on one it must make (a threshold no evidence reaches)."""
    strict = ("--set", "agent.answerability.threshold=0.999999")
    out = json.loads(ask(corpus_dir, *strict, "--json", "When did the FedNow rollout end?").stdout)
    assert out["abstained"] is True and out["abstain_reason"] == "weak_evidence" and out["unknown_words"] == ["FedNow"]
    panel = " ".join(w for w in ask(corpus_dir, *strict, "When did the FedNow rollout end?").stdout.split()
                     if w != "│")  # the panel's wrapped lines, read as one text
    assert "why no answer:" in panel and "the documents never use 'FedNow': ask in other words" in panel
    qt = json.loads(ask(corpus_dir, *strict, "--json", "When did QT end?").stdout)
    assert qt["abstained"] is True and qt["unknown_words"] == []
    answered = json.loads(ask(corpus_dir, "--json", "Who dissented at the June 2019 meeting?").stdout)
    assert answered["abstained"] is False and answered["unknown_words"] == []


def assert_json_user_error(proc, returncode: int = 2) -> dict:
    """One `error:` line on stderr, the same error as one JSON object on stdout, the exit code."""
    assert proc.returncode == returncode, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in proc.stderr, proc.stderr
    out = json.loads(proc.stdout)
    assert out == {"error": lines[0].removeprefix("error: "), "exit_code": returncode}
    return out


@pytest.mark.parametrize("question", ["", "   ", "x" * 1001, "1234 !!! 5678", "what\x07 is the rate?", "\x1b[31m"])
def test_bad_input_is_one_line_and_nonzero(corpus_dir, question):
    proc = ask(corpus_dir, "--json", question, timeout=30)
    assert_json_user_error(proc)


def test_without_json_a_user_error_leaves_stdout_empty(corpus_dir):
    proc = ask(corpus_dir, "   ", timeout=30)
    assert proc.returncode == 2 and proc.stdout == "" and proc.stderr.startswith("error: the question is empty")


@pytest.mark.parametrize("args,message", [
    (["--json", "--config", "no_such_config", "rates?"], "no config 'no_such_config'"),
    (["--json", "--set", "retriever.top_k=${oc.env:}", "rates?"], "retriever does not resolve"),
    (["--json"], "the following arguments are required: question"),
    (["--json", "--max-chars", "many", "rates?"], "--max-chars"),
])
def test_json_user_errors_are_json_on_stdout(corpus_dir, args, message):
    """--json: config and usage mistakes print the error as JSON too (stdout is never empty)."""
    out = assert_json_user_error(ask(corpus_dir, *args, timeout=60))
    assert message in out["error"]


def test_question_that_is_not_utf8_is_one_line(corpus_dir):
    """Bytes on the command line that are not UTF-8 (decoded with surrogateescape) are refused
    before anything hashes or prints the question."""
    env = {**os.environ, "FEDLAB_DATA_DIR": str(corpus_dir.parent.parent)}
    argv = [sys.executable, "-m", "fedlab.ask", "--config", "evaluate", "--set", "retriever=bm25"]
    for extra in (["--json"], []):
        proc = subprocess.run([*argv, *extra, b"What about \xff rates?"], capture_output=True, env=env, cwd=ROOT,
                              timeout=60)
        stderr = proc.stderr.decode("utf-8", "replace")
        assert proc.returncode == 2 and "Traceback" not in stderr, stderr
        assert stderr.splitlines() == ["error: the question is not valid UTF-8 text: byte 0xff at character 12 "
                                       "is not UTF-8; retype it as plain text (or set the terminal's encoding to UTF-8)"]
        if extra:
            assert json.loads(proc.stdout)["error"].startswith("the question is not valid UTF-8 text")
        else:
            assert proc.stdout == b""


def test_a_date_at_the_end_of_the_calendar_is_outside_the_coverage(corpus_dir):
    """9999-12-31 (whose end-of-range widening once overflowed) is a date the documents do not
    cover: answered as such, no traceback."""
    proc = ask(corpus_dir, "--json", "What did the Committee decide on 9999-12-31?")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    out = json.loads(proc.stdout)
    assert out["abstained"] is True and out["abstain_reason"] == "coverage" and "December 9999" in out["answer"]


def test_missing_production_config_names_make_export(tmp_path, monkeypatch):
    """A checkout where `make export` has not run yet: conf/ without production.yaml."""
    import shutil

    import fedlab.config
    from fedlab.agent.answering import compose_config

    conf = tmp_path / "conf"
    shutil.copytree(ROOT / "conf", conf)
    (conf / "production.yaml").unlink(missing_ok=True)
    monkeypatch.setattr(fedlab.config, "CONF_DIR", conf)
    with pytest.raises(FedlabError, match="make export") as err:
        compose_config("production", [])
    assert "\n" not in str(err.value)


def test_question_checks():
    assert check_question("  What   did the Fed do?\n") == "What did the Fed do?"
    with pytest.raises(FedlabError, match="limit is 20"):
        check_question("a" * 21, max_chars=20)
    with pytest.raises(FedlabError, match="not valid UTF-8 text: byte 0xfe at character 6"):
        check_question(b"rates\xfe?".decode("utf-8", "surrogateescape"))
    with pytest.raises(FedlabError, match="not valid UTF-8 text: a lone surrogate U\\+D800"):
        check_question("rates \ud800 in 2024?")
    assert check_question("Quelle décision en 2024 ?") == "Quelle décision en 2024 ?"


@pytest.mark.parametrize("extra", [[], ["--json"]])
def test_a_day_that_does_not_exist_is_refused_in_one_line(corpus_dir, extra):
    proc = ask(corpus_dir, *extra, "What did the FOMC decide on February 29 2021?")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.splitlines() == ["error: the question names February 29 2021, which is not a date (2021 has no "
                                        "February 29 (not a leap year)): correct the day"]
    if extra:
        assert json.loads(proc.stdout)["error"].startswith("the question names February 29 2021")


def test_group_overrides_switch_the_agent_on_whatever_the_config_lists():
    assert group_overrides({}, []) == ["+agent=default", "+lm=extractive"]
    assert group_overrides({"agent": None, "lm": None}, ["lm=anthropic"]) == ["agent=default", "lm=anthropic"]
    assert group_overrides({}, ["lm=local", "agent.top_k=5"]) == ["+agent=default", "+lm=local", "agent.top_k=5"]
    assert group_overrides({"agent": "default", "lm": "anthropic"}, []) == []


def test_a_question_outside_the_coverage_says_so_and_why(corpus_dir):
    proc = ask(corpus_dir, "--json", "What did the FOMC decide about the federal funds rate in March 2031?")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["abstained"] is True and out["abstain_reason"] == "coverage" and out["citations"] == []
    assert "March 2031" in out["answer"] and "cover" in out["answer"]
    panel = ask(corpus_dir, "What did the FOMC decide about the federal funds rate in March 2031?")
    assert panel.returncode == 0, panel.stderr
    assert "why no answer: the question's dates lie outside the documents' coverage" in " ".join(panel.stdout.split())


HEAVY = ("dspy", "litellm", "mlflow", "ragas", "chromadb", "hnswlib", "faiss", "torch", "sentence_transformers")


def test_an_extractive_answer_imports_none_of_the_heavy_libraries(corpus_dir):
    """The extractive backend answers without DSPy (or litellm under it); retrieval without
    tracking, evaluation or the ANN libraries this config does not name; the question's embedding
    (the question head's) without torch once the cache holds the query encoder's ONNX export, which
    the first run makes (with torch, once): the second run is measured, whatever ran before."""
    code = ("import json, sys\n"
            "from fedlab.ask import main\n"
            f"code = main(sys.argv[1:])\n"
            f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)), file=sys.stderr)\n"
            "sys.exit(code)\n")
    env = {**os.environ, "FEDLAB_DATA_DIR": str(corpus_dir.parent.parent)}
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-c", code, "--json", "--config", "evaluate", "--set", "retriever=bm25",
                               "--set", f"agent.calibration={ROOT / 'conf/calibration/extractive-bm25.json'}",
                               "What did the FOMC decide about the federal funds rate in March 2020?"],
                              capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
        assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["citations"]
    assert json.loads(proc.stderr.strip().splitlines()[-1]) == []

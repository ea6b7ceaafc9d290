"""Agent measures: key-fact normalisation, answer/abstention/citation measures, support, the judge."""
from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fedlab.agent.answerability import MODEL_KIND
from fedlab.agent.types import ABSTAIN_REASONS, AgentAnswer, Citation
from fedlab.chunking.chunk import Chunk
from fedlab.dataset.schema import Evidence, Question
from fedlab.evaluation.answers.measures import judge_answer, summarize
from fedlab.evaluation.answers.normalize import contains_fact, missing_facts, normalize
from fedlab.evaluation.answers.support import score_answers, split_sentences
from fedlab.evaluation.retrieval.relevance import EvidenceSpan

ROOT = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------- normaliser

@pytest.mark.parametrize("a, b", [
    ("2-1/4 to 2-1/2 percent", "2¼ to 2½ percent"),
    ("2-1/4 to 2-1/2 percent", "2 1/4 to 2 1/2 percent"),
    ("2-1/4 to 2-1/2 percent", "2–1/4 to 2—1/2 percent"),  # en and em dashes
    ("2-1/4 to 2-1/2 percent", "2\u20111/4 to 2\u22121/2 percent"),  # non-breaking hyphen, minus
    ("2-1/4 to 2-1/2 percent", "2.25% to 2.5%"),
    ("1-1/2 percent", "1½ percent"),
    ("1-1/2 percent", "one and a half percent"),
    ("1-1/2 percent", "1.50 percent"),
    ("1/2 percentage point", "one-half percentage point"),
    ("1/2 percentage point", "one half percentage point"),
    ("1/2 percentage point", "a half percentage point"),
    ("1/2 percentage point", "half a percentage point"),
    ("1/4 percentage point", "one-quarter percentage point"),
    ("1/4 point", "quarter-point"),
    ("3/4 to 1 percent", "three-quarters to one percent"),
    ("2.10 percent", "2.1%"),
    ("2 percent", "2.0 per cent"),
    ("four", "4"),
    ("three", "3"),
    ("twenty-five basis points", "25 basis points"),
    ("seventy five", "75"),
    ("zero", "0"),
    ("Twenty", "20"),
    ("$1,000 billion", "$1000 billion"),
    ("  Federal   Funds\tRate ", "federal funds rate"),
    ("75 basis point", "75-basis-point"),
    ("Russia's war", "Russia’s war"),
    ('"the extent and timing of"', "“The extent and timing of”"),
])
def test_equivalent_spellings_normalise_alike(a, b):
    assert normalize(a) == normalize(b)


def test_normal_form_examples():
    assert normalize("It held the range at 2-1/4 to 2-1/2 percent [1].") == "it held the range at 2.25 to 2.5 percent"
    assert normalize("Four consecutive 75-basis-point hikes") == "4 consecutive 75 basis point hikes"
    assert normalize("12/31/2019") == "12/31/2019"  # a date is not a fraction
    assert normalize("5/16") == "0.3125" and normalize("17/32") == "17/32"  # only small denominators
    assert normalize("the U.S. economy.") == "the u s economy"
    assert normalize("someone") == "someone" and normalize("none") == "none"  # words, not number words


@pytest.mark.parametrize("answer, fact, expected", [
    ("It was raised to 2-1/4 to 2-1/2 percent [1].", "2¼ to 2½ percent", True),
    ("A one-half percentage point cut", "1/2 percentage point", True),
    ("It cut rates by half a percentage point", "1/2 percentage point", True),
    ("Four consecutive hikes", "four", True),
    ("rates rose 75 basis points", "75 basis point", True),  # a fact ending in a word takes a suffix
    ("It was 0.5 percent", "5 percent", False),  # not inside a number
    ("$25 billion", "5 billion", False),
    ("$5 billion", "5 billion", True),
    ("a sharp rise", "ARP", False),  # not inside a word
    ("the ARP passed", "ARP", True),
    ("2.5 percent", "2 percent", False),  # a number fact may not continue as a number
    ("25 percent", "2 percent", False),
    ("2/3 of them", "2", False),
    ("raised it [2]", "2", False),  # citation markers are not numbers
    ("Bowman dissented", "bowman", True),
    ("", "anything", False),
])
def test_contains_fact(answer, fact, expected):
    assert contains_fact(answer, fact) is expected


def test_missing_facts_keeps_order():
    assert missing_facts("Bowman and Waller dissented", ["Waller", "Miran", "Bowman", "Schmid"]) == ["Miran", "Schmid"]
    assert missing_facts("anything", []) == []


# ---------------------------------------------------------------- measures on hand-built pairs

DOC = "d1"
CHUNKS = {
    "c1": Chunk("c1", DOC, "statement", "2019-07-31", None, 0, 100, "x" * 100, "x" * 100),
    "c2": Chunk("c2", DOC, "statement", "2019-07-31", None, 100, 200, "y" * 100, "y" * 100),
    "c3": Chunk("c3", "d2", "minutes", "2019-07-31", None, 0, 100, "z" * 100, "z" * 100),
}
EVIDENCE = (EvidenceSpan(DOC, 10, 50),)  # covered by c1 only


def _q(qid, category="factual", key_facts=("2-1/4 to 2-1/2 percent",)):
    answerable = category not in ("unanswerable", "off_topic")
    return Question(qid, f"question {qid}?", category, answerable,
                    [Evidence(DOC, "quote")] if answerable else [], "ref", list(key_facts) if answerable else [],
                    None, "dev")


def _cite(n, chunk_id, text="passage"):
    return Citation(n, chunk_id, CHUNKS[chunk_id].doc_id if chunk_id in CHUNKS else "dx", "t", "2019-07-31", None, text)


def _a(text, abstained=False, cites=(), retrieved=("c1", "c2", "c3"), conf=0.5, raw=None, **kw):
    return AgentAnswer(question="q", answer=text, abstained=abstained, confidence=conf, confidence_level="medium",
                       citations=list(cites), retrieved_chunk_ids=list(retrieved), raw_confidence=raw, **kw)


def _measure(pairs):
    results = [judge_answer(q, a, EVIDENCE if q.answerable else (), CHUNKS) for q, a in pairs]
    return results, summarize(results, [a for _, a in pairs])


def test_every_measure_on_a_small_set():
    pairs = [
        (_q("a1"), _a("The range was 2¼ to 2½ percent [1][2].", cites=[_cite(1, "c1"), _cite(2, "c2")], conf=0.9,
                     latency_ms={"search": 10.0, "total": 20.0}, lm_usage={"prompt_tokens": 100, "completion_tokens": 10})),
        (_q("a2", "temporal"), _a("It was 3 percent [1].", cites=[_cite(1, "c3")], conf=0.6,
                                  latency_ms={"search": 30.0, "total": 40.0}, lm_usage={"prompt_tokens": 50})),
        (_q("a3", "temporal"), _a("Not in the documents.", abstained=True, conf=0.1)),
        (_q("u1", "unanswerable"), _a("The documents do not say.", abstained=True, conf=0.2)),
        (_q("o1", "off_topic"), _a("It rained [1].", cites=[_cite(1, "c9")], conf=0.7)),  # c9 not retrieved
    ]
    results, m = _measure(pairs)
    assert [r.answer_correct for r in results] == [True, False, False, False, False]
    assert [r.correct for r in results] == [True, False, False, True, False]
    assert results[1].missing_facts == ["2-1/4 to 2-1/2 percent"]
    assert m["answer_accuracy"] == pytest.approx(1 / 3)
    assert m["answer_accuracy.factual"] == 1.0 and m["answer_accuracy.temporal"] == 0.0
    assert m["abstention_accuracy"] == pytest.approx(0.5)
    assert m["false_abstention_rate"] == pytest.approx(1 / 3)
    assert m["correctness"] == pytest.approx(2 / 5)
    assert m["citation_validity"] == pytest.approx(3 / 4)
    assert m["citation_support"] == pytest.approx(1 / 3)  # c1 covers the evidence; c2, c3 do not
    assert m["citations_per_answer"] == pytest.approx(4 / 3)
    # ECE: bins 9 (0.9, right), 6 (0.6, wrong), 1 (0.1, wrong), 2 (0.2, right), 7 (0.7, wrong)
    assert m["ece"] == pytest.approx((0.1 + 0.6 + 0.1 + 0.8 + 0.7) / 5)
    assert m["brier"] == pytest.approx((0.01 + 0.36 + 0.01 + 0.64 + 0.49) / 5)
    assert m["ece_raw"] == m["ece"]  # no raw score given: the reported one stands in
    assert m["latency_p50_ms_agent_search"] == pytest.approx(20.0)
    assert m["latency_p95_ms_agent_total"] == pytest.approx(39.0)
    assert "latency_p50_ms_search" not in m  # the agent's stages never collide with retrieval's
    assert m["lm_prompt_tokens"] == 150 and m["lm_completion_tokens"] == 10
    assert m["lm_prompt_tokens_mean"] == pytest.approx(30.0)
    assert "support" not in m and "faithfulness" not in m  # not measured here


def test_empty_denominators_leave_metrics_out():
    _, m = _measure([(_q("u1", "unanswerable"), _a("No.", abstained=True, conf=0.2))])
    for name in ("answer_accuracy", "false_abstention_rate", "citation_support", "citations_per_answer"):
        assert name not in m
    assert m["abstention_accuracy"] == 1.0
    assert m["citation_validity"] == 1.0  # nothing cited, nothing invalid
    _, m = _measure([(_q("a1"), _a("2-1/4 to 2-1/2 percent, no sources."))])
    assert m["answer_accuracy"] == 1.0 and "abstention_accuracy" not in m
    assert "citation_support" not in m and m["citation_validity"] == 1.0
    assert m["lm_prompt_tokens"] == 0.0
    assert summarize([], []) == {"citation_validity": 1.0, "lm_prompt_tokens": 0.0, "lm_completion_tokens": 0.0,
                                 "lm_cost": 0.0, "lm_failures": 0.0, "dropped_citations": 0.0}


def test_abstained_answer_is_never_correct_even_if_it_states_the_fact():
    results, m = _measure([(_q("a1"), _a("I cannot say whether it was 2-1/4 to 2-1/2 percent.", abstained=True))])
    assert not results[0].answer_correct and results[0].missing_facts == ["2-1/4 to 2-1/2 percent"]
    assert m["false_abstention_rate"] == 1.0


def test_raw_and_calibrated_confidence_are_kept_apart():
    results, m = _measure([(_q("a1"), _a("2-1/4 to 2-1/2 percent", conf=0.95, raw=0.4)),
                           (_q("u1", "unanswerable"), _a("x", conf=0.1, raw=0.6))])
    assert [r.raw_confidence for r in results] == [0.4, 0.6] and results[0].confidence == 0.95
    assert m["ece"] == pytest.approx((0.05 + 0.1) / 2)
    assert m["ece_raw"] == pytest.approx((0.6 + 0.6) / 2)


# ---------------------------------------------------------------- support proxy

PASSAGE = ("The Committee decided to lower the target range for the federal funds rate to 2 to 2-1/4 percent. "
           "Voting against the action were Esther L. George and Eric Rosengren.")


def test_split_sentences_moves_opening_markers_back():
    got = split_sentences("It cut the range to 2 to 2-1/4 percent. [1] George and Rosengren dissented [1][2]. [2]")
    assert got == [("It cut the range to 2 to 2-1/4 percent. [1]", (1,)),
                   ("George and Rosengren dissented [1][2]. [2]", (1, 2))]
    assert split_sentences("[1]") == []


def test_support_lexical_rule():
    good = _a("The Committee lowered the target range for the federal funds rate to 2 to 2¼ percent [1]. "
              "George and Rosengren voted against the action [1].", cites=[_cite(1, "c1", PASSAGE)])
    wrong_number = _a("The Committee lowered the target range for the federal funds rate to 1.75 percent [1].",
                      cites=[_cite(1, "c1", PASSAGE)])
    wrong_name = _a("Voting against the action were Esther George and Loretta Mester [1].",
                    cites=[_cite(1, "c1", PASSAGE)])
    uncited = _a("The Committee lowered the target range for the federal funds rate.")
    off = _a("Housing construction weakened considerably in the spring [1].", cites=[_cite(1, "c1", PASSAGE)])
    abstained = _a("The documents do not say.", abstained=True)
    s = score_answers([good, wrong_number, wrong_name, uncited, off, abstained])
    assert [x.score for x in s] == [1.0, 0.0, 0.0, 0.0, 0.0, None]
    assert s[1].sentences[0].missing == ("1.75",)
    assert s[2].sentences[0].missing == ("Loretta", "Mester")
    assert s[4].sentences[0].closeness < 0.6


def test_support_accepts_the_citations_heading_but_not_another_meeting():
    """A per-meeting answer opens each sentence with its meeting ("July 2019: …"): the citation
    shows that date above its passage, so it is supported; another meeting's date is not."""
    sentence = "The Committee lowered the target range for the federal funds rate to 2 to 2¼ percent [1]."
    labelled = _a(f"July 2019: {sentence}", cites=[_cite(1, "c1", PASSAGE)])  # _cite dates 2019-07-31
    elsewhere = _a(f"June 2018: {sentence}", cites=[_cite(1, "c1", PASSAGE)])
    s = score_answers([labelled, elsewhere])
    assert s[0].score == 1.0
    assert s[1].score == 0.0 and s[1].sentences[0].missing == ("2018",)


def test_support_with_an_embedder_uses_cosine():
    class Bag:  # a bag-of-letters embedder: similar letter mixes are close
        def embed_documents(self, texts, progress=False):
            out = np.zeros((len(texts), 26))
            for i, t in enumerate(texts):
                for ch in t.lower():
                    if "a" <= ch <= "z":
                        out[i, ord(ch) - 97] += 1
            return out

    close = _a("The Committee lowered the target range to 2 to 2-1/4 percent [1].", cites=[_cite(1, "c1", PASSAGE)])
    far = _a("Zzz qqq xxx [1].", cites=[_cite(1, "c1", PASSAGE)])
    s = score_answers([close, far], embedder=Bag())
    assert s[0].score == 1.0 and s[1].score == 0.0
    assert s[0].sentences[0].closeness > 0.5


# ---------------------------------------------------------------- the LLM judge (ragas Faithfulness)

def test_faithfulness_runs_ragas_with_a_supplied_llm():
    from ragas.llms.base import InstructorBaseRagasLLM
    from ragas.metrics.collections.faithfulness.util import NLIStatementOutput, StatementGeneratorOutput

    from fedlab.evaluation.answers.faithfulness import judge_faithfulness

    class Judge(InstructorBaseRagasLLM):
        """Two statements per answer; a statement is faithful when its first word is in the context."""

        def generate(self, prompt, response_model):
            return asyncio.run(self.agenerate(prompt, response_model))

        async def agenerate(self, prompt, response_model):
            if response_model is StatementGeneratorOutput:
                answer = prompt.rsplit('"answer":', 1)[1].split('"')[1]
                return StatementGeneratorOutput(statements=answer.split(" and "))
            data = json.loads(prompt.rsplit("input: ", 1)[1].split("\nOutput:")[0].strip())
            return NLIStatementOutput(statements=[
                {"statement": s, "reason": "r", "verdict": int(s.split()[0] in data["context"])}
                for s in data["statements"]])

    items = [("q1", "who?", _a("Powell spoke and Mester dissented [1]", cites=[_cite(1, "c1", "Powell spoke.")])),
             ("q2", "who?", _a("Not known.", abstained=True)),
             ("q3", "who?", _a("Uncited claim"))]
    assert judge_faithfulness(Judge(), items) == {"q1": 0.5}


def test_unreachable_judge_reports_no_faithfulness(monkeypatch):
    from fedlab.evaluation.answers.faithfulness import build_judge, judge_faithfulness

    assert build_judge(None) is None
    monkeypatch.delenv("FEDLAB_TEST_KEY", raising=False)
    assert build_judge({"provider": "anthropic", "model": "m", "api_key_env": "FEDLAB_TEST_KEY"}) is None
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("FEDLAB_TEST_KEY", "test-key")
    llm = build_judge({"provider": "anthropic", "model": "anthropic/claude-test", "api_key_env": "FEDLAB_TEST_KEY",
                       "base_url": f"http://127.0.0.1:{port}", "timeout_s": 2})
    items = [("q1", "who?", _a("Powell spoke [1]", cites=[_cite(1, "c1", "Powell spoke.")]))]
    assert judge_faithfulness(llm, items) is None


@pytest.fixture
def fake_messages_api():
    """A loopback stand-in for the Anthropic Messages API answering ragas' two structured calls."""
    import http.server
    import threading

    seen = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            seen.append(body)
            schema = body["tools"][0]["input_schema"]
            if schema.get("title") == "StatementGeneratorOutput":
                out = {"statements": ["Powell spoke.", "Mester dissented."]}
            else:
                out = {"statements": [{"statement": "Powell spoke.", "reason": "stated", "verdict": 1},
                                      {"statement": "Mester dissented.", "reason": "not stated", "verdict": 0}]}
            reply = {"id": "msg_1", "type": "message", "role": "assistant", "model": body["model"],
                     "content": [{"type": "tool_use", "id": "t1", "name": "respond", "input": out}],
                     "stop_reason": "tool_use", "usage": {"input_tokens": 11, "output_tokens": 5}}
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", seen
    server.shutdown()
    server.server_close()


def test_anthropic_judge_through_the_messages_api(monkeypatch, fake_messages_api):
    from fedlab.evaluation.answers.faithfulness import build_judge, judge_faithfulness

    url, seen = fake_messages_api
    monkeypatch.setenv("FEDLAB_TEST_KEY", "test-key")
    llm = build_judge({"provider": "anthropic", "model": "anthropic/claude-test", "api_key_env": "FEDLAB_TEST_KEY",
                       "base_url": url, "timeout_s": 5})
    items = [("q1", "who?", _a("Powell spoke and Mester dissented [1]", cites=[_cite(1, "c1", "Powell spoke.")]))]
    assert judge_faithfulness(llm, items) == {"q1": 0.5}
    assert len(seen) == 2 and seen[0]["model"] == "claude-test"
    assert "temperature" not in seen[0] and seen[0]["tool_choice"] == {"type": "tool", "name": "respond"}
    assert llm.usage == {"prompt_tokens": 22, "completion_tokens": 10}


# ---------------------------------------------------------------- end to end: calibrate, then evaluate

def _env() -> dict:
    env = dict(os.environ)
    env.update({"HF_HUB_OFFLINE": "1", "MLFLOW_DISABLE_TELEMETRY": "true", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
                "RAGAS_DO_NOT_TRACK": "true"})
    for key in ("MLFLOW_TRACKING_URI", "ANTHROPIC_API_KEY"):
        env.pop(key, None)
    return env


def test_calibrate_then_evaluate_with_the_agent(corpus_dir, tmp_path):
    from mlflow.tracking import MlflowClient

    data = corpus_dir.parent.parent
    cal = tmp_path / "cal.json"
    proc = subprocess.run([sys.executable, "-m", "fedlab.calibrate", "--set", "retriever=bm25",
                           "--set", f"paths.data_dir={data}", "--set", "dataset.fit_sets=[]", "--out", str(cal)],
                          cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"calibration: {cal.resolve()}" in proc.stdout
    fitted = json.loads(cal.read_text())
    assert fitted["kind"] == MODEL_KIND and fitted["meta"]["split"] == "dev"
    assert fitted["meta"]["retriever"] == "bm25" and fitted["meta"]["threshold_from"].startswith("out-of-fold")
    shipped = (ROOT / "datasets/fomc_qa/calibration.jsonl").read_text().splitlines()
    assert fitted["meta"]["calibration_set"]["n"] == len(shipped)  # fitted on dev and the calibration set
    assert fitted["meta"]["correctness_from"] == "calibration_set"  # P(correct) from the questions new to the agent
    # its second round, written toward hard questions, told apart (dataset.calibration_hard_ids)
    hard = [line for line in shipped if json.loads(line)["id"].startswith(("cal-c-", "cal-d-"))]
    assert 0 < fitted["meta"]["n_hard_sampled"] <= len(hard) and fitted["meta"]["correctness_held"] == ["hard_sampled"]
    assert "written toward hard ones (dataset.calibration_hard_ids) told apart" in " ".join(proc.stderr.split())
    assert f"131 dev questions + {len(shipped)} of the calibration set" in proc.stderr
    # out of fold on dev, the model must tell answerable from unanswerable questions better than chance
    assert fitted["meta"]["oof_auroc_answerable"] > 0.6 and 0 < fitted["threshold"] < 1

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    out = tmp_path / "metrics.json"
    proc = subprocess.run([sys.executable, "-m", "fedlab.evaluate", "agent=default", "lm=extractive", "retriever=bm25",
                           f"paths.data_dir={data}", f"mlflow.tracking_uri={uri}", "dataset.split=dev",
                           f"agent.calibration={cal}", "eval.progress=false", f"eval.metrics_out={out}",
                           "mlflow.run_name=agent-check"],
                          cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    m = json.loads(out.read_text())
    for name in ("answer_accuracy", "abstention_accuracy", "false_abstention_rate", "correctness",
                 "citation_support", "support", "ece", "ece_if_calibrated", "brier", "ece_raw", "brier_raw", "auroc",
                 "coverage@precision0.9",
                 "latency_p50_ms_agent_total", "latency_p95_ms_agent_search", "lm_prompt_tokens", "lm_completion_tokens"):
        assert name in m, name
    for name in ("answer_accuracy", "abstention_accuracy", "citation_support", "support", "ece", "brier",
                 "ece_if_calibrated"):
        assert 0.0 <= m[name] <= 1.0, name
    assert m["ece_if_calibrated"] > 0  # 131 questions: a perfect model's ECE is not zero at this size
    assert m["citation_validity"] == 1.0
    assert "faithfulness" not in m  # no judge offline: never a stand-in value
    assert m["lm_prompt_tokens"] == 0.0  # the extractive backend is not a language model
    assert m["recall@5"] > 0 and m["latency_p50_ms_total"] > 0  # retrieval metrics as before
    assert m["n_questions"] == 131

    client = MlflowClient(uri)
    run = client.search_runs([client.get_experiment_by_name("fedlab").experiment_id],
                             filter_string="attributes.run_name = 'agent-check'")[0]
    assert run.data.metrics["citation_validity"] == 1.0 and "faithfulness" not in run.data.metrics
    arts = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"agent_answers.jsonl", "agent", "per_question.jsonl"} <= arts
    assert {a.path for a in client.list_artifacts(run.info.run_id, "agent")} == {
        "agent/reliability.png", "agent/risk_coverage.png", "agent/calibration.json"}
    rows = [json.loads(x) for x in Path(client.download_artifacts(run.info.run_id, "agent_answers.jsonl",
                                                                   str(tmp_path))).read_text().splitlines()]
    assert len(rows) == 131
    row = next(r for r in rows if r["answerable"] and r["citations"])
    for key in ("id", "category", "answer", "abstained", "confidence_raw", "confidence", "confidence_level",
                "citations", "correct", "missing_facts", "support", "citation_support"):
        assert key in row, key
    assert all(c["valid"] for r in rows for c in r["citations"])
    # each abstention says why, as `ask` does; an answer has no reason and no unknown words
    assert all(r["abstain_reason"] in ABSTAIN_REASONS for r in rows if r["abstained"])
    assert all(r["abstain_reason"] is None and r["unknown_words"] == [] for r in rows if not r["abstained"])


def test_cross_fit_measures_the_split_on_unseen_questions_and_writes_nothing(corpus_dir, tmp_path):
    data = corpus_dir.parent.parent
    out = tmp_path / "never.json"

    # small sets (the shipped files' first questions of each category) keep this quick
    def first(path: Path, n: int, categories) -> Path:
        rows = [json.loads(x) for x in (ROOT / "datasets/fomc_qa" / path.name).read_text().splitlines()]
        kept = [q for cat in categories for q in [r for r in rows if r["category"] == cat and r["split"] == "dev"][:n]]
        path.write_text("".join(json.dumps(q) + "\n" for q in kept))
        return path

    dev = first(tmp_path / "fomc_qa.jsonl", 6, ("factual", "temporal", "comparative", "minutes_views",
                                                "unanswerable", "off_topic"))
    extra = first(tmp_path / "calibration.jsonl", 3, ("factual", "minutes_views", "unanswerable", "off_topic"))
    proc = subprocess.run([sys.executable, "-m", "fedlab.calibrate", "--set", "retriever=bm25",
                           "--set", f"paths.data_dir={data}", "--set", f"dataset.path={dev}",
                           "--set", f"dataset.calibration_path={extra}", "--set", "dataset.fit_sets=[]",
                           # the shipped rewordings reword the shipped files' questions
                           "--set", "dataset.calibration_rewordings_path=null", "--cross-fit", "--out", str(out)],
                          cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert not out.exists()
    blocks: dict[str, dict[str, float]] = {}
    for line in proc.stdout.splitlines():
        if line.startswith("# "):
            title = line[2:]
            blocks[title] = {}
        else:
            name, value = line.split()
            blocks[title][name] = float(value)
    titles = list(blocks)
    assert titles[0].startswith("dev + calibration set, cross-fitted")
    assert titles[1:] == ["dev (36 questions)", "calibration set (12 questions)"]
    for m in blocks.values():
        for name in ("answer_accuracy", "abstention_accuracy", "false_abstention_rate", "ece", "brier", "auroc",
                     "abstention_rate.unanswerable", "answer_accuracy.factual"):
            assert 0.0 <= m[name] <= 1.0, name
        assert m["citation_validity"] == 1.0
    # the whole is made of its parts: 36 and 12 questions, each answered once
    whole, dev_block, cal = (blocks[t] for t in titles)
    assert whole["abstention_rate.off_topic"] == pytest.approx(
        (dev_block["abstention_rate.off_topic"] * 6 + cal["abstention_rate.off_topic"] * 3) / 9, abs=1e-3)
    assert "cross-fitted answering: 48/48" in proc.stderr


def test_the_calibration_set_must_exist_and_keep_its_own_ids(tmp_path):
    from omegaconf import OmegaConf

    from fedlab.errors import FedlabError
    from fedlab.evaluation.answers.calibrate import CALIBRATION_SET, fitting_questions

    dataset = ROOT / "datasets/fomc_qa/fomc_qa.jsonl"
    cfg = OmegaConf.create({"dataset": {"path": str(dataset), "split": "dev",
                                        "calibration_path": str(tmp_path / "absent.jsonl")}})
    with pytest.raises(FedlabError, match=r"dataset.calibration_path=.*absent.jsonl does not exist.*=null"):
        fitting_questions(cfg)
    reused = tmp_path / "reused.jsonl"
    reused.write_text(dataset.read_text().splitlines()[0] + "\n")
    cfg.dataset.calibration_path = str(reused)
    first = json.loads(reused.read_text())
    with pytest.raises(FedlabError, match=f"reuse ids \\({first['id']}…\\) across dataset.path"):
        fitting_questions(cfg)
    renamed = tmp_path / "renamed.jsonl"
    renamed.write_text(json.dumps({**first, "id": "new-001", "split": "dev"}) + "\n")
    cfg.dataset.calibration_path = str(renamed)
    questions, sources = fitting_questions(cfg)
    assert questions[-1].id == "new-001" and sources[-1] == CALIBRATION_SET and sources[0] == "dev"
    assert len(questions) == 132
    cfg.dataset.calibration_path = None  # the split alone
    assert len(fitting_questions(cfg)[0]) == 131


def test_fit_sets_join_the_fit_as_new_questions_and_only_dev_or_train_sets_may():
    """dataset.fit_sets: registered dev/train sets join the fitting questions under their own
    names; a heldout or test set, a pool or an unknown name is one line."""
    from omegaconf import OmegaConf

    from fedlab.dataset.registry import registered, select_ids
    from fedlab.errors import FedlabError
    from fedlab.evaluation.answers.calibrate import fitting_questions
    from fedlab.evaluation.retrieval.harness import load_split

    cfg = OmegaConf.create({"dataset": {"path": str(ROOT / "datasets/fomc_qa/fomc_qa.jsonl"), "split": "dev",
                                        "calibration_path": None, "fit_sets": ["fresh_dev4_a"]}})
    questions, sources = fitting_questions(cfg)
    joined = registered("fresh_dev4_a")
    expected = select_ids(load_split(joined.path, joined.split), joined.ids, joined.path)
    assert [q.id for q, s in zip(questions, sources) if s == "fresh_dev4_a"] == [q.id for q in expected]
    assert sources.count("dev") == 131 and len(questions) == 131 + len(expected)
    for name, said in (("fresh_dev4_b", "a heldout set"), ("fomc_qa_test", "a test set"), ("dev_sets", "a pool"),
                       ("no_such_set", "no registered question set")):
        cfg.dataset.fit_sets = [name]
        with pytest.raises(FedlabError, match=said):
            fitting_questions(cfg)
    cfg.dataset.fit_sets = ["fomc_qa"]  # the split's own questions again
    with pytest.raises(FedlabError, match="reuse ids"):
        fitting_questions(cfg)


def test_rewordings_name_their_question_and_a_bad_line_is_one_line(tmp_path):
    from collections import Counter

    from omegaconf import OmegaConf

    from fedlab.errors import FedlabError
    from fedlab.evaluation.answers.calibrate import calibration_rewordings

    shipped = OmegaConf.merge({"paths": {"root_dir": str(ROOT)}},
                              {"dataset": OmegaConf.load(ROOT / "conf/dataset/fomc_qa.yaml")})
    dataset = {key: shipped.dataset[key] for key in ("path", "split", "calibration_path", "calibration_rewordings_path")}
    cfg = OmegaConf.create({"dataset": dataset})
    found = calibration_rewordings(cfg)
    # the shipped file: one terse and one chatty rewording of every question fitted on (dev and calibration set)
    fitted = [json.loads(x) for name in ("fomc_qa.jsonl", "calibration.jsonl")
              for x in (ROOT / "datasets/fomc_qa" / name).read_text().splitlines()]
    assert set(found) == {q["id"] for q in fitted if q["split"] == "dev"}
    styles = Counter(json.loads(x)["style"] for x in Path(dataset["calibration_rewordings_path"]).read_text().splitlines())
    assert styles == {"terse": len(found), "chatty": len(found)}
    assert all(len(texts) == 2 and all(t.strip() for t in texts) for texts in found.values())

    bad = tmp_path / "rewordings.jsonl"
    first = fitted[0]["id"]
    for lines, message in (
            ([{"of": first, "style": "terse", "question": "ok"}, {"of": first, "style": "shouting", "question": "X"}],
             r"rewordings.jsonl:2: a rewording is \{\"of\": question id"),
            ([{"of": "no-such-id", "style": "terse", "question": "fed funds range"}],
             r"rewordings.jsonl:1: rewords 'no-such-id', which is no question .*calibration_rewordings_path=null")):
        bad.write_text("".join(json.dumps(x) + "\n" for x in lines))
        with pytest.raises(FedlabError, match=message):
            calibration_rewordings(OmegaConf.create({"dataset": {**dataset, "calibration_rewordings_path": str(bad)}}))
    with pytest.raises(FedlabError, match=r"calibration_rewordings_path=.*absent.jsonl does not exist.*=null"):
        calibration_rewordings(OmegaConf.create({"dataset": {**dataset, "calibration_rewordings_path":
                                                             str(tmp_path / "absent.jsonl")}}))
    assert calibration_rewordings(OmegaConf.create({"dataset": {**dataset, "calibration_rewordings_path": None}})) == {}


def test_the_hard_written_questions_are_named_by_a_pattern_of_ids():
    from omegaconf import OmegaConf

    from fedlab.errors import FedlabError
    from fedlab.evaluation.answers.calibrate import hard_sampled

    shipped = OmegaConf.load(ROOT / "conf/dataset/fomc_qa.yaml")
    pattern = hard_sampled(OmegaConf.create({"dataset": {"calibration_hard_ids": shipped.calibration_hard_ids}}))
    ids = [json.loads(x)["id"] for x in (ROOT / "datasets/fomc_qa/calibration.jsonl").read_text().splitlines()]
    hard = [i for i in ids if pattern.match(i)]
    assert 0 < len(hard) < len(ids) and all(i.startswith(("cal-c-", "cal-d-")) for i in hard)  # the second round
    assert hard_sampled(OmegaConf.create({"dataset": {"calibration_hard_ids": None}})) is None
    assert hard_sampled(OmegaConf.create({"dataset": {}})) is None
    with pytest.raises(FedlabError, match=r"dataset.calibration_hard_ids='cal-\[' is not a regular expression"):
        hard_sampled(OmegaConf.create({"dataset": {"calibration_hard_ids": "cal-["}}))


def test_cross_fit_folds_follow_the_questions_categories_not_the_agents_outcomes():
    """Every fold holds each category in proportion, and a seed gives the same folds whatever the
    agent answered: two versions of the agent are compared on the same splits."""
    from collections import Counter

    from fedlab.agent.answerability_fit import FOLDS
    from fedlab.evaluation.answers.calibrate import question_folds

    categories = ["factual"] * 30 + ["temporal"] * 20 + ["unanswerable"] * 10 + ["off_topic"] * 5
    folds = question_folds(categories, seed=3)
    assert sorted(set(folds)) == list(range(FOLDS))
    for category, n in Counter(categories).items():
        per_fold = Counter(k for k, c in zip(folds, categories) if c == category)
        assert max(per_fold.values()) - min(per_fold.get(k, 0) for k in range(FOLDS)) <= 1, category
    assert question_folds(categories, seed=3) == folds
    assert question_folds(categories, seed=4) != folds


def test_support_reuses_known_passage_vectors_with_the_same_result():
    """A cited passage whose vector is known (the index's) is not embedded again, and the
    support is what embedding it would give."""
    from fedlab.evaluation.answers.support import score_answers

    class Counting:
        def __init__(self):
            self.seen: list[str] = []

        def embed_documents(self, texts, progress=False):
            self.seen += list(texts)
            return np.array([[float(len(t)), float(t.count("e")) + 1.0] for t in texts])

    passage = "The Committee decided to lower the target range by 1/4 percentage point."
    cite = Citation(1, "c1", "statement-2019-07-31", "FOMC statement", "2019-07-31", None, passage)
    answers = [AgentAnswer(question="q", answer="The Committee lowered the range by 1/4 point. [1]", abstained=False,
                           confidence=0.8, confidence_level="high", citations=[cite])]
    plain = Counting()
    fresh = score_answers(answers, plain)
    reuse = Counting()
    known = {passage: plain.embed_documents([passage])[0]}
    reused = score_answers(answers, reuse, known=known)
    assert passage not in reuse.seen and passage in plain.seen
    assert [s.closeness for s in reused[0].sentences] == [s.closeness for s in fresh[0].sentences]
    assert reused[0].score == fresh[0].score

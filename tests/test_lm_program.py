"""The agent's language-model path as a DSPy program: its predictors (Predict or ChainOfThought),
saving and loading it, compiling it (`python -m fedlab.optimize`), a backend that fails as one
abstention per question, and the cost of each question. Against a FAKE OpenAI-compatible server
over real HTTP on 127.0.0.1 (tests/chatfake.py); the slow test at the end compiles against a real
llama.cpp server serving gemma-3-270m.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from chatfake import running
from clirun import run_python
from fedlab.agent.program import AgentProgram
from fedlab.agent.searcher import open_search
from fedlab.agent.settings import AgentSettings
from servers import free_port

ROOT = Path(__file__).resolve().parent.parent
QUESTION = "Where did the FOMC leave the fed funds target range at its January 2019 meeting?"
CALIBRATION = ROOT / "conf/calibration/extractive-bm25.json"
# dev questions of fomc_qa: one the fake answers right, two outside the documents' years, one more
DEV_IDS = "qa-a-(001|003|093|095)$"


@pytest.fixture()
def fake():
    with running() as server:
        yield server


@pytest.fixture(scope="module")
def search(corpus_dir):
    from fedlab.agent.answering import compose_config

    cfg = compose_config("evaluate", ["retriever=bm25", f"paths.data_dir={corpus_dir.parent.parent}"])
    return open_search(cfg, "direct")


def backend(api_base: str, **kw):
    from fedlab.lm.openai_compatible import OpenAICompatibleBackend

    return OpenAICompatibleBackend(api_base=api_base, **{"model": "fake-7b", "max_retries": 0, "timeout_s": 5, **kw})


# -- a backend that does not answer: one line, and an abstention per question ----------------------

def test_a_dead_server_is_an_abstention_saying_so_in_one_line(search):
    t0 = time.perf_counter()
    a = AgentProgram(search, backend(f"http://127.0.0.1:{free_port()}/v1", max_retries=1)).answer_with(QUESTION)
    assert time.perf_counter() - t0 < 10
    assert a.abstained and a.abstain_reason == "lm_failed" and not a.citations and a.question == QUESTION
    assert "\n" not in a.answer and "no reply from http://127.0.0.1:" in a.answer


def test_a_server_slower_than_the_timeout_is_an_abstention_after_its_retries(fake, search):
    fake.delay_s = 3.0
    t0 = time.perf_counter()
    a = AgentProgram(search, backend(fake.api_base, timeout_s=0.5, max_retries=1)).answer_with(QUESTION)
    took = time.perf_counter() - t0
    assert a.abstain_reason == "lm_failed" and "timed out" in a.answer and "lm.timeout_s=0.5" in a.answer
    assert len(fake.requests) == 2 and took < 3  # one retry, never waiting for the late reply


def test_an_evaluation_against_a_dead_server_abstains_on_each_question_and_says_so_once(corpus_dir, tmp_path):
    out = tmp_path / "metrics.json"
    proc = run_python(["-m", "fedlab.evaluate", "retriever=bm25", "agent=default", "lm=openai_compatible",
                       f"lm.api_base=http://127.0.0.1:{free_port()}/v1", "lm.model=fake-7b", "lm.max_retries=0",
                       f"agent.calibration={CALIBRATION}", f"paths.data_dir={corpus_dir.parent.parent}",
                       "dataset.ids='qa-a-00[13]$'", f"mlflow.tracking_uri=sqlite:///{tmp_path / 'mlflow.db'}",
                       "eval.progress=false", f"eval.metrics_out={out}"])
    assert proc.returncode == 0, proc.stderr[-2000:]
    metrics = json.loads(out.read_text())
    assert metrics["lm_failures"] == 2 and metrics["false_abstention_rate"] == 1.0
    said = [line for line in proc.stderr.splitlines() if "no reply from http://127.0.0.1:" in line]
    assert len(said) == 1 and "Traceback" not in proc.stderr


# -- the program: a dspy.Module owning its predictors ------------------------------------------------

@pytest.mark.parametrize("kind,names", [
    ("predict", ["assess_query", "reformulate_query", "synthesize_answer"]),
    ("chain_of_thought", ["assess_query.predict", "reformulate_query.predict", "synthesize_answer.predict"]),
])
def test_the_program_owns_the_predictors_the_agent_calls(fake, search, kind, names):
    import dspy

    b = backend(fake.api_base, predictor=kind)
    agent = AgentProgram(search, b, AgentSettings())
    program = agent.module()
    assert isinstance(program, dspy.Module) and [n for n, _ in program.named_predictors()] == names
    assert agent.assess_query is program.assess_query  # the agent's steps are the program's
    prediction = program(question=QUESTION)
    a = prediction.agent_answer
    assert not a.abstained and prediction.cited == [c.chunk_id for c in a.citations] and a.citations
    asked = [m["content"] for body in fake.requests for m in body["messages"] if m["role"] == "system"]
    assert all(("`reasoning`" in text) == (kind == "chain_of_thought") for text in asked)


def test_a_saved_program_loads_into_a_new_backend(fake, search, tmp_path):
    import dspy

    from fedlab.lm.program_file import read_provenance, save_program

    program = AgentProgram(search, backend(fake.api_base), AgentSettings()).module()
    program.synthesize_answer.demos = [dspy.Example(question="q?", passages=["[Source 1] t\nx"], answer="x [Source 1].")]
    program.assess_query.signature = program.assess_query.signature.with_instructions("Classify it, tersely.")
    path = save_program(program, tmp_path / "p.json", {"optimizer": "by hand"})
    assert read_provenance(path) == {"optimizer": "by hand", "predictor": "predict"}
    fresh = backend(fake.api_base)
    fresh.load_program(path)
    assert fresh.program.synthesize_answer.demos[0]["answer"] == "x [Source 1]."
    assert fresh.program.assess_query.signature.instructions == "Classify it, tersely."
    AgentProgram(search, fresh, AgentSettings())(QUESTION)
    synth = [b["messages"] for b in fake.requests if "`answer`" in b["messages"][0]["content"]][-1]
    assert len(synth) == 4 and "x [Source 1]." in synth[2]["content"]  # the demo, as a turn before the question


@pytest.mark.parametrize("content,expected", [
    (None, "no such file"),
    ("{not json", "is not a readable program file"),
    ('{"metadata": {}}', "holds no state for assess_query"),
    ('{"metadata": {"fedlab": {"predictor": "chain_of_thought"}}}', "add lm.predictor=chain_of_thought"),
])
def test_a_bad_program_file_is_one_line_naming_the_fix(tmp_path, content, expected):
    from fedlab.errors import FedlabError

    path = tmp_path / "program.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(FedlabError) as err:
        backend("http://127.0.0.1:9/v1").load_program(path)
    assert expected in str(err.value) and "\n" not in str(err.value)


def test_each_question_is_priced_at_the_backends_rates(fake, search):
    a = AgentProgram(search, backend(fake.api_base, price_per_mtok_in=2.0, price_per_mtok_out=10.0))(QUESTION)
    usage = a.lm_usage
    assert usage["prompt_tokens"] > 0
    assert a.lm_cost == pytest.approx((usage["prompt_tokens"] * 2.0 + usage["completion_tokens"] * 10.0) / 1e6)


# -- python -m fedlab.optimize ------------------------------------------------------------------------

def optimize_args(api_base: str, corpus_dir: Path, tmp_path: Path, *extra: str) -> list[str]:
    return ["-m", "fedlab.optimize", "retriever=bm25", "lm=openai_compatible", f"lm.api_base={api_base}",
            "lm.model=fake-7b", "lm.max_retries=0", f"agent.calibration={CALIBRATION}",
            f"paths.data_dir={corpus_dir.parent.parent}", "dataset=fomc_qa", f"dataset.ids='{DEV_IDS}'",
            "optimize.max_train=3", "optimize.max_eval=2", f"optimize.out={tmp_path / 'program.json'}",
            f"mlflow.tracking_uri=sqlite:///{tmp_path / 'mlflow.db'}", "eval.progress=false", *extra]


def test_optimize_compiles_saves_logs_and_the_program_is_used_by_evaluate(fake, corpus_dir, tmp_path):
    from mlflow.tracking import MlflowClient

    proc = run_python(optimize_args(fake.api_base, corpus_dir, tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    path = tmp_path / "program.json"
    state = json.loads(path.read_text())
    meta = state["metadata"]["fedlab"]
    assert meta["optimizer"] == "bootstrap_few_shot" and meta["lm"] == "openai_compatible" and meta["model"] == "fake-7b"
    assert len(meta["train_ids"]) == 3 and set(meta["train_ids"]) < {"qa-a-001", "qa-a-003", "qa-a-093", "qa-a-095"}
    assert meta["git_commit"] and meta["figures"]["dev.before.n"] == 1  # the dev question not trained on
    demos = sum(len(state[name]["demos"]) for name in ("assess_query", "reformulate_query", "synthesize_answer"))
    assert demos >= 1 and meta["figures"]["demos"] == demos  # the fake answers some training questions right
    for key in ("dev.before.score", "dev.after.score", "heldout.before.score", "heldout.after.score",
                "dev.after.tokens_per_question", "dev.after.seconds_per_question"):
        assert key in meta["figures"], key
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    run = client.search_runs([client.get_experiment_by_name("fedlab").experiment_id])[0]
    assert run.data.tags["optimizer"] == "bootstrap_few_shot" and "dev.after.score" in run.data.metrics
    assert [a.path for a in client.list_artifacts(run.info.run_id, "program")] == ["program/program.json"]

    fake.requests.clear()
    out = tmp_path / "metrics.json"
    judge = f'eval.judge={{lm:openai_compatible,api_base:"{fake.api_base}",model:judge-1b,max_retries:0}}'
    proc = run_python(["-m", "fedlab.evaluate", "retriever=bm25", "agent=default", "lm=openai_compatible",
                       f"lm.api_base={fake.api_base}", "lm.model=fake-7b", f"agent.program={path}", judge,
                       f"agent.calibration={CALIBRATION}", f"paths.data_dir={corpus_dir.parent.parent}",
                       "dataset.ids='qa-a-001$'", f"mlflow.tracking_uri=sqlite:///{tmp_path / 'mlflow.db'}",
                       "eval.progress=false", f"eval.metrics_out={out}"])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert any(len(body["messages"]) > 2 for body in fake.requests)  # the compiled demos went with the question
    metrics = json.loads(out.read_text())
    assert metrics["answer_accuracy"] == 1.0
    assert metrics["faithfulness"] == 0.5 and metrics["faithfulness_judged"] == 1  # the judge found 1 of 2 supported
    assert {body["model"] for body in fake.requests} == {"fake-7b", "judge-1b"}


def test_optimize_refuses_a_heldout_training_set_and_evaluate_a_missing_program(corpus_dir, tmp_path):
    proc = run_python(optimize_args("http://127.0.0.1:9/v1", corpus_dir, tmp_path, "dataset=realistic_heldout",
                                    "dataset.ids=null"))
    assert proc.returncode == 2 and "has role heldout" in proc.stderr and "Traceback" not in proc.stderr
    proc = run_python(["-m", "fedlab.evaluate", "retriever=bm25", "agent=default", "lm=extractive",
                       f"agent.program={tmp_path / 'none.json'}", f"paths.data_dir={corpus_dir.parent.parent}",
                       "dataset.ids='qa-a-001$'", f"mlflow.tracking_uri=sqlite:///{tmp_path / 'mlflow.db'}"])
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert proc.returncode == 2 and len(errors) == 1 and "lm=extractive" in errors[0] and "Traceback" not in proc.stderr



@pytest.mark.parametrize("optimizer", ["mipro_v2_light", "gepa"])
def test_the_other_optimizers_compile_the_program_on_the_fake(fake, search, optimizer):
    """MIPROv2 (light) and GEPA run their own prompts through the backend too (proposals,
    reflections): the fake answers them, and each ends in a program with figures before and after."""
    from fedlab.evaluation.compile import compile_program, split_questions
    from fedlab.evaluation.retrieval.harness import load_split

    questions = load_split(ROOT / "datasets/fomc_qa/fomc_qa.jsonl", "dev", DEV_IDS)
    train, dev_eval, held = split_questions(questions, [], {"max_train": 3, "max_eval": 1, "seed": 0})
    agent = AgentProgram(search, backend(fake.api_base), AgentSettings())
    settings = {"optimizer": optimizer, "max_demos": 1, "max_metric_calls": 12, "seed": 0}
    compiled = compile_program(agent, search.searcher, train, dev_eval, held, settings)
    assert compiled.program is not agent.module() and "dev.after.score" in compiled.figures
    assert compiled.figures["dev.before.n"] == 1 and compiled.train_ids == [q.id for q in train]
    assert fake.requests  # the optimizer's own prompts went to the server too

# -- faithfulness judged by any language-model backend ----------------------------------------------

def judged_answer():
    from fedlab.agent.types import AgentAnswer, Citation

    cite = Citation(1, "c1", "d1", "FOMC statement", "2019-01-30", None, "The Committee kept the target range.")
    return AgentAnswer("q?", "The Committee kept the target range and cut rates [1].", False, 0.9, "high", [cite])


def test_faithfulness_is_judged_by_an_openai_compatible_backend(fake):
    from fedlab.evaluation.answers.faithfulness import build_judge, judge_faithfulness

    judge = build_judge({"lm": "openai_compatible", "api_base": fake.api_base, "model": "judge-1b",
                         "max_retries": 0, "concurrency": 2})
    assert judge_faithfulness(judge, [("q1", "q?", judged_answer())]) == {"q1": 0.5}
    assert len(fake.requests) == 2 and {b["model"] for b in fake.requests} == {"judge-1b"}
    assert judge.usage["prompt_tokens"] == 300  # the judge's tokens are counted too


def test_a_dead_judge_reports_no_faithfulness_and_a_non_model_is_refused():
    from fedlab.errors import FedlabError
    from fedlab.evaluation.answers.faithfulness import build_judge, judge_faithfulness

    judge = build_judge({"lm": "openai_compatible", "api_base": f"http://127.0.0.1:{free_port()}/v1",
                         "model": "judge-1b", "max_retries": 0})
    assert judge_faithfulness(judge, [("q1", "q?", judged_answer())]) is None
    for name in ("extractive", "no_such_lm"):
        with pytest.raises(FedlabError, match=f"eval.judge={name}: a judge is a language-model backend"):
            build_judge(name)


# -- a real server: llama.cpp's OpenAI-compatible server (xllamacpp) serving gemma-3-270m -------------

@pytest.mark.slow
@pytest.mark.timeout(2400)
def test_optimize_against_a_real_llama_cpp_server_compiles_saves_and_reloads(corpus_dir, tmp_path):
    """The tiny base model rarely keeps DSPy's reply format: its failures are abstentions scored 0,
    and the compile still ends in a program that evaluate loads. The figures are printed."""
    from test_lm_openai_compatible import KEY, KEY_ENV, SERVED, serve_gemma

    with serve_gemma() as api_base:
        t0 = time.perf_counter()
        args = optimize_args(api_base, corpus_dir, tmp_path, f"lm.model={SERVED}", f"lm.key_env={KEY_ENV}",
                             "lm.max_tokens=96", "lm.timeout_s=300", "agent.max_context=2",
                             "optimize.max_train=2", "optimize.max_eval=1", "optimize.max_demos=1")
        proc = run_python(args, env={KEY_ENV: KEY}, timeout=1800)
        assert proc.returncode == 0, proc.stderr[-3000:]
        took = time.perf_counter() - t0
        path = tmp_path / "program.json"
        meta = json.loads(path.read_text())["metadata"]["fedlab"]
        assert meta["model"] == SERVED and meta["figures"]["dev.before.tokens_per_question"] > 0
        out = tmp_path / "metrics.json"
        proc = run_python(["-m", "fedlab.evaluate", "retriever=bm25", "agent=default", "lm=openai_compatible",
                           f"lm.api_base={api_base}", f"lm.model={SERVED}", f"lm.key_env={KEY_ENV}", "lm.max_tokens=96",
                           "lm.timeout_s=300", "agent.max_context=2", f"agent.program={path}",
                           f"agent.calibration={CALIBRATION}", f"paths.data_dir={corpus_dir.parent.parent}",
                           "dataset.ids='qa-a-001$'", f"mlflow.tracking_uri=sqlite:///{tmp_path / 'mlflow.db'}",
                           "eval.progress=false", f"eval.metrics_out={out}"], env={KEY_ENV: KEY}, timeout=900)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert json.loads(out.read_text())["lm_prompt_tokens"] > 0
    print(f"optimize on gemma-3-270m via llama.cpp's server: {took:.0f} s; figures {meta['figures']}")

"""Compiling the agent's DSPy program (fedlab.lm.module.AgentModule) with a DSPy optimizer, on
dev questions, with fedlab's own measure as the metric (``python -m fedlab.optimize``).

- metric (``score``): 1 when the agent's output is right as the evaluation judges it
  (fedlab.evaluation.answers.measures.judge_answer: an answerable question answered with every key
  fact; an unanswerable or off-topic one abstained on) and every citation it gives is valid (among
  the passages it retrieved), else 0. A backend failure is an abstention (AgentProgram.answer_with)
  that scores 0 (even on an unanswerable question), never an exception that stops the compile.
- questions: the training examples are ``optimize.max_train`` dev questions (a seeded shuffle of
  ``dataset``, which must be of role dev); the before/after figures are measured on the next
  ``optimize.max_eval`` dev questions (never trained on) and on ``optimize.max_eval`` questions of
  the heldout set ``optimize.heldout`` (read only to confirm).
- optimizers (OPTIMIZERS): bootstrap_few_shot (demos the program itself drafted that scored 1),
  mipro_v2_light (MIPROv2, auto="light": instructions and demos), gepa (reflective instruction
  search; when the installed dspy has it).
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Sequence

from fedlab.errors import FedlabError

OPTIMIZERS = ("bootstrap_few_shot", "mipro_v2_light", "gepa")


@dataclass
class Slice:
    """Figures of one program on one slice of questions."""

    score: float
    answer_accuracy: float | None
    abstention_accuracy: float | None
    lm_failures: int
    seconds_per_question: float
    tokens_per_question: float
    cost_per_question: float
    n: int

    def metrics(self, prefix: str) -> dict[str, float]:
        return {f"{prefix}.{k}": float(v) for k, v in vars(self).items() if v is not None}


@dataclass
class Compiled:
    program: object  # the compiled AgentModule
    figures: dict[str, float] = field(default_factory=dict)  # <dev|heldout>.<before|after>.<measure>
    train_ids: list[str] = field(default_factory=list)
    seconds: float = 0.0


class Judge:
    """fedlab's measure of one answer, as a DSPy metric over examples carrying the question's ``qid``."""

    def __init__(self, questions, pipeline):
        from fedlab.evaluation.retrieval.relevance import resolve_evidence

        self.by_id = {q.id: q for q in questions}
        self.evidence = resolve_evidence(questions, pipeline.corpus.by_id)
        self.chunks_by_id = {c.chunk_id: c for c in pipeline.chunks}

    def record(self, qid: str, answer):
        from fedlab.evaluation.answers.measures import judge_answer

        return judge_answer(self.by_id[qid], answer, self.evidence.get(qid, ()), self.chunks_by_id)

    def __call__(self, example, prediction, trace=None, *args, **kwargs) -> float:
        """The metric (DSPy calls it as ``metric(example, prediction, trace)``; GEPA adds two more)."""
        answer = getattr(prediction, "agent_answer", None)
        if answer is None or answer.abstain_reason == "lm_failed":  # a failure is never a right abstention
            return 0.0
        r = self.record(example.qid, answer)
        return float(r.correct and r.valid_citations == r.n_citations)


def examples(questions) -> list:
    import dspy

    return [dspy.Example(question=q.question, qid=q.id).with_inputs("question") for q in questions]


def measure(program, questions, judge: Judge) -> Slice:
    """``program`` over ``questions``: the metric's mean, answer accuracy, abstention accuracy,
    failures, and per question the seconds, tokens and cost."""
    scores, right, abstained_ok, failures, tokens, cost = [], [], [], 0, 0, 0.0
    t0 = time.perf_counter()
    for ex in examples(questions):
        prediction = program(question=ex.question)
        a = prediction.agent_answer
        scores.append(judge(ex, prediction))
        r = judge.record(ex.qid, a)
        (right if r.answerable else abstained_ok).append(r.answer_correct if r.answerable else r.abstained)
        failures += a.abstain_reason == "lm_failed"
        tokens += int(a.lm_usage.get("prompt_tokens", 0)) + int(a.lm_usage.get("completion_tokens", 0))
        cost += a.lm_cost
    n = max(len(questions), 1)
    return Slice(sum(scores) / n, sum(right) / len(right) if right else None,
                 sum(abstained_ok) / len(abstained_ok) if abstained_ok else None, failures,
                 (time.perf_counter() - t0) / n, tokens / n, cost / n, len(questions))


def optimizer_for(name: str, metric, backend, settings) -> tuple[object, dict]:
    """(the DSPy optimizer ``name`` names, extra compile arguments)."""
    import dspy

    demos = int(settings.get("max_demos", 2))
    if name == "bootstrap_few_shot":
        return dspy.BootstrapFewShot(metric=metric, max_bootstrapped_demos=demos, max_labeled_demos=0,
                                     max_rounds=1, max_errors=10_000), {}
    if name == "mipro_v2_light":
        return (dspy.MIPROv2(metric=metric, prompt_model=backend.lm, task_model=backend.lm, auto="light",
                             max_bootstrapped_demos=demos, max_labeled_demos=0, num_threads=1, max_errors=10_000,
                             seed=int(settings.get("seed", 0)), verbose=False),
                {"requires_permission_to_run": False, "minibatch": False})
    if name == "gepa":
        if not hasattr(dspy, "GEPA"):
            raise FedlabError(f"optimize.optimizer=gepa needs a dspy with GEPA (installed: {dspy.__version__}): "
                              "choose bootstrap_few_shot or mipro_v2_light")
        return (dspy.GEPA(metric=metric, max_metric_calls=int(settings.get("max_metric_calls") or 50),
                          reflection_lm=backend.lm, num_threads=1, seed=int(settings.get("seed", 0))), {})
    raise FedlabError(f"optimize.optimizer={name}: choose one of {', '.join(OPTIMIZERS)}")


def split_questions(dev: Sequence, heldout: Sequence, settings) -> tuple[list, list, list]:
    """(training, dev evaluation, heldout evaluation) questions: a seeded shuffle of each set, the
    dev evaluation slice disjoint from the training one."""
    max_train, max_eval = int(settings.get("max_train", 8)), int(settings.get("max_eval", 8))
    if max_train < 1 or max_eval < 0:
        raise FedlabError("optimize.max_train must be >= 1 and optimize.max_eval >= 0")
    rng = random.Random(int(settings.get("seed", 0)))
    dev, heldout = list(dev), list(heldout)
    rng.shuffle(dev)
    rng.shuffle(heldout)
    return dev[:max_train], dev[max_train:max_train + max_eval], heldout[:max_eval]


def compile_program(agent, pipeline, train, dev_eval, heldout_eval, settings, console=None) -> Compiled:
    """Compile ``agent``'s DSPy program on ``train`` with the optimizer ``settings.optimizer``;
    figures before and after on ``dev_eval`` and ``heldout_eval``."""
    import dspy

    judge = Judge([*train, *dev_eval, *heldout_eval], pipeline)
    student = agent.module()
    backend = agent.backend
    say = (lambda text: console.print(text)) if console is not None else (lambda text: None)
    figures: dict[str, float] = {}
    for label, questions in (("dev", dev_eval), ("heldout", heldout_eval)):
        if questions:
            say(f"before: {label} ({len(questions)} questions)")
            figures.update(measure(student, questions, judge).metrics(f"{label}.before"))
    optimizer, extra = optimizer_for(str(settings.get("optimizer")), judge, backend, settings)
    say(f"compiling with {settings.get('optimizer')} on {len(train)} dev questions")
    t0 = time.perf_counter()
    with dspy.context(lm=backend.lm):
        try:
            compiled = optimizer.compile(student, trainset=examples(train), **extra)
        except FedlabError:
            raise
        except Exception as exc:  # noqa: BLE001 — the optimizer's own failure: one line
            said = " ".join(str(exc).split())[:200] or type(exc).__name__
            raise FedlabError(f"optimize.optimizer={settings.get('optimizer')} failed ({type(exc).__name__}: "
                              f"{said}); try optimize.optimizer=bootstrap_few_shot or more optimize.max_train") from None
    seconds = time.perf_counter() - t0
    compiled.bind(agent.answer_with)
    for label, questions in (("dev", dev_eval), ("heldout", heldout_eval)):
        if questions:
            say(f"after: {label} ({len(questions)} questions)")
            figures.update(measure(compiled, questions, judge).metrics(f"{label}.after"))
    figures["compile_s"] = seconds
    figures["demos"] = float(sum(len(p.demos) for _, p in compiled.named_predictors()))
    return Compiled(compiled, figures, [q.id for q in train], seconds)

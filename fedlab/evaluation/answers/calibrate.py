"""Fit the agent's answerability model on a split (the task behind ``python -m fedlab.calibrate``).

The agent answers every question of the split with no model (every question it searches is
answered from its first search) and records each question's features; an answer is correct
when it is an answer to an answerable question stating all key facts (judged by
``measures.judge_answer``). The model (fedlab.agent.answerability: an off-topic head and a
correct / wrong / unanswerable head) is fitted on those rows, its abstention threshold chosen
out of fold for the target precision (fedlab.agent.answerability_fit), and written as plain JSON
(default ``conf/calibration/<lm>-<retriever>.json``: the features depend on both).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from rich.console import Console

from fedlab.agent.answerability import AnswerabilityModel
from fedlab.errors import FedlabError


@dataclass
class CalibrationResult:
    model: AnswerabilityModel
    out: Path  # where the model was written
    split: str
    n_questions: int
    n_searched: int  # questions the agent searched: the rows the model was fitted on
    n_correct: int  # of those, answered correctly with no model
    target_precision: float


def default_out(cfg) -> Path:
    from fedlab.config import CONF_DIR

    lm = cfg.lm._target_.rsplit(".", 1)[-1].removesuffix("Backend").lower()
    return CONF_DIR / "calibration" / f"{lm}-{cfg.retriever.kind}.json"


def calibrate(cfg, out: str | Path | None = None, target_precision: float | None = None, config_name: str = "",
              overrides: Sequence[str] = (), console: Console | None = None) -> CalibrationResult:
    """Collect the rows on ``cfg`` (composed with the agent, ``agent.calibration=null``), fit, write.

    ``target_precision`` defaults to ``agent.answerability.target_precision``; ``config_name`` and
    ``overrides`` (what ``cfg`` was composed from) are recorded in the model's provenance.
    """
    from fedlab.agent.answerability_fit import Row, fit_model
    from fedlab.agent.build import build_agent
    from fedlab.agent.evidence import Vocabulary
    from fedlab.agent.searcher import open_direct
    from fedlab.evaluation.answers.harness import run_agent
    from fedlab.evaluation.answers.measures import judge_answer
    from fedlab.evaluation.retrieval.harness import dataset_hash, load_split
    from fedlab.pipeline import build_pipeline

    console = console or Console(stderr=True)
    target = target_precision if target_precision is not None else \
        float(cfg.agent.get("answerability", {}).get("target_precision") or 0.9)
    if not 0.0 < target <= 1.0:
        raise FedlabError(f"--target-precision={target} must be in (0, 1]")
    questions = load_split(cfg.dataset.path, cfg.dataset.split)
    pipeline = build_pipeline(cfg, progress=True)  # what a cold cache builds, shown on stderr
    vocabulary = Vocabulary.from_chunks(pipeline.chunks)
    agent = build_agent(cfg, search=open_direct(cfg, pipeline))
    agent.model, agent.vocabulary = None, vocabulary  # unmodelled: answer from the first search, record features
    answers = run_agent(agent, questions, progress=True, console=console)
    rows = []
    for q, a in zip(questions, answers):
        if a.abstain_reason == "coverage":  # decided before any evidence: not the model's to learn
            continue
        judged = judge_answer(q, a, (), {})
        outcome = "correct" if judged.answer_correct else "wrong" if q.answerable else "unanswerable"
        rows.append(Row(dict(a.signals), outcome, q.category == "off_topic"))
    off_threshold = float(agent.settings.off_topic_threshold)
    meta = {"split": cfg.dataset.split, "dataset_hash": dataset_hash(cfg.dataset.path),
            "corpus_hash": pipeline.corpus.content_hash,
            "lm": cfg.lm._target_, "retriever": cfg.retriever.kind, "config": config_name, "sets": list(overrides),
            "method": "logistic"}
    model = fit_model(rows, vocabulary, target, off_threshold, meta=meta)
    path = Path(out) if out else default_out(cfg)
    model.save(path)
    return CalibrationResult(model, path, cfg.dataset.split, len(questions), len(rows),
                             sum(r.outcome == "correct" for r in rows), target)

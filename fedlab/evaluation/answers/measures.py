"""Answer-level measures of the agent on a question set (no MLflow, no I/O).

Per question (``judge_answer``):

- correct answer: answerable, not abstained, and every key fact stated (``normalize``);
- correct: a correct answer, or an abstention on an unanswerable / off-topic question
  (what the confidence is calibrated against);
- citation validity: the cited chunk is among the chunks the agent retrieved;
- citation support: the cited passage covers one of the question's evidence spans
  (``fedlab.evaluation.retrieval.relevance.covers``), answerable questions only.

Aggregates (``summarize``); a share whose denominator is empty is left out, except
``citation_validity``, which is 1.0 when nothing was cited (no citation is invalid):

- ``answer_accuracy`` (and ``answer_accuracy.<category>``): over answerable questions;
- ``abstention_accuracy``: share of unanswerable + off-topic questions abstained on;
- ``false_abstention_rate``: share of answerable questions abstained on;
- ``abstention_rate.<category>``: share of the category's questions abstained on, every category;
- ``correctness``: share of all questions correct (the calibration target);
- ``citation_validity``: valid citations / citations, over all questions;
- ``citation_support``: supporting citations / citations, over answerable questions with citations;
- ``citations_per_answer``: mean citations of the answers that were not abstentions;
- ``support`` (offline proxy, see ``support.py``) and ``faithfulness`` (LLM judge) when given;
- ``ece``, ``brier`` on the confidence as reported (calibrated when a calibrator is set) and
  ``ece_raw``, ``brier_raw`` on the raw score; ``ece_if_calibrated``: the ECE a perfectly
  calibrated model would show on the reported confidences (``calibration.ece_if_calibrated``) —
  an ``ece`` near it is within sampling noise;
- ``auroc`` (when both correct and wrong outputs occur) and ``coverage@precision0.9`` on the
  confidence as reported, over every output, answers and abstentions (``selective.py``);
- ``latency_p50_ms_agent_<stage>``, ``latency_p95_ms_agent_<stage>``;
- ``lm_prompt_tokens``, ``lm_completion_tokens`` (totals) and ``…_mean`` per question; ``lm_cost``
  and ``lm_cost_mean`` at the backend's ``lm.price_per_mtok_in/out``; ``lm_failures``: questions
  the backend did not answer (abstained, ``lm_failed``);
- ``dropped_citations``: markers the agent removed as invalid, in total;
- ``skill.<name>.n``, ``skill.<name>.share``, ``skill.<name>.answer_accuracy``: per rule that
  drafted answers (``skill_metrics``).
"""
from __future__ import annotations

from collections import defaultdict
from typing import Mapping, Sequence

from fedlab.agent.types import AgentAnswer
from fedlab.chunking.chunk import Chunk
from fedlab.dataset.schema import Question
from fedlab.evaluation.answers.calibration import brier, ece, ece_if_calibrated
from fedlab.evaluation.answers.normalize import missing_facts
from fedlab.evaluation.answers.selective import COVERAGE_METRIC, auroc, coverage_at_precision
from fedlab.evaluation.record import QuestionRecord
from fedlab.evaluation.retrieval.latency import latency_summary
from fedlab.evaluation.retrieval.relevance import EvidenceSpan, covers

STAGE_PREFIX = "agent_"


def raw_score(answer: AgentAnswer) -> float:
    return float(answer.raw_confidence if answer.raw_confidence is not None else answer.confidence)


def judge_answer(question: Question, answer: AgentAnswer, evidence: Sequence[EvidenceSpan],
                 chunks_by_id: Mapping[str, Chunk], confidence: float | None = None) -> QuestionRecord:
    """Measure one answer; ``confidence`` overrides ``answer.confidence`` (a calibrator's output)."""
    retrieved = set(answer.retrieved_chunk_ids)
    valid = sum(c.chunk_id in retrieved for c in answer.citations)
    supporting = None
    if question.answerable:
        supporting = sum(
            1 for c in answer.citations
            if c.chunk_id in chunks_by_id and any(covers(chunks_by_id[c.chunk_id], ev) for ev in evidence))
    missing = list(question.key_facts) if answer.abstained else missing_facts(answer.answer, question.key_facts)
    answer_correct = question.answerable and not answer.abstained and not missing
    correct = answer_correct or (not question.answerable and answer.abstained)
    return QuestionRecord(
        id=question.id, category=question.category, answerable=question.answerable, abstained=answer.abstained,
        answer_correct=answer_correct, correct=correct, missing_facts=missing if question.answerable else [],
        n_citations=len(answer.citations), valid_citations=valid, supporting_citations=supporting,
        raw_confidence=raw_score(answer),
        confidence=float(answer.confidence if confidence is None else confidence), skill=answer.skill,
    )


def _share(values: list[bool]) -> float | None:
    return sum(values) / len(values) if values else None


# the measures below that are a mean over questions, and the lower-is-better ones of them all
PER_QUESTION_MEASURES = ("answer_accuracy", "abstention_accuracy", "false_abstention_rate", "correctness", "brier")
LOWER_IS_BETTER = frozenset({"false_abstention_rate", "brier", "ece"})


def question_scores(answerable: bool, abstained: bool, answer_correct: bool, correct: bool,
                    confidence: float) -> dict[str, float]:
    """One question's value of each measure of PER_QUESTION_MEASURES it counts in: the measure is
    the mean of these over the questions that have it (what ``python -m fedlab.compare`` pairs)."""
    scores = {"correctness": float(correct), "brier": brier([confidence], [correct])}
    if answerable:
        scores.update(answer_accuracy=float(answer_correct), false_abstention_rate=float(abstained))
    else:
        scores["abstention_accuracy"] = float(abstained)
    return scores


def skill_metrics(results: Sequence[QuestionRecord]) -> dict[str, float]:
    """Per rule that drafted answers (``QuestionRecord.skill``): ``skill.<name>.n`` questions it
    drafted for, ``skill.<name>.share`` of all questions, ``skill.<name>.answer_accuracy`` of the
    answerable ones among them (a draft withheld by the model counts as not right)."""
    out: dict[str, float] = {}
    for name in sorted({r.skill for r in results if r.skill}):
        drafted = [r for r in results if r.skill == name]
        out[f"skill.{name}.n"] = float(len(drafted))
        out[f"skill.{name}.share"] = len(drafted) / len(results)
        answerable = [r.answer_correct for r in drafted if r.answerable]
        if answerable:
            out[f"skill.{name}.answer_accuracy"] = sum(answerable) / len(answerable)
    return out


def summarize(results: Sequence[QuestionRecord], answers: Sequence[AgentAnswer]) -> dict[str, float]:
    """The aggregate metrics listed in the module docstring (``results`` and ``answers`` align)."""
    answerable = [r for r in results if r.answerable]
    scores = [question_scores(r.answerable, r.abstained, r.answer_correct, r.correct, r.confidence) for r in results]
    metrics: dict[str, float | None] = {
        name: _share([q[name] for q in scores if name in q]) for name in PER_QUESTION_MEASURES if name != "brier"}
    by_cat: dict[str, list[bool]] = defaultdict(list)
    for r in answerable:
        by_cat[r.category].append(r.answer_correct)
    for cat, values in sorted(by_cat.items()):
        metrics[f"answer_accuracy.{cat}"] = _share(values)
    for cat in sorted({r.category for r in results}):
        metrics[f"abstention_rate.{cat}"] = _share([r.abstained for r in results if r.category == cat])
    metrics.update(skill_metrics(results))
    n_cited = sum(r.n_citations for r in results)
    metrics["citation_validity"] = sum(r.valid_citations for r in results) / n_cited if n_cited else 1.0
    with_cites = [r for r in answerable if r.n_citations]
    metrics["citation_support"] = (sum(r.supporting_citations or 0 for r in with_cites)
                                   / sum(r.n_citations for r in with_cites)) if with_cites else None
    answered = [r for r in results if not r.abstained]
    metrics["citations_per_answer"] = sum(r.n_citations for r in answered) / len(answered) if answered else None
    for name in ("support", "faithfulness"):
        values = [getattr(r, name) for r in results if getattr(r, name) is not None]
        metrics[name] = sum(values) / len(values) if values else None
    if results:
        correct = [r.correct for r in results]
        confidence, raw = [r.confidence for r in results], [r.raw_confidence for r in results]
        metrics["ece"] = ece(confidence, correct)
        metrics["ece_if_calibrated"] = ece_if_calibrated(confidence)
        metrics["brier"] = brier(confidence, correct)
        metrics["ece_raw"] = ece(raw, correct)
        metrics["brier_raw"] = brier(raw, correct)
        metrics["auroc"] = auroc(confidence, correct)
        metrics[COVERAGE_METRIC] = coverage_at_precision(confidence, correct)
    metrics.update(latency_summary({f"{STAGE_PREFIX}{k}": v for k, v in a.latency_ms.items()} for a in answers))
    for kind in ("prompt_tokens", "completion_tokens"):
        total = sum(int(a.lm_usage.get(kind, 0) or 0) for a in answers)
        metrics[f"lm_{kind}"] = float(total)
        metrics[f"lm_{kind}_mean"] = total / len(answers) if answers else None
    metrics["lm_cost"] = float(sum(a.lm_cost for a in answers))
    metrics["lm_cost_mean"] = metrics["lm_cost"] / len(answers) if answers else None
    metrics["lm_failures"] = float(sum(a.abstain_reason == "lm_failed" for a in answers))
    metrics["dropped_citations"] = float(sum(a.dropped_citations for a in answers))
    return {k: float(v) for k, v in metrics.items() if v is not None}

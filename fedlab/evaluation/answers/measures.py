"""Answer-level measures of the agent on a question set (no MLflow, no I/O).

Contract and design notes: docs/metrics.md#design-notes-fedlabevaluationanswersmeasurespy.
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


def length_measures(texts: Sequence[str]) -> dict[str, float | None]:
    """``answer_length`` (mean words, citation markers aside) and ``duplicate_rate`` (near-duplicate
    sentence pairs / sentence pairs, pooled) of the answers ``texts``; None when there is none."""
    from fedlab.skills.restated import CITE_MARKERS, duplicate_pairs

    lengths = [len(CITE_MARKERS.sub("", t).split()) for t in texts]
    pairs = [duplicate_pairs(t) for t in texts]
    total = sum(n for _, n in pairs)
    return {"answer_length": sum(lengths) / len(lengths) if lengths else None,
            "duplicate_rate": sum(d for d, _ in pairs) / total if total else None}


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
    metrics.update(length_measures([a.answer for a in answers if not a.abstained]))
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

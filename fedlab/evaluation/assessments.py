"""A question's measures as the assessments of its trace (fedlab.spans ``assess`` / ``expect``).

Each measure is (name, value, rationale, source): the value the per-question artifacts hold
(per_question.jsonl, agent_answers.jsonl), a line saying why, and the code that judged it. A
measure that does not apply to the question (recall of an unanswerable one, the citation validity
of an answer without citations) is left out. The run's metrics are the means of these.
"""
from __future__ import annotations

from typing import Any, Sequence

from fedlab.agent.types import ABSTAIN_REASONS
from fedlab.evaluation.retrieval.metrics import meeting_recall_at, recall_at
from fedlab.evaluation.retrieval.relevance import judge_ranking

RETRIEVAL_SOURCE = "fedlab.evaluation.retrieval.metrics"
ANSWER_SOURCE = "fedlab.evaluation.answers.measures.judge_answer"
AGENT_SOURCE = "fedlab.agent.program"
# the retrieval measures a trace shows, as the run's metrics name them
RETRIEVAL_MEASURES = ("recall@10", "meeting_recall@5")


def search_measures(hits: Sequence[Any], evidence: Sequence[Any]) -> dict[str, float]:
    """recall@10 and meeting_recall@5 of one question's ranked ``hits`` against its ``evidence``
    (as fedlab.evaluation.retrieval.metrics.evaluate_retrieval computes them); {} when it has none."""
    if not evidence:
        return {}
    chunks = [h.chunk if hasattr(h, "chunk") else h for h in hits]
    covered = judge_ranking(chunks, evidence)
    return {"recall@10": recall_at(covered, len(evidence), 10), "meeting_recall@5": meeting_recall_at(chunks, evidence, 5)}


def retrieval_measures(values: dict | None) -> list[tuple]:
    """The retrieval measures of a question (a per_question row or ``search_measures``)."""
    values = values or {}
    return [(name, float(values[name]), f"{name} of the pipeline's search for the question", RETRIEVAL_SOURCE)
            for name in RETRIEVAL_MEASURES if values.get(name) is not None]


def answer_measures(question, answer, record, retrieval: dict | None = None) -> list[tuple]:
    """correct, missing_key_facts, abstained (and why), citation_validity, confidence — and the
    retrieval measures of the question — of the agent's ``answer`` judged as ``record`` (a
    fedlab.evaluation.record.QuestionRecord from judge_answer)."""
    if question.answerable:
        why = ("answered with every key fact" if record.answer_correct else
               "abstained on an answerable question" if answer.abstained else
               "missing: " + "; ".join(record.missing_facts))
    else:
        why = "abstained on a question the documents do not answer" if answer.abstained else \
            "answered a question the documents do not answer"
    out: list[tuple] = [("correct", bool(record.correct), why, ANSWER_SOURCE)]
    if question.answerable:
        missing = list(record.missing_facts)
        out.append(("missing_key_facts", len(missing),
                    "; ".join(missing) if missing else "none of the key facts is missing", ANSWER_SOURCE))
    reason = answer.abstain_reason
    out.append(("abstained", bool(answer.abstained),
                f"{reason}: {ABSTAIN_REASONS.get(reason, reason)}" if answer.abstained and reason else
                "abstained" if answer.abstained else "answered", AGENT_SOURCE))
    if record.n_citations:
        out.append(("citation_validity", record.valid_citations / record.n_citations,
                    f"{record.valid_citations} of {record.n_citations} citations name a retrieved passage",
                    ANSWER_SOURCE))
    out.append(("confidence", float(answer.confidence), f"level {answer.confidence_level}", AGENT_SOURCE))
    if getattr(answer, "skill", None):  # the rule that drafted the answer: runs compare per skill
        out.append(("skill", str(answer.skill), "drafted with " + ", ".join(answer.skills or [answer.skill]),
                    AGENT_SOURCE))
    return out + retrieval_measures(retrieval)


def expectations(question) -> list[tuple]:
    """What the question set says: whether the documents answer it, and the key facts an answer needs."""
    out: list[tuple] = [("answerable", bool(question.answerable), None)]
    if question.key_facts:
        out.append(("key_facts", list(question.key_facts), None))
    if question.answer:
        out.append(("expected_response", question.answer, None))
    return out


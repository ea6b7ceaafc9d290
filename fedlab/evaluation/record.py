"""One question's measurements, the record both parts of the evaluation fill.

The retrieval part (``evaluation.retrieval.metrics``) fills the retrieval fields of every
answerable question; the answer part (``evaluation.answers.measures``) fills the answer fields
of every question the agent answered. A field a part does not measure keeps its default:
None (empty for the lists and mappings) means "not measured", e.g. the answer fields when the
agent did not run.
"""
from __future__ import annotations

from dataclasses import dataclass, field

ANSWER_FIELDS = ("abstained", "answer_correct", "correct", "missing_facts", "n_citations", "valid_citations",
                 "supporting_citations", "raw_confidence", "confidence", "support", "faithfulness", "skill")


@dataclass
class QuestionRecord:
    id: str
    category: str | None = None
    answerable: bool | None = None
    # retrieval (evaluation.retrieval.metrics)
    first_relevant_rank: int | None = None  # 1-based, over the whole returned list; None = no relevant chunk
    retrieved: list[str] = field(default_factory=list)  # chunk ids as the pipeline returned them, in rank order
    n_evidence: int | None = None
    n_relevant_chunks: int | None = None  # relevant passages in the whole index (size of this question's qrels)
    metrics: dict[str, float] = field(default_factory=dict)  # recall@5, mrr@10, … (METRIC_NAMES)
    # answer (evaluation.answers.measures)
    abstained: bool | None = None
    answer_correct: bool | None = None  # answerable, not abstained, all key facts stated
    correct: bool | None = None  # answer_correct, or a right abstention
    missing_facts: list[str] | None = None
    n_citations: int | None = None
    valid_citations: int | None = None
    supporting_citations: int | None = None  # None for questions without evidence
    raw_confidence: float | None = None
    confidence: float | None = None  # as reported: calibrated when a calibrator is configured
    support: float | None = None
    faithfulness: float | None = None
    skill: str | None = None  # the rule that drafted the answer (AgentAnswer.skill); None: abstained before drafting

    @property
    def scored(self) -> bool:
        """Whether the retrieval part measured this question."""
        return self.n_evidence is not None

    @property
    def answered(self) -> bool:
        """Whether the answer part measured this question (``correct`` is set for every judged answer)."""
        return self.correct is not None

    def to_json(self) -> dict:
        """One flat row: ``id``; the retrieval details and metric names when the retrieval part
        measured the question; the answer fields when the answer part did."""
        row: dict = {"id": self.id}
        if self.scored:
            row.update({"first_relevant_rank": self.first_relevant_rank, "retrieved_chunk_ids": list(self.retrieved),
                        "n_evidence": self.n_evidence, "n_relevant_chunks": self.n_relevant_chunks, **self.metrics})
        if self.answered:
            row.update({"category": self.category, "answerable": self.answerable,
                        **{name: getattr(self, name) for name in ANSWER_FIELDS}})
        return row

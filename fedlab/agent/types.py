"""The agent's boundary types: what `ask` prints and what the evaluation measures."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

CONFIDENCE_LEVELS = ("high", "medium", "low", "insufficient")
# why an answer abstained (AgentAnswer.abstain_reason), as `ask` prints it
ABSTAIN_REASONS = {
    "coverage": "the question's dates lie outside the documents' coverage",
    "impossible_date": "the question names a day that does not exist",
    "off_topic": "the question is not about the FOMC, monetary policy or the economy",
    "weak_evidence": "the retrieved passages are too weak to support an answer",
    "ungrounded": "no sentence of the drafted answer could be tied to a retrieved passage",
    "unlikely_answer": "the answer the retrieved passages give is unlikely to be right",
    "lm_failed": "the language model did not answer (a dead or slow server, a reply in no format)",
}
# the reasons that are judgements on the question's words and passages (not the coverage or a
# date that does not exist: facts; nor a backend that did not answer)
FACT_ABSTENTIONS = frozenset({"coverage", "impossible_date"})
EVIDENCE_ABSTENTIONS = frozenset(ABSTAIN_REASONS) - FACT_ABSTENTIONS - {"lm_failed"}


@dataclass(frozen=True)
class Citation:
    n: int  # the [n] marker in the final answer, 1-based, no gaps, in order of first appearance
    chunk_id: str
    doc_id: str
    title: str
    meeting_date: str
    section: str | None
    text: str  # the cited passage as shown (the retrieved chunk's returned span)


@dataclass
class AgentAnswer:
    question: str
    answer: str  # with [1]-style markers; for an abstention, a plain statement that the documents do not answer it
    abstained: bool
    confidence: float  # in [0, 1]; calibrated when a calibrator is configured
    confidence_level: str  # one of CONFIDENCE_LEVELS
    citations: list[Citation] = field(default_factory=list)
    retrieved_chunk_ids: list[str] = field(default_factory=list)  # every chunk the agent retrieved (all attempts)
    intent: str = "fomc"  # "fomc" | "off_topic" | "unclear"
    attempts: int = 1  # searches made (1 + reformulations)
    raw_confidence: float | None = None  # the uncalibrated retrieval-signal score
    signals: dict[str, float] = field(default_factory=dict)  # retrieval signals behind the confidence
    latency_ms: dict[str, float] = field(default_factory=dict)  # per stage: assess, search, synthesize, validate, total
    lm_usage: dict[str, int] = field(default_factory=dict)  # prompt_tokens, completion_tokens (0 for extractive)
    lm_cost: float = 0.0  # what lm_usage cost at the backend's lm.price_per_mtok_in/out (0: no price)
    dropped_citations: int = 0  # markers removed by validate_citations
    abstain_reason: str | None = None  # one of ABSTAIN_REASONS when abstained
    coverage_note: str | None = None  # the question's period reaches past what the documents cover
    unknown_words: list[str] = field(default_factory=list)  # with an evidence abstention: the question's words no document uses
    skill: str | None = None  # the rule that drafted the answer (extractive: hold_run, votes, …, reader; "lm" for a
                              # language model); None when the agent abstained before drafting
    skills: list[str] = field(default_factory=list)  # every rule with a part in the draft

    def to_json(self) -> dict:
        return asdict(self)

    def outputs(self) -> dict:
        """What a trace's root span shows of the answer: what was said, whether it abstained and
        why, the confidence, the skill that drafted it, and the citations."""
        return {"answer": self.answer, "abstained": self.abstained, "abstain_reason": self.abstain_reason,
                "confidence": self.confidence, "confidence_level": self.confidence_level,
                "coverage_note": self.coverage_note, "skill": self.skill, "skills": list(self.skills),
                "citations": [{"n": c.n, "doc_id": c.doc_id, "chunk_id": c.chunk_id, "meeting_date": c.meeting_date,
                               "section": c.section} for c in self.citations]}

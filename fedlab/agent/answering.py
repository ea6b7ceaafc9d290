"""Answering one question from a config (``python -m fedlab.ask``): the question checked, the
agent built on the config's search, its answer, or the sources alone when the backend fails."""
from __future__ import annotations

import time
import unicodedata
from dataclasses import dataclass, field

from fedlab import spans
from fedlab.agent.types import AgentAnswer
from fedlab.errors import FedlabError, utf8_problem

DEFAULT_CONFIG = "production"
MAX_QUESTION_CHARS = 1000


def check_question(text: str, max_chars: int = MAX_QUESTION_CHARS) -> str:
    """The question, stripped; a FedlabError (one line) when it cannot be a question."""
    problem = utf8_problem(text)
    if problem is not None:
        raise FedlabError(f"the question is not valid UTF-8 text: {problem}; retype it as plain text "
                          "(or set the terminal's encoding to UTF-8)")
    question = text.strip()
    if not question:
        raise FedlabError("the question is empty: ask something, e.g. "
                          "\"What did the FOMC decide in January 2024?\"")
    if len(question) > max_chars:
        raise FedlabError(f"the question is {len(question)} characters long; the limit is {max_chars} "
                          "(--max-chars to change it)")
    if any(unicodedata.category(ch) == "Cc" and ch not in "\t\n" for ch in question):
        raise FedlabError("the question contains control characters: type it as plain text")
    if not any(ch.isalpha() for ch in question):
        raise FedlabError("the question has no words in it: ask in words")
    question = " ".join(question.split())
    from fedlab.retrieval.dates import impossible_dates

    for said, why in impossible_dates(question)[:1]:  # not read as another month, nor its day as a word
        raise FedlabError(f"the question names {said}, which is not a date ({why}): correct the day")
    return question


def compose_config(config: str, sets: list[str]):
    """``config`` with ``sets``, the agent and lm groups switched on (fedlab.agent.settings), and
    the pipeline's groups required."""
    from fedlab.agent.settings import compose_with_agent
    from fedlab.config import CONF_DIR, PIPELINE_GROUPS, require_keys

    if config == DEFAULT_CONFIG and not (CONF_DIR / f"{DEFAULT_CONFIG}.yaml").is_file():
        raise FedlabError("conf/production.yaml does not exist yet: run `make export` to write it, "
                          "or ask with --config evaluate")
    cfg = compose_with_agent(config, sets)
    require_keys(cfg, PIPELINE_GROUPS, config)
    return cfg


@dataclass(frozen=True)
class Answering:
    """What a question came to: the agent's answer, or (``backend_error``) the passages retrieved
    for it without one, each with its document (None when unknown) for titles."""

    question: str
    answer: AgentAnswer | None
    backend: str = ""  # the answer backend, as described to the user
    backend_error: str | None = None
    hits: list = field(default_factory=list)
    documents: dict = field(default_factory=dict)
    seconds: float = 0.0

    def to_json(self, total_ms: float) -> dict:
        """The answer as ``ask --json`` prints it (``total_ms``: the command's whole latency)."""
        a = self.answer
        return {
            "answer": a.answer,
            "abstained": a.abstained,
            "confidence": a.confidence,
            "confidence_level": a.confidence_level,
            "abstain_reason": a.abstain_reason,
            "coverage_note": a.coverage_note,
            "unknown_words": a.unknown_words,
            "skill": a.skill,
            "citations": [{"n": c.n, "doc_id": c.doc_id, "chunk_id": c.chunk_id, "title": c.title,
                           "meeting_date": c.meeting_date, "section": c.section} for c in a.citations],
            "latency_ms": round(total_ms, 1),
        }

    def retrieved_json(self) -> list[dict]:
        return [{"doc_id": h.chunk.doc_id, "chunk_id": h.chunk.chunk_id, "meeting_date": h.chunk.meeting_date,
                 "section": h.chunk.section} for h in self.hits]


def answer_question(cfg, question: str) -> Answering:
    """The agent ``cfg`` describes, on its search (``agent.transport``), answering ``question``
    (already checked by ``check_question``)."""
    from fedlab.agent.build import build_agent, build_backend, require_groups, settings_from
    from fedlab.agent.searcher import open_search
    from fedlab.lm.base import LMUnavailable

    from fedlab.agent.fingerprint import warn_if_stale

    t0 = time.perf_counter()
    require_groups(cfg)
    search = open_search(cfg, settings_from(cfg).transport)
    try:
        try:
            backend = build_backend(cfg)  # an unusable backend is said first, and alone
            warn_if_stale(cfg)  # one line on stderr when the answerability model no longer matches the code
            agent = build_agent(cfg, search=search, backend=backend)
            try:
                with spans.question(None, question) as root:  # a trace with `ask --trace` (fedlab.spans)
                    answer = agent(question)
                    root.set_outputs(answer.outputs())
            except OverflowError:  # a date read from the question, widened past date.max / date.min
                raise FedlabError("a date in the question is out of range: ask about dates between "
                                  "1900 and 2200") from None
        except LMUnavailable as exc:
            hits = search.searcher.search(question).hits
            documents = {h.chunk.doc_id: search.document(h.chunk.doc_id) for h in hits}
            return Answering(question, None, backend_error=str(exc), hits=list(hits), documents=documents,
                             seconds=time.perf_counter() - t0)
    finally:
        search.close()
    return Answering(question, answer, agent.backend.describe(), seconds=time.perf_counter() - t0)

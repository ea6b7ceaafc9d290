"""The agent: assess_query → search → evaluate_confidence → (reformulate_query → search)* →
synthesize_answer → validate_citations, as one DSPy module.

Decisions (FedQuery's workflow, made explicit):
- off_topic intent abstains without searching; unclear intent searches like fomc.
- a search whose level is ``low`` is retried with a reformulated query, at most
  ``max_reformulations`` times; ``insufficient`` abstains at once (rewording does not create
  evidence). The best-scoring attempt is answered from, even if it stays ``low`` — its level is
  shown with the answer.
- an answer left with no valid citation after validation is not grounded: the agent abstains.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import date

import dspy

from fedlab.agent.citations import ground_citations
from fedlab.agent.confidence import DEFAULT_THRESHOLDS, DEFAULT_WEIGHTS, Confidence, assess, check_thresholds
from fedlab.agent.confidence import retrieval_signals
from fedlab.agent.searcher import SearchAccess
from fedlab.agent.signatures import AssessQuery, ReformulateQuery, SynthesizeAnswer
from fedlab.agent.types import AgentAnswer, Citation
from fedlab.errors import FedlabError
from fedlab.index.tokens import Tokenizer
from fedlab.retrieval.types import SCOPES, DateHint, Hit, RetrievalResult

ABSTAIN_NO_EVIDENCE = ("The FOMC statements and minutes in the index do not answer this question: "
                       "the passages retrieved for it are too weak to support an answer.")
ABSTAIN_OFF_TOPIC = ("This question is not about the FOMC, monetary policy or the economy, "
                     "so the FOMC statements and minutes do not answer it.")
ABSTAIN_UNGROUNDED = ("The FOMC statements and minutes retrieved for this question do not answer it: "
                      "no statement in the answer could be tied to a retrieved passage.")
ORDERINGS = ("rank", "lost_in_the_middle")
_TOKENS = Tokenizer()


@dataclass
class AgentSettings:
    """conf/agent/default.yaml. ``transport`` is read when the searcher is opened."""

    transport: str = "direct"
    top_k: int | None = None  # base k for a search; None = the retriever's top_k
    max_context: int = 8  # passages handed to synthesize_answer
    ordering: str = "rank"  # rank | lost_in_the_middle
    max_reformulations: int = 2
    thresholds: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_THRESHOLDS))
    weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    signal_top_n: int = 5
    bm25_half: float = 10.0  # BM25 score mapped to 0.5 by the top_score signal
    calibration: str | None = None  # path to a saved calibrator (fedlab.agent_eval.calibration)
    today: str | None = None  # ISO date ending open ranges; None = the retriever's corpus_end, else today

    def __post_init__(self):
        self.thresholds = check_thresholds(dict(self.thresholds))
        self.weights = {k: float(v) for k, v in dict(self.weights).items()}
        if self.ordering not in ORDERINGS:
            raise FedlabError(f"agent.ordering={self.ordering!r}: choose one of {', '.join(ORDERINGS)}")
        if int(self.max_reformulations) < 0 or int(self.max_context) < 1:
            raise FedlabError("agent.max_reformulations must be >= 0 and agent.max_context >= 1")


@dataclass
class _Attempt:
    query: str
    result: RetrievalResult
    confidence: Confidence


def hint_from(prediction, question: str) -> DateHint | None:
    """The DateHint an assess_query prediction describes; None when it names no valid range."""
    scope = str(getattr(prediction, "scope", "none") or "none").strip()
    lo = str(getattr(prediction, "date_from", "") or "").strip() or None
    hi = str(getattr(prediction, "date_to", "") or "").strip() or None
    if scope not in SCOPES or hi is None:
        return None
    try:
        if lo is not None:
            date.fromisoformat(lo)
        date.fromisoformat(hi)
    except ValueError:
        return None
    if lo is not None and lo > hi:
        return None
    return DateHint(lo, hi, scope, text="")


def _month(iso: str) -> str:
    return date.fromisoformat(iso).strftime("%B %Y")


def coverage_check(hint: DateHint | None, coverage: tuple[str, str] | None) -> tuple[str | None, str | None]:
    """(abstention, note) from the question's date range and the documents' coverage, a fact about
    the corpus rather than a confidence: a range wholly outside the covered meetings is answered
    with the coverage; one reaching past it is answered for the covered part, with a note."""
    if hint is None or coverage is None:
        return None, None
    first, last = coverage
    span = f"{_month(first)} – {_month(last)}"
    # by month: "October 2025" is covered by a meeting on 2025-10-29, "2019" by one on 2019-01-30
    lo, hi = (hint.date_from or "0000-00")[:7], hint.date_to[:7]
    if lo > last[:7] or hi < first[:7]:
        asked = _month(hint.date_to) if hint.date_from and lo == hi else \
            f"{_month(hint.date_from) if hint.date_from else 'the time'} to {_month(hint.date_to)}"
        return (f"The FOMC statements and minutes in the index cover the meetings of {span}; this question "
                f"asks about {asked}, which they do not cover."), None
    if lo < first[:7] or hi > last[:7]:
        return None, (f"The documents cover the meetings of {span} only; the rest of the question's period "
                      "is not answered.")
    return None, None


def format_passage(n: int, title: str, meeting_date: str, section: str | None, text: str) -> str:
    where = f", {section}" if section else ""
    return f"[Source {n}] {title}, {meeting_date}{where}\n{text}"


class AgentProgram(dspy.Module):
    """Answer FOMC questions with citations grounded in the retrieved passages.

    search: a SearchAccess (fedlab.agent.searcher); backend: an `lm` config object with
    ``predictor(signature)``, ``context()``, ``usage_mark()``/``usage_since()``.
    """

    def __init__(self, search: SearchAccess, backend, settings: AgentSettings | None = None, calibrator=None,
                 today: str | None = None):
        super().__init__()
        self.search_access = search
        self.backend = backend
        self.settings = settings or AgentSettings()
        self.calibrator = calibrator
        self.today = self.settings.today or today or date.today().isoformat()
        self.assess_query = backend.predictor(AssessQuery)
        self.reformulate_query = backend.predictor(ReformulateQuery)
        self.synthesize_answer = backend.predictor(SynthesizeAnswer)

    # -- steps -------------------------------------------------------------------------------
    def coverage(self) -> tuple[str, str] | None:
        """The first and last meeting dates the searcher's documents cover (None: not known)."""
        cover = getattr(self.search_access.searcher, "coverage", None)
        return cover() if cover is not None else None

    def event_for(self, question: str) -> str:
        """The meeting(s) the question names by an event, resolved by the searcher (the pipeline
        with ``retriever.events`` on), as one line for assess_query; empty when there are none."""
        resolve = getattr(self.search_access.searcher, "event_for", None)
        event = resolve(question) if resolve is not None else None
        return event.describe() if event is not None else ""

    def search(self, query: str, hint: DateHint | None) -> RetrievalResult:
        return self.search_access.searcher.search(query, k=self.settings.top_k, hint=hint)

    def evaluate_confidence(self, question: str, result: RetrievalResult) -> Confidence:
        s = self.settings
        terms = set(_TOKENS(question))
        if result.hint is not None and result.hint.text:
            terms -= set(_TOKENS(result.hint.text))
        signals = retrieval_signals(terms, result.hits, lambda h: set(_TOKENS(h.chunk.text)), result.hint,
                                    top_n=s.signal_top_n, bm25_half=s.bm25_half)
        return assess(signals, s.weights, s.thresholds, self.calibrator)

    def context(self, hits: list[Hit]) -> list[Hit]:
        top = hits[:self.settings.max_context]
        if self.settings.ordering == "lost_in_the_middle":
            from fedlab.retrieval.ordering import lost_in_the_middle

            top = lost_in_the_middle(top)
        return top

    def citation(self, n: int, hit: Hit) -> Citation:
        chunk = hit.chunk
        doc = self.search_access.document(chunk.doc_id)
        start, end = chunk.span
        if doc is None:
            title, text, section = chunk.doc_id, chunk.text, chunk.section
        else:
            title, text, section = doc.title, doc.text[start:end], chunk.section or doc.section_at(start)
        return Citation(n, chunk.chunk_id, chunk.doc_id, title, chunk.meeting_date, section, text)

    # -- the program -------------------------------------------------------------------------
    def forward(self, question: str) -> AgentAnswer:
        t0 = time.perf_counter()
        timings: dict[str, float] = {"assess": 0.0, "search": 0.0, "reformulate": 0.0, "synthesize": 0.0,
                                     "validate": 0.0}
        mark = self.backend.usage_mark()

        def done(answer: AgentAnswer) -> AgentAnswer:
            timings["total"] = (time.perf_counter() - t0) * 1000
            answer.latency_ms = {k: round(v, 3) for k, v in timings.items()}
            answer.lm_usage = self.backend.usage_since(mark)
            return answer

        with self.backend.context():
            t = time.perf_counter()
            assessed = self.assess_query(question=question, today=self.today, event=self.event_for(question))
            timings["assess"] = (time.perf_counter() - t) * 1000
        intent = assessed.intent if assessed.intent in ("fomc", "off_topic", "unclear") else "unclear"
        if intent == "off_topic":
            return done(AgentAnswer(question, ABSTAIN_OFF_TOPIC, True, 0.0, "insufficient", intent=intent,
                                    abstain_reason="off_topic",
                                    attempts=0, raw_confidence=0.0))
        hint = hint_from(assessed, question)
        coverage = self.coverage()
        outside, partial = coverage_check(hint, coverage)
        if outside:  # certain: the documents hold no meeting in the question's period
            return done(AgentAnswer(question, outside, True, 1.0, "high", intent=intent, attempts=0,
                                    raw_confidence=1.0, abstain_reason="coverage"))

        attempts: list[_Attempt] = []
        query = question
        for i in range(int(self.settings.max_reformulations) + 1):
            if i:
                with self.backend.context():
                    t = time.perf_counter()
                    query = self.reformulate_query(question=question, previous_query=query, attempt=i).query
                    timings["reformulate"] += (time.perf_counter() - t) * 1000
            t = time.perf_counter()
            result = self.search(query, hint)
            timings["search"] += (time.perf_counter() - t) * 1000
            attempts.append(_Attempt(query, result, self.evaluate_confidence(question, result)))
            if attempts[-1].confidence.level != "low":
                break
        best = max(attempts, key=lambda a: a.confidence.value)
        conf = best.confidence
        retrieved = list(dict.fromkeys(h.chunk.chunk_id for a in attempts for h in a.result.hits))
        base = dict(intent=intent, attempts=len(attempts), raw_confidence=conf.raw, signals=dict(conf.signals),
                    retrieved_chunk_ids=retrieved)
        if conf.level == "insufficient":
            return done(AgentAnswer(question, ABSTAIN_NO_EVIDENCE, True, conf.value, conf.level,
                                    abstain_reason="weak_evidence", **base))

        hits = self.context(best.result.hits)
        docs = [self.citation(n, h) for n, h in enumerate(hits, start=1)]
        passages = [format_passage(c.n, c.title, c.meeting_date, c.section, c.text) for c in docs]
        with self.backend.context():
            t = time.perf_counter()
            draft = self.synthesize_answer(question=question, passages=passages).answer
            timings["synthesize"] = (time.perf_counter() - t) * 1000

        t = time.perf_counter()
        grounded = ground_citations(str(draft or ""), [h.chunk.chunk_id for h in hits], set(retrieved))
        citations = [Citation(n, **{k: v for k, v in vars(docs[pos - 1]).items() if k != "n"})
                     for n, pos in enumerate(grounded.cited, start=1)]
        timings["validate"] = (time.perf_counter() - t) * 1000
        if not citations:
            return done(AgentAnswer(question, ABSTAIN_UNGROUNDED, True, conf.value, conf.level,
                                    dropped_citations=grounded.dropped, abstain_reason="ungrounded", **base))
        return done(AgentAnswer(question, grounded.text, False, conf.value, conf.level, citations,
                                dropped_citations=grounded.dropped, coverage_note=partial, **base))

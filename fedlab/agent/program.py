"""The agent: assess_query → search → evaluate_confidence → (reformulate_query → search)* →
synthesize_answer → validate_citations: a DSPy-style program (``forward`` over one predictor per
step) that is itself plain Python — DSPy is imported only by a language-model backend's
predictors (fedlab.lm.base.DspyBackend), so the extractive backend answers without it.

Contract and design notes: docs/agent.md#design-notes-fedlabagentprogrampy.
"""
from __future__ import annotations

import itertools
import logging
import time
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any, Iterable

from fedlab import spans
from fedlab.agent.citations import ground_citations
from fedlab.agent.answerability import AnswerabilityModel
from fedlab.agent.confidence import combine, level_for
from fedlab.agent.confidence import retrieval_signals
from fedlab.agent.evidence import (COMPOSED_FEATURE, RUN_FEATURE, SIMILARITY_FEATURE, QuestionTerms, Vocabulary,
                                   answer_features, answer_similarity, evidence_features, question_features,
                                   question_terms, said_text)
from fedlab.agent.searcher import SearchAccess
from fedlab.agent.settings import AgentSettings
from fedlab.query.shorthand import read_shorthand
from fedlab.lm.steps import ASSESS_QUERY, REFORMULATE_QUERY, SYNTHESIZE_ANSWER
from fedlab.agent.types import EVIDENCE_ABSTENTIONS, AgentAnswer, Citation
from fedlab.errors import FedlabError
from fedlab.facts.passage import FactPassage
from fedlab.index.filter import MetadataFilter
from fedlab.index.tokens import Tokenizer
from fedlab.retrieval.dates import date_expressions, impossible_dates, numeric_date_tokens, question_dates
from fedlab.retrieval.two_pass import preferring_doc_types
from fedlab.retrieval.types import SCOPES, DateHint, Hit, RetrievalResult

ABSTAIN_IMPOSSIBLE_DATE = "The question names {said}, which is not a date: {why}. Ask about a day that exists."
ABSTAIN_NO_EVIDENCE = ("The FOMC statements and minutes in the index do not answer this question: "
                       "the passages retrieved for it are too weak to support an answer.")
ABSTAIN_OFF_TOPIC = ("This question is not about the FOMC, monetary policy or the economy, "
                     "so the FOMC statements and minutes do not answer it.")
ABSTAIN_UNGROUNDED = ("The FOMC statements and minutes retrieved for this question do not answer it: "
                      "no statement in the answer could be tied to a retrieved passage.")
ABSTAIN_UNLIKELY = ("The FOMC statements and minutes retrieved for this question do not answer it reliably: "
                    "the answer drawn from them is unlikely to be right.")
ABSTAIN_LM_FAILED = "No answer: the language model did not answer ({line})."
_TOKENS = Tokenizer()
log = logging.getLogger(__name__)


@dataclass
class _Attempt:
    query: str
    result: RetrievalResult
    raw: float  # the uncalibrated retrieval score (fedlab.agent.confidence.combine)
    signals: dict[str, float]  # the retrieval signals, plus the model's features when it has a vocabulary
    p_answerable: float | None  # the answerability model's P(the documents answer it) (None: no model)


# a passage added to the retrieved ones: (the passage holding a sentence, its span, the section to show (None: its
# own), the record it states (fedlab.facts.passage; None: none))
ExtraPassage = tuple[Hit, tuple[int, int], str | None, Any]


def hint_from(prediction, question: str) -> DateHint | None:
    """The DateHint an assess_query prediction describes; None when it names no valid range. Its
    text is empty, so the question's date words stay among the terms the evidence features read
    (the passages' dates agreeing with the question's is evidence too): with them set aside, the
    cross-fitted model abstained on twice as many answerable questions, with a higher ECE."""
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


def hint_json(hint: DateHint | None) -> dict | None:
    """A date hint as a span's input shows it."""
    return None if hint is None else {"date_from": hint.date_from, "date_to": hint.date_to, "scope": hint.scope}


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


def failed_answer(question: str, line: str, ms: float) -> AgentAnswer:
    """The abstention a backend failure (``line``) becomes for one question."""
    return AgentAnswer(question, ABSTAIN_LM_FAILED.format(line=line), True, 0.0, "insufficient", attempts=0,
                       raw_confidence=0.0, abstain_reason="lm_failed", latency_ms={"total": round(ms, 3)})


def format_passage(n: int, title: str, meeting_date: str, section: str | None, text: str) -> str:
    where = f", {section}" if section else ""
    return f"[Source {n}] {title}, {meeting_date}{where}\n{text}"


class AgentProgram:
    """Answer FOMC questions with citations grounded in the retrieved passages.

    search: a SearchAccess (fedlab.agent.searcher); backend: an `lm` config object with
    ``predictor(step)`` (a fedlab.lm.steps.Step), ``context()``, ``usage_mark()``/``usage_since()``; model: the
    answerability model (None: unmodelled); vocabulary: the corpus vocabulary the features are
    computed with when there is no model (fitting one).
    """

    def __init__(self, search: SearchAccess, backend, settings: AgentSettings | None = None,
                 model: AnswerabilityModel | None = None, today: str | None = None,
                 vocabulary: Vocabulary | None = None):
        self.search_access = search
        self.backend = backend
        self.settings = settings or AgentSettings()
        self.model = model
        self.vocabulary = model.vocabulary if model is not None else vocabulary
        self.today = self.settings.today or today or date.today().isoformat()
        self._warned_no_vector = False
        self.assess_query = backend.predictor(ASSESS_QUERY)
        self.reformulate_query = backend.predictor(REFORMULATE_QUERY)
        self.synthesize_answer = backend.predictor(SYNTHESIZE_ANSWER)
        if hasattr(backend, "use_glossary"):  # the extractive reader's; over MCP the searcher has no glossary
            glossary = getattr(search.searcher, "glossary", None) if self.settings.glossary else None
            backend.use_glossary(glossary or {})

    def __call__(self, question: str) -> AgentAnswer:
        answer = self.forward(self.read(question))
        answer.question = question  # as asked
        return answer

    def answer_with(self, question: str, steps=None) -> AgentAnswer:
        """The answer drafted with ``steps``' predictors (an object with ``assess_query``,
        ``reformulate_query``, ``synthesize_answer``; None: the backend's); a backend that cannot
        answer (LMUnavailable: a dead or slow server, a reply in no format) is an abstention
        saying so in one line (``abstain_reason`` lm_failed), never an exception."""
        from fedlab.lm.base import LMUnavailable

        t0, mark = time.perf_counter(), self.backend.usage_mark()
        try:
            answer = self.forward(self.read(question), steps)
        except LMUnavailable as exc:
            answer = failed_answer(question, str(exc), (time.perf_counter() - t0) * 1000)
            answer.lm_usage = self.backend.usage_since(mark)  # what the steps before the failure used
        answer.question = question
        return answer

    def module(self):
        """The DSPy program (fedlab.lm.module.AgentModule) of a language-model backend, bound to
        this agent: its forward is ``answer_with`` with its own predictors."""
        program = getattr(self.backend, "program", None)
        if program is None:
            from fedlab.errors import FedlabError

            raise FedlabError(f"lm={getattr(self.backend, 'name', '?')} has no DSPy program to compile: "
                              "choose a language-model backend (lm=openai_compatible, lm=anthropic)")
        return program.bind(self.answer_with)

    def read(self, question: str) -> str:
        """The question as the agent works from it: its shorthand in the documents' words
        (fedlab.query.shorthand; ``agent.shorthand``)."""
        return read_shorthand(question) if self.settings.shorthand else question

    @property
    def threshold(self) -> float | None:
        """P(answerable) below which the agent abstains: the config's, else the model's."""
        if self.model is None:
            return None
        chosen = self.settings.answerability.get("threshold")
        return float(chosen) if chosen is not None else self.model.threshold

    @property
    def answer_threshold(self) -> float:
        """P(correct) below which a drafted answer is withheld: the config's, else the model's."""
        if self.model is None:
            return 0.0
        chosen = self.settings.answerability.get("answer_threshold")
        return float(chosen) if chosen is not None else self.model.answer_threshold

    @property
    def backend_kind(self) -> str:
        """The span type of the answer step: a language model's, or a plain step for the extractive reader."""
        return "LLM" if getattr(self.backend, "is_language_model", False) else "CHAIN"

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

    def embedding(self, text: str):
        """A text's embedding (a question's, or what an answer says) for the answerability model:
        the search access's (over MCP, the config's embedder here), else the searcher's query
        vector (None, said once, when neither can embed: what reads it then counts for nothing)."""
        embed = self.search_access.question_vector or getattr(self.search_access.searcher, "question_vector", None)
        vector = embed(text) if embed is not None else None
        if vector is None and not self._warned_no_vector:
            self._warned_no_vector = True
            log.warning("the answerability model reads the question's and the answer's embeddings, which this "
                        "searcher does not give: the other features alone decide")
        return vector

    def similarity(self, question_vector, answer: str) -> dict[str, float]:
        """The answer's SIMILARITY_FEATURE: nothing without the question's embedding (the model
        reads it as neutral), 0 for an empty answer."""
        if question_vector is None:
            return {}
        said = said_text(answer)
        return {SIMILARITY_FEATURE: answer_similarity(question_vector, self.embedding(said)) if said else 0.0}

    def preferred_doc_types(self, terms: QuestionTerms | None, hint: DateHint | None) -> set[str]:
        """The document types a question is searched in first: the ones it names (agent.named_doc_type;
        "the March 2019 minutes"); naming none and spanning several meetings, the ones its words
        mark (agent.marked_doc_type; fedlab.agent.evidence.Vocabulary.markers: "participants" are
        the minutes'). Over a range a statement quota (retriever.statement_quota) can give every
        first place to statements, which never say what participants said; in one meeting's range
        the minutes are there beside its few statement passages."""
        if terms is None:
            return set()
        if terms.doc_types:
            return set(terms.doc_types) if self.settings.named_doc_type else set()
        spans = hint is not None and hint.meeting_span() is not None
        return set(terms.marked) if self.settings.marked_doc_type and spans else set()

    def search(self, query: str, hint: DateHint | None, named: set[str] | frozenset[str] = frozenset()) -> RetrievalResult:
        """The searcher's passages for ``query``; when ``named`` holds one document type the corpus
        holds (``preferred_doc_types``), searched in that type too, its passages first
        (fedlab.retrieval.two_pass.preferring_doc_types)."""
        searcher = self.search_access.searcher
        result = searcher.search(query, k=self.settings.top_k, hint=hint)
        if len(named) != 1:
            return result
        types = tuple(named)
        typed = searcher.search(query, k=self.settings.top_k, hint=hint, flt=MetadataFilter(doc_types=types))
        return preferring_doc_types(result, typed, types)

    def evaluate_confidence(self, question: str, query: str, result: RetrievalResult,
                            terms: QuestionTerms | None, asked: dict[str, float]) -> _Attempt:
        """One search judged: its retrieval signals and score, and — with a vocabulary — the
        question and evidence features, scored by the model when there is one."""
        s = self.settings
        words = (set(_TOKENS(question)) - numeric_date_tokens(question, _TOKENS)
                 - set(_TOKENS(date_expressions(result.hint))))
        signals = retrieval_signals(words, result.hits, lambda h: set(_TOKENS(h.chunk.text)), result.hint,
                                    top_n=s.signal_top_n, bm25_half=s.bm25_half)
        raw = combine(signals, s.weights)
        features = dict(signals)
        if terms is not None:
            features = {**asked, **evidence_features(terms, result.hits, signals, self.vocabulary),
                        "retrieval_score": raw}
        p_answerable = self.model.answerable_p(features) if self.model is not None else None
        return _Attempt(query, result, raw, {k: round(v, 6) for k, v in features.items()}, p_answerable)

    def context(self, hits: list[Hit]) -> list[Hit]:
        top = hits[:self.settings.max_context]
        if self.settings.ordering == "lost_in_the_middle":
            from fedlab.retrieval.ordering import lost_in_the_middle

            top = lost_in_the_middle(top)
        return top

    def decision_hits(self, question: str, hint: DateHint | None, shown: list[Hit]) -> list[ExtraPassage]:
        """For each administered rate the question names (interest on reserve balances, the ON RRP
        offering rate, the primary credit rate), the sentence that set it at each meeting in the
        question's range, and, for a question spanning several meetings, each policy meeting's
        decision sentence, from the searcher's meeting timeline; none when the searcher has no
        timeline or the question has no bounded range. About one meeting, the sentence setting the
        rate sits in the minutes' directive and implementation note among forty passages, which
        retrieval can miss; its decision sentence is its statement's, which it finds. A sentence a
        shown passage holds whole is not repeated (one cut by the passage's end is)."""
        from fedlab.query.subjects import rates_named

        timeline = getattr(self.search_access.searcher, "timeline", None)
        if not self.settings.decision_passages or timeline is None or not self.locates or hint is None:
            return []
        spanned = hint.meeting_span()
        rates = set(rates_named(question))
        if spanned is None and (not rates or hint.date_from is None or hint.date_to is None):
            return []
        lo, hi = spanned or (hint.date_from, hint.date_to)
        out, added = [], set()  # (span, section)
        for meeting in timeline:
            if not (lo <= meeting.date <= hi):
                continue
            spans = [meeting.decision.sentence] if meeting.decision is not None and spanned is not None else []
            spans += [a.sentence for a in meeting.administered if a.rate in rates]
            for span in spans:
                if span in added or any(h.chunk.doc_id == span.doc_id and h.chunk.start <= span.start
                                        and span.end <= h.chunk.end for h in shown):
                    continue
                added.add(span)
                out.append((span, None))
        return self.located(out)

    def policy_meetings(self, hint: DateHint | None) -> list | None:
        """The timeline's policy meetings (those with a decision) in a question's bounded date range,
        its end widened by one meeting; None when the searcher has no timeline or cannot locate a
        chunk, or the range is open."""
        timeline = getattr(self.search_access.searcher, "timeline", None)
        if (timeline is None or not self.locates or hint is None
                or hint.date_from is None or hint.date_to is None):
            return None
        lo, hi = hint.date_from, hint.widened_end(1)
        return [m for m in timeline if lo <= m.date <= hi and m.decision is not None]

    @property
    def locates(self) -> bool:
        """Whether the searcher can name the indexed chunk holding a span (``located`` asks it)."""
        return getattr(self.search_access.searcher, "chunk_at", None) is not None

    def located(self, placed: Iterable[tuple[Any, str | None]], records: Iterable[Any] | None = None) -> list[ExtraPassage]:
        """A passage for each (span, section to show; None: its chunk's) whose span (None: skipped)
        lies in an indexed chunk, with the record it states (``records``, in the same order)."""
        out = []
        for (span, section), record in zip(placed, records if records is not None else itertools.repeat(None)):
            chunk = self.search_access.searcher.chunk_at(span.doc_id, span.start) if span is not None else None
            if chunk is not None:
                out.append((Hit(chunk, 0.0), (span.start, span.end), section, record))
        return out

    def records_dissent(self, question: str, hint: DateHint | None, terms: QuestionTerms | None) -> bool:
        """Whether ``question`` asks about votes and names a member whom the searcher's meeting
        timeline records as dissenting at a meeting in its date range (any meeting, undated), and
        the documents of that meeting use each of its terms that few passages of the corpus use
        (Vocabulary.common) besides the words for votes: "… explain the dissent in
        his speech" asks about what they do not hold."""
        from fedlab.query.lexicon import VOTE_WORDS_RE
        from fedlab.query.subjects import asks_about_votes

        timeline = getattr(self.search_access.searcher, "timeline", None)
        if (not self.settings.recorded_dissents or timeline is None or terms is None
                or not asks_about_votes(question)):
            return False
        vote_words = set(_TOKENS(" ".join(VOTE_WORDS_RE.findall(question))))
        rare = {t for t in terms.content if t not in vote_words and not self.vocabulary.common(t)}
        lo, hi = (hint.date_from, hint.date_to) if hint is not None else (None, None)
        for meeting in {m.date: m for m, _ in timeline.dissents_named(question, lo, hi)}.values():
            docs = [self.search_access.document(doc_id) for doc_id in meeting.documents]
            if rare <= set().union(*(set(_TOKENS(d.text)) for d in docs if d is not None)):
                return True
        return False

    def vote_hits(self, question: str, hint: DateHint | None) -> list[ExtraPassage]:
        """For a question about votes (fedlab.query.subjects.asks_about_votes) with a bounded date
        range: the vote record of each policy meeting in it (who voted for, who against and what
        they preferred, who was absent), from the searcher's meeting timeline, under the section
        ``VOTE_SECTION``; none when the range holds more than ``vote_passages`` meetings."""
        from fedlab.facts.timeline import VOTE_SECTION, vote_record_span
        from fedlab.facts.votes import read_vote
        from fedlab.query.subjects import asks_about_votes

        meetings = self.policy_meetings(hint) if self.settings.vote_passages and asks_about_votes(question) else None
        if not meetings or len(meetings) > int(self.settings.vote_passages):
            return []
        docs = [self.search_access.document(m.decision.sentence.doc_id) for m in meetings]
        spans = [vote_record_span(doc, m.decision) if doc is not None else None for m, doc in zip(meetings, docs)]
        records = [read_vote(doc.text[span.start:span.end]) if span is not None else None
                   for doc, span in zip(docs, spans)]
        return self.located(((span, VOTE_SECTION) for span in spans), records)

    def balance_sheet_hits(self, question: str, hint: DateHint | None) -> list[ExtraPassage]:
        """For a question about the balance sheet (fedlab.query.subjects.asks_about_balance_sheet)
        with a bounded date range: each balance-sheet action of the policy statements in it (asset
        purchases begun, widened, tapered or ended; runoff begun, slowed or ended) with the sentences
        detailing it, from the searcher's meeting timeline, under the section
        ``BALANCE_SHEET_SECTION``; none when the range holds more than ``balance_sheet_passages``."""
        from fedlab.facts.balance_sheet import read_balance_sheet
        from fedlab.facts.timeline import BALANCE_SHEET_SECTION, balance_sheet_span
        from fedlab.query.subjects import asks_about_balance_sheet

        meetings = (self.policy_meetings(hint)
                    if self.settings.balance_sheet_passages and asks_about_balance_sheet(question) else None)
        actions = [a for m in meetings or () for a in m.decision.balance_sheet]
        if len(actions) > int(self.settings.balance_sheet_passages):
            return []
        docs = [self.search_access.document(a.span.doc_id) for a in actions]
        spans = [balance_sheet_span(doc, a) if doc is not None else None for a, doc in zip(actions, docs)]
        records = [read_balance_sheet(doc.text[span.start:span.end]) if span is not None else None
                   for doc, span in zip(docs, spans)]
        return self.located(((span, BALANCE_SHEET_SECTION) for span in spans), records)

    def change_hits(self, question: str, hint: DateHint | None) -> list[ExtraPassage]:
        """For a question spanning several meetings: the sentences each policy statement in its
        range added to the previous one and those it dropped (fedlab.facts.changes), the
        section naming the change and its edit; for a question about one meeting that asks about
        a change (``meeting_changes``; fedlab.query.subjects.asks_about_change), what its
        statement changed from the previous policy statement. None when the searcher cannot
        tell, the question is undated or its range holds more than ``change_passages`` changes."""
        from fedlab.facts.changes import dropped_by, new_since
        from fedlab.query.subjects import asks_about_change

        changes_in = getattr(self.search_access.searcher, "statement_changes", None)
        if not self.settings.change_passages or changes_in is None or not self.locates or hint is None:
            return []
        spanned = hint.meeting_span()
        if spanned is not None:
            changes = changes_in(*spanned)
        elif (self.settings.meeting_changes and hint.date_from is not None and hint.date_to is not None
              and asks_about_change(question)):
            # its statement against the previous policy statement (none when the meeting decided nothing)
            changes = changes_in(hint.date_from, hint.widened_end(1), previous=True)
        else:
            return []
        if len(changes) > int(self.settings.change_passages):
            return []
        return self.located((c, section(other, c.edit)) for change in changes
                            for sentences, section, other in ((change.dropped, dropped_by, change.later),
                                                              (change.added, new_since, change.earlier))
                            for c in sentences)

    def statement_runs(self, question: str, hint: DateHint | None) -> list:
        """For a question asking when (an answer type of date, fedlab.query.answer_types) or at how
        many meetings (counts_documents), with no date or a range of several meetings: for each of
        its clauses the policy statements answer, the run of statements that said what it asks
        about (fedlab.retrieval.mentions.StatementRun)."""
        from fedlab.query.answer_types import asked_types, counts_documents

        runs_in = getattr(self.search_access.searcher, "statement_runs", None)
        asks = "date" in asked_types(question) or counts_documents(question)
        if not self.settings.statement_runs or runs_in is None or not self.locates or not asks:
            return []
        spanned = hint.meeting_span() if hint is not None else (None, None)
        if spanned is None:  # one meeting: when, within it, is not a statement's to say
            return []
        # the question's dates are the range, not what was said (the agent's hint holds no text)
        words = frozenset(_TOKENS(question_dates(question)))
        return runs_in(question, *spanned, words)

    def said_hits(self, runs: list) -> list[ExtraPassage]:
        """For each of ``runs`` (statement_runs): the first and the last statement that said it and
        the statement after them, the section naming each one's place in the run."""
        from fedlab.retrieval.mentions import said_place, said_section

        out, places = [], []  # (span, section); the place each states
        for number, run in enumerate(runs, start=1):
            placed = [("first", run.first)]
            if run.last != run.first:
                placed.append(("last", run.last))
            if run.after is not None:
                placed.append(("after" if run.reworded else "dropped", run.after))
            out += [(said, said_section(run, number, role)) for role, said in placed]
            places += [said_place(run, number, role) for role, _ in placed]
        return self.located(out, places)

    def citation(self, n: int, hit: Hit) -> Citation:
        chunk = hit.chunk
        doc = self.search_access.document(chunk.doc_id)
        start, end = chunk.span
        if doc is None:
            title, text, section = chunk.doc_id, chunk.text, chunk.section
        else:
            title, text, section = doc.title, doc.text[start:end], chunk.section or doc.section_at(start)
        return Citation(n, chunk.chunk_id, chunk.doc_id, title, chunk.meeting_date, section, text)

    def reported(self, value: float) -> tuple[float, str]:
        return round(float(value), 6), level_for(value, self.settings.thresholds)

    # -- the program -------------------------------------------------------------------------
    def forward(self, question: str, steps=None) -> AgentAnswer:
        """The answer to ``question`` (read: ``read``), its language steps ``steps``' predictors
        (None: this program's, the backend's)."""
        steps = self if steps is None else steps
        t0 = time.perf_counter()
        timings: dict[str, float] = {"assess": 0.0, "search": 0.0, "reformulate": 0.0, "synthesize": 0.0,
                                     "validate": 0.0}
        mark = self.backend.usage_mark()

        def done(answer: AgentAnswer) -> AgentAnswer:
            if answer.abstained and answer.abstain_reason in EVIDENCE_ABSTENTIONS and self.vocabulary is not None:
                answer.unknown_words = self.vocabulary.unknown_words(question, self.settings.rare_word_zipf)
            timings["total"] = (time.perf_counter() - t0) * 1000
            answer.latency_ms = {k: round(v, 3) for k, v in timings.items()}
            answer.lm_usage = self.backend.usage_since(mark)
            price = getattr(self.backend, "usage_cost", None)
            answer.lm_cost = float(price(answer.lm_usage)) if price is not None else 0.0
            return answer

        impossible = impossible_dates(question)
        if impossible:  # certain: no document is dated by a day that does not exist (nor by another month)
            said, why = impossible[0]
            return done(AgentAnswer(question, ABSTAIN_IMPOSSIBLE_DATE.format(said=said, why=why), True, 1.0, "high",
                                    attempts=0, raw_confidence=1.0, abstain_reason="impossible_date"))
        with self.backend.context():
            t = time.perf_counter()
            with spans.step("assess_query", "CHAIN", {"question": question, "today": self.today}) as span:
                assessed = steps.assess_query(question=question, today=self.today, event=self.event_for(question))
                span.set_outputs({k: getattr(assessed, k, None) for k in ("intent", "scope", "date_from", "date_to")})
            timings["assess"] = (time.perf_counter() - t) * 1000
        intent = assessed.intent if assessed.intent in ("fomc", "off_topic", "unclear") else "unclear"
        if intent == "off_topic" and self.vocabulary is None:  # no classifier: the backend's judgement
            return done(AgentAnswer(question, ABSTAIN_OFF_TOPIC, True, 0.0, "insufficient", intent=intent,
                                    abstain_reason="off_topic", attempts=0, raw_confidence=0.0))
        hint = hint_from(assessed, question)
        outside, partial = coverage_check(hint, self.coverage())
        if outside:  # certain: the documents hold no meeting in the question's period
            return done(AgentAnswer(question, outside, True, 1.0, "high", intent=intent, attempts=0,
                                    raw_confidence=1.0, abstain_reason="coverage"))

        terms = asked = question_vector = None
        if self.vocabulary is not None:
            terms = question_terms(question, hint, self.vocabulary, self.settings.rare_word_zipf)
            asked = {**question_features(terms, hint, self.vocabulary), "intent_off_topic": float(intent == "off_topic")}
            question_vector = self.embedding(question)  # read by the question heads and the answer's similarity
            if self.model is not None and self.model.reads_questions:
                asked.update(self.model.question_features(question_vector))
        attempts: list[_Attempt] = []
        runs = self.statement_runs(question, hint)
        if asked is not None:
            asked[RUN_FEATURE] = float(bool(runs))
        # facts about the corpus, whatever the passages found: a recorded dissent; wording the
        # question quotes, held word for word by a policy statement
        certain = (self.records_dissent(question, hint, terms)
                   or self.settings.quoted_wording and any(run.verbatim for run in runs))
        p_off = None  # P(off topic), from the first search
        query = question
        for i in range(int(self.settings.max_reformulations) + 1 if self.model is not None else 1):
            if i:
                with self.backend.context():
                    t = time.perf_counter()
                    with spans.step("reformulate_query", "CHAIN", {"previous_query": query, "attempt": i}) as span:
                        query = steps.reformulate_query(question=question, previous_query=query, attempt=i).query
                        span.set_outputs({"query": query})
                    timings["reformulate"] += (time.perf_counter() - t) * 1000
            named = self.preferred_doc_types(terms, hint)
            # a search's span: its passages, and how answerable they make the question (evaluate_confidence)
            with spans.step("search", "RETRIEVER", {"query": query, "hint": hint_json(hint), "k": self.settings.top_k,
                                                    "doc_types": sorted(named)}) as span:
                t = time.perf_counter()
                result = self.search(query, hint, named)
                timings["search"] += (time.perf_counter() - t) * 1000
                span.retrieved(result)
                attempts.append(self.evaluate_confidence(question, query, result, terms, asked or {}))
                span.set_attributes({"retrieval_score": round(attempts[-1].raw, 6),
                                     "p_answerable": attempts[-1].p_answerable, "threshold": self.threshold})
            if self.model is None:
                break
            if i == 0:
                p_off = self.model.off_topic_p(attempts[0].signals)
            if certain or p_off >= self.settings.off_topic_threshold or attempts[-1].p_answerable >= self.threshold:
                break
        retrieved = list(dict.fromkeys(h.chunk.chunk_id for a in attempts for h in a.result.hits))
        if self.model is None:
            best = attempts[0]
            value, level = self.reported(best.raw)
            base = dict(intent=intent, attempts=1, raw_confidence=round(best.raw, 6), signals=best.signals,
                        retrieved_chunk_ids=retrieved)
        else:
            if p_off >= self.settings.off_topic_threshold:
                value, level = self.reported(p_off)
                return done(AgentAnswer(question, ABSTAIN_OFF_TOPIC, True, value, level, intent="off_topic",
                                        abstain_reason="off_topic", attempts=len(attempts),
                                        raw_confidence=attempts[0].p_answerable,
                                        signals={**attempts[0].signals, "p_off_topic": round(p_off, 6)},
                                        retrieved_chunk_ids=retrieved))
            best = max(attempts, key=lambda a: a.p_answerable)
            if certain:
                best = replace(best, p_answerable=1.0)
            base = dict(intent=intent, attempts=len(attempts), raw_confidence=round(best.p_answerable, 6),
                        signals={**best.signals, "p_off_topic": round(p_off, 6)}, retrieved_chunk_ids=retrieved)
            if best.p_answerable < self.threshold:
                value, level = self.reported(1.0 - best.p_answerable)
                return done(AgentAnswer(question, ABSTAIN_NO_EVIDENCE, True, value, level,
                                        abstain_reason="weak_evidence", **base))

        hits = self.context(best.result.hits)
        extra = (self.decision_hits(question, hint, hits) + self.change_hits(question, hint)
                 + self.vote_hits(question, hint) + self.balance_sheet_hits(question, hint)
                 + self.said_hits(runs))
        docs = [self.citation(n, h) for n, h in enumerate([*hits, *(h for h, *_ in extra)], start=1)]
        passages = [format_passage(c.n, c.title, c.meeting_date, c.section, c.text) for c in docs[:len(hits)]]
        for c, (hit, (start, end), section, record) in zip(docs[len(hits):], extra):
            doc = self.search_access.document(hit.chunk.doc_id)
            sentence = doc.text[start:end] if doc is not None else c.text
            passage = format_passage(c.n, c.title, c.meeting_date, section or c.section, sentence)
            passages.append(FactPassage(passage, record) if record is not None and doc is not None else passage)
        if extra:
            base["retrieved_chunk_ids"] = list(dict.fromkeys([*retrieved, *(h.chunk.chunk_id for h, *_ in extra)]))
        with self.backend.context():
            t = time.perf_counter()
            with spans.step("synthesize_answer", self.backend_kind,  # the passages' heads: their text is the searches'
                            {"question": question, "passages": [p.split("\n", 1)[0] for p in passages]}) as span:
                drafted = steps.synthesize_answer(question=question, passages=passages)
                draft = drafted.answer
                skill = getattr(drafted, "skill", None) or ("lm" if getattr(self.backend, "is_language_model", False)
                                                            else "reader")
                base["skill"], base["skills"] = skill, list(getattr(drafted, "skills", None) or [skill])
                span.set_outputs({"answer": draft, "skill": skill, "skills": base["skills"]})  # who drafted it
            timings["synthesize"] = (time.perf_counter() - t) * 1000

        t = time.perf_counter()
        shown = [h.chunk.chunk_id for h in hits] + [h.chunk.chunk_id for h, *_ in extra]
        with spans.step("validate_citations", "PARSER", {"passages_shown": len(shown)}) as span:
            grounded = ground_citations(str(draft or ""), shown, set(base["retrieved_chunk_ids"]))
            citations = [Citation(n, **{k: v for k, v in vars(docs[pos - 1]).items() if k != "n"})
                         for n, pos in enumerate(grounded.cited, start=1)]
            span.set_outputs({"cited": [c.chunk_id for c in citations], "dropped": grounded.dropped})
        timings["validate"] = (time.perf_counter() - t) * 1000
        if terms is not None:  # recorded for the fit; with a model, how likely the answer is right
            given = grounded.text if citations else ""
            said = {**answer_features(question, terms, given, self.vocabulary),
                    **self.similarity(question_vector, given),
                    # a language model's prediction has no ``composed``: read as picked sentences
                    COMPOSED_FEATURE: float(bool(given) and bool(getattr(drafted, "composed", False)))}
            base["signals"] = {**base["signals"], **{k: round(v, 6) for k, v in said.items()}}
        if not citations:
            if best.p_answerable is not None:
                value, level = self.reported(1.0 - best.p_answerable)
            return done(AgentAnswer(question, ABSTAIN_UNGROUNDED, True, value, level,
                                    dropped_citations=grounded.dropped, abstain_reason="ungrounded", **base))
        if best.p_answerable is not None:  # a model has a vocabulary: ``said`` is set
            p_correct = best.p_answerable * self.model.correct_p({**best.signals, **said})
            if p_correct < self.answer_threshold:  # what it would say is unlikely to be right
                value, level = self.reported(1.0 - best.p_answerable)
                return done(AgentAnswer(question, ABSTAIN_UNLIKELY, True, value, level,
                                        dropped_citations=grounded.dropped, abstain_reason="unlikely_answer", **base))
            value, level = self.reported(p_correct)
        return done(AgentAnswer(question, grounded.text, False, value, level, citations,
                                dropped_citations=grounded.dropped, coverage_note=partial, **base))

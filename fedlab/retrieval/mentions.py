"""When the policy statements said something: the run of statements holding what a question asks
about, for questions that ask when ("when did the statements first cite …", "during which
meetings did the statement say …") or at how many meetings ("for how many meetings did the
statement say …": the run counts them).

Contract and design notes: docs/skills/said_run.md#design-notes-fedlabretrievalmentionspy.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, replace

from fedlab.chunking.splitting import sentence_spans
from fedlab.corpus.document import Document
from fedlab.index.tokens import Tokenizer, stem
from fedlab.facts.changes import statement_change

# words of saying, of occurrence and of the text's parts: how a question asks when something was said, not what
MENTION_WORDS = frozenset(stem(w) for w in """
say said says state stated statement statements fomc fed federal reserve committee meeting meetings
did does do many first last begin began start started stop stopped end ended appear appeared mention mentioned
cite cited refer referred use used include included drop dropped remove removed word words wording
language phrase time times paragraph paragraphs sentence sentences line lines passage clause
""".split())
HELD_SHARE = 0.5  # the best sentence's terms must carry this share of the clause's terms' weight
RUN_GAP = 1  # statements in a row that may lack it within one run (an unscheduled statement is brief)
_TOKENS = Tokenizer()
# a further clause asking when / which / how long ("…, and when did vaccinations first appear?")
_CLAUSE = re.compile(r"\s*(?:,?\s+and\s+|;\s*)(?=(?:when|which|how long)\b)", re.I)
_REFERS_BACK = re.compile(r"^(?:when|which|how long)\b[^,;]*\b(?:it|its|that|this|they|these|those)\b", re.I)
# a quotation in straight or curly double quotes ("muted inflation pressures"), or single ones ('transitory'):
# a single quote opens after no letter (not "participants' views") and closes before none (not "Committee's")
_QUOTE = re.compile(r"[\"“”]([^\"“”]+)[\"“”]|(?<![\w'’])['‘]([^'‘’\"“”]+?)['’](?![\w'’])")
_SECTION = re.compile(r"^said in (\d+) of (\d+) statements, (\d{4}-\d{2}-\d{2}) to (\d{4}-\d{2}-\d{2}), "
                      r"run (\d+): (first|last|after|dropped)( of those searched)?$")
ROLES = ("first", "last", "after", "dropped")  # after: the next statement's rewording; dropped: it has none


@dataclass(frozen=True)
class SaidSentence:
    doc_id: str
    start: int
    end: int
    meeting_date: str


@dataclass(frozen=True)
class StatementRun:
    """The statements that said what one clause of a question asks about."""

    said: list[SaidSentence]  # the best sentence of each statement holding it, in date order
    statements: int  # policy statements from the first to the last of ``said``
    after: SaidSentence | None  # the closest sentence of the statement after the last, when in range
    opens_range: bool = False  # the first is the range's first statement: it may have been said before
    reworded: bool = False  # ``after`` is its new wording (its closest sentence, or what it put in place)
    verbatim: bool = False  # the clause quotes wording, and the first statement's sentence holds it word for word

    @property
    def first(self) -> SaidSentence:
        return self.said[0]

    @property
    def last(self) -> SaidSentence:
        return self.said[-1]


def clauses(question: str) -> list[str]:
    """The question's clauses that each ask when (module docstring)."""
    out: list[str] = []
    for part in _CLAUSE.split(question.strip()):
        if out and _REFERS_BACK.match(part):
            out[-1] = f"{out[-1]}, and {part}"
        elif part.strip():
            out.append(part.strip())
    return out


def quoted(clause: str) -> list[str]:
    """The quotations of the clause (none: an empty list). A quotation is the wording asked about;
    the clause's other words say how it was used ("listed among the things it would monitor"),
    which the statements need not say."""
    return [m.group(1) or m.group(2) for m in _QUOTE.finditer(clause)]


def _words(text: str) -> str:
    return " " + " ".join(re.findall(r"[a-z0-9]+", text.lower())) + " "


def said_section(run: StatementRun, number: int, role: str) -> str:
    """The section of a passage holding the ``role`` sentence of ``run`` (``number``: its place
    among the question's runs, from 1)."""
    searched = " of those searched" if role == "first" and run.opens_range else ""
    return (f"said in {len(run.said)} of {run.statements} statements, {run.first.meeting_date} to "
            f"{run.last.meeting_date}, run {number}: {role}{searched}")


@dataclass(frozen=True)
class SaidPlace:
    """A passage's place in a run (``said_place``), read back from its section (``said_in``)."""

    saying: int  # statements that said it
    statements: int  # statements from the first to the last
    first: str  # meeting dates (ISO)
    last: str
    run: int  # the run's number among the question's, from 1
    role: str  # one of ROLES
    opens_range: bool  # the first statement is the first one searched


def said_place(run: StatementRun, number: int, role: str) -> SaidPlace:
    """The place of the passage holding the ``role`` sentence of ``run`` (``number``: its place among
    the question's runs, from 1): the record its section (``said_section``) states."""
    return SaidPlace(len(run.said), run.statements, run.first.meeting_date, run.last.meeting_date, number, role,
                     role == "first" and run.opens_range)


def said_in(section: str | None) -> SaidPlace | None:
    """The place of a passage whose section ``said_section`` wrote; None for any other."""
    found = _SECTION.match((section or "").strip())
    if found is None:
        return None
    n, m, first, last, run, role, searched = found.groups()
    return SaidPlace(int(n), int(m), first, last, int(run), role, bool(searched))


def _sentences(doc: Document) -> list[tuple[int, int, frozenset[str]]]:
    return [(a, b, frozenset(_TOKENS(doc.text[a:b]))) for a, b in sentence_spans(doc.text)]


class StatementReader:
    """The policy statements' sentences, tokenised once (fedlab.facts.changes.policy_statements)."""

    def __init__(self, statements: list[Document]):
        self.statements = statements
        self._texts = {d.doc_id: d.text for d in statements}
        self.sentences = [_sentences(d) for d in statements]
        self._n = sum(len(s) for s in self.sentences)
        self._df = Counter(t for doc in self.sentences for _, _, terms in doc for t in terms)

    def idf(self, term: str) -> float:
        """Over the statements' sentences; a term in none weighs most."""
        return math.log((self._n + 1) / (self._df.get(term, 0) + 1))

    def runs(self, question: str, date_from: str | None, date_to: str | None,
             date_words: frozenset[str] = frozenset()) -> list[StatementRun]:
        """One run per clause of ``question`` that the statements dated in the range answer."""
        inside = [i for i, d in enumerate(self.statements)
                  if (date_from or "") <= d.meeting_date <= (date_to or "9999-12-31")]
        if len(inside) < 2:
            return []
        out = []
        for clause in clauses(question):
            quotations = quoted(clause)
            # what the clause asks about is said before any part referring back to it ("…, and when
            # was that explanation dropped?" asks about the same thing, in words of asking)
            asked = _CLAUSE.split(clause, maxsplit=1)[0]
            terms = set(_TOKENS(" ".join(quotations) or asked)) - MENTION_WORDS - date_words
            whole = set(_TOKENS(asked)) - MENTION_WORDS - date_words
            for run in self._runs(terms, inside, whole) if terms else []:
                out.append(replace(run, verbatim=self._holds(run.first, quotations)) if quotations else run)
        return out

    def _holds(self, said: SaidSentence, quotations: list[str]) -> bool:
        """Whether ``said``'s sentence holds each quotation word for word (case, spacing and
        punctuation aside)."""
        text = _words(self._texts[said.doc_id][said.start:said.end])
        return all(_words(q) in text for q in quotations)

    def _put_in_place(self, said: SaidSentence, i: int, j: int) -> tuple[int, int] | None:
        """The sentence statement ``j`` put where statement ``i`` dropped ``said``'s sentence (of
        the two's edit, fedlab.facts.changes, the one sharing most of its words: "will be
        patient …" became "will act as appropriate …"); None when it put nothing there."""
        change = statement_change(self.statements[i], self.statements[j])
        edit = next((c.edit for c in change.dropped if c.start <= said.start < c.end), 0)
        put = {(c.start, c.end) for c in change.added if edit and c.edit == edit}
        dropped = next((terms for a, _, terms in self.sentences[i] if a == said.start), frozenset())
        return max(((len(terms & dropped) / len(terms | dropped), (a, b)) for a, b, terms in self.sentences[j]
                    if (a, b) in put and terms | dropped), default=(0.0, None))[1]

    def _runs(self, terms: set[str], inside: list[int], clause_terms: set[str]) -> list[StatementRun]:
        """The runs of statements holding what ``terms`` ask about: the statements whose sentence
        holds the best sentence's terms, split where more than RUN_GAP statements in a row do not
        (wording dropped and taken up again later is said twice: "… is causing tremendous human and
        economic hardship" of the pandemic in 2020–21, of the war in Ukraine in 2022–23). Of
        several, those whose sentences best hold the whole clause's ``clause_terms`` — "the pandemic
        was causing …" is the first — all of them when none does better."""
        weight = {t: self.idf(t) for t in terms}

        def score(held: frozenset[str]) -> float:
            return math.fsum(weight[t] for t in held & terms)

        best = max(((score(s[2]), i, s) for i in inside for s in self.sentences[i]), key=lambda x: x[0], default=None)
        if best is None or best[0] < HELD_SHARE * math.fsum(weight.values()) or best[0] <= 0:
            return []
        held = best[2][2] & terms
        said, at = [], []  # at: each saying statement's place among those in range
        for k, i in enumerate(inside):
            holding = [s for s in self.sentences[i] if held <= s[2]]
            if holding:
                a, b, terms_held = max(holding, key=lambda s: score(s[2]))  # the first of the best: max keeps it
                said.append((SaidSentence(self.statements[i].doc_id, a, b, self.statements[i].meeting_date),
                             terms_held))
                at.append(k)
        saying = [inside[k] for k in at]
        segments, start = [], 0
        for k in range(1, len(at) + 1):
            if k == len(at) or at[k] - at[k - 1] - 1 > RUN_GAP:
                segments.append((start, k))
                start = k
        clause_weight = {t: self.idf(t) for t in clause_terms}
        fit = [max(math.fsum(clause_weight[t] for t in held_terms & clause_terms) for _, held_terms in said[a:b])
               for a, b in segments]
        return [self._segment_run([x for x, _ in said[a:b]], saying[a:b], inside, held, score)
                for (a, b), f in zip(segments, fit) if f >= max(fit)]

    def _segment_run(self, said: list[SaidSentence], saying: list[int], inside: list[int], held: frozenset[str],
                     score) -> StatementRun:
        """One run, with the statement after its last one, when the range holds it."""
        after, reworded = None, False
        following = [i for i in inside if i > saying[-1]]
        if following and self.sentences[following[0]]:
            i = following[0]
            closest = max(self.sentences[i], key=lambda s: score(s[2]))
            # its new wording: its closest sentence, when that holds most of what was said, else the
            # sentence it put in the run's last one's place; failing both, its opening, to cite it by
            if score(closest[2]) >= HELD_SHARE * score(held):
                (a, b), reworded = closest[:2], True
            else:
                put = self._put_in_place(said[-1], saying[-1], i)
                (a, b), reworded = (put, True) if put else (self.sentences[i][0][:2], False)
            after = SaidSentence(self.statements[i].doc_id, a, b, self.statements[i].meeting_date)
        return StatementRun(said, saying[-1] - saying[0] + 1, after, saying[0] == inside[0], reworded)

"""The extractive backend: deterministic answers built from the retrieved sentences, no language model.

It answers the agent's DSPy signatures (by their steps, fedlab.lm.steps) with plain functions
wrapped as predictors that take the signature's input fields and return a Prediction with its
output fields — the same contract ``dspy.Predict(signature)`` honours, so the program runs
unchanged, without importing DSPy. A custom DSPy LM engine would instead have to read the fields
back out of the chat adapter's prompt text and write its reply in that format: a second parser of
DSPy's private prompt layout, for no gain, since nothing here is a language model. CI and offline sweeps use this backend.

- assess_query: dates from the deterministic parser (fedlab.retrieval.dates); intent from a
  small keyword model — fomc when a content word is in the FOMC/monetary/economy vocabulary
  below (generic verbs such as "cut" or "lower" are left out of it: "lower back pain");
  otherwise unclear when the question names dates or has no content words (the search and its
  confidence decide), else off_topic.
- reformulate_query: attempt 1 drops the date words and function words (the date range is
  applied as a filter anyway); attempt 2 adds the Committee's own terms for what was asked
  (VOCABULARY_EXPANSIONS: "decision" and "action" are what "the Committee decided to …", a
  pair the stemmer keeps apart).
- synthesize_answer: splits the passages into sentences (a heading — a paragraph of a few words
  with no closing punctuation, before prose or ending its passage in capitalised words — is none;
  a sentence ending in a colon introduces a list and is read with the rest of its passage; a
  sentence said within one chosen before is not said again; a list of names — those present,
  voting or holding an office: names_list — only for a question asking who) and ranks them by
  IDF-weighted overlap with the question's terms plus the expansions above (numbers count double; "United
  States" read as "U.S."; "market participants" one term, apart from the Committee's participants) and, for each
  abbreviation the corpus defines (fedlab.corpus.glossary) whose short or long form the question
  holds, the other form's terms ("IOER" also matches "interest … excess reserve balances"). Date words are
  not terms (the date range is filtered on): the date expressions themselves — months, days,
  years, quarters, and a move a date names ("the October 2019 cut") — not the words between
  the two ends of a range. Rules 2 and 3 also count where the retriever ranked the sentence's
  passage: it loses ``rank_weight`` (conf/lm/extractive.yaml) of the best sentence's score per
  RANK_SPAN places below the first (_ranked) — the shared words often differ by one common word,
  while the ranking weighed the passage's meaning and date. In a question about what the
  Committee's participants thought, a sentence reporting the staff's or the markets' views (their
  sections of the minutes, or naming them as its speaker: fedlab.lm.speakers) keeps
  ``report_weight`` of its score. Passages whose section names a
  statement change (the agent's change passages, fedlab.retrieval.changes) are kept apart for
  rule 0. Then, first rule that applies:
  0. statement changes: a question asking about a change (a word of
     fedlab.retrieval.changes.CHANGE_WORDS: change, shift, evolve, differ, compare, new, revise,
     …) that was handed change passages (less the roster — who voted for the action, who voted
     as an alternate — which changes with the rotation, not the policy, unless the question asks
     about votes: ROSTER) is answered pair of consecutive statements by pair, in
     date order: "New in June 2019 (since May 2019): …" then "Dropped from May 2019 (by June
     2019): …", up to MAX_MEETINGS // pairs sentences a side, best first. Only the changed
     sentences that share a term with the question, when any does (a question naming no topic —
     "what changed in the statement?" — gets them all), each with the rest of its edit
     (fedlab.retrieval.changes: the new wording of a dropped sentence, however few terms it
     shares) — an edit scores as its best sentence; not when their best scores below
     MEETING_SHARE of the best other sentence (the changes are not about what is asked) — of
     the best other sentence of the changed documents' kind, when the question names it
     ("between the June and July statements": a minutes sentence is no rival) — or, when the
     question asks about one meeting ("what changes to the swap lines were backed on March 15,
     2020?": its statement's edits or the decisions its minutes record), below the best other
     sentence itself.
  1a. hold run (fedlab.lm.hold_run): a question asking how long the range was held is answered by
     the meeting that set it, the count and list of the meetings that held it and the move that
     ended the run, each cited, read from the decision sentences in the passages.
  1. rate path (fedlab.lm.rate_path): a question about the federal funds target range over
     several meetings that counts moves, asks for the path, which moves there were or whether
     there was one is
     answered by a composed summary (count in words, totals in basis and percentage points,
     from/to ranges in the statements' notation) and one cited clause per meeting, read from
     the decision sentences in the passages; not when fewer than two decisions in range.
  1b. administered-rate path (fedlab.lm.administered_path): a question spanning several meetings
     that names the interest rate on reserve balances, the ON RRP offering rate or the primary
     credit rate is answered by that rate's value at the first meeting, each change and the last
     meeting, each cited, read from the implementation notes in the passages; not when fewer than
     two meetings state it.
  Statement runs: passages the agent placed in a run of statements that said what a question
  asking when is about (fedlab.retrieval.mentions) open the answer with from when to when, the
  first and last statement's sentence and the statement after (fedlab.lm.said_runs); the rest of
  the answer is chosen as usual from the other passages.
  Votes: a question about votes (fedlab.corpus.timeline.asks_about_votes) that was handed vote
  records (the agent's, section fedlab.corpus.timeline.VOTE_SECTION) opens with one line per
  meeting (fedlab.lm.vote_record: unanimous, or how many for and against, who and why, who was
  absent); the rest of the answer is the composed path (rules 1, 1b) or the sentences of rules
  0, 2 and 3 over the other passages, the "Voting for / against" sentences left out.
  Balance sheet: a question about the balance sheet (fedlab.corpus.timeline.asks_about_balance_sheet)
  that was handed balance-sheet records (section fedlab.corpus.timeline.BALANCE_SHEET_SECTION: each
  action in range — purchases begun, tapered or ended, runoff begun, slowed or ended — with the
  sentences detailing it) opens with one line per meeting in date order (fedlab.lm.balance_sheet_record),
  after the vote lines; the rest of the answer is chosen as for votes, the records' sentences left out.
  Administered rates: a question about one meeting that names the interest rate on reserve
  balances, the ON RRP offering rate or the primary credit rate opens with the value its notes set
  there, cited (fedlab.lm.administered_path.administered_values_answer); the rest is chosen as usual
  (the note itself among the candidates: its other clauses may answer the rest).
  2. one sentence per meeting: when the question spans several meetings (its date range is a
     span, a year or several years, or it names two or more different months or days), the
     sentences are grouped by the meeting date in their passage's head; meetings outside the
     question's range are dropped when any remain inside it, and a meeting is kept when its
     best sentence scores at least MEETING_SHARE of the overall best (at most MAX_MEETINGS,
     the best-scoring ones). In date order, each meeting gives its best sentence — unless that
     repeats the previous meeting's (same words, numbers aside) and a sentence scoring at least
     CLOSE_SHARE of it does not: statements repeat boilerplate, the change is in the sentence
     that differs. A meeting whose best sentence was chosen already joins that sentence (its
     label and citation) instead of repeating it, and adds its best new sentence scoring at
     least MEETING_SHARE of the best, if any. With few meetings, each gives up to
     min(max_sentences, MAX_MEETINGS // meetings) sentences that score at least MEETING_SHARE
     of the best. Each sentence opens with its meeting(s) ("March 2023: …"; the day too when
     two meetings share a month). Fewer than two meetings: rule 3.
  3. otherwise the best 1-``max_sentences`` sentences scoring at least half the best, each with
     the sentence after it in its passage when that one continues it (CONTINUES: a word or an
     opening phrase that refers back, "This preference reflected …", "In this scenario, …", "He
     also noted …"; an opening discourse connective, "However, …"; "also" among its first words,
     "Governor Miran also expressed …"; or "this / these / such" before a noun among them,
     "Participants commented that this judgment …"; or naming its subject again, "The path featured
     …" after "The illustrative tapering path was …": _refers_back — the minutes give a view's
     reasons and details in the sentences after it), and a sentence that refers back so itself
     ("These participants noted …", "In addition, …") after the sentence before it, when that one
     shares a word with the question; for a question asking when (an answer type of
     date, fedlab.lm.answer_types), a sentence holding no date opens with its meeting ("July
     2023: …"). A question that asks several things ("what did
     the Committee decide about rates, and how did the statement describe the labor market?": parts
     split before ", and what / how / was …", asked_parts) keeps each part's best sentence, scored
     by that part's own terms, among them — from the kind of document the part names, when it
     names one the passages' titles hold ("the statement", "the minutes"), and a tie going to the
     sentence the whole question scores higher; the best sentences overall fill the other places.
     The expected answer type (fedlab.lm.answer_types: a rate, an amount, a count, a person asked
     for): a sentence holding none does not answer the question, so a part asking for one takes its
     best sentence holding one, and when no sentence chosen holds one the best that does joins them
     — among the sentences scoring at least MEETING_SHARE of the best, in either case.
  Every sentence is followed by its [Source N] (a composed or merged one by all its sources);
  the answer is empty when no sentence shares a content term with the question. A question with
  no content term but its date ("what did the Fed do in March 2020?") asks what the Committee
  did: its terms are those of "decided" (VOCABULARY_EXPANSIONS' "action").
"""
from __future__ import annotations

import contextlib
import math
import re
from datetime import date
from typing import Callable, Iterator

from fedlab.index.tokens import Tokenizer, stem
from fedlab.chunking.splitting import sentence_spans
from fedlab.corpus.timeline import asks_about_votes
from fedlab.lm.administered_path import administered_path_answer, administered_values_answer
from fedlab.lm.answer_types import asked_types, held_types
from fedlab.lm.balance_sheet_record import balance_sheet_answer, is_balance_sheet_record, recorded_sentences
from fedlab.lm.hold_run import hold_run_answer
from fedlab.lm.rate_path import HEAD_DATE, in_label, meeting_labels, rate_path_answer
from fedlab.lm.said_runs import said_answer, split_said
from fedlab.lm.vote_record import ASKS_WHO_RE, ROSTER, VOTE_SENTENCE, is_vote_record, vote_record_answer
from fedlab.lm.steps import ASSESS_QUERY, REFORMULATE_QUERY, SYNTHESIZE_ANSWER, Prediction, step_named
from fedlab.retrieval.changes import CHANGE_WORDS, changed_section
from fedlab.retrieval.dates import date_expressions
from fedlab.lm.speakers import asks_committee_views, reports_others
from fedlab.retrieval.types import MULTI_MEETING_SCOPES

TOKENS = Tokenizer()
QUESTION_WORDS = frozenset(stem(w) for w in """
did does do say said tell told describe described explain happen happened mention mentioned
fed fomc federal reserve committee meeting meetings minutes statement statements
""".split())
FOMC_VOCABULARY = frozenset(stem(w) for w in """
fed fomc federal reserve committee monetary policy policies rate rates interest inflation inflationary
pce cpi deflation disinflation employment unemployment jobs labor labour payroll payrolls wages
economy economic growth gdp recession spending consumer consumption investment
housing mortgage mortgages financial markets treasury treasuries securities bonds yields
yield balance sheet assets asset purchases taper tapering runoff reinvestment
liquidity credit banks banking lending loans dollar currency tightening easing
hike hikes hiked dissent dissented dissenter projections outlook forecast risks
uncertainty stance accommodation accommodative restrictive repo
pandemic covid commodity oil energy tariffs productivity powell statement minutes meeting
participants directive framework ioer iorb mbs vote voted dissenting purchase
""".split())
VOCABULARY_EXPANSIONS = {
    stem("rates"): "target range for the federal funds rate",
    stem("rate"): "target range for the federal funds rate",
    stem("hike"): "raise the target range",
    stem("cut"): "lower the target range",
    stem("decision"): "decided",
    stem("action"): "decided",
    stem("inflation"): "inflation remains elevated 2 percent objective",
    stem("prices"): "inflation prices",
    stem("jobs"): "employment labor market unemployment rate",
    stem("labor"): "labor market conditions employment",
    stem("balance"): "securities holdings balance sheet",
    stem("taper"): "reduce the pace of net asset purchases",
    stem("qe"): "asset purchases Treasury securities agency mortgage-backed securities",
    stem("dissent"): "voting against the action",
    stem("dissenter"): "voting against the action",
    stem("dissented"): "voting against the action",
    stem("economy"): "economic activity growth",
    stem("growth"): "economic activity real GDP",
}
_NUMBER = re.compile(r"^\d")
# phrases read as one form: "United States" as "U.S." (the minutes write both); "market participants"
# as one term, apart from the Committee's participants (terms_of)
_READ_AS = ((re.compile(r"\bUnited States\b"), "U.S."),
            (re.compile(r"\bmarket\s+participants?\b", re.I), "marketparticipants"))
_HOW_MUCH = re.compile(r"\bhow (?:much|many)\b", re.I)  # asks for an amount or a count: "much" is no term
DATE = frozenset({"date"})
PASSAGE_HEAD = re.compile(r"^\[Source (\d+)\][^\n]*\n", re.S)
MAX_SENTENCE_CHARS = 700
_CLOSES = re.compile(r"[.?!:;\"”’')\]]$")  # how a sentence (or a list's introduction) ends
HEADING_WORDS = 15  # a paragraph this short with no closing punctuation may be a heading (_heading)
MEETING_SHARE = 0.5  # a meeting is kept when its best sentence scores at least this share of the best
CLOSE_SHARE = 0.8  # a different sentence this close to a meeting's best replaces a repeated one
# a list of names — those present ("PRESENT: Jerome H. Powell, Chair John C. Williams, Vice Chair …"),
# voting, or holding an office — says nothing of what was decided or discussed: only a question
# asking who reads one. At least this many words, under this share of them in lower case.
NAMES_LIST_WORDS, NAMES_LIST_LOWER = 8, 0.15
_LIST_WORD = re.compile(r"[A-Za-z][A-Za-z'’.-]*")
# a sentence opening with a word that refers back continues the one before it ("This preference reflected …")
# — an opening phrase that refers back ("In this scenario, …", "Under that approach, …"), an opening
# discourse connective ("However, …", "In particular, …"), "also" among the first words ("Governor
# Miran also expressed …"), or "this / these / such" before a noun among them ("Participants
# commented that this judgment …"; not a time: "at this meeting", "this year")
CONTINUES = re.compile(
    r"(?:This|These|That|Those|Such|It|Its|They|Their|He|His|She|Her)\b"
    r"|(?:In|Under|For|With|Given|By|At|As|From|On|Of|To)\s+(?:this|that|these|those|such)\b"
    r"|(?:However|Also|Moreover|Furthermore|Nonetheless|Nevertheless|Still|Accordingly|Consequently|Therefore"
    r"|Thus|Specifically|Instead|In particular|In addition|As a result|For example|For instance|At the same time"
    r"|By contrast|Even so)\b"
    r"|(?:[\w'’-]+\s+){1,4}also\b"
    r"|(?:[\w'’,-]+\s+){1,7}(?:this|these|such)\s+(?!(?:meeting|meetings|year|years|month|months|week|weeks|quarter"
    r"|time|times|spring|summer|fall|autumn|winter|morning|afternoon|evening)\b)[a-z]")
# a sentence naming its previous sentence's subject again continues it too ("The illustrative tapering path was
# designed …" then "The path featured monthly reductions …"): a subject "The …" up to its first verb or
# preposition, its last word the head (_subject_head; a capitalised one is a name, "The Committee": no)
_SUBJECT = re.compile(r"The((?:\s+[a-z][\w-]*){1,4}?)\s+(?:is|was|were|are|has|had|have|would|could|will|can|may"
                      r"|might|should|also|did|does|of|for|in|on|at|to|with|from|by|that|which|[a-z]+ed)\b")
MAX_MEETINGS = 8  # meetings (and sentences) in a per-meeting answer
RANK_SPAN = 10  # places of a passage in the ranking over which a sentence loses rank_weight of the best score (_ranked)
REPEAT_OVERLAP = 0.85  # word overlap (Jaccard, numbers aside) at which two sentences repeat each other
# a further part of a question: ", and" / "and" before a question word or an auxiliary that opens one
_PART = re.compile(r",?\s+and\s+(?=(?:what|how|when|where|why|which|who|whom|whose|was|were|did|does|do|is|are)\b)",
                   re.I)
_MONTH_NAME = re.compile(r"\b(?:January|February|March|April|May|June|July|August|September|October|November"
                         r"|December)\b")
_ISO_DAY = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")


def terms_of(text: str) -> list[str]:
    """``text``'s terms, "United States" read as "U.S." (the minutes write both), and "market
    participants" as one term: the minutes' "participants" are the Committee's, and a question about
    their views is not one about the market's (the Desk's surveys, in the same minutes)."""
    for phrase, form in _READ_AS:
        text = phrase.sub(form, text)
    return TOKENS(text)


def content_terms(text: str) -> list[str]:
    """The terms of ``text`` less the words of asking (QUESTION_WORDS, "how much", "how many")."""
    return [t for t in terms_of(_HOW_MUCH.sub(" ", text)) if t not in QUESTION_WORDS]


def assess_query(question: str, today: str, event: str = "") -> dict:
    """Intent from the FOMC vocabulary; the date range from the resolved event when there is one
    (fedlab.retrieval.events), else from the date parser."""
    from fedlab.retrieval.dates import parse_date_hint
    from fedlab.retrieval.events import described_hint

    parsed = parse_date_hint(question, today=date.fromisoformat(today) if today else None)
    hint = described_hint(event) or parsed
    terms = set(TOKENS(question))
    if parsed is not None:
        date_words = set(TOKENS(parsed.text))
        terms -= date_words
    if terms & FOMC_VOCABULARY:
        intent = "fomc"
    elif hint is not None or not terms:
        intent = "unclear"
    else:
        intent = "off_topic"
    return {"intent": intent, "date_from": (hint.date_from or "") if hint else "",
            "date_to": (hint.date_to or "") if hint else "", "scope": hint.scope if hint else "none"}


def reformulate_query(question: str, previous_query: str, attempt: int) -> dict:
    from fedlab.retrieval.dates import parse_date_hint

    dated = set(TOKENS(date_expressions(parse_date_hint(question))))  # the range's dates, not the words between
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z'-]*|\d+(?:[.,/-]\d+)*", question)
             if stem(w.lower()) not in QUESTION_WORDS and (toks := TOKENS(w)) and not set(toks) <= dated]
    query = " ".join(words)
    if attempt >= 2:
        extra = [VOCABULARY_EXPANSIONS[t] for t in dict.fromkeys(TOKENS(query)) if t in VOCABULARY_EXPANSIONS]
        query = " ".join([query, *extra])
    query = query.strip() or previous_query
    return {"query": query}


def _sentences(passage: str) -> tuple[int | None, list[str]]:
    head = PASSAGE_HEAD.match(passage)
    body = passage[head.end():] if head else passage
    n = int(head.group(1)) if head else None
    blocks = re.split(r"\n\s*\n", body)
    blocks = [b for b, following in zip(blocks, [*blocks[1:], None]) if not _heading(b, following)]
    parts = [" ".join(block[a:b].split()) for block in blocks for a, b in sentence_spans(block)]
    # a chunk may start mid-sentence: a lower-case opening is a fragment, not a sentence
    parts = [s for s in parts if 20 <= len(s) <= MAX_SENTENCE_CHARS and not s[0].islower()]
    # a sentence that introduces a list ("… approved the following steps:") says nothing without
    # it: it is read with the rest of its passage
    return n, [" ".join(parts[i:]) if s.endswith(":") else s for i, s in enumerate(parts)]


def _heading(block: str, following: str | None) -> bool:
    """A paragraph of a few words with no closing punctuation is a heading ("Staff Economic
    Outlook"), not a sentence, when a paragraph of prose follows it, or, ending the passage, when
    its words are capitalised and hold no figure; a table's rows are not (no prose follows them,
    and they hold figures)."""
    words = block.split()
    if not words or _CLOSES.search(block.strip()) or len(words) > HEADING_WORDS:
        return False
    if following is not None:
        return len(following.split()) > HEADING_WORDS
    return not any(c.isdigit() for c in block) and all(w[0].isupper() for w in words if len(w) > 3)


def undated_terms(question: str) -> set[str]:
    """The question's content terms without its date words (the date range is filtered on)."""
    from fedlab.retrieval.dates import parse_date_hint

    return _undated(question, parse_date_hint(question))


def _undated(question: str, hint) -> set[str]:
    if hint is None:
        return set(content_terms(question))
    return set(content_terms(question)) - set(TOKENS(date_expressions(hint)))


def _head_of(passage: str) -> tuple[str | None, str | None]:
    """(meeting date (ISO), section) from a passage's head ("[Source N] title, YYYY-MM-DD[, section]");
    None for what the head does not name."""
    head = PASSAGE_HEAD.match(passage)
    found = HEAD_DATE.search(head.group(0)) if head else None
    if found is None:
        return None, None
    rest = head.group(0)[found.end():].strip()
    return found.group(1), (rest[1:].strip() if rest.startswith(",") else None)


def asked_parts(question: str) -> list[str]:
    """The parts of a question that asks several things, split before each further ", and
    what / how / was …" ("What facility did the Fed announce, and when was it to open?"); one part
    when it asks one thing."""
    return [part.strip() for part in _PART.split(question.strip()) if part.strip()]


def spans_meetings(question: str, hint=None) -> bool:
    """The question asks about several meetings: its date range is a span, a year or several
    years, or it names two or more different months or days ("between the May and June 2019
    statements")."""
    if hint is not None and hint.scope in MULTI_MEETING_SCOPES:
        return True
    named = {m.group(0).lower()[:3] for m in _MONTH_NAME.finditer(question)} | set(_ISO_DAY.findall(question))
    return len(named) >= 2


def _plain(sentence: str) -> str:
    return " ".join(sentence.lower().split())


# per abbreviation: the short form as written (a pattern), its terms, the long form's terms
Abbreviations = tuple[tuple[re.Pattern, frozenset[str], frozenset[str]], ...]


def abbreviation_terms(glossary: dict[str, str]) -> Abbreviations:
    """Each abbreviation of a glossary (fedlab.corpus.glossary.defined_terms) ready to match; one
    whose either form has no terms is left out."""
    out = []
    for short, long in glossary.items():
        short_terms, long_terms = frozenset(TOKENS(short)), frozenset(TOKENS(long))
        if short_terms and long_terms:
            out.append((re.compile(rf"(?<![\w&-]){re.escape(short)}(?![\w&-])"), short_terms, long_terms))
    return tuple(out)


def spelled_out(question: str, terms: set[str], abbreviations: Abbreviations) -> set[str]:
    """The other form's terms of each abbreviation whose short form (written as the corpus writes
    it: "TIPS" is not "tips") or long form the question's ``terms`` hold (not a question word:
    "FOMC" is not spelled out)."""
    return {t for short, short_terms, long_terms in abbreviations
            for t in (long_terms if short_terms <= terms and short.search(question)
                      else short_terms if long_terms <= terms else ())}


def synthesize_answer(question: str, passages: list[str], max_sentences: int = 3,
                      abbreviations: Abbreviations = (), rank_weight: float = 0.0,
                      report_weight: float = 1.0) -> dict:
    """{"answer": …, "composed": …, "skill": …, "skills": […]}; ``skill`` names the rule that answered
    (the first part of the answer composed from records, else ``statement_changes`` or ``reader``:
    sentences picked by their words), ``skills`` every part in the answer. ``composed``: the answer holds a part composed from records —
    when the statements said something (said runs), the vote records, the balance-sheet records, a
    rate path or what the statements added and dropped (rule 0) — rather than only sentences picked
    by their words. ``abbreviations``: the corpus's (abbreviation_terms), matched both ways."""
    from fedlab.retrieval.dates import parse_date_hint

    hint = parse_date_hint(question)
    said, passages = split_said(passages, _read)
    said = said_answer(said)  # when the statements said what is asked: first, so it answers the "when"
    votes = vote_record_answer(question, passages) if asks_about_votes(question) else ""
    if votes:  # the records say who voted how: the sentences are chosen for the rest of the question
        passages = [p for p in passages if not is_vote_record(p)]
    sheet_sentences = recorded_sentences(passages)
    sheet = balance_sheet_answer(sheet_sentences)
    recorded = {sentence.lower() for _, _, sentence in sheet_sentences}
    if sheet:  # the actions are said: the sentences are chosen for the rest of the question
        passages = [p for p in passages if not is_balance_sheet_record(p)]
    composed, path = "", None  # the first composer that answers, in this order
    for path, compose in (("hold_run", lambda: hold_run_answer(question, passages, hint)),
                          ("rate_path", lambda: rate_path_answer(question, passages, hint=hint)),
                          ("administered_path", lambda: administered_path_answer(question, passages, hint))):
        composed = compose()
        if composed:
            break
    values = None if composed else administered_values_answer(question, passages, hint)
    if composed or votes or sheet or values:
        def skip(sentence: str) -> bool:
            return bool(votes and VOTE_SENTENCE.match(sentence)) or " ".join(sentence.split()).lower() in recorded

        rest = composed or _extracted(question, passages, hint, max_sentences, abbreviations, skip=skip,
                                      rank_weight=rank_weight, report_weight=report_weight)[0]
        parts = [name for name, part in ((path, composed), ("votes", votes), ("balance_sheet", sheet),
                                         ("administered_values", values), ("said_run", said)) if part]
        return {"answer": " ".join(a for a in (votes, said, sheet, values, rest) if a), "composed": True,
                "skill": parts[0], "skills": parts + ([] if composed else ["reader"])}
    rest, changes = _extracted(question, passages, hint, max_sentences, abbreviations, rank_weight=rank_weight,
                               report_weight=report_weight)
    parts = [name for name, part in (("said_run", said), ("statement_changes", changes)) if part] + ["reader"]
    return {"answer": " ".join(a for a in (said, rest) if a), "composed": bool(said or changes),
            "skill": parts[0], "skills": parts}


def names_list(sentence: str) -> bool:
    """Whether ``sentence`` is a list of names (NAMES_LIST_WORDS)."""
    words = _LIST_WORD.findall(sentence)
    return len(words) >= NAMES_LIST_WORDS and sum(w[0].islower() for w in words) < NAMES_LIST_LOWER * len(words)


def _read(passage: str) -> tuple[int | None, str | None, str | None, str]:
    """(source n, meeting date, section, text) of a passage."""
    head = PASSAGE_HEAD.match(passage)
    meeting, section = _head_of(passage)
    return (int(head.group(1)) if head else None), meeting, section, passage[head.end():] if head else passage


def _refers_back(previous: str, sentence: str) -> bool:
    """``sentence`` continues ``previous``: it opens with a word that refers back (CONTINUES), or
    names its subject again ("The path featured …" after "The illustrative tapering path was …"; not
    "The staff projection was …" after "The staff judged …")."""
    if CONTINUES.match(sentence):
        return True
    head = _subject_head(sentence)
    return head is not None and head == _subject_head(previous)


def _subject_head(sentence: str) -> str | None:
    """The last word of a subject "The …" before its verb or a preposition (_SUBJECT); None for another."""
    found = _SUBJECT.match(sentence)
    return found.group(1).split()[-1] if found else None


def _ranked(score: float, top: float, place: int, rank_weight: float) -> float:
    """A sentence's score with its passage's place in the ranking (0: the first) counted: it loses
    ``rank_weight`` of the best sentence's score ``top`` per RANK_SPAN places. The words two
    sentences share with the question often differ by one common word and say nothing of what the
    retriever weighed (the passage's meaning, its date); the ranking does. A sentence sharing no
    word keeps 0."""
    return max(score - rank_weight * top * place / RANK_SPAN, 0.0) if score > 0 else 0.0


def _extracted(question: str, passages: list[str], hint, max_sentences: int, abbreviations: Abbreviations = (),
               skip: Callable[[str], bool] | None = None, rank_weight: float = 0.0,
               report_weight: float = 1.0) -> tuple[str, bool]:
    """Rules 0, 2 and 3 (module docstring): sentences of the passages, and whether they are rule 0's
    statement changes; ``skip``: sentences left out; ``report_weight``: the share of its score a
    sentence reporting the staff's or the markets' views keeps in a question about the Committee's."""
    q_terms = _undated(question, hint)
    if not q_terms and hint is not None:  # "what did the Fed do in March 2020?": what the Committee decided
        q_terms = set(TOKENS(VOCABULARY_EXPANSIONS[stem("action")]))
    candidates, changed = [], []  # (source n, position, sentence, terms, meeting date); changed: + (kind, other date, edit)
    titles = []  # each passage's title terms ("FOMC statement, March 22, 2023" -> fomc, statement)
    drop_rosters = not asks_about_votes(question)
    others = report_weight if asks_committee_views(question) else 1.0  # what the others' sentences keep
    reported = set()  # positions of the sentences reporting the staff's or the markets' views
    for i, passage in enumerate(passages):
        n, sentences = _sentences(passage)
        titles.append(_title_terms(passage))
        meeting, section = _head_of(passage)
        change = changed_section(section)
        for j, sentence in enumerate(sentences):
            if skip is not None and skip(sentence):
                continue
            c = (n if n is not None else i + 1, (i, j), sentence, set(terms_of(sentence)), meeting)
            if others != 1.0 and reports_others(section, sentence):
                reported.add((i, j))
            if change is None:
                candidates.append(c)
            elif not (drop_rosters and ROSTER.match(sentence)):
                changed.append((*c, change))
    if not q_terms or not candidates:
        return "", False
    asks_change = bool(q_terms & CHANGE_WORDS)
    q_terms = _expanded(question, q_terms, abbreviations)

    def scorer(among: list, asked: set[str]) -> Callable[[set[str]], float]:
        """IDF-weighted overlap with ``asked``, the IDF over the sentences ``among``."""
        df = {t: sum(t in c[3] for c in among) for t in asked}
        idf = {t: math.log(1 + len(among) / df[t]) for t in asked if df[t]}
        # fsum: exactly rounded, so the score does not depend on the set's (hash-seeded) order
        return lambda terms: math.fsum(idf[t] * (2.0 if _NUMBER.match(t) else 1.0) for t in asked & terms if t in idf)

    if asks_change and changed:  # what was asked about, not the asking for a change ("little changed")
        score = scorer(candidates + changed, q_terms - CHANGE_WORDS)
        # a question naming the changed passages' kind of document ("between the June and July
        # statements") compares those documents: their other sentences are what the changes compete with
        kind = (frozenset().union(*(titles[c[1][0]] for c in changed)) - frozenset.intersection(*titles)) \
            & set(TOKENS(question))
        rivals = [c for c in candidates if titles[c[1][0]] & kind] if kind else candidates
        # one meeting asked about: its statement's edits are one reading of "what changed" among others
        # (the decisions its minutes record), taken only when they match the question best
        share = MEETING_SHARE if spans_meetings(question, hint) else 1.0
        answer = _changes([(score(c[3]), c) for c in changed], max((score(c[3]) for c in rivals), default=0.0), share)
        if answer:
            return answer, True
    score = scorer(candidates, q_terms)
    # a list of names counts in the IDF, like every sentence, but is not said
    listed = {c[1] for c in candidates if not ASKS_WHO_RE.search(question) and names_list(c[2])}
    words = {c[1]: 0.0 if c[1] in listed else score(c[3]) * (others if c[1] in reported else 1.0)
             for c in candidates}
    top = max(words.values())
    ranked = sorted(((_ranked(words[c[1]], top, c[0] - 1, rank_weight), c) for c in candidates),
                    key=lambda sc: (-sc[0], sc[1][1]))
    best = ranked[0][0] if ranked else 0.0
    if best <= 0:
        return "", False
    if spans_meetings(question, hint):
        per_meeting = _per_meeting(ranked, best, hint, max_sentences)
        if per_meeting is not None:
            return per_meeting, False
    kept = _parts_best(question, hint, candidates, titles, abbreviations, scorer, score, listed)
    chosen, seen = [], set()
    at = {c[1]: c for c in candidates}
    dated = _dated_labels(question, ranked)

    def said(text: str) -> bool:  # said, or within a list said with its introduction
        return any(text.lower() in earlier for earlier in seen)

    for s, (n, (i, j), sentence, _, meeting) in ranked:
        if (i, j) not in kept:
            # the places left once each part's best sentence not yet said has one
            left = max_sentences - len(chosen) - sum(not said(at[k][2]) for k in kept)
            if s < 0.5 * best or left <= 0:
                continue
        if said(sentence):
            continue
        seen.add(sentence.lower())
        # a sentence referring back ("These participants …", "In addition, …") is said after the one it
        # refers to, when that one shares a word with the question (not the boilerplate before "In
        # support of these goals, …")
        before = ""
        lead = at.get((i, j - 1))
        if lead is not None and words[lead[1]] > 0 and _refers_back(lead[2], sentence) and not said(lead[2]):
            seen.add(lead[2].lower())
            before = _cited(lead[2], f"Source {n}") + " "
        chosen.append(dated.get(meeting, "") * (not held_types(before + sentence, DATE)) + before
                      + _cited(sentence, f"Source {n}"))
        follow = at.get((i, j + 1))
        if follow is not None and _refers_back(sentence, follow[2]) and not said(follow[2]):
            seen.add(follow[2].lower())
            chosen[-1] += " " + _cited(follow[2], f"Source {n}")
    typed = _typed(question, ranked)  # a list of names scores 0: never among them
    if typed and not any(c[2].lower() in seen for _, c in typed):
        _, (n, _, sentence, _, meeting) = typed[0]  # the best sentence holding what was asked for
        seen.add(sentence.lower())
        chosen.append(dated.get(meeting, "") * (not held_types(sentence, DATE)) + _cited(sentence, f"Source {n}"))
    return " ".join(chosen), False


def _expanded(text: str, terms: set[str], abbreviations: Abbreviations) -> set[str]:
    """``terms`` (of ``text``) with the Committee's terms for them and the abbreviations' other forms."""
    return terms | {t for term in list(terms) if term in VOCABULARY_EXPANSIONS
                    for t in TOKENS(VOCABULARY_EXPANSIONS[term])} | spelled_out(text, terms, abbreviations)


def _title_terms(passage: str) -> frozenset[str]:
    head = PASSAGE_HEAD.match(passage)
    title = head.group(0).split("]", 1)[1].split(",", 1)[0] if head else ""
    return frozenset(TOKENS(title))


def _parts_best(question: str, hint, candidates: list, titles: list[frozenset[str]], abbreviations: Abbreviations,
                scorer, overall: Callable[[set[str]], float], listed: set = frozenset()) -> set[tuple[int, int]]:
    """Rule 3's parts (module docstring): the position of each part's best sentence, scored by the
    part's own terms (IDF over the same sentences); a sentence from the kind of document the part
    names (a term of its passage's title, ``titles``: "how did the statement describe …") first,
    and a tie going to the sentence the whole question scores higher ("when was it to open?"
    holds one term of its own); none at a position in ``listed``. Empty when the question asks one thing."""
    parts = asked_parts(question)
    if len(parts) < 2:
        return set()
    kept = set()
    for part in parts:
        terms = _undated(part, hint)
        if not terms:
            continue
        score = scorer(candidates, _expanded(part, terms, abbreviations))
        named = set(TOKENS(part))
        scored = [(score(c[3]), c) for c in candidates if c[1] not in listed]
        if not scored:
            continue
        scored = _typed(part, scored) or scored
        s, best = max(scored, key=lambda sc: (sc[0] > 0, bool(named & titles[sc[1][1][0]]), sc[0], overall(sc[1][3]),
                                              [-x for x in sc[1][1]]))
        if s > 0:
            kept.add(best[1])
    return kept


def _typed(question: str, scored: list) -> list:
    """Of ``scored`` ((score, candidate) pairs), the sentences holding an answer of a type the
    question asks for (a rate, an amount, a count, a person: fedlab.lm.answer_types; a date is
    said by the meeting label) that score at least MEETING_SHARE of the best; [] when it asks for
    none, or none does. A sentence with no answer of the type asked for does not answer it."""
    kinds = asked_types(question) - DATE
    best = max((sc for sc, _ in scored), default=0.0)
    if not kinds or best <= 0:
        return []
    return [(sc, c) for sc, c in scored if sc >= MEETING_SHARE * best and held_types(c[2], kinds)]


def _changes(scored: list, best_other: float, share: float) -> str:
    """Rule 0 (module docstring): what each statement in the question's range added and dropped,
    statement by statement in date order; "" when the changed sentences are not about what the
    question asks (their best scores below ``share`` of the best other sentence)."""
    best = max(s for s, _ in scored)
    if best < share * best_other:
        return ""

    def pair_of(c) -> tuple[str, str]:
        kind, other, _ = c[5]
        return (other, c[4]) if kind == "new" else (c[4], other)

    def edit_of(c) -> tuple:  # a sentence that names no edit is one of its own
        return pair_of(c), c[5][2] or c[1]

    # an edit scores as its best sentence: the new wording of what was asked about is kept with it
    edit_best: dict[tuple, float] = {}
    for s, c in scored:
        edit = edit_of(c)
        edit_best[edit] = max(edit_best.get(edit, s), s)
    pairs: dict[tuple[str, str], dict[str, list]] = {}
    for s, c in scored:
        in_edit = edit_best[edit_of(c)]
        if c[4] is None or (best > 0 and in_edit <= 0):
            continue
        pairs.setdefault(pair_of(c), {"new": [], "dropped": []})[c[5][0]].append((in_edit, s, c))
    if not pairs:
        return ""
    per_side = max(1, MAX_MEETINGS // len(pairs))
    labels = meeting_labels(sorted({d for pair in pairs for d in pair}))
    out = []
    for earlier, later in sorted(pairs, key=lambda p: (p[1], p[0])):
        for kind, lead in (("new", f"New {in_label(labels[later])} (since {labels[earlier]})"),
                           ("dropped", f"Dropped from {labels[earlier]} (by {labels[later]})")):
            chosen = [c for *_, c in sorted(pairs[(earlier, later)][kind],
                                            key=lambda esc: (-esc[0], -esc[1], esc[2][1]))[:per_side]]
            if chosen:
                out.append(f"{lead}: " + " ".join(_cited(c[2], f"Source {c[0]}") for c in chosen))
    return " ".join(out)


def _repeats(a: set[str], b: set[str]) -> bool:
    """Two sentences say the same thing: their words (numbers aside) nearly coincide."""
    a = {t for t in a if not _NUMBER.match(t)}
    b = {t for t in b if not _NUMBER.match(t)}
    return bool(a | b) and len(a & b) / len(a | b) >= REPEAT_OVERLAP


def _per_meeting(ranked: list, best: float, hint, max_sentences: int) -> str | None:
    """The best sentences of each meeting, in date order, each labelled with its meeting (module
    docstring); None when fewer than two meetings have a sentence that scores at least
    MEETING_SHARE of the best."""
    by_meeting: dict[str, list] = {}
    for s, c in ranked:  # best first within each meeting
        if c[4] is not None and s > 0:
            by_meeting.setdefault(c[4], []).append((s, c))
    if hint is not None and hint.date_to:
        lo = hint.date_from or ""
        hi = hint.widened_end(1)
        inside = {m: v for m, v in by_meeting.items() if lo <= m <= hi}
        if inside:
            by_meeting = inside
    if not by_meeting:
        return None
    best = max(v[0][0] for v in by_meeting.values())  # the best in the question's range
    kept = {m: v for m, v in by_meeting.items() if v[0][0] >= MEETING_SHARE * best}
    if len(kept) < 2:
        return None
    top = sorted(sorted(kept, key=lambda m: (-kept[m][0][0], m))[:MAX_MEETINGS])
    per_meeting = max(1, min(max_sentences, MAX_MEETINGS // len(top)))
    entries: list[dict] = []  # {"sentence", "terms", "meetings", "sources"} in order of first meeting
    by_text: dict[str, dict] = {}
    previous: list[set[str]] = []  # the terms of the previous meeting's sentences
    floor = MEETING_SHARE * best
    for meeting in top:
        options = kept[meeting]
        top_score, top_sentence = options[0]
        picks, joined = [], None
        if _plain(top_sentence[2]) in by_text:  # its best sentence was chosen already: the meeting says it too
            joined = by_text[_plain(top_sentence[2])]
            joined["meetings"].append(meeting)
            joined["sources"].append(top_sentence[0])
            said = previous + [joined["terms"]]
            new = [c for s, c in options if s >= floor and _plain(c[2]) not in by_text
                   and not any(_repeats(c[3], p) for p in said)]
            picks += new[:1]  # what it says besides
        else:  # the best sentence, unless it repeats the previous meeting's and a close one does not
            close = [c for s, c in options if s >= CLOSE_SHARE * top_score and _plain(c[2]) not in by_text]
            fresh = [c for c in close if not any(_repeats(c[3], p) for p in previous)]
            picks.append((fresh or close)[0])
        limit = max(1, per_meeting - (joined is not None))
        for s, c in options:  # more sentences of this meeting when few meetings share the answer
            if len(picks) >= limit or s < floor:
                break
            if all(c is not p for p in picks) and _plain(c[2]) not in by_text \
                    and not any(_repeats(c[3], p[3]) for p in picks):
                picks.append(c)
        for c in picks:
            entry = {"sentence": c[2], "terms": c[3], "meetings": [meeting], "sources": [c[0]]}
            by_text[_plain(c[2])] = entry
            entries.append(entry)
        previous = [c[3] for c in picks] + ([joined["terms"]] if joined else [])
    if len({m for e in entries for m in e["meetings"]}) < 2:
        return None
    labels = meeting_labels(top)
    out = []
    for e in entries:
        cite = ", ".join(f"Source {n}" for n in dict.fromkeys(e["sources"]))
        out.append(f"{_join_labels([labels[m] for m in e['meetings']])}: {_cited(e['sentence'], cite)}")
    return " ".join(out)


def _dated_labels(question: str, ranked: list) -> dict[str, str]:
    """For a question asking when (fedlab.lm.answer_types): "July 2023: " for each meeting of the
    sentences, which open with it when they state no date of their own — the sentence says what
    happened, its meeting says when. Otherwise none."""
    if not DATE & asked_types(question):
        return {}
    meetings = sorted({c[4] for _, c in ranked if c[4]})
    return {m: f"{label}: " for m, label in meeting_labels(meetings).items()}


def _cited(text: str, cite: str) -> str:
    """Each sentence of ``text`` (one, or a list with its introduction) followed by ``[cite]``."""
    spans = sentence_spans(text) or [(0, len(text))]
    return " ".join(f"{text[a:b].strip()} [{cite}]" for a, b in spans)


def _join_labels(labels: list[str]) -> str:
    labels = list(dict.fromkeys(labels))
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]


class SignaturePredictor:
    """A predictor for one step: the step's inputs in, a Prediction with its outputs out.
    ``signature``: a fedlab.lm.steps.Step, or the DSPy signature class of one."""

    def __init__(self, signature, fn: Callable[..., dict]):
        self.step = step_named(signature)
        self.fn = fn

    def __call__(self, **inputs):
        expected = set(self.step.inputs)
        if set(inputs) != expected:
            raise TypeError(f"{self.step.name} takes {sorted(expected)}, got {sorted(inputs)}")
        outputs = self.fn(**inputs)
        if not set(self.step.outputs) <= set(outputs) <= {*self.step.outputs, *self.step.extras}:
            raise TypeError(f"{self.step.name} must return {sorted(self.step.outputs)}"
                            + (f" (and may return {sorted(self.step.extras)})" if self.step.extras else ""))
        return Prediction(**outputs)


class FunctionBackend:
    """A backend whose predictors are plain functions: query assessment and reformulation are the
    deterministic ones above; ``synthesize(question, passages) -> {"answer": …}`` (and, if it
    knows, ``"composed": …``: SYNTHESIZE_ANSWER's extra) is the subclass's. Token usage is counted
    in ``prompt_tokens`` / ``completion_tokens``. No DSPy."""

    name = "functions"
    prompt_tokens = 0
    completion_tokens = 0

    def synthesize(self, question: str, passages: list[str]) -> dict:
        raise TypeError(f"{type(self).__name__} must define synthesize(question, passages)")

    def predictor(self, signature):
        step = step_named(signature)
        table = {ASSESS_QUERY: assess_query, REFORMULATE_QUERY: reformulate_query, SYNTHESIZE_ANSWER: self.synthesize}
        if step not in table:
            raise TypeError(f"the {self.name} backend does not answer {step.name}")
        return SignaturePredictor(step, table[step])

    @contextlib.contextmanager
    def context(self) -> Iterator[None]:
        yield

    def usage_mark(self) -> tuple[int, int]:
        return self.prompt_tokens, self.completion_tokens

    def usage_since(self, mark: tuple[int, int]) -> dict[str, int]:
        return {"prompt_tokens": self.prompt_tokens - mark[0], "completion_tokens": self.completion_tokens - mark[1]}


class ExtractiveBackend(FunctionBackend):
    """Offline and deterministic; not a language model (``is_language_model`` is False)."""

    name = "extractive"
    is_language_model = False

    def __init__(self, max_sentences: int = 3, rank_weight: float = 0.0, report_weight: float = 1.0):
        self.max_sentences = int(max_sentences)
        self.rank_weight = float(rank_weight)
        self.report_weight = float(report_weight)
        self.abbreviations: Abbreviations = ()

    def use_glossary(self, glossary: dict[str, str]) -> None:
        """Match the corpus's abbreviations (fedlab.corpus.glossary) both ways from now on: a
        language model knows them, this reader matches words."""
        self.abbreviations = abbreviation_terms(glossary)

    def synthesize(self, question: str, passages: list[str]) -> dict:
        return synthesize_answer(question, passages, self.max_sentences, self.abbreviations, self.rank_weight,
                                 self.report_weight)

    def describe(self) -> str:
        return "extractive (sentences selected from the sources; no language model)"

"""The sentence reader: the answer picked from the passages' sentences by their words — the skill
that answers when no composing skill does (fedlab.skills.registry), and the rest of an answer a
record skill opened.

``SentenceReader.answer(frame, passages, said)`` -> (the cited sentences, whether they are the
statement changes: rule 0). Sentences are ranked by IDF-weighted overlap with the question's terms
(its date words aside) and the Committee's terms for them (fedlab.query.lexicon); rule 0 says what
each statement added and dropped, rule 2 one sentence per meeting for a question spanning several,
rule 3 the best sentences. Every sentence is followed by its [Source N]; the answer is empty when
no sentence shares a content term with the question. The rules in full: docs/skills/reader.md.
"""
from __future__ import annotations

import math
import re
from typing import Callable

from fedlab.chunking.splitting import sentence_spans
from fedlab.facts.changes import changed_section
from fedlab.index.tokens import Tokenizer, stem
from fedlab.query.answer_types import asked_types, held_types
from fedlab.query.lexicon import CHANGE_WORDS, QUESTION_WORDS, VOCABULARY_EXPANSIONS
from fedlab.query.speakers import asks_committee_views, reports_others
from fedlab.query.subjects import asks_about_votes
from fedlab.retrieval.dates import date_expressions
from fedlab.retrieval.types import MULTI_MEETING_SCOPES
from fedlab.skills.passages import HEAD_LINE, head_of
from fedlab.skills.votes import ASKS_WHO_RE, ROSTER
from fedlab.skills.wording import in_label, meeting_labels

TOKENS = Tokenizer()
_NUMBER = re.compile(r"^\d")
# phrases read as one form: "United States" as "U.S." (the minutes write both); "market participants"
# as one term, apart from the Committee's participants (terms_of)
_READ_AS = ((re.compile(r"\bUnited States\b"), "U.S."),
            (re.compile(r"\bmarket\s+participants?\b", re.I), "marketparticipants"))
_HOW_MUCH = re.compile(r"\bhow (?:much|many)\b", re.I)  # asks for an amount or a count: "much" is no term
DATE = frozenset({"date"})
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


def _sentences(passage: str) -> tuple[int | None, list[str]]:
    head = HEAD_LINE.match(passage)
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


def names_list(sentence: str) -> bool:
    """Whether ``sentence`` is a list of names (NAMES_LIST_WORDS)."""
    words = _LIST_WORD.findall(sentence)
    return len(words) >= NAMES_LIST_WORDS and sum(w[0].islower() for w in words) < NAMES_LIST_LOWER * len(words)


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


def _question_terms(question: str, hint) -> set[str]:
    q_terms = _undated(question, hint)
    if not q_terms and hint is not None:  # "what did the Fed do in March 2020?": what the Committee decided
        q_terms = set(TOKENS(VOCABULARY_EXPANSIONS[stem("action")]))
    return q_terms


def _candidates(question: str, passages: list[str], skip: Callable[[str], bool] | None, others: float,
                drop_rosters: bool) -> tuple[list, list, list, set, list]:
    """The passages' sentences: (candidates, changed, titles, reported, sections) as _extracted reads them."""
    candidates, changed = [], []  # (source n, position, sentence, terms, meeting date); changed: + (kind, other date, edit)
    titles = []  # each passage's title terms ("FOMC statement, March 22, 2023" -> fomc, statement)
    sections = []  # each passage's section (None: the head names none)
    reported = set()  # positions of the sentences reporting the staff's or the markets' views
    for i, passage in enumerate(passages):
        n, sentences = _sentences(passage)
        titles.append(_title_terms(passage))
        meeting, section = head_of(passage)
        sections.append(section)
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
    return candidates, changed, titles, reported, sections


def _idf_scorer(among: list, asked: set[str]) -> Callable[[set[str]], float]:
    """IDF-weighted overlap with ``asked``, the IDF over the sentences ``among``."""
    df = {t: sum(t in c[3] for c in among) for t in asked}
    idf = {t: math.log(1 + len(among) / df[t]) for t in asked if df[t]}
    # fsum: exactly rounded, so the score does not depend on the set's (hash-seeded) order
    return lambda terms: math.fsum(idf[t] * (2.0 if _NUMBER.match(t) else 1.0) for t in asked & terms if t in idf)


def _extracted(question: str, passages: list[str], hint, max_sentences: int, abbreviations: Abbreviations = (),
               skip: Callable[[str], bool] | None = None, rank_weight: float = 0.0,
               report_weight: float = 1.0, ranker=None, restated: Callable[[str, str], bool] | None = None,
               changes: bool = True) -> tuple[str, bool]:
    """Rules 0, 2 and 3 (module docstring): sentences of the passages, and whether they are rule 0's
    statement changes; ``skip``: sentences left out; ``report_weight``: the share of its score a
    sentence reporting the staff's or the markets' views keeps in a question about the Committee's;
    ``ranker`` (fedlab.skills.sentence_ranker.SentenceRanker): rule 3 ranks by its score instead of
    the word overlap less ``rank_weight``; ``restated(a, b)``: rule 3 leaves out a sentence restating
    one already said; ``changes``: rule 0 (the statement changes) may answer."""
    q_terms = _question_terms(question, hint)
    drop_rosters = not asks_about_votes(question)
    others = report_weight if asks_committee_views(question) else 1.0  # what the others' sentences keep
    candidates, changed, titles, reported, sections = _candidates(question, passages, skip, others, drop_rosters)
    if not q_terms or not candidates:
        return "", False
    asks_change = bool(q_terms & CHANGE_WORDS)
    q_terms = _expanded(question, q_terms, abbreviations)

    scorer = _idf_scorer
    if changes and asks_change and changed:  # what was asked about, not the asking for a change ("little changed")
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
    if spans_meetings(question, hint):  # rule 2 weighs meetings on the hand-set scale (MEETING_SHARE)
        per_meeting = _per_meeting(ranked, best, hint, max_sentences)
        if per_meeting is not None:
            return per_meeting, False
    if ranker is not None:  # rule 3 by the learned score; a sentence sharing no word with the question keeps 0
        table = _feature_table(question, hint, q_terms, candidates, titles, sections, words, rank_weight)
        ranked = sorted(((ranker.score(f) if words[c[1]] > 0 else 0.0, c) for c, f in zip(candidates, table)),
                        key=lambda sc: (-sc[0], sc[1][1]))
        best = ranked[0][0]
    kept = _parts_best(question, hint, candidates, titles, abbreviations, scorer, score, listed)
    share = 0.5 if ranker is None else ranker.min_share  # of the best score, a further sentence must reach
    chosen, seen = [], set()
    said_texts: list[str] = []  # the sentences rule 3 chose, in order (restated)
    at = {c[1]: c for c in candidates}
    dated = _dated_labels(question, ranked)

    def said(text: str) -> bool:  # said, or within a list said with its introduction
        return any(text.lower() in earlier for earlier in seen)

    for s, (n, (i, j), sentence, _, meeting) in ranked:
        if (i, j) not in kept:
            # the places left once each part's best sentence not yet said has one
            left = max_sentences - len(chosen) - sum(not said(at[k][2]) for k in kept)
            if s < share * best or left <= 0:
                continue
        if said(sentence):
            continue
        if restated is not None and any(restated(sentence, earlier) for earlier in said_texts):
            continue
        said_texts.append(sentence)
        seen.add(sentence.lower())
        # a sentence referring back ("These participants …", "In addition, …") is said after the one it
        # refers to, when that one shares a word with the question (not the boilerplate before "In
        # support of these goals, …")
        before = ""
        lead = at.get((i, j - 1))
        if lead is not None and words[lead[1]] > 0 and _refers_back(lead[2], sentence) and not said(lead[2]):
            seen.add(lead[2].lower())
            said_texts.append(lead[2])
            before = _cited(lead[2], f"Source {n}") + " "
        chosen.append(dated.get(meeting, "") * (not held_types(before + sentence, DATE)) + before
                      + _cited(sentence, f"Source {n}"))
        follow = at.get((i, j + 1))
        if follow is not None and _refers_back(sentence, follow[2]) and not said(follow[2]):
            seen.add(follow[2].lower())
            said_texts.append(follow[2])
            chosen[-1] += " " + _cited(follow[2], f"Source {n}")
    typed = _typed(question, ranked)  # a list of names scores 0: never among them
    if typed and not any(c[2].lower() in seen for _, c in typed):
        _, (n, _, sentence, _, meeting) = typed[0]  # the best sentence holding what was asked for
        seen.add(sentence.lower())
        chosen.append(dated.get(meeting, "") * (not held_types(sentence, DATE)) + _cited(sentence, f"Source {n}"))
    return " ".join(chosen), False


_STATEMENT, _MINUTES = TOKENS("statement")[0], TOKENS("minutes")[0]


def _feature_table(question: str, hint, q_terms: set[str], candidates: list, titles: list, sections: list,
                   words: dict, rank_weight: float) -> list[dict[str, float]]:
    """Each candidate's features for a learned ranker (fedlab.skills.sentence_ranker): its words'
    match with the question (the IDF overlap rule 3 ranks by, its share of the best, the share of
    the question's terms it holds, a TF-IDF cosine), the hand-set score, where its passage ranks and
    where it stands in it, the kind of document and section, whether its meeting is in the
    question's date range, its numbers, its length, whether it holds what the question asks for,
    and whether it is a list of names or continues the sentence before it. General: no wording."""
    top = max(words.values(), default=0.0)
    hand = {c[1]: _ranked(words[c[1]], top, c[0] - 1, rank_weight) for c in candidates}
    best_hand = max(hand.values(), default=0.0)
    df = {t: sum(t in c[3] for c in candidates) for t in q_terms}
    idf = {t: math.log(1 + len(candidates) / df[t]) for t in q_terms if df[t]}
    q_norm = math.sqrt(math.fsum(v * v for v in idf.values())) or 1.0
    q_numbers = {t for t in q_terms if _NUMBER.match(t)}
    kinds = asked_types(question) - DATE
    committee = asks_committee_views(question)
    lo = hint.date_from if hint is not None and hint.date_from else ""
    hi = hint.widened_end(1) if hint is not None and hint.date_to else ""
    rows = []
    for c in candidates:
        (i, j), terms, meeting = c[1], c[3], c[4]
        shared = q_terms & terms
        place = c[0] - 1
        others = reports_others(sections[i], c[2])
        n_words = len(c[2].split())
        rows.append({
            "overlap": words[c[1]] / top if top > 0 else 0.0,
            "idf_overlap": words[c[1]],
            "coverage": len(shared) / len(q_terms) if q_terms else 0.0,
            "tfidf_cosine": math.fsum(idf[t] ** 2 for t in shared if t in idf) / q_norm
                            / math.sqrt(max(len(terms), 1)),
            "handset": hand[c[1]] / best_hand if best_hand > 0 else 0.0,
            "place": float(place),
            "log_place": math.log1p(max(place, 0)),
            "first_passage": float(place == 0),
            "position": float(j),
            "first_in_passage": float(j == 0),
            "statement": float(_STATEMENT in titles[i]),
            "minutes": float(_MINUTES in titles[i]),
            "others_reported": float(others),
            "others_in_committee_question": float(others and committee),
            "dated_question": float(bool(hi)),
            "in_date_range": float(bool(hi) and meeting is not None and lo <= meeting <= hi),
            "numbers": math.log1p(sum(bool(_NUMBER.match(t)) for t in terms)),
            "shared_numbers": float(len(q_numbers & terms)),
            "log_words": math.log(max(n_words, 1)),
            "typed": float(bool(kinds) and bool(held_types(c[2], kinds))),
            "names_list": float(names_list(c[2])),
            "continues": float(bool(CONTINUES.match(c[2]))),
        })
    return rows


def sentence_table(question: str, passages: list[str], hint, abbreviations: Abbreviations = (),
                   rank_weight: float = 0.0, report_weight: float = 1.0) -> list[tuple[str, str | None, dict]]:
    """(sentence, meeting date, features) of every sentence rule 3 ranks for ``question`` over
    ``passages``, as _extracted reads them: what a learned ranker is fitted on. Empty when the
    question has no content term."""
    q_terms = _question_terms(question, hint)
    others = report_weight if asks_committee_views(question) else 1.0
    candidates, _, titles, reported, sections = _candidates(question, passages, None, others,
                                                            not asks_about_votes(question))
    if not q_terms or not candidates:
        return []
    q_terms = _expanded(question, q_terms, abbreviations)
    score = _idf_scorer(candidates, q_terms)
    listed = {c[1] for c in candidates if not ASKS_WHO_RE.search(question) and names_list(c[2])}
    words = {c[1]: 0.0 if c[1] in listed else score(c[3]) * (others if c[1] in reported else 1.0)
             for c in candidates}
    table = _feature_table(question, hint, q_terms, candidates, titles, sections, words, rank_weight)
    return [(c[2], c[4], f) for c, f in zip(candidates, table)]


def _expanded(text: str, terms: set[str], abbreviations: Abbreviations) -> set[str]:
    """``terms`` (of ``text``) with the Committee's terms for them and the abbreviations' other forms."""
    return terms | {t for term in list(terms) if term in VOCABULARY_EXPANSIONS
                    for t in TOKENS(VOCABULARY_EXPANSIONS[term])} | spelled_out(text, terms, abbreviations)


def _title_terms(passage: str) -> frozenset[str]:
    head = HEAD_LINE.match(passage)
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
    question asks for (a rate, an amount, a count, a person: fedlab.query.answer_types; a date is
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
    """For a question asking when (fedlab.query.answer_types): "July 2023: " for each meeting of the
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


class SentenceReader:
    """The fallback skill (module docstring): ``answer(frame, passages, said)`` -> (cited sentences,
    whether they are rule 0's statement changes). ``max_sentences``, ``rank_weight`` and
    ``report_weight`` are conf/lm/extractive.yaml's; ``abbreviations`` the corpus's
    (abbreviation_terms), matched both ways."""

    name = "reader"
    needs = "retrieved passages"

    def __init__(self, max_sentences: int = 3, abbreviations: Abbreviations = (), rank_weight: float = 0.0,
                 report_weight: float = 1.0, ranker=None, restated: Callable[[str, str], bool] | None = None):
        self.max_sentences = max_sentences
        self.abbreviations = abbreviations
        self.rank_weight = rank_weight
        self.report_weight = report_weight
        self.ranker = ranker  # a fedlab.skills.sentence_ranker.SentenceRanker, or None: the hand-set weights
        self.restated = restated  # restated(a, b): ``a`` says ``b`` again (fedlab.skills.restated), or None

    def applies(self, frame) -> bool:
        return True

    def answer(self, frame, passages: list[str], said: Callable[[str], bool] | None = None,
               changes: bool = True) -> tuple[str, bool]:
        """``changes``: rule 0 (the statement changes) may answer; False leaves it out."""
        return _extracted(frame.question, passages, frame.hint, self.max_sentences, self.abbreviations, skip=said,
                          rank_weight=self.rank_weight, report_weight=self.report_weight, ranker=self.ranker,
                          restated=self.restated, changes=changes)

"""The kind of answer a question asks for, and whether a text holds one.

The classic expected-answer-type rule of factoid question answering (Li & Roth's NUM:date,
NUM:perc, NUM:money, NUM:count, HUM:ind): a question's wh-word, or the head noun of its
"what/which …" phrase, names the type of the answer — "when" or "which meeting" a date, "how many" a count, "who"
a person, "what … rate" a rate, "how much" / "what … pace" an amount. A sentence that holds no
expression of the type asked for does not answer the question, however many of its words it
shares; an answer that holds none is likely wrong.

Types:
  date    a month (with its day) or a year
  rate    a percentage, basis points, percentage points, or a range in the statements' notation
  amount  a dollar figure, a number of billions/millions/trillions, or a rate
  count   a number, in figures or in words
  person  a name (initials, a title or an honorific before a capitalised word)
"""
from __future__ import annotations

import re

from fedlab.index.tokens import stem
from fedlab.query.lexicon import MONTH_NAMES, NUMBER_WORDS

_WH = re.compile(r"\b(what|which)\b((?:\s+[\w'’-]+){1,8})", re.I)
# the words that end a "what/which …" phrase: the verb after its head noun, a preposition, punctuation
# (lower case: "ON RRP" is a name)
_PHRASE_END = re.compile(r"\b(?:is|are|was|were|did|does|do|has|have|had|will|would|could|should|can|might|"
                         r"of|in|at|on|for|from|to|by|during|after|before|between|with|when|that|who|and)\b|[,;:?]")
_COPULA = frozenset("is are was were the a an".split())  # "what was the range …": the phrase follows
_AUXILIARY = frozenset("did does do has have had will would could should can".split())  # "what did X say": no head
# an interrogative wh-word opens the question or a clause of it and, for "when", precedes a verb:
# "when did …", "…, and who was absent" — not "when it raised rates", "presidents who had voted"
_CLAUSE = r"(?:^|[,;]\s*|\band\s+|\bor\s+)"
_ORDINAL = r"(?:first|last|earliest|latest|final)"
_DOCUMENT = r"(?:[\w-]+\s+){0,2}?(?:statements?|minutes)"  # "FOMC statement", "policy statement"
_ASKS = (
    ("date", re.compile(_CLAUSE + r"when\s+(?:did|does|do|was|were|is|are|will|would|has|have|had|can|could|should)\b"
                        r"|\bwhat (?:date|day|month|year)\b"
                        # "which was the last statement to …", "which statement first …": one of a sequence
                        # of documents, named by its date
                        rf"|\b(?:what|which)\s+(?:(?:was|were|is|are)\s+)?(?:the\s+)?{_ORDINAL}\s+{_DOCUMENT}"
                        r"(?=\s+(?:to|that|which|whose|where)\b)"
                        rf"|\bwhich\s+{_DOCUMENT}\s+(?:(?:was|were)\s+(?:the\s+)?)?{_ORDINAL}\b", re.I)),
    ("count", re.compile(r"\bhow many\b|\bwhat number of\b", re.I)),
    ("amount", re.compile(r"\bhow much\b", re.I)),
    ("rate", re.compile(r"\bhow (?:high|low)\b", re.I)),
    ("person", re.compile(_CLAUSE + r"who(?:m|se)?\b", re.I)),
)
# the head noun of a "what/which …" phrase (stemmed) -> the type it asks for
HEAD_NOUNS = {stem(w): kind for kind, words in {
    "date": "date day month year time deadline meeting meetings span period",  # a meeting is named by its date
    "rate": "rate range level percentage yield",
    "amount": "pace amount size cap total sum volume",
    "person": "president governor member official chair dissenter voter person participant",
}.items() for w in words.split()}
_MONTH = f"(?:{'|'.join(MONTH_NAMES)})"
_NUMBER_WORD = f"(?:{'|'.join(NUMBER_WORDS)})"
_RATE = r"\d+(?:[.,]\d+)?(?:-\d+/\d+)?\s*(?:percent|%|basis points?|percentage points?)|\b\d+(?:-\d/\d)?\s+to\s+\d+(?:-\d/\d)?\s+percent"
HOLDS = {
    "date": re.compile(rf"\b{_MONTH}\b|\b(?:19|20)\d\d\b"),
    "rate": re.compile(_RATE, re.I),
    "amount": re.compile(rf"\$\s?\d|\b\d+(?:[.,]\d+)?\s*(?:billion|million|trillion)\b|{_RATE}", re.I),
    # a year, a day of a month, a figure in dollars, percent or billions is not a count
    "count": re.compile(rf"(?<![$\d.,/-])\b(?!(?:19|20)\d\d\b)\d+\b(?![.,/-]\d)"
                        r"(?!\s*(?:percent|%|billion|million|trillion|basis|percentage))"
                        rf"|\b{_NUMBER_WORD}\b", re.I),
    # an honorific or title before a name; a name with an initial; a first and last name listed
    # (after "was", "were", "and", a colon, a comma or a dash, before a comma, a full stop or "who")
    "person": re.compile(r"\b(?:Mr|Ms|Mrs|Dr)\.\s+[A-Z]|\b(?:President|Governor|Chair|Vice Chair)\s+[A-Z][a-z]"
                         r"|\b[A-Z][a-z]+\s+(?:[A-Z]\.\s+)+[A-Z][a-z]+"
                         r"|(?:\bwas|\bwere|\band|[:;,—–])\s+[A-Z][a-z]+\s+[A-Z][a-z]+(?=[,;.]|\s+who\b)"),
}
KINDS = tuple(HOLDS)
# "how many meetings / statements / of the policy statements …": a count of documents, which the
# run of statements saying what was asked answers as it answers "when" (fedlab.retrieval.mentions)
_COUNTED_DOCUMENTS = re.compile(r"\bhow many\s+(?:of\s+the\s+)?(?:[\w-]+\s+){0,2}?(?:statements?|minutes|meetings?)\b",
                                re.I)
_DAY = re.compile(rf"\b{_MONTH}\s+\d{{1,2}}\b")


def asked_types(question: str) -> frozenset[str]:
    """The answer types ``question`` asks for (empty when it names none: "why", "how did …")."""
    kinds = {kind for kind, pattern in _ASKS if pattern.search(question)}
    for m in _WH.finditer(question):
        words = m.group(2).split()
        if words and words[0].lower() in _AUXILIARY:
            continue
        while words and words[0].lower() in _COPULA:
            words = words[1:]
        phrase = _PHRASE_END.split(" ".join(words), maxsplit=1)[0].split()
        # the phrase's last noun of a type ("which Reserve Bank presidents voted": no tagger tells
        # the verb from the noun, the lexicon does)
        heads = [HEAD_NOUNS.get(stem(re.sub(r"[^a-z]", "", w.lower()))) for w in reversed(phrase)]
        kinds.update(next(([kind] for kind in heads if kind), []))
    return frozenset(kinds)


def held_types(text: str, kinds: frozenset[str] | set[str] = frozenset(KINDS)) -> set[str]:
    """Which of ``kinds`` ``text`` holds an expression of."""
    undated = _DAY.sub(" ", text)
    return {kind for kind in kinds if HOLDS[kind].search(undated if kind == "count" else text)}


def counts_documents(question: str) -> bool:
    """Whether ``question`` asks how many meetings or documents did something ("for how many
    meetings did the statement say …")."""
    return bool(_COUNTED_DOCUMENTS.search(question))

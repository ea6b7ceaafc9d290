"""What a question is about, as the skills and the agent's fact passages need to know it.

Each detector reads the question's words against a list of fedlab.query.lexicon and says yes or
no; none reads the passages.
"""
from __future__ import annotations

from fedlab.index.tokens import Tokenizer
from fedlab.query.lexicon import BALANCE_SHEET_WORDS_RE, CHANGE_WORDS, NOTATION_VOTE_RE, RATE_NAMES, VOTE_WORDS_RE

_TOKENS = Tokenizer()


def asks_about_votes(question: str) -> bool:
    """Whether ``question`` asks about how members voted (votes, dissents, unanimity) — a decision
    taken by notation vote is about what was decided, not the vote."""
    return bool(VOTE_WORDS_RE.search(NOTATION_VOTE_RE.sub("", question)))


def asks_about_balance_sheet(question: str) -> bool:
    """Whether ``question`` names the balance sheet, its runoff or the asset purchases (QE, QT,
    taper, holdings, redemption caps, reinvestment)."""
    return bool(BALANCE_SHEET_WORDS_RE.search(question))


def asks_about_change(question: str) -> bool:
    """The question asks what changed, was new or differed (a word of CHANGE_WORDS)."""
    return bool(set(_TOKENS(question)) & CHANGE_WORDS)


def rates_named(text: str) -> list[str]:
    """The administered rates ``text`` names, in fedlab.facts.records.RATES order."""
    return [rate for rate, pattern in RATE_NAMES.items() if pattern.search(text)]

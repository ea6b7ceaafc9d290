"""A question's shorthand read as the documents write it: "dec 2021 taper vs nov 2021 taper" as
"December 2021 taper compared with November 2021 taper".

A question typed in a hurry abbreviates what the statements and minutes spell out: a month
("Dec 2023"), a common word ("thru", "mtgs", "50bps") or a market name for a policy ("QT", "fed
funds"). A term no passage uses matches nothing and counts against the question in the
answerability model (fedlab.agent.evidence: unknown_share; terse rewordings of a comparison set
were abstained on 0.39 of the time, their questions as written 0.03), so the agent reads the
question with each shorthand replaced by the documents' words before it searches
(fedlab.agent.program). The tables are general English and market shorthand, each mapped to
words the corpus uses; none is taken from a question set. A shorthand is replaced as a whole
word only, and a month only where a day, a year or a range to another month follows it ("mar
2020", "jan-oct 2025", not "mar").
"""
from __future__ import annotations

import re

from fedlab.query.lexicon import MONTH_NAMES
from fedlab.retrieval.dates import MONTH_WORD, month_number

# an abbreviated (or lower-case) month before a day or a year ("Dec 12", "dec 2023", "Dec '23"), or
# before a range or a list to another month ("jan-oct 2025", "Jan. thru Oct. 2025"), where the date
# parser reads months written out; all capitals is an abbreviation of its own ("SEP", the Summary
# of Economic Projections), and "may" a word too
_MONTH = re.compile(r"\b(?P<m>" + MONTH_WORD + r")"
                    r"(?=\s*,?\s*['’]?\d|\s*(?:[-–—/,&]|\b(?:to|through|thru|and|or|vs)\b)\.?\s*"
                    + MONTH_WORD + ")", re.I)
# general English shorthand -> the word it stands for
_WORDS = {
    "vs": "compared with", "vs.": "compared with", "versus": "compared with",
    "thru": "through", "btwn": "between", "b/w": "between", "w/": "with", "w/o": "without",
    "mtg": "meeting", "mtgs": "meetings", "yr": "year", "yrs": "years", "approx": "approximately",
    "approx.": "approximately", "govt": "government", "gov't": "government", "pct": "percent",
    "bp": "basis points", "bps": "basis points", "cmte": "Committee", "cttee": "Committee",
    "in a row": "consecutive",  # an idiom: no passage writes "row"
}
# market shorthand for what the Committee's documents name in full
_MARKET = {
    "fed funds": "federal funds", "ff": "federal funds", "ffr": "federal funds rate",
    "qt": "balance sheet runoff", "qe": "asset purchases", "ycc": "yield curve control",
    "dot plot": "Summary of Economic Projections",
}
_TABLE = {**_WORDS, **_MARKET}
_SHORTHAND = re.compile(r"(?<![\w/'’.-])(?P<s>" + "|".join(re.escape(k) for k in sorted(_TABLE, key=len, reverse=True))
                        + r")(?![\w/'’-])(?!\.\w)", re.I)
_GLUED_BP = re.compile(r"(?<=\d)\s*(?P<u>bps?)\b", re.I)  # "50bp", "25 bps"
_PERCENT_SIGN = re.compile(r"(?<=\d)\s*%")  # the documents write "percent"
_AND = re.compile(r"(?<=\w)\s+[&+]\s+(?=\w)")  # "taper + QT", "IOER & ON RRP"


def _month(m: re.Match) -> str:
    word = m.group("m")
    if (word.isupper() and len(word) > 1) or word.lower() == "may":
        return word
    return MONTH_NAMES[month_number(word) - 1]


def read_shorthand(question: str) -> str:
    """``question`` with its shorthand in the documents' words (unchanged when it has none)."""
    text = _MONTH.sub(_month, _MONTH.sub(_month, question))  # twice: "jan, feb and mar 2020" reads right to left
    text = _GLUED_BP.sub(" basis points", text)
    text = _PERCENT_SIGN.sub(" percent", text)
    text = _AND.sub(" and ", text)
    return _SHORTHAND.sub(lambda m: _TABLE[m.group("s").lower()], text)

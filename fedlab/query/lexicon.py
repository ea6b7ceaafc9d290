"""The words a question is read by: every word list the question readers share, in one place.

Each list is general English or the Committee's own vocabulary, none drawn from a question set.
A reader (fedlab.query.subjects, fedlab.query.answer_types, the extractive backend) imports its
list from here; a new list belongs here too.
"""
from __future__ import annotations

import re

from fedlab.index.tokens import stem

MONTH_NAMES = ("January February March April May June July August September October November "
               "December").split()
NUMBER_WORDS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
                "fifteen sixteen seventeen eighteen nineteen twenty").split()
# the words of asking, no content of their own (stemmed)
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

# how a question names the members' votes: votes, dissents, unanimity, abstentions (a decision
# taken by notation vote is about what was decided: NOTATION_VOTE_RE)
VOTE_WORDS_RE = re.compile(r"\b(?:vot(?:e|es|ed|ing|ers?)|dissent\w*|unanim\w*|abstain\w*)\b", re.I)
NOTATION_VOTE_RE = re.compile(r"\bnotation\s+votes?\b", re.I)
# how a question names the balance sheet or its instruments: the statements' words and the usual names
BALANCE_SHEET_WORDS_RE = re.compile(
    r"\bbalance[\s-]+sheet\b|\bholdings\b|\bSOMA\b|\brun-?off\b|\broll-?off\b|\bredemptions?\b|\breinvest\w*"
    r"|\btaper\w*|\bquantitative\s+(?:easing|tightening)\b|\bQ[ET]\b"
    r"|\b(?:asset|securities|bond|Treasury|MBS|bill)\s+(?:purchases|purchasing|buying)\b"
    r"|\bpurchas\w*\s+(?:of\s+)?(?:Treasur\w*|agency|MBS|mortgage|securities|assets|bonds|bills)\b"
    r"|\bnet\s+purchases\b", re.I)
# how a question names each rate (the rate, not its facility or program): the notes' own words and
# the acronyms the corpus defines for them ("interest on excess reserves (IOER)", "overnight reverse
# repurchase agreement (ON RRP)")
RATE_NAMES = {
    "reserves": re.compile(r"\binterest\s+(?:rates?\s+)?(?:paid\s+)?on\s+"
                           r"(?:required\s+(?:and\s+(?:excess\s+)?)?|excess\s+)?"
                           r"reserve(?:\s+balance)?s\b|\bIOER\b|\bIORB\b|\bIORR\b", re.I),
    "on_rrp": re.compile(r"\b(?:ON\s+)?RRP\s+(?:offering\s+)?rate\b|\breverse\s+repo(?:rchase)?\s+(?:agreement\s+)?"
                         r"(?:offering\s+)?rate\b|\boffering\s+rate\b", re.I),
    "primary_credit": re.compile(r"\bprimary\s+credit\s+rate\b|\bdiscount\s+rate\b", re.I),
}
# the words a question asks about a change with (fedlab.query.subjects.asks_about_change)
CHANGE_WORDS = frozenset(stem(w) for w in """
change changed changes shift shifted evolve evolved differ differed difference different compare compared
new revise revised revision modify modified alter altered update updated amend amended
""".split())

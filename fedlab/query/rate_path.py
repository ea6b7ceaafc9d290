"""Whether a question asks about the federal funds target range over several meetings, and how.

``asks_rate_path(question, hint)``: "count", "path", "which" or "yes_no" for a question whose
date range spans several meetings, that names the federal funds rate, the target range, the
policy rate or rates / hikes / cuts, or the Committee's easing or tightening, and no other rate
nor another subject that takes the same verbs (the rate-path skill's docs page lists the forms);
None otherwise. ``asked_size``: the size of move a question names, in basis points.
"""
from __future__ import annotations

import re

from fedlab.facts.timeline import size_bp
from fedlab.query.request import asks_for_account, split_request
from fedlab.retrieval.types import MULTI_MEETING_SCOPES

_FFR = re.compile(
    r"\bfed(?:eral)?\s+funds\b|\btarget\s+range\b|\bpolicy\s+rates?\b"
    r"|\brates?\s+(?:hikes?|increases?|cuts?|reductions?|moves?|changes?|decisions?)\b"
    r"|\b(?:rais\w*|hik\w*|cut\w*|lower\w*|reduc\w*|increas\w*|mov\w*|chang\w*|adjust\w*|set)\s+"
    r"(?:interest\s+|policy\s+)?rates\b"
    r"|\b(?:interest\s+)?rates\b|\bhikes?\b|\bcuts\b", re.I)
# the moves named by their stance ("how much easing did the FOMC deliver", "how much did the Fed
# tighten"): the Committee's, not the markets' or the balance sheet's ("quantitative tightening",
# "tightening of financial conditions", "the labor market tightened")
_STANCE_MOVE = re.compile(
    r"\b(?:(?:policy|monetary(?:\s+policy)?)\s+)?(?:easing|tightening|firming|loosening)\b"
    r"|\b(?:fed|fomc|committee|federal\s+reserve|it|they)\s+(?:\w+\s+){0,2}?(?:tighten(?:ed)?|eased?|loosen(?:ed)?)\b",
    re.I)
_NOT_POLICY_STANCE = re.compile(r"\blabou?r\s+market\b|\bfinancial\b|\bcredit\b|\bconditions\b|\blending\b"
                                r"|\bstandards\b|\bsupply\b|\bquantitative\b", re.I)
# a rate other than the federal funds rate
OTHER_RATE = re.compile(
    r"\bprimary\s+credit\b|\bdiscount\s+rate\b|\breserve\s+balances\b|\b(?:rates?|interest)\s+on\s+"
    r"(?:excess\s+|required\s+)?reserves\b|\bIOER\b|\bIORB\b|\breverse\s+repo\b|\bRRP\b|\boffering\s+rate\b"
    r"|\brepo\s+(?:rate|facility|operations?)\b|\bunemployment\s+rate\b|\byields?\b"
    r"|\b(?:market|treasury|mortgage|bond|long(?:er)?[\s-]term|short[\s-]term|real|neutral)\s+(?:interest\s+)?rates?\b",
    re.I)
# another rate, or another subject that takes the same verbs
_OTHER_SUBJECT = re.compile(
    OTHER_RATE.pattern
    + r"|\bpurchases?\b|\brunoff\b|\bbalance\s+sheet\b|\bholdings\b|\bprojections?\b|\bdots?\b|\bdot\s+plot\b"
    r"|\bparticipants?\b|\bdissent\w*|\bvot(?:e|es|ed|ing|ers?)\b|\bexpect\w*|\bguidance\b|\blanguage\b"
    r"|\bwording\b|\bsentence\b|\bdescri\w+|\bcharacteri\w+|\bconditions?\b|\bcriteri\w+|\bthresholds?\b",
    re.I)
_COUNT = re.compile(r"\bhow\s+(?:many|much|often|large|big)\b|\bnumber\s+of\b|\bin\s+total\b|\btotal\b"
                    r"|\bcumulative\w*|\baltogether\b|\bcombined\b", re.I)
_PATH = re.compile(
    # "how did the target range change", and as an indirect question: "tell me how rates moved"
    r"\bhow\b(?:\s+(?:did|has|have|had|was|were|does|do)\b)?[^?]*\b(?:chang\w*|mov\w*|evolv\w*|shift\w*|develop\w*"
    r"|progress\w*|go|gone|went|adjust\w*|rise|rose|risen|fall|fell|fallen|climb\w*|declin\w*)\b"
    r"|\bwhat\s+happened\s+to\b|\bpath\b|\btrajectory\b|\bsequence\b|\bcourse\s+of\s+(?:the\s+)?(?:target|rates?)\b"
    r"|\bever\s+(?:move|change|raise|lower|cut|hike|adjust|increase|reduce)\b", re.I)
_WHICH = re.compile(
    r"\bwhich\s+(?:(?:rate|policy)\s+)?(?:hikes?|increases?|cuts?|reductions?|decreases?|moves?|changes?"
    r"|meetings?|decisions?)\b"
    r"|\bwhen\s+(?:did|was|were)\b[^?]*\b(?:rais\w*|hik\w*|cut|lower\w*|reduc\w*|increas\w*|mov\w*)\b", re.I)
# a yes/no question: "did the Committee change the target range between A and B?", "between A and B, did
# the FOMC raise rates?"; the verb says which moves answer yes
YES_NO = re.compile(
    r"(?:^|[,;:]\s*)(?:did|has|have|had)\b[^?]*?\b(?:(?P<raise>rais\w*|hik\w*|increas\w*|tighten\w*)"
    r"|(?P<cut>cut|cuts|cutting|lower\w*|reduc\w*|decreas\w*|eas(?:e|ed|ing))"
    r"|chang\w*|mov\w*|adjust\w*|alter\w*)\b", re.I)


_ASKED_SIZE = re.compile(
    r"(?P<bp>\d+)[\s-]*(?:basis[\s-]+points?|bps?)\b"
    r"|(?P<pp>\d+(?:[-\s]\d/\d)?|\d/\d|\d*\.\d+)[\s-]*percentage[\s-]+points?\b"
    r"|\b(?:one[\s-]|a\s+)?(?P<word>quarter|half|three[\s-]quarters?)[\s-]+(?:of\s+)?(?:a\s+)?"
    r"(?:percentage[\s-]+)?points?\b", re.I)
_SIZE_WORDS = {"quarter": 25, "half": 50, "three": 75}


def asked_size(question: str) -> int | None:
    """The size of move the question names, in basis points ("50 basis points", "1/2 percentage
    point", "half-point"), else None."""
    m = _ASKED_SIZE.search(question)
    if m is None:
        return None
    if m.group("bp"):
        return int(m.group("bp"))
    if m.group("pp"):
        return size_bp(m.group("pp").replace(" ", "-"), "percentage point")
    return _SIZE_WORDS[m.group("word").lower().split()[0].split("-")[0]]


def asks_rate_path(question: str, hint=None) -> str | None:
    """"count", "path" or "which" when the question is a rate-path question (module docstring),
    else None. ``hint`` is the question's parsed DateHint (parsed here when not given)."""
    if hint is None:
        from fedlab.retrieval.dates import parse_date_hint

        hint = parse_date_hint(question)
    if hint is None or hint.scope not in MULTI_MEETING_SCOPES:
        return None
    asked = split_request(question)[1]  # "describe the 2019 cuts": the request is no subject
    stance = _STANCE_MOVE.search(asked) and not _NOT_POLICY_STANCE.search(asked)
    if not (_FFR.search(asked) or stance) or _OTHER_SUBJECT.search(asked):
        return None
    if _COUNT.search(question):
        return "count"
    if _WHICH.search(question):
        return "which"
    if YES_NO.search(question):
        return "yes_no"
    if _PATH.search(question) or asks_for_account(question):
        return "path"
    return None

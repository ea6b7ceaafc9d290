"""Whose views a passage reports. The minutes report the staff's (its review of the economy and of
financial conditions, its outlook) and the markets' (the Desk's report, its surveys of dealers and
market participants) in sections of their own, and in sentences naming them as the speaker; the
Committee's participants speak elsewhere. A question about what the participants thought is
answered from what they said: the extractive reader weighs the others' sentences down
(lm.report_weight; fedlab.skills.reader)."""
from __future__ import annotations

import re

# the minutes' sections of the staff's and the Desk's reports: "Staff Review of the Economic
# Situation", "Staff Economic Outlook", "Developments in Financial Markets and Open Market Operations"
REPORT_SECTION = re.compile(r"^Staff\b|\bFinancial (?:Markets|Developments|Situation)\b")
# a sentence naming another speaker among its first words, before any of the Committee's: "Survey
# responses suggested …", "The staff briefed participants …", "Regarding market participants' views …"
# (not "Participants noted that the staff's …")
REPORTED_BY_OTHERS = re.compile(r"^(?:[\w'’,-]+\s+){0,4}?(staff|market participants|respondents|survey|dealers"
                                r"|Desk|manager)\b", re.I)
_COMMITTEE = re.compile(r"(?<!market )\b(?:participants?|members?|officials?|policymakers?|policy makers)\b", re.I)
_OTHERS = re.compile(r"\b(?:staff|market participants?|respondents?|surveys?|dealers?|Desk|manager)\b", re.I)


def asks_committee_views(question: str) -> bool:
    """The question asks what the Committee's participants thought: it names them (participants,
    members, officials, policymakers; not market participants) and no other speaker (the staff,
    market participants, survey respondents, dealers, the Desk and its manager)."""
    return bool(_COMMITTEE.search(question)) and not _OTHERS.search(question)


def reports_others(section: str | None, sentence: str = "") -> bool:
    """The passage (its ``section``) or ``sentence`` reports the staff's or the markets' views, not
    the Committee's."""
    if section and REPORT_SECTION.search(section):
        return True
    named = REPORTED_BY_OTHERS.match(sentence) if sentence else None
    return named is not None and not _COMMITTEE.search(sentence[:named.start(1)])

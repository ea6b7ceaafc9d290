"""The FOMC meeting timeline, read deterministically from the corpus's own language.

Contract and design notes: docs/timeline.md#design-notes-fedlabfactstimelinepy.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Iterable

from fedlab.corpus.document import Document
from fedlab.facts.records import (TIMELINE_VERSION, AdministeredRate, BalanceSheetAction, Decision, Dissent, Meeting,
                                  RateRange, Span, Timeline)
from fedlab.corpus.recorded import recorded_meetings

BALANCE_SHEET_ACTIONS = {
    "reserve_purchases_begun": "purchases of Treasury bills to keep reserves ample (technical, not a stance change)",
    "purchases_begun": "asset purchases begin (holdings to increase by at least $X)",
    "purchases_increased": "asset purchases widened (purchases of a further kind of security included)",
    "taper_begun": "begin reducing the monthly pace of net asset purchases",
    "taper_accelerated": "reduce the monthly pace of net asset purchases by more than before",
    "taper_slowed": "reduce the monthly pace of net asset purchases by less than before",
    "purchases_ended": "net asset purchases brought to an end",
    "runoff_begun": "begin reducing holdings of securities (balance-sheet runoff)",
    "runoff_slowed": "slow the pace of decline of securities holdings",
    "runoff_ended": "conclude the reduction of securities holdings",
}

# rate -> (its name in an answer, the clause of an implementation note that sets it: the value is
# the first "to/at X percent" after the rate's name in the same sentence)
_SETS = r"\b[^;]{0,80}?\b(?:at|to)\s+(?:the\s+existing\s+level\s+of\s+)?(?P<value>\d+(?:\.\d+)?)\s+percent\b"
ADMINISTERED_RATES = {
    "reserves": ("the interest rate on reserve balances", re.compile(
        r"\binterest\s+rates?\s+(?:paid\s+)?on\s+(?:required\s+and\s+excess\s+)?reserve\s+balances" + _SETS, re.I)),
    "on_rrp": ("the ON RRP offering rate", re.compile(
        r"\breverse\s+repurchase\s+(?:agreement\s+)?operations\b[^;]{0,250}?\bat\s+an\s+offering\s+rate\s+of\s+"
        r"(?P<value>\d+(?:\.\d+)?)\s+percent\b", re.I)),
    "primary_credit": ("the primary credit rate", re.compile(r"\bprimary\s+credit\s+rate" + _SETS, re.I)),
}

# -- numbers and ranges ----------------------------------------------------------------------------

_DASH = r"[-‐‑–]"
NUM = rf"(?:\d+{_DASH}\d/\d|\d/\d|\d+(?:\.\d+)?)"
RANGE = rf"(?P<{{0}}>(?P<{{0}}_lo>{NUM})(?:\s*percent)?\s+to\s+(?P<{{0}}_hi>{NUM})\s*percent)"
SIZE = rf"(?P<size>{NUM})\s+(?P<unit>percentage\s+points?|basis\s+points?)"
VERB = r"(?P<verb>raise|increase|lower|reduce|cut|maintain|keep|leave)"
VERB_DIRECTION = {"raise": "raise", "increase": "raise", "lower": "cut", "reduce": "cut", "cut": "cut",
                  "maintain": "hold", "keep": "hold", "leave": "hold"}
FFR = r"the\s+target\s+range\s+for\s+the\s+federal\s+funds\s+rate"

DECISION_RE = re.compile(
    rf"\b(?:decided|agreed|voted)(?:\s+today)?\s+to\s+{VERB}\s+{FFR}"
    rf"(?:\s+unchanged)?(?:,?\s+by\s+{SIZE})?(?:,?\s+from\s+{RANGE.format('frm')})?"
    rf",?\s+(?:to|at)\s+{RANGE.format('to')}",
    re.IGNORECASE,
)
DIRECTIVE_RE = re.compile(
    rf"\bto\s+(?P<verb>maintain)\s+the\s+federal\s+funds\s+rate\s+in\s+a\s+target\s+range\s+of\s+{RANGE.format('to')}",
    re.IGNORECASE,
)


def parse_number(text: str) -> float:
    """"1-3/4" → 1.75, "1/4" → 0.25, "0.5" → 0.5, "5" → 5.0."""
    text = re.sub(_DASH, "-", text.strip())
    if "/" in text:
        whole, _, frac = text.rpartition("-") if "-" in text else ("0", "", text)
        num, den = frac.split("/")
        return float(whole) + int(num) / int(den)
    return float(text)


def size_bp(number: str, unit: str) -> int:
    value = parse_number(number)
    return round(value * 100) if unit.lower().startswith("percentage") else round(value)


def bp(a: float, b: float) -> int:
    return round((a - b) * 100)


def _rate_range(m: re.Match, name: str, doc_id: str) -> RateRange:
    lo, hi = m.group(f"{name}_lo"), m.group(f"{name}_hi")
    return RateRange(parse_number(lo), parse_number(hi),
                     Span(doc_id, m.start(name), m.end(name)))


# -- sentences -------------------------------------------------------------------------------------

# A sentence ends at . ! ? (and a closing quote) before whitespace and a capital or an opening
# quote; never after a single capital initial ("Esther L. George", "U.S. Treasury").
_SENT_END = re.compile(r"(?<=[.!?])[\"”]?(?<!\b[A-Z]\.)(?:\s+)(?=[\"“]?[A-Z(])|\n\s*\n")


def sentences(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """(start, end) of each sentence of ``text[start:end]`` (offsets into ``text``)."""
    end = len(text) if end is None else end
    out = []
    pos = start
    for m in _SENT_END.finditer(text, start, end):
        s, e = _strip(text, pos, m.start())
        if e > s:
            out.append((s, e))
        pos = m.end()
    s, e = _strip(text, pos, end)
    if e > s:
        out.append((s, e))
    return out


def _strip(text: str, s: int, e: int) -> tuple[int, int]:
    while s < e and text[s] in " \n\t\"“":
        s += 1
    while e > s and text[e - 1] in " \n\t\"”":
        e -= 1
    return s, e


def _sentence_at(text: str, pos: int, region: tuple[int, int]) -> tuple[int, int]:
    for s, e in sentences(text, *region):
        if s <= pos < e:
            return s, e
    return pos, pos


# -- one document's decision -----------------------------------------------------------------------


@dataclass
class _Found:
    via: str
    match: re.Match
    region: tuple[int, int]


def find_decision(text: str, region: tuple[int, int] | None = None) -> _Found | None:
    """The policy decision in ``text[region]``: the decision sentence, else a directive."""
    region = region or (0, len(text))
    m = DECISION_RE.search(text, *region)
    if m:
        return _Found("decision_sentence", m, region)
    m = DIRECTIVE_RE.search(text, *region)
    if m:
        return _Found("directive", m, region)
    return None


STATEMENT_IN_MINUTES_RE = re.compile(r"approval of the statement below[^\n]*?:\s*[\"“]", re.IGNORECASE)
POLICY_SECTION_RE = re.compile(r"^Committee Policy Actions?$", re.IGNORECASE)


def statement_region_in_minutes(doc: Document) -> tuple[int, int] | None:
    """The statement the minutes reproduce ("The vote also encompassed approval of the statement
    below …: "…""), else the minutes' policy-action section."""
    m = STATEMENT_IN_MINUTES_RE.search(doc.text)
    if m:
        close = re.search(r"[\"”]\s*(?:\n|$)", doc.text[m.end():])
        end = m.end() + close.start() if close else len(doc.text)
        return m.end(), end
    for sec in doc.sections:
        if POLICY_SECTION_RE.match(sec.title.strip()):
            return sec.start, sec.end
    return None


def policy_section(doc: Document) -> tuple[int, int] | None:
    for sec in doc.sections:
        if POLICY_SECTION_RE.match(sec.title.strip()):
            return sec.start, sec.end
    return None


# -- dissents --------------------------------------------------------------------------------------

NAME = r"[A-Z][a-z]+(?:\s+[A-Z]\.)*(?:\s+[A-Z][A-Za-z'’-]+)+"
NAMES = rf"{NAME}(?:(?:,\s+and\s+|,\s+|\s+and\s+){NAME})*"
AGAINST_RE = re.compile(r"Voting against (?:the|this) (?:monetary policy )?action(?:\s+(?:were|was))?\s*:?\s*")
WHO_RE = re.compile(rf"(?P<names>{NAMES}),\s+who\s+")
CLAUSE_END_RE = re.compile(r"\.(?=\s|$)")
LIST_END_RE = re.compile(r"(?<!\b[A-Z])\.(?=\s|$)")  # a full stop, not a middle initial's
PREFER_VERB_RE = re.compile(
    rf"\bprefer\w*\s+(?:at this meeting\s+)?to\s+{VERB}\s+(?:the\s+)?(?:federal\s+funds\s+)?target\s+range"
    rf"|\bprefer\w*\s+(?P<nochange>no change)\s+(?:to|for|in)\s+the\s+(?:federal\s+funds\s+)?target\s+range",
    re.IGNORECASE,
)
BY_RE = re.compile(rf"\bby\s+{SIZE}", re.IGNORECASE)
TO_RANGE_RE = re.compile(rf"\b(?:to|at)\s+{RANGE.format('p')}", re.IGNORECASE)


def split_names(names: str) -> list[str]:
    return [n.strip() for n in re.split(r",\s+and\s+|,\s+|\s+and\s+", names) if n.strip()]


def _preferred(clause: str, before: RateRange | None) -> tuple[str, str, int | None]:
    """(preferred text, direction, signed change in bp vs ``before``) of a dissent clause."""
    at = re.search(r"\bprefer", clause, re.IGNORECASE)
    preferred = clause[at.start():] if at else clause
    m = PREFER_VERB_RE.search(clause)
    if not m:
        return preferred, "other", None
    if m.group("nochange"):
        return preferred, "hold", 0
    direction = VERB_DIRECTION[m.group("verb").lower()]
    if direction == "hold":
        return preferred, "hold", 0
    rest = clause[m.end():]
    sign = 1 if direction == "raise" else -1
    by = BY_RE.search(rest)
    if by:
        return preferred, direction, sign * size_bp(by.group("size"), by.group("unit"))
    to = TO_RANGE_RE.search(rest)
    if to and before is not None:
        return preferred, direction, bp(parse_number(to.group("p_lo")), before.low)
    return preferred, direction, None


def find_dissents(doc: Document, region: tuple[int, int],
                  before: RateRange | None) -> tuple[list[Dissent], Span | None]:
    """Dissents from the "Voting against …" sentence in ``region``, and that sentence's span.
    Minutes list names only ("Voting against this action: NAME."): their ``preferred`` is ""."""
    text = doc.text
    m = AGAINST_RE.search(text, *region)
    if not m:
        return [], None
    para_end = text.find("\n\n", m.end())
    para_end = region[1] if para_end < 0 or para_end > region[1] else para_end
    groups = list(WHO_RE.finditer(text, m.end(), para_end))
    dissents: list[Dissent] = []
    last_end = m.end()
    if not groups:  # minutes: "Voting against this action: Esther L. George." / ": None."
        stop = LIST_END_RE.search(text, m.end(), para_end)
        end = stop.start() if stop else para_end
        listed = text[m.end():end].strip()
        if listed and listed.lower() != "none":
            for name in split_names(listed):
                if re.fullmatch(NAME, name):
                    at = text.find(name, m.end(), end)
                    dissents.append(Dissent(name, "", "other", None, Span(doc.doc_id, at, at + len(name))))
        last_end = end
    for i, g in enumerate(groups):
        limit = groups[i + 1].start() if i + 1 < len(groups) else para_end
        stop = CLAUSE_END_RE.search(text, g.end(), limit)
        end = stop.start() if stop else limit
        clause = text[g.end():end].rstrip()
        clause = re.sub(r"[;,]?\s*(?:and)?\s*$", "", clause)
        end = g.end() + len(clause)
        preferred, direction, change = _preferred(clause, before)
        for name in split_names(g.group("names")):
            dissents.append(Dissent(name, preferred, direction, change, Span(doc.doc_id, g.start(), end)))
        last_end = end
    return dissents, Span(doc.doc_id, m.start(), last_end)


VOTE_SECTION = "Vote record"  # the section an agent gives a meeting's vote passage (the votes skill reads it)
FOR_RE = re.compile(r"Voting for (?:the|this) (?:FOMC )?(?:monetary policy )?action(?:\s+(?:were|was))?\s*:?\s*")
TITLE_RE = re.compile(r",\s+(?:Vice\s+)?Chair(?:man|woman)?\s*[;,]?")  # "Jerome H. Powell, Chair;" ("Chair," once)


def listed_voters(listed: str) -> list[str]:
    """The names of a "Voting for …" list, titles dropped: "Jerome H. Powell, Chair; …; and Eric
    S. Rosengren" (statements, one voter per semicolon) or "Jerome H. Powell, John C. Williams, …,
    and Eric Rosengren" (minutes)."""
    listed = TITLE_RE.sub(";", listed)
    parts = listed.split(";") if ";" in listed else re.split(r",\s+and\s+|,\s+", listed)
    names = [re.sub(r"^and\s+", "", p.strip()) for p in parts]
    return [n for n in names if re.fullmatch(NAME, n)]


def list_after(opening: re.Pattern, text: str, start: int = 0,
               end: int | None = None) -> tuple[re.Match, re.Match | None] | None:
    """The first ``opening`` of a list of names in ``text[start:end]`` ("Voting for this action:")
    and the full stop that closes the list (None: the list runs to ``end``); a middle initial's
    full stop does not close it."""
    end = len(text) if end is None else end
    m = opening.search(text, start, end)
    return None if m is None else (m, LIST_END_RE.search(text, m.end(), end))


def find_voters(doc: Document, region: tuple[int, int]) -> tuple[list[str], Span | None]:
    """Who voted for the action, from the "Voting for …" sentence in ``region``, and that sentence's span."""
    found = list_after(FOR_RE, doc.text, *region)
    if found is None:
        return [], None
    m, stop = found
    listed = doc.text[m.end():stop.start() if stop else region[1]]
    return listed_voters(listed), Span(doc.doc_id, m.start(), stop.end() if stop else region[1])


def vote_record_span(doc: Document, decision: "Decision") -> Span | None:
    """The text that records a decision's vote: from its "Voting for …" sentence through the
    "Voting against …" one and the rest of that paragraph ("Absent and not voting was …")."""
    spans = [s for s in (decision.voters_span, decision.dissent_span) if s is not None and s.doc_id == doc.doc_id]
    if not spans:
        return None
    start, end = min(s.start for s in spans), max(s.end for s in spans)
    para_end = doc.text.find("\n\n", end)
    return Span(doc.doc_id, start, len(doc.text) if para_end < 0 else para_end)


# -- balance-sheet actions -------------------------------------------------------------------------

FORWARD_RE = re.compile(
    r"\b(?:expects?|anticipates?|judges?|may soon|will likely|would likely|indicated that it would)\b", re.I)
CONTINUE_RE = re.compile(r"\bcontinu(?:e|es|ing)\b", re.IGNORECASE)
_HOLDINGS = r"\s+(?:of|in)\s+its\s+[^.]*\bholdings\b"
# (action, pattern), first match wins; "taper" is resolved against the earlier meetings' state
BS_RULES: list[tuple[str, re.Pattern]] = [(action, re.compile(pattern, re.IGNORECASE)) for action, pattern in [
    ("purchases_ended", r"\bpurchases\b[^.]*\bto an end\b"
                        r"|\b(?:end|conclude|cease)\s+(?:its\s+|the\s+)?(?:net\s+)?asset\s+purchases\b"),
    ("runoff_ended", r"\b(?:conclude|end|stop|cease)\s+the\s+(?:reduction|decline|runoff)" + _HOLDINGS),
    ("runoff_slowed", r"\bslow\w*\s+the\s+pace\s+of\s+(?:decline|reduction)" + _HOLDINGS),
    ("taper", r"\breduc\w*\s+the\s+(?:monthly\s+)?pace\s+of\s+(?:its\s+)?(?:net\s+)?asset\s+purchases\b"),
    ("runoff_begun", r"\bbegin\s+(?:reducing|to\s+reduce)\s+its\s+holdings\s+of\b"),
    ("purchases_increased", r"\binclude\s+purchases\s+of\b"),
    ("reserve_purchases_begun", r"\bpurchase\s+Treasury\s+bills\b[^.]*\breserve"),
    ("purchases_begun", r"\bincrease\s+(?:its|the\s+[^.]{0,60}?)\s+holdings\s+of\s+[^.]*?\bby\s+at\s+least\s+\$"),
]]
DOLLARS_RE = re.compile(r"\$(\d+(?:\.\d+)?)\s*billion")


@dataclass
class _BalanceSheetState:
    purchasing: bool = False
    tapering: bool = False
    taper_step: float | None = None  # $ billion per month of the last pace reduction


def find_balance_sheet(doc: Document, region: tuple[int, int], state: _BalanceSheetState) -> list[BalanceSheetAction]:
    """The balance-sheet actions of one decision text. Sentences are read against the state the
    earlier meetings left (``state``, updated in place once the whole text is read): a statement
    that ends purchases and gives the last month's pace in the same breath begins nothing."""
    text = doc.text
    found: dict[str, BalanceSheetAction] = {}
    was = _BalanceSheetState(state.purchasing, state.tapering, state.taper_step)
    for s, e in sentences(text, *region):
        sent = text[s:e]
        if FORWARD_RE.search(sent):
            continue
        for action, pattern in BS_RULES:
            if not pattern.search(sent):
                continue
            if action != "purchases_ended" and CONTINUE_RE.search(sent):
                break
            if action == "taper":
                amounts = [float(x) for x in DOLLARS_RE.findall(sent)]
                step = amounts[0] if amounts else None
                if re.search(r"\bbegin\b", sent, re.I) or not was.tapering:
                    action = "taper_begun"
                elif step is not None and was.taper_step is not None and step != was.taper_step:
                    action = "taper_accelerated" if step > was.taper_step else "taper_slowed"
                else:
                    break  # the same taper going on
                state.tapering, state.taper_step = True, step
            elif action == "purchases_begun":
                if was.purchasing:
                    break  # a pace detail of purchases already under way
                state.purchasing = True
            elif action == "purchases_ended":
                state.purchasing, state.tapering, state.taper_step = False, False, None
            found.setdefault(action, BalanceSheetAction(action, sent, Span(doc.doc_id, s, e)))
            break
    return list(found.values())


BALANCE_SHEET_SECTION = "Balance-sheet action"  # the section an agent gives an action's passage (fedlab.skills.balance_sheet)
# a sentence that details an action (what the Committee buys or lets run off each month, the caps,
# the reinvestments): an amount of holdings, purchases or redemptions, or a reinvestment
DETAIL_RE = re.compile(r"\b(?:holdings|purchases|redemption\s+caps?)\b[^.]*\$\d|\breinvest\w*", re.I)


def balance_sheet_span(doc: Document, action: BalanceSheetAction) -> Span:
    """The text that states a balance-sheet action: its sentence and the sentences right after it
    in its paragraph that detail it (DETAIL_RE: "Beginning in February, the Committee will increase
    its holdings … by at least $20 billion per month …", "… maintain the monthly redemption cap on
    agency debt … at $35 billion"); a forward-looking or continuing sentence ends it."""
    text, end = doc.text, action.span.end
    para_end = text.find("\n\n", end)
    for s, e in sentences(text, end, len(text) if para_end < 0 else para_end):
        sent = text[s:e]
        if FORWARD_RE.search(sent) or CONTINUE_RE.search(sent) or not DETAIL_RE.search(sent):
            break
        end = e
    return Span(doc.doc_id, action.span.start, end)


# -- scheduled or not ------------------------------------------------------------------------------

MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
NEXT_MEETING_RE = re.compile(
    rf"next meeting of the Committee would be held on (?:[A-Z][a-z]+{_DASH}[A-Z][a-z]+,\s+)?"
    rf"(?P<m1>{MONTHS})\s+(?P<d1>\d{{1,2}})(?:{_DASH}(?:(?P<m2>{MONTHS})\s+)?(?P<d2>\d{{1,2}}))?,\s+(?P<y>\d{{4}})"
)
CONTINUED_RE = re.compile(
    rf"\band continued on (?:[A-Z][a-z]+,\s+)?(?P<m>{MONTHS})\s+(?P<d>\d{{1,2}}),\s+(?P<y>\d{{4}})"
)
UNSCHEDULED_RE = re.compile(r"\bunscheduled\b", re.IGNORECASE)
NOTATION_RE = re.compile(r"\bnotation vote\b|\bVoting \(by notation\)", re.IGNORECASE)


def _iso(month: str, day: str, year: str) -> str:
    return datetime.strptime(f"{month} {day} {year}", "%B %d %Y").date().isoformat()


def scheduled_evidence(minutes: list[Document]) -> dict[str, Span]:
    """Decision date → the sentence that shows it was a scheduled meeting: an announcement in an
    earlier set of minutes, or the opening of its own minutes when they span two days."""
    found: dict[str, Span] = {}
    for doc in minutes:
        head = doc.text[:2000]
        c = CONTINUED_RE.search(head)
        if c:
            found.setdefault(_iso(c["m"], c["d"], c["y"]), Span(doc.doc_id, c.start(), c.end()))
        for m in NEXT_MEETING_RE.finditer(doc.text):
            month = m["m2"] or m["m1"]
            day = m["d2"] or m["d1"]
            found[_iso(month, day, m["y"])] = Span(doc.doc_id, m.start(), m.end())
    return found


# -- the timeline ----------------------------------------------------------------------------------


def _opening(doc: Document) -> tuple[int, int]:
    """The minutes' opening paragraph (where an unscheduled meeting would say so)."""
    at = doc.text.find("A joint meeting")
    at = 0 if at < 0 else at
    end = doc.text.find("\n", at)
    return at, len(doc.text) if end < 0 else end


def build_timeline(documents: Iterable[Document]) -> Timeline:
    docs = sorted(documents, key=lambda d: (d.meeting_date, d.doc_type))
    by_date: dict[str, list[Document]] = {}
    for d in docs:
        by_date.setdefault(d.meeting_date, []).append(d)
    evidence = scheduled_evidence([d for d in docs if d.doc_type == "minutes"])
    records = recorded_regions(docs)
    state = _BalanceSheetState()
    previous: Decision | None = None
    meetings: list[Meeting] = []
    for date in sorted(by_date):
        group = by_date[date]
        statement = next((d for d in group if d.doc_type == "statement"), None)
        minutes = next((d for d in group if d.doc_type == "minutes"), None)
        label = next((d.meeting for d in group if d.meeting), None)
        notes: list[str] = []

        # scheduled?
        unscheduled_span = None
        for d in group:
            region = _opening(d) if d.doc_type == "minutes" else (0, len(d.text))
            u = UNSCHEDULED_RE.search(d.text, *region)
            if u:
                unscheduled_span = Span(d.doc_id, u.start(), u.end())
                break
        label_says = bool(label and re.search(r"unscheduled|notation vote", label, re.I))
        notation_span = None
        if statement is not None and (n := NOTATION_RE.search(statement.text)):
            notation_span = Span(statement.doc_id, n.start(), n.end())
        notation = notation_span is not None or bool(label and re.search(r"notation vote", label, re.I))
        sched_span = evidence.get(date)
        scheduled = sched_span is not None and unscheduled_span is None and not label_says and not notation
        if not scheduled:
            sched_span = None

        # the decision
        decision = None
        if statement is not None:
            found = find_decision(statement.text)
            source_doc, source = statement, "statement"
            if found is None:
                notes.append(f"{statement.doc_id}: no policy decision sentence or directive — not a policy decision")
        elif minutes is not None:
            region = statement_region_in_minutes(minutes)
            found = find_decision(minutes.text, region) if region else None
            source_doc, source = minutes, "minutes"
            if found is None:
                notes.append(f"{minutes.doc_id}: no statement in the corpus and no decision in the minutes")
        else:  # pragma: no cover — every date has a document
            found = None
        if found is not None:
            decision = _decision(source_doc, source, found, previous, state, notes)
            previous = decision
        meetings.append(Meeting(
            date=date, documents=[d.doc_id for d in group], label=label, scheduled=scheduled,
            scheduled_span=sched_span, notation_vote=notation, notation_span=notation_span,
            is_decision=decision is not None, decision=decision, notes=notes,
            administered=find_administered(
                ([(minutes, policy_section(minutes))] if minutes is not None else []) + records.get(date, [])
                + ([(statement, (0, len(statement.text)))] if statement is not None else [])),
        ))
    return Timeline(meetings)


def rates_set_in(text: str, start: int = 0, end: int | None = None,
                 rates: Iterable[str] = ADMINISTERED_RATES) -> dict[str, tuple[re.Match, tuple[int, int]]]:
    """rate -> (the first clause of ``text[start:end]`` that sets it, within one sentence; that
    sentence's span), for each of ``rates`` set there."""
    found: dict[str, tuple[re.Match, tuple[int, int]]] = {}
    for s, e in sentences(text, start, end):
        for rate in rates:
            if rate not in found and (m := ADMINISTERED_RATES[rate][1].search(text, s, e)):
                found[rate] = (m, (s, e))
    return found


def recorded_regions(docs: list[Document]) -> dict[str, list[tuple[Document, tuple[int, int]]]]:
    """Meeting date -> the minutes sections that record it in another meeting's minutes, as
    (document, section span), in document order (fedlab.corpus.recorded)."""
    by_id = {d.doc_id: d for d in docs}
    out: dict[str, list[tuple[Document, tuple[int, int]]]] = {}
    for doc_id, titles in recorded_meetings(docs).items():
        doc = by_id[doc_id]
        for sec in doc.sections:
            if sec.title in titles:
                out.setdefault(titles[sec.title], []).append((doc, (sec.start, sec.end)))
    return out


def find_administered(regions: list[tuple[Document, tuple[int, int] | None]]) -> list[AdministeredRate]:
    """The administered rates a meeting's implementation note sets (module docstring), read in
    each (document, region) in the order given; a region of None is skipped."""
    found: dict[str, AdministeredRate] = {}
    for doc, region in regions:
        if region is None:
            continue
        missing = [rate for rate in ADMINISTERED_RATES if rate not in found]
        for rate, (m, (s, e)) in rates_set_in(doc.text, *region, rates=missing).items():
            found[rate] = AdministeredRate(rate, float(m.group("value")), Span(doc.doc_id, m.start("value"), m.end()),
                                           Span(doc.doc_id, s, e))
    return [found[rate] for rate in ADMINISTERED_RATES if rate in found]


def _decision(doc: Document, source: str, found: _Found, previous: Decision | None,
              state: _BalanceSheetState, notes: list[str]) -> Decision:
    m, text, did = found.match, doc.text, doc.doc_id
    after = _rate_range(m, "to", did)
    verb = m.group("verb")
    stated = VERB_DIRECTION[verb.lower()]
    s, e = _sentence_at(text, m.start(), found.region)
    size_span = stated_bp = None
    if found.via == "decision_sentence" and m.group("size"):
        size_span = Span(did, m.start("size"), m.end("unit"))
        stated_bp = size_bp(m.group("size"), m.group("unit"))
    prev_after = previous.after if previous else None
    if found.via == "decision_sentence" and m.group("frm_lo"):
        before, before_source = _rate_range(m, "frm", did), "text"
    elif stated == "hold":
        before, before_source = RateRange(after.low, after.high, after.span), "text"
    elif prev_after is not None:
        before, before_source = RateRange(prev_after.low, prev_after.high, prev_after.span), "previous_meeting"
    elif stated_bp is not None:
        sign = 1 if stated == "raise" else -1
        delta = sign * stated_bp / 100
        before = RateRange(round(after.low - delta, 4), round(after.high - delta, 4), size_span)
        before_source = "stated_change"
    else:
        before, before_source = None, None
    if before is not None and prev_after is not None and before_source == "text" and not before.same(prev_after):
        notes.append(f"range before ({before.label()}) differs from the previous decision's range after "
                     f"({prev_after.label()})")
    change = bp(after.low, before.low) if before is not None else None
    direction = stated
    if change is not None:
        actual = "raise" if change > 0 else "cut" if change < 0 else "hold"
        if actual != stated:
            notes.append(f"the text says {verb!r} but the range went {before.label()} → {after.label()}")
            direction = actual
    if stated_bp is not None and change is not None and abs(change) != stated_bp:
        notes.append(f"stated change {stated_bp} bp differs from the ranges' {change} bp")
    # minutes list the votes after the statement they reproduce, in the policy-action section
    vote_region = (policy_section(doc) if source == "minutes" else None) or found.region
    dissents, dissent_span = find_dissents(doc, vote_region, before)
    voters, voters_span = find_voters(doc, vote_region)
    return Decision(
        source=source, via=found.via, sentence=Span(did, s, e), direction=direction,
        direction_span=Span(did, m.start("verb"), m.end("verb")), after=after, before=before,
        before_source=before_source, change_bp=change, size_bp=abs(change) if change is not None else stated_bp,
        size_span=size_span, dissents=dissents, dissent_span=dissent_span, voters=voters, voters_span=voters_span,
        balance_sheet=find_balance_sheet(doc, found.region, state),
    )


# -- cached ----------------------------------------------------------------------------------------


def timeline_key(corpus) -> str:
    from fedlab.cache import content_key

    return content_key("timeline", corpus.content_hash, TIMELINE_VERSION)


# -- display ---------------------------------------------------------------------------------------

TABLE_COLUMNS = ("date", "scheduled", "range (before → after)", "change", "vote: dissents", "balance sheet",
                 "IORB / ON RRP / primary credit %")


def table_row(meeting: Meeting) -> tuple[str, ...]:
    """One meeting as the CLI's table shows it (strings, in :data:`TABLE_COLUMNS` order)."""
    kind = "yes" if meeting.scheduled else "notation vote" if meeting.notation_vote else "no"
    stated = {a.rate: f"{a.percent:.2f}" for a in meeting.administered}
    rates = " / ".join(stated.get(rate, "—") for rate in ADMINISTERED_RATES) if stated else ""
    d = meeting.decision
    if d is None:
        return meeting.date, kind, "—", "not a decision", "", "", rates
    before = d.before.label() if d.before else "?"
    change = "hold" if d.direction == "hold" else f"{d.direction} {abs(d.change_bp or 0)} bp"
    def dissent(x: Dissent) -> str:
        bps = x.preferred_change_bp
        size = "" if bps is None or x.preferred_direction == "hold" else f" {abs(bps)} bp"
        return f"{x.name.split()[-1]} ({x.preferred_direction}{size})"

    vote = f"{len(d.voters)}–{len(d.dissents)}" if d.voters_span is not None else ""
    dissents = ": ".join(x for x in (vote, "; ".join(dissent(x) for x in d.dissents)) if x)
    return (meeting.date, kind, f"{before} → {d.after.label()}", change, dissents,
            ", ".join(a.action for a in d.balance_sheet), rates)

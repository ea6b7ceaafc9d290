"""Deterministic date-hint parser: the date range (and its scope) a question asks about.

Contract and design notes: docs/meeting-aware-retrieval.md#design-notes-fedlabretrievaldatespy.
"""
from __future__ import annotations

import calendar
import functools
import re
from dataclasses import dataclass
from datetime import date, timedelta

from fedlab.retrieval.types import DateHint

MONTHS = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
    "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
}
_MON = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
        r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)(?![a-z])\.?")
MONTH_WORD = _MON  # a month as written, in full or abbreviated ("Sept."); case left to the caller
_FULL_MON = r"(?:January|February|March|April|May|June|July|August|September|October|November|December)"
# after a year's digits: not more number characters, not an amount or a rate
_NOT_AMOUNT = r"(?![\w%]|[.,]\d|\s*(?:percent|per cent|pct|basis|bps?|billion|million|trillion|thousand|dollars)\b)"
# dates written in numbers alone, as the parser reads them: "2024-01-31", "12/14/2022" or "12/14/22", "'22"
_ISO_DATE = r"\b(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})\b"
_NUMERIC_DAY = r"(?<![\w/.$-])(?P<a>\d{1,2})/(?P<b>\d{1,2})/(?P<y>[12]\d\d\d|\d\d)(?![\w/%]|[.,]\d)"
_SHORT_YEAR = r"(?<![\w'’])['’](?P<y>\d\d)" + _NOT_AMOUNT
# the same, unnamed and in one pattern: tokens no passage holds, so not terms a passage should match
NUMERIC_DATES = re.compile("|".join(re.sub(r"\?P<\w+>", "?:", pattern)
                                    for pattern in (_ISO_DATE, _NUMERIC_DAY, _SHORT_YEAR)))
# A year: any of four digits, 1000-2999 (the corpus's span decides what is covered, not the parser),
# not glued to other number characters, not an amount or a rate.
_YEAR_CORE = r"(?:[12]\d\d\d)" + _NOT_AMOUNT
_YEAR = r"(?<![\w$.,/€£-])" + _YEAR_CORE  # standalone: not glued to a preceding number or sign
_ORD = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}
_PART = {"early": (1, 4), "beginning of": (1, 4), "start of": (1, 4), "mid": (5, 8), "middle of": (5, 8),
         "late": (9, 12), "end of": (9, 12)}
# the northern-hemisphere seasons by month; winter straddles two years and is left to the year alone
SEASONS = {"spring": (3, 5), "summer": (6, 8), "fall": (9, 11), "autumn": (9, 11)}
# A month followed by one of these names a meeting ("the July 2019 rate cut", "the December 2023 dot plot").
_MEETING_AFTER = re.compile(
    r"^\s*,?\s*(?:fomc\s+|committee\s+|policy\s+|monetary\s+policy\s+|rate\s+|quarter-point\s+|"
    r"half-point\s+|\d+\s+basis\s+point\s+)?(?:meeting|minutes|statement|decision|press\s+release|"
    r"press\s+conference|cut|hike|increase|reduction|dot\s+plot|projections|summary\s+of\s+economic|sep\b)", re.I)
_MEETING_BEFORE = re.compile(
    r"(?:meeting|minutes|statement|decision)s?\s+(?:held\s+|released\s+|issued\s+)?(?:in|of|from|on|at)"
    r"\s+(?:the\s+)?$", re.I)
_AND_GAP = re.compile(r"^\s*(?:and|&)\s+(?:the\s+)?$", re.I)
# "2021 to 2022", "March 2020 - June 2021", "the March 2020 cut through the end of 2021"
_TO_GAP = re.compile(r"^\s*(?:(?:[\w'-]+\s+){0,2}(?:to|through|thru|until|till)\s+|[-–—]\s*)(?:the\s+)?$", re.I)
# "the directive effective October 15": the decision (or notation vote) came a few days earlier
_EFFECTIVE = re.compile(r"\b(?:effective|(?:took|take|takes|taking)\s+effect)\s+(?:on\s+|as\s+of\s+)?$", re.I)
EFFECTIVE_LAG_DAYS = 5
_BETWEEN = re.compile(r"\bbetween\s+(?:the\s+)?$", re.I)
_BETWEEN_UNDATED = re.compile(r"\bbetween\b.*\band\s+(?:the\s+)?$", re.I | re.S)  # "between the pandemic and 2021"
_SINCE = re.compile(r"\b(since|after|before|prior\s+to)\s+(?:the\s+)?$", re.I)
_FROM = re.compile(r"\bfrom\s+(?:the\s+)?$", re.I)
_YEARLY = ("year", "range", "part")  # atoms at year level (not a month or a day)
# year-to-date: "by September 2022", "by its September 2022 meeting", "as of March 2023", "through June 2021",
# "in 2025 up to the October meeting", "until June 2021"
_YTD = re.compile(r"\b(by|as\s+of|through|thru|up\s+to|(?:up\s+)?(?:until|till))\s+(?:(?:its|the)\s+)?$", re.I)
# a month that names a document or an action, not a moment: "signalled by the March 2022 statement"
_NOT_MOMENT_AFTER = re.compile(
    r"^\s*,?\s*(?:fomc\s+|committee\s+|policy\s+|monetary\s+policy\s+|rate\s+|quarter-point\s+|"
    r"half-point\s+|\d+\s+basis\s+point\s+)?(?:minutes|statement|decision|press\s+release|press\s+conference|"
    r"cut|hike|increase|reduction|dot\s+plot|projections|summary\s+of\s+economic|sep\b)", re.I)
# course of a year: "over 2023", "during 2022", "throughout the year 2021", "so far in 2024"
_WHOLE_YEAR = re.compile(r"\b(?:over|during|across|throughout|(?:over|in)\s+the\s+course\s+of|"
                         r"(?P<sofar>so\s+far(?:\s+in)?))\s+(?:the\s+(?:calendar\s+)?year\s+)?$", re.I)
_ONWARD = re.compile(r"^\s*(?:on(?:ward)?s?|forward|and\s+(?:later|after))\b", re.I)


@dataclass
class _Atom:
    start: int
    end: int
    lo: date | None = None
    hi: date | None = None
    kind: str = "year"  # day | month | part | year | range
    meeting: bool = False
    year: int | None = None  # None until a year-less atom borrows one
    months: tuple[int, int] | None = None  # month span for year-less atoms, resolved with a year
    lent: bool = False  # a bare year that gave its year to a year-less atom
    whole: bool = False  # a year named as a whole ("over 2023"): a target, never a context
    impossible: str | None = None  # a day that does not exist: why ("2021 has no February 29"); no range

    def resolve(self, year: int) -> None:
        self.year = year
        m1, m2 = self.months
        self.lo, self.hi = date(year, m1, 1), _month_end(year, m2)


def _month_end(year: int, month: int) -> date:
    return date(year, month, calendar.monthrange(year, month)[1])


def month_number(word: str) -> int:
    """The month (1-12) a MONTH_WORD names."""
    return MONTHS[word.lower().rstrip(".")[:3]]


def _safe_date(y: int, m: int, d: int) -> date | None:
    try:
        return date(y, m, d)
    except ValueError:
        return None


class _Scanner:
    """Finds atoms in ``text``, blanking each match so its characters are not matched again."""

    def __init__(self, text: str):
        self.text = text
        self.masked = text
        self.atoms: list[_Atom] = []

    def scan(self, pattern: str, make, flags=re.I) -> None:
        for m in list(re.finditer(pattern, self.masked, flags)):
            atom = make(m)
            if atom is None:
                continue
            atom.start, atom.end = m.start(), m.end()
            self.atoms.append(atom)
            self.masked = self.masked[:m.start()] + " " * (m.end() - m.start()) + self.masked[m.end():]


def _months_atom(m1: int, m2: int, year: str | None, kind: str = "part") -> _Atom:
    a = _Atom(0, 0, kind=kind, months=(m1, m2))
    if year:
        a.resolve(int(year))
    return a


def _quarter(m) -> _Atom:
    q = int(m["q"]) if m["q"] else _ORD[m["qw"].lower()]
    return _months_atom(3 * q - 2, 3 * q, m["y"])


def _half(m) -> _Atom:
    h = int(m["h"]) if m["h"] else _ORD[m["hw"].lower()]
    return _months_atom(1, 6, m["y"]) if h == 1 else _months_atom(7, 12, m["y"])


def _part(m) -> _Atom:
    word = re.sub(r"^the\s+", "", re.sub(r"\s+", " ", m["p"].lower()))
    return _months_atom(*_PART[word], m["y"])


def _no_such_day(y: int | None, m: int, d: int) -> str | None:
    """Why day ``d`` of month ``m`` (of year ``y``; None: of any year) does not exist, or None."""
    if not 1 <= m <= 12:
        return f"there is no month {m}"
    if y is not None and y < 1:
        return "there is no year 0"
    last = calendar.monthrange(y if y is not None else 2000, m)[1]  # 2000: a leap year
    if 1 <= d <= last:
        return None
    month = calendar.month_name[m]
    if d == 29 and m == 2:
        return f"{y} has no February 29 (not a leap year)"
    return f"{month} has {last} days" if y is None or m != 2 else f"February {y} has {last} days"


def _impossible(why: str) -> _Atom:
    return _Atom(0, 0, kind="impossible", impossible=why)


def _iso(m) -> _Atom:
    y, mo, d = int(m["y"]), int(m["m"]), int(m["d"])
    why = _no_such_day(y, mo, d)
    return _impossible(why) if why else _Atom(0, 0, date(y, mo, d), date(y, mo, d), "day", year=y)


def _days(m) -> _Atom | None:
    y, m1 = int(m["y"]), month_number(m["m1"])
    m2 = month_number(m["m2"]) if m["m2"] else m1
    why = _no_such_day(y, m1, int(m["d1"])) or (_no_such_day(y, m2, int(m["d2"])) if m["d2"] else None)
    if why:
        return _impossible(why)
    d1 = date(y, m1, int(m["d1"]))
    d2 = date(y, m2, int(m["d2"])) if m["d2"] else d1
    if d2 < d1:
        return None
    return _Atom(0, 0, d1, d2, "day", year=y)


def _monthday(m) -> _Atom | None:
    """A month and a day with no year, when the day exists in no year ("April 31", "February 30")."""
    why = _no_such_day(None, month_number(m["m"]), int(m["d"]))
    return _impossible(why) if why and int(m["d"]) >= 1 else None


def _century(yy: str) -> int:
    """A two-digit year in the parser's span of years, 1950-2069: '22 is 2022, '08 is 2008."""
    return 2000 + int(yy) if int(yy) < 70 else 1900 + int(yy)


def _numeric_day(m) -> _Atom:
    """12/14/2022 or 12/14/22 (month first, as US usage writes it); 14/12/2022, whose first number
    cannot be a month, day first. Neither way a day (2/30/2021, 13/13/2022): impossible."""
    a, b = int(m["a"]), int(m["b"])
    y = int(m["y"]) if len(m["y"]) == 4 else _century(m["y"])
    month, day = (a, b) if a <= 12 else (b, a)
    why = _no_such_day(y, month, day)
    return _impossible(why) if why else _Atom(0, 0, date(y, month, day), date(y, month, day), "day", year=y)


def _season(m) -> _Atom:
    return _months_atom(*SEASONS[m["s"].lower()], m["y"])


def _year_range(m) -> _Atom | None:
    y1, tail = int(m["y1"]), m["y2"]
    y2 = int(tail) if len(tail) == 4 else (y1 // 100) * 100 + int(tail)
    if y2 <= y1:
        return None
    return _Atom(0, 0, date(y1, 1, 1), date(y2, 12, 31), "range", year=y1)


def _year_atom(y: int) -> _Atom:
    return _Atom(0, 0, date(y, 1, 1), date(y, 12, 31), "year", year=y)


def _year(m) -> _Atom:
    return _year_atom(int(m.group()))


def _first_to_last(m) -> _Atom:
    """"from the first meeting (of 2023) to the last (of 2023)": the whole year(s)."""
    y1, y2 = m["y"] or m["y2"], m["y2"] or m["y"]
    if y1 and int(y2) > int(y1):
        return _Atom(0, 0, date(int(y1), 1, 1), date(int(y2), 12, 31), "range", year=int(y1), whole=True)
    a = _months_atom(1, 12, y1, "year")
    a.whole = True
    return a


_Y = _YEAR
_OF_YEAR = rf"(?:\s*,?\s*(?:of|in)\s+(?:the\s+(?:calendar\s+)?year\s+)?(?P<{{}}>{_Y}))?"
_PATTERNS = [  # (regex, atom maker, flags); order matters: longer forms first
    (r"\bfrom\s+the\s+(?:year'?s\s+)?first\s+(?:fomc\s+)?meeting" + _OF_YEAR.format("y")
     + r"\s*,?\s*(?:to|through|thru|until|till)\s+the\s+(?:year'?s\s+)?last(?:\s+(?:fomc\s+)?(?:meeting|one))?"
     + _OF_YEAR.format("y2"), _first_to_last, re.I),
    (_ISO_DATE, _iso, re.I),
    (_NUMERIC_DAY, _numeric_day, re.I),
    (rf"\b(?P<m1>{_MON})\s+(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?(?:\s*(?:-|–|to|and)\s*(?:(?P<m2>{_MON})\s+)?"
     rf"(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?)?,?\s+(?P<y>{_Y})", _days, re.I),
    (rf"\b(?P<m>{_MON})\s+(?P<d>[23]\d)(?:st|nd|rd|th)?\b(?!\s*(?:percent|per cent|pct|basis|bps?)\b)",
     _monthday, re.I),
    (rf"(?P<y1>{_Y})\s*(?:-|–|—|/)\s*(?P<y2>(?:19|20)\d\d|\d\d)(?![\w%]|[.,]\d)", _year_range, re.I),
    (rf"(?P<y>{_Y})\s*:?\s*q(?P<q>[1-4])(?P<qw>)\b", _quarter, re.I),
    (rf"\b(?P<q>[1-4])q(?P<qw>)\s*(?P<y>{_Y})", _quarter, re.I),
    (rf"\b(?:q(?P<q>[1-4])|(?P<qw>first|second|third|fourth|1st|2nd|3rd|4th)\s+quarter)"
     rf"(?:\s*,?\s*(?:of\s+)?(?:the\s+year\s+)?(?P<y>{_Y}))?", _quarter, re.I),
    (rf"(?P<y>{_Y})\s*h(?P<h>[12])(?P<hw>)\b", _half, re.I),
    (rf"\b(?:h(?P<h>[12])|(?P<hw>first|second|1st|2nd)\s+half)"
     rf"(?:\s*,?\s*(?:of\s+)?(?:the\s+year\s+)?(?P<y>{_Y}))?", _half, re.I),
    (rf"\b(?P<p>early|mid|late|(?:the\s+)?(?:beginning|start|middle|end)\s+of)[-\s]+(?:the\s+year\s+)?"
     rf"(?:in\s+)?(?P<y>{_YEAR_CORE})", _part, re.I),
    (rf"\b(?P<s>spring|summer|fall|autumn)\s+(?:of\s+)?(?:the\s+year\s+)?(?P<y>{_YEAR_CORE})", _season, re.I),
    (rf"\b(?P<m>{_MON})\s*,?\s*(?:of\s+)?(?P<y>{_Y})",
     lambda m: _months_atom(month_number(m["m"]), month_number(m["m"]), m["y"], "month"), re.I),
    # a year written with an apostrophe: "June '22", "the '22 hikes"
    (rf"\b(?P<m>{_MON})\s*,?\s*['’](?P<y>\d\d)" + _NOT_AMOUNT,
     lambda m: _months_atom(month_number(m["m"]), month_number(m["m"]), str(_century(m["y"])), "month"), re.I),
    (_SHORT_YEAR, lambda m: _year_atom(_century(m["y"])), re.I),
]


def _atoms(text: str, today: date) -> list[_Atom]:
    s = _Scanner(text)
    for pattern, make, flags in _PATTERNS:
        s.scan(pattern, make, flags)

    def bare_month(m):
        if m.group() == "May" and not text[:m.start()].strip():
            return None  # "May the Committee ..." opening a question
        return _months_atom(month_number(m.group()), month_number(m.group()), None, "month")

    def relative(m):
        y = today.year - (m["w"].lower() != "this")
        return _Atom(0, 0, date(y, 1, 1), date(y, 12, 31), "year", year=y)

    s.scan(rf"\b{_FULL_MON}\b", bare_month, 0)
    s.scan(_Y, _year)
    s.scan(r"\b(?P<w>this|last)\s+year\b", relative)
    atoms = sorted(s.atoms, key=lambda a: a.start)
    for a in atoms:
        if a.impossible:
            continue
        if a.kind == "day":
            a.meeting = True
            if _EFFECTIVE.search(text[:a.start]):
                a.lo -= timedelta(days=EFFECTIVE_LAG_DAYS)
        elif a.kind == "month":
            a.meeting = bool(_MEETING_AFTER.match(text[a.end:]) or _MEETING_BEFORE.search(text[:a.start]))
        elif a.kind == "year" and _WHOLE_YEAR.search(text[:a.start]):
            a.whole = True
    return atoms


def _lend_years(atoms: list[_Atom]) -> list[_Atom]:
    """Year-less atoms take the year of the nearest dated atom (right first); else they are dropped."""
    out = []
    for i, a in enumerate(atoms):
        if a.year is not None:
            out.append(a)
            continue
        donor = next((b for b in atoms[i + 1:] if b.year is not None), None)
        if donor is None:
            donor = next((b for b in reversed(atoms[:i]) if b.year is not None), None)
        if donor is None:
            continue
        a.resolve(donor.year)
        if donor.kind == "year" and not donor.whole:
            donor.lent = True
        out.append(a)
    return [a for a in out if not a.lent]


@dataclass
class _Segment:
    lo: date | None
    hi: date | None
    start: int
    end: int
    atoms: list[_Atom]
    open_range: bool = False
    ranged: bool = False  # a range read from words around one atom ("by September 2022": Jan-Sep)


def _segments(atoms: list[_Atom], text: str, today: date) -> list[_Segment]:
    segs: list[_Segment] = []
    i = 0
    while i < len(atoms):
        a = atoms[i]
        before = text[:a.start]
        nxt = atoms[i + 1] if i + 1 < len(atoms) else None
        gap = text[a.end:nxt.start] if nxt else None
        if nxt and (_TO_GAP.match(gap) or (_AND_GAP.match(gap) and _BETWEEN.search(before))):
            lo, hi = min(a.lo, nxt.lo), max(a.hi, nxt.hi)
            segs.append(_Segment(lo, hi, a.start, nxt.end, [a, nxt]))
            i += 2
            continue
        since = _SINCE.search(before)
        if since and since.group(1).lower() != "since" and a.kind not in _YEARLY:
            since = None  # "after the July 2019 cut", "before the January 2020 meeting": that meeting
        prev_end = atoms[i - 1].end if i else 0
        ytd = _YTD.search(before) if a.kind == "month" and a.lo is not None else None
        if ytd and (_NOT_MOMENT_AFTER.match(text[a.end:]) or _EFFECTIVE.search(before[:ytd.end()])):
            ytd = None
        whole = _WHOLE_YEAR.search(before) if a.whole and a.kind == "year" else None
        if ytd:
            segs.append(_Segment(date(a.lo.year, 1, 1), a.hi, ytd.start(), a.end, [a], ranged=True))
        elif whole:  # "so far in 2024" ends today when 2024 is the current year
            hi = min(a.hi, max(a.lo, today)) if whole["sofar"] else a.hi
            segs.append(_Segment(a.lo, hi, whole.start(), a.end, [a], ranged=hi != a.hi))
        elif not since and _BETWEEN_UNDATED.search(text[prev_end:a.start]):
            segs.append(_Segment(None, a.hi, a.start, a.end, [a], open_range=True))
        elif since or (_FROM.search(before) and _ONWARD.match(text[a.end:])):
            word = since.group(1).lower() if since else "from"
            start = since.start() if since else a.start
            if word in ("since", "from"):
                segs.append(_Segment(a.lo, today, start, a.end, [a], open_range=True))
            elif word == "after":
                segs.append(_Segment(a.hi + timedelta(days=1), today, start, a.end, [a], open_range=True))
            else:  # before / prior to
                segs.append(_Segment(None, a.lo - timedelta(days=1), start, a.end, [a], open_range=True))
        else:
            segs.append(_Segment(a.lo, a.hi, a.start, a.end, [a]))
        i += 1
    return segs


def numeric_date_tokens(text: str, tokenize) -> set[str]:
    """The tokens (``tokenize``: a fedlab.index.tokens.Tokenizer) of the dates ``text`` writes in
    numbers alone."""
    return set(tokenize(" ".join(NUMERIC_DATES.findall(text))))


# the date expressions a hint's text holds; a move named by its date is the meeting, not a term
# to match ("the October 2019 cut")
_DATE_EXPRESSION = re.compile(
    NUMERIC_DATES.pattern + r"|\b[12]\d\d\ds?\b"
    r"|\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?"
    r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b\.?(?:\s+\d{1,2}(?:st|nd|rd|th)?\b)?|\bq[1-4]\b|\b[1-4]q\b"
    r"|(?<=\d\s)(?:(?:rate|policy|quarter-point|half-point)\s+)?(?:cut|hike|increase|reduction|decision)s?\b", re.I)


def date_expressions(hint: DateHint | None) -> str:
    """The date expressions of ``hint``'s text, joined: only these, since a range's text ("January
    2022, when did … February") holds the words between its two ends too."""
    return " ".join(m.group(0) for m in _DATE_EXPRESSION.finditer(hint.text)) if hint is not None and hint.text else ""


def question_dates(question: str) -> str:
    """The date expressions of the range ``question`` names (``date_expressions`` of its parsed
    hint): the range, not words a passage or a statement must hold."""
    return date_expressions(parse_date_hint(question))


def parse_date_hint(question: str, today: date | None = None) -> DateHint | None:
    """The date range ``question`` refers to, or None. ``today`` ends open ranges ("since 2023");
    pass the corpus end date to bound them by the data instead of the clock. An impossible date
    (``impossible_dates``) gives no range."""
    return _parsed(question, today or date.today())


def impossible_dates(question: str) -> list[tuple[str, str]]:
    """(the expression, why it is no day) for each date ``question`` writes that does not exist:
    "February 29 2021" ("2021 has no February 29 (not a leap year)"), "2/30/2021", "2021-02-30",
    "April 31" (a day no year has). Empty for a question whose dates all exist."""
    return _impossible_in(question)


@functools.lru_cache(maxsize=4096)
def _impossible_in(question: str) -> list[tuple[str, str]]:
    return [(question[a.start:a.end].strip(), a.impossible) for a in _atoms(question, date.today()) if a.impossible]


@functools.lru_cache(maxsize=4096)  # every config of a sweep parses the same questions; DateHint is frozen
def _parsed(question: str, today: date) -> DateHint | None:
    atoms = _lend_years([a for a in _atoms(question, today) if not a.impossible])
    if not atoms:
        return None
    segs = _segments(atoms, question, today)
    meetings = [a for a in atoms if a.meeting]
    if meetings:  # loose year-level mentions are then context ("the 2023 outlook")
        def whole_target(g: _Segment) -> bool:  # "during 2022, at the June meeting": the year is the target
            return (len(g.atoms) == 1 and g.atoms[0].whole
                    and all(g.atoms[0].lo <= m.lo and m.hi <= g.atoms[0].hi for m in meetings))

        segs = [g for g in segs if g.open_range or len(g.atoms) > 1 or g.atoms[0].kind not in _YEARLY
                or whole_target(g)] or segs
    lo = None if any(g.lo is None for g in segs) else min(g.lo for g in segs)
    hi = max(g.hi for g in segs)
    text = question[min(g.start for g in segs):max(g.end for g in segs)].strip()
    return DateHint(lo.isoformat() if lo else None, hi.isoformat(), _scope(segs, lo, hi), text)


def _scope(segs: list[_Segment], lo: date | None, hi: date) -> str:
    if len(segs) == 1 and len(segs[0].atoms) == 1 and not segs[0].open_range and not segs[0].ranged:
        atom = segs[0].atoms[0]
        if atom.meeting:
            return "meeting"
        if atom.kind == "month":
            return "month"
    if lo is None or (hi - lo).days > 366:
        return "multi_year"
    if lo.month == 1 and lo.day == 1 and hi == date(lo.year, 12, 31):
        return "year"
    return "span"

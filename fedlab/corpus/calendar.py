"""Discovery: which statements and minutes exist, from the FOMC calendar pages."""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from bs4 import BeautifulSoup

CALENDAR_PATH = "/monetarypolicy/fomccalendars.htm"
STATEMENT_RE = re.compile(r"/newsevents/pressreleases/monetary(\d{8})a\.htm$")
MINUTES_RE = re.compile(r"/monetarypolicy/fomcminutes(\d{8})\.htm$")
RELEASED_RE = re.compile(r"Released\s+([A-Z][a-z]+\.?\s+\d{1,2},\s+\d{4})")
YEAR_HEADING_RE = re.compile(r"(\d{4})\s+FOMC Meetings")
MEETING_LINE_RE = re.compile(r"^[A-Z][a-z]+ \d{1,2}(?:\s*[–-]\s*(?:[A-Z][a-z]+ )?\d{1,2})?, \d{4}$")


def historical_path(year: int) -> str:
    return f"/monetarypolicy/fomchistorical{year}.htm"


def statement_path(date: str) -> str:
    return f"/newsevents/pressreleases/monetary{date.replace('-', '')}a.htm"


def minutes_path(date: str) -> str:
    return f"/monetarypolicy/fomcminutes{date.replace('-', '')}.htm"


def iso(yyyymmdd: str) -> str:
    return f"{yyyymmdd[:4]}-{yyyymmdd[4:6]}-{yyyymmdd[6:]}"


@dataclass(frozen=True)
class PageRef:
    """A statement or minutes page the calendar links to."""

    doc_type: str  # "statement" | "minutes"
    meeting_date: str  # ISO decision date, from the URL
    path: str
    meeting: str | None = None  # calendar label, e.g. "January 30-31"
    release_date: str | None = None  # minutes: "(Released …)" on the calendar


def classify(href: str) -> tuple[str, str] | None:
    """(doc_type, ISO date) for a statement/minutes URL, else None."""
    href = href.split("#")[0].split("?")[0]
    if m := STATEMENT_RE.search(href):
        return "statement", iso(m.group(1))
    if m := MINUTES_RE.search(href):
        return "minutes", iso(m.group(1))
    return None


def parse_date(text: str) -> str | None:
    text = text.replace(".", "")
    for fmt in ("%B %d, %Y", "%b %d, %Y"):
        try:
            return datetime.strptime(text, fmt).date().isoformat()
        except ValueError:
            continue
    return None


def pretty_date(iso_date: str) -> str:
    d = datetime.strptime(iso_date, "%Y-%m-%d")
    return f"{d:%B} {d.day}, {d.year}"


def parse_calendar(html: str | bytes) -> tuple[list[PageRef], set[int]]:
    """Page refs from the calendar's meeting rows, and the years its panels cover."""
    soup = BeautifulSoup(html, "lxml")
    refs: list[PageRef] = []
    years: set[int] = set()
    for panel in soup.select("div.panel"):
        heading = panel.find(["h4", "h3", "h5"])
        m = YEAR_HEADING_RE.search(heading.get_text(" ")) if heading else None
        if not m:
            continue
        years.add(int(m.group(1)))
        for row in panel.select("div.fomc-meeting"):
            refs.extend(_refs_in_block(row))
    return refs, years


def parse_links(html: str | bytes) -> list[PageRef]:
    """Page refs from any page (historical calendars): every statement/minutes link on it."""
    soup = BeautifulSoup(html, "lxml")
    return _refs_in_block(soup)


def _refs_in_block(block) -> list[PageRef]:
    month = block.select_one(".fomc-meeting__month")
    day = block.select_one(".fomc-meeting__date")
    label = None
    if month is not None and day is not None:
        label = f"{month.get_text(' ', strip=True)} {day.get_text(' ', strip=True)}".replace("*", "").strip()
    released = RELEASED_RE.search(block.get_text(" "))
    release = parse_date(released.group(1)) if released else None
    seen: dict[str, PageRef] = {}
    for a in block.find_all("a", href=True):
        kind = classify(a["href"])
        if kind is None:
            continue
        doc_type, date = kind
        path = statement_path(date) if doc_type == "statement" else minutes_path(date)
        rel = date if doc_type == "statement" else release
        seen.setdefault(path, PageRef(doc_type, date, path, label, rel))
    return list(seen.values())

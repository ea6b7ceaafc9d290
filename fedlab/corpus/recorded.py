"""Sections of a minutes document that record another meeting.

Minutes now and then carry the record of an unscheduled meeting held since the last regular one,
as a section of their own: the minutes of March 15, 2020 end with "Videoconference meeting of
March 2" (the 50 basis point cut announced in the statement of March 3), those of October 30, 2019
with "Videoconference meeting of October 4, 2019" (the reserve-management purchases announced on
October 11). Dated by their document, those passages would belong to the wrong meeting, and a
question about the meeting they record would never see them. A section's meeting is the corpus's
first meeting on or within ``DECISION_DAYS`` after the date its title names (the decision that
meeting led to; the corpus dates a meeting by its decision), else that date itself.
"""
from __future__ import annotations

import re
from bisect import bisect_left
from datetime import date, timedelta
from typing import Iterable

from fedlab.corpus.document import Document

_MONTH_NUMBER = {name[:3]: i for i, name in enumerate(
    ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november",
     "december"), start=1)}  # English whatever the locale: the site's
# "Videoconference meeting of March 2", "Conference Call of December 16, 2019", "Meeting held on May 9"
RECORD_TITLE = re.compile(
    r"^(?:(?:videoconference|telephone|conference)\s+(?:meeting|call)|conference\s+call|meeting)"
    r"(?:\s+held)?\s+(?:of|on)\s+(?P<month>[a-z]+)\.?\s+(?P<day>\d{1,2})(?:\s*[-–]\s*\d{1,2})?"
    r"(?:,\s*(?P<year>\d{4}))?$", re.I)
DECISION_DAYS = 10  # a meeting's decision is announced within days of it (October 4, 2019 -> October 11)


def titled_date(title: str, doc: Document) -> str | None:
    """The ISO date a section title names as its meeting's, the year (when the title has none)
    that of the document, or the year before for a month after the document's; None for other titles."""
    m = RECORD_TITLE.match(" ".join(title.split()))
    month = _MONTH_NUMBER.get(m.group("month").lower()[:3]) if m is not None else None
    if month is None:
        return None
    held = date.fromisoformat(doc.meeting_date)
    year = int(m.group("year")) if m.group("year") else held.year - (month > held.month)
    try:
        return date(year, month, int(m.group("day"))).isoformat()
    except ValueError:
        return None


def recorded_meetings(docs: Iterable[Document]) -> dict[str, dict[str, str]]:
    """{doc_id: {section title: the meeting (ISO date) it records}} for the minutes' sections
    that record a meeting other than their document's."""
    docs = list(docs)
    meetings = sorted({d.meeting_date for d in docs})
    out: dict[str, dict[str, str]] = {}
    for doc in docs:
        if doc.doc_type != "minutes":
            continue
        for section in doc.sections:
            named = titled_date(section.title, doc)
            if named is None or named >= doc.meeting_date:
                continue
            last = (date.fromisoformat(named) + timedelta(days=DECISION_DAYS)).isoformat()
            i = bisect_left(meetings, named)
            decided = meetings[i] if i < len(meetings) and meetings[i] <= last else named
            if decided != doc.meeting_date:
                out.setdefault(doc.doc_id, {})[section.title] = decided
    return out

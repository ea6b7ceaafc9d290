"""Minutes sections that record another meeting, and the meeting they are dated by."""
from __future__ import annotations

import pytest

from fedlab.corpus.document import Document, Section
from fedlab.corpus.recorded import recorded_meetings, titled_date


def _doc(kind: str, day: str, *titles: str) -> Document:
    sections = [Section(t, 100 * i, 100 * i + 90) for i, t in enumerate(titles)]
    return Document(f"{kind}-{day}", kind, day, None, f"FOMC {kind}", "", "x" * 100 * (len(titles) + 1), sections)


@pytest.mark.parametrize("title, meeting, expected", [
    ("Videoconference meeting of March 2", "2020-03-15", "2020-03-02"),
    ("Videoconference meeting of October 4, 2019", "2019-10-30", "2019-10-04"),
    ("Conference Call of December 16", "2020-01-29", "2019-12-16"),  # a month after the minutes': the year before
    ("Conference call on Jan. 9–10, 2021", "2021-01-27", "2021-01-09"),
    ("Meeting held on May 9", "2022-06-15", "2022-05-09"),
    ("Committee Policy Action", "2020-03-15", None),
    ("Videoconference meeting of Smarch 2", "2020-03-15", None),
    ("Videoconference meeting of February 30", "2020-03-15", None),
])
def test_a_title_names_its_meetings_date(title, meeting, expected):
    assert titled_date(title, _doc("minutes", meeting, title)) == expected


def test_a_recorded_meeting_is_dated_by_the_decision_that_followed_it():
    minutes = _doc("minutes", "2020-03-15", "Committee Policy Action", "Notation Vote",
                   "Videoconference meeting of March 2")
    late = _doc("minutes", "2019-10-30", "Videoconference meeting of October 4, 2019")
    alone = _doc("minutes", "2021-06-16", "Conference call of May 1")  # no decision in the corpus within days of it
    docs = [minutes, late, alone, _doc("statement", "2020-03-03"), _doc("statement", "2020-03-15"),
            _doc("statement", "2019-10-11"), _doc("statement", "2019-10-30"), _doc("statement", "2021-05-20")]
    assert recorded_meetings(docs) == {
        "minutes-2020-03-15": {"Videoconference meeting of March 2": "2020-03-03"},  # announced the next day
        "minutes-2019-10-30": {"Videoconference meeting of October 4, 2019": "2019-10-11"},  # a week later
        "minutes-2021-06-16": {"Conference call of May 1": "2021-05-01"},  # 2021-05-20 is 19 days on: its own date
    }


def test_statements_and_ordinary_sections_record_nothing():
    docs = [_doc("statement", "2020-03-15", "Videoconference meeting of March 2"),
            _doc("minutes", "2020-04-29", "Participants' Views", "Meeting held on April 29")]  # its own meeting
    assert recorded_meetings(docs) == {}

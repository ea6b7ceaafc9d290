"""fedlab.query.shorthand: a question's shorthand read in the documents' words."""
from __future__ import annotations

import pytest

from fedlab.query.shorthand import read_shorthand


@pytest.mark.parametrize("asked, read", [
    ("dec 2021 taper vs nov 2021 taper", "December 2021 taper compared with November 2021 taper"),
    ("Dec. 12, 2023 statement", "December 12, 2023 statement"),
    ("sept '19 repo spike", "September '19 repo spike"),
    ("how many mtgs at 5.25-5.5% before the cut", "how many meetings at 5.25-5.5 percent before the cut"),
    ("the 50bp cut w/ a dissent", "the 50 basis points cut with a dissent"),
    ("fed funds range + QT start", "federal funds range and balance sheet runoff start"),
    ("FFR thru 2023", "federal funds rate through 2023"),
    ("IOER & ON RRP", "IOER and ON RRP"),
    ("three hikes in a row", "three hikes consecutive"),  # an idiom no passage writes
    # a month before a range or a list to another month, where the date parser reads months written out
    ("dissents jan-oct 2025", "dissents January-October 2025"),
    ("Jan. thru Oct. 2025", "January through October 2025"),
    ("jan, feb and mar 2020 statements", "January, February and March 2020 statements"),
    ("from january through october 2025", "from January through October 2025"),
])
def test_shorthand_is_read_as_the_documents_write_it(asked, read):
    assert read_shorthand(asked) == read


@pytest.mark.parametrize("asked", [
    "What did the FOMC decide in March 2020?",   # written out: unchanged
    "SEP 2024 median",                           # all capitals: the Summary of Economic Projections, not September
    "Did anything mar the outlook?",              # a month only before a day or a year
    "What did the S&P 500 do?",                  # inside a name
    "may 2024 decision",                          # May is a month's full name
    "Was the decision about QTR-end funding?",   # a shorthand only as a whole word
    "Which row of the table was revised?",       # "row" alone is no idiom
])
def test_what_is_not_shorthand_is_left_as_asked(asked):
    assert read_shorthand(asked) == asked


def test_a_month_range_in_shorthand_is_the_range_written_out():
    from fedlab.retrieval.dates import parse_date_hint

    for asked in ("list the dissents jan-oct 2025", "dissents Jan. to Oct. 2025"):
        hint = parse_date_hint(read_shorthand(asked))
        assert (hint.date_from, hint.date_to) == ("2025-01-01", "2025-10-31")

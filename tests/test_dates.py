"""Date-hint parsing: ranges, scopes, precedence rules, and no dates read from amounts."""
from __future__ import annotations

from datetime import date

import pytest

from fedlab.retrieval.dates import parse_date_hint
from fedlab.retrieval.topk import adaptive_top_k
from fedlab.retrieval.types import DateHint

TODAY = date(2026, 7, 1)

CASES = [
    # months and meetings
    ("What did the Fed say about inflation in January 2024?", "2024-01-01", "2024-01-31", "month"),
    ("What changed at the June 2022 meeting?", "2022-06-01", "2022-06-30", "meeting"),
    ("Summarize the June 2022 FOMC minutes", "2022-06-01", "2022-06-30", "meeting"),
    ("What did the minutes from June 2022 say about the balance sheet?", "2022-06-01", "2022-06-30", "meeting"),
    ("Outlook in December 2024", "2024-12-01", "2024-12-31", "month"),
    ("Outlook in Dec. 2024", "2024-12-01", "2024-12-31", "month"),
    ("rates in Sept 2020", "2020-09-01", "2020-09-30", "month"),
    ("What happened in March of 2021?", "2021-03-01", "2021-03-31", "month"),
    ("the January 30-31, 2024 meeting", "2024-01-30", "2024-01-31", "meeting"),
    ("the April 30-May 1, 2024 meeting", "2024-04-30", "2024-05-01", "meeting"),
    ("What did the statement of March 15, 2020 say?", "2020-03-15", "2020-03-15", "meeting"),
    ("the 2024-01-31 statement", "2024-01-31", "2024-01-31", "meeting"),
    # numeric dates (month first; day first when the first number cannot be a month), years with an apostrophe
    ("What did the Committee say in its statement of 12/14/2022?", "2022-12-14", "2022-12-14", "meeting"),
    ("the 3/20/24 statement", "2024-03-20", "2024-03-20", "meeting"),
    ("the minutes of the meeting on 31/1/2024", "2024-01-31", "2024-01-31", "meeting"),
    ("What did the June '22 statement say?", "2022-06-01", "2022-06-30", "meeting"),
    ("How many times did the Fed hike in ’23?", "2023-01-01", "2023-12-31", "year"),
    # seasons
    ("How did the Fed respond in the spring of 2020?", "2020-03-01", "2020-05-31", "span"),
    ("What was decided in summer 2022?", "2022-06-01", "2022-08-31", "span"),
    ("the outlook in autumn 2023", "2023-09-01", "2023-11-30", "span"),
    ("Between spring 2020 and fall 2021, what did the Committee do?", "2020-03-01", "2021-11-30", "multi_year"),
    ("What rate did the directive effective October 15, 2019 specify?", "2019-10-10", "2019-10-15", "meeting"),
    # years
    ("How did the Fed describe inflation in 2022?", "2022-01-01", "2022-12-31", "year"),
    ("Was inflation transitory in 2021?", "2021-01-01", "2021-12-31", "year"),
    ("What has the Committee said this year?", "2026-01-01", "2026-12-31", "year"),
    ("What did the Fed do last year?", "2025-01-01", "2025-12-31", "year"),
    # spans within a year
    ("first half of 2023", "2023-01-01", "2023-06-30", "span"),
    ("the second half of 2023", "2023-07-01", "2023-12-31", "span"),
    ("H2 2023", "2023-07-01", "2023-12-31", "span"),
    ("Q3 2021", "2021-07-01", "2021-09-30", "span"),
    ("third quarter of 2021", "2021-07-01", "2021-09-30", "span"),
    ("GDP in 2021:Q3", "2021-07-01", "2021-09-30", "span"),
    ("1Q 2020 developments", "2020-01-01", "2020-03-31", "span"),
    ("late 2022", "2022-09-01", "2022-12-31", "span"),
    ("early 2023", "2023-01-01", "2023-04-30", "span"),
    ("mid-2021", "2021-05-01", "2021-08-31", "span"),
    ("by the end of 2022", "2022-09-01", "2022-12-31", "span"),
    ("in March and June 2022", "2022-03-01", "2022-06-30", "span"),
    ("In June, July and September of 2022, how did rates change?", "2022-06-01", "2022-09-30", "span"),
    ("Nov 2019 to Feb 2020", "2019-11-01", "2020-02-29", "span"),
    # multi-year and open ranges
    ("between March 2020 and June 2021", "2020-03-01", "2021-06-30", "multi_year"),
    ("from 2021 to 2022", "2021-01-01", "2022-12-31", "multi_year"),
    ("the primary credit rate from the March 2020 cut through the end of 2021", "2020-03-01", "2021-12-31",
     "multi_year"),
    ("over 2021–2022", "2021-01-01", "2022-12-31", "multi_year"),
    ("the 2019-20 easing cycle", "2019-01-01", "2020-12-31", "multi_year"),
    ("since 2023", "2023-01-01", "2026-07-01", "multi_year"),
    ("after 2022", "2023-01-01", "2026-07-01", "multi_year"),
    ("from 2021 onward", "2021-01-01", "2026-07-01", "multi_year"),
    ("prior to 2020", None, "2019-12-31", "multi_year"),
    ("Between the pandemic cut and the end of 2021, did the FOMC move the range?", None, "2021-12-31", "multi_year"),
    # precedence: a year that gives its year to a year-less atom is context, meetings win
    ("How did inflation evolve in 2022, especially in the second half?", "2022-07-01", "2022-12-31", "span"),
    ("In 2022, what did the minutes of the June meeting say?", "2022-06-01", "2022-06-30", "meeting"),
    ("the minutes of the June 2022 meeting on the 2023 outlook", "2022-06-01", "2022-06-30", "meeting"),
    ("What did the Fed project for 2025 at its December 2024 meeting?", "2024-12-01", "2024-12-31", "meeting"),
    ("Did any participant expect rate cuts in 2023, according to the December 2022 minutes?", "2022-12-01",
     "2022-12-31", "meeting"),
    ("the median rate for the end of 2024 in the December 2023 dot plot", "2023-12-01", "2023-12-31", "meeting"),
    ("the staff forecast for the second quarter of 2020 at the April 2020 meeting", "2020-04-01", "2020-04-30",
     "meeting"),
    # several meetings: all kept, covered by one range
    ("Compare the rate increases at the November 2022 and December 2022 meetings.", "2022-11-01", "2022-12-31",
     "span"),
    ("How did the June 2020 statement differ from April 2020?", "2020-04-01", "2020-06-30", "span"),
    ("between the May and June 2019 statements", "2019-05-01", "2019-06-30", "span"),
    # after/before a month or a day: that meeting; after/before a year: an open range
    ("What was the target range after the October 2019 FOMC meeting?", "2019-10-01", "2019-10-31", "meeting"),
    ("After the July 2019 rate cut, what was the new IOER rate?", "2019-07-01", "2019-07-31", "meeting"),
    ("How did markets react before the January 2020 meeting?", "2020-01-01", "2020-01-31", "meeting"),
    ("After the mid-September 2019 money market strains, what did participants agree?", "2019-09-01", "2019-09-30",
     "month"),
]


# Year-to-date and course-of-year phrasings: the rule, on sentences written for it.
YEAR_TO_DATE = [
    ("By March 2021, how often had the Committee met?", "2021-01-01", "2021-03-31", "span"),
    ("by its July 2019 meeting, had the Committee cut rates that year?", "2019-01-01", "2019-07-31", "span"),
    ("By the November 2020 meeting, what had the statements said about the pandemic?", "2020-01-01",
     "2020-11-30", "span"),
    ("As of May 2023, how many increases had there been that year?", "2023-01-01", "2023-05-31", "span"),
    ("What did the statements say about purchases through October 2021?", "2021-01-01", "2021-10-31", "span"),
    ("How many hikes were there in 2018 by June?", "2018-01-01", "2018-06-30", "span"),  # year lent to the month
    ("How did the balance sheet change in 2021 up to the September meeting?", "2021-01-01", "2021-09-30", "span"),
    ("What had the statements said about vaccines until July 2021?", "2021-01-01", "2021-07-31", "span"),
    ("What did participants expect up till the June 2020 meeting?", "2020-01-01", "2020-06-30", "span"),
    ("By December 2020, had the target range moved since spring?", "2020-01-01", "2020-12-31", "year"),
    ("So far in 2021, what has the Committee said about inflation?", "2021-01-01", "2021-12-31", "year"),
    ("What has the Committee said so far this year?", "2026-01-01", "2026-07-01", "span"),  # ends today
    ("So far in 2026, has the range changed?", "2026-01-01", "2026-07-01", "span"),
]
COURSE_OF_YEAR = [
    ("How did the balance sheet guidance change over 2019?", "2019-01-01", "2019-12-31", "year"),
    ("During 2020, how did the statement describe the labor market?", "2020-01-01", "2020-12-31", "year"),
    ("across 2021, did the Committee's description of inflation change?", "2021-01-01", "2021-12-31", "year"),
    ("Throughout 2018, what did the statements say about risks?", "2018-01-01", "2018-12-31", "year"),
    ("In the course of 2022, how many times was the range raised?", "2022-01-01", "2022-12-31", "year"),
    ("over the course of 2024, how many cuts were there?", "2024-01-01", "2024-12-31", "year"),
    ("From the first meeting of 2019 to the last, how did the view of trade evolve?", "2019-01-01", "2019-12-31",
     "year"),
    ("From the first meeting to the last of 2021, were purchases reduced?", "2021-01-01", "2021-12-31", "year"),
    ("In 2023, from the first meeting to the last one, how did the range move?", "2023-01-01", "2023-12-31", "year"),
    ("from the first meeting of 2022 to the last meeting of 2023, how many increases?", "2022-01-01", "2023-12-31",
     "multi_year"),
    # the year is named as a whole: a meeting inside it does not narrow it (unlike "In 2022, ... the June meeting")
    ("During 2022, what did the minutes of the June meeting say?", "2022-01-01", "2022-12-31", "year"),
    ("Over 2023, did the statement from the February meeting to the December meeting change?", "2023-01-01",
     "2023-12-31", "year"),
    ("How many times did the Committee raise the range over 2017, counting its December meeting?", "2017-01-01",
     "2017-12-31", "year"),
    ("From the first meeting of 2021 to the last, what changed after the March meeting?", "2021-01-01",
     "2021-12-31", "year"),
]
NOT_TO_DATE = [
    ("What did the Committee decide in September 2022?", "2022-09-01", "2022-09-30", "month"),
    ("What changed at the September 2022 meeting?", "2022-09-01", "2022-09-30", "meeting"),
    # "by" naming the document or action that did something, not a moment
    ("Were the increases signalled by the March 2022 statement?", "2022-03-01", "2022-03-31", "meeting"),
    ("Rates were lowered by the March 2020 cut to near zero.", "2020-03-01", "2020-03-31", "meeting"),
    ("Did the range rise by 75 basis points in June 2022?", "2022-06-01", "2022-06-30", "month"),
    ("What did the directive effective as of March 2020 say?", "2020-03-01", "2020-03-31", "month"),
    # "through" joining two dates is a range between them, not from January
    ("How did the range change from April 2022 through June 2022?", "2022-04-01", "2022-06-30", "span"),
    # a year named as a forecast horizon of a meeting in another year stays context
    ("How did inflation projections for over 2024 look in the December 2023 projections?", "2023-12-01",
     "2023-12-31", "meeting"),
    ("by the end of 2022", "2022-09-01", "2022-12-31", "span"),
    ("In 2022, what did the minutes of the June meeting say?", "2022-06-01", "2022-06-30", "meeting"),
]


@pytest.mark.parametrize("question,lo,hi,scope", YEAR_TO_DATE + COURSE_OF_YEAR + NOT_TO_DATE)
def test_year_to_date_and_course_of_year(question, lo, hi, scope):
    hint = parse_date_hint(question, today=TODAY)
    assert hint is not None, question
    assert (hint.date_from, hint.date_to, hint.scope) == (lo, hi, scope)


def test_year_to_date_keeps_adaptive_top_k_coherent():
    """A within-year stretch of meetings is sized like a span, a whole year like a year."""
    ytd = parse_date_hint("By its June 2021 meeting, how many times had the range moved?", today=TODAY)
    full = parse_date_hint("Over 2021, how many times did the range move?", today=TODAY)
    month = parse_date_hint("What happened in June 2021?", today=TODAY)
    assert [adaptive_top_k(h, 10) for h in (ytd, full, month)] == [20, 30, 10]
    assert ytd.text == "By its June 2021" and full.text == "Over 2021"


def test_first_to_last_meeting_needs_a_year():
    assert parse_date_hint("From the first meeting to the last, did the statement mention trade?", today=TODAY) is None


@pytest.mark.parametrize("question,lo,hi,scope", CASES)
def test_parses_range_and_scope(question, lo, hi, scope):
    hint = parse_date_hint(question, today=TODAY)
    assert hint is not None, question
    assert (hint.date_from, hint.date_to, hint.scope) == (lo, hi, scope)


NEGATIVES = [
    "Is the 2 percent objective credible?",
    "Why did the Committee set the target range at 5-1/4 to 5-1/2 percent?",
    "The Fed was reducing holdings by $60 billion per month.",
    "Inflation ran at 2.5% last spring.",
    "rates of 5.25%–5.50%",
    "The balance sheet fell by $2,000 billion.",
    "Why did the Fed hike 75 basis points?",
    "What about 2000 basis points?",
    "What moved the 10-year Treasury yield?",
    "How did markets view the 2020s outlook?",
    "What did the Fed say in the second half?",  # no year anywhere to anchor it
    "Will the Fed cut in June?",
    "May the Committee raise rates again?",
    "The Committee may raise rates further.",
    "What is the longer-run neutral rate?",
    "Was it a '50 basis point' move?",
    "Would the range fall to 3/4 percent?",
    "What did participants expect for the spring?",  # no year anywhere to anchor it
    "Did inflation fall 2 percent short?",
]


@pytest.mark.parametrize("question", NEGATIVES)
def test_no_false_positives(question):
    assert parse_date_hint(question, today=TODAY) is None


def test_open_range_ends_at_today_or_corpus_end():
    assert parse_date_hint("since March 2022", today=date(2025, 12, 31)).date_to == "2025-12-31"
    assert parse_date_hint("since 2023").date_to == date.today().isoformat()


def test_hint_text_names_the_words_used():
    assert parse_date_hint("How have views shifted since 2023?", today=TODAY).text == "since 2023"
    assert parse_date_hint("Tell me about Q3 2021 please", today=TODAY).text == "Q3 2021"


def test_adaptive_top_k_by_scope():
    def hint(scope):
        return DateHint("2022-01-01", "2022-12-31", scope)

    assert adaptive_top_k(None, 10) == 10
    assert adaptive_top_k(hint("meeting"), 10) == 10
    assert adaptive_top_k(hint("month"), 7) == 7
    assert adaptive_top_k(hint("span"), 10) == 20
    assert adaptive_top_k(hint("year"), 10) == 30
    assert adaptive_top_k(hint("multi_year"), 10) == 50
    assert adaptive_top_k(hint("year"), 40) == 40  # never narrower than the caller's k
    assert adaptive_top_k(hint("year"), 10, {"year": 24}) == 24


def test_hint_scope_is_validated():
    with pytest.raises(ValueError):
        DateHint("2022-01-01", "2022-12-31", "decade")


# -- days that do not exist, and years far from the corpus ---------------------------------------

@pytest.mark.parametrize("question,said,why", [
    ("What did the FOMC decide on February 29 2021?", "February 29 2021", "2021 has no February 29"),
    ("What did the FOMC decide on February 29, 2021?", "February 29, 2021", "2021 has no February 29"),
    ("What did the FOMC decide on 2/30/2021?", "2/30/2021", "February 2021 has 28 days"),
    ("What was decided on 2021-02-30?", "2021-02-30", "February 2021 has 28 days"),
    ("What did the April 31 2022 statement say?", "April 31 2022", "April has 30 days"),
    ("the 13/13/2022 meeting", "13/13/2022", "there is no month 13"),
    ("What did the June 31 meeting decide?", "June 31", "June has 30 days"),
    ("the January 30-32, 2024 meeting", "January 30-32, 2024", "January has 31 days"),
])
def test_a_day_that_does_not_exist_is_read_as_no_date(question, said, why):
    """Not the month or the year around it (February 2021 was read for February 29 2021, and the
    "29" matched the October 29-30 minutes): no range at all, and the expression is named."""
    from fedlab.retrieval.dates import impossible_dates

    assert parse_date_hint(question, today=TODAY) is None
    found = impossible_dates(question)
    assert [s for s, _ in found] == [said] and why in found[0][1]


@pytest.mark.parametrize("question", [
    "What did the FOMC decide on February 29, 2020?", "the January 31-February 1, 2023 meeting",
    "What did the March 31 statement say?", "a cut in March of 25 basis points", "the 12/14/2022 statement",
    "What changed at the June 2022 meeting?"])
def test_days_that_exist_are_not_impossible(question):
    from fedlab.retrieval.dates import impossible_dates

    assert impossible_dates(question) == []


@pytest.mark.parametrize("question,lo,hi", [
    ("What did the FOMC decide in 2099?", "2099-01-01", "2099-12-31"),
    ("What did the FOMC decide in 1900?", "1900-01-01", "1900-12-31"),
    ("Rates in March 1949?", "1949-03-01", "1949-03-31"),
    ("What happened between 2099 and 2101?", "2099-01-01", "2101-12-31"),
    ("the 2/3/2099 decision", "2099-02-03", "2099-02-03"),
])
def test_any_four_digit_year_is_a_date(question, lo, hi):
    """1950-2069 were the parser's years: "in 2099" was no date, so the coverage check let it through."""
    hint = parse_date_hint(question, today=TODAY)
    assert (hint.date_from, hint.date_to) == (lo, hi)


@pytest.mark.parametrize("question", ["a hike of 2099 basis points", "reserves of $2099 billion", "rates at 2099 percent"])
def test_a_four_digit_amount_is_still_no_year(question):
    assert parse_date_hint(question, today=TODAY) is None

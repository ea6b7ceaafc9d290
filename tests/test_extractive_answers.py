"""The extractive backend's answers for multi-meeting questions: rate paths composed from the
decision sentences, one sentence per meeting in date order, single-meeting answers unchanged.
Synthetic passages in the statements' language (no dataset questions)."""
from __future__ import annotations

import re
from datetime import date

import pytest

from fedlab.agent.citations import ground_citations
from fedlab.facts.timeline import BALANCE_SHEET_SECTION, VOTE_SECTION
from fedlab.evaluation.answers.normalize import contains_fact
from fedlab.lm.extractive import TOKENS, synthesize_answer
from fedlab.skills.reader import undated_terms
from fedlab.skills.hold_run import hold_run_answer
from fedlab.query.rate_path import asked_size, asks_rate_path
from fedlab.skills.rate_path import rate_path_answer, read_decisions
from fedlab.skills.wording import points_text, range_text
from fedlab.query.speakers import asks_committee_views, reports_others

MONTHS = "January February March April May June July August September October November December".split()


def passage(n: int, iso: str, text: str, kind: str = "statement", section: str | None = None) -> str:
    """A passage as the agent formats it: "[Source N] <title>, <YYYY-MM-DD>[, <section>]\\n<text>"."""
    d = date.fromisoformat(iso)
    title = f"FOMC {kind}, {MONTHS[d.month - 1]} {d.day}, {d.year}"
    return f"[Source {n}] {title}, {iso}{', ' + section if section else ''}\n{text}"


def raise_to(rng: str) -> str:
    return (f"In support of these goals, the Committee decided to raise the target range for the federal funds "
            f"rate to {rng} percent and anticipates that ongoing increases in the target range will be appropriate.")


def hold_at(rng: str) -> str:
    return (f"In support of these goals, the Committee decided to keep the target range for the federal funds rate "
            f"at {rng} percent.")


def lower_by(size: str, rng: str) -> str:
    return (f"In light of the progress on inflation and the balance of risks, the Committee decided to lower the "
            f"target range for the federal funds rate by {size} percentage point to {rng} percent.")


# a tightening year: a hold, then seven increases (8 meetings), passages shuffled
TIGHTENING = [("2022-01-26", hold_at("0 to 1/4")), ("2022-03-16", raise_to("1/4 to 1/2")),
              ("2022-05-04", raise_to("3/4 to 1")), ("2022-06-15", raise_to("1-1/2 to 1-3/4")),
              ("2022-07-27", raise_to("2-1/4 to 2-1/2")), ("2022-09-21", raise_to("3 to 3-1/4")),
              ("2022-11-02", raise_to("3-3/4 to 4")), ("2022-12-14", raise_to("4-1/4 to 4-1/2"))]
ORDER = [5, 2, 7, 0, 3, 6, 1, 4]  # passage k shows meeting ORDER[k]


def tightening_passages(meetings=TIGHTENING, order=ORDER) -> tuple[list[str], dict[str, int]]:
    passages, source_of = [], {}
    for k, i in enumerate(o for o in order if o < len(meetings)):
        iso, text = meetings[i]
        passages.append(passage(k + 1, iso, text))
        source_of[iso] = k + 1
    return passages, source_of


def cited_after(answer: str, label: str) -> int:
    """The source number of the clause that opens with ``label`` ("May 2022: …[Source N]")."""
    m = re.search(rf"{re.escape(label)}: [^\[]*\[Source (\d+)\]", answer)
    assert m, f"no clause for {label} in {answer!r}"
    return int(m.group(1))


def assert_every_sentence_cited(answer: str) -> None:
    assert answer.rstrip().endswith(("]", "].")), answer
    for part in re.split(r"(?<=\])\.?\s+(?=[A-Z])", answer):
        assert re.search(r"\[Sources? \d+(?:, Source \d+)*\]\.?$", part.strip()), part


def assert_grounds(answer: str, n_passages: int) -> None:
    ids = [f"chunk-{i}" for i in range(1, n_passages + 1)]
    grounded = ground_citations(answer, ids, set(ids))
    assert grounded.dropped == 0 and grounded.cited


# -- administered-rate paths -------------------------------------------------------------------------


def iorb_note(value: str) -> str:
    return (f"To support the Committee's decision, the Board of Governors of the Federal Reserve System voted "
            f"unanimously to set the interest rate paid on reserve balances at {value} percent.")


def test_administered_rate_path_gives_first_value_changes_and_last_in_date_order():
    notes = [("2023-02-01", "4.65"), ("2023-03-22", "4.9"), ("2023-05-03", "5.15"), ("2023-06-14", "5.15"),
             ("2023-07-26", "5.4"), ("2023-09-20", "5.4"), ("2023-12-13", "5.4"), ("2024-01-31", "5.4")]
    order = [4, 0, 6, 2, 7, 1, 5, 3]
    passages = [passage(k + 1, notes[i][0], iorb_note(notes[i][1]), kind="minutes", section="Committee Policy Actions")
                for k, i in enumerate(order)]
    source = {notes[i][0]: k + 1 for k, i in enumerate(order)}
    answer = synthesize_answer("How did the interest rate on reserve balances move during 2023?", passages)["answer"]
    # how many times it changed, as the rate path counts: March, May, July
    assert answer.startswith("The interest rate on reserve balances changed three times: it was 4.65 percent in "
                             f"February 2023 [Source {source['2023-02-01']}]"), answer
    assert f"raised to 4.9 percent in March 2023 [Source {source['2023-03-22']}]" in answer
    assert f"raised to 5.4 percent in July 2023 [Source {source['2023-07-26']}]" in answer
    assert answer.endswith(f"unchanged at 5.4 percent through December 2023 [Source {source['2023-12-13']}].")
    assert "June 2023" not in answer and "2024" not in answer  # a hold says nothing; January 2024 is outside 2023
    assert answer.index("March 2023") < answer.index("May 2023") < answer.index("July 2023")
    assert_grounds(answer, len(passages))


def test_two_meetings_in_one_month_are_told_apart_by_their_day():
    passages = [passage(1, "2020-01-29", iorb_note("1.60"), kind="minutes"),
                passage(2, "2020-03-03", iorb_note("1.10"), kind="minutes"),
                passage(3, "2020-03-15", iorb_note("0.10"), kind="minutes")]
    answer = synthesize_answer("How did the interest rate on reserve balances move in 2020?", passages)["answer"]
    assert answer == ("The interest rate on reserve balances changed two times: it was 1.60 percent in January 2020 "
                      "[Source 1]; lowered to "
                      "1.10 percent on March 3, 2020 [Source 2]; lowered to 0.10 percent on March 15, 2020 [Source 3]."), \
        answer


def test_administered_rate_path_needs_a_named_rate_several_meetings_and_two_values():
    passages = [passage(1, "2019-07-31", iorb_note("2.10"), kind="minutes"),
                passage(2, "2019-09-18", iorb_note("1.80"), kind="minutes")]
    composed = "The interest rate on reserve balances changed"
    assert synthesize_answer("How did IOER move in 2019?", passages)["answer"].startswith(composed)
    # the question names no administered rate, or one meeting, or only one value is in range
    assert not synthesize_answer("How did the reserve balances move in 2019?", passages)["answer"].startswith(composed)
    assert not synthesize_answer("What was IOER set to in July 2019?", passages)["answer"].startswith(composed)
    assert not synthesize_answer("How did IOER move in 2019?", passages[:1])["answer"].startswith(composed)


def test_a_question_about_one_meeting_naming_a_rate_opens_with_its_value_there():
    """The note setting the rate is one sentence among the meeting's passages: the value it set at
    the meeting asked about opens the answer, cited; the sentences for the rest of the question
    follow."""
    why = passage(1, "2019-05-01", "The deputy manager discussed a staff proposal for a technical adjustment to the "
                                   "IOER rate, to foster trading in the federal funds market well within the target "
                                   "range.", kind="minutes")
    passages = [why, passage(2, "2019-03-20", iorb_note("2.40"), kind="minutes"),
                passage(3, "2019-05-01", iorb_note("2.35"), kind="minutes")]
    answer = synthesize_answer("What technical adjustment was made to IOER in May 2019, and why?", passages,
                               max_sentences=2)["answer"]
    assert answer.startswith("The interest rate on reserve balances was set at 2.35 percent in May 2019 [Source 3]."), \
        answer
    assert "technical adjustment to the IOER rate" in answer and "2.40" not in answer
    assert_grounds(answer, len(passages))
    # no rate named, no date, or a range of several meetings: no opener
    for question in ("What technical adjustment was made in May 2019?", "What technical adjustment was made to IOER?"):
        assert not synthesize_answer(question, passages)["answer"].startswith("The interest rate on reserve balances")
    assert synthesize_answer("How did IOER move from March to May 2019?", passages)["answer"].startswith(
        "The interest rate on reserve balances changed")


# -- vote records ------------------------------------------------------------------------------------

VOTERS = ["Jerome H. Powell", "John C. Williams", "Michael S. Barr", "Michelle W. Bowman", "Lisa D. Cook",
          "Christopher J. Waller"]


def vote_record(iso: str, n: int, against: str = "", absent: str = "") -> str:
    voting = [v for v in VOTERS if v not in against and v not in absent]
    listed = "; ".join([f"{voting[0]}, Chair", f"{voting[1]}, Vice Chair", *voting[2:-1]]) + f"; and {voting[-1]}."
    text = f"Voting for the monetary policy action were {listed}"
    if against:
        text += f" Voting against this action was {against}, who preferred to lower the target range by 1/4 percentage point."
    if absent:
        text += f" Absent and not voting was {absent}."
    return passage(n, iso, text, section=VOTE_SECTION)


def test_vote_records_say_unanimous_or_who_voted_against_and_why():
    decision = passage(3, "2025-07-30", "The Committee decided to maintain the target range for the federal funds "
                                        "rate at 4-1/4 to 4-1/2 percent.")
    passages = [vote_record("2025-07-30", 1, against="Christopher J. Waller", absent="Lisa D. Cook"),
                vote_record("2025-06-18", 2), decision]
    answer = synthesize_answer("How did the vote differ between the June 2025 and July 2025 meetings?",
                               passages)["answer"]
    assert answer.startswith("June 2025: unanimous, 6 voting for [Source 2]. July 2025: 4 for, 1 against — "
                             "Christopher J. Waller, who preferred to lower the target range by 1/4 percentage point "
                             "[Source 1]; absent and not voting: Lisa D. Cook."), answer
    assert "Voting for" not in answer  # the record says it; the sentences are chosen for the rest
    assert_grounds(answer, len(passages))
    # asking who voted lists the names; a question not about votes gets no record
    who = synthesize_answer("Who voted for the decision in June 2025?", passages[1:2])["answer"]
    assert who.endswith("; voting for: " + ", ".join(VOTERS) + "."), who
    whose = synthesize_answer("Whose votes carried the June 2025 decision?", passages[1:2])["answer"]
    assert whose.endswith("; voting for: " + ", ".join(VOTERS) + "."), whose
    plain = synthesize_answer("What did the Committee decide about the target range in July 2025?", passages)
    assert "unanimous" not in plain["answer"]


def test_participants_are_the_committees_not_the_markets():
    """The minutes' "participants" are the Committee's: a question about their views is not matched
    by the Desk's report of what market participants expected, in the same minutes."""
    desk = ("Regarding market participants' views about the July meeting, market participants expected a 25 basis "
            "point cut in the target range.")
    views = "Participants generally viewed the cut in the target range as a mid-cycle adjustment to policy."
    passages = [passage(1, "2019-07-31", desk, kind="minutes"), passage(2, "2019-07-31", views, kind="minutes")]
    answer = synthesize_answer("How did participants view the July 2019 cut in the target range?", passages, 1)
    assert answer["answer"].startswith("Participants generally viewed"), answer
    market = synthesize_answer("What did market participants expect for the July 2019 target range?", passages, 1)
    assert market["answer"].startswith("Regarding market participants"), market


def test_a_question_asking_for_a_rate_gets_a_sentence_holding_one():
    """A sentence with no answer of the type asked for does not answer the question: when none of
    the sentences chosen by their words holds a rate, the best one holding one joins them."""
    texts = ["Members judged it appropriate to make a technical adjustment to the ON RRP offering rate.",
             "The manager discussed expectations of a technical adjustment to the ON RRP offering rate.",
             "Participants noted that the technical adjustment to the ON RRP offering rate was widely expected.",
             "The Desk will conduct ON RRP operations at an offering rate of 4.25 percent."]
    passages = [passage(k + 1, "2024-12-18", text, kind="minutes") for k, text in enumerate(texts)]
    answer = synthesize_answer("What technical adjustment to the ON RRP offering rate was made in December 2024, "
                               "and what offering rate did it set?", passages)["answer"]
    assert contains_fact(answer, "4.25 percent"), answer
    one = synthesize_answer("What ON RRP offering rate followed the technical adjustment in December 2024?", passages)
    assert contains_fact(one["answer"], "4.25 percent"), one
    # a question asking for no type is answered by its words alone
    why = synthesize_answer("Why was the technical adjustment to the ON RRP offering rate made in December 2024?",
                            passages)["answer"]
    assert "4.25 percent" not in why, why


def test_a_question_naming_only_a_meeting_asks_what_the_committee_decided():
    """"What did the Fed do in June 2019?" holds no term but its date: it asks for the decision."""
    texts = ["Participants discussed the economic outlook and the risks around it.",
             "In light of these uncertainties, the Committee decided to maintain the target range for the federal "
             "funds rate at 2-1/4 to 2-1/2 percent."]
    passages = [passage(k + 1, "2019-06-19", text) for k, text in enumerate(texts)]
    answer = synthesize_answer("What did the Fed do in June 2019?", passages)["answer"]
    assert answer.startswith("In light of these uncertainties, the Committee decided"), answer
    assert synthesize_answer("What did the Fed do?", passages)["answer"] == ""  # nor a date: nothing asked


def test_an_answer_says_whether_it_was_composed_from_records():
    """``composed``: a part made from records (here a vote record, a rate path, the statements'
    changes), not only sentences picked by their words — what the correctness head reads as
    answer_composed."""
    decision = passage(3, "2025-07-30", "The Committee decided to maintain the target range for the federal funds "
                                        "rate at 4-1/4 to 4-1/2 percent.")
    votes = [vote_record("2025-07-30", 1, against="Christopher J. Waller"), vote_record("2025-06-18", 2), decision]
    composed = synthesize_answer("How did the vote differ between the June 2025 and July 2025 meetings?", votes)
    picked = synthesize_answer("What did the Committee decide about the target range in July 2025?", votes)
    assert composed["composed"] is True and picked["composed"] is False
    assert picked["answer"]  # an answer all the same
    passages, _ = tightening_passages()
    path = synthesize_answer("How many increases in the federal funds target range were there during 2022?", passages)
    assert path["composed"] is True and path["answer"].startswith("In 2022 the Committee raised")
    changes = synthesize_answer("What changed in the statement from May to June 2019?", change_passages())
    assert changes["composed"] is True and changes["answer"].startswith("New in June 2019")
    other = synthesize_answer("What did the June 2019 statement say about the labor market and household spending?",
                              change_passages())
    assert other["composed"] is False and other["answer"]


def test_vote_records_over_many_meetings_list_the_split_ones_and_group_the_rest():
    dates = ["2022-01-26", "2022-03-16", "2022-05-04", "2022-06-15", "2022-07-27"]
    passages = [vote_record(d, k + 1, against="Michelle W. Bowman" if d in ("2022-03-16", "2022-06-15") else "")
                for k, d in enumerate(dates)]
    answer = synthesize_answer("Who dissented during 2022?", passages)["answer"]
    assert answer.startswith("March 2022: 5 for, 1 against — Michelle W. Bowman, who preferred"), answer
    assert "June 2022: 5 for, 1 against" in answer
    assert ("Unanimous at the other 3 meetings: January 2022 [Source 1], May 2022 [Source 3], July 2022 [Source 5]."
            in answer)
    assert_grounds(answer, len(passages))
    # nobody dissented: the answer says so first
    unanimous = [vote_record(d, k + 1) for k, d in enumerate(dates)]
    answer = synthesize_answer("Did anyone dissent from a policy decision in 2022?", unanimous)["answer"]
    assert answer.startswith("No dissents. Unanimous at the 5 meetings: January 2022 [Source 1]"), answer
    assert not synthesize_answer("Who dissented during 2022?", passages)["answer"].startswith("No dissents")
    assert not synthesize_answer("How many voted for the decisions in 2022?", unanimous)["answer"].startswith("No")


def test_vote_records_count_every_dissenter_of_several_groups():
    text = ("Voting for the monetary policy action were Jerome H. Powell, Chair; John C. Williams, Vice Chair; and "
            "Randal K. Quarles. Voting against the action were James Bullard, who preferred at this meeting to lower "
            "the target range to 1-1/2 to 1-3/4 percent; and Esther L. George and Eric S. Rosengren, who preferred "
            "to maintain the target range at 2 percent to 2-1/4 percent.")
    answer = synthesize_answer("Who dissented in September 2019?",
                               [passage(1, "2019-09-18", text, section=VOTE_SECTION)])["answer"]
    assert answer.startswith("September 2019: 3 for, 3 against — James Bullard, who preferred"), answer


def test_asking_who_voted_over_several_meetings_gives_the_rotation():
    dates = ["2024-01-31", "2024-06-12", "2024-12-18", "2025-01-29"]
    passages = [vote_record(d, k + 1) for k, d in enumerate(dates)]
    passages[-1] = passages[-1].replace("Michael S. Barr", "Susan M. Collins")
    answer = synthesize_answer("Which members voted in January 2025 who had not voted in January 2024?",
                               passages)["answer"]
    assert ("Voting in January 2025 but not in January 2024: Susan M. Collins; voting in January 2024 but not in "
            "January 2025: Michael S. Barr [Source 1, Source 4].") in answer, answer
    three = synthesize_answer("Which members voted in January 2025 who had not voted in June 2024?", passages[1:])
    assert "Voting in January 2025 but not in June 2024: Susan M. Collins;" in three["answer"], three["answer"]
    # asking who dissented is not asking who voted
    assert "but not in" not in synthesize_answer("Who dissented between January 2024 and January 2025?",
                                                 passages)["answer"]


# -- rate paths --------------------------------------------------------------------------------------


def test_rate_path_counts_raises_with_total_and_range_notation():
    passages, source_of = tightening_passages()
    q = "How many increases in the federal funds target range were there during 2022, and what was the cumulative rise?"
    answer = synthesize_answer(q, passages)["answer"]
    for fact in ("seven", "425 basis points", "4-1/4 percentage points", "0 to 1/4 percent", "4-1/4 to 4-1/2 percent"):
        assert contains_fact(answer, fact), (fact, answer)
    assert "at least" not in answer
    assert answer.startswith("In 2022 the Committee raised the target range for the federal funds rate seven times")
    assert "held the range at the one other meeting (January 2022)" in answer
    # every meeting's clause cites the passage it was read from, in date order
    labels = [f"{MONTHS[int(iso[5:7]) - 1]} {iso[:4]}" for iso, _ in TIGHTENING[1:]]
    for (iso, _), label in zip(TIGHTENING[1:], labels):
        assert cited_after(answer, label) == source_of[iso]
    assert [answer.index(f"{label}:") for label in labels] == sorted(answer.index(f"{label}:") for label in labels)
    assert "May 2022: raised by 1/2 percentage point (50 basis points) to 3/4 to 1 percent" in answer
    assert_every_sentence_cited(answer)
    assert_grounds(answer, len(passages))


def test_rate_path_counts_cuts_with_stated_sizes_and_holds():
    meetings = [("2024-06-12", hold_at("5-1/4 to 5-1/2")), ("2024-07-31", hold_at("5-1/4 to 5-1/2")),
                ("2024-09-18", lower_by("1/2", "4-3/4 to 5")), ("2024-11-07", lower_by("1/4", "4-1/2 to 4-3/4")),
                ("2024-12-18", lower_by("1/4", "4-1/4 to 4-1/2"))]
    passages = [passage(i + 1, iso, text) for i, (iso, text) in enumerate(reversed(meetings))]
    q = ("By how much did the Committee lower the policy rate altogether from June to December 2024, and in how "
         "many steps?")
    answer = synthesize_answer(q, passages)["answer"]
    for fact in ("three times", "100 basis points", "1 percentage point", "4-1/4 to 4-1/2 percent"):
        assert contains_fact(answer, fact), (fact, answer)
    assert "lowered the target range for the federal funds rate three times" in answer
    assert "held the range at the other two meetings (June 2024, July 2024)" in answer
    assert cited_after(answer, "September 2024") == 3  # passages are reversed: 2024-09-18 is [Source 3]
    assert "September 2024: lowered by 1/2 percentage point (50 basis points) to 4-3/4 to 5 percent" in answer
    assert_every_sentence_cited(answer)


def test_path_question_lists_holds_and_changes_in_date_order():
    passages, source_of = tightening_passages()
    answer = synthesize_answer("How did the target range move over the course of 2022?", passages)["answer"]
    assert "January 2022: held at 0 to 1/4 percent" in answer
    assert answer.index("January 2022: held") < answer.index("March 2022: raised")
    assert cited_after(answer, "January 2022") == source_of["2022-01-26"]


def test_whether_question_opens_with_yes_or_no_from_the_moves_its_verb_names():
    passages, _ = tightening_passages()
    answer = synthesize_answer("Between January and December 2022, did the FOMC raise the target range?", passages)["answer"]
    assert answer.startswith("Yes. In 2022 the Committee raised the target range for the federal funds rate seven "
                             "times"), answer
    assert synthesize_answer("From January to December 2022, did the Committee cut rates?",
                             passages)["answer"].startswith("No. "), "no cut among the moves found"
    holds = [passage(1, "2019-12-11", hold_at("1-1/2 to 1-3/4")), passage(2, "2020-01-29", hold_at("1-1/2 to 1-3/4"))]
    answer = synthesize_answer("Between December 2019 and February 2020, did the FOMC change the federal funds "
                               "target range?", holds)["answer"]
    assert answer.startswith("No. ") and "at both meetings" in answer and "did not move the range" in answer, answer
    # a meeting may be missing: the decisions found cannot say no
    gap = [holds[0], passage(2, "2020-04-29", hold_at("1-1/2 to 1-3/4"))]
    assert not synthesize_answer("Between December 2019 and April 2020, did the FOMC change the target range?",
                                 gap)["answer"].startswith("No")
    # a range opened by an event, not a date, is read from the documents' first meeting: no yes or no
    assert not rate_path_answer("Between the pandemic cut and the end of 2022, did the FOMC move the target range?",
                                passages).startswith(("Yes", "No"))


def test_which_question_names_the_moves_of_the_asked_size():
    passages, source_of = tightening_passages()
    answer = synthesize_answer("Which increases in the target range during 2022 were half a percentage point?",
                               passages)["answer"]
    assert "The moves of 50 basis points (1/2 percentage point) were in May 2022 and December 2022" in answer
    assert asked_size("the 75-basis-point hikes") == 75 and asked_size("quarter-point cuts") == 25


def test_missing_meeting_makes_the_count_a_lower_bound_but_keeps_the_distance_travelled():
    order = [o for o in ORDER if o != 4]  # July is not among the passages
    passages, _ = tightening_passages(order=order)
    answer = synthesize_answer("How many times was the federal funds rate raised in 2022, and how much in total?",
                               passages)["answer"]
    assert "at least six times" in answer
    assert contains_fact(answer, "425 basis points")  # from 0 to 1/4 to 4-1/4 to 4-1/2, whatever was missed


def test_stated_size_reveals_a_missed_move():
    meetings = [("2024-07-31", hold_at("5-1/4 to 5-1/2")), ("2024-11-07", lower_by("1/4", "4-1/2 to 4-3/4")),
                ("2024-12-18", lower_by("1/4", "4-1/4 to 4-1/2"))]  # September's half-point cut is missing
    passages = [passage(i + 1, iso, text) for i, (iso, text) in enumerate(meetings)]
    answer = rate_path_answer("How many times were rates cut between July and December 2024?", passages)
    assert "at least two times" in answer
    assert "November 2024: lowered by 1/4 percentage point" in answer  # the stated size, not the gap to July


def test_meetings_outside_the_range_are_not_counted():
    meetings = TIGHTENING + [("2023-02-01", raise_to("4-1/2 to 4-3/4"))]
    passages = [passage(i + 1, iso, text) for i, (iso, text) in enumerate(meetings)]
    answer = synthesize_answer("How many hikes in the target range were there in 2022?", passages)["answer"]
    assert "seven times" in answer and "2023" not in answer and "4-1/2 to 4-3/4" not in answer
    # an earlier decision just before the range gives the range the period started from
    q2023 = "How many hikes in the target range were there in 2023, and how much in total?"
    answer = synthesize_answer(q2023, passages + [passage(10, "2023-03-22", raise_to("4-3/4 to 5"))])["answer"]
    assert answer.startswith("In 2023 the Committee raised the target range for the federal funds rate two times")
    assert "from 4-1/4 to 4-1/2 percent to 4-3/4 to 5 percent" in answer and contains_fact(answer, "50 basis points")


def test_fewer_than_two_decisions_falls_back_to_sentences():
    passages = [passage(1, "2022-03-16", raise_to("1/4 to 1/2")),
                passage(2, "2022-05-04", "Inflation remains elevated, reflecting supply and demand imbalances related "
                                         "to the pandemic, higher energy prices, and broader price pressures.")]
    q = "How many times did the Committee raise the federal funds rate in 2022?"
    assert rate_path_answer(q, passages) is None
    answer = synthesize_answer(q, passages)["answer"]
    assert "decided to raise the target range for the federal funds rate to 1/4 to 1/2 percent" in answer
    assert_every_sentence_cited(answer)


def test_one_decision_per_meeting_statement_first_and_minutes_of_another_meeting():
    minutes = ("The vote also encompassed approval of the statement below for release at 10:00 a.m. on March 3, "
               "2020:\n\n\"The fundamentals of the U.S. economy remain strong. The Federal Open Market Committee "
               "decided today to lower the target range for the federal funds rate by 1/2 percentage point, to 1 "
               "to 1-1/4 percent.\"")
    passages = [passage(1, "2020-03-15", minutes, kind="minutes", section="Videoconference meeting of March 2"),
                passage(2, "2020-03-15", "In light of these developments, the Committee decided to lower the target "
                                         "range for the federal funds rate to 0 to 1/4 percent."),
                passage(3, "2020-03-15", "In light of these developments, members agreed to lower the target range "
                                         "for the federal funds rate to 0 to 1/4 percent.", kind="minutes")]
    found = read_decisions(passages)
    assert [(d.date, d.source, d.low, d.high) for d in found] == [("2020-03-03", 1, 1.0, 1.25),
                                                                    ("2020-03-15", 2, 0.0, 0.25)]
    assert found[0].stated_bp == 50


def test_rate_path_questions_are_told_apart():
    assert asks_rate_path("How many times did the Fed raise interest rates in 2018?") == "count"
    assert asks_rate_path("How did the federal funds rate evolve from 2020 to 2021?") == "path"
    assert asks_rate_path("Which cuts between 2019 and 2020 were emergency moves?") == "which"
    assert asks_rate_path("How did the primary credit rate move during 2019?") is None  # another rate
    assert asks_rate_path("How did the forward guidance on rates change during 2021?") is None  # language
    assert asks_rate_path("How many times did the Fed raise rates at the March 2022 meeting?") is None  # one meeting
    assert asks_rate_path("How many times did the Fed raise rates?") is None  # no period
    assert asks_rate_path("Between June and December 2024, did the Committee lower rates?") == "yes_no"
    assert asks_rate_path("Did the target range ever change in 2023?") == "yes_no"
    assert asks_rate_path("Did the statements in 2022 mention the war?") is None  # no rate
    # a request for an account of the target range, with no question word of its own, asks for its path
    assert asks_rate_path("Walk me through the federal funds target range over 2019.") == "path"
    assert asks_rate_path("Describe the 2019 rate cuts.") == "path"  # "describe" is the request, not a subject
    assert asks_rate_path("Can you tell me how the target range moved in 2022?") == "path"  # an indirect question
    assert asks_rate_path("Can you tell me why the Committee cut rates in 2019?") is None  # it asks why
    assert asks_rate_path("How did the statements describe rates in 2019?") is None  # wording
    # the moves named by the Committee's stance; not the markets' or the balance sheet's
    assert asks_rate_path("How much easing did the FOMC deliver over 2024?") == "count"
    assert asks_rate_path("How much did the Fed tighten in 2022?") == "count"
    assert asks_rate_path("How much did financial conditions tighten in 2022?") is None
    assert asks_rate_path("How did quantitative tightening proceed over 2023?") is None
    assert asks_rate_path("How much did inflation ease in 2023?") is None


def test_notation():
    assert range_text(4.25, 4.5) == "4-1/4 to 4-1/2 percent" and range_text(0, 0.25) == "0 to 1/4 percent"
    assert points_text(425) == "4-1/4 percentage points" and points_text(100) == "1 percentage point"
    assert points_text(25) == "1/4 percentage point"


# -- one sentence per meeting --------------------------------------------------------------------------

BOILERPLATE = ("The Committee seeks to achieve maximum employment and inflation at the rate of 2 percent over "
               "the longer run.")


INFLATION = {
    "2021-01-27": "Inflation continues to run below 2 percent.",
    "2021-04-28": "Inflation has risen to 2 percent, largely reflecting transitory factors.",
    "2021-11-03": ("Inflation is elevated above 2 percent, largely reflecting factors that are expected to be "
                   "transitory."),
}


def test_one_sentence_per_meeting_in_date_order_with_labels():
    order = ["2021-11-03", "2021-01-27", "2021-04-28"]
    passages = [passage(i + 1, iso, f"Overall financial conditions remain accommodative. {INFLATION[iso]} "
                                    "The Committee will continue to monitor incoming information.")
                for i, iso in enumerate(order)]
    answer = synthesize_answer("How did the statements characterize inflation over 2021?", passages,
                               max_sentences=1)["answer"]
    assert answer == (f"January 2021: {INFLATION['2021-01-27']} [Source 2] "
                      f"April 2021: {INFLATION['2021-04-28']} [Source 3] "
                      f"November 2021: {INFLATION['2021-11-03']} [Source 1]")


def test_boilerplate_is_said_once_for_all_its_meetings_and_each_meeting_adds_its_own():
    order = ["2021-11-03", "2021-01-27", "2021-04-28"]
    passages = [passage(i + 1, iso, f"{BOILERPLATE} {INFLATION[iso]}") for i, iso in enumerate(order)]
    answer = synthesize_answer("How did the statements characterize inflation over 2021?", passages,
                               max_sentences=1)["answer"]
    # January's best sentence is the boilerplate; April's too, so April joins it and adds its own
    assert answer == (f"January 2021 and April 2021: {BOILERPLATE} [Source 2, Source 3] "
                      f"April 2021: {INFLATION['2021-04-28']} [Source 3] "
                      f"November 2021: {INFLATION['2021-11-03']} [Source 1]")
    assert_every_sentence_cited(answer)


def test_repeated_boilerplate_gives_way_to_the_sentence_that_changed():
    same = ("In determining the timing and size of future adjustments to the target range, the Committee will "
            "assess realized and expected economic conditions.")
    patient = ("The Committee will be patient as it determines what future adjustments to the target range may be "
               "appropriate.")
    changed = ("The Committee will closely monitor incoming information and will act as appropriate to sustain the "
               "expansion as it contemplates future adjustments to the target range.")
    passages = [passage(1, "2019-05-01", f"{same} {patient}"), passage(2, "2019-06-19", f"{same} {changed}")]
    answer = synthesize_answer("How did the guidance on future adjustments to the target range change between "
                               "the May and June 2019 statements?", passages, max_sentences=1)["answer"]
    assert answer.count(same) <= 1  # never the same sentence twice
    assert "June 2019: The Committee will closely monitor incoming information and will act as appropriate" in answer
    assert answer.index("May 2019") < answer.index("June 2019: The Committee will closely")
    assert_every_sentence_cited(answer)


def test_a_meeting_that_repeats_a_chosen_sentence_joins_its_label():
    sound = "The U.S. banking system is sound and resilient."
    passages = [passage(1, "2023-03-22", f"{sound} Recent developments are likely to result in tighter credit "
                                         "conditions."),
                passage(2, "2023-05-03", f"{sound} Tighter credit conditions are likely to weigh on economic "
                                         "activity."),
                passage(3, "2023-06-14", f"{sound} Tighter credit conditions for households and businesses are likely "
                                         "to weigh on economic activity.")]
    answer = synthesize_answer("In which 2023 meetings did the statement say the banking system was sound and "
                               "resilient?", passages)["answer"]
    assert answer.count(sound) == 1
    assert f"March 2023, May 2023 and June 2023: {sound} [Source 1, Source 2, Source 3]" in answer


def test_single_meeting_question_keeps_the_best_sentences():
    passages = [passage(1, "2019-07-31", "In light of the implications of global developments for the economic "
                                         "outlook as well as muted inflation pressures, the Committee decided to lower "
                                         "the target range for the federal funds rate to 2 to 2-1/4 percent. "
                                         + BOILERPLATE),
                passage(2, "2019-07-31", "Voting against the action were Esther L. George and Eric S. Rosengren, who "
                                         "preferred at this meeting to maintain the target range at 2-1/4 to "
                                         "2-1/2 percent.")]
    answer = synthesize_answer("What did the Committee decide about the target range at the July 2019 meeting?",
                               passages)["answer"]
    assert answer.startswith("In light of the implications of global developments")
    assert "July 2019:" not in answer  # no labels: one meeting
    assert_every_sentence_cited(answer)


def test_a_sentence_introducing_a_list_is_answered_with_its_items():
    steps = ("To keep the supply of reserves ample, the Committee approved by notation vote the following steps:\n\n"
             "The Federal Reserve will purchase Treasury bills at least into the second quarter of next year.\n\n"
             "In addition, the Federal Reserve will conduct term and overnight repurchase agreement operations.")
    passages = [passage(1, "2019-10-11", steps), passage(2, "2019-10-11", BOILERPLATE)]
    answer = synthesize_answer("What steps did the Committee approve by notation vote in October 2019?",
                               passages)["answer"]
    assert answer.startswith("To keep the supply of reserves ample")
    assert contains_fact(answer, "Treasury bills") and contains_fact(answer, "repurchase agreement operations")
    assert_every_sentence_cited(answer)


def test_a_list_introduced_twice_is_said_once():
    """A directive's introduction ("… the following domestic policy directive:") and its own
    opening ("… directs the Desk to:") both end in a colon: each is read with the items after it,
    and the second, already said inside the first, is not said again."""
    directive = ("At the conclusion of the discussion, the Committee voted to direct the Desk in accordance with "
                 "the following domestic policy directive:\n\n"
                 "Effective March 17, 2022, the Federal Open Market Committee directs the Desk to:\n\n"
                 "Conduct overnight reverse repurchase agreement operations at an offering rate of 0.3 percent.")
    passages = [passage(1, "2022-03-16", directive, kind="minutes"), passage(2, "2022-03-16", BOILERPLATE)]
    answer = synthesize_answer("What did the directive set the overnight reverse repurchase agreement offering "
                               "rate to in March 2022?", passages, max_sentences=4)["answer"]
    assert answer.count("offering rate of 0.3 percent") == 1, answer
    assert answer.count("directs the Desk to") == 1, answer
    assert_every_sentence_cited(answer)


def test_no_matching_sentence_gives_an_empty_answer():
    passages = [passage(1, "2022-03-16", BOILERPLATE), passage(2, "2022-05-04", BOILERPLATE)]
    out = synthesize_answer("Which bakery sold sourdough in 2022 and 2023?", passages)
    assert (out["answer"], out["composed"], out["skill"]) == ("", False, "reader")


@pytest.mark.parametrize("question,kept", [
    ("In January 2022, what pace of purchases did the Committee set for February?", "pace purchases"),
    ("Compare the outlook language after the October 2019 cut with the December 2019 statement.", "outlook language"),
])
def test_date_words_not_the_words_between_them_are_dropped(question, kept):
    terms = undated_terms(question)
    assert set(TOKENS(kept)) <= terms
    assert not terms & set(TOKENS("January February 2022 October December 2019 cut"))


# -- statement changes (the agent's change passages) ------------------------------------------------

GUIDANCE_OLD = "The Committee will be patient as it determines what future adjustments to the target range may be appropriate."
GUIDANCE_NEW = "The Committee will closely monitor incoming information and will act as appropriate to sustain the expansion."
ECONOMY_NEW = "Growth of household spending appears to have picked up from earlier in the year."


def change_passages() -> list[str]:
    from fedlab.facts.changes import dropped_by, new_since

    return [passage(1, "2019-06-19", BOILERPLATE),
            passage(2, "2019-06-19", "Participants noted that the labor market had changed little over the period."),
            passage(3, "2019-05-01", GUIDANCE_OLD, section=dropped_by("2019-06-19")),
            passage(4, "2019-06-19", ECONOMY_NEW, section=new_since("2019-05-01")),
            passage(5, "2019-06-19", GUIDANCE_NEW, section=new_since("2019-05-01"))]


def test_a_change_question_is_answered_with_what_the_later_statement_added_and_dropped():
    answer = synthesize_answer("How did what the Committee would find appropriate change between the May and June "
                               "2019 statements?", change_passages())["answer"]
    assert answer.startswith(f"New in June 2019 (since May 2019): {GUIDANCE_NEW} [Source 5]")
    assert f"Dropped from May 2019 (by June 2019): {GUIDANCE_OLD} [Source 3]" in answer
    assert ECONOMY_NEW not in answer  # shares no term with what was asked
    assert "labor market" not in answer  # "changed little" is not a change of the statement
    assert_grounds(answer, 5)


def test_the_new_wording_of_what_was_asked_about_comes_with_it():
    """The sentence that took the asked-about one's place shares none of the question's terms;
    it is kept because the two are one edit (fedlab.facts.changes), and it leads the new side.
    Without the edit it is left out: nothing ties it to the question."""
    from fedlab.facts.changes import dropped_by, new_since

    question = "How did the guidance on future adjustments to the target range change between the May and June 2019 statements?"

    def passages(edits: bool) -> list[str]:
        return [passage(1, "2019-06-19", BOILERPLATE),
                passage(2, "2019-06-19", ECONOMY_NEW, section=new_since("2019-05-01", 1 if edits else 0)),
                passage(3, "2019-05-01", GUIDANCE_OLD, section=dropped_by("2019-06-19", 2 if edits else 0)),
                passage(4, "2019-06-19", GUIDANCE_NEW, section=new_since("2019-05-01", 2 if edits else 0))]

    answer = synthesize_answer(question, passages(True))["answer"]
    assert answer.startswith(f"New in June 2019 (since May 2019): {GUIDANCE_NEW} [Source 4]")
    assert f"Dropped from May 2019 (by June 2019): {GUIDANCE_OLD} [Source 3]" in answer
    assert ECONOMY_NEW not in answer  # another edit, about something else
    assert_grounds(answer, 4)
    without = synthesize_answer(question, passages(False))["answer"]
    assert GUIDANCE_OLD in without and GUIDANCE_NEW not in without


def test_a_change_question_naming_no_topic_gets_every_change():
    answer = synthesize_answer("What changed in the statement from May to June 2019?", change_passages())["answer"]
    for sentence, source in ((ECONOMY_NEW, 4), (GUIDANCE_NEW, 5), (GUIDANCE_OLD, 3)):
        assert f"{sentence} [Source {source}]" in answer


def test_a_question_naming_the_statements_weighs_their_changes_against_their_own_sentences():
    """Between two statements, what changed competes with the statements' other sentences, not
    with the minutes': a minutes sentence holding more of the question's words answers the
    question that names no document, not the one comparing the statements."""
    from fedlab.facts.changes import dropped_by, new_since

    discussed = "Participants discussed how the guidance should be communicated to the public."
    passages = [passage(1, "2019-06-19", BOILERPLATE), passage(2, "2019-06-19", discussed, kind="minutes"),
                passage(3, "2019-05-01", GUIDANCE_OLD, section=dropped_by("2019-06-19")),
                passage(4, "2019-06-19", GUIDANCE_NEW, section=new_since("2019-05-01"))]
    compared = synthesize_answer("How did the communication of its guidance shift between the May and June 2019 "
                                 "statements?", passages)["answer"]
    assert compared.startswith(f"New in June 2019 (since May 2019): {GUIDANCE_NEW} [Source 4]"), compared
    assert f"Dropped from May 2019 (by June 2019): {GUIDANCE_OLD} [Source 3]" in compared
    assert discussed not in compared
    unnamed = synthesize_answer("How did the communication of its guidance shift from May to June 2019?",
                                passages)["answer"]
    assert "New in" not in unnamed and discussed in unnamed, unnamed


def test_a_change_at_one_meeting_is_answered_from_its_edits_only_when_they_match_best():
    """"What changes to X were made at one meeting" may be the statement's edits or the decisions its
    minutes record: with one meeting asked about, the edits answer only when they match the question
    at least as well as any other sentence; between two meetings, half as well is enough."""
    from fedlab.facts.changes import dropped_by, new_since

    announced = "The Federal Reserve announced measures related to the dollar liquidity swap line arrangements."
    amended = ("The Committee approved amendments to the dollar liquidity swap line arrangements to lower their "
               "pricing to the OIS rate plus 25 basis points.")
    passages = [passage(1, "2020-03-15", amended, kind="minutes"),
                passage(2, "2020-03-03", GUIDANCE_OLD, section=dropped_by("2020-03-15")),
                passage(3, "2020-03-15", announced, section=new_since("2020-03-03"))]
    one = synthesize_answer("What changes to the dollar swap line arrangements were approved at the March 15, 2020 "
                            "meeting?", passages)["answer"]
    assert "New on" not in one and "OIS rate plus 25 basis points" in one, one
    assert_grounds(one, 3)
    two = synthesize_answer("How did the dollar swap line arrangements change between the March 3 and March 15, "
                            "2020 statements?", passages)["answer"]
    assert two.startswith(f"New on March 15, 2020 (since March 3, 2020): {announced} [Source 3]"), two


def test_change_passages_are_not_used_for_other_questions():
    answer = synthesize_answer("What did the June 2019 statement say about the labor market and household spending?",
                               change_passages())["answer"]
    assert "New in" not in answer and "Dropped from" not in answer
    assert "[Source 1]" in answer or "[Source 2]" in answer
    assert "[Source 4]" not in answer


def test_who_voted_is_no_change_of_the_policy_unless_the_question_asks_about_votes():
    """The roster changes with the rotation at every year's first meeting: a question comparing two
    meetings' actions is answered with the decisions, not with the new list of voters."""
    from fedlab.facts.changes import dropped_by, new_since

    roster_old = "Voting for the monetary policy action were Jerome H. Powell, Chair; Esther L. George; and Loretta J. Mester."
    roster_new = "Voting for the monetary policy action were Jerome H. Powell, Chair; Susan M. Collins; and Neel Kashkari."
    alternate = "Neel Kashkari voted as an alternate member at this meeting."
    passages = [passage(1, "2022-12-14", raise_to("4-1/4 to 4-1/2")), passage(2, "2023-02-01", raise_to("4-1/2 to 4-3/4")),
                passage(3, "2022-12-14", roster_old, section=dropped_by("2023-02-01", 1)),
                passage(4, "2023-02-01", roster_new, section=new_since("2022-12-14", 1)),
                passage(5, "2023-02-01", alternate, section=new_since("2022-12-14", 2))]
    answer = synthesize_answer("How did the FOMC's action in December 2022 differ from its action in February 2023?",
                               passages)["answer"]
    assert "4-1/4 to 4-1/2 percent" in answer and "4-1/2 to 4-3/4 percent" in answer
    assert "Voting for" not in answer and "alternate" not in answer
    assert_grounds(answer, 5)
    votes = synthesize_answer("How did the vote differ between December 2022 and February 2023?", passages)["answer"]
    assert "Susan M. Collins" in votes or "Kashkari" in votes


@pytest.mark.parametrize("question", ["Compare the Committee's decisions at the July 2019 and September 2019 meetings.",
                                      "How did the FOMC's action in July 2019 differ from its action in September 2019?"])
def test_a_decision_or_action_is_what_the_committee_decided(question):
    """Porter stems "decisions" and "decided" apart; the statements write every action as "the
    Committee decided to …"."""
    other = ("Given the Committee's decision to bring forward the timing of these purchases to August, the Desk "
             "planned to release an operational statement.")
    passages = [passage(1, "2019-07-31", other, kind="minutes"),
                passage(2, "2019-07-31", lower_by("1/4", "2 to 2-1/4")),
                passage(3, "2019-09-18", lower_by("1/4", "1-3/4 to 2"))]
    answer = synthesize_answer(question, passages)["answer"]
    assert "2 to 2-1/4 percent" in answer and "1-3/4 to 2 percent" in answer
    assert_grounds(answer, 3)


def test_a_sentence_referring_back_is_kept_with_the_one_it_continues():
    passages = [passage(1, "2021-12-15", "Participants generally noted that changes in the target range for the federal "
                                         "funds rate should be the primary means of adjusting the stance of policy. "
                                         "This preference reflected the view that there is less uncertainty about the "
                                         "effects of the federal funds rate. The Committee's asset holdings were large.")]
    answer = synthesize_answer("In December 2021, which tool did participants want as the primary means of adjusting "
                               "policy?", passages, max_sentences=1)["answer"]
    assert "This preference reflected the view" in answer and "asset holdings" not in answer
    assert_every_sentence_cited(answer)


def test_a_sentence_referring_back_is_said_after_the_one_it_refers_to_when_that_is_on_topic():
    """"These participants …" needs the sentence naming them; the sentence before one that refers
    back is said before it when it shares a word with the question, and left out when it does not
    (the boilerplate before "In support of these goals, …")."""
    views = passage(1, "2020-04-29", "Several participants favored outcome-based forward guidance tied to inflation. "
                                     "These participants noted that such guidance would clarify the Committee's "
                                     "reaction function. The Desk's operations were smooth.", kind="minutes")
    answer = synthesize_answer("In April 2020, what did participants say would clarify the Committee's reaction "
                               "function?", [views], max_sentences=1)["answer"]
    assert answer.startswith("Several participants favored outcome-based forward guidance"), answer
    assert "These participants noted" in answer and "Desk" not in answer
    assert_every_sentence_cited(answer)
    statement = passage(1, "2023-03-22", "The Committee seeks to achieve maximum employment over the longer run. "
                                         "In support of these goals, the Committee decided to raise the target range "
                                         "for the federal funds rate to 4-3/4 to 5 percent.")
    answer = synthesize_answer("Where did the FOMC put the federal funds target range in March 2023?", [statement],
                               max_sentences=1)["answer"]
    assert answer.startswith("In support of these goals") and "maximum employment" not in answer, answer


@pytest.mark.parametrize("follow, continues", [
    ("In this scenario, a second wave of the outbreak was assumed to begin around year-end.", True),
    ("However, participants judged that runoff would start closer to liftoff than before.", True),
    ("Governor Miran also expressed the view that the neutral rate had fallen.", True),
    ("Participants commented that this judgment would be broad and qualitative.", True),
    # not referring back: a time ("at this meeting"), a new subject
    ("Participants agreed that no change was needed at this meeting in the pace of purchases.", False),
    ("The staff projection for inflation was little changed from the previous one.", False),
])
def test_a_sentence_continuing_the_chosen_one_is_kept_with_it(follow, continues):
    """The minutes give a view's reasons and details in the sentences after it: a sentence opening with
    a phrase or connective that refers back, or with "also" or "this / these / such" before a noun
    among its first words, is kept with the chosen one."""
    chosen = "The staff judged that a more pessimistic projection was no less plausible than the baseline forecast."
    passages = [passage(1, "2020-04-29", f"{chosen} {follow} The Desk's operations were smooth.", kind="minutes")]
    answer = synthesize_answer("How plausible did the staff think the pessimistic projection was in April 2020?",
                               passages, max_sentences=1)["answer"]
    assert answer.startswith(chosen), answer
    assert (follow in answer) is continues, answer
    assert "Desk" not in answer
    assert_every_sentence_cited(answer)


def test_a_heading_is_not_a_sentence_but_a_tables_rows_are_read():
    """A paragraph of a few words with no closing punctuation before a paragraph of prose is a
    section heading: never an answer sentence, however many of the question's words it holds. A
    table's rows (no prose after them) are read with the sentence introducing them."""
    heading = "Discussion on Recommended Changes to the Summary of Economic Projections"
    prose = ("Participants considered two recommendations from the subcommittee on communications for changes to the "
             "Summary of Economic Projections. Participants unanimously supported the recommended changes.")
    answer = synthesize_answer("What changes to the Summary of Economic Projections did participants discuss?",
                               [passage(1, "2020-11-05", f"{heading}\n\n{prose}", kind="minutes")])["answer"]
    assert heading not in answer, answer
    assert answer.startswith("Participants considered two recommendations"), answer
    # a passage may end with the next section's heading: capitalised words, no figure
    answer = synthesize_answer("What changes to the Summary of Economic Projections did participants discuss?",
                               [passage(1, "2020-11-05", f"{prose}\n\n{heading}", kind="minutes")])["answer"]
    assert heading not in answer, answer
    table = ("A. Reciprocal currency arrangements with the following foreign central banks:\n\nForeign central bank "
             "Maximum amount\n\nBank of Canada 2,000\n\nBank of Mexico 3,000")
    answer = synthesize_answer("How large were the reciprocal currency arrangements with Canada and Mexico?",
                               [passage(1, "2020-01-29", table, kind="minutes")])["answer"]
    assert "Bank of Canada 2,000" in answer and "Bank of Mexico 3,000" in answer, answer


def test_how_much_and_how_many_ask_and_are_no_terms():
    """"…, and how much support did they get?" asks about the support: a sentence holding "much"
    (rarer than "support") is not its answer."""
    text = ("Participants considered two recommendations for changes to the Summary of Economic Projections. "
            "Most concurred that much of the accommodation was due to the Committee's forward guidance. "
            "Participants unanimously supported the recommended changes. The staff expected growth to support "
            "employment. Financial conditions were expected to support the recovery.")
    answer = synthesize_answer("What changes to the Summary of Economic Projections did participants take up in "
                               "November 2020, and how much support did they get?",
                               [passage(1, "2020-11-05", text, kind="minutes")], max_sentences=2)["answer"]
    assert "unanimously supported" in answer and "much of the accommodation" not in answer, answer


def test_an_abbreviation_the_corpus_defines_matches_its_long_form_both_ways():
    """"IOER" in the question finds the sentence that spells the rate out, and the long form in the
    question finds the abbreviation, once the reader has the corpus's glossary."""
    from fedlab.skills.reader import abbreviation_terms

    notes = [passage(1, "2020-01-29", "The manager noted that a technical adjustment to administered rates had been "
                                      "discussed at the previous meeting. Money market conditions were stable over "
                                      "the intermeeting period. The Board of Governors voted to raise the interest "
                                      "rates on required and excess reserve balances to 1.60 percent.", "minutes")]
    abbreviations = abbreviation_terms({"IOER": "interest on excess reserves", "SOMA": "system open market account"})
    # no date: a question about one meeting naming the rate would open with its value, glossary or not
    question = "What technical adjustment to IOER did the Board make?"
    without = synthesize_answer(question, notes, max_sentences=1)["answer"]
    read = synthesize_answer(question, notes, max_sentences=1, abbreviations=abbreviations)["answer"]
    assert "1.60 percent" not in without and "1.60 percent" in read
    holdings = [passage(1, "2020-01-29", "Treasury yields fell over the period. The SOMA portfolio grew as bill "
                                         "purchases continued.", "minutes")]
    long = "How did the System Open Market Account change in January 2020?"
    assert "SOMA portfolio" in synthesize_answer(long, holdings, 1, abbreviations)["answer"]
    assert synthesize_answer(long, holdings, 1)["answer"] == ""  # no sentence shares a word with it


def test_an_abbreviation_is_named_by_its_short_form_as_written_or_its_whole_long_form():
    from fedlab.skills.reader import abbreviation_terms, spelled_out

    abbreviations = abbreviation_terms({"TIPS": "treasury inflation-protected securities",
                                        "FOMC": "federal open market committee", "ON RRP": "overnight reverse repurchase agreement"})

    def spelled(question: str) -> set[str]:
        return spelled_out(question, undated_terms(question), abbreviations)

    assert spelled("How did TIPS yields move?") == set(TOKENS("treasury inflation-protected securities"))
    assert spelled("Any tips on reading the minutes?") == set()  # a word, not the abbreviation
    assert spelled("What did the FOMC decide?") == set()  # a question word, not a term to match
    assert spelled("What ON RRP rate was set?") == set(TOKENS("overnight reverse repurchase agreement"))
    assert spelled("How much did overnight reverse repurchase agreement usage fall?") == set(TOKENS("ON RRP"))


@pytest.mark.parametrize("question,parts", [
    ("What facility did the Fed announce in March 2020, and when was it to open?",
     ["What facility did the Fed announce in March 2020", "when was it to open?"]),
    ("What did the Committee decide in November 2024 and was the vote unanimous?",
     ["What did the Committee decide in November 2024", "was the vote unanimous?"]),
    ("How did rates and inflation expectations move between the May and June 2019 statements?",
     ["How did rates and inflation expectations move between the May and June 2019 statements?"]),
])
def test_a_question_asking_several_things_is_split_before_each_further_question(question, parts):
    from fedlab.skills.reader import asked_parts

    assert asked_parts(question) == parts


STRIKE_MINUTES = ("The expected federal funds rate fell after the port strike ended. The effective federal funds rate "
                  "was little changed after the port strike. Market rates fell sharply after the port strike, and the "
                  "federal funds rate path moved lower. Participants saw the port strike weighing on the labor market.")
STRIKE_STATEMENT = ("The labor market remains solid. In support of these goals, the Committee decided to raise the "
                    "target range for the federal funds rate to 4-3/4 to 5 percent.")


def test_each_part_of_a_question_gets_its_best_sentence_from_the_document_it_names():
    """The second part's sentence scores below the first part's many on the whole question: it is
    kept for its part, from the statement the part names rather than the minutes' sentence holding
    the same words."""
    passages = [passage(1, "2023-03-22", STRIKE_MINUTES, "minutes"), passage(2, "2023-03-22", STRIKE_STATEMENT)]
    rates = "After the port strike in March 2023, what did the Committee do with rates"
    both = synthesize_answer(f"{rates}, and how did the statement describe the labor market?", passages,
                             max_sentences=3)["answer"]
    assert "remains solid" in both and "4-3/4 to 5 percent" in both
    assert "weighing on the labor market" not in both
    # "In support of these goals, …" refers back: it is said after the part's sentence, which is said once
    assert both.count("remains solid") == 1 and both.index("remains solid") < both.index("4-3/4 to 5 percent")
    assert_every_sentence_cited(both)
    one = synthesize_answer(f"{rates}?", passages, max_sentences=3)["answer"]
    assert "remains solid" not in one


# -- balance-sheet records ---------------------------------------------------------------------------

SLOWED = ("Beginning in June, the Committee will slow the pace of decline of its securities holdings by reducing the "
          "monthly redemption cap on Treasury securities from $60 billion to $25 billion. The Committee will maintain "
          "the monthly redemption cap on agency debt and agency mortgage-backed securities at $35 billion.")
SLOWED_AGAIN = ("Beginning in April, the Committee will slow the pace of decline of its securities holdings by reducing "
                "the monthly redemption cap on Treasury securities from $25 billion to $5 billion.")
RUNOFF_MINUTES = ("Participants discussed the pace of balance sheet runoff. Many participants noted that slowing the "
                  "runoff of the balance sheet would ease the transition to ample reserves. Some participants noted "
                  "that the runoff of the balance sheet could continue for some time.")


def test_balance_sheet_records_open_the_answer_in_date_order_each_sentence_cited():
    """The actions the agent hands over (section BALANCE_SHEET_SECTION) are said first, meeting by
    meeting in date order, with the sentences detailing them; the minutes' sentences sharing more
    of the question's words follow, none repeating a record's sentence."""
    passages = [passage(1, "2024-05-01", RUNOFF_MINUTES, "minutes"),
                passage(2, "2025-03-19", SLOWED_AGAIN, section=BALANCE_SHEET_SECTION),
                passage(3, "2024-05-01", SLOWED, section=BALANCE_SHEET_SECTION),
                passage(4, "2025-03-19", SLOWED_AGAIN)]
    answer = synthesize_answer("How did the runoff of the balance sheet slow between May 2024 and March 2025?",
                               passages)["answer"]
    assert answer.startswith("May 2024: Beginning in June, the Committee will slow the pace of decline of its "
                             "securities holdings by reducing the monthly redemption cap on Treasury securities from "
                             "$60 billion to $25 billion. [Source 3] The Committee will maintain"), answer
    assert answer.index("$35 billion. [Source 3] March 2025: Beginning in April") > 0, answer
    assert answer.count("from $25 billion to $5 billion") == 1  # the statement passage repeats the record: said once
    assert "runoff of the balance sheet" in answer  # the rest of the answer is chosen as usual
    assert_every_sentence_cited(answer)
    assert_grounds(answer, len(passages))
    # without records the answer is the passages' sentences alone: May 2024's action is not among them
    plain = synthesize_answer("How did the runoff of the balance sheet slow between May 2024 and March 2025?",
                              [passages[0], passages[3]])["answer"]
    assert "from $60 billion to $25 billion" not in plain and "from $25 billion to $5 billion" in plain


def test_a_question_asking_when_gets_the_meeting_of_a_sentence_that_states_no_date():
    passages = [passage(1, "2023-07-26", raise_to("5-1/4 to 5-1/2")),
                passage(2, "2023-07-26", "Participants discussed the rate increase of July 26, 2023 and its effects.",
                        "minutes")]
    answer = synthesize_answer("When was the last increase in the target range for the federal funds rate?",
                               passages[:1])["answer"]
    assert answer.startswith("July 2023: In support of these goals, the Committee decided to raise"), answer
    assert_every_sentence_cited(answer)
    # a sentence with a date of its own keeps it; a question not asking when gets no label
    own = synthesize_answer("When did participants discuss the rate increase?", passages[1:])["answer"]
    assert own.startswith("Participants discussed the rate increase of July 26, 2023"), own
    what = synthesize_answer("What did the Committee decide about the target range for the federal funds rate?",
                             passages[:1])["answer"]
    assert what.startswith("In support of these goals"), what


# -- lists of names ------------------------------------------------------------------------------------

ATTENDANCE = ("A joint meeting of the Federal Open Market Committee and the Board of Governors was held on July 30, "
              "2019.\n\nPRESENT:\n\nJerome H. Powell, Chair\nJohn C. Williams, Vice Chair\nMichelle W. Bowman\nLael "
              "Brainard\nJames Bullard\nEsther L. George\nEric Rosengren\n\nJames A. Clouse, Secretary\nMatthew M. "
              "Luecke, Deputy Secretary")
GEORGE = ("President George dissented because she believed that an unchanged setting of policy was appropriate "
          "based on the incoming data.")


def test_a_list_of_names_is_read_only_for_a_question_asking_who():
    passages = [passage(1, "2019-07-31", ATTENDANCE, kind="minutes"), passage(2, "2019-07-31", GEORGE, kind="minutes")]
    why = synthesize_answer("Why did Esther George and Eric Rosengren object in July 2019?", passages)["answer"]
    assert why == f"{GEORGE} [Source 2]", why  # the attendance list names both, and says nothing
    who = synthesize_answer("Who was present besides Esther George in July 2019?", passages)["answer"]
    assert "Jerome H. Powell" in who, who


def test_united_states_and_us_are_one_place_to_the_reader():
    """The minutes write both: a question saying "U.S." finds the sentence saying "United States"
    rather than one that shares only the abbreviation with it."""
    text = ("Negative rates abroad were discussed by the staff; the U.S. experience differed. All participants "
            "judged that negative rates were not an attractive tool in the United States.")
    answer = synthesize_answer("Where did participants come down on negative rates for the U.S.?",
                               [passage(1, "2019-10-30", text, "minutes")], max_sentences=1)["answer"]
    assert answer.startswith("All participants judged"), answer


def test_hold_run_names_the_setting_meeting_the_holds_and_the_move_that_ended_it():
    meetings = [("2023-07-26", raise_to("5-1/4 to 5-1/2")), ("2023-09-20", hold_at("5-1/4 to 5-1/2")),
                ("2023-11-01", hold_at("5-1/4 to 5-1/2")), ("2023-12-13", hold_at("5-1/4 to 5-1/2")),
                ("2024-01-31", hold_at("5-1/4 to 5-1/2")), ("2024-09-18", lower_by("1/2", "4-3/4 to 5"))]
    passages = [passage(i + 1, iso, text) for i, (iso, text) in enumerate(reversed(meetings))]
    q = "Once the Fed got to 5-1/4 to 5-1/2 percent, how many meetings did it sit there before the first cut?"
    answer = synthesize_answer(q, passages)["answer"]
    assert answer.startswith("The Committee raised the target range for the federal funds rate to 5-1/4 to 5-1/2 "
                             "percent in July 2023"), answer
    # January to September 2024 is more than eight weeks: a meeting may be missing from the passages
    assert "held it there for at least the next four meetings (September 2023, November 2023, December 2023, " \
           "January 2024)" in answer, answer
    assert "It next moved in September 2024, lowering the range by 1/2 percentage point (50 basis points) to " \
           "4-3/4 to 5 percent [Source 1]" in answer, answer
    assert "in July 2023 [Source 6]" in answer  # passages are reversed: 2023-07-26 is [Source 6]
    assert_every_sentence_cited(answer)
    # every meeting found: the count is exact
    whole = [m for m in meetings if m[0] != "2024-09-18"] + [
        (iso, hold_at("5-1/4 to 5-1/2")) for iso in ("2024-03-20", "2024-05-01", "2024-06-12", "2024-07-31")] + [
        ("2024-09-18", lower_by("1/2", "4-3/4 to 5"))]
    answer = hold_run_answer(q, [passage(i + 1, iso, text) for i, (iso, text) in enumerate(whole)])
    assert "held it there for the next eight meetings" in answer, answer
    assert contains_fact(answer, "eight") and contains_fact(answer, "4-3/4 to 5 percent")


def test_hold_run_in_force_from_the_first_meeting_found_and_questions_it_does_not_answer():
    meetings = [("2019-01-30", hold_at("2-1/4 to 2-1/2")), ("2019-03-20", hold_at("2-1/4 to 2-1/2")),
                ("2019-05-01", hold_at("2-1/4 to 2-1/2")), ("2019-06-19", hold_at("2-1/4 to 2-1/2")),
                ("2019-07-31", lower_by("1/4", "2 to 2-1/4"))]
    passages = [passage(i + 1, iso, text) for i, (iso, text) in enumerate(meetings)]
    answer = hold_run_answer("How long did the FOMC keep the range at 2-1/4 to 2-1/2 percent in 2019?", passages)
    assert answer.startswith("The Committee held the target range for the federal funds rate at 2-1/4 to 2-1/2 "
                             "percent for four meetings in a row (January 2019, March 2019, May 2019, June 2019)"), answer
    assert "It next moved in July 2019, lowering the range by 1/4 percentage point" in answer
    # a range the passages never hold, or no question about holding: nothing composed
    assert hold_run_answer("How long did the FOMC keep the range at 5 to 5-1/4 percent?", passages) is None
    assert hold_run_answer("How many times did the FOMC cut rates in 2019?", passages) is None
    assert hold_run_answer("How long did the Committee stay on hold?", passages) is None  # which run is not said
    assert hold_run_answer("After the Committee's January 2019 meeting, how long did it keep rates unchanged?",
                           passages).startswith("The Committee held")


def test_the_retrievers_ranking_outweighs_a_word_more_in_a_lower_ranked_passage():
    """With rank_weight, a sentence of a passage ranked far down needs more of the question's words
    than one ranked first to be said before it: one common word more does not do; a rare one does.
    Without it, the one word more decides."""
    question = "What did participants say about the standing repo facility and its minimum bid rate?"
    first = "Participants said the standing repo facility could be subject to stigma."
    down = "Participants said the standing repo facility would put a ceiling on the rate."
    rare = "Participants said the standing repo facility's minimum bid rate should be at the top of the range."
    desk = passage(2, "2021-07-28", "The Desk kept the rate within the range.", kind="minutes")

    def said(ranked_ninth: str, weight: float) -> str:
        passages = [passage(1, "2021-07-28", first, kind="minutes"), desk,
                    passage(9, "2021-07-28", ranked_ninth, kind="minutes")]
        return synthesize_answer(question, passages, max_sentences=1, rank_weight=weight)["answer"]

    assert first in said(down, 0.25) and down in said(down, 0.0)
    assert rare in said(rare, 0.25)


def test_a_sentence_naming_the_chosen_ones_subject_again_is_kept_with_it():
    """"The path featured …" after "The illustrative tapering path was designed …" names the same
    subject: it gives the details of what was chosen. "The staff projection was …" after "The staff
    judged …" names another (its head is "projection"), and a name ("The Committee") is no subject
    named again."""
    chosen = "The illustrative tapering path was designed to be simple to communicate."
    details = "The path featured monthly reductions of $10 billion in Treasury securities."
    other = "The staff projection for inflation was little changed."
    question = "What illustrative tapering path did participants discuss in September 2021?"

    def answer(follow: str) -> str:
        text = f"{chosen} {follow} The Desk's operations were smooth."
        return synthesize_answer(question, [passage(1, "2021-09-22", text, kind="minutes")], max_sentences=1)["answer"]

    assert details in answer(details) and "$10 billion" in answer(details)
    assert other not in answer(other)
    assert "The Committee decided" not in answer("The Committee decided to continue its purchases.")


def test_a_question_about_participants_views_prefers_theirs_to_the_staffs_and_the_markets():
    """With report_weight below 1, a question about what participants thought is answered from
    the participants' sentences before the Desk's report and the staff's briefing, which share as
    many of its words; a question naming the staff is not, and weight 1 makes no difference."""
    desk = "Market participants expected the Committee to reduce the pace of its purchases of agency MBS."
    briefing = "The staff briefed participants on options to reduce the pace of purchases of agency MBS."
    views = "Participants noted reducing the pace of purchases of MBS earlier could be appropriate."
    passages = [passage(1, "2021-07-28", desk, kind="minutes",
                        section="Developments in Financial Markets and Open Market Operations"),
                passage(2, "2021-07-28", briefing, kind="minutes", section="Discussion of Asset Purchases"),
                passage(3, "2021-07-28", views, kind="minutes", section="Discussion of Asset Purchases")]

    def first(question: str, weight: float) -> str:
        answer = synthesize_answer(question, passages, max_sentences=1, report_weight=weight)["answer"]
        return answer.split(" [Source")[0]

    question = "What did participants think about reducing the pace of agency MBS purchases in July 2021?"
    assert first(question, 0.5) == views
    assert first(question, 1.0) != views  # the briefing shares "agency" too
    assert first("What did the staff brief participants on about reducing the pace of agency MBS purchases?",
                 0.5) == briefing


@pytest.mark.parametrize("question, asks", [
    ("What did participants think about the pace of runoff in March 2024?", True),
    ("Were Fed officials on the same page about cutting in June 2025?", True),
    ("Did any FOMC members favor a larger cut?", True),
    ("What did market participants expect before the July 2019 meeting?", False),
    ("How did the staff's outlook change, and what did participants think of it?", False),
    ("What did survey respondents expect for the balance sheet?", False),
    ("What did the Committee decide in March 2020?", False),
])
def test_a_question_about_participants_views_names_them_and_no_other_speaker(question, asks):
    assert asks_committee_views(question) is asks


def test_the_staffs_and_the_desks_reports_are_told_from_the_participants_views():
    assert reports_others("Staff Economic Outlook") and reports_others("Staff Review of the Financial Situation")
    assert reports_others("Developments in Financial Markets and Open Market Operations")
    assert not reports_others("Participants' Views on Current Conditions and the Economic Outlook")
    assert not reports_others("Committee Policy Action") and not reports_others(None)
    assert reports_others("Discussion of Asset Purchases", "The staff briefed participants on the options.")
    assert reports_others(None, "Survey responses also suggested that expectations had shifted.")
    assert not reports_others("Discussion of Asset Purchases", "Participants noted that the staff's options helped.")


def test_every_answer_names_the_rule_that_drafted_it():
    """``skill`` is the reader for sentences picked by their words and names a composer when one
    answers; ``skills`` lists every part, the deciding one first."""
    from fedlab.lm.extractive import synthesize_answer

    passages = ["[Source 1] FOMC statement, March 2020: The Committee decided to lower the target range for the "
                "federal funds rate to 0 to 1/4 percent. Inflation remained low."]
    out = synthesize_answer("What did the Committee decide about the target range in March 2020?", passages)
    assert out["skill"] == out["skills"][0] == "reader"
    assert out["answer"]

"""Event references resolved over the real meeting timeline (built once per session from the saved site).

The phrasings are this file's own; the expected meetings are computed from the timeline inside each
test (with a few concrete dates spot-checked against `python -m fedlab.timeline`)."""
from __future__ import annotations

from datetime import date

from pathlib import Path

import pytest

from fedlab.facts.records import Meeting, Timeline
from fedlab.facts.timeline import build_timeline
from fedlab.retrieval.dates import parse_date_hint
from fedlab.retrieval.events import EventHint, resolve_event
from fedlab.retrieval.topk import DEFAULT_SCOPE_K
from fedlab.retrieval.types import SCOPES, DateHint


@pytest.fixture(scope="session")
def timeline(documents) -> Timeline:
    return build_timeline(documents)


def resolve(question: str, timeline: Timeline) -> EventHint | None:
    """As a caller would: the date parser first (open ranges end at the corpus end), then events."""
    parsed = parse_date_hint(question, today=date.fromisoformat(timeline.coverage()[1]))
    return resolve_event(question, timeline, parsed)


def moves(timeline: Timeline, direction: str) -> list[Meeting]:
    return timeline.decisions(direction)


def with_action(timeline: Timeline, action: str) -> list[Meeting]:
    return [m for m in timeline.decisions() if any(a.action == action for a in m.decision.balance_sheet)]


def cycles(timeline: Timeline) -> list[tuple[str, list[Meeting]]]:
    """Maximal runs of same-direction moves (the resolver's own definition; the spot checks
    below pin concrete dates)."""
    from fedlab.retrieval.events import _cycles as resolver_cycles

    return resolver_cycles(timeline)


def pandemic(timeline: Timeline) -> Meeting:
    """The first emergency move from 2020 on: unscheduled, not a notation vote, the range changed."""
    return next(m for m in timeline if m.date >= "2020" and not m.scheduled and not m.notation_vote
                and m.decision is not None and m.decision.direction != "hold")


def policy_meetings(timeline: Timeline) -> list[Meeting]:
    return [m for m in timeline if (m.scheduled or m.decision is not None) and not m.notation_vote]


def run_of(timeline: Timeline, low: float, high: float, which: int = 0) -> list[Meeting]:
    """The ``which``-th run of consecutive meetings during which the range in force was low–high."""
    runs: list[list[Meeting]] = []
    current, inside = None, False
    for m in timeline:
        if m.decision is not None:
            current = (m.decision.after.low, m.decision.after.high)
            if current == (low, high) and not inside:
                runs.append([])
            inside = current == (low, high)
        if inside:
            runs[-1].append(m)
    return runs[which]


def assert_one(ev: EventHint | None, expected: str) -> None:
    assert ev is not None
    assert ev.meetings == (expected,)
    assert ev.hint == DateHint(expected, expected, "meeting", ev.hint.text)


def assert_span(ev: EventHint | None, meetings: list[Meeting]) -> None:
    assert ev is not None
    assert ev.meetings == tuple(m.date for m in meetings)
    assert (ev.hint.date_from, ev.hint.date_to) == (meetings[0].date, meetings[-1].date)
    assert ev.hint.scope in DEFAULT_SCOPE_K  # a span scope adaptive top_k widens for


# -- ordinals over decisions -----------------------------------------------------------------------------


@pytest.mark.parametrize("question, direction, index", [
    ("What did the statement say at the first hike?", "raise", 0),
    ("How was the first rate increase explained?", "raise", 0),
    ("Describe the most recent hike.", "raise", -1),
    ("What did the minutes of the final tightening move say?", "raise", -1),
    ("Why was the first cut justified?", "cut", 0),
    ("What did participants say at the latest rate cut?", "cut", -1),
    ("Explain the second reduction in the target range.", "cut", 1),
])
def test_ordinal_over_moves(timeline, question, direction, index):
    ev = resolve(question, timeline)
    assert_one(ev, moves(timeline, direction)[index].date)
    assert {"raise": "raise", "cut": "cut"}[direction] in ev.provenance


def test_ordinal_restricted_to_a_year(timeline):
    cuts_2024 = [m for m in moves(timeline, "cut") if m.date.startswith("2024")]
    raises_2023 = [m for m in moves(timeline, "raise") if m.date.startswith("2023")]
    ev = resolve("What did the Committee say at the first cut of 2024?", timeline)
    assert_one(ev, cuts_2024[0].date)
    assert ev.hint.date_from == "2024-09-18"  # spot check: the 50 bp cut of September 2024
    assert "first cut in 2024" in ev.provenance
    assert_one(resolve("the last hike in 2023", timeline), raises_2023[-1].date)
    # the year qualifies the event even though the date parser reads it as the question's year
    assert parse_date_hint("the last hike in 2023") is not None


def test_ordinal_restricted_to_a_cycle(timeline):
    (_, tightening), = [c for c in cycles(timeline) if c[0] == "raise"]
    assert_one(resolve("What happened at the last raise of the 2022-23 hikes?", timeline), tightening[-1].date)
    assert tightening[-1].date == "2023-07-26"  # spot check
    pauses = [m for m in timeline.decisions("hold") if tightening[0].date < m.date < tightening[-1].date]
    ev = resolve("Why did the Committee skip a move at the first pause of the 2022–23 tightening?", timeline)
    assert_one(ev, pauses[0].date)
    assert "tightening cycle" in ev.provenance


def test_size_and_dissent_filters(timeline):
    jumbo = [m for m in moves(timeline, "raise") if m.decision.size_bp == 75]
    assert_one(resolve("the first 75 basis point hike", timeline), jumbo[0].date)
    assert jumbo[0].date == "2022-06-15"  # spot check
    dissents = [m for m in timeline.decisions() if m.decision.dissents]
    assert_one(resolve("What did the most recent dissent argue?", timeline), dissents[-1].date)
    bowman = [m for m in dissents if any(d.name.endswith("Bowman") for d in m.decision.dissents)]
    ev = resolve("Why did Bowman's first dissent happen?", timeline)
    assert_one(ev, bowman[0].date)
    assert "Bowman" in ev.provenance
    for_cut = [m for m in dissents if any(d.preferred_direction == "cut" for d in m.decision.dissents)]
    assert_one(resolve("the first dissent in favor of a cut", timeline), for_cut[0].date)
    assert resolve("the first dissent by Volcker", timeline) is None  # no such dissenter


def test_emergency_moves_come_from_the_unscheduled_flag(timeline):
    emergency = [m for m in timeline.decisions(scheduled=False) if m.decision.direction != "hold" and not m.notation_vote]
    assert len(emergency) >= 2
    assert_span(resolve("What did the emergency cuts do?", timeline), emergency)
    assert_one(resolve("the second emergency cut", timeline), emergency[1].date)


@pytest.mark.parametrize("question, action, index", [
    ("When was runoff first slowed?", "runoff_slowed", 0),
    ("What did the statement say when the Committee first slowed runoff?", "runoff_slowed", 0),
    ("the second slowdown in runoff", "runoff_slowed", 1),
    ("Why did the taper begin?", "taper_begun", 0),
    ("What did the minutes say when the taper was accelerated?", "taper_accelerated", 0),
    ("When asset purchases ended, what did the Committee say?", "purchases_ended", 0),
    ("when QT started", "runoff_begun", 0),
])
def test_balance_sheet_steps(timeline, question, action, index):
    ev = resolve(question, timeline)
    assert_one(ev, with_action(timeline, action)[index].date)


def test_balance_sheet_step_spot_checks_and_ambiguity(timeline):
    assert resolve("when runoff was first slowed", timeline).meetings == ("2024-05-01",)
    ended = with_action(timeline, "runoff_ended")
    assert len(ended) == 2
    assert resolve("How did the Committee explain it when runoff ended?", timeline) is None  # which time?
    assert_one(resolve("What did the Committee say when runoff ended in 2019?", timeline), ended[0].date)


def test_verb_forms(timeline):
    raises, cuts = moves(timeline, "raise"), moves(timeline, "cut")
    assert_one(resolve("When did the Fed first raise rates?", timeline), raises[0].date)
    assert_one(resolve("the first time the Committee raised rates in 2022", timeline), raises[0].date)
    assert_one(resolve("What changed when the Committee last cut rates?", timeline), cuts[-1].date)


# -- relations -------------------------------------------------------------------------------------------


def test_last_cut_before_the_pandemic(timeline):
    start = pandemic(timeline)
    assert start.date == "2020-03-03"  # spot check: the first emergency (unscheduled) cut
    before = [m for m in moves(timeline, "cut") if m.date < start.date]
    ev = resolve("What did the statement say at the last cut before the pandemic?", timeline)
    assert_one(ev, before[-1].date)
    assert ev.meetings == ("2019-10-30",)
    assert "before 2020-03-03" in ev.provenance and "pandemic" in ev.provenance and "emergency" in ev.provenance


def test_first_cut_after_the_tightening(timeline):
    (_, tightening), = [c for c in cycles(timeline) if c[0] == "raise"]
    after = [m for m in moves(timeline, "cut") if m.date > tightening[-1].date]
    question = "What did participants say about the first cut after the 2022-23 tightening?"
    assert parse_date_hint(question) is not None  # the years are there, but they qualify the tightening
    ev = resolve(question, timeline)
    assert_one(ev, after[0].date)
    assert ev.meetings == ("2024-09-18",)
    assert "first cut after 2023-07-26" in ev.provenance and "tightening cycle" in ev.provenance


def test_meeting_after_and_before_an_event(timeline):
    meetings = policy_meetings(timeline)
    july_cut = next(m for m in moves(timeline, "cut") if m.date.startswith("2019-07"))
    nxt = meetings[meetings.index(july_cut) + 1]
    # the date parser alone would name the July 2019 meeting itself
    assert parse_date_hint("the meeting after the July 2019 cut").scope == "meeting"
    assert_one(resolve("What happened at the meeting after the July 2019 cut?", timeline), nxt.date)
    first_hike = moves(timeline, "raise")[0]
    prev = meetings[meetings.index(first_hike) - 1]
    assert_one(resolve("the last meeting before the first hike", timeline), prev.date)
    # no ordinal: "after" is the nearest one after, "before" the nearest one before
    assert_one(resolve("What did the statement preceding the first hike say?", timeline), prev.date)
    start = pandemic(timeline)
    assert_one(resolve("the meeting before the first emergency cut", timeline),
               meetings[meetings.index(start) - 1].date)
    last_hike = moves(timeline, "raise")[-1]
    hold_after = next(m for m in timeline.decisions("hold") if m.date > last_hike.date)
    assert_one(resolve("the first pause after the last hike", timeline), hold_after.date)


def test_relations_to_the_pandemic_include_its_meeting(timeline):
    start = pandemic(timeline)
    first_hike_after = next(m for m in moves(timeline, "raise") if m.date >= start.date)
    assert_one(resolve("the first hike since the pandemic", timeline), first_hike_after.date)
    assert_one(resolve("the first rate move after the pandemic", timeline), start.date)


def test_open_spans_around_an_event(timeline):
    start = pandemic(timeline)
    ev = resolve("How did participants see inflation before the pandemic?", timeline)
    assert_span(ev, [m for m in timeline if m.date < start.date])
    first_hike = moves(timeline, "raise")[0]
    ev = resolve("What has the Committee said about the balance sheet since the first hike?", timeline)
    assert_span(ev, [m for m in timeline if m.date >= first_hike.date])
    assert ev.hint.scope == "multi_year"


def test_between_two_events(timeline):
    raises = moves(timeline, "raise")
    ev = resolve("How did the statement change between the first hike and the last hike?", timeline)
    assert_span(ev, [m for m in timeline if raises[0].date <= m.date <= raises[-1].date])


# -- ranges ----------------------------------------------------------------------------------------------


def set_to(timeline: Timeline, low: float, high: float, direction: str) -> list[Meeting]:
    return [m for m in moves(timeline, direction) if (m.decision.after.low, m.decision.after.high) == (low, high)]


def test_meeting_that_set_a_range(timeline):
    expected = set_to(timeline, 3.0, 3.25, "raise")
    ev = resolve("What did the minutes say about the meeting that raised the range to 3 to 3-1/4 percent?", timeline)
    assert_one(ev, expected[0].date)
    assert ev.meetings == ("2022-09-21",)  # spot check
    assert "raised the range to 3.00–3.25" in ev.provenance


@pytest.mark.parametrize("written", ["5-1/4 to 5-1/2 percent", "5 1/4 to 5 1/2 percent", "5.25 to 5.50 percent",
                                     "5.25-5.5%"])
def test_ranges_written_as_fractions_or_decimals(timeline, written):
    expected = set_to(timeline, 5.25, 5.5, "raise")
    assert_one(resolve(f"when the range was raised to {written}", timeline), expected[0].date)


def test_cut_to_the_floor(timeline):
    expected = set_to(timeline, 0.0, 0.25, "cut")
    assert_one(resolve("the meeting that cut the range to 0 to 1/4 percent", timeline), expected[0].date)
    assert_one(resolve("when rates were cut to zero", timeline), expected[0].date)


def test_while_the_range_held(timeline):
    ev = resolve("What did participants discuss while the range was at 0 to 1/4 percent?", timeline)
    assert_span(ev, run_of(timeline, 0.0, 0.25))
    assert ev.hint.scope == "multi_year"
    # "last at": the latest of the runs at that range
    ev = resolve("When was the range last at 2-1/4 to 2-1/2 percent?", timeline)
    last_run = run_of(timeline, 2.25, 2.5, which=-1)
    assert ev.meetings == tuple(m.date for m in last_run)


def test_while_the_range_sat_at_its_peak(timeline):
    in_period = [m for m in timeline.decisions() if "2023" <= m.date[:4] <= "2024"]
    peak = max((m.decision.after.high, m.decision.after.low) for m in in_period)
    run = run_of(timeline, peak[1], peak[0])
    ev = resolve("How did the Committee describe inflation while the range sat at its 2023-24 peak?", timeline)
    assert_span(ev, run)
    assert (ev.hint.date_from, ev.hint.date_to) == ("2023-07-26", "2024-07-31")  # spot check
    assert ev.hint.scope == "span"
    assert "peak" in ev.provenance and "5.25–5.50" in ev.provenance
    first_cut_after = next(m for m in moves(timeline, "cut") if m.date > run[-1].date)
    assert_one(resolve("the first cut after the peak", timeline), first_cut_after.date)


# -- hold runs ------------------------------------------------------------------------------------------


def ended_by(timeline: Timeline, run: list[Meeting]) -> Meeting:
    """The move that ended a run: the first decision after it."""
    return next(m for m in timeline.decisions() if m.date > run[-1].date)


def test_how_long_a_named_range_was_held(timeline):
    run = run_of(timeline, 0.0, 0.25)
    ev = resolve("For how many meetings did the range stay at 0 to 1/4 percent?", timeline)
    assert_span(ev, run + [ended_by(timeline, run)])
    holds = [m for m in run if m.decision is not None and m.decision.direction == "hold" and not m.notation_vote]
    assert f"held at {len(holds)} meetings" in ev.provenance and f"set {run[0].date}" in ev.provenance
    assert ev.hint.text == "0 to 1/4 percent"  # the words that name the run, not the question


def test_how_long_the_range_was_held_after_an_event(timeline):
    last_hike = moves(timeline, "raise")[-1]
    run = next(run_of(timeline, last_hike.decision.after.low, last_hike.decision.after.high, k)
               for k in range(5) if run_of(timeline, last_hike.decision.after.low,
                                               last_hike.decision.after.high, k)[0].date == last_hike.date)
    expected = run + [ended_by(timeline, run)]
    for q in ("Once the Fed made its final hike, how many meetings in a row did it hold the range before cutting?",
              "after the last hike how long did the fed stay on hold",
              "How long did rates sit at their 2022-23 peak before the first cut?"):
        assert_span(resolve(q, timeline), expected)
    assert ended_by(timeline, run).decision.direction == "cut"
    # a dated anchor: the range in force after that meeting, up to the move that ended it
    dec_cut = next(m for m in moves(timeline, "cut") if m.date.startswith("2024-12"))
    run = next(run_of(timeline, dec_cut.decision.after.low, dec_cut.decision.after.high, k) for k in range(5)
               if run_of(timeline, dec_cut.decision.after.low, dec_cut.decision.after.high, k)[0].date == dec_cut.date)
    assert_span(resolve("After the December 2024 cut, how many meetings did the Committee keep rates unchanged?",
                        timeline), run + [ended_by(timeline, run)])


def test_hold_run_needs_a_question_about_holding_the_range(timeline):
    from fedlab.retrieval.events import asks_hold_run

    assert asks_hold_run("How long were rates held at 5.25-5.5%?")
    assert asks_hold_run("for how many straight meetings was the target range left unchanged after the cut?")
    assert not asks_hold_run("How many meetings did the FOMC hold in 2020?")  # meetings held, not the range
    assert not asks_hold_run("How did the guidance on how long rates would stay near zero change?")
    assert not asks_hold_run("How many times did the Committee raise rates in 2022?")
    # a range the target never sat at names no run: the question is left to the other rules
    assert resolve("How many meetings did the range stay at 7 to 7-1/4 percent?", timeline) is None


# -- cycles ----------------------------------------------------------------------------------------------


def test_cycles(timeline):
    (_, tightening), = [c for c in cycles(timeline) if c[0] == "raise"]
    easings = [ms for d, ms in cycles(timeline) if d == "cut"]
    assert len(easings) >= 2
    ev = resolve("How did the Committee communicate during the 2022-23 tightening?", timeline)
    assert_span(ev, [m for m in timeline if tightening[0].date <= m.date <= tightening[-1].date])
    assert "tightening cycle" in ev.provenance
    ev = resolve("What did the Committee say since the Fed began raising rates?", timeline)
    assert_span(ev, [m for m in timeline if m.date >= tightening[0].date])
    assert_one(resolve("the first cut of the current easing cycle", timeline), easings[-1][0].date)
    assert resolve("the first cut of the easing cycle", timeline) is None  # there are several


# -- what is not an event reference ----------------------------------------------------------------------


@pytest.mark.parametrize("question", [
    "How did participants view inflation risks?",
    "What did the Fed do in March 2020?",
    "What did the June 2022 statement say?",
    "Why did the Committee cut rates in 2019?",
    "Did the Committee discuss the increase in inflation?",
    "When did inflation peak?",
    "How did the pandemic affect the economy?",
    "Did the Committee expect to begin reducing its holdings?",
    "How did the tightening of financial conditions matter?",
    "What did the minutes say about the first meeting of the new Chair?",  # a qualifier not understood
    "the first cut after inflation peaked",  # an anchor that is not an event of the timeline
    "What did the Committee say in 2021 about the first hike?",  # the question's own year
    "What did participants say about the next meeting?",
    # an ordinal over the statements that said something: when it was said, not the last statement
    "Which was the last statement to mention the war in Ukraine?",
    "What was the first meeting whose statement mentioned vaccinations?",
])
def test_no_event_reference(timeline, question):
    assert resolve(question, timeline) is None


def test_parsed_date_of_its_own_keeps_the_parser_in_charge(timeline):
    q = "What did the Fed do in March 2020?"
    parsed = parse_date_hint(q)
    assert parsed is not None
    assert resolve_event(q, timeline, parsed) is None
    assert resolve_event("What did the Committee say in 2023 about the first cut?", timeline,
                         parse_date_hint("What did the Committee say in 2023 about the first cut?")) is None


def test_hint_shape(timeline):
    ev = resolve("Why was the first cut after the 2022-23 tightening so large?", timeline)
    assert ev.hint.scope in SCOPES
    assert ev.hint.text in "Why was the first cut after the 2022-23 tightening so large?"
    assert ev.hint.text.startswith("the first cut")
    assert ev.meetings == tuple(sorted(ev.meetings))
    assert all(timeline.by_date(d) is not None for d in ev.meetings)


def test_the_pipeline_narrows_an_event_question_to_its_meeting(corpus_dir, tmp_path):
    """retriever.events=true: the date-aware search resolves the meeting over the cached
    timeline and searches it first; off (the default), the same question has no hint."""
    from fedlab.config import compose
    from fedlab.facts.timeline import build_timeline
    from fedlab.pipeline import build_pipeline

    data = corpus_dir.parent.parent
    common = ["retriever=bm25", f"paths.data_dir={data}", f"paths.cache_dir={tmp_path}"]
    question = "What did the Committee say when runoff was first slowed?"
    on = build_pipeline(compose("evaluate", [*common, "retriever.events=true"]), progress=False)
    assert on.info.cache["timeline"] == "miss"
    (slowed,) = [m for m in build_timeline(on.corpus.documents).meetings
                 if m.decision and any(a.action == "runoff_slowed" for a in m.decision.balance_sheet)][:1]
    result = on.search(question)
    assert result.hint is not None and result.hint.date_from == slowed.date
    assert result.hits[0].chunk.meeting_date == slowed.date
    off = build_pipeline(compose("evaluate", common), progress=False)
    assert off.search(question).hint is None

    # the agent's assess_query reads the same resolution: its searches are narrowed to the meeting
    from fedlab.agent.build import build_agent
    from fedlab.agent.searcher import SearchAccess
    from fedlab.agent.answering import compose_config

    agent = build_agent(compose_config("evaluate", [*common, "retriever.events=true", "lm=extractive",
                                                    f"agent.calibration={Path(__file__).resolve().parent.parent / 'conf/calibration/extractive-bm25.json'}"]),
                        search=SearchAccess(on, on.corpus.by_id.get))
    assert "runoff" in agent.event_for(question)
    searched = []
    real_search = on.search
    on.search = lambda q, k=None, hint=None, flt=None: searched.append(hint) or real_search(q, k, hint, flt)
    answer = agent(question=question)
    assert searched and all(h is not None and h.date_from == slowed.date for h in searched)
    assert any(c.meeting_date == slowed.date for c in answer.citations) or answer.abstained


def test_after_a_meeting_is_its_aftermath(timeline):
    """"after X" with nothing counted is the state X left: X's meeting and the next one; when the
    question dates X itself ("after the October 2019 meeting"), the parser's month stands."""
    first_cut = moves(timeline, "cut")[0]
    following = next(m for m in policy_meetings(timeline) if m.date > first_cut.date)
    assert_span(resolve("What was the target range after the first cut?", timeline), [first_cut, following])
    dated = "What was the target range after the October 2019 FOMC meeting?"
    assert resolve(dated, timeline) is None
    assert parse_date_hint(dated).date_from == "2019-10-01"


def test_for_the_first_time(timeline):
    first_2022 = next(m for m in moves(timeline, "raise") if m.date.startswith("2022"))
    assert_one(resolve("What range did the Committee set when it raised rates for the first time in 2022?",
                       timeline), first_2022.date)


def test_an_anchor_the_timeline_does_not_know_is_located_by_meeting_retrieval(timeline):
    """News is first discussed at the meeting after it: the earliest meeting among the located
    passages; "the first meeting after" it is that meeting, "the last meeting before" the one before."""
    meetings = policy_meetings(timeline)
    target = next(m for m in meetings if m.date.startswith("2023-03"))
    asked: list[str] = []

    def locate(phrase: str) -> list[str]:
        asked.append(phrase)
        later = [m.date for m in meetings if m.date > target.date][:2]
        return [later[0], target.date, later[1]]

    ev = resolve_event("At the first meeting after the regional bank failures, what did the Committee do?",
                       timeline, None, locate=locate)
    assert asked == ["regional bank failures"]
    assert_one(ev, target.date)
    assert "first discussed" in ev.provenance
    before = meetings[meetings.index(target) - 1]
    assert_one(resolve_event("What did the last statement before the regional bank failures say?", timeline,
                             None, locate=locate), before.date)
    # an event with many candidates beside it is the one at that meeting, when one happened there
    assert (target.decision.direction, target.decision.size_bp) == ("raise", 25)  # March 2023
    q = "At the meeting right after the regional bank failures, what alternatives to the quarter-point hike were weighed?"
    assert_one(resolve_event(q, timeline, None, locate=locate), target.date)
    assert resolve_event("At the meeting right after the regional bank failures, did anyone oppose the "
                         "half-point cut?", timeline, None, locate=locate) is None  # no such cut there
    # without meeting retrieval, or with nothing found, an unknown anchor resolves to nothing
    q = "What happened at the first meeting after the regional bank failures?"
    assert resolve_event(q, timeline, None) is None
    assert resolve_event(q, timeline, None, locate=lambda phrase: []) is None
    # a meeting the question dates itself needs no locating
    asked.clear()
    q = "What did staff propose at the September 2019 meeting after repo rates spiked?"
    assert resolve_event(q, timeline, parse_date_hint(q), locate=locate) is None
    assert asked == []

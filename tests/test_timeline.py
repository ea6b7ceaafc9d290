"""The meeting timeline, read from the real corpus (built once per session from the saved site).

Every fact spot-checked here was read in the documents themselves first; the oracle for
"which statements are decisions" and "which meetings are scheduled" is a plain reading of the
text, independent of the extractor's patterns."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest

from fedlab.corpus.document import Document
from fedlab.query.subjects import asks_about_balance_sheet, asks_about_votes
from fedlab.facts.records import TIMELINE_VERSION, Decision, Meeting, Span, Timeline
from fedlab.facts.timeline import ADMINISTERED_RATES, BALANCE_SHEET_ACTIONS, balance_sheet_span, build_timeline, find_dissents, find_voters, parse_number, table_row, timeline_key, vote_record_span
from fedlab.query.subjects import rates_named

from fedlab.pipeline import load_timeline

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def by_id(documents):
    return {d.doc_id: d for d in documents}


@pytest.fixture(scope="session")
def timeline(documents) -> Timeline:
    return build_timeline(documents)


def decision(timeline: Timeline, date: str) -> Decision:
    meeting = timeline.by_date(date)
    assert meeting is not None, f"no meeting on {date}"
    assert meeting.decision is not None, f"{date}: no decision ({meeting.notes})"
    return meeting.decision


def actions(timeline: Timeline, date: str) -> list[str]:
    return [a.action for a in decision(timeline, date).balance_sheet]


# -- the whole corpus --------------------------------------------------------------------------------


def test_one_meeting_per_document_date_in_order(timeline, documents):
    dates = sorted({d.meeting_date for d in documents})
    assert [m.date for m in timeline] == dates
    assert timeline.coverage() == (dates[0], dates[-1])
    for m in timeline:
        assert sorted(m.documents) == sorted(d.doc_id for d in documents if d.meeting_date == m.date)


def test_every_statement_with_a_target_range_is_a_decision_and_no_other(timeline, documents):
    """Oracle: a statement that speaks of the target range carries the decision; the others
    (revised Statement on Longer-Run Goals, a facility announcement) are not decisions."""
    statements = [d for d in documents if d.doc_type == "statement"]
    assert len(statements) >= 50
    for doc in statements:
        meeting = timeline.by_date(doc.meeting_date)
        if "target range" in doc.text:
            assert meeting.decision is not None, doc.doc_id
            assert meeting.decision.source == "statement"
            after = meeting.decision.after
            assert after.high - after.low == pytest.approx(0.25), doc.doc_id
            assert 0 <= after.low < after.high <= 10
        else:
            assert meeting.decision is None and not meeting.is_decision, doc.doc_id
            assert meeting.notes and "not a policy decision" in meeting.notes[0]


def test_non_decision_statements(timeline, by_id):
    for date in ("2020-08-27", "2025-08-22"):
        assert "Statement on Longer-Run Goals" in by_id[f"statement-{date}"].text  # what they are
        meeting = timeline.by_date(date)
        assert meeting.decision is None and meeting.is_decision is False
        assert not meeting.scheduled
        assert table_row(meeting)[3] == "not a decision"
    assert len(timeline.decisions()) == len(timeline) - sum(not m.is_decision for m in timeline)


def test_ranges_chain_and_changes_add_up(timeline):
    decisions = timeline.decisions()
    assert len(decisions) >= 55
    first = decisions[0].decision
    assert first.before is not None
    for prev, cur in zip(decisions, decisions[1:]):
        d = cur.decision
        assert (d.before.low, d.before.high) == (prev.decision.after.low, prev.decision.after.high), cur.date
        assert d.change_bp == round((d.after.low - d.before.low) * 100), cur.date
        assert d.size_bp == abs(d.change_bp)
        expected = "raise" if d.change_bp > 0 else "cut" if d.change_bp < 0 else "hold"
        assert d.direction == expected, cur.date
        assert not cur.notes, (cur.date, cur.notes)  # no disagreement between the text and the ranges


def test_decision_helpers(timeline):
    cuts = timeline.decisions(direction="cut")
    raises = timeline.decisions(direction="raise")
    assert cuts and raises and all(m.decision.direction == "cut" for m in cuts)
    assert all(m.decision.change_bp > 0 for m in raises)
    assert {m.date for m in timeline.decisions(scheduled=False)} >= {"2020-03-03", "2020-03-15"}
    assert all(m.scheduled for m in timeline.decisions(direction="raise", scheduled=True))
    with pytest.raises(ValueError):
        timeline.decisions(direction="hike")
    counts = timeline.counts()
    assert counts["decisions"] == counts["raise"] + counts["cut"] + counts["hold"]


def test_scheduled_meetings_are_the_two_day_ones(timeline, by_id):
    """Oracle: in 2019–2025 every scheduled meeting ran over two days and its minutes open
    "... and continued on <day>"; the unscheduled ones have no such minutes."""
    for m in timeline:
        minutes = by_id.get(f"minutes-{m.date}")
        two_day = minutes is not None and "and continued on" in minutes.text[:1500]
        assert m.scheduled == two_day, m.date
        if m.scheduled:
            assert m.scheduled_span is not None
    for date in ("2020-03-03", "2020-03-15", "2019-10-11", "2020-03-23"):
        assert not timeline.by_date(date).scheduled, date
    per_year: dict[str, int] = {}
    for m in timeline:
        per_year[m.date[:4]] = per_year.get(m.date[:4], 0) + m.scheduled
    assert per_year["2019"] == per_year["2023"] == 8
    assert timeline.by_date("2019-10-11").notation_vote and timeline.by_date("2020-03-23").notation_vote


# -- meetings read from the documents ------------------------------------------------------------------


def test_march_2020_unscheduled_cuts(timeline, by_id):
    # statement-2020-03-03: "lower the target range ... by 1/2 percentage point, to 1 to 1-1/4 percent"
    d = decision(timeline, "2020-03-03")
    assert (d.direction, d.size_bp, d.after.low, d.after.high) == ("cut", 50, 1.0, 1.25)
    assert d.size_span.text(by_id) == "1/2 percentage point"
    # statement-2020-03-15: "lower the target range for the federal funds rate to 0 to 1/4 percent"
    m = timeline.by_date("2020-03-15")
    d = m.decision
    assert not m.scheduled
    assert (d.direction, d.size_bp, d.change_bp) == ("cut", 100, -100)
    assert (d.before.low, d.before.high, d.after.low, d.after.high) == (1.0, 1.25, 0.0, 0.25)
    assert d.after.span.text(by_id) == "0 to 1/4 percent"
    assert d.before.span.doc_id == "statement-2020-03-03"  # the earlier decision it chains from
    # "Voting against this action was Loretta J. Mester, who ... preferred to reduce the target
    # range for the federal funds rate to 1/2 to 3/4 percent"
    assert [(x.name, x.preferred_direction, x.preferred_change_bp) for x in d.dissents] == [
        ("Loretta J. Mester", "cut", -50)]
    assert actions(timeline, "2020-03-15") == ["purchases_begun"]  # "increase its holdings ... by at least $500 billion"


def test_june_2022_75_bp_with_a_dissent_for_50(timeline):
    d = decision(timeline, "2022-06-15")
    assert (d.direction, d.size_bp, d.after.low, d.after.high) == ("raise", 75, 1.5, 1.75)
    assert [(x.name, x.preferred_direction, x.preferred_change_bp) for x in d.dissents] == [
        ("Esther L. George", "raise", 50)]
    assert "0.5 percentage point" in d.dissents[0].preferred


def test_july_2019_cut_with_two_dissents(timeline):
    d = decision(timeline, "2019-07-31")
    assert (d.direction, d.size_bp, d.after.low, d.after.high) == ("cut", 25, 2.0, 2.25)
    assert [(x.name, x.preferred_direction, x.preferred_change_bp) for x in d.dissents] == [
        ("Esther L. George", "hold", 0), ("Eric S. Rosengren", "hold", 0)]
    # "The Committee will conclude the reduction of its aggregate securities holdings ... in August"
    assert actions(timeline, "2019-07-31") == ["runoff_ended"]


def test_september_2019_three_dissents_in_two_groups(timeline):
    d = decision(timeline, "2019-09-18")
    assert [(x.name, x.preferred_direction, x.preferred_change_bp) for x in d.dissents] == [
        ("James Bullard", "cut", -50), ("Esther L. George", "hold", 0), ("Eric S. Rosengren", "hold", 0)]


def test_september_2024_50_bp_cut_with_a_dissent_for_25(timeline, by_id):
    d = decision(timeline, "2024-09-18")
    assert (d.direction, d.size_bp, d.after.low, d.after.high) == ("cut", 50, 4.75, 5.0)
    assert (d.before.low, d.before.high) == (5.25, 5.5)
    assert d.size_span.text(by_id) == "1/2 percentage point"
    assert [(x.name, x.preferred_direction, x.preferred_change_bp) for x in d.dissents] == [
        ("Michelle W. Bowman", "cut", -25)]


def test_dissents_named_by_surname_in_a_date_range(timeline):
    named = timeline.dissents_named("Why did Esther George dissent, and did Rosengren?", "2019-07-01", "2019-10-31")
    assert [(m.date, x.name) for m, x in named] == [
        ("2019-07-31", "Esther L. George"), ("2019-07-31", "Eric S. Rosengren"), ("2019-09-18", "Esther L. George"),
        ("2019-09-18", "Eric S. Rosengren"), ("2019-10-30", "Esther L. George"), ("2019-10-30", "Eric S. Rosengren")]
    assert timeline.dissents_named("Why did Powell dissent?") == []  # the Chair never did
    assert timeline.dissents_named("Why did george dissent in July 2019?", "2019-07-01", "2019-07-31") == []
    bullard = timeline.dissents_named("Bullard's dissent", "2022-01-01", "2022-12-31")
    assert [x.name for _, x in bullard] == ["James Bullard"]


def test_dissents_over_something_else_than_the_rate(timeline):
    # 2025-03-19: Waller "supported no change for the federal funds target range but preferred to
    # continue the current pace of decline in securities holdings"
    (waller,) = decision(timeline, "2025-03-19").dissents
    assert waller.name == "Christopher J. Waller" and waller.preferred_direction == "other"
    assert waller.preferred.startswith("preferred to continue the current pace of decline")
    # 2025-10-29: one for a bigger cut, one for no change
    october = decision(timeline, "2025-10-29").dissents
    assert [(x.name, x.preferred_direction, x.preferred_change_bp) for x in october] == [
        ("Stephen I. Miran", "cut", -50), ("Jeffrey R. Schmid", "hold", 0)]


def test_balance_sheet_path(timeline):
    # "decided to begin reducing the monthly pace of its net asset purchases by $10 billion ..."
    assert actions(timeline, "2021-11-03") == ["taper_begun"]
    assert actions(timeline, "2021-12-15") == ["taper_accelerated"]  # "... by $20 billion ..."
    # "continue to reduce the monthly pace ..., bringing them to an end in early March" (and the
    # last month's pace, "will increase its holdings ... by at least $20 billion", begins nothing)
    assert actions(timeline, "2022-01-26") == ["purchases_ended"]
    assert actions(timeline, "2022-03-16") == []  # "expects to begin reducing its holdings ... at a coming meeting"
    assert actions(timeline, "2022-05-04") == ["runoff_begun"]  # "decided to begin reducing its holdings ... on June 1"
    assert actions(timeline, "2022-06-15") == []  # "will continue reducing its holdings"
    # "slow the pace of decline of its securities holdings ... from $60 billion to $25 billion"
    assert actions(timeline, "2024-05-01") == ["runoff_slowed"]
    assert actions(timeline, "2025-03-19") == ["runoff_slowed"]  # "... from $25 billion to $5 billion"
    # "decided to conclude the reduction of its aggregate securities holdings on December 1"
    assert actions(timeline, "2025-10-29") == ["runoff_ended"]
    for m in timeline.decisions():
        assert all(a.action in BALANCE_SHEET_ACTIONS for a in m.decision.balance_sheet)


def test_a_balance_sheet_action_is_stated_with_the_sentences_that_detail_it(timeline, by_id):
    def stated(iso: str) -> str:
        (action,) = decision(timeline, iso).balance_sheet
        return " ".join(balance_sheet_span(by_id[action.span.doc_id], action).text(by_id).split())

    # the end of purchases, then the last month's pace; not the "ongoing purchases ... will continue" after it
    january = stated("2022-01-26")
    assert january.startswith("The Committee decided to continue to reduce the monthly pace of its net asset purchases")
    assert january.endswith("agency mortgage-backed securities by at least $10 billion per month.")
    # the Treasury cap slowed, then the agency cap kept; not the "strongly committed" sentence after them
    assert stated("2024-05-01").endswith("at $35 billion and will reinvest any principal payments in excess of this "
                                         "cap into Treasury securities.")
    # the two months' paces of the taper, not the forward-looking "judges that similar reductions ..."
    november = stated("2021-11-03")
    assert "$70 billion per month" in november and "$60 billion per month" in november
    assert "similar reductions" not in november
    assert stated("2025-10-29") == "The Committee decided to conclude the reduction of its aggregate securities " \
                                   "holdings on December 1."  # nothing detailing it follows


@pytest.mark.parametrize("question,asks", [
    ("What did the Fed decide about its balance sheet in May 2022?", True),
    ("When did quantitative tightening end?", True),
    ("How fast did the Committee taper in December 2021?", True),
    ("What was the monthly redemption cap on Treasury securities in 2024?", True),
    ("How much did the FOMC increase its holdings of agency MBS in March 2020?", True),
    ("How did asset purchases change during 2020?", True),
    ("What did the Committee decide about the target range in July 2025?", False),
    ("How did participants assess the balance of risks in June 2024?", False),  # the balance of risks
    ("Why did the Desk expand its repurchase agreement operations?", False),
])
def test_asks_about_balance_sheet(question, asks):
    assert asks_about_balance_sheet(question) is asks


def test_meeting_without_a_statement_is_read_from_its_minutes(timeline, by_id):
    assert "statement-2025-01-29" not in by_id
    m = timeline.by_date("2025-01-29")
    d = m.decision
    assert m.documents == ["minutes-2025-01-29"] and m.scheduled
    assert d.source == "minutes" and d.sentence.doc_id == "minutes-2025-01-29"
    assert "decided to maintain the target range" in d.sentence.text(by_id)  # the reproduced statement
    assert (d.direction, d.after.low, d.after.high) == ("hold", 4.25, 4.5)
    assert d.dissents == [] and d.dissent_span.text(by_id) == "Voting against this action: None"


def test_votes_for_and_against_from_the_statements(timeline, by_id):
    voted = 0
    for m in timeline.decisions():
        d = m.decision
        if d.voters_span is None:  # a notation vote's directive lists no votes
            assert m.notation_vote, m.date
            continue
        voted += 1
        assert d.voters_span.text(by_id).startswith("Voting for"), m.date
        assert len(d.voters) >= 5 and len(set(d.voters)) == len(d.voters), (m.date, d.voters)
        assert not set(d.voters) & {x.name for x in d.dissents}, m.date  # nobody votes both ways
        assert all(name in d.voters_span.text(by_id) for name in d.voters)
    assert voted >= 55
    # "Jerome H. Powell, Chair, John C. Williams, Vice Chair; …": the statement's own comma typo
    assert decision(timeline, "2019-09-18").voters == [
        "Jerome H. Powell", "John C. Williams", "Michelle W. Bowman", "Lael Brainard", "Richard H. Clarida",
        "Charles L. Evans", "Randal K. Quarles"]
    # minutes list names without titles: "Voting for this action: Jerome H. Powell, John C. Williams, …"
    january = decision(timeline, "2025-01-29")
    assert january.source == "minutes" and january.voters[:2] == ["Jerome H. Powell", "John C. Williams"]
    # the record runs on to the absence in the same paragraph
    july = decision(timeline, "2025-07-30")
    record = vote_record_span(by_id[july.sentence.doc_id], july).text(by_id)
    assert record.startswith("Voting for") and "Voting against" in record
    assert record.endswith("Absent and not voting was Adriana D. Kugler.")
    # the CLI's table shows the tally beside the dissents
    assert table_row(timeline.by_date("2019-07-31"))[4] == "8–2: George (hold); Rosengren (hold)"
    assert table_row(timeline.by_date("2025-06-18"))[4] == "12–0"


def test_minutes_votes_keep_middle_initials():
    text = ("Voting for this action: Jerome H. Powell, John C. Williams, and Lisa D. Cook.\n\n"
            "Voting against this action: Esther L. George.\n\nThe Board voted unanimously.")
    doc = Document("minutes-2030-01-30", "minutes", "2030-01-30", None, "Minutes", "", text)
    dissents, _ = find_dissents(doc, (0, len(text)), None)
    assert [x.name for x in dissents] == ["Esther L. George"]
    voters, span = find_voters(doc, (0, len(text)))
    assert voters == ["Jerome H. Powell", "John C. Williams", "Lisa D. Cook"]
    assert span.text([doc]).endswith("Lisa D. Cook.")


@pytest.mark.parametrize("question,asks", [
    ("Who dissented at the June 2022 meeting?", True),
    ("Was the March 2024 decision unanimous?", True),
    ("How did the vote on the rate decision differ between June and July 2025?", True),
    ("Which Board member abstained on the vote to create the facility?", True),
    ("What steps did the FOMC approve by notation vote in October 2019?", False),  # what was decided
    ("How did the target range move in 2019?", False),
])
def test_asks_about_votes(question, asks):
    assert asks_about_votes(question) is asks


# -- spans cite what was extracted ---------------------------------------------------------------------


def _spans(decision: Decision):
    yield "sentence", decision.sentence
    yield "direction", decision.direction_span
    yield "after", decision.after.span
    if decision.before is not None:
        yield "before", decision.before.span
    if decision.size_span is not None:
        yield "size", decision.size_span
    for x in decision.dissents:
        yield "dissent", x.span
    for a in decision.balance_sheet:
        yield "balance_sheet", a.span


def test_every_span_contains_what_was_extracted(timeline, by_id):
    checked = 0
    for m in timeline:
        for _, span in [("scheduled", m.scheduled_span), ("notation", m.notation_span)]:
            if span is not None:
                assert span.text(by_id)
        if m.scheduled_span is not None:
            text = m.scheduled_span.text(by_id)
            assert "continued on" in text or "next meeting" in text
        if m.decision is None:
            continue
        d = m.decision
        for kind, span in _spans(d):
            assert span.doc_id in m.documents or kind == "before", (m.date, kind)
            assert 0 <= span.start < span.end <= len(by_id[span.doc_id].text), (m.date, kind)
            checked += 1
        sentence = d.sentence.text(by_id)
        assert d.sentence.start <= d.after.span.start and d.after.span.end <= d.sentence.end
        assert d.direction_span.text(by_id).lower() in sentence.lower()
        lo, _, hi = d.after.span.text(by_id).partition(" to ")
        assert parse_number(lo.replace("percent", "")) == d.after.low
        assert parse_number(hi.replace("percent", "")) == d.after.high
        for x in d.dissents:
            text = x.span.text(by_id)
            assert x.name in text and x.preferred in text, (m.date, x.name)
        for a in d.balance_sheet:
            assert a.span.text(by_id) == a.text
    assert checked > 150


def _rate(timeline: Timeline, date: str, rate: str):
    found = [a for a in timeline.by_date(date).administered if a.rate == rate]
    assert len(found) == 1, (date, rate, found)
    return found[0]


def test_administered_rates_from_the_implementation_notes(timeline, by_id):
    """Values read in the minutes' implementation notes first (July 2019 cut, March 2020 cut to
    zero, July 2023 last hike)."""
    expected = {"2019-07-31": {"reserves": 2.10, "on_rrp": 2.00, "primary_credit": 2.75},
                "2020-03-15": {"reserves": 0.10, "on_rrp": 0.00, "primary_credit": 0.25},
                "2023-07-26": {"reserves": 5.4, "on_rrp": 5.3, "primary_credit": 5.5}}
    for date, rates in expected.items():
        for rate, value in rates.items():
            a = _rate(timeline, date, rate)
            assert a.percent == value, (date, rate)
            assert a.value.text(by_id) == f"{a.value.text(by_id).split()[0]} percent"
            assert float(a.value.text(by_id).split()[0]) == value
            assert a.sentence.start <= a.value.start and a.value.end <= a.sentence.end
    assert "primary credit rate" in _rate(timeline, "2019-07-31", "primary_credit").sentence.text(by_id)
    # a meeting recorded in later minutes is read there: the March 3, 2020 cut has no minutes of its
    # own and its statement no implementation note; "Videoconference meeting of March 2" in the
    # minutes of March 15 says "... to lower the interest rate paid on required and excess reserve
    # balances to 1.10 percent and to approve a 1/2 percentage point decrease in the primary credit
    # rate to 1.75 percent"
    march_3 = {rate: _rate(timeline, "2020-03-03", rate) for rate in ADMINISTERED_RATES}
    assert {rate: a.percent for rate, a in march_3.items()} == {"reserves": 1.10, "on_rrp": 1.00,
                                                                "primary_credit": 1.75}
    assert {a.sentence.doc_id for a in march_3.values()} == {"minutes-2020-03-15"}
    assert "1.75 percent" in march_3["primary_credit"].sentence.text(by_id)
    # a meeting with no implementation note (the framework statement of August 2020) states none
    assert timeline.by_date("2020-08-27").administered == []


def test_administered_rates_move_with_the_target_range(timeline):
    """An oracle the patterns do not see: at every decision that moves the range, each rate moves
    the same way as from its previous value (technical adjustments happen only at holds)."""
    checked = 0
    for rate in ADMINISTERED_RATES:
        previous = None
        for m, a in timeline.administered(rate):
            d = m.decision
            if previous is not None and d is not None and d.direction != "hold":
                assert (a.percent > previous) == (d.direction == "raise"), (m.date, rate, previous, a.percent)
                assert a.percent != previous, (m.date, rate)
                checked += 1
            previous = a.percent
    assert checked >= 40
    # every set of minutes with an implementation note states all three
    counts = timeline.counts()
    assert min(counts[f"administered.{r}"] for r in ADMINISTERED_RATES) >= 50


@pytest.mark.parametrize("text, rates", [
    ("What happened to the interest rate on reserves in 2021?", ["reserves"]),
    ("How did IOER and the ON RRP offering rate move in 2019?", ["reserves", "on_rrp"]),
    ("When was the discount rate cut in 2020?", ["primary_credit"]),
    # the implementation notes' own name before 2021
    ("What was the interest rate on required and excess reserves after the cut?", ["reserves"]),
    ("How did the Fed keep reserve balances ample?", []),  # reserves, not a rate on them
    ("How did ON RRP take-up change in 2021?", []),  # the facility, not its rate
    ("Which banks borrowed primary credit in 2020?", []),
])
def test_rates_named(text, rates):
    assert rates_named(text) == rates


def test_range_notation(by_id):
    """The notations the statements use, read from them."""
    assert "1-1/2 to 1-3/4 percent" in by_id["statement-2019-10-30"].text
    assert (parse_number("1-1/2"), parse_number("1-3/4")) == (1.5, 1.75)
    assert "5-1/4 to 5-1/2 percent" in by_id["statement-2023-07-26"].text
    assert (parse_number("5-1/4"), parse_number("5-1/2")) == (5.25, 5.5)
    assert (parse_number("0"), parse_number("1/4"), parse_number("0.5")) == (0.0, 0.25, 0.5)


# -- JSON and the cache -------------------------------------------------------------------------------


def test_json_round_trip(timeline):
    data = json.loads(json.dumps(timeline.to_json()))
    assert data["version"] == TIMELINE_VERSION and data["counts"] == timeline.counts()
    again = Timeline.from_json(data)
    assert again == timeline
    assert isinstance(again.by_date("2020-03-15").decision.after.span, Span)
    assert {f.name for f in fields(Meeting)} <= set(data["meetings"][0])


def test_load_timeline_caches_by_corpus_hash(corpus_dir, tmp_path, timeline):
    from fedlab.cache import ArtifactCache, content_key
    from fedlab.corpus.snapshot import load_corpus

    corpus = load_corpus(corpus_dir)
    cache = ArtifactCache(tmp_path / "cache")
    first = load_timeline(corpus, cache)
    assert cache.stats["timeline.miss"] == 1 and cache.stats["timeline.hit"] == 0
    second = load_timeline(corpus, cache)
    assert cache.stats["timeline.hit"] == 1
    assert first == second == timeline
    key = content_key("timeline", corpus.content_hash, TIMELINE_VERSION)
    assert timeline_key(corpus) == key
    assert (tmp_path / "cache" / "timeline" / key / "timeline.json").is_file()


# -- the command ----------------------------------------------------------------------------------------


def _run(args: list[str], data_dir: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "FEDLAB_DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1", "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "fedlab.timeline", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def test_cli_json(corpus_dir, tmp_path, timeline):
    proc = _run(["--json", "--corpus", str(corpus_dir)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["counts"] == timeline.counts()
    assert len(data["meetings"]) == len(timeline)
    assert (tmp_path / "cache" / "timeline").is_dir()  # the default cache is under $FEDLAB_DATA_DIR
    march = next(m for m in data["meetings"] if m["date"] == "2020-03-15")
    assert march["decision"]["after"]["low"] == 0.0 and march["scheduled"] is False


def test_cli_table(corpus_dir, tmp_path):
    proc = _run(["--corpus", str(corpus_dir)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    row = next(line for line in proc.stdout.splitlines() if "2022-06-15" in line)
    assert "0.75–1.00 → 1.50–1.75" in row and "raise 75 bp" in row and "George (raise 50 bp)" in row
    assert "1.65 / 1.55 / 1.75" in row  # IORB, ON RRP offering rate, primary credit rate set in June 2022
    assert "2025-08-22" in proc.stdout and "not a decision" in proc.stdout


def test_cli_missing_corpus_is_one_error_line(tmp_path):
    proc = _run(["--json"], tmp_path)  # default corpus: $FEDLAB_DATA_DIR/corpus/fomc, absent
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: no corpus at ")
    assert str(tmp_path / "corpus" / "fomc") in lines[0]
    assert proc.stdout == ""
    proc = _run(["--corpus", str(tmp_path / "nowhere")], tmp_path)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_the_records_name_the_administered_rates_the_reader_reads():
    from fedlab.facts.records import RATES

    assert tuple(ADMINISTERED_RATES) == RATES

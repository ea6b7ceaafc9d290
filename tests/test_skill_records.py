"""The record skills compose from the typed records the agent hands them (fedlab.facts.passage),
and read the same records from a passage handed as text: small synthetic passages, no corpus."""
from __future__ import annotations

from fedlab.facts.balance_sheet import BalanceSheetRecord, read_balance_sheet
from fedlab.facts.passage import FactPassage, record_of
from fedlab.facts.timeline import BALANCE_SHEET_SECTION, VOTE_SECTION
from fedlab.facts.votes import VoteRecord, read_vote
from fedlab.query.frame import frame_of
from fedlab.skills import balance_sheet, votes

VOTES = ("Voting for the monetary policy action were Jerome H. Powell, Chair; John C. Williams, Vice Chair; "
         "and Michelle W. Bowman. Voting against the action was Stephen I. Miran, who preferred to lower the "
         "target range by 1/2 percentage point at this meeting. Absent and not voting was Adriana D. Kugler.")


def _head(n: int, date: str, section: str) -> str:
    return f"[Source {n}] FOMC statement, {date}, {section}\n"


def test_a_vote_is_read_from_the_text_of_its_record():
    vote = read_vote(VOTES)
    assert vote == VoteRecord(["Jerome H. Powell", "John C. Williams", "Michelle W. Bowman"],
                              "Stephen I. Miran, who preferred to lower the target range by 1/2 percentage point "
                              "at this meeting", 1, "Adriana D. Kugler")
    assert read_vote("The Committee decided to maintain the target range.") is None


def test_the_votes_skill_composes_from_the_record_a_passage_states():
    record = VoteRecord(["A. B. Chair", "C. D. Member"], "", 0, "")
    passage = FactPassage(_head(2, "2025-06-18", VOTE_SECTION) + "text the skill does not read", record)
    assert record_of(passage, VoteRecord) is record and str(passage).startswith("[Source 2]")
    got = votes.SKILL.answer(frame_of("Was the June 2025 vote unanimous?"), [passage])
    assert got.text == "June 2025: unanimous, 2 voting for [Source 2]."
    assert got.rest == []


def test_the_votes_skill_reads_a_record_handed_as_text_the_same_way():
    as_text = _head(1, "2025-07-30", VOTE_SECTION) + VOTES
    as_record = FactPassage(as_text, read_vote(VOTES))
    frame = frame_of("Who dissented in July 2025?")
    assert votes.SKILL.answer(frame, [as_text]).text == votes.SKILL.answer(frame, [as_record]).text
    assert "3 for, 1 against — Stephen I. Miran" in votes.SKILL.answer(frame, [as_text]).text


def test_the_balance_sheet_skill_composes_from_the_records_sentences():
    text = ("Beginning in June, the Committee will slow the pace of decline of its securities holdings.\n"
            "The Committee will maintain the monthly redemption cap on agency debt at $35 billion.")
    record = read_balance_sheet(text)
    assert record == BalanceSheetRecord(("Beginning in June, the Committee will slow the pace of decline of its "
                                         "securities holdings.", "The Committee will maintain the monthly "
                                         "redemption cap on agency debt at $35 billion."))
    passage = FactPassage(_head(3, "2024-05-01", BALANCE_SHEET_SECTION) + text, record)
    other = "[Source 4] FOMC statement, 2024-05-01\nInflation remains elevated."
    got = balance_sheet.SKILL.answer(frame_of("What did the Fed do with its balance sheet in May 2024?"),
                                     [passage, other])
    assert got.text.startswith("May 2024: Beginning in June, the Committee will slow") and got.text.count("[Source 3]") == 2
    assert got.rest == [other] and got.said("The Committee will maintain the monthly  redemption cap on agency "
                                            "debt at $35 billion.")

"""What each policy statement changed (fedlab.facts.changes): synthetic statements for the
alignment rules, the real corpus for which statements are compared, and the agent handing the
changes to its answer step with grounded citations."""
from __future__ import annotations

import pytest

from fedlab.corpus.document import Document
from fedlab.facts.timeline import build_timeline
from fedlab.facts.changes import changed_section, changes_between, dropped_by, new_since, policy_statements, statement_change
from fedlab.query.subjects import asks_about_change
from statements import ask_agent, statement

HOLD = "In support of these goals, the Committee decided to maintain the target range for the federal funds rate at 2-1/4 to 2-1/2 percent."
RAISE = "In support of these goals, the Committee decided to raise the target range for the federal funds rate to 2-1/2 to 2-3/4 percent."
GOALS = "The Committee seeks to achieve maximum employment and inflation at the rate of 2 percent over the longer run."
PATIENT = "The Committee will be patient as it determines what future adjustments to the target range may be appropriate."
ACT = "The Committee will closely monitor incoming information and will act as appropriate to sustain the expansion."
GROWTH = "Economic activity rose at a solid rate."
GROWTH_EDITED = "Economic activity rose at a moderate rate."


def texts(doc: Document, changed) -> list[str]:
    return [doc.text[c.start:c.end] for c in changed]


def test_added_and_dropped_sentences_in_document_order():
    may = statement("2019-05-01", GROWTH, GOALS, PATIENT, HOLD)
    june = statement("2019-06-19", GROWTH_EDITED, GOALS, ACT, HOLD)
    change = statement_change(may, june)
    assert (change.earlier, change.later) == ("2019-05-01", "2019-06-19")
    assert texts(june, change.added) == [GROWTH_EDITED, ACT]  # GOALS and HOLD are unchanged
    assert texts(may, change.dropped) == [GROWTH, PATIENT]
    assert all(c.doc_id == june.doc_id for c in change.added)
    assert all(0 <= c.overlap < 0.85 for c in change.added + change.dropped)
    # one word in seven differs: an edit, matched closely but not the same sentence
    assert change.added[0].overlap > change.added[1].overlap
    # each new sentence is one edit with the sentence it took the place of, however few words they share
    assert [c.edit for c in change.added] == [c.edit for c in change.dropped] == [1, 2]


def test_a_sentence_whose_numbers_changed_is_a_change_however_long():
    """A long decision sentence that only moved its range shares more than SAME_SENTENCE of its
    words with the old one; the new numbers are the decision, so it is added and dropped, one edit."""
    long_old = RAISE.replace(" percent.", " percent and anticipates that ongoing increases in the target range "
                                          "will be appropriate.").replace("2-1/2 to 2-3/4", "1/4 to 1/2")
    long_new = long_old.replace("1/4 to 1/2", "3/4 to 1")
    words = [set(s.lower().replace(".", "").split()) for s in (long_old, long_new)]
    assert len(words[0] & words[1]) / len(words[0] | words[1]) >= 0.85  # the words alone say "the same"
    march = statement("2022-03-16", GOALS, long_old)
    may = statement("2022-05-04", GOALS, long_new)
    change = statement_change(march, may)
    assert texts(may, change.added) == [long_new]
    assert texts(march, change.dropped) == [long_old]
    assert change.added[0].edit == change.dropped[0].edit == 1
    assert change.added[0].overlap >= 0.85  # matched closely, yet changed
    # the same numbers in another order of the same words: unchanged
    same = statement("2022-05-04", GOALS, long_old)
    assert statement_change(march, same).added == statement_change(march, same).dropped == []


def test_edits_follow_the_unchanged_sentences_not_the_shared_words():
    """A sentence inserted between two unchanged ones is an edit of its own; a replacement, where the
    old one stood, shares its edit; adjacent changed sentences are one edit."""
    before = statement("2019-05-01", GOALS, PATIENT, HOLD)
    after = statement("2019-06-19", GROWTH, GOALS, ACT, GROWTH_EDITED, HOLD)
    change = statement_change(before, after)
    edits = {after.text[c.start:c.end]: c.edit for c in change.added}
    assert edits[GROWTH] == 1  # inserted before GOALS: nothing was dropped there
    assert edits[ACT] == edits[GROWTH_EDITED] == 2  # both where PATIENT stood
    assert [(before.text[c.start:c.end], c.edit) for c in change.dropped] == [(PATIENT, 2)]


def test_a_new_range_is_a_change_and_identical_statements_have_none():
    before, after = statement("2019-01-30", GOALS, HOLD), statement("2019-03-20", GOALS, RAISE)
    change = statement_change(before, after)
    assert texts(after, change.added) == [RAISE] and texts(before, change.dropped) == [HOLD]
    same = statement_change(before, statement("2019-03-20", GOALS, HOLD))
    assert same.added == [] and same.dropped == []


def test_changes_between_pairs_consecutive_statements_inside_the_range():
    docs = [statement(d, GOALS, s) for d, s in
            (("2019-01-30", HOLD), ("2019-03-20", RAISE), ("2019-05-01", HOLD), ("2019-06-19", ACT))]
    pairs = [(c.earlier, c.later) for c in changes_between(docs, "2019-03-01", "2019-06-30")]
    assert pairs == [("2019-03-20", "2019-05-01"), ("2019-05-01", "2019-06-19")]
    assert changes_between(docs, "2019-06-01", "2019-06-30") == []  # one statement: nothing to compare


def test_what_one_meeting_changed_is_its_change_from_the_statement_before_the_range():
    docs = [statement(d, GOALS, s) for d, s in
            (("2019-01-30", HOLD), ("2019-03-20", RAISE), ("2019-05-01", HOLD))]
    assert changes_between(docs, "2019-03-01", "2019-03-31") == []
    [change] = changes_between(docs, "2019-03-01", "2019-03-31", previous=True)
    assert (change.earlier, change.later) == ("2019-01-30", "2019-03-20")
    assert [(c.earlier, c.later) for c in changes_between(docs, "2019-03-01", "2019-05-31", previous=True)] == [
        ("2019-01-30", "2019-03-20"), ("2019-03-20", "2019-05-01")]
    assert changes_between(docs, "2019-01-01", "2019-01-31", previous=True) == []  # nothing before the first


@pytest.mark.parametrize("question,asks", [
    ("What changed in the statement in January 2024?", True),
    ("How did the guidance differ between the two statements?", True),
    ("What new facility did the Fed announce?", True),
    ("What did the Committee decide in January 2024?", False),
])
def test_asks_about_change(question, asks):
    assert asks_about_change(question) is asks


def test_change_sections_read_back():
    assert changed_section(new_since("2023-12-13")) == ("new", "2023-12-13", 0)
    assert changed_section(dropped_by("2024-01-31")) == ("dropped", "2024-01-31", 0)
    assert changed_section(new_since("2023-12-13", 3)) == ("new", "2023-12-13", 3)
    assert changed_section(dropped_by("2024-01-31", 12)) == ("dropped", "2024-01-31", 12)
    for other in (None, "", "Committee Policy Action", "new since the statement of January 2024",
                  "new since the statement of 2023-12-13, edit"):
        assert changed_section(other) is None


@pytest.fixture(scope="module")
def statements(documents):
    return policy_statements(build_timeline(documents), {d.doc_id: d for d in documents})


def test_only_policy_decision_statements_are_compared(statements, documents):
    timeline = build_timeline(documents)
    decided = {m.decision.sentence.doc_id for m in timeline if m.decision is not None and m.decision.source == "statement"}
    assert statements and {d.doc_id for d in statements} == decided
    assert all(d.doc_type == "statement" for d in statements)
    assert [d.meeting_date for d in statements] == sorted(d.meeting_date for d in statements)
    others = {d.doc_id for d in documents if d.doc_type == "statement"} - decided
    assert others, "the corpus has statements without a policy decision (announcements, strategy statements)"


def test_december_2023_to_january_2024(statements):
    """Read in the two statements: January dropped the "additional policy firming" guidance and
    added the "greater confidence" one in its place; the goals sentence is in both."""
    [change] = changes_between(statements, "2023-12-01", "2024-01-31")
    by_id = {d.doc_id: d for d in statements}
    added = texts(by_id["statement-2024-01-31"], change.added)
    dropped = texts(by_id["statement-2023-12-13"], change.dropped)
    assert any("gained greater confidence that inflation is moving sustainably" in s for s in added)
    assert any("additional policy firming" in s for s in dropped)
    assert not any(s.startswith("The Committee seeks to achieve maximum employment") for s in added + dropped)
    # the new guidance took the old one's place: one edit
    [confidence] = [c.edit for c, s in zip(change.added, added) if "gained greater confidence" in s]
    [firming] = [c.edit for c, s in zip(change.dropped, dropped) if "additional policy firming" in s]
    assert confidence == firming > 0


def test_agent_answers_a_change_question_with_each_statements_changes(corpus_dir):
    def ask(*sets):
        return ask_agent(corpus_dir, "How did the inflation sentence change between the March and April 2021 "
                                     "statements?", *sets)

    answer = ask()
    assert answer.answer.startswith("New in April 2021 (since March 2021): ")
    assert "Dropped from March 2021 (by April 2021): " in answer.answer
    assert "transitory factors" in answer.answer
    assert all(c.chunk_id in answer.retrieved_chunk_ids for c in answer.citations)
    assert {c.doc_id for c in answer.citations} == {"statement-2021-04-28", "statement-2021-03-17"}
    off = ask("agent.change_passages=0")
    assert "New in" not in off.answer


def test_a_question_about_one_meetings_change_is_answered_from_the_previous_statement(corpus_dir):
    """January 2024 alone: its statement against December 2023's (agent.meeting_changes)."""
    def ask(question, *sets):
        return ask_agent(corpus_dir, question, *sets)

    question = "How did the statement's guidance on reducing the target range change in January 2024?"
    answer = ask(question)
    assert answer.answer.startswith("New in January 2024 (since December 2023): ")
    assert "greater confidence" in answer.answer
    assert "statement-2023-12-13" in {c.doc_id for c in answer.citations}
    assert all(c.chunk_id in answer.retrieved_chunk_ids for c in answer.citations)
    assert "New in" not in ask(question, "agent.meeting_changes=false").answer

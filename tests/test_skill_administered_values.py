"""The administered_values skill on small synthetic passages: one meeting's value, cited, or nothing."""
from __future__ import annotations

from fedlab.query.frame import frame_of
from fedlab.skills import registry
from fedlab.skills.administered_values import SKILL
from fedlab.skills.reader import SentenceReader

NOTE = ("[Source {n}] Implementation Note, {date}\nThe Board of Governors of the Federal Reserve System voted "
        "unanimously to set the interest rate paid on reserve balances at {value} percent, effective the next day.")
STATEMENT = ("[Source {n}] FOMC statement, {date}\nThe Committee decided to maintain the target range for the "
             "federal funds rate at 5-1/4 to 5-1/2 percent.")


def test_a_question_about_one_meeting_opens_with_its_value_cited():
    frame = frame_of("What was the interest rate on reserve balances set to in July 2023?")
    passages = [STATEMENT.format(n=1, date="2023-07-26"), NOTE.format(n=2, date="2023-07-26", value="5.40")]
    assert SKILL.applies(frame)
    got = SKILL.answer(frame, passages)
    assert got.text == "The interest rate on reserve balances was set at 5.40 percent in July 2023 [Source 2]."
    assert got.rest == passages  # the note stays among the reader's candidates


def test_it_does_not_apply_to_a_span_nor_to_a_question_naming_no_administered_rate():
    assert not SKILL.applies(frame_of("How did the interest rate on reserve balances change during 2023?"))
    assert not SKILL.applies(frame_of("What did the Committee decide in July 2023?"))


def test_two_meetings_in_range_are_not_one_meetings_value():
    frame = frame_of("What was the interest rate on reserve balances in July 2023?")
    passages = [NOTE.format(n=1, date="2023-07-26", value="5.40"), NOTE.format(n=2, date="2023-07-27", value="5.15")]
    assert SKILL.answer(frame, passages) is None


def test_the_registry_opens_the_readers_answer_with_it_and_credits_it():
    question = "What was the interest rate on reserve balances set to in July 2023?"
    passages = [STATEMENT.format(n=1, date="2023-07-26"), NOTE.format(n=2, date="2023-07-26", value="5.40")]
    out = registry.answer(frame_of(question), passages, SentenceReader())
    assert out["answer"].startswith("The interest rate on reserve balances was set at 5.40 percent in July 2023 "
                                    "[Source 2].")
    assert out["skill"] == "administered_values" and out["skills"] == ["administered_values", "reader"]
    assert out["composed"] is True

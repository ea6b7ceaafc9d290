"""The opening request of a question (fedlab.query.request): told apart from what is asked."""
from __future__ import annotations

import pytest

from fedlab.query.request import asks_for_account, split_request


@pytest.mark.parametrize("question, opening", [
    ("Walk me through the target range over 2019.", "Walk me through "),
    ("Tell me about the taper.", "Tell me about "),
    ("Could you please walk us through the 2022 hikes?", "Could you please walk us through "),
    ("Can you tell me when the Fed started tapering?", "Can you tell me "),
    ("I'd like to know whether the Fed cut in 2020.", "I'd like to know whether "),
    ("I'm curious about the SRF.", "I'm curious about "),
    ("Please describe the 2019 cuts.", "Please describe "),
    ("Help me understand the mid-cycle adjustment.", "Help me understand "),
    ("Do you know if the vote was unanimous?", "Do you know if "),
])
def test_an_opening_request_is_split_off(question, opening):
    assert split_request(question) == (opening, question[len(opening):])


@pytest.mark.parametrize("question", [
    "What was the target range in March 2020?",
    "Did the Committee cut rates in 2019?",
    "Review of the framework in 2020?",  # a noun, not a request
    "Explain.",  # nothing asked after it
    "Powell said what?",
])
def test_a_question_without_a_request_is_left_whole(question):
    assert split_request(question) == ("", question)


def test_an_account_is_a_request_with_no_question_word_of_its_own():
    assert asks_for_account("Walk me through the target range over 2019.")
    assert asks_for_account("Summarize the 2019 cuts")
    assert not asks_for_account("Can you tell me when the Fed started tapering?")  # it asks when
    assert not asks_for_account("I'd like to know whether the Fed cut in 2020.")  # yes or no
    assert not asks_for_account("What was the target range in 2019?")

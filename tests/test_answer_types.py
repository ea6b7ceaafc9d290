"""The kind of answer a question asks for, and the answer features read from it."""
from __future__ import annotations

import pytest

from fedlab.agent.evidence import (ANSWER_FEATURES, MAX_ANSWER_SENTENCES, Vocabulary, answer_features, answer_similarity,
                                   question_terms, said_text)
from fedlab.query.answer_types import asked_types, counts_documents, held_types


@pytest.mark.parametrize("question, kinds", [
    ("When did the Committee stop reinvesting principal payments?", {"date"}),
    ("In that year, when was the facility closed?", {"date"}),
    ("What did the Chair say about inflation?", set()),  # "what" is the object: no head noun
    ("Why did two members dissent?", set()),
    ("Which governors dissented, and who was absent?", {"person"}),
    ("Which Bank presidents voted in both years?", {"person"}),  # the head noun, not the verb after it
    ("How many participants favoured a larger cut?", {"count"}),
    ("Which participants called the cut a close call?", {"person"}),  # a participant is a person
    ("How much did the Desk purchase each month?", {"amount"}),
    ("What monthly pace of purchases was announced?", {"amount"}),
    ("What was the interest rate on reserve balances after the cut?", {"rate"}),
    ("What ON RRP offering rate was set?", {"rate"}),  # "ON" is a name, not the preposition
    # a subordinate "when" and a relative "who" ask nothing
    ("What target range did the FOMC set when it raised rates?", {"rate"}),
    ("Did the presidents who had dissented change their view?", set()),
    # one of the sequence of statements or minutes, named by its date
    ("Which was the last policy statement to mention the pandemic?", {"date"}),
    ("Which minutes were the first to discuss runoff?", {"date"}),
    ("Which statement first cited the war?", {"date"}),
    ("What did the last statement say about inflation?", set()),
    ("What was the first statement of 2019 about?", set()),
    # a span or period of meetings is named by its dates
    ("Over what span of meetings did the statement cite the pandemic?", {"date"}),
    ("During what period did the minutes discuss runoff?", {"date"}),
])
def test_the_kind_of_answer_a_question_asks_for(question, kinds):
    assert asked_types(question) == kinds


@pytest.mark.parametrize("question, counts", [
    ("For how many meetings did the statement say the Committee would be patient?", True),
    ("At how many 2021 meetings did the statement call inflation transitory?", True),
    ("In how many of the policy statements was the pandemic cited?", True),
    ("How many FOMC statements mentioned tariffs?", True),
    ("How many times did the Committee raise rates in 2022?", False),  # moves, not documents
    ("How many participants favoured a larger cut?", False),
])
def test_a_count_of_meetings_or_documents(question, counts):
    assert counts_documents(question) is counts


@pytest.mark.parametrize("text, kinds", [
    ("The facility opens on April 6.", {"date"}),
    ("The rate was set at 4.25 percent.", {"rate", "amount"}),
    ("The range is 2-1/4 to 2-1/2 percent.", {"rate", "amount"}),
    ("Purchases will slow by $15 billion a month.", {"amount"}),
    ("Voting against the action was Christopher J. Waller.", {"person"}),
    ("President Hammack preferred no change.", {"person"}),
    ("Voting against the action was James Bullard, who preferred a cut.", {"person"}),
    ("June 2019: 9 for, 1 against — James Bullard, who preferred a cut.", {"person", "count", "date"}),
    ("Participants discussed the outlook for 2022.", {"date"}),  # a year is a date, not a count
    ("Three members preferred a larger move.", {"count"}),
])
def test_what_a_text_holds(text, kinds):
    assert held_types(text) == kinds


def test_answer_features_read_the_answer_not_the_evidence():
    vocab = Vocabulary(100, {"ioer": 2, "rate": 60, "adjust": 10, "technical": 5})
    question = "What rate on IOER followed the technical adjustment?"
    terms = question_terms(question, None, vocab)
    right = answer_features(question, terms, "IOER was set at 1.60 percent after the technical adjustment. [1]", vocab)
    vague = answer_features(question, terms, "The manager discussed a technical adjustment. [1] It was small. [1][2]",
                            vocab)
    none = answer_features(question, terms, "", vocab)
    assert set(right) == set(ANSWER_FEATURES)
    assert right["asks_answer_type"] == vague["asks_answer_type"] == 1.0
    assert right["answer_type_found"] == 1.0 and vague["answer_type_found"] == 0.0
    # the rare term IOER weighs most: the vague answer lacks it
    assert right["answer_idf_coverage"] > vague["answer_idf_coverage"] > none["answer_idf_coverage"] == 0.0
    assert right["answer_sentences"] == 1 / MAX_ANSWER_SENTENCES and vague["answer_sentences"] == 2 / MAX_ANSWER_SENTENCES
    untyped = answer_features("Why did the Committee adjust IOER?", terms, "", vocab)
    assert untyped["asks_answer_type"] == 0.0 and untyped["answer_type_found"] == 1.0


def test_the_rarest_term_an_answer_lacks_is_its_topic_and_a_date_is_none():
    from fedlab.index.tokens import Tokenizer

    tokens = Tokenizer()
    vocab = Vocabulary(100, dict(zip(tokens("IOER rate followed technical adjustment"), (2, 60, 30, 5, 10))))
    question = "What rate on IOER followed the technical adjustment?"
    terms = question_terms(question, None, vocab)
    right = "IOER was set at 1.60 percent after the technical adjustment. [1]"
    vague = answer_features(question, terms, "The manager discussed a technical adjustment. [1]", vocab)
    [ioer], [followed] = tokens("IOER"), tokens("followed")
    assert vague["answer_missing_idf"] == answer_features(question, terms, "", vocab)["answer_missing_idf"] \
        == vocab.idf(ioer)
    assert answer_features(question, terms, right, vocab)["answer_missing_idf"] == vocab.idf(followed) < vocab.idf(ioer)
    dated = question.replace("?", " in March 2019?")
    assert answer_features(dated, question_terms(dated, None, vocab), right, vocab)["answer_missing_idf"] \
        == vocab.idf(followed)  # "March" and "2019", in no passage, would weigh most


def test_one_sentence_that_holds_the_asked_terms_scores_above_terms_gathered_across_sentences():
    vocab = Vocabulary(100, {"ioer": 2, "rate": 60, "adjust": 10, "technical": 5})
    question = "What rate on IOER followed the technical adjustment?"
    terms = question_terms(question, None, vocab)
    on_point = answer_features(question, terms, "IOER was set at 1.60 percent after the technical adjustment. [1]", vocab)
    gathered = answer_features(question, terms, "IOER was unchanged. [1] A technical adjustment was discussed. [2]", vocab)
    # both hold every term, so whole-answer coverage cannot tell them apart; the best sentence can
    assert on_point["answer_idf_coverage"] == pytest.approx(gathered["answer_idf_coverage"])
    assert on_point["answer_sentence_idf"] == pytest.approx(on_point["answer_idf_coverage"])
    assert 0.0 < gathered["answer_sentence_idf"] < on_point["answer_sentence_idf"]
    assert answer_features(question, terms, "", vocab)["answer_sentence_idf"] == 0.0


def test_a_meeting_label_is_no_answer_to_when():
    """The reader opens a sentence with its meeting ("July 2023: …") when a question asks when:
    every passage has a meeting, so the label says nothing about whether the sentence answers."""
    vocab = Vocabulary(100, {"facil": 2, "open": 10})
    question = "When did the facility open?"
    terms = question_terms(question, None, vocab)
    labelled = answer_features(question, terms, "March 2020: The facility will support markets. [1]", vocab)
    two = answer_features(question, terms, "March 3, 2020 and March 15, 2020: The facility opened. [1]", vocab)
    dated = answer_features(question, terms, "March 2020: The facility opens on April 6. [1]", vocab)
    assert labelled["answer_type_found"] == two["answer_type_found"] == 0.0
    assert dated["answer_type_found"] == 1.0


def test_the_similarity_reads_what_the_answer_says():
    """The answer's embedding is of its sentences: no meeting labels, no citation markers."""
    assert said_text("March 2020: The facility opened. [1] It closed later. [2][3]") == \
        "The facility opened. It closed later."
    assert said_text("") == ""
    assert answer_similarity([1.0, 0.0], [2.0, 0.0]) == pytest.approx(1.0)  # a cosine, whatever the norms
    assert answer_similarity([1.0, 0.0], [1.0, 1.0]) == pytest.approx(2 ** -0.5)
    assert answer_similarity([1.0, 0.0], [-1.0, 0.0]) == 0.0  # clipped to [0, 1] like every feature
    assert answer_similarity([0.0, 0.0], [1.0, 0.0]) == 0.0

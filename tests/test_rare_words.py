"""Which words a question's unknown-word evidence counts: only words no passage uses that are rare
in general English (wordfreq), so that how a question is put ("hey", "dumb question") never
reads as a topic the documents lack."""
from __future__ import annotations

import pytest

from fedlab.agent.evidence import (ZIPF_FLOOR, Vocabulary, counts_as_unknown, english_zipf, question_features,
                                   question_terms)
from fedlab.agent.settings import AgentSettings
from fedlab.chunking.chunk import Chunk
from fedlab.errors import FedlabError
from fedlab.retrieval.types import DateHint

CUT = 4.0


def _chunk(i: int, text: str) -> Chunk:
    return Chunk(f"c{i}", "statement-2020-03-15", "statement", "2020-03-15", None, 0, len(text), text, text)


VOCAB = Vocabulary.from_chunks([
    _chunk(0, "The Committee decided to lower the target range for the federal funds rate to 0 to 1/4 percent."),
    _chunk(1, "Inflation remains elevated and the Committee is attentive to inflation risks."),
])


def test_english_frequency_orders_filler_above_names_and_works_offline():
    # wordfreq ships its counts in the wheel: no download, whatever HF_HUB_OFFLINE says
    assert english_zipf("the") > english_zipf("hey") > CUT > english_zipf("taper") > ZIPF_FLOOR
    assert english_zipf("Evergrande") == english_zipf("zorblaxian") == 0.0  # below the small list's floor, unknown
    assert english_zipf("Hey") == english_zipf("hey")


def test_only_rare_words_count_as_unknown_below_the_cut():
    assert counts_as_unknown("hey", None) and counts_as_unknown("Evergrande", None)  # no cut: every word
    assert not counts_as_unknown("hey", CUT) and counts_as_unknown("Evergrande", CUT)
    asked = "hey dumb question, did the Committee worry about Evergrande?"
    assert VOCAB.unknown_words(asked) == ["hey", "dumb", "question", "worry", "Evergrande"]
    assert VOCAB.unknown_words(asked, CUT) == ["Evergrande"]
    assert VOCAB.unknown_words("hey, quick one: did the Committee lower the target range?", CUT) == []


def test_common_words_no_passage_uses_are_not_content_terms():
    hint = DateHint("2020-01-01", "2020-12-31", "year", text="in 2020")
    plain = question_terms("Did the Committee lower the target range in 2020?", hint, VOCAB, CUT)
    chatty = question_terms("hey dumb question, did the Committee lower the target range in 2020??", hint, VOCAB, CUT)
    assert chatty.content == plain.content == ["committe", "lower", "target", "rang"]
    assert question_features(chatty, hint, VOCAB)["unknown_share"] == 0.0
    # without the cut the same words are a third of the question's terms, all unknown
    uncut = question_terms("hey dumb question, did the Committee lower the target range in 2020??", hint, VOCAB)
    assert question_features(uncut, hint, VOCAB)["unknown_share"] == pytest.approx(3 / 7)
    # a rare word stays a term and unknown; a common word the corpus uses stays a known term
    named = question_terms("hey did inflation worry the Committee because of Evergrande?", None, VOCAB, CUT)
    assert named.content == ["inflation", "committe", "evergrand"]
    assert question_features(named, None, VOCAB)["unknown_share"] == pytest.approx(1 / 3)


def test_a_token_a_rare_word_gives_is_not_dropped_with_a_common_one():
    assert VOCAB.filler_tokens("hey, the target range", CUT) == {"hey"}
    # "hey-zorblax" is rare as written and gives the token "hey" too: it stays a term
    assert VOCAB.filler_tokens("hey, hey-zorblax", CUT) == set()
    assert VOCAB.filler_tokens("hey, the target range", None) == set()


def test_the_cut_is_a_zipf_frequency_or_null():
    assert AgentSettings(rare_word_zipf=None).rare_word_zipf is None
    for cut in (9.5, 2.0):  # below the floor the small list cannot tell words apart
        with pytest.raises(FedlabError, match="rare_word_zipf"):
            AgentSettings(rare_word_zipf=cut)

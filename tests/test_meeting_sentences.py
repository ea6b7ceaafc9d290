"""Reading one meeting's minutes whole (fedlab.retrieval.sentences and AgentProgram.minutes_hits):
synthetic text for the ranking rule, the real corpus for which meeting's sentences the agent adds."""
from __future__ import annotations

import pytest

from fedlab.retrieval.dates import parse_date_hint
from fedlab.retrieval.sentences import MAX_SENTENCE_CHARS, best_sentences, idf_overlap
from fedlab.index.tokens import Tokenizer

TOKENS = Tokenizer()
TEXT = ("Participants discussed the outlook for growth. "
        "Participants noted that stablecoins posed risks. "
        "Several participants saw stablecoins as a financial stability risk requiring regulation. "
        "The staff projected growth of 2 percent. "
        "The staff projected growth of 3 percent.")


def spans_text(text, spans):
    return [text[a:b] for a, b in spans]


def test_sentences_rank_by_the_rare_terms_they_hold_best_first():
    got = spans_text(TEXT, best_sentences(TEXT, set(TOKENS("participants stablecoins risk regulation")), 2))
    # four terms held beat two; a common term ("participants") weighs less than a rare one
    assert got == ["Several participants saw stablecoins as a financial stability risk requiring regulation.",
                   "Participants noted that stablecoins posed risks."]


def test_a_number_asked_for_counts_double_and_a_sentence_holding_nothing_is_not_returned():
    got = spans_text(TEXT, best_sentences(TEXT, set(TOKENS("staff growth 3")), 10))
    assert got[0] == "The staff projected growth of 3 percent."
    assert "Participants noted that stablecoins posed risks." not in got  # holds no term asked for
    assert best_sentences(TEXT, set(TOKENS("unemployment")), 3) == []


def test_a_roster_read_as_one_sentence_is_not_a_sentence():
    roster = "Attendance " + ", ".join(f"President Name{i} of the Federal Reserve Bank" for i in range(40))
    assert len(roster) > MAX_SENTENCE_CHARS
    text = roster + ". Participants saw a Federal Reserve Bank role."
    assert spans_text(text, best_sentences(text, set(TOKENS("federal reserve bank president")), 3)) == [
        "Participants saw a Federal Reserve Bank role."]


def test_idf_overlap_is_the_readers_score():
    among = [set(TOKENS(s)) for s in ("inflation rose", "inflation fell", "tariffs rose")]
    score = idf_overlap(among, set(TOKENS("tariffs inflation")))
    assert score(among[2]) > score(among[0]) > 0  # tariffs in one sentence of three, inflation in two
    assert score(set()) == 0.0


@pytest.fixture(scope="module")
def agent(corpus_dir):
    from fedlab.agent.answering import compose_config
    from fedlab.agent.build import build_agent
    from fedlab.agent.searcher import open_search

    cfg = compose_config("evaluate", ["retriever=bm25", "retriever.events=true", "agent.calibration=null",
                                      f"paths.data_dir={corpus_dir.parent.parent}"])
    search = open_search(cfg, "direct")
    yield build_agent(cfg, search=search)
    search.close()


def added(agent, question, shown=()):
    hint = parse_date_hint(question)
    out = agent.minutes_hits(question, hint, None, list(shown))
    return [(hit.chunk.doc_id, agent.search_access.document(hit.chunk.doc_id).text[a:b], hit) for hit, (a, b), _ in out]


def test_a_question_about_one_meeting_gets_its_minutes_best_sentences(agent):
    got = added(agent, "What did participants say about stablecoins at the November 2021 meeting?")
    assert len(got) == agent.settings.minutes_sentences == 2
    assert {doc for doc, _, _ in got} == {"minutes-2021-11-03"}
    assert got[0][1].startswith("Several participants commented on the financial stability risks")
    assert all("stablecoin" in text for _, text, _ in got)
    # each is located in the indexed passage that holds it, so a citation to it is grounded
    assert all(hit.chunk.start <= agent.search_access.document(doc).text.index(text) < hit.chunk.end
               for doc, text, hit in got)


def test_a_sentence_a_shown_passage_holds_is_not_added_again(agent):
    question = "What did participants say about stablecoins at the November 2021 meeting?"
    first = added(agent, question)
    shown = [first[0][2]]
    assert [t for _, t, _ in added(agent, question, shown)] == [first[1][1]]


@pytest.mark.parametrize("question", [
    "What did participants say about stablecoins during 2021?",  # several meetings: not one meeting's minutes
    "What did participants say about stablecoins?",  # no date
    "How did the November 2021 statement describe stablecoins?",  # names the statement
    "What did the November 2021 minutes say about stablecoins?",  # names the minutes: read
])
def test_only_one_meetings_question_naming_no_other_type_gets_sentences(agent, question):
    from fedlab.agent.evidence import Vocabulary, question_terms

    hint = parse_date_hint(question)
    terms = question_terms(question, hint, Vocabulary.from_chunks(agent.search_access.searcher.chunks))
    got = agent.minutes_hits(question, hint, terms, [])
    if "minutes say" in question:
        assert terms.doc_types == {"minutes"} and len(got) == 2
    else:
        assert got == []


def test_switched_off_with_zero(agent, monkeypatch):
    monkeypatch.setattr(agent.settings, "minutes_sentences", 0)
    assert added(agent, "What did participants say about stablecoins at the November 2021 meeting?") == []

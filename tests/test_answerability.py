"""The answerability model: evidence features, heads that reproduce scikit-learn, the threshold
chosen out of fold, and the agent's decisions and reported confidence taken from it."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from fedlab.agent.answerability import (ANSWERABLE_CLASSES, CORRECTNESS_CLASSES, QUESTION_FEATURE,
                                       QUESTION_OFF_TOPIC_FEATURE, AnswerabilityModel, LogisticHead, load_model)
from fedlab.agent.evidence import (COMPOSED_FEATURE, EVIDENCE_FEATURES, QUESTION_FEATURES, RUN_FEATURE,
                                   SIMILARITY_FEATURE, Vocabulary, evidence_features, question_features,
                                   question_terms)
from fedlab.agent.answerability_fit import (ANSWERABLE_FEATURES, CORRECTNESS_FEATURES, OFF_TOPIC_FEATURES, Row, choose_threshold,
                                           fit_model, spend_false_abstentions)
from fedlab.chunking.chunk import Chunk
from fedlab.errors import FedlabError
from fedlab.retrieval.types import DateHint, Hit

ROOT = Path(__file__).resolve().parent.parent


def _chunk(i: int, text: str, doc_type: str = "statement", date: str = "2020-03-15") -> Chunk:
    return Chunk(f"c{i}", f"{doc_type}-{date}", doc_type, date, None, 0, len(text), text, text)


CHUNKS = [
    _chunk(0, "The Committee decided to lower the target range for the federal funds rate to 0 to 1/4 percent."),
    _chunk(1, "Participants discussed inflation and the labor market.", "minutes"),
    _chunk(2, "Participants noted that the Committee would purchase Treasury securities.", "minutes"),
    _chunk(3, "Inflation remains elevated and the Committee is attentive to inflation risks."),
]
VOCAB = Vocabulary.from_chunks(CHUNKS)


def test_vocabulary_counts_passages_and_normalises_idf():
    assert VOCAB.n_passages == 4 and VOCAB.df["committe"] == 3 and VOCAB.df["inflation"] == 2
    assert VOCAB.idf("zebra") == 1.0 and 0 < VOCAB.idf("inflation") < VOCAB.idf("treasury") < 1
    assert VOCAB.doc_types == {"minutes": ["minut"], "statement": ["statement"]}
    # a term in many passages of one type and in none of the other's marks that type
    assert "participant" in VOCAB.markers["minutes"] and "decid" in VOCAB.markers["statement"]
    assert not any({"inflation", "committe"} & set(terms) for terms in VOCAB.markers.values())
    assert Vocabulary.from_json(json.loads(json.dumps(VOCAB.to_json()))) == VOCAB


def test_unknown_words_are_the_questions_words_no_passage_uses_as_written():
    assert VOCAB.unknown_words("When did the Committee discuss QT and zebra-style QT purchases?") == ["QT", "zebra-style"]
    # known in another form (the tokens are stemmed), stop words and numbers are not unknown
    assert VOCAB.unknown_words("Did the participants discuss inflation in 2031?") == []


def test_question_features_see_unknown_terms_doc_types_and_other_sources():
    hint = DateHint("2020-01-01", "2020-12-31", "year", text="in 2020")
    terms = question_terms("What did the Committee say about zebra inflation in 2020?", hint, VOCAB)
    assert "2020" not in terms.content and terms.salient == {"committe"}
    f = question_features(terms, hint, VOCAB)
    assert set(f) == set(QUESTION_FEATURES)
    assert terms.content == ["committe", "say", "zebra", "inflation"]
    assert f["unknown_share"] == pytest.approx(2 / 4) and f["vocab_share"] == pytest.approx(2 / 4)
    assert f["dated"] == f["multi_meeting"] == 1.0 and f["names_doc_type"] == 0.0 and f["other_source"] == 0.0
    assert f["meeting_in_range"] == 1.0
    later = DateHint("2021-01-01", "2021-12-31", "year", text="in 2021")
    assert question_features(question_terms("inflation in 2021?", later, VOCAB), later, VOCAB)["meeting_in_range"] == 0
    named = question_terms("What did the minutes say about inflation?", None, VOCAB)
    assert named.doc_types == {"minutes"} and named.marked == set()
    marked = question_terms("What did participants say about inflation in 2020?", hint, VOCAB)
    assert marked.marked == {"minutes"} and marked.doc_types == set()
    assert question_features(marked, hint, VOCAB)["names_doc_type"] == 0.0  # a marker is no name
    assert question_terms("What did Powell say in his speech?", None, VOCAB).other_source
    assert question_terms("What did they decide, according to the transcript?", None, VOCAB).other_source
    assert not question_terms("What did they decide, according to the Committee?", None, VOCAB).other_source
    assert not question_terms("What did they decide, according to the minutes?", None, VOCAB).other_source


def test_an_opening_request_is_no_evidence_of_the_topic():
    """"Walk me through …" asks how to answer: its words, in no passage, are not the question's
    unknown terms (they made a question about the target range read as one the documents lack)."""
    hint = DateHint("2020-01-01", "2020-12-31", "year", text="in 2020")
    plain = question_terms("The target range for the federal funds rate in 2020?", hint, VOCAB)
    for asked in ("Walk me through the target range for the federal funds rate in 2020.",
                  "Can you tell me about the target range for the federal funds rate in 2020?",
                  "I'd like to know the target range for the federal funds rate in 2020."):
        terms = question_terms(asked, hint, VOCAB)
        assert terms.content == plain.content and terms.salient == plain.salient
        assert question_features(terms, hint, VOCAB)["unknown_share"] == 0.0
        assert VOCAB.unknown_words(asked) == []
    # a request's words that are the question's own are kept; unknown words after it still count
    assert "inflation" in question_terms("Explain inflation in 2020.", hint, VOCAB).content
    assert VOCAB.unknown_words("Tell me about the zebra rate.") == ["zebra"]


def test_evidence_features_weigh_rare_terms_and_check_doc_types():
    terms = question_terms("What did the minutes say about Treasury purchases and zebra?", None, VOCAB)
    hits = [Hit(CHUNKS[2], 1.0, sources={"dense": 0.6}), Hit(CHUNKS[0], 0.5, sources={"dense": 0.4})]
    f = evidence_features(terms, hits, {"top_score": 0.6}, VOCAB)
    assert set(f) == set(EVIDENCE_FEATURES)
    assert f["top_dense"] == 0.6 and f["doc_type_found"] == 1.0 and f["date_coverage"] == 1.0
    assert f["missing_idf"] == 1.0  # "zebra" is in no passage
    assert terms.salient == {"treasury"} and f["salient_coverage"] == 1.0
    assert 0 < f["idf_coverage"] < 1
    statements_only = evidence_features(terms, [Hit(CHUNKS[0], 1.0)], {}, VOCAB)
    assert statements_only["doc_type_found"] == 0.0 and statements_only["top_dense"] == 0.0


LATER_FEATURES = (SIMILARITY_FEATURE, "answer_missing_idf", COMPOSED_FEATURE)  # drawn from their own stream, in this order
LATEST_FEATURES = (RUN_FEATURE,)  # and, added after them, from a third: the earlier draws stay as they were


def _rows(n: int = 240, seed: int = 0) -> list[Row]:
    """Synthetic rows whose outcome follows three features, as a fitted model should find: the
    question's vocabulary (off topic), the evidence (answerable), the answer (correct)."""
    rng = np.random.default_rng(seed)
    later = np.random.default_rng(seed + 1)  # features added since: their own draws leave the rest as they were
    latest = np.random.default_rng(seed + 2)
    rows = []
    for _ in range(n):
        off = rng.uniform() < 0.15
        ev, said = rng.uniform(), rng.uniform()
        # each name drawn once (the correctness head reads the question's n_terms too), in the order the
        # earlier tests' rows were drawn in
        f = {name: rng.uniform() for name in dict.fromkeys((*ANSWERABLE_FEATURES, *CORRECTNESS_FEATURES))
             if name not in LATER_FEATURES + LATEST_FEATURES}
        f.update({name: later.uniform() for name in LATER_FEATURES})
        f.update({name: float(latest.uniform() < 0.05) for name in LATEST_FEATURES})  # a run: seldom found
        f["vocab_share"] = rng.uniform(0, 0.4) if off else rng.uniform(0.6, 1)
        f["idf_coverage"] = ev
        f["answer_idf_coverage"] = said
        outcome = "unanswerable" if off or ev < 0.3 else ("correct" if rng.uniform() < said else "wrong")
        rows.append(Row(f, outcome, off))
    return rows


def test_heads_reproduce_scikit_learn_and_survive_json(tmp_path):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    rows = _rows()
    model = fit_model(rows, VOCAB, target_precision=0.9, off_topic_threshold=0.5, meta={"retriever": "bm25"})
    x = np.array([[r.features[n] for n in ANSWERABLE_FEATURES] for r in rows])
    xc = np.array([[r.features[n] for n in CORRECTNESS_FEATURES] for r in rows])
    answerable = np.array([r.outcome != "unanswerable" for r in rows])
    correct = np.array([r.outcome == "correct" for r in rows])

    def reference(c: float, x, y):
        return make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=5000)).fit(x, y).predict_proba(x)[:, 1]

    p_answerable = reference(model.meta["c_answerable"], x, answerable)
    np.testing.assert_allclose(model.answerable.proba_many([r.features for r in rows])[:, 1], p_answerable, atol=1e-9)
    # P(correct | answerable) is fitted on the answerable rows only, and applies to every row
    p_correct = make_pipeline(StandardScaler(), LogisticRegression(C=model.meta["c_correct"], max_iter=5000)).fit(
        xc[answerable], correct[answerable]).predict_proba(xc)[:, 1]
    outcomes = [model.outcome(r.features) for r in rows]
    np.testing.assert_allclose([o.correct for o in outcomes], p_answerable * p_correct, atol=1e-9)
    np.testing.assert_allclose([o.unanswerable for o in outcomes], 1 - p_answerable, atol=1e-9)
    np.testing.assert_allclose([o.correct + o.wrong + o.unanswerable for o in outcomes], 1.0, atol=1e-12)
    xo = np.array([[r.features.get(n, 0.0) for n in OFF_TOPIC_FEATURES] for r in rows])
    ref_off = make_pipeline(StandardScaler(), LogisticRegression(C=model.meta["c_off_topic"], max_iter=5000)).fit(
        xo, [r.off_topic for r in rows])
    np.testing.assert_allclose([model.off_topic_p(r.features) for r in rows], ref_off.predict_proba(xo)[:, 1],
                               atol=1e-9)
    path = tmp_path / "m.json"
    model.save(path)
    back = load_model(str(path))
    assert back.threshold == model.threshold and back.meta["n"] == len(rows)
    assert back.outcome(rows[0].features) == model.outcome(rows[0].features)
    # the model learned the direction of the evidence: more coverage, more likely answerable
    low, high = dict(rows[0].features, idf_coverage=0.05), dict(rows[0].features, idf_coverage=0.95)
    assert model.outcome(high).answerable > model.outcome(low).answerable
    assert 0 < model.threshold < 1 and model.meta["threshold_from"].startswith("out-of-fold")
    # among answerable rows, correctness follows what the answer holds: the correctness head finds it
    vague, full = dict(rows[0].features, answer_idf_coverage=0.05), dict(rows[0].features, answer_idf_coverage=0.95)
    assert model.correct_p(full) > model.correct_p(vague)
    assert model.outcome(full).correct / model.outcome(full).answerable == pytest.approx(model.correct_p(full))
    # a feature that could not be computed (the similarity, without an embedder) counts as neutral
    unembedded = {k: v for k, v in full.items() if k != SIMILARITY_FEATURE}
    at_mean = dict(full, **{SIMILARITY_FEATURE: model.correctness.mean[model.correctness.features.index(SIMILARITY_FEATURE)]})
    assert model.correct_p(unembedded) == pytest.approx(model.correct_p(at_mean))
    assert model.correct_p(unembedded) != pytest.approx(model.correct_p(dict(full, **{SIMILARITY_FEATURE: 0.0})))
    assert model.meta["oof_auroc_correct"] > 0.5


def test_the_off_topic_head_reads_what_a_question_is_about_not_how_it_is_put():
    """Rows as on dev: every off-topic question short and undated, the on-topic ones dated, while
    their words overlap. A head that read the question's form would call a short, undated question
    in the Committee's own words off topic; this one reads its words and the best passage."""
    rng = np.random.default_rng(3)
    rows = []
    for r in _rows():
        f = dict(r.features, vocab_share=rng.uniform(0, 0.7) if r.off_topic else rng.uniform(0.4, 1),
                 dated=0.0 if r.off_topic else 1.0, n_terms=rng.uniform(0, 0.3) if r.off_topic else rng.uniform(0.2, 1))
        rows.append(Row(f, r.outcome, r.off_topic))
    model = fit_model(rows, VOCAB, target_precision=0.9, off_topic_threshold=0.5)
    asked = dict(rows[0].features, vocab_share=0.95, dated=0.0, n_terms=0.1)  # "When did tapering start?"
    assert model.off_topic_p(asked) < 0.5
    assert model.off_topic_p(dict(asked, vocab_share=0.05)) > 0.5  # its words still decide


def test_each_head_gets_the_regularisation_its_own_rows_prefer():
    """Correctness that the features do not predict is shrunk to its base rate, whatever the
    strength the answerable head needs."""
    rng = np.random.default_rng(3)
    rows = []
    for r in _rows(300, seed=3):
        if r.outcome in ("correct", "wrong"):  # a coin flip, unrelated to the features
            r = Row(r.features, "correct" if rng.uniform() < 0.5 else "wrong", r.off_topic)
        rows.append(r)
    model = fit_model(rows, VOCAB, 0.9, 0.5)
    from fedlab.agent.answerability_fit import C_GRID

    assert model.meta["c_correct"] == min(C_GRID) < model.meta["c_answerable"]
    given = [r for r in rows if r.outcome != "unanswerable"]
    share = [model.outcome(r.features).correct / model.outcome(r.features).answerable for r in given]
    # the answerable head's strength would have fitted the coin flips far more confidently
    from fedlab.agent.answerability_fit import _pipeline

    x = np.array([[r.features[n] for n in CORRECTNESS_FEATURES] for r in given])
    loose = _pipeline(model.meta["c_answerable"]).fit(x, [r.outcome == "correct" for r in given]).predict_proba(x)[:, 1]
    assert np.std(share) < 0.5 * np.std(loose)

def test_the_correctness_head_can_be_fitted_on_the_fresh_questions_alone():
    """Dev rows answered right far more often than fresh ones with the same features (an agent
    developed on dev): fitted on the fresh rows, P(correct) follows their rate; fitted on every
    row, it is pulled up towards dev's. The answerable head reads every row either way."""
    rng = np.random.default_rng(7)
    rows = []
    for i, r in enumerate(_rows(240, seed=7)):
        fresh = i % 2 == 0
        if r.outcome != "unanswerable":  # dev right 90% of the time, fresh 50%, whatever the features
            r = Row(r.features, "correct" if rng.uniform() < (0.5 if fresh else 0.9) else "wrong", r.off_topic)
        rows.append(Row(r.features, r.outcome, r.off_topic, fresh=fresh))
    pooled = fit_model(rows, VOCAB, 0.9, 0.5)
    on_fresh = fit_model(rows, VOCAB, 0.9, 0.5, correctness_from="calibration_set")
    given = [r for r in rows if r.outcome != "unanswerable"]
    fresh_rate = np.mean([r.outcome == "correct" for r in given if r.fresh])

    def mean_p(model):
        return np.mean([model.correct_p(r.features) for r in given])

    assert on_fresh.meta["correctness_from"] == "calibration_set" and pooled.meta["correctness_from"] == "all"
    assert on_fresh.meta["correctness_held"] == [] and on_fresh.meta["n_hard_sampled"] == 0  # no row is hard
    assert on_fresh.meta["n_correctness"] == sum(r.fresh for r in given) < pooled.meta["n_correctness"] == len(given)
    assert abs(mean_p(on_fresh) - fresh_rate) < 0.05 < mean_p(pooled) - fresh_rate
    assert on_fresh.answerable.to_json() == pooled.answerable.to_json()
    # every row, told apart by an indicator the stored head holds at "fresh": fresh's rate, and the
    # features' weights learned from all the rows (the head alone: fit_correctness)
    from fedlab.agent.answerability_fit import fit_correctness

    x = np.array([[r.features[n] for n in CORRECTNESS_FEATURES] for r in rows])
    correct = np.array([r.outcome == "correct" for r in rows])
    answerable = np.array([r.outcome != "unanswerable" for r in rows])
    fresh = answerable & np.array([r.fresh for r in rows])
    as_new = fit_correctness(x, correct, answerable, fresh, "all_as_new")
    assert as_new.mode == "all_as_new" and as_new.rows.sum() == len(given)
    # the indicator takes back most of the pull towards dev's rate (its L2 penalty keeps some)
    as_new_p = np.mean([as_new.head.proba(r.features)["correct"] for r in given])
    assert abs(as_new_p - fresh_rate) < 0.25 * (mean_p(pooled) - fresh_rate)
    assert as_new.head.features == list(CORRECTNESS_FEATURES)
    # too few fresh right or wrong answers for the folds: every answerable row, as before
    assert fit_correctness(x, correct, answerable, fresh & (np.cumsum(fresh) <= 8), "calibration_set").mode == "all"
    with pytest.raises(FedlabError, match="correctness_from='dev'"):
        fit_model(rows, VOCAB, 0.9, 0.5, correctness_from="dev")


def test_questions_written_to_be_hard_are_told_apart_and_reported_as_they_come():
    """Fresh rows, a third of them written toward hard questions and answered right half as often
    with the same features: the stored head holds their indicator at 0 and reports the others'
    rate; fitted as if they were like the rest, it reports the pooled, lower one."""
    from fedlab.agent.answerability_fit import HARD_FEATURE, fit_correctness

    rng = np.random.default_rng(11)
    rows = [Row(r.features, r.outcome, r.off_topic, fresh=True, hard=i % 3 == 0) for i, r in enumerate(_rows(300, seed=11))]
    rows = [r if r.outcome == "unanswerable" else
            Row(r.features, "correct" if rng.uniform() < (0.35 if r.hard else 0.7) else "wrong", r.off_topic,
                fresh=True, hard=r.hard) for r in rows]
    given = [r for r in rows if r.outcome != "unanswerable"]
    as_they_come = np.mean([r.outcome == "correct" for r in given if not r.hard])
    x = np.array([[r.features[n] for n in CORRECTNESS_FEATURES] for r in rows])
    correct = np.array([r.outcome == "correct" for r in rows])
    answerable = np.array([r.outcome != "unanswerable" for r in rows])
    hard = np.array([r.hard for r in rows])
    told = fit_correctness(x, correct, answerable, answerable, "calibration_set", hard)
    pooled = fit_correctness(x, correct, answerable, answerable, "calibration_set")

    def mean_p(fit):
        return np.mean([fit.head.proba(r.features)["correct"] for r in given])

    assert told.held == [HARD_FEATURE] and pooled.held == []
    assert told.head.features == pooled.head.features == list(CORRECTNESS_FEATURES)  # the indicator is held
    assert abs(mean_p(told) - as_they_come) < 0.05 < as_they_come - mean_p(pooled)
    # every row hard (or none): nothing to tell apart, no indicator
    assert fit_correctness(x, correct, answerable, answerable, "calibration_set", answerable).held == []


def test_a_feature_fixed_at_a_value_moves_into_the_intercept():
    from fedlab.agent.answerability_fit import _fold_constant

    head = LogisticHead(["no", "yes"], ["a", "b", "c"], [0.5, 0.2, 0.1], [2.0, 0.5, 0.25], [[1.0, -2.0, 3.0]], [0.3])
    fixed = _fold_constant(head, "b", 1.0)
    assert fixed.features == ["a", "c"]
    for a, c in ((0.0, 0.0), (1.0, 0.5), (-2.0, 3.0)):
        assert fixed.proba({"a": a, "c": c}) == pytest.approx(head.proba({"a": a, "b": 1.0, "c": c}))


def test_the_answer_threshold_withholds_at_most_its_share_of_the_right_answers():
    from fedlab.agent.answerability_fit import choose_answer_threshold

    p = np.array([0.9, 0.2, 0.5, 0.7, 0.4, 0.8, 0.6, 0.3, 0.95, 0.85])
    assert choose_answer_threshold(p, None) == 0.0  # no budget: nothing withheld
    assert choose_answer_threshold(p, 0.0) == pytest.approx(0.2)  # below every right answer
    assert choose_answer_threshold(p, 0.1) == pytest.approx(0.3)  # one of ten may go
    assert choose_answer_threshold(p, 0.25) == pytest.approx(0.4)
    assert choose_answer_threshold(np.array([]), 0.1) == 0.0


def test_the_fitted_answer_threshold_follows_its_budget():
    rows = _rows(300, seed=5)
    loose = fit_model(rows, VOCAB, 0.9, 0.5, max_withheld_correct=0.2)
    tight = fit_model(rows, VOCAB, 0.9, 0.5, max_withheld_correct=0.0)
    none = fit_model(rows, VOCAB, 0.9, 0.5)
    assert none.answer_threshold == 0.0 and none.meta["oof_withheld"]["correct"] == 0
    assert 0.0 < tight.answer_threshold < loose.answer_threshold < 1.0
    assert tight.meta["oof_withheld"]["correct"] == 0
    right = sum(r.outcome == "correct" for r in rows)
    assert 0 < loose.meta["oof_withheld"]["correct"] <= 0.2 * right
    assert loose.meta["oof_withheld"]["wrong"] > tight.meta["oof_withheld"]["wrong"]
    assert loose.meta["oof_false_abstention_after"] >= loose.meta["oof_false_abstention"]
    assert AnswerabilityModel.from_json(loose.to_json()).answer_threshold == loose.answer_threshold


def _first_threshold(p, answerable, kept, base, budget):
    """spend_false_abstentions with no answer threshold: the P(answerable) threshold alone."""
    t, a = spend_false_abstentions(p, p, answerable, answerable, kept, base, budget, None)
    assert a == 0.0
    return t


def test_a_false_abstention_budget_raises_the_threshold_as_far_as_it_allows():
    p = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95])
    answerable = np.array([0, 0, 1, 0, 1, 0, 1, 1, 1, 1], dtype=bool)
    kept = np.ones(10, dtype=bool)
    base = choose_threshold(p, answerable, kept, 0.5)
    assert base == pytest.approx(0.1)
    assert _first_threshold(p, answerable, kept, base, None) == base
    # 6 answerable: abstaining below 0.5 drops one (1/6), below 0.7 two (2/6)
    assert _first_threshold(p, answerable, kept, base, 0.0) == pytest.approx(0.3)
    assert _first_threshold(p, answerable, kept, base, 0.2) == pytest.approx(0.5)
    assert _first_threshold(p, answerable, kept, base, 0.34) == pytest.approx(0.7)
    assert _first_threshold(p, answerable, kept, 0.85, 0.0) >= 0.85  # never lowered
    # a threshold that alone overspends the budget is still raised as far as no answerable row is added
    assert _first_threshold(p, answerable, kept, 0.6, 0.0) == pytest.approx(0.7)
    # an answerable question the off-topic head already removes uses up the budget
    assert _first_threshold(p, answerable, kept, base, 0.1) == pytest.approx(0.3)
    off = kept.copy()
    off[2] = False
    # ... past the budget: the threshold rises only as far as it abstains on no other answerable one
    assert _first_threshold(p, answerable, off, base, 0.1) == pytest.approx(0.5)


def test_a_withheld_answer_to_an_answerable_question_spends_the_false_abstention_budget():
    # four answerable questions (three answered right, one wrong) and two unanswerable ones
    answerable = np.array([1, 1, 1, 1, 0, 0], dtype=bool)
    correct = np.array([1, 1, 1, 0, 0, 0], dtype=bool)
    p_said = np.array([0.8, 0.7, 0.6, 0.3, 0.2, 0.5])
    kept = np.ones(6, dtype=bool)
    p = np.full(6, 0.9)

    def spend(budget, withheld=0.0, p_answerable=p, base=0.9):
        return spend_false_abstentions(p_answerable, p_said, answerable, correct, kept, base, budget, withheld)

    # below every right answer (0.6) would withhold the wrong answer at 0.3 too: a false abstention
    assert spend(None) == (0.9, pytest.approx(0.6))  # no budget: the right answers alone set it
    assert spend(0.0) == (0.9, pytest.approx(0.3))  # no false abstention: the unanswerable 0.2 alone
    assert spend(0.25) == (0.9, pytest.approx(0.6))  # one may go: both unanswerable ones
    assert spend(0.25, withheld=None) == (0.9, 0.0)  # no answer threshold
    # the P(answerable) threshold abstaining on the same question is preferred to withholding its answer
    p_answerable = np.array([0.9, 0.9, 0.9, 0.9, 0.5, 0.9])
    assert spend(0.0, p_answerable=p_answerable, base=0.5) == (0.9, 0.0)
    assert spend(0.25, p_answerable=p_answerable, base=0.5) == (0.9, pytest.approx(0.6))
    # a budget the precision threshold already overspends: the answer threshold adds no false abstention
    assert spend(0.0, p_answerable=np.array([0.9, 0.9, 0.9, 0.5, 0.9, 0.9]), base=0.6) == (0.9, pytest.approx(0.6))


def test_threshold_is_the_lowest_that_reaches_the_precision():
    p = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95])
    answerable = np.array([0, 0, 1, 0, 1, 1, 1, 1, 1, 1], dtype=bool)
    kept = np.ones(10, dtype=bool)
    assert choose_threshold(p, answerable, kept, 0.85) == pytest.approx(0.3)  # 7 of 8 at >= 0.3
    assert choose_threshold(p, answerable, kept, 1.0) == pytest.approx(0.5)
    assert choose_threshold(p, answerable, kept, 0.5) == pytest.approx(0.1)
    off_topic = kept.copy()
    off_topic[3] = False  # the off-topic head already removes that one
    assert choose_threshold(p, answerable, off_topic, 1.0) == pytest.approx(0.3)
    assert choose_threshold(p, np.zeros(10, dtype=bool), kept, 0.9) == 1.0


def test_a_split_without_every_outcome_cannot_be_fitted():
    rows = [r for r in _rows() if r.outcome != "wrong"]
    with pytest.raises(FedlabError, match="correct, wrong and unanswerable"):
        fit_model(rows, VOCAB, 0.9, 0.5)


def test_bad_model_files_are_one_line(tmp_path):
    with pytest.raises(FedlabError, match="does not exist"):
        load_model(str(tmp_path / "none.json"))
    (tmp_path / "old.json").write_text(json.dumps({"method": "platt", "a": 1.0, "b": 0.0}))
    with pytest.raises(FedlabError, match="not an answerability model"):
        load_model(str(tmp_path / "old.json"))
    assert load_model(None) is None


def test_the_shipped_models_were_fitted_on_dev_for_their_retriever():
    for name, kind in (("production.json", "hybrid"), ("extractive-bm25.json", "bm25")):
        model = load_model(str(ROOT / "conf" / "calibration" / name))
        assert model.meta["split"] == "dev" and model.meta["retriever"] == kind
        assert model.meta["threshold_from"].startswith("out-of-fold") and 0 < model.threshold < 1
        # out of fold on dev, the model tells answerable from unanswerable questions
        assert model.meta["oof_auroc_answerable"] > 0.7 and model.meta["oof_auroc_off_topic"] > 0.8
    # both read the question's embedding (BM25 alone too: the config's embedder embeds the question),
    # with the embedder they were fitted with
    for name in ("production.json", "extractive-bm25.json"):
        model = load_model(str(ROOT / "conf" / "calibration" / name))
        assert model.question is not None and model.meta["embedder"] == "minilm"
        assert len(model.question.features) == 384 and QUESTION_FEATURE in model.answerable.features
        assert model.meta["oof_auroc_question"] > 0.7
        assert model.question_off_topic is not None and QUESTION_OFF_TOPIC_FEATURE in model.off_topic.features


def _embedded_rows(n: int = 240, dim: int = 6, seed: int = 5) -> list[Row]:
    """Rows whose answerability shows in the question's embedding (its first coordinate) and in
    no evidence feature: what a question asks for, not what was retrieved."""
    rng = np.random.default_rng(seed)
    rows = []
    for r in _rows(n, seed=seed):
        if r.off_topic:
            rows.append(Row(r.features, r.outcome, True, rng.normal(size=dim).tolist()))
            continue
        answerable = rng.uniform() < 0.7
        e = rng.normal(size=dim)
        e[0] = rng.normal(1.5 if answerable else -1.5, 0.7)
        outcome = ("correct" if rng.uniform() < 0.6 else "wrong") if answerable else "unanswerable"
        rows.append(Row(dict(r.features, idf_coverage=rng.uniform()), outcome, False, e.tolist()))
    return rows


def test_a_question_head_reads_what_the_question_asks_for(tmp_path):
    from fedlab.agent.answerability_fit import _pipeline

    rows = _embedded_rows()
    model = fit_model(rows, VOCAB, 0.9, 0.5, meta={"retriever": "hybrid", "embedder": "minilm"})
    assert model.question is not None and model.answerable.features[-1] == QUESTION_FEATURE
    assert model.meta["oof_auroc_question"] > 0.9 and model.meta["oof_auroc_answerable"] > 0.9
    # the question head is scikit-learn's logistic regression over the embeddings
    x = np.array([r.embedding for r in rows])
    y = np.array([r.outcome != "unanswerable" for r in rows])
    reference = _pipeline(model.meta["c_question"]).fit(x, y).decision_function(x)
    np.testing.assert_allclose([model.question_features(v)[QUESTION_FEATURE] for v in x], reference, atol=1e-9)
    # and the answerable head trusts it: the same evidence, asked like an answerable question or not
    features = dict(rows[0].features)
    yes, no = np.zeros(6), np.zeros(6)
    yes[0], no[0] = 2.0, -2.0
    p = {name: model.answerable_p({**features, **model.question_features(v)})
         for name, v in (("yes", yes), ("no", no))}
    assert p["yes"] > 0.8 > 0.2 > p["no"]
    # no vector (a searcher that cannot embed): the value the answerable head was centred on
    mean = model.answerable.mean[model.answerable.features.index(QUESTION_FEATURE)]
    assert model.question_features(None)[QUESTION_FEATURE] == mean
    with pytest.raises(FedlabError, match="reads 6-d embeddings \\(minilm\\), this question's has 3: refit"):
        model.question_features(np.zeros(3))
    path = tmp_path / "m.json"
    model.save(path)
    back = load_model(str(path))
    assert back.question == model.question and back.question_off_topic == model.question_off_topic
    assert back.question_features(yes) == model.question_features(yes)


def test_an_off_topic_question_head_reads_what_the_question_is_about():
    """Off-topic rows whose words look like the FOMC's (every topic feature as on-topic rows have
    them) but whose embeddings lie elsewhere (their second coordinate): the off-topic head, reading
    the question head's log-odds, tells them apart; without embeddings it cannot."""
    rng = np.random.default_rng(11)
    rows = []
    for r in _embedded_rows(n=160, seed=11):
        e = np.array(r.embedding)
        e[1] = rng.normal(2.0 if r.off_topic else -1.0, 0.6)
        looks_on_topic = dict(r.features, vocab_share=rng.uniform(0.6, 1), common_share=rng.uniform(0.5, 1),
                              unknown_share=0.0, intent_off_topic=0.0, top_dense=rng.uniform(0.3, 0.7))
        rows.append(Row(looks_on_topic, r.outcome, r.off_topic, e.tolist()))
    model = fit_model(rows, VOCAB, 0.9, 0.5, meta={"embedder": "minilm"})
    assert model.question_off_topic is not None and model.off_topic.features[-1] == QUESTION_OFF_TOPIC_FEATURE
    assert model.meta["oof_auroc_question_off_topic"] > 0.9 and model.meta["oof_auroc_off_topic"] > 0.9
    recipe, policy = np.zeros(6), np.zeros(6)
    recipe[1], policy[1] = 2.5, -1.5
    asked = dict(rows[0].features)
    assert model.off_topic_p({**asked, **model.question_features(recipe)}) > 0.8
    assert model.off_topic_p({**asked, **model.question_features(policy)}) < 0.2
    blind = fit_model([Row(r.features, r.outcome, r.off_topic, None) for r in rows], VOCAB, 0.9, 0.5)
    assert blind.question_off_topic is None and blind.meta["oof_auroc_off_topic"] < 0.75


def test_a_questions_rewordings_teach_the_question_head_and_stay_in_its_fold():
    """Rewordings (Row.rewordings) carry their question's label into the question head: a wording
    the questions alone never show (here a shift of the third coordinate) reads as its question
    does. Out of fold, a row's log-odds comes from heads that saw neither it nor its rewordings:
    rewordings that copy their question, with labels that are noise, tell nothing out of fold
    (held in other folds, each would give its question's label away)."""
    from fedlab.agent.answerability_fit import _auroc, fit_question_head

    rng = np.random.default_rng(3)
    rows = _embedded_rows(n=200, seed=3)
    y = np.array([r.outcome != "unanswerable" for r in rows], dtype=int)

    def reworded(e):  # put tersely: the answerable direction fades, the third coordinate moves
        v = np.array(e) + rng.normal(0, 0.05, size=len(e))
        v[0] *= 0.4
        v[2] += 3.0
        return v.tolist()

    taught = [Row(r.features, r.outcome, r.off_topic, r.embedding, rewordings=[reworded(r.embedding)]) for r in rows]
    plain, with_rewordings = fit_question_head(rows, y), fit_question_head(taught, y)
    assert plain.n_rewordings == 0 and with_rewordings.n_rewordings == len(rows)
    terse_yes, terse_no = np.zeros(6), np.zeros(6)
    terse_yes[0], terse_no[0], terse_yes[2], terse_no[2] = 0.8, -0.8, 3.0, 3.0
    gap = {name: fit.head.log_odds(terse_yes) - fit.head.log_odds(terse_no)
           for name, fit in (("plain", plain), ("with", with_rewordings))}
    assert gap["with"] > gap["plain"] > 0

    # wide embeddings, as a sentence embedder's are: a linear head can memorise its rows
    wide = [Row(r.features, r.outcome, r.off_topic, rng.normal(size=300).tolist()) for r in rows[:120]]
    noise = rng.integers(0, 2, size=len(wide))
    copies = [Row(r.features, r.outcome, r.off_topic, r.embedding,
                  rewordings=[(np.array(r.embedding) + rng.normal(0, 0.01, size=300)).tolist()] * 2) for r in wide]
    oof = fit_question_head(copies, noise).oof_log_odds
    assert len(oof) == len(wide)
    assert _auroc(oof, noise.astype(bool)) < 0.7  # grouped: a leak would give ~1.0
    model = fit_model(taught, VOCAB, 0.9, 0.5, meta={"embedder": "minilm"})
    assert model.meta["n_rewordings"] == len(rows)


def test_rows_without_embeddings_fit_no_question_head():
    rows = _embedded_rows()
    rows[3] = Row(rows[3].features, rows[3].outcome, rows[3].off_topic, None)  # e.g. BM25 only: no vectors
    model = fit_model(rows, VOCAB, 0.9, 0.5)
    assert model.question is None and QUESTION_FEATURE not in model.answerable.features
    assert model.question_off_topic is None and QUESTION_OFF_TOPIC_FEATURE not in model.off_topic.features
    assert "oof_auroc_question" not in model.meta and not model.reads_questions


def test_a_model_without_a_question_head_still_loads(tmp_path):
    fitted = fit_model(_rows(), VOCAB, 0.9, 0.5).to_json()
    data = dict(fitted, kind="fedlab.answerability/2")
    del data["question"], data["question_off_topic"]
    (tmp_path / "v2.json").write_text(json.dumps(data))
    assert load_model(str(tmp_path / "v2.json")).question is None
    data = dict(fitted, kind="fedlab.answerability/3")  # a question head, none for off topic
    del data["question_off_topic"]
    (tmp_path / "v3.json").write_text(json.dumps(data))
    assert load_model(str(tmp_path / "v3.json")).question_off_topic is None


def constant_model(p_correct: float, p_wrong: float, p_off: float, threshold: float) -> AnswerabilityModel:
    """A model whose heads ignore the features: the agent's decisions are then known."""
    def constant(classes, p: float) -> LogisticHead:  # P(classes[1]) = p
        return LogisticHead(list(classes), ["idf_coverage"], [0.0], [1.0], [[0.0]], [math.log(p / (1 - p))])

    answerable = p_correct + p_wrong
    return AnswerabilityModel(VOCAB, constant(("on_topic", "off_topic"), p_off), constant(ANSWERABLE_CLASSES, answerable),
                              constant(CORRECTNESS_CLASSES, p_correct / answerable), threshold, {"retriever": "bm25"})


def test_constant_model_probabilities():
    m = constant_model(0.6, 0.2, 0.1, 0.5)
    o = m.outcome({"idf_coverage": 0.3})
    assert (o.correct, o.wrong, o.unanswerable) == pytest.approx((0.6, 0.2, 0.2))
    assert m.off_topic_p({"idf_coverage": 0.3}) == pytest.approx(0.1)


def test_a_feature_the_model_reads_is_never_silently_zero():
    """A feature a head reads but the caller did not compute raises, naming it; only the answer's
    similarity may be absent (no embedder), and is then read as the value it was fitted around."""
    head = LogisticHead(["wrong", "correct"], ["n_terms", SIMILARITY_FEATURE], [5.0, 0.4], [2.0, 0.1], [[0.5, 1.0]],
                        [0.2])
    m = constant_model(0.6, 0.2, 0.1, 0.5)
    m.correctness = head
    with pytest.raises(ValueError, match="reads n_terms, which the features lack"):
        m.correct_p({SIMILARITY_FEATURE: 0.4})
    with pytest.raises(ValueError, match="reads idf_coverage"):
        m.answerable_p({"n_terms": 3.0})
    assert m.correct_p({"n_terms": 3.0}) == pytest.approx(m.correct_p({"n_terms": 3.0, SIMILARITY_FEATURE: 0.4}))
    assert m.correct_p({"n_terms": 3.0, SIMILARITY_FEATURE: 0.6}) > m.correct_p({"n_terms": 3.0})


def test_regularisation_is_chosen_by_cross_validated_log_loss():
    from fedlab.agent.answerability_fit import C_GRID, choose_c

    rng = np.random.default_rng(1)
    x = rng.normal(size=(150, 8))
    noise = rng.integers(0, 2, size=150)  # labels unrelated to the features: shrink hard
    signal = (x[:, 0] + 0.1 * rng.normal(size=150) > 0).astype(int)  # nearly separable: shrink little
    assert choose_c(x, noise) == min(C_GRID)
    assert choose_c(x, signal) >= 1.0


def test_the_regularisation_choice_is_scikit_learns_cross_validated_log_loss():
    """choose_c standardises each fold once for every strength and computes the log loss itself:
    the same choice as scikit-learn's pipeline scored by ``cross_val_score`` on the same folds."""
    from sklearn.model_selection import RepeatedStratifiedKFold, cross_val_score

    from fedlab.agent.answerability_fit import C_GRID, REPEATS, _folds, _pipeline, choose_c

    rng = np.random.default_rng(7)
    for n, d, strength in ((60, 4, 0.3), (120, 6, 1.0), (40, 12, 2.0)):
        x = rng.normal(size=(n, d)) * rng.uniform(0.1, 10, size=d)
        y = (strength * x[:, 0] / x[:, 0].std() + rng.normal(size=n) > 0).astype(int)
        folds = RepeatedStratifiedKFold(n_splits=_folds(y).n_splits, n_repeats=REPEATS, random_state=0)
        loss = {c: -cross_val_score(_pipeline(c), x, y, cv=folds, scoring="neg_log_loss").mean() for c in C_GRID}
        assert choose_c(x, y) == min(loss, key=loss.get)

"""The reader's learned sentence ranker (fedlab.skills.sentence_ranker, fitted by
fedlab.evaluation.answers.ranker_fit) and "each fact said once" (fedlab.skills.restated): passages
in the statements' and minutes' language (no dataset questions), the real reader, a real
scikit-learn fit."""
from __future__ import annotations

import json
from datetime import date

import pytest

from fedlab.errors import FedlabError
from fedlab.evaluation.answers.measures import length_measures
from fedlab.evaluation.answers.ranker_fit import (QuestionRows, Record, cross_fit, fit_ranker, matches_quote,
                                                  question_table, ranking_measures, relevant)
from fedlab.lm.extractive import ExtractiveBackend, synthesize_answer
from fedlab.query.frame import frame_of
from fedlab.skills.reader import sentence_table
from fedlab.skills.restated import answer_sentences, duplicate_rate, restates
from fedlab.skills.sentence_ranker import FORMAT, SentenceRanker, load_ranker

MONTHS = "January February March April May June July August September October November December".split()


def passage(n: int, iso: str, text: str, kind: str = "statement", section: str | None = None) -> str:
    d = date.fromisoformat(iso)
    title = f"FOMC {kind}, {MONTHS[d.month - 1]} {d.day}, {d.year}"
    return f"[Source {n}] {title}, {iso}{', ' + section if section else ''}\n{text}"


DECISION = ("The Committee decided to raise the target range for the federal funds rate to 5-1/4 to 5-1/2 percent.")
RESTATED = ("The Committee decided to raise the target range for the federal funds rate to 5-1/4 to 5-1/2 "
            "percent at this meeting.")
STAFF = ("The staff projected that inflation would decline over the next few years as the target range for the "
         "federal funds rate remained restrictive.")
VIEWS = ("Participants judged that the target range for the federal funds rate was restrictive and that "
         "inflation risks remained.")
PASSAGES = [
    passage(1, "2023-07-26", f"{DECISION} The Committee will continue reducing its holdings of Treasury securities."),
    passage(2, "2023-07-26", f"{STAFF} {VIEWS}", kind="minutes"),
    passage(3, "2023-07-26", RESTATED, kind="minutes", section="Committee Policy Action"),
]
QUESTION = "What did the Committee decide on the federal funds rate target range in July 2023?"


def ranker(weights: dict[str, float], intercept: float = 0.0, min_share: float = 0.5) -> SentenceRanker:
    names = tuple(sentence_table(QUESTION, PASSAGES, frame_of(QUESTION).hint)[0][2])
    return SentenceRanker(names, (0.0,) * len(names), (1.0,) * len(names),
                          tuple(weights.get(n, 0.0) for n in names), intercept, min_share)


def first_sentence(answer: str) -> str:
    return answer_sentences(answer)[0]


def test_every_candidate_has_the_same_finite_features():
    table = sentence_table(QUESTION, PASSAGES, frame_of(QUESTION).hint)
    assert [s for s, _, _ in table][:2] == [DECISION, "The Committee will continue reducing its holdings of "
                                            "Treasury securities."]
    names = set(table[0][2])
    assert {"overlap", "handset", "place", "minutes", "in_date_range", "typed"} <= names
    assert all(set(f) == names and all(v == v and abs(v) < 1e6 for v in f.values()) for _, _, f in table)
    by_text = {s: f for s, _, f in table}
    assert by_text[DECISION]["statement"] == 1.0 and by_text[STAFF]["minutes"] == 1.0
    assert by_text[STAFF]["others_reported"] == 0.0 or by_text[STAFF]["others_reported"] == 1.0
    assert by_text[DECISION]["in_date_range"] == 1.0 and by_text[DECISION]["place"] == 0.0


def test_no_ranker_answers_as_the_hand_set_reader_and_a_ranker_reorders():
    hand = synthesize_answer(QUESTION, PASSAGES, 4, rank_weight=0.25, report_weight=0.5)["answer"]
    assert first_sentence(hand) == DECISION
    # a ranker that prefers minutes sentences later in the ranking puts one of them first
    prefer_minutes = ranker({"minutes": 5.0, "place": 2.0})
    learned = synthesize_answer(QUESTION, PASSAGES, 4, rank_weight=0.25, report_weight=0.5,
                                ranker=prefer_minutes)["answer"]
    assert first_sentence(learned) != DECISION
    assert first_sentence(learned) in (STAFF, VIEWS, RESTATED)


def test_a_sentence_sharing_no_word_is_never_said_whatever_the_ranker():
    boilerplate = passage(4, "2023-07-26", "Voting for the monetary policy action were the members present.")
    fond_of_place = ranker({"place": 10.0})
    answer = synthesize_answer(QUESTION, PASSAGES + [boilerplate], 4, ranker=fond_of_place)["answer"]
    assert "Voting for the monetary policy action" not in answer


def test_the_model_round_trips_as_json_and_bad_files_say_how_to_fix(tmp_path):
    model = ranker({"overlap": 1.5, "minutes": -0.5}, intercept=-1.0, min_share=0.25)
    path = tmp_path / "ranker.json"
    path.write_text(json.dumps(model.to_json()))
    loaded = load_ranker(str(path))
    assert loaded == model and loaded.min_share == 0.25
    features = sentence_table(QUESTION, PASSAGES, frame_of(QUESTION).hint)[0][2]
    assert 0.0 < loaded.score(features) < 1.0 and loaded.score(features) == model.score(features)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": FORMAT, "features": ["a", "b"], "mean": [0], "scale": [1], "coef": [1],
                               "intercept": 0}))
    with pytest.raises(FedlabError, match="fit_sentence_ranker") as err:
        load_ranker(str(bad))
    assert "\n" not in str(err.value)
    with pytest.raises(FedlabError, match="cannot be read"):
        ExtractiveBackend(sentence_ranker=str(tmp_path / "missing.json"))
    (tmp_path / "broken.json").write_text("{not json")
    with pytest.raises(FedlabError, match="is not JSON"):
        ExtractiveBackend(sentence_ranker=str(tmp_path / "broken.json"))


def test_restated_sentences_are_near_duplicates_with_the_same_figures():
    assert restates(RESTATED, DECISION)
    assert not restates(DECISION, DECISION.replace("5-1/4 to 5-1/2", "5 to 5-1/4"))  # a different fact
    assert not restates(STAFF, VIEWS)
    assert duplicate_rate(f"{DECISION} [Source 1] {RESTATED} [Source 3] {STAFF} [Source 2]") == pytest.approx(1 / 3)
    assert duplicate_rate(f"{DECISION} [Source 1]") is None
    measures = length_measures([f"{DECISION} [Source 1] {RESTATED} [Source 3]", f"{STAFF} [Source 2]"])
    assert measures["duplicate_rate"] == 1.0  # one pair, a duplicate
    assert measures["answer_length"] == pytest.approx((len(DECISION.split()) + len(RESTATED.split())
                                                       + len(STAFF.split())) / 2)


def test_dedup_drops_the_restating_sentence_only_when_asked():
    both = synthesize_answer(QUESTION, PASSAGES, 4)["answer"]
    assert DECISION in both and RESTATED in both
    once = synthesize_answer(QUESTION, PASSAGES, 4, restated=restates)["answer"]
    assert DECISION in once and RESTATED not in once
    assert duplicate_rate(once) == 0.0 or duplicate_rate(once) is None


def record(set_name: str, qid: str) -> Record:
    return Record(set_name, qid, QUESTION, ["5-1/4 to 5-1/2 percent"], [("statement-2023-07-26", DECISION)],
                  PASSAGES)


def test_labels_follow_the_gold_quotes():
    r = record("a", "q1")
    assert matches_quote(DECISION, DECISION.upper()) and matches_quote(DECISION[:-1], DECISION)
    assert not matches_quote(STAFF, DECISION)
    assert relevant(DECISION, "2023-07-26", r)
    assert relevant(RESTATED, "2023-06-14", r)  # holds the quote, whatever its meeting
    fact = "Participants supported moving the range to 5-1/4 to 5-1/2 percent."
    assert relevant(fact, "2023-07-26", r)  # states the key fact in the evidence's meeting
    assert not relevant(fact, "2023-06-14", r) and not relevant(STAFF, "2023-07-26", r)


def test_ranking_measures_reward_gold_first():
    perfect = ranking_measures([([0.9, 0.1, 0.0], [True, False, False])])
    worst = ranking_measures([([0.0, 0.1, 0.9], [True, False, False])])
    assert perfect["p@1"] == 1.0 and perfect["ndcg@4"] == pytest.approx(1.0)
    assert worst["p@1"] == 0.0 and worst["ndcg@4"] < perfect["ndcg@4"]
    assert ranking_measures([([0.5], [False])])["questions"] == 0.0  # no gold: not counted


def test_a_fit_learns_the_gold_and_cross_fits_by_set():
    tables = question_table([record("a", "q1"), record("b", "q2")])
    assert tables and any(tables[0].labels) and not all(tables[0].labels)
    model = fit_ranker(tables)
    scores = [model.score(f) for f in tables[0].features]
    gold = [s for s, lab in zip(scores, tables[0].labels) if lab]
    other = [s for s, lab in zip(scores, tables[0].labels) if not lab]
    assert min(gold) > max(other)
    result = cross_fit(tables, ExtractiveBackend(max_sentences=4), answers=True)
    assert set(result.per_set) == {"a", "b"} and result.pooled["drafts"] == 2.0
    assert result.pooled["model.p@1"] == 1.0
    with pytest.raises(FedlabError, match="two or more"):
        cross_fit(tables[:1], ExtractiveBackend())
    with pytest.raises(FedlabError, match="one class"):
        fit_ranker([QuestionRows(tables[0].record, tables[0].features, [False] * len(tables[0].labels))])


def test_the_default_path_loads_no_ranker_code():
    import subprocess
    import sys

    code = ("import sys; from fedlab.lm.extractive import ExtractiveBackend; b = ExtractiveBackend(4); "
            "b.synthesize('What did the Committee decide in July 2023?', []); "
            "print(sorted(m for m in ('sklearn', 'numpy', 'fedlab.skills.sentence_ranker', 'fedlab.skills.restated') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "sentence_ranker" not in out and "sklearn" not in out and "restated" not in out


def test_the_fit_command_refuses_a_foreign_records_file_in_one_line(tmp_path, capsys):
    from fedlab.fit_sentence_ranker import main

    records = tmp_path / "records.jsonl"
    records.write_text('{"id": "x"}\n')
    assert main(["--records", str(records), "--out", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --records") and "\n" not in err
    assert not (tmp_path / "r.json").exists()


def test_the_agents_citation_markers_are_not_figures():
    answer = f"{DECISION} [2] {RESTATED} [3, 5]"
    assert answer_sentences(answer) == [DECISION, RESTATED]
    assert duplicate_rate(answer) == 1.0

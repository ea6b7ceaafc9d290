"""The evaluation package's one per-question record, filled by both parts (the import direction is
tests/test_layout.py's)."""
from __future__ import annotations

from fedlab.evaluation.record import ANSWER_FIELDS, QuestionRecord


def test_a_retrieval_record_serialises_as_the_per_question_row():
    r = QuestionRecord(id="q1", first_relevant_rank=3, retrieved=["a", "b"], n_evidence=2, n_relevant_chunks=4,
                       metrics={"recall@5": 1.0, "mrr@10": 1 / 3})
    assert r.scored and not r.answered
    assert r.to_json() == {"id": "q1", "first_relevant_rank": 3, "retrieved_chunk_ids": ["a", "b"], "n_evidence": 2,
                           "n_relevant_chunks": 4, "recall@5": 1.0, "mrr@10": 1 / 3}
    assert list(r.to_json()) == ["id", "first_relevant_rank", "retrieved_chunk_ids", "n_evidence",
                                 "n_relevant_chunks", "recall@5", "mrr@10"]


def test_an_answer_record_has_no_retrieval_fields_and_every_answer_field():
    r = QuestionRecord(id="u1", category="unanswerable", answerable=False, abstained=True, answer_correct=False,
                       correct=True, missing_facts=[], n_citations=0, valid_citations=0, supporting_citations=None,
                       raw_confidence=0.2, confidence=0.8)
    assert r.answered and not r.scored
    row = r.to_json()
    assert row == {"id": "u1", "category": "unanswerable", "answerable": False,
                   **{name: getattr(r, name) for name in ANSWER_FIELDS}}
    assert row["supporting_citations"] is None and row["correct"] is True and "n_evidence" not in row


def test_an_unmeasured_record_is_only_its_id():
    r = QuestionRecord(id="x")
    assert not r.scored and not r.answered and r.to_json() == {"id": "x"}

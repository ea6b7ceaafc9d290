"""The evaluation package: one per-question record for both parts, and nothing below it imports it."""
from __future__ import annotations

import ast
from pathlib import Path

from fedlab.evaluation.record import ANSWER_FIELDS, QuestionRecord

FEDLAB = Path(__file__).resolve().parent.parent / "fedlab"
# The layers evaluation is built on: they must not import it (nor the commands over it).
BELOW_EVALUATION = ("agent", "lm", "retrieval", "index", "embedding", "chunking", "corpus", "dataset",
                    "pipeline.py", "tracking.py")
EVALUATION_MODULES = ("fedlab.evaluation", "fedlab.evaluate", "fedlab.calibrate")


def _imports(path: Path) -> set[str]:
    """Every module a file imports, at the top or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_nothing_below_evaluation_imports_it():
    files = [p for part in BELOW_EVALUATION for p in
             ([FEDLAB / part] if part.endswith(".py") else sorted((FEDLAB / part).rglob("*.py")))]
    assert len(files) > 20  # really the packages, not an empty glob
    def evaluation(module: str) -> bool:
        return any(module == e or module.startswith(e + ".") for e in EVALUATION_MODULES)

    offenders = {str(p.relative_to(FEDLAB)): sorted(filter(evaluation, _imports(p))) for p in files}
    assert {f: m for f, m in offenders.items() if m} == {}


def test_the_import_check_sees_lazy_imports(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("def f():\n    from fedlab.evaluation.answers import calibration\n")
    assert "fedlab.evaluation.answers.calibration" in _imports(src)


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

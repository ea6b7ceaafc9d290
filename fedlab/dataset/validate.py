"""Check a QA dataset against the corpus and summarise it.

Schema problems come from :mod:`fedlab.dataset.schema`; on top of those this checks that
ids are unique, every evidence doc_id exists in the corpus, every quote is found in its
document (:func:`fedlab.dataset.locate.locate_quote`), evidence documents fall inside the
question's date_range, and each key fact appears in the reference answer.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from fedlab.corpus.document import Document
from fedlab.dataset.locate import locate_quote, normalise
from fedlab.dataset.schema import CATEGORIES, SPLITS, Problem, Question, read_dataset

MIN_YEAR, MAX_YEAR = 1900, 2100


@dataclass
class Report:
    path: str
    questions: list[Question]
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def stats(self) -> dict:
        return dataset_stats(self.questions)


def question_years(q: Question, documents: dict[str, Document] | None = None) -> list[str]:
    """Years a question is about: its evidence documents' meeting years, else its date_range's years."""
    years: set[str] = set()
    for ev in q.evidence:
        doc = documents.get(ev.doc_id) if documents else None
        date = doc.meeting_date if doc else ev.doc_id.rsplit("-", 3)[-3] if ev.doc_id.count("-") >= 3 else ""
        if date[:4].isdigit():
            years.add(date[:4])
    if not years and q.date_range:
        start, end = int(q.date_range[0][:4]), int(q.date_range[1][:4])
        years.update(str(y) for y in range(start, end + 1))
    return sorted(years) or ["none"]


def dataset_stats(questions: list[Question], documents: dict[str, Document] | None = None) -> dict:
    by_cat = Counter(q.category for q in questions)
    by_split = Counter(q.split for q in questions)
    by_cat_split = Counter((q.category, q.split) for q in questions)
    by_year: Counter = Counter()
    for q in questions:
        by_year.update(question_years(q, documents))
    n = len(questions)
    answerable = sum(q.answerable for q in questions)
    return {
        "total": n,
        "answerable": answerable,
        "answerable_share": answerable / n if n else 0.0,
        "category": {c: by_cat.get(c, 0) for c in CATEGORIES},
        "split": {s: by_split.get(s, 0) for s in SPLITS},
        "category_split": {c: {s: by_cat_split.get((c, s), 0) for s in SPLITS} for c in CATEGORIES},
        "year": dict(sorted(by_year.items())),
    }


def check_questions(questions: Iterable[Question], documents: dict[str, Document], path: str) -> list[Problem]:
    """Cross-question and corpus checks for questions that already passed the schema."""
    problems: list[Problem] = []
    first_line: dict[str, int] = {}
    for q in questions:
        def bad(fld: str | None, msg: str) -> None:
            problems.append(Problem(path, q.line or None, fld, msg, q.id))

        if q.id in first_line:
            bad("id", f"duplicate id (first used on line {first_line[q.id]})")
        else:
            first_line[q.id] = q.line
        if q.date_range:
            for i, d in enumerate(q.date_range):
                if not MIN_YEAR <= int(d[:4]) <= MAX_YEAR:
                    bad(f"date_range[{i}]", f"year of {d} is outside {MIN_YEAR}-{MAX_YEAR}")
        for i, ev in enumerate(q.evidence):
            doc = documents.get(ev.doc_id)
            if doc is None:
                bad(f"evidence[{i}].doc_id", f"unknown doc_id {ev.doc_id!r} (not in the corpus)")
                continue
            if locate_quote(doc.text, ev.quote) is None:
                snippet = ev.quote if len(ev.quote) <= 60 else ev.quote[:57] + "..."
                bad(f"evidence[{i}].quote", f"not found in {ev.doc_id}: {snippet!r}")
            if q.date_range and not q.date_range[0] <= doc.meeting_date <= q.date_range[1]:
                bad(f"evidence[{i}].doc_id",
                    f"{ev.doc_id} (meeting {doc.meeting_date}) is outside date_range "
                    f"{q.date_range[0]}..{q.date_range[1]}")
        if q.answerable:
            answer = normalise(q.answer)
            for i, fact in enumerate(q.key_facts):
                if normalise(fact) not in answer:
                    bad(f"key_facts[{i}]", f"{fact!r} does not appear in the answer")
    return problems


def validate_file(path: str | Path, documents: list[Document] | dict[str, Document]) -> Report:
    """Schema, id, quote and date checks of one dataset file against a loaded corpus."""
    docs = documents if isinstance(documents, dict) else {d.doc_id: d for d in documents}
    questions, problems = read_dataset(path)
    problems = problems + check_questions(questions, docs, str(path))
    problems.sort(key=lambda p: (p.line or 0))
    return Report(str(path), questions, problems)

"""The QA dataset schema (a contract): JSONL, one question per line.

    {"id", "question", "category", "answerable", "evidence": [{"doc_id", "quote"}],
     "answer", "key_facts": [...], "date_range": [start, end] | null, "split": "dev" | "test"}

``load_dataset`` reads any file in this schema; each problem is reported as one line
naming the file, the line number and the field.
"""
from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path

from fedlab.errors import FedlabError

CATEGORIES = ("factual", "temporal", "comparative", "minutes_views", "unanswerable", "off_topic")
UNANSWERABLE_CATEGORIES = ("unanswerable", "off_topic")
SPLITS = ("dev", "test")
FIELDS = ("id", "question", "category", "answerable", "evidence", "answer", "key_facts", "date_range", "split")


@dataclass(frozen=True)
class Evidence:
    doc_id: str
    quote: str

    def to_json(self) -> dict:
        return {"doc_id": self.doc_id, "quote": self.quote}


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    category: str
    answerable: bool
    evidence: list[Evidence]
    answer: str
    key_facts: list[str]
    date_range: tuple[str, str] | None
    split: str
    line: int = field(default=0, compare=False)  # 1-based line in the file it came from

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "question": self.question,
            "category": self.category,
            "answerable": self.answerable,
            "evidence": [e.to_json() for e in self.evidence],
            "answer": self.answer,
            "key_facts": list(self.key_facts),
            "date_range": list(self.date_range) if self.date_range else None,
            "split": self.split,
        }

    @property
    def doc_ids(self) -> list[str]:
        return [e.doc_id for e in self.evidence]


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a dataset, printable as a single line."""

    path: str
    line: int | None
    field: str | None
    message: str
    qid: str | None = None

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        parts = [where]
        if self.qid:
            parts.append(f"id {self.qid}")
        if self.field:
            parts.append(self.field)
        return ": ".join(parts) + f": {self.message}"


class DatasetError(FedlabError):
    """A dataset file that does not follow the schema; ``problems`` holds each line."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


def _is_iso_date(value: object) -> bool:
    if not isinstance(value, str) or len(value) != 10:
        return False
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        return False
    return True


def parse_question(row: object, path: str, line: int) -> tuple[Question | None, list[Problem]]:
    """Check one decoded JSON line against the schema; a Question when it conforms."""
    probs: list[Problem] = []
    if not isinstance(row, dict):
        return None, [Problem(path, line, None, f"expected a JSON object, got {type(row).__name__}")]
    qid = row.get("id") if isinstance(row.get("id"), str) else None

    def bad(fld: str, msg: str) -> None:
        probs.append(Problem(path, line, fld, msg, qid))

    for name in FIELDS:
        if name not in row:
            bad(name, "missing field")
    for name in ("id", "question", "answer"):
        if name in row and (not isinstance(row[name], str) or not row[name].strip()):
            bad(name, "must be a non-empty string")
    category = row.get("category")
    if "category" in row and category not in CATEGORIES:
        bad("category", f"{category!r} is not one of {', '.join(CATEGORIES)}")
    answerable = row.get("answerable")
    if "answerable" in row and not isinstance(answerable, bool):
        bad("answerable", f"must be true or false, got {answerable!r}")
    split = row.get("split")
    if "split" in row and split not in SPLITS:
        bad("split", f"{split!r} is not one of {', '.join(SPLITS)}")

    evidence: list[Evidence] = []
    raw_ev = row.get("evidence")
    if "evidence" in row:
        if not isinstance(raw_ev, list):
            bad("evidence", "must be a list of {doc_id, quote} objects")
        else:
            for i, item in enumerate(raw_ev):
                if not isinstance(item, dict):
                    bad(f"evidence[{i}]", "must be an object with doc_id and quote")
                    continue
                ok = True
                for name in ("doc_id", "quote"):
                    if name not in item:
                        bad(f"evidence[{i}].{name}", "missing field")
                        ok = False
                    elif not isinstance(item[name], str) or not item[name].strip():
                        bad(f"evidence[{i}].{name}", "must be a non-empty string")
                        ok = False
                if ok:
                    evidence.append(Evidence(item["doc_id"], item["quote"]))

    key_facts: list[str] = []
    raw_kf = row.get("key_facts")
    if "key_facts" in row:
        if not isinstance(raw_kf, list) or not all(isinstance(k, str) and k.strip() for k in raw_kf):
            bad("key_facts", "must be a list of non-empty strings")
        else:
            key_facts = list(raw_kf)

    date_range: tuple[str, str] | None = None
    raw_dr = row.get("date_range")
    if "date_range" in row and raw_dr is not None:
        if not (isinstance(raw_dr, list) and len(raw_dr) == 2 and all(_is_iso_date(d) for d in raw_dr)):
            bad("date_range", f"must be null or [start, end] as ISO dates YYYY-MM-DD, got {raw_dr!r}")
        elif raw_dr[0] > raw_dr[1]:
            bad("date_range", f"start {raw_dr[0]} is after end {raw_dr[1]}")
        else:
            date_range = (raw_dr[0], raw_dr[1])

    # answerable <=> category <=> evidence / key facts
    if isinstance(answerable, bool) and category in CATEGORIES:
        if category in UNANSWERABLE_CATEGORIES and answerable:
            bad("answerable", f"must be false for category {category}")
        if category not in UNANSWERABLE_CATEGORIES and not answerable:
            bad("answerable", f"must be true for category {category} (use unanswerable or off_topic)")
    if isinstance(answerable, bool) and isinstance(raw_ev, list):
        if answerable and not raw_ev:
            bad("evidence", "an answerable question needs at least one evidence item")
        if not answerable and raw_ev:
            bad("evidence", "must be empty when answerable is false")
    if answerable is True and isinstance(raw_kf, list) and not raw_kf:
        bad("key_facts", "an answerable question needs at least one key fact")

    if probs:
        return None, probs
    return Question(
        id=row["id"], question=row["question"], category=category, answerable=answerable,
        evidence=evidence, answer=row["answer"], key_facts=key_facts, date_range=date_range,
        split=split, line=line,
    ), []


def not_a_file_message(p: Path) -> str:
    if p.is_dir():
        inside = sorted(p.glob("*.jsonl"))
        example = f", e.g. {inside[0]}" if inside else " (a .jsonl file)"
        return f"is a directory, not a dataset file: pass the JSONL file itself{example}"
    return "no such file: pass the path of a JSONL dataset file (e.g. datasets/fomc_qa/fomc_qa.jsonl)"


def read_lines(path: str | Path) -> list[tuple[int, object]]:
    """``(line number, decoded JSON value)`` for each non-blank line of a JSONL file.

    A file that is not JSONL at all — bytes that are not UTF-8, a line that is not JSON — is
    a DatasetError (a FedlabError) of one line naming the file, the (first) bad line and the
    fix: its questions cannot be read.
    """
    name = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise DatasetError([Problem(name, None, None, f"cannot read it ({exc.strerror or exc})")]) from None
    rows: list[tuple[int, object]] = []
    bad_json: list[tuple[int, json.JSONDecodeError]] = []
    for lineno, raw in enumerate(data.splitlines(), start=1):
        if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):  # a byte-order mark is fine
            raw = raw[3:]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            byte = raw[exc.start:exc.start + 1].hex()
            raise DatasetError([Problem(
                name, lineno, None, f"not UTF-8 text (byte 0x{byte} at column {exc.start + 1}): save the file as UTF-8",
            )]) from None
        if not text.strip():
            continue
        try:
            rows.append((lineno, json.loads(text)))
        except json.JSONDecodeError as exc:
            bad_json.append((lineno, exc))
    if bad_json:
        lineno, exc = bad_json[0]
        more = f" (and {len(bad_json) - 1} more line(s) after it)" if len(bad_json) > 1 else ""
        raise DatasetError([Problem(
            name, lineno, None,
            f"invalid JSON ({exc.msg} at column {exc.colno}){more}: each line must be one JSON object; "
            "fix or remove the line",
        )])
    return rows


def read_dataset(path: str | Path) -> tuple[list[Question], list[Problem]]:
    """Every conforming question and every schema problem (one per field), in file order.

    A path that is not a file gives one problem; a file that is not UTF-8 JSONL raises
    DatasetError (see :func:`read_lines`).
    """
    p = Path(path)
    name = str(path)
    if not p.is_file():
        return [], [Problem(name, None, None, not_a_file_message(p))]
    questions: list[Question] = []
    problems: list[Problem] = []
    for lineno, row in read_lines(path):
        q, probs = parse_question(row, name, lineno)
        problems.extend(probs)
        if q is not None:
            questions.append(q)
    if not questions and not problems:
        problems.append(Problem(name, None, None, "the file holds no questions"))
    return questions, problems


def load_dataset(path: str | Path) -> list[Question]:
    """The questions of a dataset file; DatasetError (one line per problem) if any line is off-schema."""
    questions, problems = read_dataset(path)
    if problems:
        raise DatasetError(problems)
    return questions

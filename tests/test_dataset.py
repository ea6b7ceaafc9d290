"""The QA dataset: schema loader, quote location, and the validator CLI."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from fedlab.dataset import DatasetError, Evidence, Question, load_dataset, locate_quote
from fedlab.dataset.__main__ import main as cli_main
from fedlab.dataset.validate import dataset_stats, validate_file

ROOT = Path(__file__).resolve().parent.parent
DATASET = ROOT / "datasets" / "fomc_qa" / "fomc_qa.jsonl"


# ---------------------------------------------------------------- locate_quote

def _check(text: str, quote: str, expected: str) -> None:
    span = locate_quote(text, quote)
    assert span is not None
    assert text[span[0]:span[1]] == expected


def test_locate_exact():
    text = "The Committee decided to maintain the target range."
    assert locate_quote(text, "decided to maintain") == (14, 33)
    _check(text, "decided to maintain", "decided to maintain")


def test_locate_across_paragraph_break():
    text = "First paragraph ends here.\n\nSecond paragraph starts here."
    _check(text, "ends here. Second paragraph", "ends here.\n\nSecond paragraph")


def test_locate_multiple_spaces_and_tabs_in_document_and_quote():
    text = "rate   of\tinterest  on   reserves"
    _check(text, "rate of interest on reserves", text)
    _check("a rate of interest b", "rate   of \n interest", "rate of interest")


def test_locate_case_insensitive_keeps_original_case():
    text = "Voting for the monetary policy action were Jerome H. Powell, Chair"
    _check(text, "VOTING FOR THE MONETARY", "Voting for the monetary")


def test_locate_quote_with_surrounding_whitespace():
    text = "alpha beta gamma"
    _check(text, "  beta\n", "beta")


def test_locate_offsets_after_collapsed_whitespace():
    # the match lies after several collapsed runs: offsets must map back, not drift
    text = "a  \n\n  b   c\n\n\n\nthe quote is here  and   continues"
    span = locate_quote(text, "The quote is here and continues")
    assert span == (text.index("the quote"), len(text))


def test_locate_returns_first_occurrence():
    text = "x y. x y."
    assert locate_quote(text, "x y") == (0, 3)


def test_locate_not_found_and_empty():
    assert locate_quote("some text", "other") is None
    assert locate_quote("some text", "") is None
    assert locate_quote("some text", "   \n ") is None
    assert locate_quote("some text", "some  text  more") is None


def test_locate_unicode_lowercase_expansion():
    # "İ".lower() is two characters; offsets must still point into the original text
    text = "İstanbul rates and more"
    _check(text, "rates and", "rates and")
    _check(text, "i̇stanbul", "İstanbul")


# ---------------------------------------------------------------- crafted files

GOOD = {
    "id": "t-001",
    "question": "What did the Committee do in January 2019?",
    "category": "factual",
    "answerable": True,
    "evidence": [{"doc_id": "statement-2019-01-30",
                  "quote": "the Committee decided to maintain the target range for the federal funds rate at 2-1/4 to 2-1/2 percent"}],
    "answer": "It held the target range at 2-1/4 to 2-1/2 percent.",
    "key_facts": ["2-1/4 to 2-1/2 percent"],
    "date_range": ["2019-01-29", "2019-01-30"],
    "split": "dev",
}
UNANSWERABLE = {
    "id": "t-002", "question": "What did the FOMC decide in December 2018?", "category": "unanswerable",
    "answerable": False, "evidence": [], "answer": "Not in the corpus.", "key_facts": [],
    "date_range": ["2018-12-18", "2018-12-19"], "split": "test",
}


def _write(tmp_path: Path, rows: list, name: str = "qa.jsonl") -> Path:
    path = tmp_path / name
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def _problems(tmp_path, documents, rows) -> list[str]:
    path = _write(tmp_path, rows)
    return [str(p) for p in validate_file(path, documents).problems]


def test_load_dataset_reads_schema(tmp_path):
    path = _write(tmp_path, [GOOD, UNANSWERABLE])
    qs = load_dataset(path)
    assert [q.id for q in qs] == ["t-001", "t-002"]
    q = qs[0]
    assert isinstance(q, Question) and q.evidence == [Evidence("statement-2019-01-30", GOOD["evidence"][0]["quote"])]
    assert q.date_range == ("2019-01-29", "2019-01-30") and q.line == 1
    assert qs[1].date_range == ("2018-12-18", "2018-12-19") and not qs[1].answerable
    assert q.to_json() == GOOD


def test_load_dataset_errors_name_file_line_field(tmp_path):
    bad = dict(GOOD)
    del bad["answer"]
    path = _write(tmp_path, [UNANSWERABLE, bad, "{not json"])
    with pytest.raises(DatasetError) as exc:
        load_dataset(path)
    lines = str(exc.value).splitlines()
    assert lines == [
        f"{path}:2: id t-001: answer: missing field",
        f"{path}:3: invalid JSON (Expecting property name enclosed in double quotes at column 2)",
    ]


def test_good_file_has_no_problems(tmp_path, documents):
    assert _problems(tmp_path, documents, [GOOD, UNANSWERABLE]) == []


def test_missing_field(tmp_path, documents):
    bad = {k: v for k, v in GOOD.items() if k != "split"}
    path = _write(tmp_path, [bad])
    assert _problems(tmp_path, documents, [bad]) == [f"{path}:1: id t-001: split: missing field"]


def test_bad_category(tmp_path, documents):
    bad = dict(GOOD, category="trivia")
    path = _write(tmp_path, [bad])
    (msg,) = _problems(tmp_path, documents, [bad])
    assert msg.startswith(f"{path}:1: id t-001: category: 'trivia' is not one of factual, temporal")


def test_quote_not_in_document(tmp_path, documents):
    bad = dict(GOOD, evidence=[{"doc_id": "statement-2019-01-30", "quote": "decided to raise the target range to 9 percent"}])
    path = _write(tmp_path, [bad])
    assert _problems(tmp_path, documents, [bad]) == [
        f"{path}:1: id t-001: evidence[0].quote: not found in statement-2019-01-30: "
        "'decided to raise the target range to 9 percent'"
    ]


def test_duplicate_id(tmp_path, documents):
    dup = dict(UNANSWERABLE, id="t-001")
    path = _write(tmp_path, [GOOD, dup])
    assert _problems(tmp_path, documents, [GOOD, dup]) == [
        f"{path}:2: id t-001: id: duplicate id (first used on line 1)"
    ]


def test_unknown_doc_id(tmp_path, documents):
    bad = dict(GOOD, evidence=[{"doc_id": "statement-2018-12-19", "quote": "anything"}], date_range=None)
    path = _write(tmp_path, [bad])
    assert _problems(tmp_path, documents, [bad]) == [
        f"{path}:1: id t-001: evidence[0].doc_id: unknown doc_id 'statement-2018-12-19' (not in the corpus)"
    ]


def test_answerable_evidence_consistency(tmp_path, documents):
    no_ev = dict(GOOD, evidence=[])
    has_ev = dict(UNANSWERABLE, evidence=GOOD["evidence"])
    wrong_flag = dict(UNANSWERABLE, id="t-003", answerable=True)
    path = _write(tmp_path, [no_ev, has_ev, wrong_flag])
    assert _problems(tmp_path, documents, [no_ev, has_ev, wrong_flag]) == [
        f"{path}:1: id t-001: evidence: an answerable question needs at least one evidence item",
        f"{path}:2: id t-002: evidence: must be empty when answerable is false",
        f"{path}:3: id t-003: answerable: must be false for category unanswerable",
        f"{path}:3: id t-003: evidence: an answerable question needs at least one evidence item",
        f"{path}:3: id t-003: key_facts: an answerable question needs at least one key fact",
    ]


def test_date_range_checks(tmp_path, documents):
    reversed_ = dict(GOOD, date_range=["2019-02-01", "2019-01-01"])
    not_iso = dict(GOOD, id="t-003", date_range=["2019-1-1", "2019-12-31"])
    outside = dict(GOOD, id="t-004", date_range=["2020-01-01", "2020-12-31"])
    path = _write(tmp_path, [reversed_, not_iso, outside])
    assert _problems(tmp_path, documents, [reversed_, not_iso, outside]) == [
        f"{path}:1: id t-001: date_range: start 2019-02-01 is after end 2019-01-01",
        f"{path}:2: id t-003: date_range: must be null or [start, end] as ISO dates YYYY-MM-DD, "
        "got ['2019-1-1', '2019-12-31']",
        f"{path}:3: id t-004: evidence[0].doc_id: statement-2019-01-30 (meeting 2019-01-30) is outside "
        "date_range 2020-01-01..2020-12-31",
    ]


def test_key_fact_must_appear_in_answer(tmp_path, documents):
    bad = dict(GOOD, key_facts=["2-1/4 to 2-1/2 percent", "Kashkari"])
    path = _write(tmp_path, [bad])
    assert _problems(tmp_path, documents, [bad]) == [
        f"{path}:1: id t-001: key_facts[1]: 'Kashkari' does not appear in the answer"
    ]


def test_stats(tmp_path):
    qs = load_dataset(_write(tmp_path, [GOOD, UNANSWERABLE]))
    s = dataset_stats(qs)
    assert s["total"] == 2 and s["answerable"] == 1
    assert s["category"]["factual"] == 1 and s["category"]["unanswerable"] == 1
    assert s["split"] == {"dev": 1, "test": 1}
    assert s["year"] == {"2018": 1, "2019": 1}


# ---------------------------------------------------------------- CLI

def test_cli_ok_and_failure(tmp_path, corpus_dir, capsys):
    good = _write(tmp_path, [GOOD, UNANSWERABLE], "good.jsonl")
    assert cli_main(["validate", str(good), "--corpus", str(corpus_dir)]) == 0
    out = capsys.readouterr().out
    assert "ok: no problems" in out and "answerable: 1/2 (50%)" in out
    bad = _write(tmp_path, [GOOD, dict(GOOD)], "bad.jsonl")
    assert cli_main(["validate", str(bad), "--corpus", str(corpus_dir)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == [f"{bad}:2: id t-001: id: duplicate id (first used on line 1)", "1 problem(s) found"]


def test_cli_missing_corpus(tmp_path):
    from fedlab.errors import FedlabError

    good = _write(tmp_path, [GOOD])
    with pytest.raises(FedlabError, match="run `make data`"):
        cli_main(["validate", str(good), "--corpus", str(tmp_path / "nowhere")])


# ---------------------------------------------------------------- the shipped dataset

def test_shipped_dataset_validates(documents):
    if not DATASET.exists():
        pytest.skip(f"{DATASET.relative_to(ROOT)} has not been assembled yet")
    report = validate_file(DATASET, documents)
    assert [str(p) for p in report.problems] == []
    stats = report.stats()
    assert stats["total"] >= 100
    assert all(stats["category"][c] > 0 for c in stats["category"])

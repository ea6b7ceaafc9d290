"""The QA dataset: schema loader, quote location, and the validator CLI."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fedlab.dataset import DatasetError, Evidence, Question, load_dataset, locate_quote
from fedlab.dataset.__main__ import main as cli_main
from fedlab.dataset.validate import dataset_stats, validate_file

ROOT = Path(__file__).resolve().parent.parent
DATASET = ROOT / "datasets" / "fomc_qa" / "fomc_qa.jsonl"
CALIBRATION_SET = ROOT / "datasets" / "fomc_qa" / "calibration.jsonl"
FRESH_DEV = ROOT / "datasets" / "fomc_qa" / "fresh_dev.jsonl"
FRESH_DEV3 = ROOT / "datasets" / "fomc_qa" / "fresh_dev3.jsonl"
FRESH_DEV4 = ROOT / "datasets" / "fomc_qa" / "fresh_dev4.jsonl"
FRESH_DEV5 = ROOT / "datasets" / "fomc_qa" / "fresh_dev5.jsonl"
FRESH_DEV6 = ROOT / "datasets" / "fomc_qa" / "fresh_dev6.jsonl"
FRESH_DEV7 = ROOT / "datasets" / "fomc_qa" / "fresh_dev7.jsonl"
FRESH_DEV8 = ROOT / "datasets" / "fomc_qa" / "fresh_dev8.jsonl"


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
    path = _write(tmp_path, [UNANSWERABLE, bad, dict(GOOD, id="t-003", split="train")])
    with pytest.raises(DatasetError) as exc:
        load_dataset(path)
    lines = str(exc.value).splitlines()
    assert lines == [
        f"{path}:2: id t-001: answer: missing field",
        f"{path}:3: id t-003: split: 'train' is not one of dev, test",
    ]


def test_a_line_that_is_not_json_is_one_error_with_its_line(tmp_path):
    # The file cannot be read as JSONL: one line naming the first bad line, whatever else is wrong.
    bad = dict(GOOD)
    del bad["answer"]
    path = _write(tmp_path, [UNANSWERABLE, bad, "{not json", "also not json"])
    with pytest.raises(DatasetError) as exc:
        load_dataset(path)
    assert str(exc.value) == (
        f"{path}:3: invalid JSON (Expecting property name enclosed in double quotes at column 2) "
        "(and 1 more line(s) after it): each line must be one JSON object; fix or remove the line"
    )


@pytest.mark.parametrize("raw,byte", [("Zentralbank caf\u00e9".encode("latin-1"), "e9"), (b"\xff", "ff")])
def test_non_utf8_file_names_file_line_and_fix(tmp_path, raw, byte):
    path = tmp_path / "latin.jsonl"
    row = json.dumps(UNANSWERABLE).encode()
    path.write_bytes(row + b"\n" + row[:-1] + b', "note": "' + raw + b'"}\n')
    with pytest.raises(DatasetError) as exc:
        load_dataset(path)
    msg = str(exc.value)
    assert "\n" not in msg
    assert msg.startswith(f"{path}:2: not UTF-8 text (byte 0x{byte} at column ")
    assert msg.endswith("save the file as UTF-8")


def test_utf8_byte_order_mark_is_accepted(tmp_path):
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(GOOD, ensure_ascii=False).encode("utf-8") + b"\n")
    assert [q.id for q in load_dataset(path)] == ["t-001"]


def test_directory_as_dataset_says_which_file_to_pass(tmp_path):
    (tmp_path / "qa.jsonl").write_text(json.dumps(GOOD) + "\n")
    with pytest.raises(DatasetError) as exc:
        load_dataset(tmp_path)
    assert str(exc.value) == (
        f"{tmp_path}: is a directory, not a dataset file: pass the JSONL file itself, e.g. {tmp_path / 'qa.jsonl'}"
    )


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


def _validate(*args: str, env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """The real CLI in a subprocess, as a user runs it."""
    full_env = {k: v for k, v in os.environ.items() if k != "FEDLAB_DATA_DIR"}
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "fedlab.dataset", "validate", *args], capture_output=True,
                          text=True, env=full_env, cwd=cwd or ROOT, timeout=120)


def _one_error_line(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


def test_cli_non_utf8_file_is_one_error_line(tmp_path, corpus_dir):
    path = tmp_path / "latin1.jsonl"
    latin1 = json.dumps(dict(UNANSWERABLE, answer="Not in the caf\u00e9."), ensure_ascii=False).encode("latin-1")
    path.write_bytes(json.dumps(GOOD).encode() + b"\n" + latin1 + b"\n")
    line = _one_error_line(_validate(str(path), "--corpus", str(corpus_dir)))
    assert line.startswith(f"error: {path}:2: not UTF-8 text (byte 0xe9 at column ")
    assert line.endswith("save the file as UTF-8")
    stray = tmp_path / "stray.jsonl"
    stray.write_bytes(b"\xff" + json.dumps(GOOD).encode() + b"\n")
    line = _one_error_line(_validate(str(stray), "--corpus", str(corpus_dir)))
    assert line.startswith(f"error: {stray}:1: not UTF-8 text (byte 0xff at column 1)")


def test_cli_invalid_json_line_is_one_error_line(tmp_path, corpus_dir):
    path = _write(tmp_path, [GOOD, "{\"id\": \"t-002\",", UNANSWERABLE])
    line = _one_error_line(_validate(str(path), "--corpus", str(corpus_dir)))
    assert line.startswith(f"error: {path}:2: invalid JSON (")
    assert line.endswith("fix or remove the line")


def test_cli_directory_as_dataset_names_the_file_to_pass(tmp_path, corpus_dir):
    _write(tmp_path, [GOOD], "mine.jsonl")
    line = _one_error_line(_validate(str(tmp_path), "--corpus", str(corpus_dir)))
    assert line == f"error: {tmp_path}: is a directory, not a dataset file: pass the JSONL file itself, " \
                   f"e.g. {tmp_path / 'mine.jsonl'}"


def test_cli_default_corpus_follows_fedlab_data_dir(tmp_path, documents):
    """With FEDLAB_DATA_DIR set, the corpus is $FEDLAB_DATA_DIR/corpus/fomc, as for the Hydra apps:
    a corpus there without statement-2019-01-30 makes GOOD's evidence unknown."""
    from fedlab.corpus.build import BuildReport, write_snapshot
    from fedlab.corpus.snapshot import content_hash

    data = tmp_path / "data"
    kept = [d for d in documents if d.doc_id != "statement-2019-01-30"]
    write_snapshot(data / "corpus" / "fomc", BuildReport(kept, content_hash=content_hash(kept)), {"corpus": "fomc"})
    good = _write(tmp_path, [GOOD, UNANSWERABLE])
    proc = _validate(str(good), env={"FEDLAB_DATA_DIR": str(data)})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"checked against {len(kept)} documents" in proc.stdout
    assert "unknown doc_id 'statement-2019-01-30'" in proc.stderr
    # Relative, as the Hydra apps read it: against the working directory.
    proc = _validate(str(good), env={"FEDLAB_DATA_DIR": "data"}, cwd=tmp_path)
    assert proc.returncode == 1 and "unknown doc_id 'statement-2019-01-30'" in proc.stderr
    # No corpus there: one line naming the directory and `make data`.
    line = _one_error_line(_validate(str(good), env={"FEDLAB_DATA_DIR": str(tmp_path / "empty")}))
    assert line.startswith(f"error: no corpus at {tmp_path / 'empty' / 'corpus' / 'fomc'} ")
    assert "run `make data`" in line


def _corpus_without_good_evidence(data: Path, documents) -> list:
    """A corpus snapshot under ``data`` lacking statement-2019-01-30 (GOOD's evidence)."""
    from fedlab.corpus.build import BuildReport, content_hash, write_snapshot

    kept = [d for d in documents if d.doc_id != "statement-2019-01-30"]
    write_snapshot(data / "corpus" / "fomc", BuildReport(kept, content_hash=content_hash(kept)), {"corpus": "fomc"})
    return kept


def test_default_corpus_is_the_configs_paths_data_dir(tmp_path, documents, corpus_dir, capsys, monkeypatch):
    """The default corpus is the composed config's corpus.dir (${paths.data_dir}/corpus/fomc), as for
    the Hydra apps: FEDLAB_DATA_DIR sets paths.data_dir, and --set paths.data_dir=DIR overrides it."""
    kept = _corpus_without_good_evidence(tmp_path / "data", documents)
    good = _write(tmp_path, [GOOD, UNANSWERABLE])
    monkeypatch.setenv("FEDLAB_DATA_DIR", str(tmp_path / "data"))
    assert cli_main(["validate", str(good)]) == 1
    out = capsys.readouterr()
    assert f"checked against {len(kept)} documents" in out.out
    assert "unknown doc_id 'statement-2019-01-30'" in out.err
    assert cli_main(["validate", str(good), "--set", f"paths.data_dir={corpus_dir.parent.parent}"]) == 0
    assert "ok: no problems" in capsys.readouterr().out
    monkeypatch.delenv("FEDLAB_DATA_DIR")
    assert cli_main(["validate", str(good), "--set", f"paths.data_dir={tmp_path / 'data'}"]) == 1
    assert "unknown doc_id 'statement-2019-01-30'" in capsys.readouterr().err


def test_cli_bad_config_is_one_error_line(tmp_path):
    good = _write(tmp_path, [GOOD])
    line = _one_error_line(_validate(str(good), "--config", "no-such-config"))
    assert line.startswith("error: no config 'no-such-config'")
    line = _one_error_line(_validate(str(good), "--colour"))
    assert line == "error: unrecognized arguments: --colour (see python -m fedlab.dataset --help)"


def test_cli_refuses_a_corpus_whose_docs_do_not_match_its_manifest(tmp_path, corpus_dir):
    import shutil

    edited = tmp_path / "corpus"
    shutil.copytree(corpus_dir, edited)
    docs = edited / "docs.jsonl"
    docs.write_text(docs.read_text().replace("federal funds rate", "federal funds  rate", 1))
    good = _write(tmp_path, [GOOD])
    line = _one_error_line(_validate(str(good), "--corpus", str(edited)))
    assert "docs.jsonl does not match manifest.json" in line and "`make data`" in line


# ---------------------------------------------------------------- the shipped dataset

def test_shipped_dataset_validates(documents):
    if not DATASET.exists():
        pytest.skip(f"{DATASET.relative_to(ROOT)} has not been assembled yet")
    report = validate_file(DATASET, documents)
    assert [str(p) for p in report.problems] == []
    stats = report.stats()
    assert stats["total"] >= 100
    assert all(stats["category"][c] > 0 for c in stats["category"])


@pytest.mark.parametrize("path, apart_from", [(CALIBRATION_SET, (DATASET,)),
                                              (FRESH_DEV, (DATASET, CALIBRATION_SET)),
                                              (FRESH_DEV3, (DATASET, CALIBRATION_SET, FRESH_DEV)),
                                              (FRESH_DEV4, (DATASET, CALIBRATION_SET, FRESH_DEV, FRESH_DEV3)),
                                              (FRESH_DEV5, (DATASET, CALIBRATION_SET, FRESH_DEV, FRESH_DEV3, FRESH_DEV4)),
                                              (FRESH_DEV6, (DATASET, CALIBRATION_SET, FRESH_DEV, FRESH_DEV3, FRESH_DEV4,
                                                            FRESH_DEV5)),
                                              (FRESH_DEV7, (DATASET, CALIBRATION_SET, FRESH_DEV, FRESH_DEV3, FRESH_DEV4,
                                                            FRESH_DEV5, FRESH_DEV6)),
                                              (FRESH_DEV8, (DATASET, CALIBRATION_SET, FRESH_DEV, FRESH_DEV3, FRESH_DEV4,
                                                            FRESH_DEV5, FRESH_DEV6, FRESH_DEV7))])
def test_shipped_question_sets_validate_and_are_apart(documents, path, apart_from):
    """The calibration set (the answerability model is fitted on the dev split and it), the fresh
    dev set (the reader is developed on it), the third fresh set (changes to the model are
    compared on it; the second joined the calibration set), the fourth (the reader is developed
    on its first half, the second is held out), the fifth (held out; changes to the model are
    compared on it), the sixth (the reader is developed on it), the seventh and the eighth (held out): they validate, are all dev, cover every category
    and share no id (nor question) with the sets they must stay apart from."""
    report = validate_file(path, documents)
    assert [str(p) for p in report.problems] == []
    stats = report.stats()
    assert stats["split"] == {"dev": stats["total"], "test": 0}
    assert all(stats["category"][c] > 0 for c in stats["category"])
    asked = [q.question.lower() for q in report.questions]
    assert len(set(asked)) == len(asked)
    for other in apart_from:
        dataset = load_dataset(other)
        assert not {q.id for q in report.questions} & {q.id for q in dataset}
        assert not set(asked) & {q.question.lower() for q in dataset}

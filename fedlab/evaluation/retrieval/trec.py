"""TREC qrels and run files, one pair per configuration.

Contract and design notes: docs/metrics.md#design-notes-fedlabevaluationretrievaltrecpy.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Mapping, Sequence

from fedlab.errors import FedlabError
from fedlab.io import write_text


_WHITESPACE = re.compile(r"\s")


def _check_token(value: str, what: str) -> str:
    if not value or _WHITESPACE.search(value):
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


def _lines(path: str | Path, what: str, fields: int) -> list[list[str]]:
    p = Path(path)
    if not p.is_file():
        raise FedlabError(f"no TREC {what} file at {p}")
    rows = []
    for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != fields:
            raise FedlabError(f"{p}:{n}: a TREC {what} line has {fields} fields, got {len(parts)}")
        rows.append(parts)
    if not rows:
        raise FedlabError(f"TREC {what} file {p} is empty: nothing to evaluate")
    return rows


def read_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """{qid: {chunk id: rel}} from a TREC qrels file."""
    qrels: dict[str, dict[str, int]] = {}
    try:
        for qid, _, cid, rel in _lines(path, "qrels", 4):
            qrels.setdefault(qid, {})[cid] = int(rel)
    except ValueError as exc:
        raise FedlabError(f"{path}: bad relevance value ({exc})") from None
    return qrels


def read_run(path: str | Path) -> dict[str, list[str]]:
    """{qid: [chunk id, ...]} from a TREC run file, best first.

    Ordered as trec_eval and ranx read a run, by score (descending); the rank column breaks
    ties. Files from ``write_run`` come back in exactly the order written.
    """
    rows: dict[str, list[tuple[float, int, str]]] = {}
    try:
        for qid, _, cid, rank, score, _tag in _lines(path, "run", 6):
            rows.setdefault(qid, []).append((-float(score), int(rank), cid))
    except ValueError as exc:
        raise FedlabError(f"{path}: bad rank or score ({exc})") from None
    return {qid: [cid for _, _, cid in sorted(items)] for qid, items in rows.items()}


def run_tag(path: str | Path) -> str:
    """The tag (last column) of a run file's first line."""
    return _lines(path, "run", 6)[0][5]

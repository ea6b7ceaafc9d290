"""One evaluated set's per-question rows, read back from its run directory.

An evaluation writes ``per_question.jsonl`` (retrieval, every question) and, with an agent,
``agent_answers.jsonl``; the set's own JSONL records give the fields to group by (``category``
and any other a set carries, such as ``style``). ``question_rows`` joins the three by id into the
flat rows ``intervals.Outcomes`` reads.
"""
from __future__ import annotations

import json
from pathlib import Path

from fedlab.errors import FedlabError


def _jsonl(path: Path) -> list[dict]:
    from fedlab.io import read_jsonl

    return read_jsonl(path) if path.is_file() else []


def dataset_records(path: str | Path) -> dict[str, dict]:
    """{id: the raw JSON record} of a question set (every field, those the schema ignores too)."""
    out = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if line:
                row = json.loads(line)
                if isinstance(row, dict) and isinstance(row.get("id"), str):
                    out[row["id"]] = row
    return out


def question_rows(run_dir: Path, records: dict[str, dict], group_by: tuple[str, ...] = ()) -> list[dict]:
    """One flat row per evaluated question: its id, the group-by fields of its record, the
    retrieval metrics, the agent's judgement and confidence, and its end-to-end latency (ms)."""
    retrieval = _jsonl(run_dir / "per_question.jsonl")
    if not retrieval:
        raise FedlabError(f"{run_dir} has no per_question.jsonl: the evaluation did not finish")
    answers = {r["id"]: r for r in _jsonl(run_dir / "agent_answers.jsonl")}
    rows = []
    for r in retrieval:
        qid = r["id"]
        record = records.get(qid, {})
        row = {"id": qid, "answerable": bool(r.get("answerable")),
               "category": r.get("category") or record.get("category")}
        for name in group_by:
            if name != "category":
                row[name] = record.get(name)
        for name in ("recall@10", "meeting_recall@5", "mrr@10"):
            if name in r:
                row[name] = r[name]
        row["latency_ms"] = (r.get("timings_ms") or {}).get("total_ms")
        a = answers.get(qid)
        if a is not None:
            row.update(abstained=a.get("abstained"), answer_correct=a.get("answer_correct"), correct=a.get("correct"),
                       confidence=a.get("confidence"), skill=a.get("skill"),
                       n_citations=len(a.get("citations") or []),
                       valid_citations=sum(1 for c in a.get("citations") or [] if c.get("valid")))
            total = (a.get("latency_ms") or {}).get("total")
            if total is not None:  # the agent's time includes its searches: what a user waits for
                row["latency_ms"] = total
        rows.append(row)
    return rows

"""Retrieval metrics over answerable questions, on the ranked list the pipeline returned.

Contract and design notes: docs/metrics.md#design-notes-fedlabevaluationretrievalmetricspy.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from fedlab import memo
from fedlab.chunking.chunk import Chunk
from fedlab.evaluation.record import QuestionRecord
from fedlab.evaluation.retrieval.relevance import EvidenceSpan, build_qrels, canonical_ids, judge_ranking

KS = (1, 3, 5, 10)
RANX_METRICS = {"mrr@10": "mrr@10", "ndcg@10": "ndcg@10", **{f"hit@{k}": f"hit_rate@{k}" for k in KS}}
METRIC_NAMES = (
    [f"recall@{k}" for k in KS]
    + ["mrr@10", "ndcg@10"]
    + [f"hit@{k}" for k in KS]
    + [f"doc_recall@{k}" for k in KS]
    + [f"meeting_recall@{k}" for k in KS]
)


@dataclass
class RetrievalEvaluation:
    metrics: dict[str, float]  # {metric name: mean over answerable questions}
    per_question: list[QuestionRecord]  # the retrieval fields of each answerable question
    qrels: dict[str, dict[str, int]]  # {qid: {canonical chunk id: grade}}, for trec.write_qrels
    run: dict[str, list[str]]  # {qid: judged ids in rank order}, for trec.write_run
    unreachable: list[str] = field(default_factory=list)  # qids no chunk of the index covers

    @property
    def n_questions(self) -> int:
        return len(self.per_question)


def _as_chunk(item) -> Chunk:
    return item.chunk if hasattr(item, "chunk") else item


def judged_ids(chunks: Sequence[Chunk], ids: Mapping[str, str]) -> list[str]:
    """Ids under which ranx/TREC judge a ranked list: each passage's canonical id; a passage
    seen earlier in the list gets a marked id (``<chunk_id>~repeat<rank>``), so it keeps its
    position but counts as not relevant."""
    out: list[str] = []
    seen: set[str] = set()
    for rank, chunk in enumerate(chunks, start=1):
        cid = ids.get(chunk.passage_key, chunk.chunk_id)
        if cid in seen:
            cid = f"{chunk.chunk_id}~repeat{rank}"
        seen.add(cid)
        out.append(cid)
    return out


def recall_at(covered: Sequence[frozenset[int]], n_evidence: int, k: int) -> float:
    """Share of evidence items covered by the top k (``covered`` from judge_ranking)."""
    hit = set().union(*covered[:k]) if covered[:k] else set()
    return len(hit) / n_evidence


def doc_recall_at(chunks: Sequence[Chunk], evidence: Sequence[EvidenceSpan], k: int) -> float:
    """Share of the evidence documents present among the top k chunks."""
    wanted = {ev.doc_id for ev in evidence}
    return len(wanted & {c.doc_id for c in chunks[:k]}) / len(wanted)


def meeting_recall_at(chunks: Sequence[Chunk], evidence: Sequence[EvidenceSpan], k: int) -> float:
    """Share of the evidence meetings present (as a chunk's meeting_date) among the top k chunks."""
    wanted = {ev.meeting_key for ev in evidence}
    return len(wanted & {c.meeting_date for c in chunks[:k]}) / len(wanted)


def first_relevant_rank(covered: Sequence[frozenset[int]]) -> int | None:
    return next((i for i, items in enumerate(covered, start=1) if items), None)


def to_ranx(qrels: Mapping[str, Mapping[str, int]], *runs: Mapping[str, Sequence[str]], names: Sequence[str] = ()):
    """ranx ``Qrels`` and ``Run`` objects for qrels {qid: {id: grade}} and ranked runs {qid: [id, ...]}.

    Ids are re-encoded to one fixed width, shared by the qrels and all runs: numba compiles
    ranx's kernels for each distinct id string width (10-25 s each, measured), whereas one
    width compiles once and then loads from numba's on-disk cache. Runs get scores n, n-1,
    ..., 1 so that ranx keeps the given order, ties included. Queries without a relevant id
    are left out (ranx cannot hold them); empty ranked lists too.
    """
    from ranx import Qrels, Run

    codes: dict[str, str] = {}

    def code(cid: str) -> str:
        return codes.setdefault(cid, f"{len(codes):012d}")

    judged = {q: {code(c): int(g) for c, g in rels.items() if g > 0} for q, rels in qrels.items()}
    judged = {q: rels for q, rels in judged.items() if rels}
    ranx_runs = []
    for i, run in enumerate(runs):
        ranked = {q: {code(c): float(len(ids) - j) for j, c in enumerate(ids)} for q, ids in run.items()
                  if q in judged and ids}
        ranx_runs.append(Run(ranked, name=names[i] if i < len(names) else None) if ranked else None)
    return (Qrels(judged) if judged else None), ranx_runs


def _padded(rows: Sequence[Sequence[tuple[float, float]]], pad: tuple[float, float]):
    """One (queries, longest, 2) float array of (id, value) rows, short lists filled with ``pad``."""
    import numpy as np

    out = np.full((len(rows), max(len(r) for r in rows), 2), pad, dtype=np.float64)
    for i, r in enumerate(rows):
        if r:
            out[i, : len(r)] = r
    return out


def ranx_scores(
    qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, Sequence[str]], metrics: Sequence[str]
) -> dict[str, dict[str, float]]:
    """{qid: {ranx metric: value}} for the questions with at least one relevant id (else 0).

    ranx.evaluate is given its array form: per question, (id, grade) rows sorted by grade and
    (id, score) rows in the ranked order, ids numbered, lists padded with ids that match
    nothing (grade 0 rows are not relevant; padding after a run's end adds no gain to any of
    these metrics). ``Qrels``/``Run`` objects would hold numba typed dicts, whose Python-side
    methods numba compiles afresh in every process (about 5 s a process, measured); the
    array kernels load from numba's on-disk cache.
    """
    from ranx import evaluate

    out: dict[str, dict[str, float]] = {q: {m: 0.0 for m in metrics} for q, rels in qrels.items()
                                        if any(g > 0 for g in rels.values())}
    queries = [q for q in out if run.get(q)]
    if not queries:
        return out
    codes: dict[str, int] = {}

    def code(cid: str) -> int:
        return codes.setdefault(cid, len(codes))

    judged = [sorted(((code(c), g) for c, g in qrels[q].items() if g > 0), key=lambda row: -row[1])
              for q in queries]
    ranked = [[(code(c), len(run[q]) - j) for j, c in enumerate(run[q])] for q in queries]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's notices
        scores = evaluate(_padded(judged, (-2.0, 0.0)), _padded(ranked, (-1.0, 0.0)), list(metrics),
                          return_mean=False)
    if len(metrics) == 1:  # ranx returns the bare array for a single metric
        scores = {metrics[0]: scores}
    for m in metrics:
        for q, value in zip(queries, scores[m]):
            out[q][m] = float(value)
    return out


def _judgments(evidence: Mapping[str, Sequence[EvidenceSpan]], all_chunks: Sequence[Chunk],
               retrieved: Sequence[Chunk]) -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    """(canonical ids, qrels) over every chunk the configuration can return. They depend on the
    chunks and the evidence only, so they are remembered for the process (fedlab.memo): the
    configs of a sweep that share a chunking judge against the same qrels. A ranked list holding
    a chunk the index does not (a config that builds its own) is judged afresh."""
    # a chunk id names its document, span and chunker (fedlab.chunking.base.make_chunk_id)
    key = (tuple(c.chunk_id for c in all_chunks), tuple(sorted(evidence.items())))

    def judge() -> tuple[frozenset[str], dict[str, str], dict[str, dict[str, int]]]:
        ids = canonical_ids(all_chunks)
        return frozenset(key[0]), ids, build_qrels(evidence, all_chunks, ids)

    indexed, ids, qrels = memo.remember("qrels", key, judge)
    extra = [c for c in retrieved if c.chunk_id not in indexed]
    if not extra:
        return ids, qrels
    known = [*all_chunks, *extra]
    ids = canonical_ids(known)
    return ids, build_qrels(evidence, known, ids)


def evaluate_retrieval(
    evidence: Mapping[str, Sequence[EvidenceSpan]],
    rankings: Mapping[str, Sequence],
    all_chunks: Sequence[Chunk],
) -> RetrievalEvaluation:
    """Score every question of ``evidence`` (answerable ones, from relevance.resolve_evidence).

    ``rankings`` maps question id to the returned list (``Chunk`` or ``Hit`` items, list
    order = rank); ``all_chunks`` is every chunk the configuration can return, for the qrels.
    """
    missing = [q for q in evidence if q not in rankings]
    if missing:
        raise ValueError(f"no ranked list for {len(missing)} question(s), e.g. {missing[0]}")
    empty = [q for q, spans in evidence.items() if not spans]
    if empty:
        raise ValueError(f"question {empty[0]} has no evidence span: recall is undefined")
    lists = {q: [_as_chunk(item) for item in rankings[q]] for q in evidence}
    ids, qrels = _judgments(evidence, all_chunks, [c for chunks in lists.values() for c in chunks])
    run = {q: judged_ids(chunks, ids) for q, chunks in lists.items()}
    by_ranx = ranx_scores(qrels, run, list(RANX_METRICS.values()))

    results = []
    for qid, spans in evidence.items():
        chunks = lists[qid]
        covered = judge_ranking(chunks, spans)
        values: dict[str, float] = {}
        for k in KS:
            values[f"recall@{k}"] = recall_at(covered, len(spans), k)
        for name, ranx_name in RANX_METRICS.items():
            values[name] = by_ranx.get(qid, {}).get(ranx_name, 0.0)
        for k in KS:
            values[f"doc_recall@{k}"] = doc_recall_at(chunks, spans, k)
            values[f"meeting_recall@{k}"] = meeting_recall_at(chunks, spans, k)
        results.append(QuestionRecord(
            id=qid,
            first_relevant_rank=first_relevant_rank(covered),
            retrieved=[c.chunk_id for c in chunks],
            n_evidence=len(spans),
            n_relevant_chunks=len(qrels[qid]),
            metrics={name: values[name] for name in METRIC_NAMES},
        ))
    n = len(results)
    means = {name: (sum(r.metrics[name] for r in results) / n if n else 0.0) for name in METRIC_NAMES}
    return RetrievalEvaluation(
        metrics=means, per_question=results, qrels=qrels, run=run,
        unreachable=[q for q, rels in qrels.items() if not rels],
    )

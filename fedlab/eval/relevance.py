"""Span-based relevance: is a returned passage about an evidence quote?

A chunk is relevant to an evidence item when it comes from the evidence's document and its
returned span (``Chunk.span``; the parent passage for small_to_big) covers at least half of
the quote's located span. Judging by character spans, not chunk ids, keeps one set of
evidence valid for every chunker.

Chunk-level qrels (for ranx and TREC files) are graded: a chunk's grade is the number of the
question's evidence items it covers (0 = not relevant, left out of the qrels).

Passage ids. Several chunks may return the same passage (the children of one small_to_big
parent). Judged by ids, the ideal ranking would then contain that passage several times and
nDCG's ideal DCG would be inflated. So qrels and runs name a passage by a *canonical* chunk
id: the smallest chunk id among the chunks that return that same (doc_id, span). A passage
that appears again further down a list is a repeat, judged not relevant (see
``fedlab.eval.metrics``).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from fedlab.chunking.chunk import Chunk
from fedlab.errors import FedlabError


@dataclass(frozen=True)
class EvidenceSpan:
    """An evidence quote located in its document: ``text[start:end]`` is the quote."""

    doc_id: str
    start: int
    end: int

    def __post_init__(self):
        if not 0 <= self.start < self.end:
            raise ValueError(f"evidence span must satisfy 0 <= start < end, got ({self.start}, {self.end})")

    @property
    def length(self) -> int:
        return self.end - self.start


def overlap(a: tuple[int, int], b: tuple[int, int]) -> int:
    """Characters shared by the half-open spans ``a`` and ``b``."""
    return max(0, min(a[1], b[1]) - max(a[0], b[0]))


def covers(chunk: Chunk, evidence: EvidenceSpan) -> bool:
    """True when the chunk's returned span holds at least half of the evidence quote."""
    if chunk.doc_id != evidence.doc_id:
        return False
    return 2 * overlap(chunk.span, (evidence.start, evidence.end)) >= evidence.length


def covered_items(chunk: Chunk, evidence: Sequence[EvidenceSpan]) -> frozenset[int]:
    """Indices of the evidence items the chunk covers."""
    return frozenset(i for i, ev in enumerate(evidence) if covers(chunk, ev))


def judge_ranking(chunks: Sequence[Chunk], evidence: Sequence[EvidenceSpan]) -> list[frozenset[int]]:
    """For each chunk of a ranked list, in order, the evidence items it covers."""
    return [covered_items(chunk, evidence) for chunk in chunks]


def _doc_text(doc) -> str:
    return doc if isinstance(doc, str) else doc.text


def resolve_evidence(questions: Iterable, documents: Mapping[str, object]) -> dict[str, tuple[EvidenceSpan, ...]]:
    """Locate every answerable question's evidence quotes once: {question id: spans}.

    ``questions`` are ``fedlab.dataset.schema.Question`` objects (anything with ``id``,
    ``answerable`` and ``evidence`` items carrying ``doc_id`` and ``quote``); ``documents``
    maps doc_id to a ``Document`` or its text. Unanswerable questions are left out: they
    have no evidence to retrieve. A missing document or a quote not found in it raises one
    FedlabError listing the problems, since a silently dropped item would skew every metric.
    """
    from fedlab.dataset.locate import locate_quote

    resolved: dict[str, tuple[EvidenceSpan, ...]] = {}
    problems: list[str] = []
    for q in questions:
        if not q.answerable:
            continue
        spans = []
        for i, ev in enumerate(q.evidence):
            doc = documents.get(ev.doc_id)
            if doc is None:
                problems.append(f"{q.id} evidence[{i}]: document {ev.doc_id} is not in the corpus")
                continue
            found = locate_quote(_doc_text(doc), ev.quote)
            if found is None:
                problems.append(f"{q.id} evidence[{i}]: quote not found in {ev.doc_id}: {ev.quote[:60]!r}")
                continue
            spans.append(EvidenceSpan(ev.doc_id, found[0], found[1]))
        if not q.evidence:
            problems.append(f"{q.id}: answerable but has no evidence")
        resolved[q.id] = tuple(spans)
    if problems:
        shown = "; ".join(problems[:3])
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise FedlabError(f"cannot judge retrieval: {shown}{more}; fix the dataset or rebuild the corpus")
    return resolved


def passage_key(chunk: Chunk) -> tuple[str, int, int]:
    """What the user is shown: the document and the returned span."""
    return (chunk.doc_id, *chunk.span)


def canonical_ids(chunks: Iterable[Chunk]) -> dict[tuple[str, int, int], str]:
    """{passage key: the smallest chunk id among the chunks returning that passage}."""
    best: dict[tuple[str, int, int], str] = {}
    for chunk in chunks:
        key = passage_key(chunk)
        if key not in best or chunk.chunk_id < best[key]:
            best[key] = chunk.chunk_id
    return best


def build_qrels(
    evidence: Mapping[str, Sequence[EvidenceSpan]],
    chunks: Iterable[Chunk],
    ids: Mapping[tuple[str, int, int], str] | None = None,
) -> dict[str, dict[str, int]]:
    """Graded chunk-level qrels {qid: {canonical chunk id: number of evidence items covered}}.

    ``chunks`` must be every chunk the configuration can return (the whole index), or the
    ideal ranking behind nDCG would only know the relevant chunks that happened to be
    retrieved. Questions no chunk covers get an empty dict (their quote is longer than twice
    any chunk, say); they still count, as misses, in the metrics.
    """
    chunks = list(chunks)
    ids = ids if ids is not None else canonical_ids(chunks)
    by_doc: dict[str, list[Chunk]] = defaultdict(list)
    seen: set[tuple[str, int, int]] = set()
    for chunk in chunks:
        key = passage_key(chunk)
        if key not in seen:
            seen.add(key)
            by_doc[chunk.doc_id].append(chunk)
    qrels: dict[str, dict[str, int]] = {}
    for qid, spans in evidence.items():
        grades: dict[str, int] = {}
        for doc_id in {ev.doc_id for ev in spans}:
            for chunk in by_doc.get(doc_id, ()):
                grade = len(covered_items(chunk, spans))
                if grade:
                    grades[ids[passage_key(chunk)]] = grade
        qrels[qid] = grades
    return qrels

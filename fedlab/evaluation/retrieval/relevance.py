"""Span-based relevance: is a returned passage about an evidence quote?

Contract and design notes: docs/metrics.md#design-notes-fedlabevaluationretrievalrelevancepy.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from fedlab.chunking.chunk import Chunk
from fedlab.corpus.document import DOC_ID_RE
from fedlab.errors import FedlabError

RELEVANCE_RULES = ("meeting", "document")


def check_relevance(rule) -> str:
    """The relevance rule, or one FedlabError naming the two choices."""
    if rule not in RELEVANCE_RULES:
        raise FedlabError(
            f"eval.relevance={rule!r}: use meeting (a chunk of any document of the evidence's meeting "
            f"that holds the quote counts) or document (only the evidence's own document counts)"
        )
    return rule


def _meeting_of_id(doc_id: str) -> str | None:
    """The meeting date a corpus doc_id names (statement-/minutes-YYYY-MM-DD), else None."""
    m = DOC_ID_RE.match(doc_id)
    return f"{m.group(2)}-{m.group(3)}-{m.group(4)}" if m else None


@dataclass(frozen=True)
class EvidenceSpan:
    """An evidence quote located in its document: ``text[start:end]`` is the quote.

    ``meeting``: the meeting date of that document (taken from a corpus doc_id when not
    given). ``also``: the same quote located in the meeting's other documents (filled by
    ``resolve_evidence`` under the ``meeting`` rule; empty under ``document``).
    """

    doc_id: str
    start: int
    end: int
    meeting: str | None = None
    also: tuple["EvidenceSpan", ...] = ()

    def __post_init__(self):
        if not 0 <= self.start < self.end:
            raise ValueError(f"evidence span must satisfy 0 <= start < end, got ({self.start}, {self.end})")
        if self.meeting is None:
            object.__setattr__(self, "meeting", _meeting_of_id(self.doc_id))
        object.__setattr__(self, "also", tuple(self.also))

    @property
    def length(self) -> int:
        return self.end - self.start

    @property
    def located(self) -> tuple[tuple[str, int, int], ...]:
        """Every place the quote is judged at: (doc_id, start, end), its own document first."""
        return ((self.doc_id, self.start, self.end), *((a.doc_id, a.start, a.end) for a in self.also))

    @property
    def doc_ids(self) -> frozenset[str]:
        """The documents a relevant chunk can come from."""
        return frozenset(doc for doc, _, _ in self.located)

    @property
    def meeting_key(self) -> str:
        """What ``meeting_recall@k`` matches against ``Chunk.meeting_date`` (the doc_id when
        the meeting is unknown, which then matches no chunk)."""
        return self.meeting if self.meeting is not None else self.doc_id


def overlap(a: tuple[int, int], b: tuple[int, int]) -> int:
    """Characters shared by the half-open spans ``a`` and ``b``."""
    return max(0, min(a[1], b[1]) - max(a[0], b[0]))


def covers(chunk: Chunk, evidence: EvidenceSpan) -> bool:
    """True when the chunk's returned span holds at least half of the evidence quote as located
    in the chunk's document (the evidence's own document, or under the ``meeting`` rule any
    document of its meeting where ``resolve_evidence`` found the quote)."""
    span = chunk.span
    return any(doc == chunk.doc_id and 2 * overlap(span, (start, end)) >= end - start
               for doc, start, end in evidence.located)


def covered_items(chunk: Chunk, evidence: Sequence[EvidenceSpan]) -> frozenset[int]:
    """Indices of the evidence items the chunk covers."""
    return frozenset(i for i, ev in enumerate(evidence) if covers(chunk, ev))


def judge_ranking(chunks: Sequence[Chunk], evidence: Sequence[EvidenceSpan]) -> list[frozenset[int]]:
    """For each chunk of a ranked list, in order, the evidence items it covers."""
    return [covered_items(chunk, evidence) for chunk in chunks]


def _doc_text(doc) -> str:
    return doc if isinstance(doc, str) else doc.text


def _doc_meeting(doc_id: str, doc) -> str | None:
    return getattr(doc, "meeting_date", None) or _meeting_of_id(doc_id)


def meeting_documents(documents: Mapping[str, object]) -> dict[str, list[str]]:
    """{meeting date: the doc_ids of that meeting, sorted} (documents of unknown meeting left out)."""
    out: dict[str, list[str]] = defaultdict(list)
    for doc_id, doc in documents.items():
        meeting = _doc_meeting(doc_id, doc)
        if meeting is not None:
            out[meeting].append(doc_id)
    return {m: sorted(ids) for m, ids in out.items()}


def resolve_evidence(questions: Iterable, documents: Mapping[str, object],
                     relevance: str = "document") -> dict[str, tuple[EvidenceSpan, ...]]:
    """Locate every answerable question's evidence quotes once: {question id: spans}.

    ``questions`` are ``fedlab.dataset.schema.Question`` objects (anything with ``id``,
    ``answerable`` and ``evidence`` items carrying ``doc_id`` and ``quote``); ``documents``
    maps doc_id to a ``Document`` or its text. Unanswerable questions are left out: they
    have no evidence to retrieve. A missing document or a quote not found in it raises one
    FedlabError listing the problems, since a silently dropped item would skew every metric.

    ``relevance="meeting"`` also locates each quote in the other documents of its meeting
    (``EvidenceSpan.also``, where found); ``"document"`` judges the evidence document only.
    """
    from fedlab.dataset.locate import locate_quote

    check_relevance(relevance)
    meetings = meeting_documents(documents) if relevance == "meeting" else {}
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
            meeting = _doc_meeting(ev.doc_id, doc)
            also = []
            for other in meetings.get(meeting, ()) if meeting is not None else ():
                if other == ev.doc_id:
                    continue
                there = locate_quote(_doc_text(documents[other]), ev.quote)
                if there is not None:
                    also.append(EvidenceSpan(other, there[0], there[1], meeting))
            spans.append(EvidenceSpan(ev.doc_id, found[0], found[1], meeting, tuple(also)))
        if not q.evidence:
            problems.append(f"{q.id}: answerable but has no evidence")
        resolved[q.id] = tuple(spans)
    if problems:
        shown = "; ".join(problems[:3])
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise FedlabError(f"cannot judge retrieval: {shown}{more}; fix the dataset or rebuild the corpus")
    return resolved


def canonical_ids(chunks: Iterable[Chunk]) -> dict[str, str]:
    """{passage key: the smallest chunk id among the chunks returning that passage}."""
    best: dict[str, str] = {}
    for chunk in chunks:
        key = chunk.passage_key
        if key not in best or chunk.chunk_id < best[key]:
            best[key] = chunk.chunk_id
    return best


def build_qrels(
    evidence: Mapping[str, Sequence[EvidenceSpan]],
    chunks: Iterable[Chunk],
    ids: Mapping[str, str] | None = None,
) -> dict[str, dict[str, int]]:
    """Graded chunk-level qrels {qid: {canonical chunk id: number of evidence items covered}}.

    ``chunks`` must be every chunk the configuration can return (the whole index), or the
    ideal ranking behind nDCG would only know the relevant chunks that happened to be
    retrieved. The judgments are ``covers``, so the qrels follow the rule the evidence was
    resolved with. Questions no chunk covers get an empty dict (their quote is longer than twice
    any chunk, say); they still count, as misses, in the metrics.
    """
    chunks = list(chunks)
    ids = ids if ids is not None else canonical_ids(chunks)
    by_doc: dict[str, list[Chunk]] = defaultdict(list)
    seen: set[str] = set()
    for chunk in chunks:
        key = chunk.passage_key
        if key not in seen:
            seen.add(key)
            by_doc[chunk.doc_id].append(chunk)
    qrels: dict[str, dict[str, int]] = {}
    for qid, spans in evidence.items():
        grades: dict[str, int] = {}
        for doc_id in sorted(set().union(*(ev.doc_ids for ev in spans))):
            for chunk in by_doc.get(doc_id, ()):
                grade = len(covered_items(chunk, spans))
                if grade:
                    grades[ids[chunk.passage_key]] = grade
        qrels[qid] = grades
    return qrels

"""Ranking options for the in-range (first) pass of the date-aware search.

Contract and design notes: docs/meeting-aware-retrieval.md#design-notes-fedlabretrievalrankingpy.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from fedlab.errors import FedlabError
from fedlab.retrieval.types import Hit

LENGTH_NORMS = ("log",)
STATEMENT = "statement"


def whole_number(value) -> int:
    """An int from a config value (``10`` or ``"10"``); ValueError for anything else (True, 2.5, "abc")."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"{value!r} is not a whole number")
    return int(str(value).strip())


def _count(key: str, value, minimum: int, nullable: bool = True) -> int | None:
    if value is None and nullable:
        return None
    try:
        n = whole_number(value)
    except ValueError:
        off = " or null (off)" if nullable else ""
        raise FedlabError(f"retriever.{key}={value!r} is not a whole number: use a number >= {minimum}{off}") from None
    if n < minimum:
        raise FedlabError(f"retriever.{key}={n} is out of range: use a number >= {minimum}"
                          + (" or null (off)" if nullable else ""))
    return n


@dataclass(frozen=True)
class RankingOptions:
    per_meeting: int | None = None
    statement_quota: int | None = None
    length_norm: str | None = None
    doc_first: bool = False
    doc_first_docs: int = 3
    diversity_candidates: int = 3
    doc_passages: Mapping[str, int] = field(default_factory=dict)  # doc_id -> passages in the corpus

    def __post_init__(self):
        object.__setattr__(self, "per_meeting", _count("per_meeting", self.per_meeting, 1))
        object.__setattr__(self, "statement_quota", _count("statement_quota", self.statement_quota, 0))
        object.__setattr__(self, "doc_first_docs", _count("doc_first_docs", self.doc_first_docs, 1, False))
        object.__setattr__(self, "diversity_candidates",
                           _count("diversity_candidates", self.diversity_candidates, 1, False))
        norm = None if self.length_norm in (None, "none", "null", False) else self.length_norm
        if norm is not None and norm not in LENGTH_NORMS:
            raise FedlabError(f"retriever.length_norm={self.length_norm!r} is unknown: use null (off) or "
                              f"{', '.join(LENGTH_NORMS)}")
        object.__setattr__(self, "length_norm", norm)
        if not isinstance(self.doc_first, bool):
            raise FedlabError(f"retriever.doc_first={self.doc_first!r} is not true or false")

    @property
    def active(self) -> bool:
        return bool(self.per_meeting or self.statement_quota or self.length_norm or self.doc_first)

    def fetch(self, n: int) -> int:
        """Candidates to ask the first stage for, to fill ``n`` slots."""
        return n * self.diversity_candidates if self.active else n

    def apply(self, hits: Sequence[Hit], n: int, statements: Callable[[int], Sequence[Hit]] | None = None,
              window: int | None = None) -> list[Hit]:
        """The best ``n`` of the in-range candidates ``hits`` (best first) under these options.
        The statement quota holds in the first ``window`` passages (None = n); ``statements(m)``
        returns the range's best m statement passages."""
        ranked = list(hits)
        if self.length_norm:
            ranked = length_normalised(ranked, self.doc_passages)
        if self.doc_first:
            ranked = documents_first(ranked, self.doc_first_docs)
        if self.per_meeting and len({h.chunk.meeting_date for h in ranked}) > 1:
            ranked = round_robin_by_meeting(ranked, self.per_meeting)
        if self.statement_quota:
            out = statement_quota(ranked, self.statement_quota, n if window is None else window, n, statements)
        else:
            out = ranked[:n]
        return [Hit(h.chunk, h.score, rank, h.sources) for rank, h in enumerate(out, start=1)]


def passages_per_document(chunks) -> dict[str, int]:
    """doc_id -> distinct returned passages (small_to_big children share their parent's)."""
    return dict(Counter(doc for doc, _ in {(c.doc_id, c.span) for c in chunks}))


def length_normalised(hits: Sequence[Hit], doc_passages: Mapping[str, int]) -> list[Hit]:
    """Re-ranked by ``minmax(score) / log2(1 + passages in the document)``; ties keep their order."""
    if not hits:
        return []
    lo, hi = min(h.score for h in hits), max(h.score for h in hits)
    scored = []
    for h in hits:
        norm = (h.score - lo) / (hi - lo) if hi > lo else 1.0
        value = norm / math.log2(1 + max(1, int(doc_passages.get(h.chunk.doc_id, 1))))
        scored.append(Hit(h.chunk, h.score, h.rank, {**h.sources, "length_norm": value}))
    order = sorted(range(len(scored)), key=lambda i: (-scored[i].sources["length_norm"], i))
    return [scored[i] for i in order]


def documents_first(hits: Sequence[Hit], docs: int) -> list[Hit]:
    """Max-passage document ranking: the passages of the ``docs`` best documents (a document
    ranks by its best passage), document by document, then everything else in order."""
    top: list[str] = []
    for h in hits:
        if h.chunk.doc_id not in top:
            top.append(h.chunk.doc_id)
        if len(top) == docs:
            break
    first = [h for doc in top for h in hits if h.chunk.doc_id == doc]
    return first + [h for h in hits if h.chunk.doc_id not in top]


def round_robin_by_meeting(hits: Sequence[Hit], rounds: int) -> list[Hit]:
    """Round r (r < ``rounds``) lists the r-th best passage of every meeting, in ranking order;
    the passages left over follow in ranking order."""
    position = {id(h): i for i, h in enumerate(hits)}
    by_meeting: dict[str, list[Hit]] = {}
    for h in hits:
        by_meeting.setdefault(h.chunk.meeting_date, []).append(h)
    head = []
    for r in range(rounds):
        head += sorted((g[r] for g in by_meeting.values() if len(g) > r), key=lambda h: position[id(h)])
    taken = {id(h) for h in head}
    return head + [h for h in hits if id(h) not in taken]


def statement_quota(ranked: Sequence[Hit], quota: int, window: int, n: int,
                    statements: Callable[[int], Sequence[Hit]] | None = None) -> list[Hit]:
    """The first ``n`` of ``ranked`` with at least ``quota`` statement passages among the first
    ``window`` (or as many as the range has). The best statements missing from the window (from
    further down ``ranked``, then ``statements(m)``: the range's best m statement passages) go to
    its end, and the lowest-ranked other passages they displace move to just after it."""

    window = min(window, n)
    head = list(ranked[:window])
    have = sum(h.chunk.doc_type == STATEMENT for h in head)
    quota = min(quota, window)
    if have >= quota:
        return list(ranked[:n])
    seen = {h.chunk.passage_key for h in head}
    pool = [h for h in ranked[window:] if h.chunk.doc_type == STATEMENT]
    if statements is not None:
        pool += list(statements(quota + have))  # at most `have` of them are in the window already
    add: list[Hit] = []
    for h in pool:
        key = h.chunk.passage_key
        if h.chunk.doc_type == STATEMENT and key not in seen and len(add) < quota - have:
            seen.add(key)
            add.append(h)
    others = [h for h in head if h.chunk.doc_type != STATEMENT]
    demote = max(0, len(head) + len(add) - window)
    moved = others[len(others) - demote:] if demote else []
    gone = {id(h) for h in moved}
    added = {h.chunk.passage_key for h in add}
    tail = [h for h in ranked[window:] if h.chunk.passage_key not in added]
    return ([h for h in head if id(h) not in gone] + add + moved + tail)[:n]

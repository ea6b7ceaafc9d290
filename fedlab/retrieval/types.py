"""Query-side boundary types."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta

from fedlab.chunking.chunk import Chunk


@dataclass(frozen=True)
class Hit:
    chunk: Chunk
    score: float
    rank: int = 0  # 1-based in the list it belongs to
    sources: dict[str, float] = field(default_factory=dict)  # per-retriever scores (hybrid, rerank)


SCOPES = ("meeting", "month", "span", "year", "multi_year")
MULTI_MEETING_SCOPES = ("span", "year", "multi_year")  # a range that holds more than one meeting


@dataclass(frozen=True)
class DateHint:
    """An inclusive ISO date range a question refers to; date_from None = open start.

    scope sizes the retrieval (see fedlab.retrieval.topk): one meeting, a month, a span
    within about a year, a calendar year, or more than a year.
    """

    date_from: str | None
    date_to: str | None
    scope: str
    text: str = ""  # the words the range was read from ("" when a caller supplied it)

    def __post_init__(self):
        if self.scope not in SCOPES:
            raise ValueError(f"DateHint scope {self.scope!r} is not one of {SCOPES}")

    def widened_end(self, days: int) -> str | None:
        """``date_to`` plus ``days`` (at most date.max): a two-day meeting that starts on a
        month's last day is dated by its decision day, the 1st of the next month."""
        if self.date_to is None or not days:
            return self.date_to
        end = date.fromisoformat(self.date_to)
        return (end + timedelta(days=days) if end < date.max - timedelta(days=days) else date.max).isoformat()

    def meeting_span(self) -> tuple[str, str] | None:
        """The ISO dates bounding a range that spans several meetings (its end widened by a day to
        the meeting that closes it, open ends unbounded); None for a range of one meeting or month."""
        if self.scope not in MULTI_MEETING_SCOPES:
            return None
        return self.date_from or "0000-00-00", self.widened_end(1) or "9999-12-31"


@dataclass(frozen=True)
class RetrievalResult:
    hits: list[Hit]
    hint: DateHint | None  # the hint used (parsed or supplied); None = plain single-pass search
    k_used: int  # passages asked for after adaptive top_k
    timings: dict[str, float] = field(default_factory=dict)  # embed_ms, search_ms, rerank_ms, total_ms

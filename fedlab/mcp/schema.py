"""The wire shapes of the two MCP tools, and their conversions to fedlab's own types.

Shared by the server and the client, so a passage that crosses stdio rebuilds into the very
``Chunk`` the pipeline returned. Input models are pydantic (the SDK validates tool arguments
with them and publishes their JSON schema); results are plain dataclasses.

``where`` (a hard filter; passages outside it are never returned)::

    {"doc_type": "minutes" | ["statement", "minutes"],
     "meeting_date": {"gte": "2022-01-01", "lte": "2022-12-31"}}   # inclusive; either bound optional

``hint`` (a soft date range, the agent's DateHint: in-range passages first, then the rest)::

    {"date_from": "2024-01-01" | null, "date_to": "2024-01-31" | null, "scope": "month", "text": ""}
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from fedlab.chunking.chunk import Chunk
from fedlab.corpus.document import DOC_TYPES, Document
from fedlab.index.filter import MetadataFilter
from fedlab.retrieval.types import SCOPES, DateHint, Hit, RetrievalResult

DocType = Literal[DOC_TYPES]  # type: ignore[valid-type]
Scope = Literal[SCOPES]  # type: ignore[valid-type]


def _real_date(value: str) -> str:
    try:
        date.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{value!r} is not a calendar date (YYYY-MM-DD)") from None
    return value


IsoDate = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$", description="ISO date YYYY-MM-DD"),
                    AfterValidator(_real_date)]

# A hint's range is widened by days and months when it is searched: keep it far from date.min/max.
HINT_YEARS = (1900, 2200)


def _hint_year(value: str | None) -> str | None:
    if value is not None and not HINT_YEARS[0] <= int(value[:4]) <= HINT_YEARS[1]:
        raise ValueError(f"{value} is outside the dates a hint may name ({HINT_YEARS[0]}-01-01 to "
                         f"{HINT_YEARS[1]}-12-31); omit the bound (null) for an open range")
    return value


HintDate = Annotated[IsoDate, AfterValidator(_hint_year)]


def utf8_text(value):
    """A string that encodes as UTF-8 (checked before pydantic's own, vaguer, unicode check)."""
    from fedlab.errors import utf8_problem

    problem = utf8_problem(value) if isinstance(value, str) else None
    if problem is not None:
        raise ValueError(f"not valid UTF-8 text: {problem}; send plain text")
    return value


class DateRange(BaseModel):
    """Inclusive meeting-date bounds; either may be omitted."""

    model_config = ConfigDict(extra="forbid")
    gte: IsoDate | None = Field(None, description="first meeting date included")
    lte: IsoDate | None = Field(None, description="last meeting date included")

    @model_validator(mode="after")
    def _ordered(self) -> DateRange:
        if self.gte is not None and self.lte is not None and self.gte > self.lte:
            raise ValueError(f"meeting_date range is empty: gte {self.gte} is after lte {self.lte}")
        return self


class Where(BaseModel):
    """A metadata filter on the passages' document type and meeting date."""

    model_config = ConfigDict(extra="forbid")
    doc_type: DocType | Annotated[list[DocType], Field(min_length=1)] | None = Field(
        None, description='"statement", "minutes", or a list of them')
    meeting_date: DateRange | None = Field(
        None, description='{"gte": "YYYY-MM-DD", "lte": "YYYY-MM-DD"}, inclusive, either bound optional')

    def to_filter(self) -> MetadataFilter:
        doc_types = None
        if self.doc_type is not None:
            doc_types = (self.doc_type,) if isinstance(self.doc_type, str) else tuple(dict.fromkeys(self.doc_type))
        span = self.meeting_date or DateRange()
        return MetadataFilter(span.gte, span.lte, doc_types)


class HintArg(BaseModel):
    """A date range the question refers to (fedlab.retrieval.types.DateHint)."""

    model_config = ConfigDict(extra="forbid")
    date_from: HintDate | None = Field(None, description=f"range start, {HINT_YEARS[0]}..{HINT_YEARS[1]}; "
                                                         "null = open start")
    date_to: HintDate | None = Field(None, description=f"range end, {HINT_YEARS[0]}..{HINT_YEARS[1]}; "
                                                       "null = open end")
    scope: Scope = Field(description="sizes top_k: meeting, month, span, year or multi_year")
    text: Annotated[str, Field(max_length=200), BeforeValidator(utf8_text)] = Field(
        "", description="the words the range was read from")

    @model_validator(mode="after")
    def _ordered(self) -> HintArg:
        if self.date_from is not None and self.date_to is not None and self.date_from > self.date_to:
            raise ValueError(f"hint range is empty: date_from {self.date_from} is after date_to {self.date_to}")
        return self

    def to_hint(self) -> DateHint:
        return DateHint(self.date_from, self.date_to, self.scope, self.text)

    @classmethod
    def from_hint(cls, hint: DateHint) -> HintArg:
        return cls(date_from=hint.date_from, date_to=hint.date_to, scope=hint.scope, text=hint.text)


@dataclass
class Passage:
    """One hit. ``text`` is the passage returned (the parent span for small-to-big chunkers);
    ``start``/``end`` are the searched chunk's offsets into the document's text.
    ``chunk_text`` / ``embed_text`` are null when equal to ``text`` / the chunk's text."""

    rank: int
    chunk_id: str
    doc_id: str
    doc_type: str
    title: str
    date: str  # the meeting (decision) date
    section: str | None
    score: float
    text: str
    start: int
    end: int
    parent_start: int | None = None
    parent_end: int | None = None
    chunk_text: str | None = None
    embed_text: str | None = None
    sources: dict[str, float] = field(default_factory=dict)


@dataclass
class AppliedHint:
    date_from: str | None
    date_to: str | None
    scope: str
    text: str


@dataclass
class SearchResult:
    query: str
    k_used: int  # passages asked for after adaptive top_k (a year-wide question widens top_k)
    hint: AppliedHint | None  # the date range used (parsed from the query or supplied); null = none
    passages: list[Passage]
    timings: dict[str, float] = field(default_factory=dict)  # server-side ms: search_ms, total_ms, ...


@dataclass
class SectionInfo:
    title: str
    start: int
    end: int


@dataclass
class DocumentResult:
    doc_id: str
    doc_type: str
    meeting_date: str
    release_date: str | None
    title: str
    url: str
    meeting: str | None  # the calendar's label, e.g. "January 30-31"
    sections: list[SectionInfo]
    text: str


def passage_from_hit(hit: Hit, doc: Document) -> Passage:
    c = hit.chunk
    lo, hi = c.span
    text = doc.text[lo:hi]
    return Passage(
        rank=hit.rank, chunk_id=c.chunk_id, doc_id=c.doc_id, doc_type=c.doc_type, title=doc.title,
        date=c.meeting_date, section=c.section, score=float(hit.score), text=text, start=c.start, end=c.end,
        parent_start=c.parent_start, parent_end=c.parent_end,
        chunk_text=None if c.text == text else c.text,
        embed_text=None if c.embed_text == c.text else c.embed_text,
        sources={k: float(v) for k, v in hit.sources.items()},
    )


def search_result(query: str, result: RetrievalResult, docs: dict[str, Document]) -> SearchResult:
    h = result.hint
    return SearchResult(
        query=query, k_used=result.k_used,
        hint=None if h is None else AppliedHint(h.date_from, h.date_to, h.scope, h.text),
        passages=[passage_from_hit(hit, docs[hit.chunk.doc_id]) for hit in result.hits],
        timings={k: float(v) for k, v in result.timings.items()},
    )


def document_result(doc: Document) -> DocumentResult:
    return DocumentResult(
        doc_id=doc.doc_id, doc_type=doc.doc_type, meeting_date=doc.meeting_date, release_date=doc.release_date,
        title=doc.title, url=doc.url, meeting=doc.meeting,
        sections=[SectionInfo(s.title, s.start, s.end) for s in doc.sections], text=doc.text,
    )


def chunk_from_passage(p: dict) -> Chunk:
    """The Chunk a passage (the tool's JSON) was made from."""
    chunk_text = p["text"] if p.get("chunk_text") is None else p["chunk_text"]
    return Chunk(
        chunk_id=p["chunk_id"], doc_id=p["doc_id"], doc_type=p["doc_type"], meeting_date=p["date"],
        section=p.get("section"), start=p["start"], end=p["end"], text=chunk_text,
        embed_text=chunk_text if p.get("embed_text") is None else p["embed_text"],
        parent_start=p.get("parent_start"), parent_end=p.get("parent_end"),
    )


def retrieval_result_from_json(data: dict) -> RetrievalResult:
    hits = [Hit(chunk_from_passage(p), p["score"], p["rank"], dict(p.get("sources") or {}))
            for p in data["passages"]]
    h = data.get("hint")
    hint = None if h is None else DateHint(h["date_from"], h["date_to"], h["scope"], h.get("text", ""))
    return RetrievalResult(hits, hint, int(data["k_used"]), dict(data.get("timings") or {}))

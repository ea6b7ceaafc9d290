"""The meeting timeline's typed records: each value with the span of text it was read from.

A :class:`Meeting` per decision date; its :class:`Decision` (target range before and after,
direction and size, the dissents and the voters, the balance-sheet actions) and the
:class:`AdministeredRate` values its notes set. Every value carries the :class:`Span` (doc_id,
start, end) it was read from, so an answer cites the passage that states it; reading them from
the documents is fedlab.facts.timeline's.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Iterable, Iterator

from fedlab.corpus.document import Document

TIMELINE_VERSION = 4
DIRECTIONS = ("raise", "cut", "hold")
RATES = ("reserves", "on_rrp", "primary_credit")  # the administered rates (fedlab.facts.timeline.ADMINISTERED_RATES)



@dataclass(frozen=True)
class Span:
    """Characters ``start:end`` of document ``doc_id``'s text."""

    doc_id: str
    start: int
    end: int

    def text(self, documents: dict[str, Document] | Iterable[Document]) -> str:
        by_id = documents if isinstance(documents, dict) else {d.doc_id: d for d in documents}
        return by_id[self.doc_id].text[self.start:self.end]


@dataclass
class RateRange:
    low: float  # percent
    high: float
    span: Span  # where the range is written ("1-1/2 to 1-3/4 percent")

    def label(self) -> str:
        return f"{self.low:.2f}–{self.high:.2f}"

    def same(self, other: "RateRange | None") -> bool:
        return other is not None and (self.low, self.high) == (other.low, other.high)


@dataclass
class Dissent:
    name: str
    preferred: str  # what the dissenter preferred, as written ("preferred to lower … by 1/4 percentage point …")
    preferred_direction: str  # raise | cut | hold | other (e.g. forward guidance, balance sheet)
    preferred_change_bp: int | None  # signed, relative to the range before the meeting, when the text says
    span: Span  # the names and their clause ("Esther L. George and Eric S. Rosengren, who preferred …")


@dataclass
class BalanceSheetAction:
    action: str  # a key of BALANCE_SHEET_ACTIONS
    text: str  # the sentence it was read from
    span: Span


@dataclass
class Decision:
    source: str  # "statement" | "minutes" (the statement reproduced in the minutes)
    via: str  # "decision_sentence" | "directive"
    sentence: Span  # the decision sentence (or directive sentence)
    direction: str  # raise | cut | hold
    direction_span: Span  # the verb it was read from ("lower", "raise", "maintain", …)
    after: RateRange
    before: RateRange | None
    before_source: str | None  # "text" | "previous_meeting" | "stated_change" | None
    change_bp: int | None  # signed, after − before, in basis points
    size_bp: int | None  # |change_bp|
    size_span: Span | None  # "by 1/2 percentage point" when the text states the size, else None (from the ranges)
    dissents: list[Dissent] = field(default_factory=list)
    dissent_span: Span | None = None  # the "Voting against …" sentence(s)
    voters: list[str] = field(default_factory=list)  # who voted for the action, as listed
    voters_span: Span | None = None  # the "Voting for …" sentence
    balance_sheet: list[BalanceSheetAction] = field(default_factory=list)


@dataclass
class AdministeredRate:
    rate: str  # a key of ADMINISTERED_RATES
    percent: float
    value: Span  # "2.40 percent"
    sentence: Span  # the implementation-note sentence that sets it


@dataclass
class Meeting:
    date: str  # the decision date (= the documents' meeting_date)
    documents: list[str]  # doc_ids of this date
    label: str | None  # the calendar's/minutes' label ("January 29-30, 2019")
    scheduled: bool
    scheduled_span: Span | None  # the announcement or two-day opening it was read from (None: unscheduled)
    notation_vote: bool
    notation_span: Span | None
    is_decision: bool
    decision: Decision | None
    notes: list[str] = field(default_factory=list)  # why not a decision; any inconsistency found
    administered: list[AdministeredRate] = field(default_factory=list)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, row: dict) -> "Meeting":
        row = dict(row)
        row["scheduled_span"] = _span(row.get("scheduled_span"))
        row["notation_span"] = _span(row.get("notation_span"))
        row["administered"] = [AdministeredRate(**{**x, "value": _span(x["value"]), "sentence": _span(x["sentence"])})
                               for x in row.get("administered", [])]
        if row.get("decision") is not None:
            d = dict(row["decision"])
            for key in ("sentence", "direction_span", "size_span", "dissent_span", "voters_span"):
                d[key] = _span(d.get(key))
            d["after"] = _range(d["after"])
            d["before"] = _range(d.get("before"))
            d["dissents"] = [Dissent(**{**x, "span": _span(x["span"])}) for x in d.get("dissents", [])]
            d["balance_sheet"] = [BalanceSheetAction(**{**x, "span": _span(x["span"])})
                                  for x in d.get("balance_sheet", [])]
            row["decision"] = Decision(**d)
        return cls(**row)


def _span(obj: dict | None) -> Span | None:
    return Span(**obj) if obj else None


def _range(obj: dict | None) -> RateRange | None:
    return RateRange(obj["low"], obj["high"], Span(**obj["span"])) if obj else None


@dataclass
class Timeline:
    """Meetings in date order."""

    meetings: list[Meeting]

    def __iter__(self) -> Iterator[Meeting]:
        return iter(self.meetings)

    def __len__(self) -> int:
        return len(self.meetings)

    def __getitem__(self, i):
        return self.meetings[i]

    def by_date(self, date: str) -> Meeting | None:
        for m in self.meetings:
            if m.date == date:
                return m
        return None

    def decisions(self, direction: str | None = None, scheduled: bool | None = None) -> list[Meeting]:
        """Meetings with a policy decision, optionally of one direction (raise/cut/hold) and
        only scheduled (True) or unscheduled (False) ones."""
        if direction is not None and direction not in DIRECTIONS:
            raise ValueError(f"direction must be one of {', '.join(DIRECTIONS)}, not {direction!r}")
        return [m for m in self.meetings if m.decision is not None
                and (direction is None or m.decision.direction == direction)
                and (scheduled is None or m.scheduled == scheduled)]

    def dissents_named(self, text: str, lo: str | None = None, hi: str | None = None) -> list[tuple[Meeting, Dissent]]:
        """The dissents at meetings dated ``lo``..``hi`` (None: open) by a member ``text`` names by
        surname ("Why did Bullard dissent …", "Bullard's dissent" name James Bullard)."""
        words = set(re.findall(r"[A-Z][A-Za-z-]+", text))
        return [(m, x) for m in self.meetings if m.decision is not None and (lo is None or m.date >= lo)
                and (hi is None or m.date <= hi) for x in m.decision.dissents
                if x.name.split()[-1].removesuffix(".") in words]

    def administered(self, rate: str) -> list[tuple[Meeting, AdministeredRate]]:
        """Each meeting that states ``rate`` (a key of ADMINISTERED_RATES), with the value it set."""
        return [(m, a) for m in self.meetings for a in m.administered if a.rate == rate]

    def coverage(self) -> tuple[str, str] | None:
        """(first, last) meeting date, or None for an empty timeline."""
        return (self.meetings[0].date, self.meetings[-1].date) if self.meetings else None

    def counts(self) -> dict[str, int]:
        decisions = self.decisions()
        return {
            "meetings": len(self.meetings),
            "scheduled": sum(m.scheduled for m in self.meetings),
            "decisions": len(decisions),
            "raise": sum(m.decision.direction == "raise" for m in decisions),
            "cut": sum(m.decision.direction == "cut" for m in decisions),
            "hold": sum(m.decision.direction == "hold" for m in decisions),
            "dissents": sum(len(m.decision.dissents) for m in decisions),
            "balance_sheet_actions": sum(len(m.decision.balance_sheet) for m in decisions),
            "not_decisions": sum(not m.is_decision for m in self.meetings),
            **{f"administered.{rate}": len(self.administered(rate)) for rate in RATES},
        }

    def to_json(self) -> dict:
        return {"version": TIMELINE_VERSION, "counts": self.counts(), "meetings": [m.to_json() for m in self.meetings]}

    @classmethod
    def from_json(cls, obj: dict) -> "Timeline":
        return cls([Meeting.from_json(m) for m in obj["meetings"]])

"""One reading of a question, made once and handed to every skill: ``QuestionFrame``.

``frame_of(question)`` reads the question's date range (fedlab.retrieval.dates), what it is
about (fedlab.query.subjects, fedlab.query.speakers, fedlab.query.rate_path, the hold-run
detector of fedlab.retrieval.events) and the answer types it asks for (fedlab.query.answer_types). A skill
decides from the frame whether it applies; it reads the question's words itself only for what
is its own (a rate path's kind, a vote question's "who").
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from fedlab.query.answer_types import asked_types
from fedlab.query.rate_path import asks_rate_path
from fedlab.query.speakers import asks_committee_views
from fedlab.query.subjects import asks_about_balance_sheet, asks_about_votes
from fedlab.retrieval.dates import parse_date_hint
from fedlab.retrieval.events import asks_hold_run
from fedlab.retrieval.types import DateHint


@dataclass(frozen=True)
class QuestionFrame:
    question: str
    hint: DateHint | None  # the question's date range as parsed from its words (None: undated)

    @cached_property
    def votes(self) -> bool:
        """It asks how members voted (fedlab.query.subjects.asks_about_votes)."""
        return asks_about_votes(self.question)

    @cached_property
    def balance_sheet(self) -> bool:
        """It names the balance sheet or the asset purchases (fedlab.query.subjects)."""
        return asks_about_balance_sheet(self.question)

    @cached_property
    def committee_views(self) -> bool:
        """It asks what the Committee's participants thought (fedlab.query.speakers)."""
        return asks_committee_views(self.question)

    @cached_property
    def hold_run(self) -> bool:
        """It asks how long the target range was held (fedlab.retrieval.events.asks_hold_run)."""
        return asks_hold_run(self.question)

    @cached_property
    def rate_path(self) -> str | None:
        """How it asks about the target range over several meetings: "count", "path", "which",
        "yes_no", or None (fedlab.query.rate_path)."""
        return asks_rate_path(self.question, self.hint)

    @cached_property
    def answer_types(self) -> frozenset[str]:
        """The answer types it asks for (fedlab.query.answer_types: date, rate, amount, count, person)."""
        return frozenset(asked_types(self.question))


def frame_of(question: str) -> QuestionFrame:
    """The frame of ``question``, its dates parsed from its own words."""
    return QuestionFrame(question, parse_date_hint(question))

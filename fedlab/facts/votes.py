"""A meeting's vote as its statement records it: ``VoteRecord``.

Read from the text of the meeting's vote record (fedlab.facts.timeline.vote_record_span: the
"Voting for …" sentence through the "Voting against …" one and the rest of that paragraph):
who voted for the action, the "Voting against …" clause as written and how many members it
names, who was absent and not voting.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from fedlab.facts.timeline import AGAINST_RE, FOR_RE, WHO_RE, list_after, listed_voters, split_names

ABSENT_RE = re.compile(r"Absent and not voting (?:was|were)\s+")


@dataclass(frozen=True)
class VoteRecord:
    voters: list[str]  # voting for
    against: str  # the "Voting against …" clause after its opening ("" when unanimous)
    n_against: int
    absent: str  # who was absent and not voting, as written ("" when nobody)


def _listed(body: str, opening: re.Pattern) -> str | None:
    """The list ``opening`` introduces in ``body``, up to its full stop, or None."""
    found = list_after(opening, body)
    if found is None:
        return None
    m, stop = found
    return body[m.end():stop.start() if stop else len(body)].strip()


def read_vote(text: str) -> VoteRecord | None:
    """The vote ``text`` records; None when it lists no one voting for."""
    voters = _listed(text, FOR_RE)
    if voters is None:
        return None
    against = _listed(text, AGAINST_RE) or ""
    if against.lower() in ("none", ""):
        against, n_against = "", 0
    else:
        groups = [g.group("names") for g in WHO_RE.finditer(against)] or [against]  # "A, who …; and B and C, who …"
        n_against = sum(len(split_names(names)) for names in groups)
    return VoteRecord(listed_voters(voters), against, n_against, _listed(text, ABSENT_RE) or "")

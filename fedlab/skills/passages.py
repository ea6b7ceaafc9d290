"""How a skill reads the passages it is handed and cites them.

A passage is formatted by the agent (fedlab.agent.program.format_passage) as
"[Source N] title, YYYY-MM-DD[, section]" on its first line, then its text; a skill cites it
as "[Source N]". ``passage_head`` splits one; ``in_section`` tells the passages the agent
composed from the meeting timeline (a vote record, a balance-sheet action) by their section.
"""
from __future__ import annotations

import re

PASSAGE_HEAD = re.compile(r"^\[Source (\d+)\]([^\n]*)\n?")
HEAD_DATE = re.compile(r",\s*(\d{4}-\d{2}-\d{2})(?=\s*(?:,|$))")
HEAD_LINE = re.compile(r"^\[Source (\d+)\][^\n]*\n", re.S)  # a head with text after it (read_passage)


def passage_head(passage: str, i: int) -> tuple[int, str | None, str, str]:
    """(source number, meeting date, head text, body) of a formatted passage."""
    m = PASSAGE_HEAD.match(passage)
    if not m:
        return i + 1, None, "", passage
    d = HEAD_DATE.search(m.group(2))
    return int(m.group(1)), d.group(1) if d else None, m.group(2), passage[m.end():]


def in_section(passage: str, section: str) -> bool:
    """Whether a formatted passage's head names ``section`` last (the section an agent gives the
    passages it composes: a vote record, a balance-sheet action)."""
    return passage_head(passage, 0)[2].rstrip().endswith(f", {section}")


def cite_sources(sources: list[int]) -> str:
    unique = list(dict.fromkeys(sources))
    return "[" + ", ".join(f"Source {n}" for n in unique) + "]"


def head_of(passage: str) -> tuple[str | None, str | None]:
    """(meeting date (ISO), section) from a passage's head ("[Source N] title, YYYY-MM-DD[, section]");
    None for what the head does not name."""
    head = HEAD_LINE.match(passage)
    found = HEAD_DATE.search(head.group(0)) if head else None
    if found is None:
        return None, None
    rest = head.group(0)[found.end():].strip()
    return found.group(1), (rest[1:].strip() if rest.startswith(",") else None)


def read_passage(passage: str) -> tuple[int | None, str | None, str | None, str]:
    """(source n, meeting date, section, text) of a passage."""
    head = HEAD_LINE.match(passage)
    meeting, section = head_of(passage)
    return (int(head.group(1)) if head else None), meeting, section, passage[head.end():] if head else passage

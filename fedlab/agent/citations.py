"""Citation grounding: the only path from an answer's markers to the sources the user sees.

What the answer step may write (case-insensitive, ASCII digits only):
  ``[Source 3]``                  one source
  ``[Source 1, Source 3]``        a group: comma / semicolon / "and" / "&" between items
  ``[Sources 1, 3 and 4]``        "Source"/"Sources" may prefix the group once or every item
  ``[Source 2][Source 4]``        adjacent markers are separate markers
Anything else inside square brackets that looks like a citation — a bare ``[3]``, ``[Source x]``,
``[Source ٣]`` (non-ASCII digits), ``[Source 1-3]`` — is removed, never guessed at.

A number N names position N (1-based) of the context handed to the answer step; a number with
no position there (0, negative, too large) is dropped, and so is a position whose chunk is not
among the retrieved chunks. The surviving sources are numbered 1..m by first appearance and each
group is rewritten as adjacent ``[n]`` markers. Because removals can join text into a new
``[7]`` ("[[Source 99]7]"), the clean-up repeats until nothing citation-like is left, so every
``[n]`` in the final text was put there by this module and has a footer entry, and vice versa.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

ITEM = r"(?:sources?\s*)?[0-9]+"
SEP = r"\s*(?:,|;|&|\band\b)\s*"
VALID_GROUP = re.compile(rf"\[\s*sources?\s*[0-9]+(?:{SEP}{ITEM})*\s*\]", re.I)
NUMBER = re.compile(r"[0-9]+")
# Bracketed text that reads as a citation attempt: it mentions a source, or holds only
# digits (of any script), separators, signs and spaces. It never spans a kept marker.
CITATION_LIKE = re.compile("\\[[^\\[\\]\ue000\ue001]*\\bsource[^\\[\\]\ue000\ue001]*\\]"
                           r"|\[[\s\d,;&+\-–.]*\d[\s\d,;&+\-–.]*\]", re.I)
FINAL_MARKER = re.compile(r"\[([0-9]+)\]")
_OPEN, _CLOSE = "\ue000", "\ue001"  # private-use sentinels that mark kept markers while the rest is cleaned
_PLACEHOLDER = re.compile(f"{_OPEN}([0-9]+){_CLOSE}")


@dataclass(frozen=True)
class Grounded:
    text: str  # with [n] markers, n = 1..m
    cited: list[int] = field(default_factory=list)  # context positions (1-based) of [1], [2], ... in order
    dropped: int = 0  # citation markers removed (invalid, out of range, not retrieved)


def ground_citations(text: str, context_ids: list[str], retrieved_ids: set[str]) -> Grounded:
    """Validate and renumber the markers in ``text`` against the context it was written from.

    context_ids: the chunk id at each context position (position N = ``context_ids[N-1]``).
    retrieved_ids: every chunk the agent retrieved; a position outside it is never cited.
    """
    text = text.replace(_OPEN, "").replace(_CLOSE, "")
    order: dict[int, int] = {}  # context position -> final number
    dropped = 0

    def keep(position: int) -> bool:
        return 1 <= position <= len(context_ids) and context_ids[position - 1] in retrieved_ids

    def rewrite(match: re.Match) -> str:
        nonlocal dropped
        out = []
        for num in NUMBER.findall(match.group()):
            position = int(num) if len(num) <= 6 else 0
            if not keep(position):
                dropped += 1
                continue
            n = order.setdefault(position, len(order) + 1)
            marker = f"{_OPEN}{n}{_CLOSE}"
            if marker not in out:
                out.append(marker)
        return "".join(out)

    text = VALID_GROUP.sub(rewrite, text)
    while True:
        cleaned, removed = CITATION_LIKE.subn("", text)
        text = cleaned
        dropped += removed
        if not removed:
            break
    text = _PLACEHOLDER.sub(lambda m: f"[{m.group(1)}]", text)
    text = re.sub(r"[ \t]+([.,;:])", r"\1", re.sub(r"[ \t]{2,}", " ", text)).strip()
    cited = [pos for pos, _ in sorted(order.items(), key=lambda item: item[1])]
    return Grounded(text, cited, dropped)


def final_markers(text: str) -> list[int]:
    """The ``[n]`` numbers in a grounded answer, in order of appearance (repeats kept)."""
    return [int(n) for n in FINAL_MARKER.findall(text)]

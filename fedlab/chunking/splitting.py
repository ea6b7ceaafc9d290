"""Recursive, token-budgeted splitting of a span of text into character spans.

The document is tokenized once; every candidate span is then measured by counting the
document's tokens that lie inside it (two bisections), never by re-tokenizing.
"""
from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

PARAGRAPH_RE = re.compile(r"\n[ \t\r\f\v]*\n\s*")
LINE_RE = re.compile(r"\n\s*")
WORD_RE = re.compile(r"\S+")
# A sentence ends at . ! or ? (optionally closed by quotes/brackets) followed by whitespace
# and something that can open a sentence.
SENTENCE_END_RE = re.compile(r"[.!?][\"'”’)\]]*(\s+)(?=[\"“‘(\[A-Z0-9])")
# Periods that usually do not end a sentence: initials (J. Powell, U.S.) and common abbreviations.
NON_FINAL_RE = re.compile(r"(?:\b[A-Za-z]|\b(?:Mr|Mrs|Ms|Dr|Jr|Sr|St|No|Nos|vs|Inc|Co|Corp|Ltd|e\.g|i\.e|etc|approx|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec))\.$")


class TokenIndex:
    """Token spans of one document, for counting the tokens inside any character span."""

    def __init__(self, spans: list[tuple[int, int]]):
        self.starts = [s for s, _ in spans]
        self.ends = [e for _, e in spans]

    def count(self, start: int, end: int) -> int:
        """Tokens lying wholly inside [start, end)."""
        return max(0, bisect_right(self.ends, end) - bisect_left(self.starts, start))


def _split_by(pattern: re.Pattern, text: str, lo: int, hi: int) -> list[tuple[int, int]]:
    """Non-blank pieces of text[lo:hi] between matches of ``pattern``, trimmed of whitespace."""
    out = []
    pos = lo
    for m in pattern.finditer(text, lo, hi):
        out.append((pos, m.start()))
        pos = m.end()
    out.append((pos, hi))
    return [t for t in (_trim(text, a, b) for a, b in out) if t]


def _trim(text: str, a: int, b: int) -> tuple[int, int] | None:
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    return (a, b) if a < b else None


def _sentences(text: str, lo: int, hi: int) -> list[tuple[int, int]]:
    out = []
    pos = lo
    for m in SENTENCE_END_RE.finditer(text, lo, hi):
        if text[m.start()] == "." and NON_FINAL_RE.search(text, max(lo, m.start() - 8), m.start() + 1):
            continue
        out.append((pos, m.start(1)))
        pos = m.end(1)
    out.append((pos, hi))
    return [t for t in (_trim(text, a, b) for a, b in out) if t]


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Sentences of ``text`` as (start, end) spans; initials and abbreviations do not end one."""
    return _sentences(text, 0, len(text))


def _paragraphs(text, lo, hi):
    return _split_by(PARAGRAPH_RE, text, lo, hi)


def _lines(text, lo, hi):
    return _split_by(LINE_RE, text, lo, hi)


def _words(text, lo, hi):
    return [m.span() for m in WORD_RE.finditer(text, lo, hi)]


LEVELS = (_paragraphs, _lines, _sentences, _words)


def atoms(text: str, lo: int, hi: int, size: int, tokens: TokenIndex, level: int = 0) -> list[tuple[int, int]]:
    """Pieces of text[lo:hi] of at most ``size`` tokens, each cut at the coarsest boundary
    (paragraph → line → sentence → word) that gets it under budget. A single word longer
    than ``size`` tokens is kept whole."""
    out: list[tuple[int, int]] = []
    for a, b in LEVELS[level](text, lo, hi):
        if level == len(LEVELS) - 1 or tokens.count(a, b) <= size:
            out.append((a, b))
        else:
            out.extend(atoms(text, a, b, size, tokens, level + 1))
    return out


def split_span(
    text: str, lo: int, hi: int, size: int, overlap: int, tokens: TokenIndex, word_starts: list[int]
) -> list[tuple[int, int]]:
    """Spans covering text[lo:hi]: greedy runs of atoms up to ``size`` tokens; each span after
    the first starts up to ``overlap`` tokens back into the previous one, at a word start.

    ``word_starts`` is the sorted list of word start offsets of the whole document."""
    pieces = atoms(text, lo, hi, size, tokens)
    spans: list[tuple[int, int]] = []
    i, carry = 0, None
    while i < len(pieces):
        start = pieces[i][0] if carry is None else carry
        end = pieces[i][1]
        j = i + 1
        while j < len(pieces) and tokens.count(start, pieces[j][1]) <= size:
            end = pieces[j][1]
            j += 1
        spans.append((start, end))
        if j == len(pieces):
            break
        carry = _overlap_start(start, end, pieces[j][1], size, overlap, tokens, word_starts) if overlap else None
        i = j
    return spans


def _overlap_start(
    start: int, end: int, next_end: int, size: int, overlap: int, tokens: TokenIndex, word_starts: list[int]
) -> int | None:
    """The earliest word start w in (start, end) with at most ``overlap`` tokens in [w, end)
    and room for the next piece: at most ``size`` tokens in [w, next_end). None if none fits."""
    lo = bisect_right(word_starts, start)
    hi = bisect_left(word_starts, end)
    # Both counts only shrink as w moves right, so the first w that fits is found by bisection.
    while lo < hi:
        mid = (lo + hi) // 2
        w = word_starts[mid]
        if tokens.count(w, end) <= overlap and tokens.count(w, next_end) <= size:
            hi = mid
        else:
            lo = mid + 1
    if lo >= bisect_left(word_starts, end):
        return None
    w = word_starts[lo]
    return w if tokens.count(w, end) > 0 else None

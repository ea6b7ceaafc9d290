"""Find an evidence quote in a document: whitespace-normalised, case-insensitive.

A contract shared with the metric code: the span returned is in the ORIGINAL text, so
``doc_text[start:end]`` is the passage the quote stands for (its first and last
non-space characters), whatever the spacing or case differences.
"""
from __future__ import annotations

import functools


@functools.lru_cache(maxsize=512)  # a question set quotes the same few documents again and again
def _normalise(text: str) -> tuple[str, tuple[int, ...]]:
    """Lower-case ``text`` and collapse each run of whitespace to one space.

    Returns the normalised string and, for each of its characters, the offset in ``text``
    of the character it came from (a collapsed space maps to the run's first character).
    Leading and trailing whitespace is dropped.
    """
    out: list[str] = []
    origin: list[int] = []
    in_space = False
    for i, ch in enumerate(text):
        if ch.isspace():
            if not in_space and out:
                out.append(" ")
                origin.append(i)
            in_space = True
            continue
        in_space = False
        low = ch.lower()  # may be longer than one character (e.g. "İ")
        for c in low:
            out.append(c)
            origin.append(i)
    if out and out[-1] == " ":
        out.pop()
        origin.pop()
    return "".join(out), tuple(origin)


def normalise(text: str) -> str:
    """The normalised form used for matching (lower case, single spaces, stripped)."""
    return _normalise(text)[0]


def locate_quote(doc_text: str, quote: str) -> tuple[int, int] | None:
    """Span ``(start, end)`` of the first match of ``quote`` in ``doc_text``, or None.

    Matching ignores case and treats any run of whitespace (spaces, newlines, the
    paragraph break "\\n\\n", tabs) as one space; ``end`` is exclusive and both offsets
    index ``doc_text`` itself. An empty or all-whitespace quote is never found.
    """
    needle = normalise(quote)
    if not needle:
        return None
    hay, origin = _normalise(doc_text)
    pos = hay.find(needle)
    if pos < 0:
        return None
    last = pos + len(needle) - 1
    return origin[pos], origin[last] + 1


def count_matches(doc_text: str, quote: str) -> int:
    """How many (possibly overlapping) times the normalised quote occurs in the document."""
    needle = normalise(quote)
    if not needle:
        return 0
    hay = normalise(doc_text)
    n, pos = 0, hay.find(needle)
    while pos >= 0:
        n += 1
        pos = hay.find(needle, pos + 1)
    return n

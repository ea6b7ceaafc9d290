"""The abbreviations the corpus defines, read from its own text: "interest on excess reserves (IOER)".

A question may name a thing by its abbreviation where the passage that answers it spells it out
("What technical adjustment to IOER …" against "… to raise the interest rates on required and
excess reserve balances to 1.60 percent"), or the other way round. A language model knows both;
the extractive reader matches words, so it is given the corpus's own definitions.

The definitions are found by the Schwartz–Hearst rule (A. Schwartz and M. Hearst, "A simple
algorithm for identifying abbreviation definitions in biomedical text", PSB 2003): a short form in
parentheses after the words it abbreviates, each of its letters found, right to left, in those
words, its first letter opening a word. Written here rather than taken from the ``abbreviations``
package, which configures the root logger when imported. A short form defined several ways keeps
the definition the corpus uses most ("ON RRP" = "overnight reverse repurchase agreement", not the
once-used "overnight reverse repo").
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Iterable

from fedlab.corpus.document import Document

# "(IOER)", "(ON RRP)", "(C&I)", "(AFEs)": one or two words, two or more capitals, no digits
_SHORT_FORM = re.compile(r"\((?P<short>[A-Z][A-Za-z&-]{0,9}(?: [A-Z][A-Za-z&-]{1,9})?)\)")
_CLAUSE_END = re.compile(r"[.;:!?()\[\]]")  # the long form does not reach back past these


def long_form(short: str, before: str) -> str | None:
    """The words of ``before`` (the text up to the parenthesis) that ``short`` abbreviates, or None.

    The Schwartz–Hearst match: at most min(len(short) + 5, 2 * len(short)) words back; each
    letter or digit of ``short``, last to first, matched to a character of those words, right
    to left; the first one at the start of a word. Tried first with every capital of ``short``
    at the start of a word, so that "emerging market economies (EMEs)" is not read as
    "economies" alone; "overnight reverse repurchase agreement (ON RRP)" needs the looser match."""
    words = before.split()[-min(len(short) + 5, 2 * len(short)):]
    text = " ".join(words)
    for initials in (True, False):
        found = _matched(short, text, initials)
        if found and len(found) > len(short) and short.lower() not in found.lower().split():
            return found
    return None


def _matched(short: str, text: str, initials: bool) -> str | None:
    i, j = len(short) - 1, len(text) - 1
    while i >= 0:
        c = short[i]
        if not c.isalnum():
            i -= 1
            continue
        at_start = i == 0 or (initials and c.isupper())
        while j >= 0 and (text[j].lower() != c.lower() or (at_start and j > 0 and text[j - 1].isalnum())):
            j -= 1
        if j < 0:
            return None
        i, j = i - 1, j - 1
    return text[j + 1:].strip(" ,'\"")


def defined_terms(documents: Iterable[Document]) -> dict[str, str]:
    """Short form -> its most used long form (lower case) over ``documents``; a plural short form
    ("AFEs") is kept as written, beside its singular when the corpus defines that too."""
    counts: Counter[tuple[str, str]] = Counter()
    for doc in documents:
        for m in _SHORT_FORM.finditer(doc.text):
            short = m.group("short")
            if sum(ch.isupper() for ch in short) < 2:
                continue
            before = doc.text[max(0, m.start() - 300):m.start()]
            ends = list(_CLAUSE_END.finditer(before))
            found = long_form(short, before[ends[-1].end():] if ends else before)
            if found:
                counts[(short, found.lower())] += 1
    best: dict[str, str] = {}
    for (short, found), _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        best.setdefault(short, found)
    return dict(sorted(best.items()))

"""The sentences of one document that best match a question's terms, read whole.

A meeting's minutes hold about forty passages, and the one a question about that meeting needs
can rank below those the reader is given: chunk retrieval scores a passage by all its words,
the question asks about one sentence. Reading the document's few hundred sentences takes
milliseconds and ranks each by the question's terms it holds, as the extractive reader ranks
the sentences of its passages (``idf_overlap``).
"""
from __future__ import annotations

import math
import re
from typing import Callable, Collection

from fedlab.chunking.splitting import sentence_spans
from fedlab.index.tokens import Tokenizer

_TOKENS = Tokenizer()
_NUMBER = re.compile(r"^\d")
MIN_SENTENCE_CHARS = 20  # shorter: a heading or a fragment
MAX_SENTENCE_CHARS = 700  # longer: a roster or a table read as one sentence


def idf_overlap(among: list[Collection[str]], asked: set[str]) -> Callable[[Collection[str]], float]:
    """A sentence's score: the IDF (over the sentences' terms ``among``) of each term of ``asked``
    it holds, numbers counting double (a number asked for is the most specific term there is)."""
    df = {t: sum(t in terms for terms in among) for t in asked}
    idf = {t: math.log(1 + len(among) / df[t]) for t in asked if df[t]}
    # fsum: exactly rounded, so the score does not depend on the set's (hash-seeded) order
    return lambda terms: math.fsum(idf[t] * (2.0 if _NUMBER.match(t) else 1.0) for t in asked.intersection(terms) if t in idf)


def best_sentences(text: str, asked: set[str], n: int) -> list[tuple[int, int]]:
    """The (start, end) of the ``n`` sentences of ``text`` scoring highest by ``idf_overlap`` with
    the terms ``asked``, best first (the earlier of equals first); none scoring zero."""
    spans = [(a, b) for a, b in sentence_spans(text)
             if MIN_SENTENCE_CHARS <= b - a <= MAX_SENTENCE_CHARS and not text[a].islower()]
    terms = [frozenset(_TOKENS(text[a:b])) for a, b in spans]
    score = idf_overlap(terms, asked)
    scored = sorted(((score(t), i) for i, t in enumerate(terms)), key=lambda si: (-si[0], si[1]))
    return [spans[i] for s, i in scored[:n] if s > 0]

"""Whether one answer sentence restates another ("each fact said once").

The minutes' policy-action section repeats the statement, and a template sentence recurs from
meeting to meeting: an answer quoting both says one fact twice. Two sentences are near-duplicates
when difflib's ratio over their lower-cased words, each list sorted (a token-sort ratio, numbers
kept: "to 5 percent" is not "to 5-1/4 percent"), reaches a threshold (``lm.dedup_threshold``,
chosen on the dev sets) and they state the same figures. ``answer_sentences`` splits an answer as written (its [Source N]
markers and meeting labels aside); ``duplicate_rate`` is the share of an answer's sentence pairs
that are near-duplicates — the measure of fedlab.evaluation.answers.measures.
"""
from __future__ import annotations

import re
from difflib import SequenceMatcher
from functools import lru_cache

from fedlab.chunking.splitting import sentence_spans

DEFAULT_THRESHOLD = 0.9
CITE_MARKERS = re.compile(r"\s*\[(?:(?:Source\s+)?\d+(?:,\s*)?)+\]")  # "[Source 2]" (drafts), "[2, 5]" (the agent's answers)
_WORD = re.compile(r"[\w$%.'/-]+")
_NUMBERS = re.compile(r"\d+(?:[.,/-]\d+)*")


@lru_cache(maxsize=4096)
def _sorted_words(sentence: str) -> str:
    return " ".join(sorted(w.strip(".").lower() for w in _WORD.findall(sentence) if w.strip(".")))


def similarity(a: str, b: str) -> float:
    """Token-sort similarity of two sentences in [0, 1] (1: the same words)."""
    x, y = _sorted_words(a), _sorted_words(b)
    if not x or not y:
        return 0.0
    return SequenceMatcher(None, x, y, autojunk=False).ratio()


def restates(a: str, b: str, threshold: float = DEFAULT_THRESHOLD) -> bool:
    """``a`` says what ``b`` says: the same figures, and their similarity reaches ``threshold`` (a
    different figure is a different fact: "to 5 to 5-1/4 percent" is not "to 5-1/4 to 5-1/2 percent")."""
    return _NUMBERS.findall(a) == _NUMBERS.findall(b) and similarity(a, b) >= threshold


def answer_sentences(answer: str) -> list[str]:
    """The sentences of an answer, its citation markers removed."""
    text = CITE_MARKERS.sub("", answer)
    return [s for s in (text[a:b].strip() for a, b in sentence_spans(text)) if len(s.split()) >= 3]


def duplicate_pairs(answer: str, threshold: float = DEFAULT_THRESHOLD) -> tuple[int, int]:
    """(near-duplicate pairs, all pairs) of an answer's sentences."""
    sentences = answer_sentences(answer)
    pairs = [(a, b) for i, a in enumerate(sentences) for b in sentences[i + 1:]]
    return sum(restates(a, b, threshold) for a, b in pairs), len(pairs)


def duplicate_rate(answer: str, threshold: float = DEFAULT_THRESHOLD) -> float | None:
    """The share of the answer's sentence pairs that are near-duplicates; None with fewer than two sentences."""
    dup, total = duplicate_pairs(answer, threshold)
    return dup / total if total else None

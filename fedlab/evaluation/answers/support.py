"""``support``: an offline proxy for faithfulness (no NLI model or LLM judge is needed).

Contract and design notes: docs/metrics.md#design-notes-fedlabevaluationanswerssupportpy.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from fedlab.agent.types import AgentAnswer
from fedlab.evaluation.answers.normalize import normalize, strip_markers

MIN_COSINE = 0.5
MIN_OVERLAP = 0.6
_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'“(\[0-9$])")
_MARKER = re.compile(r"\[\s*(\d+(?:\s*[,;]\s*\d+)*)\s*\]")
_LEADING_MARKERS = re.compile(r"^((?:\[\s*\d+(?:\s*[,;]\s*\d+)*\s*\]\s*)+)")
_NUMBER = re.compile(r"(?<![\d.])\d+(?:\.\d+)?(?![\d])")
_NAME = re.compile(r"\b(?:[A-Z][a-z]+(?:[A-Z][a-z]+)*|[A-Z]{2,})\b")
STOPWORDS = frozenset(
    "the and for that with this from was were are has had have its their they them which who whom whose what "
    "when where while would could should will shall than then there these those been being into onto over "
    "under also not but all any some such only very more most less least other same each both about after "
    "before between during through against above below out off again further once here our your his her "
    "she him you per did does doing can may might must".split())


@dataclass(frozen=True)
class SentenceSupport:
    text: str
    cited: tuple[int, ...]
    supported: bool
    missing: tuple[str, ...] = ()  # numbers / names not found in the cited passages
    closeness: float = 0.0  # max cosine, or lexical overlap share


@dataclass
class AnswerSupport:
    score: float | None  # None: no sentence to score (abstention or empty answer)
    sentences: list[SentenceSupport] = field(default_factory=list)


def split_sentences(answer: str) -> list[tuple[str, tuple[int, ...]]]:
    """[(sentence, cited marker numbers)] with opening markers moved to the sentence before."""
    pieces: list[str] = []
    for frag in _SPLIT.split(answer.strip()):
        lead = _LEADING_MARKERS.match(frag)
        if lead and pieces:
            pieces[-1] += " " + lead.group(1).strip()
            frag = frag[lead.end():]
        if frag.strip():
            pieces.append(frag.strip())
    out = []
    for piece in pieces:
        if not re.search(r"[A-Za-z0-9]", strip_markers(piece)):
            continue
        nums = tuple(dict.fromkeys(int(n) for group in _MARKER.findall(piece) for n in re.split(r"[,;]", group)))
        out.append((piece, nums))
    return out


def _names(sentence: str) -> list[str]:
    """Capitalised words and acronyms, except the sentence's opening word."""
    text = strip_markers(sentence).strip()
    first = re.search(r"[A-Za-z]", text)
    found = [m.group(0) for m in _NAME.finditer(text) if not (first and m.start() == first.start())]
    return list(dict.fromkeys(found))


def _content_words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z][a-z]+|\d+(?:\.\d+)?", normalize(text)) if len(w) >= 3 and w not in STOPWORDS]


def missing_terms(sentence: str, passages: Sequence[str]) -> list[str]:
    """Numbers and names of ``sentence`` absent from ``passages`` (rule 3a)."""
    norm_passages = " " + " ".join(normalize(p) for p in passages) + " "
    missing = [n for n in dict.fromkeys(_NUMBER.findall(normalize(sentence)))
               if not re.search(rf"(?<![\d.]){re.escape(n)}(?!\d|\.\d)", norm_passages)]
    joined = " ".join(passages).lower()
    missing += [name for name in _names(sentence) if not re.search(rf"\b{re.escape(name.lower())}", joined)]
    return missing


def heading(title: str, meeting_date: str) -> str:
    """What a citation shows above its passage: the title and the meeting date in words."""
    from datetime import date

    try:
        day = date.fromisoformat(meeting_date)
    except ValueError:
        return title
    return f"{title} {day.strftime('%B')} {day.day}, {day.year}"


def lexical_overlap(sentence: str, passages: Sequence[str]) -> float:
    words = _content_words(strip_markers(sentence))
    if not words:
        return 1.0
    vocab = set(_content_words(" ".join(passages)))
    return sum(w in vocab for w in words) / len(words)


def score_answers(answers: Sequence[AgentAnswer], embedder=None, known: dict | None = None) -> list[AnswerSupport]:
    """Support of each answer (rule in the module docstring); one embedding batch for all.
    ``known``: texts whose vectors the embedder already gave (a cited chunk's vector in the
    index, ``Pipeline.passage_vectors``, and earlier answers' sentences), used instead of
    embedding them again; the texts embedded now are added to it."""
    known = {} if known is None else known
    plans = []
    texts: dict[str, int] = {}
    for ans in answers:
        sentences = [] if ans.abstained else split_sentences(ans.answer)
        by_n = {c.n: c.text for c in ans.citations}
        heads = {c.n: heading(c.title, c.meeting_date) for c in ans.citations}
        plan = []
        for text, nums in sentences:
            passages = [by_n[n] for n in nums if n in by_n]
            plan.append((text, nums, passages, [heads[n] for n in nums if n in heads]))
            if embedder is not None and passages:
                for t in (strip_markers(text), *passages):
                    if t not in known:
                        texts.setdefault(t, len(texts))
        plans.append(plan)
    vectors = None
    if embedder is not None:
        reused = [t for t in dict.fromkeys(t for plan in plans for text, _, passages, _ in plan if passages
                                             for t in (strip_markers(text), *passages)) if t in known]
        fresh = np.asarray(embedder.embed_documents(list(texts), progress=False), dtype=float) if texts else None
        if fresh is not None:
            known.update(zip(texts, fresh))
        for t in reused:
            texts[t] = len(texts)
        parts = [p for p in (fresh, np.asarray([known[t] for t in reused], dtype=float) if reused else None)
                 if p is not None]
        if parts:
            vectors = np.concatenate(parts).reshape(len(texts), -1)
            vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    out = []
    for ans, plan in zip(answers, plans):
        if not plan:
            out.append(AnswerSupport(None))
            continue
        scored = []
        for text, nums, passages, shown in plan:
            if not passages:
                scored.append(SentenceSupport(text, nums, False))
                continue
            missing = missing_terms(text, [*passages, *shown])
            if vectors is not None:
                s = vectors[texts[strip_markers(text)]]
                closeness = float(max(vectors[texts[p]] @ s for p in passages))
                close = closeness >= MIN_COSINE
            else:
                closeness = lexical_overlap(text, passages)
                close = closeness >= MIN_OVERLAP
            scored.append(SentenceSupport(text, nums, close and not missing, tuple(missing), round(closeness, 4)))
        out.append(AnswerSupport(sum(s.supported for s in scored) / len(scored), scored))
    return out

"""What the agent knows about a question and its retrieved evidence, as numbers for the
answerability model (fedlab.agent.answerability).

Contract and design notes: docs/answerability.md#design-notes-fedlabagentevidencepy.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from fedlab.index.tokens import Tokenizer
from fedlab.query.answer_types import asked_types, held_types
from fedlab.skills.wording import MEETING_LABELS
from fedlab.query.request import split_request
from fedlab.retrieval.dates import numeric_date_tokens, question_dates
from fedlab.retrieval.types import MULTI_MEETING_SCOPES, DateHint, Hit

TOKENS = Tokenizer()
TOPIC_FEATURES = ("vocab_share", "common_share", "unknown_share")  # what the question's words say it is about
QUESTION_FEATURES = (*TOPIC_FEATURES, "n_terms", "dated", "multi_meeting", "names_doc_type", "other_source",
                     "meeting_in_range")
EVIDENCE_FEATURES = ("top_dense", "top_score", "margin", "term_coverage", "agreement", "date_coverage",
                     "idf_coverage", "missing_idf", "salient_coverage", "doc_type_found")
ANSWER_FEATURES = ("asks_answer_type", "answer_type_found", "answer_idf_coverage", "answer_sentences",
                   "answer_sentence_idf", "answer_missing_idf")
SIMILARITY_FEATURE = "answer_similarity"  # from the embeddings (answer_similarity), not the text alone
COMPOSED_FEATURE = "answer_composed"  # from the reader, how it made the answer (below)
# a question asking when the statements said something, and they did: a run of statements holds what
# it asks about (fedlab.retrieval.mentions) — evidence that no search's passages show, since the run's
# sentences are read from every statement in range, not retrieved
RUN_FEATURE = "said_run"
COMMON_DF = 0.01  # a term in at least this share of passages is common in the corpus
# a term in at least this share of one document type's passages and in no passage of another marks
# that type: "participant" is in 39% of the minutes' passages and in none of the statements'; the
# next such term, in 18%, is a word the statements could use ("intermeeting")
MARKER_SHARE = 0.25
EVIDENCE_TOP_N = 3  # passages whose terms count as found
_OWN_WORDS = re.compile(r"\b(?:in|at|during|from)\s+(?:his|her|their)\b", re.I)
_ACCORDING = re.compile(r"\baccording to\s+([^,.?;]+)", re.I)
_CAPITALISED = re.compile(r"(?<![.?!]\s)(?<!^)\b[A-Z][A-Za-z]+")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'&.-]*[A-Za-z0-9]|[A-Za-z]")  # a word as written, numbers aside
_CITED_SENTENCE = re.compile(r"(?:\s*\[\d+\])+")  # the citation markers closing a sentence
MAX_ANSWER_SENTENCES = 8


ZIPF_FLOOR = 3.0  # wordfreq's small English list holds the words at least this frequent: rarer ones read as 0


@lru_cache(maxsize=65536)
def english_zipf(word: str) -> float:
    """The word's frequency in general English on the Zipf scale (wordfreq: log10 of uses per
    billion words; "the" 7.7, "hey" 5.1, "taper" 3.3), 0 below ZIPF_FLOOR or for a word it does
    not know. The small list loads in ~10 ms (the large one in ~200 ms, on every cold ask)."""
    from wordfreq import zipf_frequency

    return float(zipf_frequency(word, "en", wordlist="small"))


def counts_as_unknown(word: str, rare_zipf: float | None) -> bool:
    """Whether a word no passage uses may count as unknown: every such word when ``rare_zipf`` is
    None, else only one rarer in general English than ``rare_zipf`` (a name, a term of art), not
    the ordinary words a question is put in."""
    return rare_zipf is None or english_zipf(word) < rare_zipf


@dataclass
class Vocabulary:
    """Document frequencies of the corpus's BM25 tokens over its passages (chunks), and the terms
    that mark one document type (``markers``)."""

    n_passages: int
    df: dict[str, int]
    doc_types: dict[str, list[str]] = field(default_factory=dict)  # doc_type -> its tokens ("minutes" -> ["minut"])
    meetings: list[str] = field(default_factory=list)  # the meeting dates of the passages, sorted
    markers: dict[str, list[str]] = field(default_factory=dict)  # doc_type -> the terms that mark it (MARKER_SHARE)

    @classmethod
    def from_chunks(cls, chunks) -> Vocabulary:
        by_type: dict[str, Counter] = {}  # doc_type -> the passages of that type holding each term
        for chunk in chunks:
            by_type.setdefault(chunk.doc_type, Counter()).update(set(TOKENS(chunk.text)))
        df = dict(sum(by_type.values(), Counter()))
        passages = Counter(c.doc_type for c in chunks)
        markers = {kind: sorted(t for t, n in counts.items() if n >= MARKER_SHARE * passages[kind] and n == df[t])
                   for kind, counts in by_type.items()} if len(by_type) > 1 else {}
        return cls(len(chunks), df, {t: TOKENS(t.replace("_", " ")) for t in sorted(by_type)},
                   sorted({c.meeting_date for c in chunks}), {k: v for k, v in sorted(markers.items()) if v})

    def idf(self, term: str) -> float:
        """Normalised IDF in [0, 1]: 1 for a term in no passage, 0 for one in every passage."""
        df = self.df.get(term, 0)
        return math.log((self.n_passages + 1) / (df + 1)) / math.log(self.n_passages + 1)

    def common(self, term: str) -> bool:
        """Whether at least COMMON_DF of the passages hold ``term``."""
        return self.df.get(term, 0) >= COMMON_DF * self.n_passages

    def to_json(self) -> dict:
        return {"n_passages": self.n_passages, "df": dict(sorted(self.df.items())), "doc_types": self.doc_types,
                "meetings": self.meetings, "markers": self.markers}

    @classmethod
    def from_json(cls, data: dict) -> Vocabulary:
        return cls(int(data["n_passages"]), {str(k): int(v) for k, v in data["df"].items()},
                   {str(k): list(v) for k, v in (data.get("doc_types") or {}).items()},
                   [str(d) for d in data.get("meetings") or []],
                   {str(k): [str(t) for t in v] for k, v in (data.get("markers") or {}).items()})

    def absent(self, word: str) -> bool:
        """Whether no passage uses any token of ``word`` (False for a word with no tokens)."""
        return bool(toks := TOKENS(word)) and all(self.df.get(t, 0) == 0 for t in toks)

    def unknown_words(self, question: str, rare_zipf: float | None = None) -> list[str]:
        """The question's words, as written, that no passage uses ("QT" when the documents say "balance
        sheet runoff") and that count as unknown (``counts_as_unknown``): with an abstention, what to
        put in other words. Numbers aside: a date outside the coverage is the coverage check's."""
        words = dict.fromkeys(_WORD.findall(split_request(question)[1]))
        return [w for w in words if self.absent(w) and counts_as_unknown(w, rare_zipf)]

    def filler_tokens(self, text: str, rare_zipf: float | None) -> set[str]:
        """The tokens of ``text`` that only words no passage uses and general English uses often
        (at least ``rare_zipf``) give: none when ``rare_zipf`` is None."""
        if rare_zipf is None:
            return set()
        kept, common = set(), set()
        for word in _WORD.findall(text):
            (common if self.absent(word) and not counts_as_unknown(word, rare_zipf) else kept).update(TOKENS(word))
        return common - kept

    def meeting_between(self, lo: str | None, hi: str | None) -> bool:
        return any((lo is None or d >= lo) and (hi is None or d <= hi) for d in self.meetings)


@dataclass(frozen=True)
class QuestionTerms:
    content: list[str]  # stemmed content terms, date words (and an opening request's words) aside
    salient: set[str]  # stemmed numbers and capitalised words
    doc_types: set[str]  # document types the question names
    other_source: bool  # attributed to a person's own words or to a source the corpus does not hold
    marked: set[str] = field(default_factory=set)  # document types a term of the question marks (Vocabulary.markers)


def question_terms(question: str, hint: DateHint | None, vocab: Vocabulary,
                   rare_zipf: float | None = None) -> QuestionTerms:
    """The question's terms; ``rare_zipf``: a word no passage uses is a content term only when rarer
    than this in general English (``counts_as_unknown``; None: every word)."""
    dated = set(TOKENS(hint.text)) if hint is not None and hint.text else set()
    dated |= numeric_date_tokens(question, TOKENS)  # a date in numbers is no term
    request, asked = split_request(question)  # "walk me through …": its words say how to answer, not what about
    dated |= vocab.filler_tokens(asked, rare_zipf)  # "hey", "dumb": how it is put, not what about
    content = [t for t in dict.fromkeys(TOKENS(asked)) if t not in dated]
    words = set(TOKENS(" ".join(_CAPITALISED.findall(question)))) - (set(TOKENS(request)) - set(content))
    numbers = {t for t in TOKENS(asked) if t[:1].isdigit()}
    salient = (words | numbers) - dated
    named = {name for name, toks in vocab.doc_types.items() if toks and set(toks) <= set(content)}
    according = _ACCORDING.search(question)
    held = {t for toks in vocab.doc_types.values() for t in toks}
    unknown_source = according and any(vocab.df.get(t, 0) == 0 and t not in held for t in TOKENS(according.group(1)))
    other = bool(_OWN_WORDS.search(question)) or bool(unknown_source)
    marked = {kind for kind, toks in vocab.markers.items() if set(toks) & set(content)}
    return QuestionTerms(content, salient, named, other, marked)


def question_features(terms: QuestionTerms, hint: DateHint | None, vocab: Vocabulary) -> dict[str, float]:
    n = len(terms.content)
    known = [t for t in terms.content if vocab.df.get(t, 0) > 0]
    common = [t for t in terms.content if vocab.common(t)]
    return {
        "vocab_share": len(known) / n if n else 0.0,
        "common_share": len(common) / n if n else 0.0,
        "unknown_share": (n - len(known)) / n if n else 0.0,
        "n_terms": min(n, 10) / 10,
        "dated": float(hint is not None),
        "multi_meeting": float(hint is not None and hint.scope in MULTI_MEETING_SCOPES),
        "names_doc_type": float(bool(terms.doc_types)),
        "other_source": float(terms.other_source),
        "meeting_in_range": float(hint is None or vocab.meeting_between(hint.date_from, hint.widened_end(1))),
    }


def evidence_features(terms: QuestionTerms, hits: list[Hit], signals: dict[str, float],
                      vocab: Vocabulary) -> dict[str, float]:
    """``signals``: the retrieval signals of fedlab.agent.confidence for the same search."""
    top = hits[:EVIDENCE_TOP_N]
    found = set().union(*(set(TOKENS(h.chunk.text)) for h in top)) if top else set()
    missing = [vocab.idf(t) for t in terms.content if t not in found]
    return {
        "top_dense": max((h.sources.get("dense", 0.0) for h in hits), default=0.0),
        "top_score": signals.get("top_score", 0.0),
        "margin": signals.get("margin", 0.0),
        "term_coverage": signals.get("term_coverage", 0.0),
        "agreement": signals.get("agreement", 0.0),
        "date_coverage": signals.get("date_coverage", 1.0),
        "idf_coverage": _idf_share(terms.content, found, vocab),
        "missing_idf": max(missing, default=0.0),
        "salient_coverage": len(terms.salient & found) / len(terms.salient) if terms.salient else 1.0,
        "doc_type_found": float(any(h.chunk.doc_type in terms.doc_types for h in top)) if terms.doc_types else 1.0,
    }


def _idf_share(terms: list[str], found: set[str], vocab: Vocabulary) -> float:
    """Share of ``terms`` in ``found``, each weighed by its corpus IDF."""
    weights = {t: vocab.idf(t) for t in terms}
    total = math.fsum(weights.values())  # fsum: independent of the (hash-seeded) set order
    return math.fsum(w for t, w in weights.items() if t in found) / total if total else 0.0


def said_text(answer: str) -> str:
    """What an answer says: its sentences without the meeting labels the reader puts before them
    ("July 2023: ") or the citation markers."""
    return " ".join(s.strip() for s in _CITED_SENTENCE.split(MEETING_LABELS.sub(r"\1", answer)) if s.strip())


def answer_similarity(question_vector, answer_vector) -> float:
    """The cosine similarity of two embeddings, clipped to [0, 1] (SIMILARITY_FEATURE)."""
    q, a = np.asarray(question_vector, dtype=float), np.asarray(answer_vector, dtype=float)
    norm = float(np.linalg.norm(q) * np.linalg.norm(a))
    return min(max(float(q @ a) / norm, 0.0), 1.0) if norm else 0.0


def answer_features(question: str, terms: QuestionTerms, answer: str, vocab: Vocabulary) -> dict[str, float]:
    """``answer``: the grounded answer with its citation markers; "" for an abstention."""
    kinds = asked_types(question)
    # what the answer quotes, not the meeting labels the reader puts before it ("July 2023: "):
    # every passage has a meeting, so a label says nothing about whether the sentence answers
    answer = MEETING_LABELS.sub(r"\1", answer)
    said = set(TOKENS(answer))
    dated = set(TOKENS(question_dates(question)))
    return {
        "asks_answer_type": float(bool(kinds)),
        "answer_type_found": len(held_types(answer, kinds)) / len(kinds) if kinds else 1.0,
        "answer_idf_coverage": _idf_share(terms.content, said, vocab),
        "answer_sentences": min(len(_CITED_SENTENCE.findall(answer)), MAX_ANSWER_SENTENCES) / MAX_ANSWER_SENTENCES,
        "answer_sentence_idf": max((_idf_share(terms.content, set(TOKENS(s)), vocab)
                                     for s in _CITED_SENTENCE.split(answer) if s.strip()), default=0.0),
        "answer_missing_idf": max((vocab.idf(t) for t in terms.content if t not in said and t not in dated),
                                  default=0.0),
    }

"""Multi-query fusion: search the question in several forms and fuse the rankings (RRF).

Forms (``retriever.multi_query.variants``):
  question    - the question as asked
  normalised  - the question without conversational filler. A word is filler when it is very
                frequent in general English (``wordfreq.zipf_frequency >= filler_zipf``) AND rare
                or absent in the corpus (held by at most ``filler_max_share`` of the passages):
                "hey", "guys", "wondering" go, "rate" and "policy" stay. No word list: the two
                frequencies decide.
  key_phrases - the question's ``key_terms`` most informative words, in question order: rarity in
                the corpus (log10 N/df over the passages) plus rarity in general English
                (``ENGLISH_TOP - zipf``, floored at 0), so a domain word ("dissent", "turmoil")
                outranks an everyday word the formal corpus happens to use seldom ("apart",
                "instead"); words the corpus lacks (typos, outside names) are left out.
A form identical to one already searched, or empty, is skipped. The base retriever's own filter
applies to every form, so the date-aware pass composes with it (its hint comes from the question).
"""
from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fedlab.chunking.chunk import Chunk
from fedlab.errors import FedlabError
from fedlab.index.filter import MetadataFilter
from fedlab.index.tokens import STOPWORDS, Tokenizer, stem
from fedlab.retrieval.fusion import rrf
from fedlab.retrieval.types import Hit

VARIANTS = ("question", "normalised", "key_phrases")
ENGLISH_TOP = 7.0  # about the zipf frequency of the commonest English words ("the" is 7.7)
_WORD = re.compile(r"\d+(?:[.,/-]\d+)*%?|[A-Za-z]+(?:['\u2019][A-Za-z]+)*")


class Vocabulary:
    """Passage frequency of every (lower-cased, stemmed, stop words kept) term of the chunks."""

    def __init__(self, texts: Sequence[str]):
        tok = Tokenizer(lowercase=True, stopwords=False, stemming=True)
        self.df: Counter[str] = Counter()
        for text in texts:
            self.df.update(set(tok(text)))
        self.n = max(1, len(texts))

    def share(self, word: str) -> float:
        """The fraction of passages holding ``word`` (after the same lower-casing and stemming)."""
        return self.df.get(stem(word.lower().replace("\u2019", "'")), 0) / self.n

    def idf(self, word: str) -> float | None:
        """log10(N / df) of ``word``; None when no passage holds it."""
        df = self.df.get(stem(word.lower().replace("\u2019", "'")), 0)
        return math.log10(self.n / df) if df else None


@dataclass(frozen=True)
class MultiQueryOptions:
    variants: tuple[str, ...] = VARIANTS
    filler_zipf: float = 5.0
    filler_max_share: float = 0.002
    key_terms: int = 4
    rrf_k: int = 60

    @classmethod
    def parse(cls, multi_query: Mapping | None) -> "MultiQueryOptions | None":
        """``retriever.multi_query`` ({enabled, variants, filler_zipf, filler_max_share, key_terms,
        rrf_k}) -> options, or None (off)."""
        mq = dict(multi_query or {})
        if not mq.pop("enabled", False):
            return None
        unknown = set(mq) - {"variants", "filler_zipf", "filler_max_share", "key_terms", "rrf_k"}
        if unknown:
            raise FedlabError(f"retriever.multi_query has unknown keys {sorted(unknown)}: "
                              "use enabled, variants, filler_zipf, filler_max_share, key_terms, rrf_k")
        variants = tuple(mq.get("variants") or VARIANTS)
        bad = [v for v in variants if v not in VARIANTS]
        if bad:
            raise FedlabError(f"retriever.multi_query.variants has unknown forms {bad}: use {', '.join(VARIANTS)}")
        try:
            return cls(variants=variants, filler_zipf=float(mq.get("filler_zipf", 5.0)),
                       filler_max_share=float(mq.get("filler_max_share", 0.002)),
                       key_terms=max(1, int(mq.get("key_terms", 4))), rrf_k=max(1, int(mq.get("rrf_k", 60))))
        except (TypeError, ValueError):
            raise FedlabError("retriever.multi_query: filler_zipf, filler_max_share, key_terms and rrf_k must be "
                              "numbers (e.g. filler_zipf=5.0 filler_max_share=0.002 key_terms=4 rrf_k=60)") from None


def _zipf(word: str) -> float:
    from wordfreq import zipf_frequency  # loads its frequency tables on first use

    return zipf_frequency(word, "en")


def normalised(question: str, vocab: Vocabulary, options: MultiQueryOptions) -> str:
    """The question with its filler words dropped (see the module docstring); other characters
    between kept words collapse to single spaces."""
    kept = [w for w in _WORD.findall(question)
            if not (w[0].isalpha() and _zipf(w.lower()) >= options.filler_zipf
                    and vocab.share(w) <= options.filler_max_share)]
    return " ".join(kept)


def key_phrases(question: str, vocab: Vocabulary, options: MultiQueryOptions) -> str:
    """The question's ``key_terms`` most informative corpus words (corpus IDF + English rarity;
    stop words and words no passage holds left out), in question order, each once."""
    seen: dict[str, tuple[float, int, str]] = {}
    for pos, w in enumerate(_WORD.findall(question)):
        key = stem(w.lower())
        if w.lower() in STOPWORDS or key in seen:
            continue
        idf = vocab.idf(w)
        if idf is not None:
            seen[key] = (idf + max(0.0, ENGLISH_TOP - _zipf(w.lower())), pos, w)
    best = sorted(seen.values(), key=lambda item: (-item[0], item[1]))[:options.key_terms]
    return " ".join(w for _, _, w in sorted(best, key=lambda item: item[1]))


class MultiQueryRetriever:
    """The base retriever run on each form of the question (same k and filter), the rankings
    fused by reciprocal rank over passages. A hit's score is its fused score; ``sources`` keeps
    the base hit's own and adds ``multi_query``. ``last_forms`` holds the forms last searched."""

    def __init__(self, base, chunks: Sequence[Chunk], options: MultiQueryOptions, vocab: Vocabulary | None = None):
        self.base = base
        self.options = options
        self.vocab = vocab or Vocabulary([c.text for c in chunks])
        self.name = getattr(base, "name", "base")
        self.last_forms: dict[str, str] = {}

    def forms(self, question: str) -> dict[str, str]:
        """{variant: text} of the distinct, non-empty forms of ``question``, in variant order."""
        make = {"question": lambda q: q, "normalised": lambda q: normalised(q, self.vocab, self.options),
                "key_phrases": lambda q: key_phrases(q, self.vocab, self.options)}
        out: dict[str, str] = {}
        for v in self.options.variants:
            text = make[v](question).strip()
            if text and text.lower() not in {t.lower() for t in out.values()}:
                out[v] = text
        return out

    def search(self, query: str, k: int, flt: MetadataFilter | None = None,
               timings: dict[str, float] | None = None) -> list[Hit]:
        forms = self.forms(query) or {"question": query}
        self.last_forms = forms
        lists = {v: self.base.search(text, k, flt, timings) for v, text in forms.items()}
        if len(lists) == 1:
            return next(iter(lists.values()))
        by_key: dict[str, Hit] = {}
        for hits in lists.values():
            for h in hits:
                by_key.setdefault(h.chunk.passage_key, h)
        fused = rrf({v: [h.chunk.passage_key for h in hits] for v, hits in lists.items()}, k=self.options.rrf_k)
        return [Hit(by_key[key].chunk, score, rank, {**by_key[key].sources, "multi_query": score})
                for rank, (key, score) in enumerate(fused[:k], start=1)]

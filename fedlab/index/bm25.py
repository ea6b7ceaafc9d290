"""BM25 (rank-bm25) over chunk texts, with the same filtered search signature as the vector indexes.

Queries are strings. Each query is scored once over all documents (``get_scores``, numpy); the
filter is a row mask over those scores. Only documents sharing at least one query term are
returned: BM25Plus/BM25L give every document a positive score, which would otherwise pad the
results with non-matches.
"""
from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Mapping, Sequence

import numpy as np
from rank_bm25 import BM25L, BM25Okapi, BM25Plus

from fedlab.errors import FedlabError
from fedlab.index.base import (
    META_FILE, MANIFEST, FORMAT_VERSION, FilterableRows, Pairs, atomic_dir, dir_size, read_manifest, top_k,
)
from fedlab.index.tokens import Tokenizer
from fedlab.io import write_json
from fedlab.index.filter import MetadataFilter

TOKENS_FILE = "tokens.json"
VARIANTS = {"okapi": BM25Okapi, "plus": BM25Plus, "l": BM25L}


def counted_bm25(cls, tokens: list[list[str]], **kwargs):
    """``cls(tokens, **kwargs)`` (a rank-bm25 class), with its term counting done by
    ``collections.Counter`` (C) instead of rank-bm25's Python loop: the same per-document counts,
    document frequencies and word order, so the IDF (rank-bm25's own ``_calc_idf``) and every
    score are identical; loading the index for one question is what it speeds up."""
    bm25 = cls.__new__(cls)
    for name, value in kwargs.items():
        setattr(bm25, name, value)
    for name, param in inspect.signature(cls.__init__).parameters.items():  # defaults not passed
        if name not in ("self", "corpus", "tokenizer") and name not in kwargs:
            setattr(bm25, name, param.default)
    bm25.tokenizer = None
    bm25.doc_freqs = [Counter(doc) for doc in tokens]
    bm25.doc_len = [len(doc) for doc in tokens]
    bm25.corpus_size = len(tokens)
    bm25.avgdl = sum(bm25.doc_len) / bm25.corpus_size
    bm25.idf = {}
    nd: Counter[str] = Counter()
    for counts in bm25.doc_freqs:
        nd.update(counts.keys())
    bm25._calc_idf(nd)
    return bm25


@dataclass(kw_only=True)
class BM25Index(FilterableRows):
    variant: str = "okapi"  # okapi | plus | l
    k1: float = 1.5
    b: float = 0.75
    epsilon: float = 0.25  # okapi: floor for negative IDF, as a fraction of the mean IDF
    delta: float | None = None  # plus / l: rank-bm25's default (1.0 / 0.5) when None
    lowercase: bool = True
    stopwords: bool = True
    stemming: bool = True

    kind: ClassVar[str] = "bm25"
    SEARCH_PARAMS: ClassVar[frozenset[str]] = frozenset()

    n: int = field(default=0, init=False, repr=False)
    _tokens: list[list[str]] = field(default_factory=list, init=False, repr=False)
    _bm25: Any = field(default=None, init=False, repr=False)
    _postings: dict[str, np.ndarray] = field(default_factory=dict, init=False, repr=False)
    _freqs: dict[str, np.ndarray] = field(default_factory=dict, init=False, repr=False)
    _doc_len: Any = field(default=None, init=False, repr=False)
    _saved_dir: Path | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise FedlabError(f"bm25 variant={self.variant!r}: use one of {', '.join(VARIANTS)}")

    @property
    def tokenizer(self) -> Tokenizer:
        return Tokenizer(lowercase=self.lowercase, stopwords=self.stopwords, stemming=self.stemming)

    def build(self, texts: Sequence[str], meta: Sequence[dict]) -> None:
        if len(texts) == 0:
            raise FedlabError("cannot build BM25 over zero texts: chunk the corpus first")
        self._set_meta(meta, len(texts))
        tok = self.tokenizer
        self._index_tokens([tok(t) for t in texts])
        self._saved_dir = None

    def _index_tokens(self, tokens: list[list[str]]) -> None:
        self._tokens = tokens
        self.n = len(tokens)
        kwargs: dict[str, Any] = {"k1": self.k1, "b": self.b}
        if self.variant == "okapi":
            kwargs["epsilon"] = self.epsilon
        elif self.delta is not None:
            kwargs["delta"] = self.delta
        self._bm25 = counted_bm25(VARIANTS[self.variant], tokens, **kwargs)
        postings: dict[str, list[int]] = {}
        freqs: dict[str, list[int]] = {}
        for row, counts in enumerate(self._bm25.doc_freqs):
            for t, c in counts.items():
                postings.setdefault(t, []).append(row)
                freqs.setdefault(t, []).append(c)
        self._postings = {t: np.asarray(rows, dtype=np.int64) for t, rows in postings.items()}
        self._freqs = {t: np.asarray(c, dtype=np.int64) for t, c in freqs.items()}
        self._doc_len = np.array(self._bm25.doc_len)

    def _term_freqs(self, term: str) -> np.ndarray:
        """The term's count in every document (rank-bm25 builds this array with a Python loop
        over all documents, once per query term)."""
        q_freq = np.zeros(self.n, dtype=np.int64)
        if term in self._postings:
            q_freq[self._postings[term]] = self._freqs[term]
        return q_freq

    def scores(self, terms: list[str]) -> np.ndarray:
        """rank-bm25's ``get_scores(terms)``: its formula for this variant, term by term in the
        same order on the same arrays, so the same floats (tests/test_bm25.py checks equality);
        only each term's frequency array comes from the postings."""
        bm = self._bm25
        norm = 1 - bm.b + bm.b * self._doc_len / bm.avgdl
        score = np.zeros(bm.corpus_size)
        for q in terms:
            score += self._term_score(q, norm)
        return score

    def _term_score(self, q: str, norm: np.ndarray) -> np.ndarray:
        """One query term's BM25 contribution to every document (``norm``: the length normaliser)."""
        bm = self._bm25
        q_freq, idf = self._term_freqs(q), (bm.idf.get(q) or 0)
        if self.variant == "okapi":
            return idf * (q_freq * (bm.k1 + 1) / (q_freq + bm.k1 * norm))
        if self.variant == "plus":
            return idf * (bm.delta + (q_freq * (bm.k1 + 1)) / (bm.k1 * norm + q_freq))
        ctd = q_freq / norm  # l
        return idf * q_freq * (bm.k1 + 1) * (ctd + bm.delta) / (bm.k1 + ctd + bm.delta)

    def weighted_scores(self, weights: Mapping[str, float]) -> np.ndarray:
        """sum over terms t of weights[t] * BM25(t, d): a query whose terms carry weights (a
        Lucene query of boosted term clauses, as Anserini's RM3 issues). Terms are index tokens."""
        bm = self._bm25
        norm = 1 - bm.b + bm.b * self._doc_len / bm.avgdl
        score = np.zeros(bm.corpus_size)
        for q, w in weights.items():
            if q in self._postings:
                score += float(w) * self._term_score(q, norm)
        return score

    def search_weighted(self, weights: Mapping[str, float], k: int, flt: MetadataFilter | None = None) -> Pairs:
        """``search`` for a weighted query of index tokens: only documents holding a term."""
        if self._bm25 is None:
            raise FedlabError("bm25 index is empty: build() or load() it before searching")
        lists = [self._postings[t] for t, w in weights.items() if w > 0 and t in self._postings]
        if k <= 0 or not lists:
            return []
        candidates = np.unique(np.concatenate(lists))
        keep = self.mask(flt)
        if keep is not None:
            candidates = candidates[keep[candidates]]
        if candidates.size == 0:
            return []
        return top_k(self.weighted_scores(weights)[candidates], k, candidates)

    def doc_terms(self, row: int) -> Mapping[str, int]:
        """The index tokens of document ``row`` with their counts."""
        return self._bm25.doc_freqs[row]

    def doc_freq(self, term: str) -> int:
        """How many documents hold the index token ``term``."""
        postings = self._postings.get(term)
        return 0 if postings is None else int(postings.size)

    def search(self, query: str, k: int, flt: MetadataFilter | None = None) -> Pairs:
        if self._bm25 is None:
            raise FedlabError("bm25 index is empty: build() or load() it before searching")
        terms = self.tokenizer(query)
        lists = [self._postings[t] for t in set(terms) if t in self._postings]
        if k <= 0 or not lists:
            return []
        hit = np.zeros(self._bm25.corpus_size, dtype=bool)  # the chunks holding a term, in index order
        for postings in lists:
            hit[postings] = True
        candidates = np.flatnonzero(hit)
        keep = self.mask(flt)
        if keep is not None:
            candidates = candidates[keep[candidates]]
        if candidates.size == 0:
            return []
        scores = self.scores(terms)
        return top_k(scores[candidates], k, candidates)

    def search_many(self, queries: Sequence[str], k: int, flt: MetadataFilter | None = None) -> list[Pairs]:
        return [self.search(q, k, flt) for q in queries]

    def save(self, directory: str | os.PathLike) -> None:
        if self._bm25 is None:
            raise FedlabError("bm25 index is empty: build() it before saving")
        with atomic_dir(directory) as tmp:
            write_json(tmp / TOKENS_FILE, self._tokens)
            write_json(tmp / META_FILE, self.meta)
            write_json(tmp / MANIFEST, {"format": FORMAT_VERSION, "kind": self.kind, "params": self.params(),
                                        "n": self.n, "fingerprint": self.fingerprint()})
        self._saved_dir = Path(directory)

    @classmethod
    def load(cls, directory: str | os.PathLike, **search_params: Any) -> "BM25Index":
        """Reload: the token lists are stored, the BM25 statistics are recomputed (fast)."""
        manifest = read_manifest(directory)
        if manifest["kind"] != cls.kind:
            raise FedlabError(f"{directory} holds a {manifest['kind']} index, not bm25: use load_index")
        if search_params:
            raise FedlabError(f"bm25 has no search-time parameters to override ({sorted(search_params)})")
        directory = Path(directory)
        index = cls(**manifest["params"])
        index._set_meta(json.loads((directory / META_FILE).read_text(encoding="utf-8")), manifest["n"])
        index._index_tokens(json.loads((directory / TOKENS_FILE).read_text(encoding="utf-8")))
        index._saved_dir = directory
        return index

    def params(self) -> dict:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.init}

    def fingerprint(self, include_search: bool = True) -> str:
        blob = json.dumps({"kind": self.kind, "params": self.params()}, sort_keys=True)
        return hashlib.sha1(blob.encode()).hexdigest()[:12]

    def size_bytes(self) -> int:
        if self._saved_dir is not None:
            return dir_size(self._saved_dir / TOKENS_FILE)
        return len(json.dumps(self._tokens).encode())

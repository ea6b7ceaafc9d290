"""The one vector-index interface, plus the helpers every index shares.

Every index answers ``search(query, k, flt) -> [(row, similarity), ...]``: rows are positions in
the build order, similarity is higher-is-better and the list is sorted best first. Metadata
filters are applied natively where the library can (``filter_mode="native"``) or by post-filtering
an unfiltered search with geometric over-fetch (``filter_mode="post"``); both go through
:func:`widen`.
"""
from __future__ import annotations

import dataclasses
import hashlib
import importlib
import json
import math
import os
import re
import shutil
import tempfile
from abc import ABC, abstractmethod
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterator, Sequence

import numpy as np

from fedlab.errors import FedlabError
from fedlab.io import write_json
from fedlab.index.filter import MetadataFilter

Pairs = list[tuple[int, float]]
MANIFEST = "index.json"
META_FILE = "meta.json"
FORMAT_VERSION = 1

# kind -> "module:Class"; imported lazily so choosing one index never imports the others' libraries.
KINDS = {
    "exact": "fedlab.index.exact:ExactIndex",
    "faiss_hnsw": "fedlab.index.faiss_hnsw:FaissHNSWIndex",
    "faiss_ivf": "fedlab.index.faiss_ivf:FaissIVFIndex",
    "hnswlib": "fedlab.index.hnswlib_index:HnswlibIndex",
    "chroma": "fedlab.index.chroma:ChromaIndex",
    "bm25": "fedlab.index.bm25:BM25Index",
}

_ISO = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")


def date_key(iso: str) -> int:
    """ISO date -> yyyymmdd int: orders like the ISO string, and is what Chroma's $gte/$lte need."""
    m = _ISO.match(str(iso))
    if not m:
        raise FedlabError(f"bad date {iso!r}: meeting dates and filter bounds must be ISO YYYY-MM-DD")
    return int(m[1]) * 10000 + int(m[2]) * 100 + int(m[3])


def index_class(kind: str) -> type:
    if kind not in KINDS:
        raise FedlabError(f"unknown index kind {kind!r}: choose one of {', '.join(sorted(KINDS))}")
    module, name = KINDS[kind].split(":")
    return getattr(importlib.import_module(module), name)


def load_index(directory: str | os.PathLike, **search_params: Any):
    """Load any saved index (vector or BM25); the kind is read from its manifest."""
    return index_class(read_manifest(directory)["kind"]).load(directory, **search_params)


def read_manifest(directory: str | os.PathLike) -> dict:
    path = Path(directory) / MANIFEST
    if not path.is_file():
        raise FedlabError(f"no saved index at {directory}: build it first (missing {MANIFEST})")
    manifest = json.loads(path.read_text(encoding="utf-8"))
    if manifest.get("format") != FORMAT_VERSION:
        raise FedlabError(f"index at {directory} has format {manifest.get('format')}, expected "
                          f"{FORMAT_VERSION}: delete the directory and rebuild the index")
    return manifest


@contextmanager
def atomic_dir(target: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary directory beside ``target`` and swap it into place on success.

    A directory cannot be os.replace'd over a non-empty one, so the old copy is first renamed
    aside; the window in which ``target`` is missing is two renames long.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        yield tmp
        old = None
        if target.exists():
            old = target.with_name(f".{target.name}.{os.getpid()}.{tmp.name[-12:]}.old")
            os.replace(target, old)
        os.replace(tmp, target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def dir_size(path: str | os.PathLike) -> int:
    """Bytes under ``path`` (a file or a directory)."""
    path = Path(path)
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def widen(run: Callable[[int, list[int]], list[Pairs]], n_queries: int, want: int,
          start: int, limit: int) -> list[Pairs]:
    """Re-run ``run(budget, query_rows)`` with a doubling budget until each query has ``want`` hits.

    The budget is whatever bounds the work: hits fetched before a post-filter, efSearch, nprobe.
    A query stops at ``want`` hits or once the budget reaches ``limit`` (the whole index).
    """
    out: list[Pairs] = [[] for _ in range(n_queries)]
    todo = list(range(n_queries))
    budget = max(1, min(start, limit))
    while todo:
        last = budget >= limit
        pending = []
        for row, hits in zip(todo, run(budget, todo)):
            if len(hits) >= want or last:
                out[row] = hits[:want]
            else:
                pending.append(row)
        todo = pending
        budget = min(limit, budget * 2)
    return out


def top_k(scores: np.ndarray, k: int, rows: np.ndarray | None = None) -> Pairs:
    """Best k of a score vector, sorted by score desc then row asc (deterministic on ties)."""
    if rows is None:
        rows = np.arange(scores.shape[0])
    k = min(k, scores.shape[0])
    if k <= 0:
        return []
    part = np.argpartition(-scores, k - 1)[:k] if k < scores.shape[0] else np.arange(scores.shape[0])
    order = part[np.lexsort((rows[part], -scores[part]))]
    return [(int(rows[i]), float(scores[i])) for i in order]


@dataclass(kw_only=True)
class FilterableRows:
    """Metadata columns kept beside any index, so a MetadataFilter becomes a boolean row mask."""

    meta: list[dict] = field(default_factory=list, init=False, repr=False)
    _dates: np.ndarray = field(default=None, init=False, repr=False)
    _types: np.ndarray = field(default=None, init=False, repr=False)

    def _set_meta(self, meta: Sequence[dict], n: int) -> None:
        if len(meta) != n:
            raise FedlabError(f"got {len(meta)} metadata rows for {n} items: pass one dict per item")
        try:
            dates = [date_key(m["meeting_date"]) for m in meta]
            types = [str(m["doc_type"]) for m in meta]
        except KeyError as exc:
            raise FedlabError(f"index metadata lacks {exc}: every row needs meeting_date and doc_type") from None
        self.meta = [dict(m) for m in meta]
        self._dates = np.asarray(dates, dtype=np.int64)
        self._types = np.asarray(types, dtype=object)

    def mask(self, flt: MetadataFilter | None) -> np.ndarray | None:
        """Rows that pass ``flt``; None when there is no constraint."""
        if flt is None or flt.empty:
            return None
        keep = np.ones(len(self._dates), dtype=bool)
        if flt.date_from is not None:
            keep &= self._dates >= date_key(flt.date_from)
        if flt.date_to is not None:
            keep &= self._dates <= date_key(flt.date_to)
        if flt.doc_types is not None:
            keep &= np.isin(self._types, list(flt.doc_types))
        return keep


@dataclass(kw_only=True)
class VectorIndex(FilterableRows, ABC):
    """Base of all vector indexes: validation, filtering strategy, save/load, fingerprint.

    Subclasses implement ``_build``, ``_search_all`` (unfiltered), ``_write``/``_read`` (their files)
    and ``size_bytes``; they override ``_search_native`` when the library can filter by itself.
    """

    filter_mode: str = "native"  # "native" or "post" (post-filter with over-fetch)

    kind: ClassVar[str]
    # Parameters that only affect search, not the built structure (overridable at load time).
    SEARCH_PARAMS: ClassVar[frozenset[str]] = frozenset({"filter_mode"})

    dim: int = field(default=0, init=False, repr=False)
    n: int = field(default=0, init=False, repr=False)
    _saved_dir: Path | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.filter_mode not in ("native", "post"):
            raise FedlabError(f"filter_mode={self.filter_mode!r}: use 'native' or 'post'")

    # ---- building -------------------------------------------------------------------------
    def build(self, vectors: np.ndarray, meta: Sequence[dict]) -> None:
        """Index ``vectors`` (n, d), L2-normalised, with one metadata dict per row."""
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] == 0 or vectors.shape[1] == 0:
            raise FedlabError(f"cannot index an array of shape {vectors.shape}: pass (n, d) with n, d > 0")
        norms = np.linalg.norm(vectors, axis=1)
        if not np.all(np.abs(norms - 1.0) < 1e-3):
            raise FedlabError("index vectors are not L2-normalised: normalise the embeddings before indexing")
        self._set_meta(meta, vectors.shape[0])
        self.n, self.dim = vectors.shape
        self._saved_dir = None
        self._build(vectors)

    # ---- searching ------------------------------------------------------------------------
    def search(self, query: np.ndarray, k: int, flt: MetadataFilter | None = None) -> Pairs:
        query = np.asarray(query, dtype=np.float32)
        if query.ndim != 1:
            raise FedlabError(f"search takes one query vector of shape (d,), got {query.shape}: use search_many")
        return self.search_many(query[None, :], k, flt)[0]

    def search_many(self, queries: np.ndarray, k: int, flt: MetadataFilter | None = None) -> list[Pairs]:
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        if self.n == 0:
            raise FedlabError(f"{self.kind} index is empty: build() or load() it before searching")
        if queries.ndim != 2 or queries.shape[1] != self.dim:
            raise FedlabError(f"query shape {queries.shape} does not fit a {self.dim}-d index: "
                              "embed queries with the model that built the index")
        if k <= 0 or queries.shape[0] == 0:
            return [[] for _ in range(queries.shape[0])]
        keep = self.mask(flt)
        if keep is None or keep.all():
            return self._search_all(queries, min(k, self.n))
        allowed = np.flatnonzero(keep)
        if allowed.size == 0:
            return [[] for _ in range(queries.shape[0])]
        k = min(k, int(allowed.size))
        if self.filter_mode == "post":
            return self._post_filter(queries, k, keep, allowed.size)
        return self._search_native(queries, k, keep, allowed, flt)

    def _post_filter(self, queries: np.ndarray, k: int, keep: np.ndarray, n_allowed: int) -> list[Pairs]:
        """Unfiltered search, drop rows failing the filter, fetch more until k survive."""
        def run(fetch: int, rows: list[int]) -> list[Pairs]:
            return [[(i, s) for i, s in hits if keep[i]] for hits in self._search_all(queries[rows], fetch)]

        # Expected fetch for k survivors at this selectivity, plus headroom.
        start = math.ceil(1.5 * k * self.n / n_allowed)
        return widen(run, queries.shape[0], k, start, self.n)

    def _search_native(self, queries: np.ndarray, k: int, keep: np.ndarray, allowed: np.ndarray,
                       flt: MetadataFilter) -> list[Pairs]:
        """Filtered top-k (k <= number of allowed rows); the default post-filters."""
        return self._post_filter(queries, k, keep, allowed.size)

    @abstractmethod
    def _build(self, vectors: np.ndarray) -> None: ...

    @abstractmethod
    def _search_all(self, queries: np.ndarray, k: int) -> list[Pairs]:
        """Unfiltered top-k for each query; k <= n."""

    # ---- persistence ----------------------------------------------------------------------
    def save(self, directory: str | os.PathLike) -> None:
        """Write the index and its metadata to ``directory`` (replaced as a whole)."""
        if self.n == 0:
            raise FedlabError(f"{self.kind} index is empty: build() it before saving")
        with atomic_dir(directory) as tmp:
            self._write(tmp)
            write_json(tmp / META_FILE, self.meta)
            write_json(tmp / MANIFEST, self._manifest())
        self._saved_dir = Path(directory)

    def _manifest(self) -> dict:
        return {"format": FORMAT_VERSION, "kind": self.kind, "params": self.params(),
                "n": self.n, "dim": self.dim, "fingerprint": self.fingerprint()}

    @classmethod
    def load(cls, directory: str | os.PathLike, **search_params: Any):
        """Reload a saved index; ``search_params`` (e.g. efSearch=256) override search-time knobs."""
        manifest = read_manifest(directory)
        if manifest["kind"] != cls.kind:
            raise FedlabError(f"{directory} holds a {manifest['kind']} index, not {cls.kind}: "
                              "use fedlab.index.load_index or the matching index config")
        bad = set(search_params) - cls.SEARCH_PARAMS
        if bad:
            raise FedlabError(f"cannot override {sorted(bad)} when loading a {cls.kind} index: "
                              f"only {sorted(cls.SEARCH_PARAMS)} are search-time; rebuild for the others")
        index = cls(**{**manifest["params"], **search_params})
        index.n, index.dim = manifest["n"], manifest["dim"]
        meta_path = Path(directory) / manifest.get("meta", META_FILE)
        index._set_meta(json.loads(meta_path.read_text(encoding="utf-8")), index.n)
        index._read(Path(directory))
        index._saved_dir = Path(directory)
        return index

    @abstractmethod
    def _write(self, directory: Path) -> None: ...

    @abstractmethod
    def _read(self, directory: Path) -> None: ...

    @abstractmethod
    def size_bytes(self) -> int:
        """Bytes of the index structure (on disk once saved, else its serialised size)."""

    # ---- identity -------------------------------------------------------------------------
    def params(self) -> dict:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.init}

    def fingerprint(self, include_search: bool = True) -> str:
        """Short hash of kind and parameters; without search params it keys a built-index cache."""
        params = {k: v for k, v in self.params().items() if include_search or k not in self.SEARCH_PARAMS}
        blob = json.dumps({"kind": self.kind, "params": params}, sort_keys=True, default=str)
        return hashlib.sha1(blob.encode()).hexdigest()[:12]

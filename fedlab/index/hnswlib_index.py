"""hnswlib HNSW; filters natively with knn_query's ``filter`` callable."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import hnswlib
import numpy as np

from fedlab.errors import FedlabError
from fedlab.index.base import Pairs, VectorIndex, dir_size, widen
from fedlab.io import atomic_path

HNSW_FILE = "hnswlib.bin"


@dataclass(kw_only=True)
class HnswlibIndex(VectorIndex):
    space: str = "ip"  # "ip" or "cosine"; hnswlib distance is 1 - similarity for both
    M: int = 16
    ef_construction: int = 200
    ef: int = 100
    seed: int = 100
    # One thread builds the same graph every time; more threads build faster but not reproducibly.
    num_threads: int = 1

    kind: ClassVar[str] = "hnswlib"
    SEARCH_PARAMS: ClassVar[frozenset[str]] = frozenset({"filter_mode", "ef", "num_threads"})

    _index: hnswlib.Index = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.space not in ("ip", "cosine"):
            raise FedlabError(f"hnswlib space={self.space!r}: use 'ip' or 'cosine'")

    def _build(self, vectors: np.ndarray) -> None:
        index = hnswlib.Index(space=self.space, dim=self.dim)
        index.init_index(max_elements=self.n, M=self.M, ef_construction=self.ef_construction,
                         random_seed=self.seed)
        index.add_items(vectors, np.arange(self.n), num_threads=self.num_threads)
        self._index = index

    def _run(self, queries: np.ndarray, k: int, ef: int, allowed: list[bool] | None) -> list[Pairs]:
        self._index.set_ef(max(ef, k))
        try:
            if allowed is None:
                labels, dists = self._index.knn_query(queries, k=k, num_threads=self.num_threads)
            else:
                # A Python filter must run single-threaded (it needs the GIL).
                labels, dists = self._index.knn_query(queries, k=k, num_threads=1, filter=allowed.__getitem__)
        except RuntimeError:
            # hnswlib refuses to return fewer than k: report "not enough yet" so widen() raises ef.
            if len(queries) == 1:
                return [[]]
            return [self._run(q[None, :], k, ef, allowed)[0] for q in queries]
        return [[(int(i), 1.0 - float(d)) for i, d in zip(lrow, drow)] for lrow, drow in zip(labels, dists)]

    def _search_all(self, queries: np.ndarray, k: int) -> list[Pairs]:
        return widen(lambda ef, rows: self._run(queries[rows], k, ef, None), len(queries), k, self.ef, self.n)

    def _search_native(self, queries, k, keep, allowed, flt) -> list[Pairs]:
        ok = keep.tolist()
        return widen(lambda ef, rows: self._run(queries[rows], k, ef, ok), len(queries), k, self.ef, self.n)

    def _write(self, directory: Path) -> None:
        with atomic_path(directory / HNSW_FILE) as tmp:
            self._index.save_index(str(tmp))

    def _read(self, directory: Path) -> None:
        index = hnswlib.Index(space=self.space, dim=self.dim)
        index.load_index(str(directory / HNSW_FILE), max_elements=self.n)
        self._index = index

    def size_bytes(self) -> int:
        if self._saved_dir is not None:
            return dir_size(self._saved_dir / HNSW_FILE)
        return int(self._index.index_file_size())

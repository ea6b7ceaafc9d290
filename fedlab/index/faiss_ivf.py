"""FAISS IVF-Flat (inner product); filters natively through an IDSelector."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import faiss
import numpy as np

from fedlab.index.base import Pairs, VectorIndex, widen
from fedlab.index.faiss_common import FaissStorage, pairs


@dataclass(kw_only=True)
class FaissIVFIndex(FaissStorage, VectorIndex):
    nlist: int = 64
    nprobe: int = 8
    seed: int = 1234  # k-means initialisation and sampling: same data + seed = same index
    # FAISS wants >= 39 training points per list; fewer lists are used when n is small.
    min_points_per_list: int = 39

    kind: ClassVar[str] = "faiss_ivf"
    SEARCH_PARAMS: ClassVar[frozenset[str]] = frozenset({"filter_mode", "nprobe"})

    _index: faiss.IndexIVFFlat = field(default=None, init=False, repr=False)

    @property
    def nlist_effective(self) -> int:
        return int(self._index.nlist) if self._index is not None else self.nlist

    def _build(self, vectors: np.ndarray) -> None:
        nlist = max(1, min(self.nlist, self.n // max(1, self.min_points_per_list)))
        quantizer = faiss.IndexFlatIP(self.dim)
        index = faiss.IndexIVFFlat(quantizer, self.dim, nlist, faiss.METRIC_INNER_PRODUCT)
        index.cp.seed = self.seed
        index.train(vectors)
        index.add(vectors)
        self._index = index

    def _run(self, queries: np.ndarray, k: int, nprobe: int, sel=None) -> list[Pairs]:
        params = faiss.SearchParametersIVF(nprobe=nprobe)
        if sel is not None:
            params.sel = sel
        scores, ids = self._index.search(queries, k, params=params)
        return pairs(scores, ids)

    def _search(self, queries: np.ndarray, k: int, nprobe: int, sel=None) -> list[Pairs]:
        # The probed lists may hold fewer than k (matching) rows: probe more lists until they do.
        return widen(lambda p, rows: self._run(queries[rows], k, p, sel), len(queries), k,
                     nprobe, self.nlist_effective)

    def _search_all(self, queries: np.ndarray, k: int) -> list[Pairs]:
        return self._search(queries, k, self.nprobe)

    def _search_native(self, queries, k, keep, allowed, flt) -> list[Pairs]:
        # Matching rows are sparser than rows: probe n/allowed times more lists, so a filtered
        # search scans about as many candidates as an unfiltered one (capped at nlist).
        nprobe = math.ceil(self.nprobe * self.n / allowed.size)
        return self._search(queries, k, nprobe, faiss.IDSelectorBatch(allowed.astype(np.int64)))

"""FAISS HNSW (IndexHNSWFlat, inner product); filters natively through an IDSelector."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import faiss
import numpy as np

from fedlab.index.base import Pairs, VectorIndex, widen
from fedlab.index.faiss_common import FaissStorage, pairs


@dataclass(kw_only=True)
class FaissHNSWIndex(FaissStorage, VectorIndex):
    M: int = 32
    efConstruction: int = 200
    efSearch: int = 128

    kind: ClassVar[str] = "faiss_hnsw"
    SEARCH_PARAMS: ClassVar[frozenset[str]] = frozenset({"filter_mode", "efSearch"})

    _index: faiss.IndexHNSWFlat = field(default=None, init=False, repr=False)

    def _build(self, vectors: np.ndarray) -> None:
        index = faiss.IndexHNSWFlat(self.dim, self.M, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = self.efConstruction
        index.add(vectors)
        self._index = index

    def _run(self, queries: np.ndarray, k: int, ef: int, sel=None) -> list[Pairs]:
        params = faiss.SearchParametersHNSW(efSearch=max(ef, k))
        if sel is not None:
            params.sel = sel
        scores, ids = self._index.search(queries, k, params=params)
        return pairs(scores, ids)

    def _search_all(self, queries: np.ndarray, k: int) -> list[Pairs]:
        # With ef >= k HNSW fills k slots unless the graph walk runs dry; widen ef if it does.
        return widen(lambda ef, rows: self._run(queries[rows], k, ef), len(queries), k, self.efSearch, self.n)

    def _search_native(self, queries, k, keep, allowed, flt) -> list[Pairs]:
        sel = faiss.IDSelectorBatch(allowed.astype(np.int64))
        return widen(lambda ef, rows: self._run(queries[rows], k, ef, sel), len(queries), k, self.efSearch, self.n)

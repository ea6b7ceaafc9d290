"""Exact search: inner product over all (normalised) vectors with numpy; the ground truth."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np

from fedlab.index.base import Pairs, VectorIndex, dir_size, top_k
from fedlab.io import atomic_path

VECTORS = "vectors.npy"


@dataclass(kw_only=True)
class ExactIndex(VectorIndex):
    kind: ClassVar[str] = "exact"

    _vectors: np.ndarray = field(default=None, init=False, repr=False)

    def _build(self, vectors: np.ndarray) -> None:
        self._vectors = vectors.copy()

    def _search_all(self, queries: np.ndarray, k: int) -> list[Pairs]:
        return [top_k(row, k) for row in queries @ self._vectors.T]

    def _search_native(self, queries, k, keep, allowed, flt) -> list[Pairs]:
        sub = self._vectors[allowed]  # score only the allowed rows: filtered exact search stays exact
        return [top_k(row, k, allowed) for row in queries @ sub.T]

    def _write(self, directory: Path) -> None:
        with atomic_path(directory / VECTORS) as tmp:
            with open(tmp, "wb") as fh:
                np.save(fh, self._vectors)

    def _read(self, directory: Path) -> None:
        self._vectors = np.load(directory / VECTORS)

    def size_bytes(self) -> int:
        if self._saved_dir is not None:
            return dir_size(self._saved_dir / VECTORS)
        return int(self._vectors.nbytes)

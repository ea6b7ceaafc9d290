"""Small FAISS helpers shared by the HNSW and IVF wrappers."""
from __future__ import annotations

from pathlib import Path

import faiss
import numpy as np

from fedlab.index.base import Pairs, dir_size
from fedlab.io import write_bytes

FAISS_FILE = "faiss.index"


def pairs(scores: np.ndarray, ids: np.ndarray) -> list[Pairs]:
    """FAISS result arrays -> per-query (row, score) lists, dropping the -1 padding."""
    return [[(int(i), float(s)) for s, i in zip(srow, irow) if i >= 0] for srow, irow in zip(scores, ids)]


def write_faiss(index: faiss.Index, directory: Path) -> None:
    write_bytes(directory / FAISS_FILE, faiss.serialize_index(index).tobytes())


def read_faiss(directory: Path) -> faiss.Index:
    return faiss.read_index(str(directory / FAISS_FILE))


def serialized_size(index: faiss.Index) -> int:
    return int(faiss.serialize_index(index).size)


class FaissStorage:
    """Save/load/size for index classes that keep a FAISS index in ``self._index``."""

    def _write(self, directory: Path) -> None:
        write_faiss(self._index, directory)

    def _read(self, directory: Path) -> None:
        self._index = read_faiss(directory)

    def size_bytes(self) -> int:
        if self._saved_dir is not None:
            return dir_size(self._saved_dir / FAISS_FILE)
        return serialized_size(self._index)

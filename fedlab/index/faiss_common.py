"""Small FAISS helpers shared by the HNSW and IVF wrappers."""
from __future__ import annotations

from pathlib import Path

import faiss
import numpy as np

from fedlab.index.base import Pairs
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

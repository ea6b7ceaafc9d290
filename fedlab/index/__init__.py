"""Vector indexes (exact, FAISS HNSW/IVF, hnswlib, Chroma) and BM25 behind one search interface.

Index modules import their libraries; this package does not, so pick one with
``index_class(kind)`` / ``load_index(dir)`` or hydra.utils.instantiate(cfg.index).
"""
from fedlab.index.base import KINDS, index_class, load_index

__all__ = ["KINDS", "index_class", "load_index"]

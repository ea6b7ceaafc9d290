"""ChromaDB collection (cosine space); filters natively with a ``where`` clause.

Chroma is only ever given explicit embeddings (``embedding_function=None``): its default embedder
would download a model. ``build`` indexes into an in-memory (ephemeral) collection; ``save`` writes
a persistent copy under ``directory/chroma-<id>/`` and then switches the manifest to it, so a reader
sees the old index or the new one. A PersistentClient directory is never renamed or reused,
because chromadb keeps one client per path per process.
"""
from __future__ import annotations

import os
import shutil
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from fedlab.errors import FedlabError
from fedlab.index.base import (
    MANIFEST, Pairs, VectorIndex, date_key, dir_size, read_manifest,
)
from fedlab.io import write_json
from fedlab.index.filter import MetadataFilter

_CLIENTS: dict[str, Any] = {}  # resolved path ("" = in-memory) -> chromadb client
_STALE_FILES = ("faiss.index", "vectors.npy", "hnswlib.bin", "meta.json")  # other kinds' files


def _settings():
    from chromadb.config import Settings

    return Settings(anonymized_telemetry=False)


def client_for(path: Path | None):
    """One chromadb client per path per process (chromadb raises on a second one with other settings)."""
    import chromadb

    key = str(path.resolve()) if path is not None else ""
    if key not in _CLIENTS:
        if path is None:
            _CLIENTS[key] = chromadb.EphemeralClient(settings=_settings())
        else:
            _CLIENTS[key] = chromadb.PersistentClient(path=key, settings=_settings())
    return _CLIENTS[key]


@dataclass(kw_only=True)
class ChromaIndex(VectorIndex):
    collection: str = "fedlab"
    M: int = 16
    construction_ef: int = 100
    search_ef: int = 100
    batch_size: int = 1000  # capped at the client's max batch size

    kind: ClassVar[str] = "chroma"

    _collection: Any = field(default=None, init=False, repr=False)
    _persist_dir: Path | None = field(default=None, init=False, repr=False)  # the chroma-<id> dir
    # The vectors as given to build(): re-adding exactly these on save rebuilds the same graph
    # (vectors read back from Chroma are re-normalised, so differ in the last bits).
    _source: np.ndarray | None = field(default=None, init=False, repr=False)

    def _collection_metadata(self) -> dict:
        return {"hnsw:space": "cosine", "hnsw:M": self.M,
                "hnsw:construction_ef": self.construction_ef, "hnsw:search_ef": self.search_ef}

    def _create(self, client, vectors: np.ndarray):
        # Ephemeral clients share one in-memory store per process: names must be unique.
        name = f"{self.collection}-{uuid.uuid4().hex[:12]}"
        col = client.create_collection(name, metadata=self._collection_metadata(), embedding_function=None)
        step = max(1, min(self.batch_size, client.get_max_batch_size()))
        for lo in range(0, self.n, step):
            hi = min(self.n, lo + step)
            col.add(ids=[str(i) for i in range(lo, hi)], embeddings=vectors[lo:hi],
                    metadatas=[{"date": int(self._dates[i]), "doc_type": str(self._types[i])}
                               for i in range(lo, hi)])
        return col

    def _drop_ephemeral(self) -> None:
        if self._collection is not None and self._persist_dir is None:
            client_for(None).delete_collection(self._collection.name)
        self._collection = None

    def _build(self, vectors: np.ndarray) -> None:
        self._drop_ephemeral()
        self._persist_dir = None
        self._source = vectors
        self._collection = self._create(client_for(None), vectors)

    def _query(self, queries: np.ndarray, k: int, where: dict | None) -> list[Pairs]:
        res = self._collection.query(query_embeddings=queries, n_results=k, where=where, include=["distances"])
        # Chroma's cosine distance is 1 - cosine similarity.
        return [[(int(i), 1.0 - float(d)) for i, d in zip(ids, dists)]
                for ids, dists in zip(res["ids"], res["distances"])]

    def _search_all(self, queries: np.ndarray, k: int) -> list[Pairs]:
        return self._query(queries, k, None)

    def _search_native(self, queries, k, keep, allowed, flt) -> list[Pairs]:
        return self._query(queries, k, self.where(flt))

    @staticmethod
    def where(flt: MetadataFilter) -> dict:
        """MetadataFilter -> Chroma where clause on the numeric yyyymmdd ``date`` and ``doc_type``."""
        clauses: list[dict] = []
        if flt.date_from is not None:
            clauses.append({"date": {"$gte": date_key(flt.date_from)}})
        if flt.date_to is not None:
            clauses.append({"date": {"$lte": date_key(flt.date_to)}})
        if flt.doc_types is not None:
            clauses.append({"doc_type": {"$in": list(flt.doc_types)}})
        return clauses[0] if len(clauses) == 1 else {"$and": clauses}

    def _vectors(self) -> np.ndarray:
        got = self._collection.get(include=["embeddings"])
        out = np.empty((self.n, self.dim), dtype=np.float32)
        out[[int(i) for i in got["ids"]]] = np.asarray(got["embeddings"], dtype=np.float32)
        return out

    # ---- persistence: a fresh chroma-<id> directory, then the manifest switch ----------------
    def save(self, directory: str | os.PathLike) -> None:
        if self.n == 0:
            raise FedlabError("chroma index is empty: build() it before saving")
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        if self._persist_dir is None or self._persist_dir.parent.resolve() != directory.resolve():
            self._write(directory)
        sub = self._persist_dir.name
        meta_name = f"{sub}.meta.json"
        write_json(directory / meta_name, self.meta)
        write_json(directory / MANIFEST, {**self._manifest(), "chroma_dir": sub,
                                          "chroma_collection": self._collection.name, "meta": meta_name})
        for entry in directory.iterdir():
            if entry.name in (MANIFEST, sub, meta_name):
                continue
            if entry.name.startswith("chroma-") or entry.name in _STALE_FILES:
                _CLIENTS.pop(str(entry.resolve()), None)
                shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
        self._saved_dir = directory

    def _write(self, directory: Path) -> None:
        """Copy the collection into a new persistent ``directory/chroma-<id>`` and switch to it."""
        persist_dir = directory / f"chroma-{uuid.uuid4().hex[:12]}"
        col = self._create(client_for(persist_dir), self._source if self._source is not None else self._vectors())
        self._drop_ephemeral()
        self._collection, self._persist_dir = col, persist_dir

    def _read(self, directory: Path) -> None:
        manifest = read_manifest(directory)
        self._persist_dir = directory / manifest["chroma_dir"]
        client = client_for(self._persist_dir)
        self._collection = client.get_collection(manifest["chroma_collection"], embedding_function=None)

    def size_bytes(self) -> int:
        if self._persist_dir is not None:
            return dir_size(self._persist_dir)
        return self.n * self.dim * 4  # in memory: at least the float32 vectors

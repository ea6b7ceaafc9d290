"""Compose the retrieval pipeline from a config, building only what the cache lacks.

Chunks are keyed by (corpus hash, chunker, tokenizer), embeddings by (chunk texts, embedder),
indexes by (embeddings, index build params) and BM25 by (chunk texts, BM25 params). A sweep
therefore embeds each distinct text set once per embedder, whatever else it varies.
"""
from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

from fedlab import io
from fedlab.cache import ArtifactCache, content_key, texts_key
from fedlab.chunking.chunk import Chunk
from fedlab.chunking.factory import instantiate_chunker
from fedlab.corpus.build import load_documents, load_manifest
from fedlab.corpus.document import Document
from fedlab.errors import FedlabError

log = logging.getLogger(__name__)
DENSE_KINDS = ("dense", "hybrid")
LEXICAL_KINDS = ("bm25", "hybrid")


@dataclass
class Corpus:
    documents: list[Document]
    content_hash: str
    directory: Path

    @property
    def by_id(self) -> dict[str, Document]:
        return {d.doc_id: d for d in self.documents}


def load_corpus(directory: str | Path) -> Corpus:
    directory = Path(directory)
    if not (directory / "docs.jsonl").is_file() or not (directory / "manifest.json").is_file():
        raise FedlabError(
            f"no corpus at {directory}: build it with `make data` "
            "(FEDLAB_MIRROR=../shared/fomc-mirror make data reads the saved site)"
        )
    return Corpus(load_documents(directory), load_manifest(directory)["content_hash"], directory)


@dataclass
class BuildInfo:
    """What building the pipeline cost, and which artifacts came from the cache."""

    seconds: dict[str, float] = field(default_factory=dict)  # stage -> seconds (0 on a hit)
    cache: dict[str, str] = field(default_factory=dict)  # stage -> "hit" | "miss"
    keys: dict[str, str] = field(default_factory=dict)  # stage -> cache key
    chunking: dict[str, float] = field(default_factory=dict)  # chunking stats as metrics


@dataclass
class Pipeline:
    corpus: Corpus
    chunks: list[Chunk]
    retriever: Any  # fedlab.retrieval.two_pass.DateAwareRetriever
    embedder: Any | None
    info: BuildInfo

    def search(self, question: str, k: int | None = None, hint=None, flt=None):
        """Retrieve (``flt``: a MetadataFilter); ``embed_ms`` is the model's compute time even
        for a cached query vector."""
        if self.embedder is None:
            return self.retriever.search(question, k=k, hint=hint, flt=flt)
        self.embedder.compute_ms = 0.0
        result = self.retriever.search(question, k=k, hint=hint, flt=flt)
        if "embed_ms" in result.timings:
            measured = result.timings["embed_ms"]
            result.timings["embed_ms"] = self.embedder.compute_ms
            result.timings["total_ms"] += self.embedder.compute_ms - measured
        return result


def _timed(info: BuildInfo, stage: str, cache: ArtifactCache, kind: str, key: str, build) -> Path:
    before = cache.stats[f"{kind}.miss"]
    t0 = time.perf_counter()
    path = cache.get_or_build(kind, key, build)
    missed = cache.stats[f"{kind}.miss"] > before
    info.seconds[stage] = time.perf_counter() - t0
    info.cache[stage] = "miss" if missed else "hit"
    info.keys[stage] = key
    return path


def chunk_corpus(corpus: Corpus, chunker, tokenizer, cache: ArtifactCache, info: BuildInfo) -> list[Chunk]:
    key = content_key("chunks", corpus.content_hash, chunker.fingerprint(), tokenizer.fingerprint())

    def build(tmp: Path) -> None:
        result = chunker.chunk(corpus.documents, tokenizer)
        io.write_jsonl(tmp / "chunks.jsonl", (c.to_json() for c in result.chunks))
        io.write_json(tmp / "stats.json", result.stats.as_metrics(prefix="chunking."))

    path = _timed(info, "chunks", cache, "chunks", key, build)
    info.chunking = json.loads((path / "stats.json").read_text())
    return [Chunk.from_json(row) for row in io.read_jsonl(path / "chunks.jsonl")]


def embed_chunks(chunks: list[Chunk], embedder, cache: ArtifactCache, info: BuildInfo, progress: bool) -> np.ndarray:
    key = content_key("embeddings", texts_key([c.embed_text for c in chunks]), embedder.fingerprint())

    def build(tmp: Path) -> None:
        vectors = embedder.embed_documents([c.embed_text for c in chunks], progress=progress)
        np.save(tmp / "vectors.npy", vectors, allow_pickle=False)

    path = _timed(info, "embeddings", cache, "embeddings", key, build)
    return np.load(path / "vectors.npy", allow_pickle=False)


def chunk_meta(chunks: list[Chunk]) -> list[dict]:
    return [{"meeting_date": c.meeting_date, "doc_type": c.doc_type} for c in chunks]


def build_vector_index(index, vectors: np.ndarray, chunks: list[Chunk], cache: ArtifactCache, info: BuildInfo):
    key = content_key("index", info.keys["embeddings"], index.fingerprint(include_search=False))

    def build(tmp: Path) -> None:
        index.build(vectors, chunk_meta(chunks))
        index.save(tmp / "index")

    path = _timed(info, "index", cache, "index", key, build)
    search_params = {k: v for k, v in index.params().items() if k in type(index).SEARCH_PARAMS}
    return type(index).load(path / "index", **search_params)


def attach_token_store(reranker, chunks: list[Chunk], cache: ArtifactCache, info: BuildInfo, progress: bool) -> None:
    """Late interaction: every passage's token vectors, computed once per chunk set."""
    texts = [c.text for c in chunks]
    key = content_key("token_vectors", texts_key(texts), reranker.fingerprint())
    path = _timed(info, "token_vectors", cache, "token_vectors", key,
                  lambda tmp: reranker.encode_store(texts, tmp, progress))
    reranker.attach_store(texts, path)


def build_bm25(bm25, chunks: list[Chunk], cache: ArtifactCache, info: BuildInfo):
    key = content_key("bm25", texts_key([c.text for c in chunks]), bm25.fingerprint(include_search=False))

    def build(tmp: Path) -> None:
        bm25.build([c.text for c in chunks], chunk_meta(chunks))
        bm25.save(tmp / "bm25")

    path = _timed(info, "bm25", cache, "bm25", key, build)
    return type(bm25).load(path / "bm25")


class QueryCachingEmbedder:
    """The embedder, with query vectors read from / written to the cache by (text, embedder).

    ``compute_ms`` accumulates what the model took to embed the queries served since the last
    reset, measured when each vector was computed, whether or not it came from the cache now.
    """

    def __init__(self, embedder, cache: ArtifactCache):
        self._embedder = embedder
        self._cache = cache
        self._fingerprint = embedder.fingerprint()
        self.compute_ms = 0.0

    def embed_query(self, text: str) -> np.ndarray:
        vec, ms = self._cache.query_vector(self._fingerprint, text, self._embedder.embed_query)
        self.compute_ms += ms
        return vec

    def __getattr__(self, name: str):
        return getattr(self._embedder, name)


def build_pipeline(cfg: DictConfig, cache: ArtifactCache | None = None, progress: bool = True) -> Pipeline:
    """Everything ``cfg`` names — corpus, chunker, embedder, index, bm25, retriever, reranker."""
    cache = cache or ArtifactCache(cfg.paths.cache_dir)
    corpus = load_corpus(cfg.corpus.dir)
    info = BuildInfo()
    kind = cfg.retriever.kind
    embedder = instantiate(cfg.embedder)  # cheap: models load on first use
    chunker = instantiate_chunker(cfg.chunker)
    # Chunk sizes are measured with the embedder's tokenizer even for BM25, so that a BM25 run
    # and a dense run with the same chunker config search the very same chunks.
    chunks = chunk_corpus(corpus, chunker, embedder, cache, info)
    index = bm25 = None
    if kind in DENSE_KINDS:
        vectors = embed_chunks(chunks, embedder, cache, info, progress)
        index = build_vector_index(instantiate(cfg.index), vectors, chunks, cache, info)
    if kind in LEXICAL_KINDS:
        bm25 = build_bm25(instantiate(cfg.bm25), chunks, cache, info)
    reranker = instantiate(cfg.reranker)
    if hasattr(reranker, "encode_store"):
        attach_token_store(reranker, chunks, cache, info, progress)
    make_retriever = instantiate(cfg.retriever)
    dense_embedder = QueryCachingEmbedder(embedder, cache) if kind in DENSE_KINDS else None
    retriever = make_retriever(chunks=chunks, embedder=dense_embedder, index=index, bm25=bm25, reranker=reranker)
    return Pipeline(corpus, chunks, retriever, dense_embedder, info)


def resolved(cfg: DictConfig) -> dict:
    return OmegaConf.to_container(cfg, resolve=True)  # type: ignore[return-value]

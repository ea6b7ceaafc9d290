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
from typing import Any, Iterable

import numpy as np
from omegaconf import DictConfig, OmegaConf

from fedlab import io, memo
from fedlab.cache import MANIFEST, ArtifactCache, content_key, texts_key
from fedlab.chunking.chunk import Chunk
from fedlab.chunking.factory import instantiate_chunker
from fedlab.config import group_configs, instantiate_group
from fedlab.errors import FedlabError
from fedlab.corpus.snapshot import Corpus, load_corpus

log = logging.getLogger(__name__)
DENSE_KINDS = ("dense", "hybrid")
LEXICAL_KINDS = ("bm25", "hybrid")


@dataclass
class BuildInfo:
    """What building the pipeline cost, and which artifacts came from the cache."""

    seconds: dict[str, float] = field(default_factory=dict)  # stage -> seconds (0 on a hit)
    waited: dict[str, float] = field(default_factory=dict)  # stage -> seconds waiting for another process's build
    cache: dict[str, str] = field(default_factory=dict)  # stage -> "hit" | "miss"
    keys: dict[str, str] = field(default_factory=dict)  # stage -> cache key
    chunking: dict[str, float] = field(default_factory=dict)  # chunking stats as metrics


@dataclass
class Pipeline:
    corpus: Corpus
    chunks: list[Chunk]
    retriever: Any  # fedlab.retrieval.two_pass.DateAwareRetriever
    embedder: Any | None  # the dense side's (None for BM25 alone)
    info: BuildInfo
    # the question's embedder for the answerability model's question head, whatever the retriever:
    # BM25 alone has no dense side, and without it an off-topic question whose words the corpus
    # holds (a country's capital) matched passages on capital flows and was answered
    question_embedder: Any | None = None
    # the chunks' passage vectors as the index holds them (None without a dense side): what a
    # measure that embeds a cited chunk's text reuses instead of running the model again
    chunk_vectors: Any | None = field(default=None, repr=False)
    _by_doc: dict[str, list[Chunk]] | None = field(default=None, repr=False)
    _statements: list | None = field(default=None, repr=False)
    _statement_reader: object | None = field(default=None, repr=False)

    def passage_vectors(self) -> dict[str, Any]:
        """{chunk text: its vector in the index} for the chunks embedded as they read (no
        context prepended); {} without a dense side. Remembered on the pipeline."""
        if self.chunk_vectors is None:
            return {}
        if not hasattr(self, "_passage_vectors"):
            self._passage_vectors = {c.text: self.chunk_vectors[i] for i, c in enumerate(self.chunks)
                                     if c.embed_text == c.text}
        return self._passage_vectors

    def warm_up(self) -> None:
        """Load the query-side model now, so that no query pays for loading it (the MCP server
        at start; an evaluation before its clock runs)."""
        if self.embedder is not None:
            self.embedder.warm_up()

    def measure_latency(self, share_timings: bool = False) -> None:
        """Measurement mode, for an evaluation: the model is loaded, and every query is embedded
        and timed even when its vector comes from the cache. Serving (ask, MCP) leaves it off:
        a cached vector is then served without running the model, as a user would see it.
        ``share_timings``: a query the model was timed on earlier in this process (an earlier
        config of the sweep, same embedder) is charged that time (``eval.query_timing``)."""
        if self.embedder is not None:
            self.embedder.time_model = True
            self.embedder.share_timings = share_timings
        self.warm_up()

    def coverage(self) -> tuple[str, str] | None:
        """The first and last meeting dates of the corpus's documents (None for an empty corpus)."""
        dates = [d.meeting_date for d in self.corpus.documents]
        return (min(dates), max(dates)) if dates else None

    def event_for(self, question: str):
        """The meeting(s) ``question`` names by an event (fedlab.retrieval.events.EventHint), or
        None; only with ``retriever.events`` on."""
        return self.retriever.event_for(question)

    @property
    def glossary(self) -> dict[str, str]:
        """The abbreviations the corpus defines (fedlab.corpus.glossary): read in milliseconds, so
        remembered for the process (fedlab.memo), not cached on disk."""
        from fedlab.corpus.glossary import defined_terms

        return memo.remember("glossary", self.corpus.content_hash, lambda: defined_terms(self.corpus.documents))

    @property
    def timeline(self):
        """The corpus's meeting timeline (fedlab.facts.timeline), when the retriever has one."""
        return getattr(self.retriever, "timeline", None)

    def statement_changes(self, date_from: str | None, date_to: str, previous: bool = False) -> list:
        """What each policy statement dated in the range changed from the previous one in it
        (``previous``: the first one's change from the statement before the range too)
        (fedlab.facts.changes.StatementChange); empty when the retriever has no timeline."""
        from fedlab.facts.changes import changes_between

        return changes_between(self.policy_statements(), date_from, date_to, previous)

    def policy_statements(self) -> list:
        """The statements of the timeline's policy decisions, in date order (empty without a timeline)."""
        from fedlab.facts.changes import policy_statements

        if self._statements is None:
            self._statements = policy_statements(self.timeline, self.corpus.by_id) if self.timeline is not None else []
        return self._statements

    def statement_runs(self, question: str, date_from: str | None, date_to: str | None,
                       date_words: frozenset[str] = frozenset()) -> list:
        """For each clause of ``question`` asking when, the policy statements dated in the range that
        said what it asks about (fedlab.retrieval.mentions.StatementRun); empty without a timeline."""
        from fedlab.retrieval.mentions import StatementReader

        if self._statement_reader is None:
            self._statement_reader = StatementReader(self.policy_statements())
        return self._statement_reader.runs(question, date_from, date_to, date_words)

    @property
    def question_side(self):
        """What embeds a question for the answerability model's question head: the config's
        embedder whatever the retriever (a pipeline built by hand may have only a dense side)."""
        return self.question_embedder or self.embedder

    def question_vector(self, question: str):
        """The question's query vector (cached), None without an embedder: what the answerability
        model's question head reads."""
        embedder = self.question_side
        return embedder.query_vector(question) if embedder is not None else None

    def chunk_at(self, doc_id: str, offset: int) -> Chunk | None:
        """The passage of ``doc_id`` whose searched span holds character ``offset``."""
        if self._by_doc is None:
            self._by_doc = {}
            for c in self.chunks:
                self._by_doc.setdefault(c.doc_id, []).append(c)
        return next((c for c in self._by_doc.get(doc_id, ()) if c.start <= offset < c.end), None)

    def search(self, question: str, k: int | None = None, hint=None, flt=None):
        """Retrieve (``flt``: a MetadataFilter); ``embed_ms`` is the model's compute time,
        measured now even when the query vector comes from the cache."""
        if self.embedder is None:
            return self.retriever.search(question, k=k, hint=hint, flt=flt)
        self.embedder.compute_ms = 0.0
        result = self.retriever.search(question, k=k, hint=hint, flt=flt)
        if "embed_ms" in result.timings:
            measured = result.timings["embed_ms"]
            result.timings["embed_ms"] = self.embedder.compute_ms
            result.timings["total_ms"] += self.embedder.compute_ms - measured
        return result


def _timed(info: BuildInfo, stage: str, cache: ArtifactCache, kind: str, key: str, build,
           what: str | None = None) -> Path:
    """``cache.get_or_build``, timed. A miss says what it builds before it starts and how long it
    took after (INFO, on stderr even where logging is not configured); a hit is DEBUG only. Time
    spent waiting for another process's build of it is ``info.waited``, not its build time."""
    from fedlab.progress import format_duration, heartbeat, note

    what = what or stage

    def announced(tmp: Path) -> None:  # called on a miss only, once the lock is ours
        note(log, f"building {what} — not in the cache yet")
        with heartbeat(f"building {what}"):  # a line at least every 30 s, even without progress of its own
            build(tmp)

    before, waited_before = cache.stats[f"{kind}.miss"], cache.waited[kind]
    t0 = time.perf_counter()
    path = cache.get_or_build(kind, key, announced, what)
    missed = cache.stats[f"{kind}.miss"] > before
    waited = cache.waited[kind] - waited_before  # another process's build: not this run's
    info.seconds[stage] = time.perf_counter() - t0 - waited
    if waited:
        info.waited[stage] = waited
    info.cache[stage] = "miss" if missed else "hit"
    info.keys[stage] = key
    if missed:
        secs = info.seconds[stage]
        took = f"{secs:.1f} s" if secs < 60 else format_duration(secs)
        note(log, f"built {what} in {took}")
    else:
        log.debug("%s: cache hit (%s/%s)", stage, kind, key)
    return path


def _artifact_state(directory: Path) -> tuple | None:
    """The files of an artifact directory (see fedlab.memo.files_state); None when it has no manifest."""
    directory = directory.resolve()  # absolute paths: the state names the cache it is in
    if not (directory / MANIFEST).is_file():
        return None
    return memo.files_state(sorted(p for p in directory.rglob("*") if p.is_file()))


def _loaded(info: BuildInfo, stage: str, cache: ArtifactCache, kind: str, key: str, build, load,
            what: str | None = None, variant: Any = None):
    """``load(path)`` of the artifact ``_timed`` gets or builds, remembered for the rest of the
    process (fedlab.memo): the next config of a sweep that uses it skips reading and verifying
    it again. The memo is keyed by the key, ``variant`` (load-time settings) and the files'
    paths, sizes and times, so an artifact changed on disk since is verified and read anew."""
    t0 = time.perf_counter()
    state = _artifact_state(cache.path(kind, key))
    obj = memo.recall(kind, (key, repr(variant), state)) if state is not None else None
    if obj is not None:
        cache.stats[f"{kind}.hit"] += 1
        info.seconds[stage] = time.perf_counter() - t0
        info.cache[stage] = "hit"
        info.keys[stage] = key
        log.debug("%s: in memory (%s/%s)", stage, kind, key)
        return obj
    path = _timed(info, stage, cache, kind, key, build, what)
    obj = load(path)
    memo.remember(kind, (key, repr(variant), _artifact_state(path)), lambda: obj)
    return obj


def chunk_corpus(corpus: Corpus, chunker, tokenizer, cache: ArtifactCache, info: BuildInfo) -> list[Chunk]:
    key = content_key("chunks", corpus.content_hash, chunker.fingerprint(), tokenizer.fingerprint())

    def build(tmp: Path) -> None:
        result = chunker.chunk(corpus.documents, tokenizer)
        io.write_jsonl(tmp / "chunks.jsonl", (c.to_json() for c in result.chunks))
        io.write_json(tmp / "stats.json", result.stats.as_metrics(prefix="chunking."))

    name = getattr(chunker, "name", "") or type(chunker).__name__
    what = f"chunks ({name}) of {len(corpus.documents):,} documents"
    def load(path: Path) -> tuple[list[Chunk], dict]:
        return ([Chunk.from_json(row) for row in io.read_jsonl(path / "chunks.jsonl")],
                json.loads((path / "stats.json").read_text()))

    chunks, stats = _loaded(info, "chunks", cache, "chunks", key, build, load, what)
    info.chunking = dict(stats)
    return list(chunks)


def embed_chunks(chunks: list[Chunk], embedder, cache: ArtifactCache, info: BuildInfo, progress: bool) -> np.ndarray:
    key = content_key("embeddings", texts_key([c.embed_text for c in chunks]), embedder.fingerprint())

    def build(tmp: Path) -> None:
        vectors = embedder.embed_documents([c.embed_text for c in chunks], progress=progress)
        np.save(tmp / "vectors.npy", vectors, allow_pickle=False)

    what = f"embeddings ({getattr(embedder, 'name', type(embedder).__name__)}) for {len(chunks):,} chunks"
    def load(path: Path) -> np.ndarray:
        vectors = np.load(path / "vectors.npy", allow_pickle=False)
        vectors.flags.writeable = False  # shared by the configs of a sweep (fedlab.memo)
        return vectors

    return _loaded(info, "embeddings", cache, "embeddings", key, build, load, what)


def chunk_meta(chunks: list[Chunk]) -> list[dict]:
    return [{"meeting_date": c.meeting_date, "doc_type": c.doc_type} for c in chunks]


def chunk_meta_key(chunks: list[Chunk]) -> str:
    """The hash of what an index stores beside the vectors or terms (chunk_meta): part of its
    cache key, so that passages re-dated with the same text are not filtered by their old dates."""
    return content_key(chunk_meta(chunks))


def build_vector_index(index, vectors: np.ndarray, chunks: list[Chunk], cache: ArtifactCache, info: BuildInfo):
    key = content_key("index", info.keys["embeddings"], chunk_meta_key(chunks), index.fingerprint(include_search=False))

    def build(tmp: Path) -> None:
        index.build(vectors, chunk_meta(chunks))
        index.save(tmp / "index")

    what = f"{getattr(index, 'kind', type(index).__name__)} index over {len(chunks):,} vectors"
    search_params = {k: v for k, v in index.params().items() if k in type(index).SEARCH_PARAMS}
    return _loaded(info, "index", cache, "index", key, build,
                   lambda path: type(index).load(path / "index", **search_params), what,
                   variant=(type(index).__qualname__, sorted(search_params.items())))


def attach_token_store(reranker, chunks: list[Chunk], cache: ArtifactCache, info: BuildInfo, progress: bool) -> None:
    """Late interaction: every passage's token vectors, computed once per chunk set."""
    texts = [c.text for c in chunks]
    key = content_key("token_vectors", texts_key(texts), reranker.fingerprint())
    path = _timed(info, "token_vectors", cache, "token_vectors", key,
                  lambda tmp: reranker.encode_store(texts, tmp, progress),
                  f"late-interaction token vectors for {len(texts):,} chunks")
    reranker.attach_store(texts, path)


def build_bm25(bm25, chunks: list[Chunk], cache: ArtifactCache, info: BuildInfo):
    key = content_key("bm25", texts_key([c.text for c in chunks]), chunk_meta_key(chunks),
                      bm25.fingerprint(include_search=False))

    def build(tmp: Path) -> None:
        bm25.build([c.text for c in chunks], chunk_meta(chunks))
        bm25.save(tmp / "bm25")

    return _loaded(info, "bm25", cache, "bm25", key, build, lambda path: type(bm25).load(path / "bm25"),
                   f"BM25 index over {len(chunks):,} chunks", variant=type(bm25).__qualname__)


def load_timeline(corpus: Corpus, cache: ArtifactCache, info: BuildInfo | None = None):
    """The corpus's meeting timeline (fedlab.facts.timeline), from the cache (an artifact keyed
    by the corpus content hash and the timeline's version) or built and stored there."""
    from fedlab.facts.records import Timeline
    from fedlab.facts.timeline import build_timeline, timeline_key

    def build(tmp: Path) -> None:
        io.write_json(tmp / "timeline.json", build_timeline(corpus.documents).to_json())

    return _loaded(info or BuildInfo(), "timeline", cache, "timeline", timeline_key(corpus), build,
                   lambda path: Timeline.from_json(json.loads((path / "timeline.json").read_text(encoding="utf-8"))),
                   f"meeting timeline of {len(corpus.documents):,} documents")


# (embedder fingerprint, query text) -> the model's time on it (ms), measured in this process
_MODEL_MS: dict[tuple[str, str], float] = {}


class QueryCachingEmbedder:
    """The embedder, with query vectors read from / written to the cache by (text, query embedder):
    queries go to ``embedder.query_embedder(cache)`` (for MiniLM its ONNX export), passages and
    everything else to the embedder itself.

    The cache serves the vector (so results are deterministic), but latency is measured in the
    run that reports it: with ``time_model`` (an evaluation) the model embeds every query
    anyway, and ``compute_ms`` accumulates those live timings since the last reset. A vector's
    cost is never read back from the cache, where it would stay frozen at whatever load the
    machine had when it was first computed.
    """

    def __init__(self, embedder, cache: ArtifactCache, time_model: bool = False):
        self._embedder = embedder
        self._cache = cache
        query_side = getattr(embedder, "query_embedder", None)  # an Embedder's; duck-typed ones embed their own
        # e.g. MiniLM's ONNX export; its session is remembered for the process like the embedder itself
        self._query = embedder if query_side is None else memo.remember(
            "query_embedder", (id(embedder), str(cache.root)), lambda: (embedder, query_side(cache)))[1]
        self._fingerprint = self._query.fingerprint()
        self.time_model = time_model
        self.share_timings = False  # see embed_query
        self.compute_ms = 0.0

    def _timed_embed(self, text: str) -> np.ndarray:
        t0 = time.perf_counter()
        vec = self._query.embed_query(text)
        ms = (time.perf_counter() - t0) * 1000.0
        self.compute_ms += ms
        if self.share_timings:
            _MODEL_MS[(self._fingerprint, text)] = ms
        return vec

    def embed_query(self, text: str) -> np.ndarray:
        """The query's vector (from the cache when it has it). With ``time_model`` the model's
        time on the query is measured now even for a cached vector; with ``share_timings`` too
        (``eval.query_timing=per_sweep``) it is measured once per process and embedder, and the
        later configs of a sweep are charged that measurement instead of running the model again."""
        vec, hit = self._cache.query_vector(self._fingerprint, text, self._timed_embed)
        if hit and self.time_model:
            shared = _MODEL_MS.get((self._fingerprint, text)) if self.share_timings else None
            if shared is None:
                self._timed_embed(text)
            else:
                self.compute_ms += shared
        return vec

    def query_vector(self, text: str) -> np.ndarray:
        """The query's vector, never timed: for a reader besides the search (the agent's question
        head). The search on the same text then finds it cached and, measuring, times the model
        on it once, as a served query costs one run."""
        return self._cache.query_vector(self._fingerprint, text, self._query.embed_query)[0]

    def warm_up(self) -> None:
        """Load the model and run it once, so that no timed query pays for loading it."""
        self._query.ensure_loaded()
        self._query.embed_query("FOMC warm-up query")

    def __getattr__(self, name: str):
        return getattr(self._embedder, name)


def shared_corpus(corpus_dir) -> Corpus:
    """``load_corpus``, remembered for the process (fedlab.memo) while its files are unchanged."""
    directory = Path(str(corpus_dir)).resolve()
    state = memo.files_state([directory / "docs.jsonl", directory / "manifest.json"])
    if state is None:
        return load_corpus(corpus_dir)  # the one-line error
    return memo.remember("corpus", state, lambda: load_corpus(corpus_dir))


def shared_embedder(node: DictConfig):
    """The embedder a config names, one object per distinct embedder config in the process, so
    the configs of a sweep load its model once (fedlab.memo)."""
    key = content_key("embedder", OmegaConf.to_container(node, resolve=True))
    return memo.remember("embedder", key, lambda: instantiate_group(node, "embedder"))


def question_embedder(cfg: DictConfig, cache: ArtifactCache | None = None) -> QueryCachingEmbedder:
    """The config's embedder on the query side, vectors cached: what embeds a question for the
    dense search and for the answerability model's question head (over MCP too, agent-side)."""
    return QueryCachingEmbedder(shared_embedder(cfg.embedder), cache or ArtifactCache(cfg.paths.cache_dir))


def second_dense(cfg: DictConfig, chunks: list[Chunk], cache: ArtifactCache, progress: bool):
    """(query embedder, vector index) of ``retriever.second_dense`` (a conf/embedder choice, e.g.
    e5_small) over the very chunks of the first embedder, vectors and index through the cache.
    Its builds are timed in a BuildInfo of their own (the run's reports the first embedder's)."""
    name = cfg.retriever.second_dense
    choices = group_configs("embedder")
    if name not in choices:
        raise FedlabError(f"retriever.second_dense={name!r} is not an embedder: use one of {', '.join(choices)}")
    node = OmegaConf.create(choices[name])
    embedder = shared_embedder(node)
    info = BuildInfo()
    vectors = embed_chunks(chunks, embedder, cache, info, progress)
    index = build_vector_index(instantiate_group(cfg.index, "index"), vectors, chunks, cache, info)
    return QueryCachingEmbedder(embedder, cache), index


def build_pipeline(cfg: DictConfig, cache: ArtifactCache | None = None, progress: bool = True) -> Pipeline:
    """Everything ``cfg`` names — corpus, chunker, embedder, index, bm25, retriever, reranker."""
    cache = cache or ArtifactCache(cfg.paths.cache_dir)
    corpus = shared_corpus(cfg.corpus.dir)
    info = BuildInfo()
    kind = cfg.retriever.kind
    embedder = shared_embedder(cfg.embedder)  # cheap: models load on first use
    chunker = instantiate_chunker(cfg.chunker)
    # Chunk sizes are measured with the embedder's tokenizer even for BM25, so that a BM25 run
    # and a dense run with the same chunker config search the very same chunks.
    chunks = chunk_corpus(corpus, chunker, embedder, cache, info)
    index = bm25 = vectors = None
    if kind in DENSE_KINDS:
        vectors = embed_chunks(chunks, embedder, cache, info, progress)
        index = build_vector_index(instantiate_group(cfg.index, "index"), vectors, chunks, cache, info)
    if kind in LEXICAL_KINDS:
        bm25 = build_bm25(instantiate_group(cfg.bm25, "bm25"), chunks, cache, info)
    reranker = instantiate_group(cfg.reranker, "reranker")
    if hasattr(reranker, "encode_store"):
        attach_token_store(reranker, chunks, cache, info, progress)
    make_retriever = instantiate_group(cfg.retriever, "retriever")
    timeline = None
    if cfg.retriever.get("events"):
        timeline = load_timeline(corpus, cache, info)
    query_embedder = question_embedder(cfg, cache)  # loads its model on the first question
    dense_embedder = query_embedder if kind in DENSE_KINDS else None
    extra = {}
    if vectors is not None and (cfg.retriever.get("rocchio") or {}).get("enabled"):
        extra["vectors"] = vectors
    if cfg.retriever.get("second_dense") and kind in DENSE_KINDS:
        extra["second"] = second_dense(cfg, chunks, cache, progress)
    retriever = make_retriever(chunks=chunks, embedder=dense_embedder, index=index, bm25=bm25, reranker=reranker,
                               timeline=timeline, **extra)
    return Pipeline(corpus, chunks, retriever, dense_embedder, info, question_embedder=query_embedder,
                    chunk_vectors=vectors)


def resolved(cfg: DictConfig) -> dict:
    return OmegaConf.to_container(cfg, resolve=True)  # type: ignore[return-value]

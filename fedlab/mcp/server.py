"""The MCP server: ``search_fomc`` and ``get_document`` over stdio, on one pipeline built at start.

    python -m fedlab.mcp [--config production] [--set key=value ...] [--max-top-k 50]

stdout is the protocol channel: the pipeline is built with fd 1 pointed at stderr, and while
serving the SDK keeps fd 1 diverted to stderr itself, so stray prints never reach the client.
Logs go to stderr. Arguments are validated by the tools' pydantic signatures (the published
input schemas); a bad call returns an ``isError`` result and the server keeps serving.
"""
# No `from __future__ import annotations`: the tool signatures are built at run time from the
# limits, and the SDK reads their annotations as objects.
import argparse
import contextlib
import logging
import os
import sys
import threading
import time
from dataclasses import dataclass
from typing import Annotated

from pydantic import Field

from fedlab.corpus.document import DOC_ID_RE
from fedlab.errors import FedlabError
from fedlab.mcp.schema import DocumentResult, HintArg, SearchResult, Where, document_result, search_result

log = logging.getLogger("fedlab.mcp")
SERVER_NAME = "fedlab-fomc"
DEFAULT_CONFIG = "production"


@dataclass(frozen=True)
class Limits:
    max_top_k: int = 50
    max_query_chars: int = 2000


class FomcTools:
    """The tools' bodies, on a built pipeline; one search at a time (the SDK runs sync tools on
    worker threads, and the retriever's query-embedding timer is not thread-safe)."""

    def __init__(self, pipeline, limits: Limits = Limits()):
        self.pipeline = pipeline
        self.limits = limits
        self.docs = pipeline.corpus.by_id  # a property that rebuilds the dict: take it once
        base_k = int(getattr(pipeline.retriever, "top_k", 10))
        self.default_top_k = max(1, min(base_k, limits.max_top_k))
        self._lock = threading.Lock()

    def search(self, query: str, top_k: int | None = None, where: Where | None = None,
               hint: HintArg | None = None) -> SearchResult:
        from mcp.server.mcpserver.exceptions import ToolError

        if not query.strip():
            raise ToolError("query is blank: ask a question about FOMC statements or minutes")
        flt = where.to_filter() if where is not None else None
        if flt is not None and flt.empty:
            flt = None
        k = self.default_top_k if top_k is None else top_k
        date_hint = hint.to_hint() if hint is not None else None
        with self._lock:
            result = self.pipeline.search(query, k=k, hint=date_hint, flt=flt)
        log.info("search_fomc k=%d k_used=%d hits=%d filter=%s %.1f ms", k, result.k_used, len(result.hits),
                 flt, result.timings.get("total_ms", 0.0))
        return search_result(query, result, self.docs)

    def document(self, doc_id: str) -> DocumentResult:
        from mcp.server.mcpserver.exceptions import ToolError

        doc = self.docs.get(doc_id)
        if doc is None:
            dates = sorted(d.meeting_date for d in self.docs.values())
            span = f"{dates[0]} to {dates[-1]}" if dates else "none"
            raise ToolError(f"no document {doc_id!r} in the corpus ({len(self.docs)} documents, meetings {span}); "
                            "take doc_id from a search_fomc passage")
        return document_result(doc)


SEARCH_DESCRIPTION = """Search FOMC statements and minutes (federalreserve.gov) for passages that answer a question.

Dates in the question ("in March 2022", "during 2023") are read: passages from that range come
first. Returns ranked passages with chunk_id, doc_id, title, date (the meeting's decision date),
section, score and text. top_k is the base number of passages; a question about a whole year or
several years widens it (k_used). `where` is a hard filter, e.g.
{"doc_type": "minutes", "meeting_date": {"gte": "2022-01-01", "lte": "2022-12-31"}}.
`hint` overrides the date range read from the question."""

DOCUMENT_DESCRIPTION = """Fetch one cleaned FOMC document with its metadata and sections.

doc_id is "statement-YYYY-MM-DD" or "minutes-YYYY-MM-DD" (the meeting's decision date), as
returned in search_fomc passages."""


def build_server(pipeline, limits: Limits = Limits()):
    """An MCPServer exposing ``search_fomc`` and ``get_document`` on ``pipeline``."""
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations

    tools = FomcTools(pipeline, limits)
    server = MCPServer(SERVER_NAME, title="FOMC statements and minutes", version=_version(),
                       instructions="Search Federal Reserve FOMC statements and minutes; cite passages by doc_id.")
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False, idempotent_hint=True)

    Query = Annotated[str, Field(min_length=1, max_length=limits.max_query_chars,
                                 description="the question or keywords, in English")]
    TopK = Annotated[int, Field(ge=1, le=limits.max_top_k,
                                description=f"base number of passages (1..{limits.max_top_k})")]
    DocId = Annotated[str, Field(pattern=DOC_ID_RE.pattern, max_length=40,
                                 description="statement-YYYY-MM-DD or minutes-YYYY-MM-DD")]

    def search_fomc(query: Query, top_k: TopK = tools.default_top_k, where: Where | None = None,
                    hint: HintArg | None = None) -> SearchResult:
        return tools.search(query, top_k, where, hint)

    def get_document(doc_id: DocId) -> DocumentResult:
        return tools.document(doc_id)

    server.add_tool(search_fomc, description=SEARCH_DESCRIPTION, annotations=read_only)
    server.add_tool(get_document, description=DOCUMENT_DESCRIPTION, annotations=read_only)
    return server


def _version() -> str:
    from fedlab import __version__

    return __version__


@contextlib.contextmanager
def stdout_to_stderr():
    """Point fd 1 (and sys.stdout) at stderr: progress bars, prints and C libraries that write
    to stdout while the pipeline loads must not corrupt the protocol channel."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m fedlab.mcp", description=__doc__.splitlines()[0])
    p.add_argument("--config", default=DEFAULT_CONFIG,
                   help="a config name in conf/ or a path to a YAML config (default: production)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="a config override, e.g. --set retriever=bm25 (repeatable)")
    p.add_argument("--max-top-k", type=int, default=Limits.max_top_k, help="largest top_k a caller may ask for")
    p.add_argument("--max-query-chars", type=int, default=Limits.max_query_chars, help="longest query accepted")
    p.add_argument("--log-level", default="INFO", choices=("DEBUG", "INFO", "WARNING", "ERROR"))
    args = p.parse_args(argv)
    if args.max_top_k < 1 or args.max_query_chars < 1:
        p.error("--max-top-k and --max-query-chars must be positive")
    return args


def load_pipeline(config: str, overrides: list[str]):
    from fedlab.config import compose
    from fedlab.pipeline import build_pipeline

    cfg = compose(config, list(overrides))
    t0 = time.perf_counter()
    pipeline = build_pipeline(cfg, progress=False)
    pipeline.search("federal funds rate")  # loads a lazily loaded query model now, not on the first call
    log.info("pipeline %s (retriever=%s) on %d documents, %d chunks in %.1f s; cache %s", config,
             cfg.retriever.kind, len(pipeline.corpus.documents), len(pipeline.chunks), time.perf_counter() - t0,
             pipeline.info.cache)
    return pipeline


def main(argv: list[str] | None = None) -> None:
    import fedlab  # noqa: F401  (telemetry switches before the heavy imports)

    args = parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=args.log_level,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        with stdout_to_stderr():
            pipeline = load_pipeline(args.config, args.overrides)
            server = build_server(pipeline, Limits(args.max_top_k, args.max_query_chars))
    except FedlabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    log.info("serving %s on stdio", SERVER_NAME)
    try:
        server.run("stdio")
    except KeyboardInterrupt:
        pass

"""The MCP server: ``search_fomc`` and ``get_document`` over stdio, on one pipeline built at start
(``python -m fedlab.mcp``, see fedlab.mcp.__main__).

stdout is the protocol channel: the pipeline is built with fd 1 pointed at stderr, and while
serving the SDK keeps fd 1 diverted to stderr itself, so stray prints never reach the client.
Logs go to stderr. Arguments are validated by the tools' pydantic signatures (the published
input schemas); a bad call returns an ``is_error`` result and the server keeps serving. A line
on stdin that is not JSON is answered with a -32700 Parse error, a JSON value that is not a
JSON-RPC message with -32600 Invalid Request (``AnsweringReadStream``), a request whose id is not a
string or an integer (``"id": null``) with -32600 and id null (``CheckedLines``), and serving goes on.
"""
# No `from __future__ import annotations`: the tool signatures are built at run time from the
# limits, and the SDK reads their annotations as objects.
import contextlib
import logging
import os
import sys
import threading
import time
from dataclasses import dataclass
from typing import Annotated

from pydantic import BeforeValidator, Field

from fedlab.corpus.document import DOC_ID_RE
from fedlab.mcp.schema import (DocumentResult, HintArg, SearchResult, Where, document_result, search_result,
                               utf8_text)

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
        from fedlab.retrieval.dates import impossible_dates

        for said, why in impossible_dates(query)[:1]:  # not read as another month, nor its day as a word
            raise ToolError(f"the query names {said}, which is not a date ({why}): correct the day")
        flt = where.to_filter() if where is not None else None
        if flt is not None and flt.empty:
            flt = None
        k = self.default_top_k if top_k is None else top_k
        date_hint = hint.to_hint() if hint is not None else None
        with self._lock:
            try:
                result = self.pipeline.search(query, k=k, hint=date_hint, flt=flt)
            except OverflowError:  # a date read from the query, widened past date.max / date.min
                raise ToolError("a date in the query is out of range: name dates between 1900 and 2200, "
                                "or pass the range as `hint`") from None
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

    Query = Annotated[str, Field(min_length=1, max_length=limits.max_query_chars,  # Field first: its messages
                                 description="the question or keywords, in English"), BeforeValidator(utf8_text)]
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


def open_server(cfg, limits: Limits = Limits(), config_name: str = DEFAULT_CONFIG):
    """The server on ``cfg``'s pipeline, built and warmed up: ready to answer its first call fast."""
    return build_server(load_pipeline(cfg, config_name), limits)


def load_pipeline(cfg, config_name: str = DEFAULT_CONFIG):
    from fedlab.config import PIPELINE_GROUPS, require_keys
    from fedlab.pipeline import build_pipeline

    require_keys(cfg, PIPELINE_GROUPS, config_name)
    t0 = time.perf_counter()
    pipeline = build_pipeline(cfg, progress=False)
    warm_up(pipeline)
    log.info("pipeline %s (retriever=%s) on %d documents, %d chunks in %.1f s; cache %s", config_name,
             cfg.retriever.kind, len(pipeline.corpus.documents), len(pipeline.chunks), time.perf_counter() - t0,
             pipeline.info.cache)
    return pipeline


WARM_UP_QUERY = "federal funds rate"


def warm_up(pipeline) -> None:
    """Load every lazily loaded model now, not on the first call. A search alone is not enough:
    its query vector may come from the cache, and then the embedding model never loads."""
    pipeline.warm_up()  # the query model, loaded and run once past the query-vector cache
    pipeline.search(WARM_UP_QUERY)  # the index, BM25 and a reranker's model


# -- JSON-RPC over stdio: answer what does not parse ------------------------------------------
class AnsweringReadStream:
    """The SDK stdio transport's read stream, minus the lines that are not JSON-RPC messages.

    The transport passes such a line on as an exception, which the SDK only logs: the client
    waits for an answer forever. Here each one is answered (-32700 Parse error for a line that
    is not JSON, -32600 Invalid Request for JSON that is not a JSON-RPC 2.0 message, with the
    request's id when it has a usable one) and reading goes on; messages pass through as they
    are, with the sender context the SDK reads from ``last_context``.
    """

    def __init__(self, inner, write_stream):
        self._inner = inner
        self._write = write_stream

    @property
    def last_context(self):
        return getattr(self._inner, "last_context", None)

    async def receive(self):
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            reply = error_reply(item)
            if reply is not None:
                from mcp.shared.message import SessionMessage

                log.warning("answered an unreadable message: %s", reply.error.message)
                await self._write.send(SessionMessage(reply))

    def __aiter__(self):
        return self

    async def __anext__(self):
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    def close(self) -> None:
        self._inner.close()

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()


def error_reply(exc: Exception):
    """The JSON-RPC error response for a line the transport could not read as a message
    (None for a blank line, which needs no answer)."""
    from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
    from pydantic import ValidationError

    if not isinstance(exc, ValidationError):
        detail = " ".join(str(exc).split())[:200] or type(exc).__name__
        return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=INVALID_REQUEST,
                                                                     message=f"Invalid Request: {detail}"))
    errors = exc.errors()
    bad_json = next((e for e in errors if e["type"] == "json_invalid"), None)
    if bad_json is not None:
        if isinstance(bad_json.get("input"), str) and not bad_json["input"].strip():
            return None
        detail = bad_json.get("ctx", {}).get("error") or bad_json["msg"]
        return JSONRPCError(jsonrpc="2.0", id=None,
                            error=ErrorData(code=PARSE_ERROR, message=f"Parse error: {detail}"))
    message = next((e["input"] for e in errors if e["type"] == "missing" and len(e["loc"]) == 2
                    and isinstance(e.get("input"), dict)), None)
    if message is None:
        why = "the message is not a JSON object"
        request_id = None
    else:
        request_id = message.get("id")
        if isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
            request_id = None
        as_request = [e for e in errors if e["loc"][:1] == ("JSONRPCRequest",)]
        why = "; ".join(f"{'.'.join(str(x) for x in e['loc'][1:])}: {e['msg']}" for e in as_request[:3])
        why = f"not a JSON-RPC 2.0 request ({why})" if why else "not a JSON-RPC 2.0 message"
    return JSONRPCError(jsonrpc="2.0", id=request_id,
                        error=ErrorData(code=INVALID_REQUEST, message=f"Invalid Request: {why}"))


def run_stdio(server) -> None:
    """Serve ``server`` on stdin/stdout until the client closes the stream (or Ctrl-C)."""
    import anyio

    try:
        anyio.run(serve_stdio, server)
    except KeyboardInterrupt:
        pass


async def serve_stdio(server) -> None:
    """``MCPServer.run("stdio")``, with the read stream answering unreadable lines and stdin's
    lines checked for requests the SDK would read as notifications (``CheckedLines``)."""
    from mcp.server.stdio import stdio_server

    lowlevel = server._lowlevel_server  # what MCPServer.run_stdio_async serves
    with claimed_stdin() as lines:
        async with stdio_server(stdin=lines) as (read_stream, write_stream):
            lines.replies = write_stream
            await lowlevel.run(AnsweringReadStream(read_stream, write_stream), write_stream,
                               lowlevel.create_initialization_options())


@contextlib.contextmanager
def claimed_stdin():
    """stdin's lines as ``CheckedLines``, read from a private copy of fd 0 while fd 0 itself points
    at the null device (what the SDK does with a stdin it opens: nothing else reads the wire)."""
    import io

    import anyio

    private = os.dup(0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    try:
        # closefd=False: a worker thread may still block on it after serving ends; it is never recycled
        wire = io.TextIOWrapper(os.fdopen(private, "rb", closefd=False), encoding="utf-8", errors="replace")
        yield CheckedLines(anyio.wrap_file(wire))
    finally:
        os.dup2(private, 0)


class CheckedLines:
    """The lines of the wire, minus requests whose ``id`` is not a string or an integer (``null``,
    ``true``, ``1.5``, a list). The SDK reads such a message as a notification and never answers
    it, so its client waits forever; JSON-RPC 2.0 makes it an Invalid Request, answered here with
    an error whose ``id`` is null (the id cannot be told), and reading goes on."""

    def __init__(self, inner):
        self._inner = inner
        self.replies = None  # the transport's write stream, once it exists

    def __aiter__(self):
        return self._lines()

    async def _lines(self):
        async for line in self._inner:
            reply = unanswerable_request(line)
            if reply is None or self.replies is None:
                yield line
                continue
            from mcp.shared.message import SessionMessage

            log.warning("answered a request with an unusable id: %s", reply.error.message)
            await self.replies.send(SessionMessage(reply))


def unanswerable_request(line: str):
    """The -32600 Invalid Request error (id null) for a request the SDK would take for a notification
    because its ``id`` is not a string or an integer; None for any other line."""
    import json

    if '"id"' not in line:
        return None
    try:
        raw = json.loads(line)
    except ValueError:
        return None  # the transport answers it (Parse error)
    if not (isinstance(raw, dict) and "id" in raw and "method" in raw):
        return None
    from mcp.types import jsonrpc_message_adapter
    from mcp_types import INVALID_REQUEST, ErrorData, JSONRPCError, JSONRPCNotification

    try:
        parsed = jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError:
        return None  # not a message at all: AnsweringReadStream answers it
    if not isinstance(parsed, JSONRPCNotification):
        return None
    given = json.dumps(raw["id"])[:40]
    return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(
        code=INVALID_REQUEST, message=f"Invalid Request: id must be a string or an integer, not {given}"))

"""``McpSearcher``: the retrieval pipeline behind ``python -m fedlab.mcp``, called synchronously.

The SDK is async; the searcher runs it on its own event-loop thread. One task owns the
connection (anyio scopes must be entered and left in the same task) and waits for ``close()``;
calls are submitted to that loop and waited for. ``search`` returns the ``RetrievalResult``
``Pipeline.search`` would: hits carry real ``Chunk`` objects rebuilt from the tool result.

A ``hint`` (DateHint) travels as the tool's separate ``hint`` argument, not as ``where``: a hint
puts in-range passages first and still fills the list from outside the range, a ``where``
filter excludes everything outside it.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Self, TextIO

from fedlab.corpus.document import Document
from fedlab.errors import FedlabError
from fedlab.mcp.schema import HintArg, retrieval_result_from_json
from fedlab.index.filter import MetadataFilter
from fedlab.retrieval.types import DateHint, RetrievalResult


log = logging.getLogger(__name__)


class McpToolError(FedlabError):
    """The server refused a tool call (bad arguments, unknown document); the server lives on."""


def server_args(config: str = "production", overrides: Sequence[str] = (), extra: Sequence[str] = ()) -> list[str]:
    """The command line after the interpreter: ``-m fedlab.mcp --config ... --set k=v ...``."""
    args = ["-m", "fedlab.mcp", "--config", str(config)]
    for o in overrides:
        args += ["--set", str(o)]
    return args + list(extra)


def where_from_filter(flt: MetadataFilter | None) -> dict | None:
    """The ``where`` argument for a MetadataFilter (None when it constrains nothing)."""
    if flt is None or flt.empty:
        return None
    where: dict[str, Any] = {}
    if flt.doc_types:
        where["doc_type"] = list(flt.doc_types)
    span = {k: v for k, v in (("gte", flt.date_from), ("lte", flt.date_to)) if v is not None}
    if span:
        where["meeting_date"] = span
    return where


# What build_pipeline reads; a composed config handed to the searcher is passed on as these keys.
PIPELINE_KEYS = ("paths", "corpus", "chunker", "embedder", "index", "bm25", "retriever", "reranker")


def write_pipeline_config(cfg, directory: Path) -> Path:
    """``cfg``'s pipeline keys, resolved here (paths, env), as a YAML file the server composes."""
    from omegaconf import OmegaConf

    path = directory / "pipeline.yaml"
    subset = {k: OmegaConf.to_container(cfg[k], resolve=True) for k in PIPELINE_KEYS if k in cfg}
    path.write_text(OmegaConf.to_yaml(OmegaConf.create(subset)))
    return path


class McpSearcher:
    """A stdio MCP session with ``python -m fedlab.mcp``, kept open until ``close()``.

    config / overrides: the server's ``--config`` and ``--set`` values; ``config`` may also be a
    composed config (DictConfig), whose pipeline keys the server then loads. extra_args: more server
    flags (``--max-top-k 20``). env: variables added to the SDK's safe default environment.
    cwd: the server's working directory (default: this process's).
    errlog: where the server's stderr goes (a real file; default this process's stderr).
    timeout_s: per call; start_timeout_s: spawn + pipeline load + handshake.
    """

    def __init__(self, config: Any = "production", overrides: Sequence[str] = (), *,
                 extra_args: Sequence[str] = (), python: str = sys.executable, env: dict[str, str] | None = None,
                 cwd: str | None = None, errlog: TextIO | None = None, timeout_s: float = 120.0,
                 start_timeout_s: float = 300.0):
        from mcp import StdioServerParameters

        self._tmpdir: str | None = None
        if not isinstance(config, (str, os.PathLike)):
            self._tmpdir = tempfile.mkdtemp(prefix="fedlab-mcp-")
            config = write_pipeline_config(config, Path(self._tmpdir))
        self.params = StdioServerParameters(command=python, args=server_args(config, overrides, extra_args),
                                            env=_server_env(env), cwd=cwd)
        self.timeout_s = timeout_s
        self._errlog = errlog if errlog is not None else sys.stderr
        self._client = None
        self._closing = asyncio.Event()
        self._titles: dict[str, str] = {}
        self._documents: dict[str, Document] = {}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="fedlab-mcp-client", daemon=True)
        self._thread.start()
        self._ready: concurrent.futures.Future = concurrent.futures.Future()  # the handshake is done
        self._done: concurrent.futures.Future = concurrent.futures.Future()  # the session task has ended
        self._task: asyncio.Task | None = None
        self._loop.call_soon_threadsafe(self._start_session)
        command = " ".join([self.params.command, *self.params.args])
        try:
            self._ready.result(timeout=start_timeout_s)
        except concurrent.futures.TimeoutError:
            self.close()
            raise FedlabError(f"the MCP server `{command}` did not start within {start_timeout_s:g} s") from None
        except Exception as exc:
            self.close()
            raise FedlabError(f"the MCP server `{command}` did not start ({_describe(exc)}); "
                              "its stderr says why") from None

    def _start_session(self) -> None:
        self._task = self._loop.create_task(self._hold_session())
        self._task.add_done_callback(self._session_ended)

    def _session_ended(self, task: asyncio.Task) -> None:
        if not task.cancelled() and task.exception() is not None and self._ready.done():
            log.warning("the MCP session ended: %s", _describe(task.exception()))
        self._done.set_result(None)

    async def _hold_session(self) -> None:
        from mcp import Client, stdio_client

        try:
            transport = stdio_client(self.params, errlog=self._errlog)
            async with Client(transport, read_timeout_seconds=self.timeout_s) as client:
                self._client = client
                self._ready.set_result(None)
                await self._closing.wait()
        except BaseException as exc:
            if not self._ready.done():
                self._ready.set_exception(exc)
            else:
                raise
        finally:
            self._client = None

    # -- raw tool access -------------------------------------------------------------------
    def _call(self, coro_factory):
        if self._client is None:
            raise FedlabError("the MCP session is closed")
        future = asyncio.run_coroutine_threadsafe(coro_factory(self._client), self._loop)
        try:
            return future.result(timeout=self.timeout_s + 5)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise FedlabError(f"the MCP server did not answer within {self.timeout_s:g} s") from None
        except FedlabError:
            raise
        except Exception as exc:
            raise FedlabError(f"MCP call failed: {_describe(exc)}") from exc

    def list_tools(self):
        """The server's tools (``mcp.types.Tool``: name, description, input_schema, output_schema)."""
        return self._call(lambda c: c.list_tools()).tools

    def call_tool(self, name: str, arguments: dict[str, Any]):
        """The raw ``CallToolResult`` (``is_error`` results are returned, not raised)."""
        return self._call(lambda c: c.call_tool(name, arguments))

    def _structured(self, name: str, arguments: dict[str, Any]) -> dict:
        result = self.call_tool(name, arguments)
        if result.is_error:
            text = " ".join(getattr(block, "text", "") for block in result.content).strip()
            raise McpToolError(text or f"{name} failed")
        return result.structured_content

    # -- the Pipeline-shaped API -------------------------------------------------------------
    def search(self, question: str, k: int | None = None, hint: DateHint | None = None,
               flt: MetadataFilter | None = None) -> RetrievalResult:
        """``Pipeline.search`` over MCP. ``timings`` are the server's, plus ``rpc_ms`` (the round trip)."""
        args: dict[str, Any] = {"query": question}
        if k is not None:
            args["top_k"] = int(k)
        where = where_from_filter(flt)
        if where is not None:
            args["where"] = where
        if hint is not None:  # sent as is: the server validates it, and refuses it as a tool error
            args["hint"] = HintArg.model_construct(date_from=hint.date_from, date_to=hint.date_to, scope=hint.scope,
                                                   text=hint.text).model_dump()
        t0 = time.perf_counter()
        data = self._structured("search_fomc", args)
        rpc_ms = (time.perf_counter() - t0) * 1000
        for p in data["passages"]:
            self._titles[p["doc_id"]] = p["title"]
        result = retrieval_result_from_json(data)
        result.timings["rpc_ms"] = rpc_ms
        return result

    def get_document(self, doc_id: str) -> dict:
        """The cleaned document and its metadata: doc_id, doc_type, meeting_date, release_date,
        title, url, meeting, sections [{title, start, end}], text."""
        doc = self._structured("get_document", {"doc_id": doc_id})
        self._titles[doc["doc_id"]] = doc["title"]
        return doc

    def document(self, doc_id: str) -> Document | None:
        """The corpus's ``Document`` (cached after the first fetch); None for an unknown id."""
        if doc_id not in self._documents:
            try:
                self._documents[doc_id] = Document.from_json(self.get_document(doc_id))
            except McpToolError:
                return None
        return self._documents[doc_id]

    def title(self, doc_id: str) -> str:
        """A document's title: from the passages seen so far, else fetched once."""
        if doc_id not in self._titles:
            self.get_document(doc_id)
        return self._titles[doc_id]

    @property
    def titles(self) -> dict[str, str]:
        """doc_id -> title for every document seen in a result so far."""
        return dict(self._titles)

    # -- lifetime ------------------------------------------------------------------------------
    def close(self) -> None:
        """End the session (the SDK closes the server's stdin, then stops it) and the loop thread."""
        if not self._loop.is_closed():
            if self._ready.done():
                self._loop.call_soon_threadsafe(self._closing.set)
            else:  # still starting: cancelling the task makes the SDK stop the server process
                self._loop.call_soon_threadsafe(lambda: self._task and self._task.cancel())
            with contextlib.suppress(concurrent.futures.TimeoutError):
                self._done.result(timeout=20)  # the SDK's shutdown is bounded (stdin close, TERM, KILL)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)
            if not self._thread.is_alive():
                self._loop.close()
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        if getattr(self, "_loop", None) is not None and not self._loop.is_closed():
            self.close()


def _server_env(extra: dict[str, str] | None) -> dict[str, str]:
    """Pass the switches that keep the server offline, quiet and pointed at the same data."""
    keys = ["FEDLAB_DATA_DIR", "FEDLAB_MIRROR", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HOME",
            "PYTHONPATH", "VIRTUAL_ENV"]
    from fedlab.env import TELEMETRY_OFF

    env = {k: os.environ[k] for k in (*keys, *TELEMETRY_OFF) if k in os.environ}
    env.update(extra or {})
    return env


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(e) for e in exc.exceptions)
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__

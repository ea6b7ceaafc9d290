"""The MCP server over real stdio: tools, validation, and the same retrieval as the direct pipeline."""
from __future__ import annotations

import statistics
import sys
import time

import anyio
from pathlib import Path

import pytest

from fedlab.errors import FedlabError
from fedlab.index.filter import MetadataFilter
from fedlab.retrieval.types import DateHint

QUESTIONS = [
    "What did the Committee decide about the federal funds rate in March 2022?",
    "How did the Committee describe inflation expectations?",
    "balance sheet runoff during 2023",
    "What did participants say about bank stress in March 2023?",
    "labor market conditions since 2024",
]


@pytest.fixture(scope="module")
def overrides(corpus_dir) -> list[str]:
    return ["retriever=bm25", f"paths.data_dir={corpus_dir.parent.parent}"]


@pytest.fixture(scope="module")
def direct(overrides):
    """The in-process pipeline; building it first warms the cache the servers read."""
    from fedlab.config import compose
    from fedlab.pipeline import build_pipeline

    return build_pipeline(compose("evaluate", overrides), progress=False)


@pytest.fixture(scope="module")
def server_log(tmp_path_factory):
    with open(tmp_path_factory.mktemp("mcp") / "server.log", "w+") as f:
        yield f


@pytest.fixture(scope="module")
def searcher(direct, overrides, server_log):
    from fedlab.mcp.client import McpSearcher

    with McpSearcher("evaluate", overrides, errlog=server_log, timeout_s=60) as s:
        yield s


def test_sdk_client_over_stdio(direct, overrides, server_log):
    """The SDK's own stdio client: both tools listed with schemas, both answer, errors don't kill it."""
    from mcp import Client, StdioServerParameters, stdio_client

    from fedlab.mcp.client import server_args

    params = StdioServerParameters(command=sys.executable, args=server_args("evaluate", overrides))

    async def session():
        async with Client(stdio_client(params, errlog=server_log)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            found = await client.call_tool("search_fomc", {"query": QUESTIONS[0], "top_k": 3})
            refused = await client.call_tool("get_document", {"doc_id": "../../etc/passwd"})
            doc_id = found.structured_content["passages"][0]["doc_id"]
            doc = await client.call_tool("get_document", {"doc_id": doc_id})
            return tools, found, refused, doc

    tools, found, refused, doc = anyio.run(session)
    assert set(tools) == {"search_fomc", "get_document"}
    search_schema = tools["search_fomc"].input_schema
    assert search_schema["required"] == ["query"]
    assert {"query", "top_k", "where", "hint"} <= set(search_schema["properties"])
    assert search_schema["properties"]["top_k"]["maximum"] == 50
    assert tools["get_document"].input_schema["required"] == ["doc_id"]
    assert tools["search_fomc"].output_schema and tools["get_document"].output_schema

    assert not found.is_error
    passages = found.structured_content["passages"]
    expected = direct.search(QUESTIONS[0], k=3)
    assert [p["chunk_id"] for p in passages] == [h.chunk.chunk_id for h in expected.hits]
    first = passages[0]
    assert {"chunk_id", "doc_id", "title", "date", "section", "score", "text", "start", "end", "doc_type"} <= set(first)
    source = direct.corpus.by_id[first["doc_id"]]
    assert first["title"] == source.title and first["date"] == source.meeting_date
    assert first["text"] == source.text[first["start"]:first["end"]]

    assert refused.is_error and "doc_id" in refused.content[0].text
    assert not doc.is_error
    assert doc.structured_content["text"] == source.text
    assert doc.structured_content["sections"][0]["title"] == source.sections[0].title


BAD_CALLS = [
    ("search_fomc", {"query": "inflation", "top_k": 0}, "greater than or equal to 1"),
    ("search_fomc", {"query": "inflation", "top_k": 1000}, "less than or equal to 50"),
    ("search_fomc", {"query": "inflation", "where": {"speaker": "Powell"}}, "speaker"),
    ("search_fomc", {"query": "inflation", "where": {"meeting_date": {"after": "2022-01-01"}}}, "after"),
    ("search_fomc", {"query": "inflation", "where": {"meeting_date": {"gte": "2022-13-01"}}}, "not a calendar date"),
    ("search_fomc", {"query": "inflation", "where": {"meeting_date": {"gte": "01/02/2022"}}}, "pattern"),
    ("search_fomc", {"query": "inflation", "where": {"meeting_date": {"gte": "2023-01-01", "lte": "2022-01-01"}}},
     "range is empty"),
    ("search_fomc", {"query": "inflation", "where": {"doc_type": "speech"}}, "statement"),
    ("search_fomc", {"query": "inflation", "hint": {"date_from": "2022-01-01", "scope": "decade"}}, "scope"),
    ("search_fomc", {"query": "x" * 10_000}, "at most 2000 characters"),
    ("search_fomc", {"query": ""}, "at least 1 character"),
    ("search_fomc", {"query": "  \n "}, "blank"),
    ("search_fomc", {"query": "What did the FOMC decide on February 29 2021?"},
     "the query names February 29 2021, which is not a date (2021 has no February 29"),
    ("search_fomc", {"top_k": 5}, "query"),
    ("get_document", {"doc_id": "../../etc/passwd"}, "pattern"),
    ("get_document", {"doc_id": "minutes-2022-03-16/../../../etc/passwd"}, "doc_id"),
    ("get_document", {"doc_id": "minutes-2099-01-01"}, "no document 'minutes-2099-01-01'"),
    # hint dates: a sane range (adding a day to 9999-12-31 overflowed), ordered as `where` requires
    ("search_fomc", {"query": "inflation", "hint": {"date_from": "9999-12-31", "scope": "year"}},
     "9999-12-31 is outside the dates a hint may name (1900-01-01 to 2200-12-31)"),
    ("search_fomc", {"query": "inflation", "hint": {"date_to": "0001-01-01", "scope": "year"}},
     "0001-01-01 is outside the dates a hint may name"),
    ("search_fomc", {"query": "inflation", "hint": {"date_from": "2023-01-01", "date_to": "2022-01-01", "scope": "year"}},
     "hint range is empty: date_from 2023-01-01 is after date_to 2022-01-01"),
]


@pytest.mark.parametrize("tool,args,message", BAD_CALLS, ids=[f"{t}-{i}" for i, (t, _, _) in enumerate(BAD_CALLS)])
def test_bad_input_is_a_tool_error_and_the_server_lives_on(searcher, tool, args, message):
    result = searcher.call_tool(tool, args)
    assert result.is_error
    assert message in result.content[0].text
    assert searcher.search("federal funds rate", k=2).hits  # still answering


def test_a_far_future_date_in_the_query_searches_normally(searcher):
    """The date parser reads 9999-12-31; widening it by the grace day once overflowed."""
    result = searcher.call_tool("search_fomc", {"query": "What did the Committee decide on 9999-12-31?"})
    assert not result.is_error


def test_hint_errors_name_the_field(searcher):
    late = searcher.call_tool("search_fomc", {"query": "rates", "hint": {"date_to": "9999-12-31", "scope": "year"}})
    assert late.is_error and "hint.date_to" in late.content[0].text
    assert "OverflowError" not in late.content[0].text


def test_hint_from_the_searcher_is_refused_by_the_server(searcher):
    """The client sends a DateHint as it is; the server's refusal is an McpToolError, not a crash."""
    from fedlab.mcp.client import McpToolError

    with pytest.raises(McpToolError, match="hint range is empty"):
        searcher.search("rates", hint=DateHint("2024-01-01", "2023-01-01", "year", ""))
    with pytest.raises(McpToolError, match="outside the dates a hint may name"):
        searcher.search("rates", hint=DateHint("9999-12-31", None, "year", ""))


def test_tool_errors_raise_in_the_searcher(searcher):
    from fedlab.mcp.client import McpToolError

    with pytest.raises(McpToolError, match="no document 'minutes-2099-01-01'"):
        searcher.get_document("minutes-2099-01-01")
    with pytest.raises(McpToolError, match="at most 2000 characters"):
        searcher.search("x" * 10_000)
    with pytest.raises(McpToolError, match="less than or equal to 50"):
        searcher.search("inflation", k=51)


def test_same_hits_as_the_direct_pipeline(searcher, direct):
    for question in QUESTIONS:
        for k in (None, 5):
            want, got = direct.search(question, k=k), searcher.search(question, k=k)
            assert [h.chunk.chunk_id for h in got.hits] == [h.chunk.chunk_id for h in want.hits]
            assert [h.chunk for h in got.hits] == [h.chunk for h in want.hits]  # rebuilt, field for field
            assert all(abs(g.score - w.score) <= 1e-6 and g.rank == w.rank for g, w in zip(got.hits, want.hits))
            assert (got.hint, got.k_used) == (want.hint, want.k_used)


def test_supplied_hint_and_filter_match_the_retriever(searcher, direct):
    hint = DateHint("2023-01-01", "2023-12-31", "year", "")
    want, got = direct.search("balance sheet", hint=hint), searcher.search("balance sheet", hint=hint)
    assert [h.chunk.chunk_id for h in got.hits] == [h.chunk.chunk_id for h in want.hits]
    assert got.hint == hint and got.k_used == want.k_used == 30

    flt = MetadataFilter("2022-01-01", "2022-06-30", ("minutes",))
    want = direct.retriever.search("inflation pressures", k=8, flt=flt)
    got = searcher.search("inflation pressures", k=8, flt=flt)
    assert [h.chunk.chunk_id for h in got.hits] == [h.chunk.chunk_id for h in want.hits]
    assert got.hits and all(flt.matches(h.chunk.meeting_date, h.chunk.doc_type) for h in got.hits)

    raw = searcher.call_tool("search_fomc", {"query": "inflation", "top_k": 4,
                                             "where": {"doc_type": "statement", "meeting_date": {"gte": "2024-01-01"}}})
    passages = raw.structured_content["passages"]
    assert len(passages) == 4 and all(p["doc_type"] == "statement" and p["date"] >= "2024-01-01" for p in passages)


def test_get_document_and_titles(searcher, direct):
    doc = direct.corpus.by_id["statement-2024-01-31"]
    got = searcher.get_document(doc.doc_id)
    assert (got["title"], got["meeting_date"], got["url"], got["text"]) == (doc.title, doc.meeting_date, doc.url, doc.text)
    assert searcher.title(doc.doc_id) == doc.title
    assert searcher.document(doc.doc_id) == doc  # the corpus's Document, rebuilt
    assert searcher.document("minutes-2099-01-01") is None
    hit = searcher.search(QUESTIONS[0], k=1).hits[0]
    assert searcher.titles[hit.chunk.doc_id] == direct.corpus.by_id[hit.chunk.doc_id].title


def test_stdio_latency_against_direct(searcher, direct, record_property):
    """Median per-call latency over 20 calls; the stdio round trip adds milliseconds, not seconds."""
    for q in QUESTIONS:
        searcher.search(q), direct.search(q)
    direct_ms, stdio_ms = [], []
    for i in range(20):
        q = QUESTIONS[i % len(QUESTIONS)]
        t0 = time.perf_counter()
        direct.search(q)
        direct_ms.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        searcher.search(q)
        stdio_ms.append((time.perf_counter() - t0) * 1000)
    d, s = statistics.median(direct_ms), statistics.median(stdio_ms)
    record_property("mcp_latency", {"direct_ms": d, "stdio_ms": s, "ratio": s / d})
    print(f"\nsearch median: direct {d:.1f} ms, MCP stdio {s:.1f} ms, ratio {s / d:.2f}")
    assert s < d + 250


def test_limits_are_configurable_in_process(direct):
    """--max-top-k / --max-query-chars shape the published schema and the validation."""
    from mcp import Client

    from fedlab.mcp.server import Limits, build_server

    async def session():
        async with Client(build_server(direct, Limits(max_top_k=5, max_query_chars=50))) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            too_many = await client.call_tool("search_fomc", {"query": "rates", "top_k": 6})
            too_long = await client.call_tool("search_fomc", {"query": "r" * 51})
            ok = await client.call_tool("search_fomc", {"query": "rates"})
            return tools, too_many, too_long, ok

    tools, too_many, too_long, ok = anyio.run(session)
    props = tools["search_fomc"].input_schema["properties"]
    assert props["top_k"]["maximum"] == 5 and props["top_k"]["default"] == 5
    assert props["query"]["maxLength"] == 50
    assert too_many.is_error and too_long.is_error and not ok.is_error
    assert len(ok.structured_content["passages"]) == 5


def test_stdout_guard_sends_stray_output_to_stderr(capfd):
    import os

    from fedlab.mcp.server import stdout_to_stderr

    with stdout_to_stderr():
        print("from print")
        os.write(1, b"from fd 1\n")
    print("after")
    out, err = capfd.readouterr()
    assert out == "after\n"
    assert "from print" in err and "from fd 1" in err


def test_server_that_cannot_start_is_a_clear_error(server_log):
    from fedlab.mcp.client import McpSearcher

    with pytest.raises(FedlabError, match="did not start"):
        McpSearcher("no_such_config", errlog=server_log, start_timeout_s=60)
    server_log.seek(0)
    assert "no config 'no_such_config'" in server_log.read()


def test_agent_answers_the_same_through_mcp_and_direct(overrides, direct):
    pytest.importorskip("fedlab.agent.build")
    from fedlab.agent.build import build_agent
    from fedlab.agent.answering import compose_config

    sets = [*overrides, "lm=extractive", f"agent.calibration={Path(__file__).resolve().parent.parent / 'conf/calibration/extractive-bm25.json'}"]
    via_direct = build_agent(compose_config("evaluate", sets))
    via_mcp = build_agent(compose_config("evaluate", [*sets, "agent.transport=mcp"]))
    try:
        for question in [QUESTIONS[0], QUESTIONS[3], "What is the capital of France?"]:
            a, b = via_direct(question), via_mcp(question)
            assert (b.answer, b.citations, b.abstained) == (a.answer, a.citations, a.abstained)
            assert (b.confidence, b.retrieved_chunk_ids) == (a.confidence, a.retrieved_chunk_ids)
    finally:
        via_mcp.search_access.close()


def test_text_that_is_not_utf8_is_a_tool_error(direct):
    """Over stdio such text cannot arrive (it is a JSON parse error); in process it can."""
    from mcp import Client

    from fedlab.mcp.server import build_server

    async def session():
        async with Client(build_server(direct)) as client:
            query = await client.call_tool("search_fomc", {"query": b"What about \xff rates?".decode("utf-8",
                                                                                                    "surrogateescape")})
            hint = await client.call_tool("search_fomc", {"query": "rates", "hint": {"scope": "year", "text": "x\ud800"}})
            ok = await client.call_tool("search_fomc", {"query": "What about rates? \u00e9t\u00e9 \u2014 \U0001F4C8"})
            return query, hint, ok

    query, hint, ok = anyio.run(session)
    assert query.is_error and "not valid UTF-8 text: byte 0xff at character 12" in query.content[0].text
    assert hint.is_error and "hint.text" in hint.content[0].text and "lone surrogate U+D800" in hint.content[0].text
    assert not ok.is_error


# -- the stdio transport itself: lines that are not JSON-RPC messages ----------------------------
class RawServer:
    """``python -m fedlab.mcp`` as a subprocess, spoken to in raw bytes, its stdout read line by line."""

    def __init__(self, overrides, errlog):
        import queue
        import subprocess
        import threading

        from fedlab.mcp.client import server_args

        self.proc = subprocess.Popen([sys.executable, *server_args("evaluate", overrides)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=errlog)
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [self.lines.put(line) for line in self.proc.stdout], daemon=True).start()

    def send(self, *raw: bytes) -> None:
        for line in raw:
            self.proc.stdin.write(line)
        self.proc.stdin.flush()

    def replies(self, until_id, timeout: float = 120) -> list[dict]:
        """Every message on stdout up to and including the response with id ``until_id``."""
        import json
        import queue

        got, deadline = [], time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=1)
            except queue.Empty:
                continue
            got.append(json.loads(line))  # every stdout line is one JSON-RPC message
            if got[-1].get("id") == until_id and ("result" in got[-1] or "error" in got[-1]):
                return got
        raise AssertionError(f"no response with id {until_id!r} within {timeout} s; got {got}")

    def close(self) -> int:
        self.proc.stdin.close()
        return self.proc.wait(timeout=30)


INITIALIZE = (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
              b'"capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}\n')
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'


def test_unparsable_lines_get_json_rpc_errors_and_the_server_lives_on(direct, overrides, server_log):
    server = RawServer(overrides, server_log)
    try:
        server.send(b"{not json\n", b"\n", b"\xff\xfe\x00 binary junk\n",
                    b'{"jsonrpc":"2.0","id":41,"method":7}\n',  # valid JSON, invalid request: its id comes back
                    b'{"jsonrpc":"1.0","id":"v1","method":"ping"}\n',
                    b"[1, 2, 3]\n", b"42\n",
                    INITIALIZE)
        before = server.replies(until_id=1)
        errors, init = before[:-1], before[-1]
        assert init["result"]["serverInfo"]["name"] == "fedlab-fomc"
        assert [(e["id"], e["error"]["code"]) for e in errors] == [
            (None, -32700), (None, -32700), (41, -32600), ("v1", -32600), (None, -32600), (None, -32600)]
        assert all(e["jsonrpc"] == "2.0" for e in errors)
        assert errors[0]["error"]["message"].startswith("Parse error: ")
        assert " at at " not in errors[0]["error"]["message"]
        assert "method" in errors[2]["error"]["message"] and errors[2]["error"]["message"].startswith("Invalid Request")
        assert "not a JSON object" in errors[4]["error"]["message"]

        # after the handshake too, and a valid request is still answered afterwards
        server.send(INITIALIZED, b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_fomc",\n',
                    b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search_fomc",'
                    b'"arguments":{"query":"federal funds rate","top_k":2}}}\n')
        after = server.replies(until_id=3)
        assert [(m["id"], m["error"]["code"]) for m in after[:-1]] == [(None, -32700)]
        result = after[-1]["result"]
        assert not result.get("isError") and len(result["structuredContent"]["passages"]) == 2
        want = direct.search("federal funds rate", k=2)
        assert [p["chunk_id"] for p in result["structuredContent"]["passages"]] == [h.chunk.chunk_id for h in want.hits]
    finally:
        assert server.close() == 0


def test_a_request_whose_id_is_not_a_string_or_an_integer_is_answered(overrides, server_log):
    """`"id": null` (or true, 1.5) made the SDK read a request as a notification: no reply, and the
    client waited forever. JSON-RPC 2.0: an Invalid Request, answered with id null."""
    server = RawServer(overrides, server_log)
    try:
        server.send(INITIALIZE)
        server.replies(until_id=1)
        server.send(INITIALIZED,
                    b'{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"search_fomc",'
                    b'"arguments":{"query":"federal funds rate","top_k":2}}}\n',
                    b'{"jsonrpc":"2.0","id":null,"method":"ping"}\n',
                    b'{"jsonrpc":"2.0","id":true,"method":"ping"}\n',
                    b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}\n',
                    b'{"jsonrpc":"2.0","id":5,"method":"ping"}\n')
        got = server.replies(until_id=5, timeout=60)
        errors, pong = got[:-1], got[-1]
        assert [(e["id"], e["error"]["code"]) for e in errors] == [(None, -32600)] * 4
        assert errors[0]["error"]["message"] == "Invalid Request: id must be a string or an integer, not null"
        assert "not 1.5" in errors[3]["error"]["message"]
        assert pong == {"jsonrpc": "2.0", "id": 5, "result": {}}
    finally:
        assert server.close() == 0


# -- warm-up --------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def small_dense_overrides(mirror_dir, tmp_path_factory) -> list[str]:
    """A dense pipeline on the 2025 documents only (a few hundred chunks to embed)."""
    import os

    from rich.console import Console

    from fedlab.corpus.ingest import run_ingest

    data = tmp_path_factory.mktemp("small")
    run_ingest(name="fomc", base_url="https://www.federalreserve.gov", out_dir=data / "corpus" / "fomc",
               raw_cache_dir=data / "raw", years=range(2025, 2026), mirror=str(mirror_dir),
               console=Console(file=open(os.devnull, "w")))
    return ["retriever=dense", "embedder=paraphrase_minilm_l3", f"paths.data_dir={data}"]


def test_warm_up_loads_the_model_when_the_warm_up_query_is_cached(small_dense_overrides):
    """What the server does before it reports ready: the second start finds every artifact and the
    warm-up query's vector in the cache, and must still load the embedding model."""
    from fedlab.mcp.server import WARM_UP_QUERY, load_pipeline

    from fedlab.config import compose
    from fedlab.mcp.server import warm_up
    from fedlab.pipeline import build_pipeline

    load_pipeline(compose("evaluate", small_dense_overrides))  # builds the artifacts, caches the warm-up vector
    pipeline = load_pipeline(compose("evaluate", small_dense_overrides))
    assert pipeline.info.cache["embeddings"] == "hit" and pipeline.info.cache["index"] == "hit"
    assert pipeline.embedder._loaded is True  # the model behind the query-vector cache
    assert pipeline.search(WARM_UP_QUERY).hits

    # The cached warm-up search alone leaves the model unloaded; warm_up loads it.
    from fedlab import memo

    memo.forget()  # as in a new server process: nothing loaded yet (fedlab.memo keeps the model otherwise)
    fresh = build_pipeline(compose("evaluate", small_dense_overrides), progress=False)
    if hasattr(fresh.embedder, "time_model"):
        fresh.embedder.time_model = False  # a cached vector is then served without running the model
    fresh.search(WARM_UP_QUERY)
    assert fresh.embedder._loaded is False
    warm_up(fresh)
    assert fresh.embedder._loaded is True

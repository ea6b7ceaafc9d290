"""The MCP server over real stdio: tools, validation, and the same retrieval as the direct pipeline."""
from __future__ import annotations

import statistics
import sys
import time

import anyio
import pytest

from fedlab.errors import FedlabError
from fedlab.retrieval.types import DateHint, MetadataFilter

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
    ("search_fomc", {"top_k": 5}, "query"),
    ("get_document", {"doc_id": "../../etc/passwd"}, "pattern"),
    ("get_document", {"doc_id": "minutes-2022-03-16/../../../etc/passwd"}, "doc_id"),
    ("get_document", {"doc_id": "minutes-2099-01-01"}, "no document 'minutes-2099-01-01'"),
]


@pytest.mark.parametrize("tool,args,message", BAD_CALLS, ids=[f"{t}-{i}" for i, (t, _, _) in enumerate(BAD_CALLS)])
def test_bad_input_is_a_tool_error_and_the_server_lives_on(searcher, tool, args, message):
    result = searcher.call_tool(tool, args)
    assert result.is_error
    assert message in result.content[0].text
    assert searcher.search("federal funds rate", k=2).hits  # still answering


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
    from fedlab.ask import compose_config

    sets = [*overrides, "lm=extractive"]
    via_direct = build_agent(compose_config("evaluate", sets))
    via_mcp = build_agent(compose_config("evaluate", [*sets, "agent.transport=mcp"]))
    try:
        for question in [QUESTIONS[0], QUESTIONS[3], "What is the capital of France?"]:
            a, b = via_direct(question), via_mcp(question)
            assert (b.answer, b.citations, b.abstained) == (a.answer, a.citations, a.abstained)
            assert (b.confidence, b.retrieved_chunk_ids) == (a.confidence, a.retrieved_chunk_ids)
    finally:
        via_mcp.search_access.close()

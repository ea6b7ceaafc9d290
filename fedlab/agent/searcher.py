"""What the agent searches through: the in-process pipeline or the MCP client (agent.transport).

The agent needs only ``search(question, k=None, hint=None) -> RetrievalResult`` and a document
lookup for titles and passage text; both transports provide them. The question's embedding, which
the answerability model's question head reads, is the pipeline's query vector in process; over MCP
the agent embeds the question itself with the config's embedder, so that both transports give the
same confidence.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from fedlab.corpus.document import Document
from fedlab.errors import FedlabError

TRANSPORTS = ("direct", "mcp")


@dataclass
class SearchAccess:
    searcher: Any  # has search(question, k=None, hint=None) -> RetrievalResult
    document: Callable[[str], Document | None]  # doc_id -> Document (None when unknown)
    close: Callable[[], None] = lambda: None
    # question -> its embedding; None: the searcher's own question_vector, if it has one
    question_vector: Callable[[str], Any] | None = None


def open_direct(cfg, pipeline=None) -> SearchAccess:
    if pipeline is None:
        from fedlab.pipeline import build_pipeline

        # A cold cache builds for minutes (embedding the corpus): say what, with progress, on
        # stderr (stdout carries `ask --json` and the MCP protocol). Cache hits stay quiet.
        pipeline = build_pipeline(cfg, progress=True)
    by_id = pipeline.corpus.by_id  # a property that rebuilds the dict: read it once
    return SearchAccess(pipeline, by_id.get)


def open_mcp(cfg) -> SearchAccess:
    try:
        from fedlab.mcp.client import McpSearcher
    except ImportError:
        raise FedlabError("agent.transport=mcp needs fedlab.mcp.client.McpSearcher, which is not installed "
                          "in this checkout: use --set agent.transport=direct") from None
    searcher = McpSearcher(cfg)
    lookup = getattr(searcher, "document", None)
    if lookup is None and getattr(searcher, "corpus", None) is not None:
        lookup = searcher.corpus.by_id.get
    close = getattr(searcher, "close", None) or (lambda: None)
    from fedlab.pipeline import question_embedder

    embedder = question_embedder(cfg)  # loads its model on the first question
    return SearchAccess(searcher, lookup or (lambda doc_id: None), close, embedder.query_vector)


def open_search(cfg, transport: str, pipeline=None) -> SearchAccess:
    if transport == "direct":
        return open_direct(cfg, pipeline)
    if transport == "mcp":
        return open_mcp(cfg)
    raise FedlabError(f"agent.transport={transport!r}: choose one of {', '.join(TRANSPORTS)}")

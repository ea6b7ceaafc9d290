"""Real statements in paragraph chunks with the packaged paraphrase-MiniLM-L3 (ONNX), an exact
index and BM25: a small real retrieval stack for tests that rank across meetings; and the
unmodelled agent over the real corpus (``ask_agent``)."""
from __future__ import annotations

import re
from collections.abc import Callable

from fedlab.chunking.chunk import Chunk
from fedlab.corpus.document import Document
from fedlab.index.bm25 import BM25Index
from fedlab.index.exact import ExactIndex
from fedlab.pipeline import chunk_meta


def statement_stack(documents, keep: Callable[[str], bool]):
    """(chunks, embedder, index, bm25) over the statements whose meeting date ``keep`` accepts,
    one chunk per paragraph longer than 80 characters."""
    from fedlab.embedding.onnx import OnnxBertEmbedder

    chunks = []
    for d in documents:
        if d.doc_type != "statement" or not keep(d.meeting_date):
            continue
        for m in re.finditer(r"[^\n]+", d.text):
            if len(m.group()) > 80:
                chunks.append(Chunk(f"{d.doc_id}#{m.start()}", d.doc_id, d.doc_type, d.meeting_date, None,
                                    m.start(), m.end(), m.group(), m.group()))
    embedder = OnnxBertEmbedder(name="paraphrase_minilm_l3", model="paraphrase_minilm_l3", max_seq_length=128,
                                pooled_output="461")
    index = ExactIndex()
    index.build(embedder.embed_documents([c.embed_text for c in chunks]), chunk_meta(chunks))
    bm25 = BM25Index()
    bm25.build([c.text for c in chunks], chunk_meta(chunks))
    return chunks, embedder, index, bm25


def ask_agent(corpus_dir, question: str, *sets: str):
    """The unmodelled agent's answer over the corpus at ``corpus_dir``, searched by BM25 with events
    on, ``sets`` overriding the config."""
    from fedlab.agent.answering import compose_config
    from fedlab.agent.build import build_agent
    from fedlab.agent.searcher import open_search

    cfg = compose_config("evaluate", ["retriever=bm25", "retriever.events=true", "agent.calibration=null",
                                      f"paths.data_dir={corpus_dir.parent.parent}", *sets])
    search = open_search(cfg, "direct")
    try:
        return build_agent(cfg, search=search)(question)
    finally:
        search.close()


def statement(date: str, *sentences: str) -> Document:
    """A synthetic policy statement of ``date`` holding ``sentences``."""
    return Document(f"statement-{date}", "statement", date, None, f"FOMC statement {date}", "", " ".join(sentences))

"""Real statements in paragraph chunks with the packaged paraphrase-MiniLM-L3 (ONNX), an exact
index and BM25: a small real retrieval stack for tests that rank across meetings."""
from __future__ import annotations

import re
from collections.abc import Callable

from fedlab.chunking.chunk import Chunk
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

"""Chunkers: documents + an embedder's tokenizer → chunks with exact character offsets."""
from fedlab.chunking.base import Chunker, ChunkingResult
from fedlab.chunking.chunk import Chunk, make_chunk_id
from fedlab.chunking.contextual import ContextualChunker
from fedlab.chunking.factory import instantiate_chunker
from fedlab.chunking.recursive import RecursiveChunker, SectionChunker
from fedlab.chunking.small_to_big import SmallToBigChunker
from fedlab.chunking.stats import ChunkingStats
from fedlab.chunking.tokenizers import HFTokenizerSpans, TokenCounter

__all__ = [
    "Chunk", "Chunker", "ChunkingResult", "ChunkingStats", "ContextualChunker", "HFTokenizerSpans",
    "RecursiveChunker", "SectionChunker", "SmallToBigChunker", "TokenCounter", "instantiate_chunker", "make_chunk_id",
]

"""The query side: date hints, first-stage retrievers, two-pass date-aware search, rerankers.

Build the pipeline with :func:`fedlab.retrieval.factory.build_retriever` (see its module
docstring); modules import nothing heavy until a model reranker is constructed.
"""

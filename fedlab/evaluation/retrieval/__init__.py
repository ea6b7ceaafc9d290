"""Retrieval evaluation, one idea per module (none imports MLflow):

- ``relevance``: span-based judgments (a chunk covers >= half of an evidence quote) and qrels.
- ``metrics``: recall@k, mrr@10, ndcg@10, hit@k, doc_recall@k and per-question rows.
- ``trec``: TREC qrels/run files, written atomically and read back as ranx objects.
- ``latency``: per-stage p50/p95 latency metrics.
- ``significance``: paired tests between two runs (ranx.compare or per-question scores).
- ``harness``: a question set through a pipeline, measured (the retrieval half of an evaluation run).
- ``report``: the console summary of a run's metrics.

Modules are imported by name (``from fedlab.evaluation.retrieval.metrics import evaluate_retrieval``)
so that importing one does not pull in ranx/numba for the others.
"""

"""Evaluation: measuring a pipeline, and the agent over it, on a question set.

- ``retrieval``: the ranked lists measured against the evidence (recall@k, mrr@10, …, TREC files).
- ``answers``: the agent's answers measured (answer accuracy, citations, support, calibration).
- ``record``: the per-question record both parts fill.
- ``run``: one evaluation run, logged to MLflow (the task behind ``python -m fedlab.evaluate``);
  ``naming``: the name a run is logged under.

Evaluation sits above the agent and the pipeline: nothing below it imports it.
"""

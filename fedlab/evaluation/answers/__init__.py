"""Answer evaluation: the agent's answers measured, one idea per module (none imports MLflow):

- ``normalize``: key-fact matching however the numbers are written.
- ``measures``: per-question judgments and the aggregate answer metrics (answer_accuracy, …).
- ``support``: an offline proxy for faithfulness; ``faithfulness``: ragas' LLM-judged one.
- ``calibration``: ECE, Brier and reliability bins of the reported confidence.
- ``selective``: AUROC, the risk-coverage curve and coverage at a target precision.
- ``harness``: the agent run over a question set, measured (the answer half of an evaluation run).
- ``calibrate``: the answerability model's rows collected and fitted (``python -m fedlab.calibrate``).
"""

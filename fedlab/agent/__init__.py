"""The question-answering agent: a DSPy program over the retrieval pipeline (see program.py)."""

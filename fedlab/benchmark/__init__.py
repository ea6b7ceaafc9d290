"""Benchmarks behind ``make bench``: ANN indexes (``ann``), embedders and the cache (``embedders``),
and their report (``report``); ``run`` is the task behind ``python -m fedlab.bench``."""

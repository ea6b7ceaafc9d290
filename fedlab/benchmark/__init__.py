"""Benchmarks behind ``make bench``: ANN indexes (``ann``), embedders and the cache (``embedders``),
and their report (``report``). ``fedlab.bench`` is the Hydra app that runs them."""

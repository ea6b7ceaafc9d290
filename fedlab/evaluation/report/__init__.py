"""The release report (``python -m fedlab.report``): one config on every registered question set,
each measure with a 95% bootstrap interval (``intervals``), pooled by role, with the dev − heldout
gap; ``run`` evaluates and measures, ``render`` writes report.md and the plots, ``reads`` counts
the test split's reads, ``build`` puts them together."""

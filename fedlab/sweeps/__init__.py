"""Sweeps: a study run as a Hydra multirun, a parent MLflow run per sweep, a child run per config.

``callback`` opens and closes the parent run, ``record`` hands its id to the jobs, ``grid`` reads
the grid a multirun expands, ``runs`` queries a sweep's runs, ``selection`` defines the best run
(for the closing report and for export alike), ``report`` writes the closing report and
``production`` writes the production config from the best run (``python -m fedlab.export``).
"""

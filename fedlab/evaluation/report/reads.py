"""How often the test split has been read: counted in the tracking store, not in a tracked file.

Every evaluation tags its run with ``dataset_role`` (fedlab.evaluation.run); a run of role
``test`` is one read of test, whatever started it (an evaluation, the gate, a report). The
count is of the runs that started after the gate record was written (``recorded_at`` in
``conf/gates.yaml``; every run when the record has no date).
"""
from __future__ import annotations

import datetime as dt


def test_reads(tracking_uri: str, since: str | None = None) -> int:
    """Runs tagged ``dataset_role=test`` in every experiment of the store, started at or after
    ``since`` (an ISO timestamp, UTC when it names no zone)."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=tracking_uri)
    experiments = [e.experiment_id for e in client.search_experiments()]
    if not experiments:
        return 0
    query = "tags.dataset_role = 'test'"
    if since:
        when = dt.datetime.fromisoformat(since)
        if when.tzinfo is None:
            when = when.replace(tzinfo=dt.timezone.utc)
        query += f" and attributes.start_time >= {int(when.timestamp() * 1000)}"
    count, token = 0, None
    while True:
        page = client.search_runs(experiments, filter_string=query, max_results=1000, page_token=token)
        count += len(page)
        token = page.token
        if not token:
            return count

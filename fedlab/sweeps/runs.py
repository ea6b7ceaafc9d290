"""A sweep's runs in MLflow: the parent runs of a study and the child runs of a sweep."""
from __future__ import annotations

from dataclasses import dataclass

from fedlab.tracking import metric_from_mlflow_name

PARENT_FILTER = "tags.`fedlab.sweep` = 'parent'"


@dataclass
class ChildRun:
    """One finished config of a sweep, as the report ranks it and export chooses among them."""

    run_id: str
    name: str
    metrics: dict[str, float]  # by fedlab names (recall@5), not MLflow's (recall_at_5)
    tags: dict[str, str]

    @classmethod
    def from_mlflow(cls, run) -> ChildRun:
        return cls(run.info.run_id, run.info.run_name or run.info.run_id,
                   {metric_from_mlflow_name(k): v for k, v in run.data.metrics.items()}, dict(run.data.tags))


def children_of(client, experiment_id: str, parent_id: str) -> list:
    """Every child run of the sweep ``parent_id`` (MLflow runs, whatever their status)."""
    return client.search_runs([experiment_id], filter_string=f"tags.mlflow.parentRunId = '{parent_id}'",
                              max_results=5000)


def finished_children(client, experiment_id: str, parent_id: str, split: str | None = None) -> list[ChildRun]:
    """The sweep's finished child runs; only those evaluated on ``split`` when it is given."""
    return [ChildRun.from_mlflow(r) for r in children_of(client, experiment_id, parent_id)
            if r.info.status == "FINISHED" and (split is None or r.data.tags.get("dataset_split") == split)]


def latest_finished_sweep(client, experiment_id: str, study: str | None = None) -> str | None:
    """The parent run id of the most recent sweep (of ``study``, when given) that finished
    (None when there is none)."""
    named = f" and attributes.run_name = 'sweep:{study}'" if study else ""
    sweeps = client.search_runs([experiment_id], filter_string=PARENT_FILTER + named,
                                order_by=["attributes.start_time DESC"], max_results=20)
    finished = [r for r in sweeps if r.info.status == "FINISHED"]
    return finished[0].info.run_id if finished else None


def unfinished_sweeps(client, experiment_id: str, study: str, exclude: str) -> list:
    """Earlier parents of the same study that never finished (interrupted, failed, or killed)."""
    runs = client.search_runs([experiment_id], filter_string=PARENT_FILTER,
                              order_by=["attributes.start_time DESC"], max_results=50)
    return [r for r in runs if r.info.run_id != exclude and r.info.run_name == f"sweep:{study}"
            and r.info.status != "FINISHED"]

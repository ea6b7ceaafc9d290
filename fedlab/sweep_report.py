"""The closing report of a sweep: ranked table, recall-vs-latency frontier, cache savings."""
from __future__ import annotations

from dataclasses import dataclass

from rich.console import Console
from rich.table import Table

from fedlab.sweep import pareto_front
from fedlab.tracking import mlflow_name

BUILD_STAGES = ("chunks", "embeddings", "index", "bm25", "token_vectors")


@dataclass
class ChildRun:
    run_id: str
    name: str
    metrics: dict[str, float]
    tags: dict[str, str]


def child_runs(client, experiment_id: str, parent_id: str) -> list[ChildRun]:
    runs = client.search_runs(
        [experiment_id], filter_string=f"tags.mlflow.parentRunId = '{parent_id}'", max_results=5000
    )
    return [ChildRun(r.info.run_id, r.info.run_name or r.info.run_id, dict(r.data.metrics), dict(r.data.tags))
            for r in runs if r.info.status == "FINISHED"]


def cache_savings(children: list[ChildRun], wall_s: float) -> dict[str, float]:
    """What the sweep cost against what it would have cost with every artifact built anew.

    Each artifact (chunks, embeddings, index, bm25) is keyed by content; its build cost is the
    time of the run that missed on it. Without the cache every run would pay the cost of
    every artifact it uses."""
    cost: dict[str, float] = {}
    for c in children:
        for stage in BUILD_STAGES:
            if c.tags.get(f"cache.{stage}") == "miss":
                cost[c.tags[f"cache_key.{stage}"]] = c.metrics.get(f"build_s.{stage}", 0.0)
    unique = sum(cost.values())
    naive = sum(cost.get(c.tags.get(f"cache_key.{s}", ""), 0.0) for c in children for s in BUILD_STAGES)
    n = max(len(children), 1)
    per_config = max(wall_s - unique, 0.0) / n
    return {
        "sweep.n_runs": float(len(children)),
        "sweep.wall_s": wall_s,
        "sweep.unique_build_s": unique,
        "sweep.per_config_s": per_config,
        "sweep.uncached_estimate_s": wall_s - unique + naive,
        "sweep.cache_speedup": (wall_s - unique + naive) / wall_s if wall_s > 0 else 1.0,
        "sweep.unique_build_share": unique / wall_s if wall_s > 0 else 0.0,
    }


def frontier_figure(children: list[ChildRun], objective: str, latency: str):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    obj, lat = mlflow_name(objective), mlflow_name(latency)
    pts = [(c.metrics.get(obj, 0.0), c.metrics.get(lat, 0.0)) for c in children]
    front = set(pareto_front(pts))
    fig, ax = plt.subplots(figsize=(8, 5.5), dpi=120)
    ax.scatter([p[1] for p in pts], [p[0] for p in pts], s=18, c="#9aa5b1", label="config")
    fr = sorted((pts[i][1], pts[i][0], children[i].name) for i in front)
    ax.plot([f[0] for f in fr], [f[1] for f in fr], "-o", c="#d1495b", ms=5, label="Pareto frontier")
    for x, y, name in fr:
        ax.annotate(name, (x, y), fontsize=6, xytext=(4, 2), textcoords="offset points")
    ax.set_xscale("log")
    ax.set_xlabel(f"{latency} (log scale)")
    ax.set_ylabel(objective)
    ax.set_title(f"{objective} vs latency — {len(children)} configs")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    fig.tight_layout()
    return fig, [children[i] for i in sorted(front, key=lambda i: pts[i][1])]


def ranked(children: list[ChildRun], objective: str, latency: str) -> list[ChildRun]:
    obj, lat = mlflow_name(objective), mlflow_name(latency)
    return sorted(children, key=lambda c: (-c.metrics.get(obj, 0.0), c.metrics.get(lat, float("inf"))))


def ranked_markdown(rows: list[ChildRun], objective: str, latency: str, front_ids: set[str]) -> str:
    cols = [objective, "mrr@10", "ndcg@10", "doc_recall@5", latency]
    out = ["| # | run | " + " | ".join(cols) + " | frontier |", "|" + "---|" * (len(cols) + 3)]
    for i, c in enumerate(rows, 1):
        vals = [f"{c.metrics.get(mlflow_name(m), float('nan')):.3f}" for m in cols]
        out.append(f"| {i} | {c.name} | " + " | ".join(vals) + f" | {'★' if c.run_id in front_ids else ''} |")
    return "\n".join(out) + "\n"


def report_sweep(tracking_uri: str, experiment: str, parent_id: str, wall_s: float,
                 objective: str = "recall@5", latency: str = "latency_p95_ms_total",
                 console: Console | None = None) -> dict[str, float]:
    from fedlab.tracking import Tracker

    console = console or Console(stderr=True)
    tracker = Tracker(tracking_uri, experiment)
    client = tracker.mlflow.MlflowClient()
    exp = client.get_experiment_by_name(experiment)
    children = child_runs(client, exp.experiment_id, parent_id)
    savings = cache_savings(children, wall_s)
    for key, value in savings.items():
        client.log_metric(parent_id, key, value)
    if children:
        fig, front = frontier_figure(children, objective, latency)
        client.log_figure(parent_id, fig, "sweep/recall_vs_latency.png")
        front_ids = {c.run_id for c in front}
        order = ranked(children, objective, latency)
        client.log_text(parent_id, ranked_markdown(order, objective, latency, front_ids), "sweep/ranked.md")
        best = order[0]
        client.set_tag(parent_id, "best_run_id", best.run_id)
        client.set_tag(parent_id, "best_run_name", best.name)
        client.log_metric(parent_id, f"best.{mlflow_name(objective)}", best.metrics.get(mlflow_name(objective), 0.0))
        _print(console, order[:15], objective, latency, front_ids, len(children))
    client.set_tag(parent_id, "sweep.n_finished", str(len(children)))
    client.set_terminated(parent_id, "FINISHED")
    console.print(
        f"sweep: {len(children)} runs in {wall_s / 60:.1f} min; unique builds {savings['sweep.unique_build_s']:.0f}s, "
        f"per config {savings['sweep.per_config_s']:.1f}s; without the cache ≈ "
        f"{savings['sweep.uncached_estimate_s'] / 60:.1f} min (×{savings['sweep.cache_speedup']:.1f}). "
        f"Parent run {parent_id}"
    )
    return savings


def _print(console: Console, rows: list[ChildRun], objective: str, latency: str, front: set[str], n: int) -> None:
    table = Table(title=f"top {len(rows)} of {n} configs by {objective}")
    for col in ("#", "run", objective, "mrr@10", "ndcg@10", "p95 ms", "frontier"):
        if col == "run":
            table.add_column(col, justify="left", overflow="fold", min_width=30)
        else:
            table.add_column(col, justify="right", no_wrap=True)
    for i, c in enumerate(rows, 1):
        m = lambda name: f"{c.metrics.get(mlflow_name(name), float('nan')):.3f}"  # noqa: E731
        table.add_row(str(i), c.name, m(objective), m("mrr@10"), m("ndcg@10"),
                      f"{c.metrics.get(mlflow_name(latency), float('nan')):.1f}", "★" if c.run_id in front else "")
    console.print(table)

"""The closing report of a sweep: ranked table, recall-vs-latency frontier, cache savings.

The table ranks the runs by :mod:`fedlab.sweeps.selection`'s rule, so the run it calls best is the
run ``make export`` picks from the same sweep.
"""
from __future__ import annotations

import math

from rich.console import Console
from rich.table import Table

from fedlab.sweeps.runs import ChildRun, finished_children
from fedlab.sweeps.selection import Rule, Selection, print_exclusions, rank
from fedlab.tracking import mlflow_name

BUILD_STAGES = ("chunks", "embeddings", "index", "bm25", "token_vectors")


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


def pareto_front(points: list[tuple[float, float]]) -> list[int]:
    """Indexes of points not dominated by another (higher quality, lower latency)."""
    front = []
    for i, (q, lat) in enumerate(points):
        dominated = any(
            (q2 >= q and l2 <= lat) and (q2 > q or l2 < lat) for j, (q2, l2) in enumerate(points) if j != i
        )
        if not dominated:
            front.append(i)
    return front


def frontier_figure(children: list[ChildRun], objective: str, latency: str):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pts = [(c.metrics.get(objective, 0.0), c.metrics.get(latency, 0.0)) for c in children]
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


def ranked_rows(selection: Selection) -> list[tuple[str, ChildRun, str]]:
    """(rank, run, why excluded) for every run: the eligible numbered best first, then the
    excluded, unnumbered, in rank order."""
    return ([(str(i), r, "") for i, r in enumerate(selection.eligible, 1)]
            + [("–", r, "; ".join(why)) for r, why in selection.excluded])


def ranked_markdown(selection: Selection, rule: Rule, latency: str, front_ids: set[str]) -> str:
    cols = [rule.metric, "mrr@10", "ndcg@10", "doc_recall@5", latency]
    out = [f"Ranked by {rule.describe()} (the rule of conf/export.yaml, as `make export` ranks).", "",
           "| # | run | " + " | ".join(cols) + " | frontier | excluded |", "|" + "---|" * (len(cols) + 4)]
    for pos, c, why in ranked_rows(selection):
        vals = [f"{c.metrics.get(m, math.nan):.3f}" for m in cols]
        star = "★" if c.run_id in front_ids else ""
        out.append(f"| {pos} | {c.name} | " + " | ".join(vals) + f" | {star} | {why} |")
    return "\n".join(out) + "\n"


def report_sweep(tracking_uri: str, experiment: str, parent_id: str, wall_s: float, rule: Rule,
                 latency: str = "latency_p95_ms_total", console: Console | None = None) -> dict[str, float]:
    from fedlab.tracking import Tracker

    console = console or Console(stderr=True)
    tracker = Tracker(tracking_uri, experiment)
    client = tracker.mlflow.MlflowClient()
    exp = client.get_experiment_by_name(experiment)
    children = finished_children(client, exp.experiment_id, parent_id)
    savings = cache_savings(children, wall_s)
    for key, value in savings.items():
        client.log_metric(parent_id, key, value)
    if children:
        fig, front = frontier_figure(children, rule.metric, latency)
        client.log_figure(parent_id, fig, "sweep/recall_vs_latency.png")
        front_ids = {c.run_id for c in front}
        selection = rank(children, rule)
        client.log_text(parent_id, ranked_markdown(selection, rule, latency, front_ids), "sweep/ranked.md")
        _print(console, selection, rule, latency, front_ids, len(children))
        best = selection.best
        if best is None:
            console.print(f"no run meets the rule ({rule.describe()}): `make export` would refuse this sweep")
        else:
            client.set_tag(parent_id, "best_run_id", best.run_id)
            client.set_tag(parent_id, "best_run_name", best.name)
            client.log_metric(parent_id, f"best.{mlflow_name(rule.metric)}", best.metrics.get(rule.metric, 0.0))
            if selection.excluded:
                print_exclusions(selection, rule.metric, console)
    client.set_tag(parent_id, "sweep.n_finished", str(len(children)))
    client.set_terminated(parent_id, "FINISHED")
    console.print(
        f"sweep: {len(children)} runs in {wall_s / 60:.1f} min; unique builds {savings['sweep.unique_build_s']:.0f}s, "
        f"per config {savings['sweep.per_config_s']:.1f}s; without the cache ≈ "
        f"{savings['sweep.uncached_estimate_s'] / 60:.1f} min (×{savings['sweep.cache_speedup']:.1f}). "
        f"Parent run {parent_id}"
    )
    return savings


def _print(console: Console, selection: Selection, rule: Rule, latency: str, front: set[str], n: int) -> None:
    rows = ranked_rows(selection)[:15]
    table = Table(title=f"top {len(rows)} of {n} configs by {rule.metric}", caption=f"ranked by {rule.describe()}")
    excluded = any(why for _, _, why in rows)
    cols = ("#", "run", rule.metric, "mrr@10", "ndcg@10", "p95 ms", "frontier") + (("excluded",) if excluded else ())
    for col in cols:
        if col in ("run", "excluded"):
            table.add_column(col, justify="left", overflow="fold", min_width=30 if col == "run" else 20)
        else:
            table.add_column(col, justify="right", no_wrap=True)
    for pos, c, why in rows:
        m = lambda name: f"{c.metrics.get(name, math.nan):.3f}"  # noqa: E731
        table.add_row(pos, c.name, m(rule.metric), m("mrr@10"), m("ndcg@10"),
                      f"{c.metrics.get(latency, math.nan):.1f}", "★" if c.run_id in front else "",
                      *((why,) if excluded else ()))
    console.print(table)

"""Model-based search against the grid: best objective found vs configs (trials) spent.

A search study (``conf/experiment/tpe.yaml``) names the grid study of the same space in
``study.compare_with``; when it ends, its parent run gets this comparison with the latest finished
sweep of that grid: the search's best-so-far curve, the grid's in the order it ran, and what a
random order of the grid's configs finds on average (exact, not simulated).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fedlab.sweeps.runs import ChildRun, children_of, latest_finished_sweep

ATTAINED = 1e-9  # a trial "finds" the grid's best when it scores within this of it


@dataclass
class SearchComparison:
    """The objective of each finished config in the order it ran, for the search and the grid."""

    objective: str
    search_name: str
    grid_name: str
    search: list[float]
    grid: list[float]

    @property
    def grid_best(self) -> float:
        return max(self.grid)

    def search_best(self) -> float:
        return max(self.search)

    def trials_to_grid_best(self) -> int | None:
        """How many search trials it took to score the grid's best (None: never)."""
        return _first_reaching(self.search, self.grid_best)

    def grid_configs_to_best(self) -> int:
        return _first_reaching(self.grid, self.grid_best) or len(self.grid)

    def random_expected(self) -> list[float]:
        """E[best of the first n configs] when the grid runs in a uniformly random order, n = 1..N."""
        return expected_best_of_random_order(self.grid)

    def summary(self) -> dict[str, float]:
        n = len(self.search)
        out = {"search.trials": n, "search.best": self.search_best(), "search.grid_configs": len(self.grid),
               "search.grid_best": self.grid_best,
               "search.random_expected_best": self.random_expected()[min(n, len(self.grid)) - 1]}
        reached = self.trials_to_grid_best()
        if reached is not None:
            out["search.trials_to_grid_best"] = reached
        return out


def _first_reaching(values: list[float], target: float) -> int | None:
    for i, v in enumerate(values, 1):
        if v >= target - ATTAINED:
            return i
    return None


def best_so_far(values: list[float]) -> list[float]:
    return np.maximum.accumulate(np.asarray(values, dtype=float)).tolist() if values else []


def expected_best_of_random_order(values: list[float]) -> list[float]:
    """E[max of the first n] for n = 1..N over a uniformly random permutation of ``values``.

    With values sorted ascending v(1) ≤ … ≤ v(N), the max of n draws without replacement is v(i)
    with probability C(i-1, n-1) / C(N, n)."""
    v = sorted(values)
    big_n = len(v)
    out = []
    for n in range(1, big_n + 1):
        total = math.comb(big_n, n)
        out.append(sum(v[i - 1] * math.comb(i - 1, n - 1) for i in range(n, big_n + 1)) / total)
    return out


def objectives_of(client, experiment_id: str, parent_id: str, objective: str) -> list[float]:
    """A sweep's objective values, finished configs only, in the order they started."""
    runs = sorted((r for r in children_of(client, experiment_id, parent_id) if r.info.status == "FINISHED"),
                  key=lambda r: r.info.start_time)
    metrics = [ChildRun.from_mlflow(r).metrics for r in runs]
    return [m[objective] for m in metrics if objective in m]


def comparison_figure(cmp: SearchComparison):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5), dpi=120)
    xs = range(1, len(cmp.grid) + 1)
    ax.plot(range(1, len(cmp.search) + 1), best_so_far(cmp.search), "-o", ms=3, c="#d1495b",
            label=f"{cmp.search_name} (best so far)")
    ax.plot(xs, best_so_far(cmp.grid), "-", c="#2e86ab", label=f"{cmp.grid_name} grid, in its run order")
    ax.plot(xs, cmp.random_expected(), "--", c="#9aa5b1", label="grid in a random order (expected)")
    ax.axhline(cmp.grid_best, c="#444", lw=0.8, ls=":", label=f"grid optimum {cmp.grid_best:.4f}")
    ax.set_xlabel("configs evaluated (trials)")
    ax.set_ylabel(f"best {cmp.objective} so far")
    ax.set_title(f"{cmp.search_name} vs the {cmp.grid_name} grid: best {cmp.objective} vs configs spent")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return fig


def comparison_markdown(cmp: SearchComparison) -> str:
    s = cmp.summary()
    reached = s.get("search.trials_to_grid_best")
    n = int(s["search.trials"])
    rows = [f"| best {cmp.objective} after {n} configs | {s['search.best']:.4f} | "
            f"{best_so_far(cmp.grid)[min(n, len(cmp.grid)) - 1]:.4f} (run order) / "
            f"{s['search.random_expected_best']:.4f} (random order, expected) |",
            f"| best {cmp.objective} overall | {s['search.best']:.4f} | {cmp.grid_best:.4f} |",
            f"| configs to reach the grid's best | {reached if reached is not None else 'not reached'} | "
            f"{cmp.grid_configs_to_best()} of {len(cmp.grid)} (run order) |"]
    return "\n".join([f"{cmp.search_name} ({n} trials) vs the {cmp.grid_name} grid ({len(cmp.grid)} configs), "
                      f"objective {cmp.objective}", "", f"| | {cmp.search_name} | grid |", "|---|---|---|",
                      *rows]) + "\n"


def report_search(client, experiment_id: str, parent_id: str, search_name: str, grid_study: str,
                  objective: str) -> SearchComparison | None:
    """Log the comparison to the search's parent run; None (and nothing logged) without a grid."""
    grid_parent = latest_finished_sweep(client, experiment_id, grid_study)  # this search's own run is still open
    if grid_parent is None:
        return None
    cmp = SearchComparison(objective, search_name, grid_study,
                           objectives_of(client, experiment_id, parent_id, objective),
                           objectives_of(client, experiment_id, grid_parent, objective))
    if not cmp.search or not cmp.grid:
        return None
    from fedlab.tracking import mlflow_name

    for key, value in cmp.summary().items():
        client.log_metric(parent_id, mlflow_name(key), float(value))
    client.set_tag(parent_id, "search.grid_run_id", grid_parent)
    client.log_figure(parent_id, comparison_figure(cmp), "sweep/search_vs_grid.png")
    client.log_text(parent_id, comparison_markdown(cmp), "sweep/search_vs_grid.md")
    return cmp

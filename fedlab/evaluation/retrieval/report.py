"""Console summaries of evaluation results (rich)."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table


HEADLINE = ("recall@1", "recall@5", "recall@10", "mrr@10", "ndcg@10", "doc_recall@5")


def print_metrics(console: Console, name: str, metrics: dict, run_id: str, info) -> None:
    table = Table(title=f"{name}  (run {run_id[:8]})")
    for col in (*HEADLINE, "p50 ms", "p95 ms"):
        table.add_column(col, justify="right")
    table.add_row(
        *(f"{metrics[m]:.3f}" for m in HEADLINE),
        f"{metrics.get('latency_p50_ms_total', float('nan')):.1f}",
        f"{metrics.get('latency_p95_ms_total', float('nan')):.1f}",
    )
    console.print(table)
    waited = getattr(info, "waited", {})
    built = ", ".join(f"{stage} {info.cache[stage]} ({info.seconds[stage]:.1f}s"
                      + (f", after waiting {waited[stage]:.1f}s for another process's build" if stage in waited else "")
                      + ")" for stage in info.cache)
    console.print(f"questions: {int(metrics['n_questions'])} ({int(metrics['n_answerable'])} answerable)  "
                  f"artifacts: {built}")

"""Compare two evaluated runs with paired significance tests.

    python -m fedlab.compare RUN_A RUN_B [--metrics recall@5 mrr@10 ndcg@10] [--alpha 0.05]
                             [--test student|fisher|tukey] [--permutations 1000]

RUN_A / RUN_B are local directories or MLflow run ids (tracking store: MLFLOW_TRACKING_URI,
default ``sqlite:///<project root>/mlflow.db``); what a run provides is described in
``fedlab.evaluation.compare``. Runs evaluated with an agent compare on its measures too:
``--metrics answer_accuracy abstention_accuracy false_abstention_rate brier auroc ece``.
"""
from __future__ import annotations

import argparse
import sys

from fedlab.cli import ArgumentParser, run_exit
from fedlab.errors import FedlabError
from fedlab.evaluation.compare import DEFAULT_METRICS


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    from fedlab.evaluation.retrieval.significance import STAT_TESTS

    parser = ArgumentParser(prog="python -m fedlab.compare", description=__doc__.split("\n\n")[0])
    parser.add_argument("run_a", metavar="RUN_A", help="MLflow run id or run directory (the baseline)")
    parser.add_argument("run_b", metavar="RUN_B", help="MLflow run id or run directory (the candidate)")
    parser.add_argument("--metrics", nargs="+", default=list(DEFAULT_METRICS),
                        help=f"metric names, space or comma separated (default: {' '.join(DEFAULT_METRICS)})")
    parser.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    parser.add_argument("--test", choices=STAT_TESTS, default="student", help="paired test (default student)")
    parser.add_argument("--permutations", type=int, default=1000,
                        help="shuffles for --test fisher; resamples of the paired bootstrap (auroc, ece, "
                             "coverage@precision0.9)")
    args = parser.parse_args(argv)
    args.metrics = [m for item in args.metrics for m in item.split(",") if m]
    if not 0 < args.alpha < 1:
        parser.error("--alpha must be between 0 and 1")
    return args


def main(argv: list[str] | None = None) -> int:
    from rich.console import Console

    from fedlab.evaluation.compare import compare, render

    args = parse_args(argv)
    try:
        comparison = compare(args.run_a, args.run_b, args.metrics, args.test, args.alpha, args.permutations)
    except (FedlabError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    render(comparison, args.permutations, Console())
    return 0


if __name__ == "__main__":
    run_exit(main)

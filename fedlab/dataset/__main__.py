"""`python -m fedlab.dataset validate [PATH] [--corpus DIR]`: check a QA dataset file."""
from __future__ import annotations

import sys

from rich.console import Console
from rich.table import Table

from fedlab.cli import ArgumentParser, add_config_args, config_from_args, run_exit

DEFAULT_DATASET = "datasets/fomc_qa/fomc_qa.jsonl"  # the config's dataset.path, under the project root


def _parser() -> ArgumentParser:
    parser = ArgumentParser(prog="python -m fedlab.dataset", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=ArgumentParser)
    v = sub.add_parser("validate", help="check a QA JSONL file against the schema and the corpus")
    v.add_argument("path", nargs="?", default=None, help=f"dataset file (default {DEFAULT_DATASET})")
    v.add_argument("--corpus", default=None,
                   help="corpus directory holding docs.jsonl and manifest.json "
                        "(default $FEDLAB_DATA_DIR/corpus/fomc, else data/corpus/fomc)")
    add_config_args(v, "evaluate", example="paths.data_dir=DIR")
    return parser


def print_summary(console: Console, stats: dict) -> None:
    cats = Table(title="questions per category and split")
    cats.add_column("category")
    for s in stats["split"]:
        cats.add_column(s, justify="right")
    cats.add_column("total", justify="right")
    for cat, per_split in stats["category_split"].items():
        cats.add_row(cat, *(str(n) for n in per_split.values()), str(stats["category"][cat]))
    cats.add_row("total", *(str(n) for n in stats["split"].values()), str(stats["total"]), style="bold")
    console.print(cats)
    years = Table(title="questions per year")
    years.add_column("year")
    years.add_column("questions", justify="right")
    for year, n in stats["year"].items():
        years.add_row(year, str(n))
    console.print(years)
    console.print("(a question counts once for each year of its evidence documents, else of its date_range)")
    console.print(f"answerable: {stats['answerable']}/{stats['total']} ({stats['answerable_share']:.0%})")


def main(argv: list[str] | None = None) -> int:
    from fedlab.dataset.validation import validate_dataset

    args = _parser().parse_args(argv)
    console = Console(highlight=False)
    result = validate_dataset(config_from_args(args), args.path, args.corpus, args.config)
    n_questions = len(result.report.questions)
    console.print(f"{result.path}: {n_questions} questions checked against {result.n_documents} documents")
    if result.stats is not None:
        print_summary(console, result.stats)
    if result.report.problems:
        for p in result.report.problems:
            print(p, file=sys.stderr)
        print(f"{len(result.report.problems)} problem(s) found", file=sys.stderr)
        return 1
    console.print("[green]ok: no problems[/green]")
    return 0


if __name__ == "__main__":
    run_exit(main)

"""`python -m fedlab.dataset validate [PATH] [--corpus DIR]`: check a QA dataset file."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from fedlab.cli import run_exit

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DATASET = ROOT / "datasets" / "fomc_qa" / "fomc_qa.jsonl"
DEFAULT_CORPUS = ROOT / "data" / "corpus" / "fomc"


def default_corpus_dir() -> Path:
    """Where the Hydra apps find the corpus (conf/paths/default.yaml, conf/corpus/fomc.yaml):
    ``${paths.data_dir}/corpus/fomc`` with data_dir = $FEDLAB_DATA_DIR, else <root>/data."""
    from fedlab.config import project_root

    data_dir = os.environ.get("FEDLAB_DATA_DIR")
    if data_dir:
        return Path(data_dir) / "corpus" / "fomc"
    return Path(project_root()) / "data" / "corpus" / "fomc"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m fedlab.dataset", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    v = sub.add_parser("validate", help="check a QA JSONL file against the schema and the corpus")
    v.add_argument("path", nargs="?", default=str(DEFAULT_DATASET),
                   help=f"dataset file (default {DEFAULT_DATASET.relative_to(ROOT)})")
    v.add_argument("--corpus", default=None,
                   help="corpus directory holding docs.jsonl and manifest.json "
                        "(default $FEDLAB_DATA_DIR/corpus/fomc, else data/corpus/fomc)")
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
    from fedlab.dataset.schema import not_a_file_message
    from fedlab.corpus.snapshot import load_corpus
    from fedlab.dataset.validate import dataset_stats, validate_file
    from fedlab.errors import FedlabError

    args = _parser().parse_args(argv)
    console = Console(highlight=False)
    if not Path(args.path).is_file():  # a wrong argument, not a problem in a dataset
        raise FedlabError(f"{args.path}: {not_a_file_message(Path(args.path))}")
    docs = load_corpus(args.corpus if args.corpus is not None else default_corpus_dir()).by_id
    report = validate_file(args.path, docs)
    console.print(f"{args.path}: {len(report.questions)} questions checked against {len(docs)} documents")
    if report.questions:
        print_summary(console, dataset_stats(report.questions, docs))
    if report.problems:
        for p in report.problems:
            print(p, file=sys.stderr)
        print(f"{len(report.problems)} problem(s) found", file=sys.stderr)
        return 1
    console.print("[green]ok: no problems[/green]")
    return 0


if __name__ == "__main__":
    run_exit(main)

"""`python -m fedlab.timeline`: the FOMC meeting timeline.

    python -m fedlab.timeline [--json] [--config NAME] [--set KEY=VALUE] [--corpus DIR] [--cache DIR]

One row per meeting date in the corpus — scheduled or not, the target range before → after,
the change, dissents and balance-sheet actions — read from the statements (and, where a meeting
has no statement, the statement its minutes reproduce); see fedlab.facts.timeline. ``--json``
prints one JSON document with every field and the character span it was read from.
"""
from __future__ import annotations

import json
import os
import sys

from fedlab.cli import ArgumentParser, add_config_args, config_from_args, corpus_dir, run_exit


def _parser() -> ArgumentParser:
    parser = ArgumentParser(prog="python -m fedlab.timeline", description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the timeline as one JSON document")
    add_config_args(parser, "evaluate", example="paths.data_dir=/data/fedlab")
    parser.add_argument("--corpus", default=None,
                        help="corpus directory with docs.jsonl and manifest.json (default: the config's corpus.dir, "
                             "$FEDLAB_DATA_DIR/corpus/fomc or data/corpus/fomc)")
    parser.add_argument("--cache", default=None,
                        help="artifact cache directory (default: the config's paths.cache_dir, "
                             "$FEDLAB_DATA_DIR/cache or data/cache)")
    return parser


def main(argv: list[str] | None = None) -> int:
    from rich.console import Console
    from rich.table import Table

    from fedlab.cache import ArtifactCache
    from fedlab.facts.timeline import TABLE_COLUMNS, table_row
    from fedlab.corpus.snapshot import load_corpus
    from fedlab.pipeline import load_timeline

    args = _parser().parse_args(argv)
    cfg = config_from_args(args)
    corpus = load_corpus(args.corpus if args.corpus is not None else corpus_dir(cfg, args.config))
    timeline = load_timeline(corpus, ArtifactCache(args.cache if args.cache is not None else str(cfg.paths.cache_dir)))
    if args.json:
        out = {"corpus": {"directory": str(corpus.directory), "content_hash": corpus.content_hash},
               **timeline.to_json()}
        sys.stdout.write(json.dumps(out, ensure_ascii=False, indent=2) + "\n")
        return 0
    # piped or in a log: wide enough for one line a meeting (a terminal keeps its own width)
    wide = None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 150
    console = Console(highlight=False, width=wide)
    first, last = timeline.coverage() or ("—", "—")
    table = Table(title=f"FOMC meetings {first} – {last}")
    for i, col in enumerate(TABLE_COLUMNS):
        table.add_column(col, no_wrap=i < 4, overflow="fold")
    for meeting in timeline:
        table.add_row(*table_row(meeting))
    console.print(table)
    c = timeline.counts()
    console.print(f"{c['meetings']} meetings ({c['scheduled']} scheduled), {c['decisions']} decisions "
                  f"({c['raise']} raise, {c['cut']} cut, {c['hold']} hold), {c['dissents']} dissents, "
                  f"{c['balance_sheet_actions']} balance-sheet actions; {c['not_decisions']} statements "
                  "without a policy decision")
    return 0


if __name__ == "__main__":
    run_exit(main)

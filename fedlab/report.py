"""`python -m fedlab.report` (`make report`): how good a config is, on every question set, with error bars.

    python -m fedlab.report                              # conf/production.yaml on the dev and heldout sets
    python -m fedlab.report --include-test               # ... and the test split (every read is counted)
    python -m fedlab.report --set-file private.jsonl --group-by style
    python -m fedlab.report --against reports/report.json   # or a report's MLflow parent run id
    python -m fedlab.report --only fresh_dev6 fresh_dev7 --set retriever=bm25
    python -m fedlab.report --readme                     # README.md's results box from reports/report.json

Writes reports/report.md and reports/report.json (git-ignored), report_accuracy.png and
risk_coverage.png beside them, prints the table, and logs one parent run with a child run per
set to the MLflow experiment ``fedlab-report``. ``--readme`` evaluates nothing: it rewrites the
results box of README.md (``--readme-file``) from the report in ``--out`` (``make readme``).
Exit codes: 0 written, 2 a user error (one line).
"""
from __future__ import annotations

import sys
from pathlib import Path

from fedlab.cli import ArgumentParser, add_config_args, run_exit


def parse_args(argv: list[str] | None):
    from fedlab.dataset.registry import DEFAULT_REPORT_ROLES, ROLES

    p = ArgumentParser(prog="python -m fedlab.report", description=__doc__.splitlines()[0])
    add_config_args(p, "production", example="retriever=bm25")
    p.add_argument("--roles", nargs="+", choices=ROLES, default=list(DEFAULT_REPORT_ROLES),
                   help="registered sets of these roles (default: dev heldout)")
    p.add_argument("--include-test", action="store_true", help="add the test sets (read for a release, never to choose)")
    p.add_argument("--only", nargs="+", default=None, metavar="NAME",
                   help="only these registered sets (conf/dataset/NAME.yaml), whatever their role")
    p.add_argument("--set-file", action="append", default=[], metavar="PATH",
                   help="also evaluate this JSONL file in the fomc_qa schema (repeatable; role heldout)")
    p.add_argument("--group-by", action="append", default=[], metavar="FIELD",
                   help="also break every set down by this field of its records (repeatable; category always)")
    p.add_argument("--against", default=None, metavar="RUN_ID|report.json",
                   help="add the change per set from an earlier report, with a paired test per set")
    p.add_argument("--out", default="reports", help="directory for report.md / report.json / the plots (default reports)")
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples per interval (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="the resampling seed (default 0)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars (a line per set still)")
    p.add_argument("--readme", action="store_true",
                   help="evaluate nothing: rewrite README.md's results box from OUT/report.json (make readme)")
    p.add_argument("--readme-file", default="README.md", metavar="PATH", help="the README --readme rewrites")
    args = p.parse_args(argv)
    if args.bootstrap < 50:
        p.error("--bootstrap must be at least 50")
    return args


def main(argv: list[str] | None = None) -> int:
    from rich.console import Console

    from fedlab.evaluation.report.build import build_report

    args = parse_args(argv)
    if args.readme:
        from fedlab.evaluation.report.readme import update_readme

        report = Path(args.out) / "report.json"
        changed = update_readme(Path(args.readme_file), report)
        print(f"{args.readme_file}: results box {'rewritten' if changed else 'already current'} from {report}",
              file=sys.stderr)
        return 0
    console = Console(stderr=True)
    roles = tuple(dict.fromkeys([*args.roles, *(["test"] if args.include_test else [])]))
    data = build_report(args.config, args.sets, roles=roles, names=args.only,
                        set_files=args.set_file, group_by=tuple(args.group_by), against=args.against,
                        out_dir=Path(args.out), n_boot=args.bootstrap, seed=args.seed,
                        progress=not args.no_progress, console=console)
    from fedlab.evaluation.report.render import print_table

    out = Console()
    print_table(data, out if out.is_terminal else Console(width=180))
    return 0


if __name__ == "__main__":
    run_exit(main)

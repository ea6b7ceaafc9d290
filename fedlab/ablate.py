"""`python -m fedlab.ablate`: what each answer skill earns, on the questions it answered in a report.

    python -m fedlab.ablate                                   # reports/report.json, production
    python -m fedlab.ablate --report reports/report.json --roles dev heldout --out reports

Answers every question a skill answered in again with the skill switched off (lm.skills_off), the
reader in its place (fedlab.evaluation.report.ablation), and writes skills_ablation.{md,json}
beside the report (git-ignored). Exit codes: 0 written, 2 a user error (one line).
"""
from __future__ import annotations

from pathlib import Path

from fedlab.cli import ArgumentParser, add_config_args, run_exit


def parse_args(argv: list[str] | None):
    from fedlab.dataset.registry import DEFAULT_REPORT_ROLES, ROLES

    p = ArgumentParser(prog="python -m fedlab.ablate", description=__doc__.splitlines()[0])
    add_config_args(p, "production", example="retriever=bm25")
    p.add_argument("--report", default="reports/report.json", help="the report whose answers say where each skill fired")
    p.add_argument("--roles", nargs="+", choices=ROLES, default=list(DEFAULT_REPORT_ROLES),
                   help="the report's sets of these roles (default: dev heldout)")
    p.add_argument("--out", default="reports", help="directory for skills_ablation.md / .json (default reports)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    from fedlab.evaluation.report.ablation import ablate
    from fedlab.io import write_json, write_text

    args = parse_args(argv)
    result = ablate(args.report, args.config, tuple(args.sets), tuple(args.roles), progress=not args.no_progress)
    out = Path(args.out)
    write_text(out / "skills_ablation.md", result.to_markdown())
    write_json(out / "skills_ablation.json", result.to_json())
    print(result.to_markdown(), end="")
    return 0


if __name__ == "__main__":
    run_exit(main)

"""`python -m fedlab.fit_sentence_ranker`: fit the reader's sentence ranker on the dev sets' gold quotes.

    python -m fedlab.fit_sentence_ranker                          # production config over dataset=dev_sets
    python -m fedlab.fit_sentence_ranker --records /tmp/r.jsonl    # keep (or reuse) the agent's recorded passages
    python -m fedlab.fit_sentence_ranker --cross-fit-only          # the held-out-set figures; writes no model

The agent answers every dev question as the config does; the passages it hands the reader are
split into the reader's sentences, labelled by the gold quotes, and a logistic regression over
their features is cross-fitted (leave one question set out: hand-set vs model, ranking measures
and drafts right), then fitted on every set and written as JSON with its provenance
(default conf/ranker/extractive-dev.json). Use it with `lm.sentence_ranker=conf/ranker/<file>`.
The work is fedlab.evaluation.answers.ranker_fit's. Exit codes: 0 done, 2 a user error (one line on stderr).
"""
from __future__ import annotations

import sys
from datetime import datetime, timezone

from fedlab.cli import ArgumentParser, add_config_args
from fedlab.errors import FedlabError

DEFAULT_CONFIG = "production"
DEFAULT_OUT = "conf/ranker/extractive-dev.json"
# dev, cross-fitted drafts right of 580 (the hand-set reader: 385): 0.5 -> 365, 0.25 -> 382
MIN_SHARE = 0.25


def parse_args(argv: list[str] | None):
    p = ArgumentParser(prog="python -m fedlab.fit_sentence_ranker", description=__doc__.splitlines()[0])
    add_config_args(p, DEFAULT_CONFIG, example="dataset=dev_sets")
    p.add_argument("--records", default=None, metavar="JSONL",
                   help="the agent's recorded passages: read when the file exists, else written after the run")
    p.add_argument("--out", default=DEFAULT_OUT, help=f"where to write the model (default: {DEFAULT_OUT})")
    p.add_argument("--cross-fit-only", action="store_true", help="print the held-out-set figures; write no model")
    p.add_argument("--min-share", type=float, default=MIN_SHARE,
                   help="the share of the best score a further answer sentence must reach (default: "
                        f"{MIN_SHARE}, chosen on the dev sets' cross-fitted drafts)")
    p.add_argument("--no-drafts", action="store_true", help="ranking measures only (skip re-drafting the answers)")
    return p.parse_args(argv)


def _records(cfg, path: str | None, console):
    from pathlib import Path

    from fedlab.evaluation.answers.ranker_fit import Collected, Record, collect_records
    from fedlab.io import read_jsonl, write_jsonl

    if path and Path(path).is_file():
        rows = read_jsonl(path)
        if not rows or "glossary" not in rows[0]:
            raise FedlabError(f"--records {path} is not a file of recorded passages: remove it to record again")
        head = rows[0]
        console.print(f"records read from {path}")
        return Collected([Record.from_json(r) for r in rows[1:]], head["glossary"], head["datasets"],
                         head["n_questions"])
    collected = collect_records(cfg, console)
    if path:
        write_jsonl(path, [{"glossary": collected.glossary, "datasets": collected.datasets,
                            "n_questions": collected.n_questions}] + [r.to_json() for r in collected.records],
                    sort_keys=False)
    return collected


def print_cross_fit(result, console) -> None:
    """The cross-fitted table on stdout: per held-out set and pooled, hand-set vs model."""
    print("| held-out set | questions with a gold sentence | P@1 hand → model | P@3 hand → model "
          "| nDCG@4 hand → model | drafts right hand → model |")
    print("|---|---|---|---|---|---|")
    for name, m in [*result.per_set.items(), ("pooled", result.pooled)]:
        drafts = f"{m['hand.right']:.0f} → {m['model.right']:.0f} of {m['drafts']:.0f}" if "drafts" in m else "—"
        print(f"| {name} | {m['hand.questions']:.0f} | {m['hand.p@1']:.3f} → {m['model.p@1']:.3f} "
              f"| {m['hand.p@3']:.3f} → {m['model.p@3']:.3f} | {m['hand.ndcg@4']:.3f} → {m['model.ndcg@4']:.3f} "
              f"| {drafts} |")


def main(argv: list[str] | None = None) -> int:
    from rich.console import Console

    try:
        args = parse_args(argv)
        console = Console(stderr=True)
        return run(args, console)
    except FedlabError as exc:
        from fedlab.env import mask_credentials

        print(f"error: {mask_credentials(str(exc))}", file=sys.stderr)
        return 2


def run(args, console) -> int:
    from pathlib import Path

    from fedlab.agent.build import build_backend
    from fedlab.agent.settings import compose_with_agent
    from fedlab.evaluation.answers.ranker_fit import cross_fit, fit_ranker, question_table
    from fedlab.io import write_json
    from fedlab.schema import check_schema
    from fedlab.skills.sentence_ranker import resolve
    from fedlab.tracking import git_commit

    sets = args.sets if any(s.startswith("dataset=") for s in args.sets) else ["dataset=dev_sets", *args.sets]
    cfg = compose_with_agent(args.config, [*sets, "lm.sentence_ranker=null", "lm.dedup_restated=false"])
    check_schema(cfg)
    collected = _records(cfg, args.records, console)
    backend = build_backend(cfg)
    backend.use_glossary(collected.glossary)
    tables = question_table(collected.records, backend.abbreviations, backend.rank_weight, backend.report_weight)
    if not tables:
        raise FedlabError("no answerable question reached the reader: nothing to fit on")
    console.print(f"{len(tables)} questions, {sum(len(t.labels) for t in tables)} sentences, "
                  f"{sum(sum(t.labels) for t in tables)} gold; cross-fitting (leave one set out)")
    if not 0.0 <= args.min_share <= 1.0:
        raise FedlabError(f"--min-share={args.min_share} must be in [0, 1]")
    result = cross_fit(tables, backend, answers=not args.no_drafts, min_share=args.min_share)
    print_cross_fit(result, console)
    if args.cross_fit_only:
        return 0
    meta = {"git_commit": git_commit(), "fitted": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "config": args.config, "overrides": list(sets), "datasets": collected.datasets,
            "n_questions": len(tables), "n_sentences": sum(len(t.labels) for t in tables),
            "n_gold": sum(sum(t.labels) for t in tables), "model": "logistic regression (scikit-learn), standardised",
            "labels": "a sentence matching a gold quote, or stating a key fact in an evidence meeting",
            "cross_fit": {"folds": "leave one question set out", "per_set": result.per_set, "pooled": result.pooled}}
    ranker = fit_ranker(tables, meta=meta, min_share=args.min_share)
    out = resolve(args.out)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    write_json(out, ranker.to_json())
    console.print(f"sentence ranker -> {out}; use it with lm.sentence_ranker={args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

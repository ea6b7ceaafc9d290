"""`python -m fedlab.calibrate`: fit the agent's answerability model on the dev split and the calibration set.

    python -m fedlab.calibrate                       # evaluate config, agent=default lm=extractive
    python -m fedlab.calibrate --config production --target-precision 0.9 --max-false-abstention 0.05
    python -m fedlab.calibrate --set retriever=bm25 --out /tmp/model.json
    python -m fedlab.calibrate --config production --cross-fit   # dev figures on unseen questions; writes nothing
    python -m fedlab.calibrate --config production --cross-fit --seed 1   # another shuffle of the folds
    python -m fedlab.calibrate --set dataset.calibration_path=null      # the dev split alone

The work is fedlab.evaluation.answers.calibrate's (the unmodelled agent over the split, each
answer judged, the model fitted by fedlab.agent.answerability_fit). The lines that make a config
use the model are printed last. Exit codes: 0 fitted, 2 a user error (one line on stderr).
"""
from __future__ import annotations

import sys

from fedlab.cli import ArgumentParser, add_config_args
from fedlab.evaluation.answers.calibrate import METHODS
from fedlab.errors import FedlabError

DEFAULT_CONFIG = "evaluate"


def parse_args(argv: list[str] | None):
    p = ArgumentParser(prog="python -m fedlab.calibrate", description=__doc__.splitlines()[0])
    add_config_args(p, DEFAULT_CONFIG, example="lm=anthropic --set retriever=bm25")
    p.add_argument("--method", default="logistic", choices=METHODS,
                   help="logistic regression heads (platt: the same, the name earlier versions used)")
    p.add_argument("--target-precision", type=float, default=None,
                   help="share of answered questions that must be answerable (default: agent.answerability.target_precision)")
    p.add_argument("--max-false-abstention", type=float, default=None,
                   help="share of answerable questions the threshold may abstain on, spent on abstaining from more "
                        "unanswerable ones (default: agent.answerability.max_false_abstention)")
    p.add_argument("--cross-fit", action="store_true",
                   help="write nothing: measure the agent on the split with each question answered by a model fitted "
                        "on the other folds (the figures to choose settings by)")
    p.add_argument("--seed", type=int, default=0,
                   help="with --cross-fit: the shuffle of the folds (one shuffle of a small split is noisy: average a few)")
    p.add_argument("--split", default="dev", help="split to fit on (default: dev; never fit on test)")
    p.add_argument("--out", default=None, help="where to write the calibrator JSON")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    from rich.console import Console

    from fedlab.evaluation.answers.calibrate import calibrate, compose_for_agent, cross_fit, print_cross_fit, print_result

    try:
        args = parse_args(argv)
        console = Console(stderr=True)
        cfg = compose_for_agent(args.config, args.sets, args.split)
        if args.cross_fit:
            outcome = cross_fit(cfg, target_precision=args.target_precision,
                                max_false_abstention=args.max_false_abstention, console=console, seed=args.seed)
            print_cross_fit(outcome, args.split)
            return 0
        result = calibrate(cfg, out=args.out, target_precision=args.target_precision, config_name=args.config,
                           overrides=args.sets, console=console, method=args.method,
                           max_false_abstention=args.max_false_abstention)
    except FedlabError as exc:
        from fedlab.env import mask_credentials

        print(f"error: {mask_credentials(str(exc))}", file=sys.stderr)
        return 2
    print_result(result, console)
    return 0


if __name__ == "__main__":
    sys.exit(main())

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
    p.add_argument("--update-config", default=None, metavar="YAML",
                   help="also write the thresholds the fit chose into this config's agent.answerability block "
                        "(e.g. conf/production.yaml; its comments and other keys are kept)")
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
    if args.update_config:
        update_thresholds(args.update_config, str(result.out))
        console.print(f"{args.update_config}: agent.answerability set to the thresholds of {result.out}")
    return 0


def update_thresholds(config_file: str, model_path: str) -> None:
    """Rewrite ``config_file``'s ``agent.answerability`` with the thresholds ``model_path`` chose,
    atomically, keeping its leading comment block."""
    from pathlib import Path

    import yaml

    from fedlab.evaluation.gates import leading_comments
    from fedlab.io import write_text
    from fedlab.sweeps.production import chosen_threshold

    path = Path(config_file)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise FedlabError(f"--update-config {config_file} cannot be read ({type(exc).__name__}): pass a config file") from None
    if not isinstance(data, dict) or not isinstance(data.get("agent"), dict):
        raise FedlabError(f"--update-config {config_file} has no agent block: pass a config with an agent (conf/production.yaml)")
    data["agent"].setdefault("answerability", {}).update(chosen_threshold(model_path))
    write_text(path, leading_comments(path) + yaml.safe_dump(data, sort_keys=False, default_flow_style=False,
                                                             allow_unicode=True))


if __name__ == "__main__":
    sys.exit(main())

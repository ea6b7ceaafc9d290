"""`python -m fedlab.calibrate`: fit the agent's answerability model on the dev split.

    python -m fedlab.calibrate                       # evaluate config, agent=default lm=extractive
    python -m fedlab.calibrate --config production --target-precision 0.9
    python -m fedlab.calibrate --set retriever=bm25 --out /tmp/model.json

The work is fedlab.evaluation.answers.calibrate's (the unmodelled agent over the split, each
answer judged, the model fitted by fedlab.agent.answerability_fit). The lines that make a config
use the model are printed last. Exit codes: 0 fitted, 2 a user error (one line on stderr).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fedlab.errors import FedlabError

DEFAULT_CONFIG = "evaluate"


def compose_for_agent(config: str, sets: list[str], split: str):
    """The config with the agent and lm groups selected (defaults added when neither names them)."""
    from fedlab.agent.settings import compose_with_agent

    return compose_with_agent(config, [*sets, f"dataset.split={split}"])


def config_path(out: Path) -> str:
    """How a config names ``out``: under the checkout via ${paths.root_dir}, else absolute."""
    from fedlab.config import CONF_DIR

    try:
        return "${paths.root_dir}/" + out.resolve().relative_to(CONF_DIR.resolve().parent).as_posix()
    except ValueError:
        return str(out.resolve())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m fedlab.calibrate", description=__doc__.splitlines()[0])
    p.add_argument("--config", default=DEFAULT_CONFIG, help="config name in conf/ or a YAML path (default: evaluate)")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                   help="a config override, repeatable (e.g. --set lm=anthropic --set retriever=bm25)")
    p.add_argument("--method", default="logistic", choices=("logistic", "platt"),
                   help="logistic regression heads (platt: the same, the name earlier versions used)")
    p.add_argument("--target-precision", type=float, default=None,
                   help="share of answered questions that must be answerable (default: agent.answerability.target_precision)")
    p.add_argument("--split", default="dev", help="split to fit on (default: dev; never fit on test)")
    p.add_argument("--out", default=None, help="where to write the calibrator JSON")
    args = p.parse_args(argv)
    try:
        return _run(args)
    except FedlabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _run(args) -> int:
    from rich.console import Console

    from fedlab.evaluation.answers.calibrate import calibrate

    console = Console(stderr=True)
    cfg = compose_for_agent(args.config, [*args.sets, "agent.calibration=null"], args.split)
    result = calibrate(cfg, out=args.out, target_precision=args.target_precision, config_name=args.config,
                       overrides=args.sets, console=console)
    model, out, target = result.model, result.out, result.target_precision
    console.print(f"{result.n_questions} {result.split} questions ({result.n_searched} searched, {result.n_correct} "
                  f"answered correctly with no model); answerability model -> {out}")
    console.print(f"threshold P(answerable) >= {model.threshold:.3f} for precision {target:.2f} (out of fold): "
                  f"answers {model.meta['oof_answered']:.2f} of the searched questions, abstains on "
                  f"{model.meta['oof_abstention_on_unanswerable']:.2f} of the unanswerable, "
                  f"{model.meta['oof_false_abstention']:.2f} of the answerable; AUROC answerable "
                  f"{model.meta['oof_auroc_answerable']:.3f}, off topic {model.meta['oof_auroc_off_topic']:.3f}")
    console.print("add to the production config (YAML), or pass the overrides:")
    print(f"agent:\n  calibration: {config_path(out)}\n  answerability:\n    threshold: {model.threshold}\n"
          f"    target_precision: {target}")
    print(f"agent.calibration='{config_path(out)}' agent.answerability.threshold={model.threshold}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

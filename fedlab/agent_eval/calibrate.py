"""`python -m fedlab.agent_eval.calibrate`: fit the agent's confidence calibrator on the dev split.

    python -m fedlab.agent_eval.calibrate                       # evaluate config, agent=default lm=extractive
    python -m fedlab.agent_eval.calibrate --config production --method platt
    python -m fedlab.agent_eval.calibrate --set retriever=bm25 --out /tmp/cal.json

The agent answers every question of the split; an answer is correct when it is an answer to
an answerable question stating all key facts, or an abstention on an unanswerable / off-topic
question. The raw confidence (``AgentAnswer.raw_confidence``) is fitted against that, and the
calibrator is written as plain JSON (default ``conf/calibration/<lm>-<retriever>.json``: the
raw score depends on both). The lines that make a config use it are printed last.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fedlab.errors import FedlabError

DEFAULT_CONFIG = "evaluate"


def compose_for_agent(config: str, sets: list[str], split: str):
    """The config with the agent and lm groups selected (defaults added when neither names them)."""
    from fedlab.agent.config import compose_with_agent

    return compose_with_agent(config, [*sets, f"dataset.split={split}"])


def default_out(cfg) -> Path:
    from fedlab.config import CONF_DIR

    lm = cfg.lm._target_.rsplit(".", 1)[-1].removesuffix("Backend").lower()
    return CONF_DIR / "calibration" / f"{lm}-{cfg.retriever.kind}.json"


def config_path(out: Path) -> str:
    """How a config names ``out``: under the checkout via ${paths.root_dir}, else absolute."""
    from fedlab.config import CONF_DIR

    try:
        return "${paths.root_dir}/" + out.resolve().relative_to(CONF_DIR.resolve().parent).as_posix()
    except ValueError:
        return str(out.resolve())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m fedlab.agent_eval.calibrate", description=__doc__.splitlines()[0])
    p.add_argument("--config", default=DEFAULT_CONFIG, help="config name in conf/ or a YAML path (default: evaluate)")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                   help="a config override, repeatable (e.g. --set lm=anthropic --set retriever=bm25)")
    p.add_argument("--method", default=None, choices=("isotonic", "platt"),
                   help="default: platt (monotone and smooth: it keeps the ranking of the raw scores)")
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

    from fedlab.agent.build import build_agent
    from fedlab.agent.searcher import open_direct
    from fedlab.agent_eval.calibration import brier, collapse_problem, distinct_outputs, ece, fit_calibrator
    from fedlab.agent_eval.harness import run_agent
    from fedlab.agent_eval.measures import judge_answer, raw_score
    from fedlab.eval.harness import dataset_hash, load_split
    from fedlab.pipeline import build_pipeline

    console = Console(stderr=True)
    cfg = compose_for_agent(args.config, args.sets, args.split)
    method = args.method or "platt"
    questions = load_split(cfg.dataset.path, cfg.dataset.split)
    pipeline = build_pipeline(cfg, progress=True)  # what a cold cache builds, shown on stderr
    agent = build_agent(cfg, search=open_direct(cfg, pipeline))
    agent.calibrator = None  # fit on raw scores, whatever the config applies
    answers = run_agent(agent, questions, progress=True, console=console)
    correct = [judge_answer(q, a, (), {}).correct for q, a in zip(questions, answers)]
    raw = [raw_score(a) for a in answers]
    meta = {"split": cfg.dataset.split, "dataset_hash": dataset_hash(cfg.dataset.path),
            "lm": cfg.lm._target_, "retriever": cfg.retriever.kind, "config": args.config, "sets": list(args.sets),
            "ece_raw": ece(raw, correct), "brier_raw": brier(raw, correct)}
    cal = fit_calibrator(raw, correct, method, meta=meta)
    fitted = cal.predict_many(raw)
    cal.meta.update({"ece_fitted": ece(fitted, correct), "brier_fitted": brier(fitted, correct),
                     "distinct_outputs": distinct_outputs(cal, raw)})
    problem = collapse_problem(cal, raw)
    if problem:
        raise FedlabError(f"{problem}: it cannot tell good answers from bad ones; use --method platt")
    out = Path(args.out) if args.out else default_out(cfg)
    cal.save(out)
    console.print(f"{len(questions)} {cfg.dataset.split} questions, {sum(correct)} correct; {method} calibrator -> {out}")
    console.print(f"ECE {cal.meta['ece_raw']:.3f} -> {cal.meta['ece_fitted']:.3f}, "
                  f"Brier {cal.meta['brier_raw']:.3f} -> {cal.meta['brier_fitted']:.3f} (in-sample)")
    console.print("add to the production config (YAML), or pass the override:")
    print(f"agent:\n  calibration: {config_path(out)}")
    print(f"agent.calibration='{config_path(out)}'")
    return 0


if __name__ == "__main__":
    sys.exit(main())

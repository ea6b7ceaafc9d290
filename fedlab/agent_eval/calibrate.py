"""`python -m fedlab.agent_eval.calibrate`: fit the agent's answerability model on the dev split.

    python -m fedlab.agent_eval.calibrate                       # evaluate config, agent=default lm=extractive
    python -m fedlab.agent_eval.calibrate --config production --target-precision 0.9
    python -m fedlab.agent_eval.calibrate --set retriever=bm25 --out /tmp/model.json

The agent answers every question of the split with no model (every question it searches is
answered from its first search) and records each question's features; an answer is correct
when it is an answer to an answerable question stating all key facts. The model
(fedlab.agent.answerability: an off-topic head and a correct / wrong / unanswerable head) is
fitted on those rows, its abstention threshold chosen out of fold for the target precision
(fedlab.agent_eval.fit_answerability), and written as plain JSON (default
``conf/calibration/<lm>-<retriever>.json``: the features depend on both). The lines that make a
config use it are printed last.
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

    from fedlab.agent.build import build_agent
    from fedlab.agent.evidence import Vocabulary
    from fedlab.agent.searcher import open_direct
    from fedlab.agent_eval.fit_answerability import Row, fit_model
    from fedlab.agent_eval.harness import run_agent
    from fedlab.agent_eval.measures import judge_answer
    from fedlab.eval.harness import dataset_hash, load_split
    from fedlab.pipeline import build_pipeline

    console = Console(stderr=True)
    cfg = compose_for_agent(args.config, [*args.sets, "agent.calibration=null"], args.split)
    target = args.target_precision if args.target_precision is not None else \
        float(cfg.agent.get("answerability", {}).get("target_precision") or 0.9)
    if not 0.0 < target <= 1.0:
        raise FedlabError(f"--target-precision={target} must be in (0, 1]")
    questions = load_split(cfg.dataset.path, cfg.dataset.split)
    pipeline = build_pipeline(cfg, progress=True)  # what a cold cache builds, shown on stderr
    vocabulary = Vocabulary.from_chunks(pipeline.chunks)
    agent = build_agent(cfg, search=open_direct(cfg, pipeline))
    agent.model, agent.vocabulary = None, vocabulary  # unmodelled: answer from the first search, record features
    answers = run_agent(agent, questions, progress=True, console=console)
    rows = []
    for q, a in zip(questions, answers):
        if a.abstain_reason == "coverage":  # decided before any evidence: not the model's to learn
            continue
        judged = judge_answer(q, a, (), {})
        outcome = "correct" if judged.answer_correct else "wrong" if q.answerable else "unanswerable"
        rows.append(Row(dict(a.signals), outcome, q.category == "off_topic"))
    off_threshold = float(agent.settings.off_topic_threshold)
    meta = {"split": cfg.dataset.split, "dataset_hash": dataset_hash(cfg.dataset.path),
            "corpus_hash": pipeline.corpus.content_hash,
            "lm": cfg.lm._target_, "retriever": cfg.retriever.kind, "config": args.config, "sets": list(args.sets),
            "method": "logistic"}
    model = fit_model(rows, vocabulary, target, off_threshold, meta=meta)
    out = Path(args.out) if args.out else default_out(cfg)
    model.save(out)
    n_correct = sum(r.outcome == "correct" for r in rows)
    console.print(f"{len(questions)} {cfg.dataset.split} questions ({len(rows)} searched, {n_correct} answered correctly "
                  f"with no model); answerability model -> {out}")
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

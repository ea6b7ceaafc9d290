"""One compile of the agent's DSPy program as one MLflow run (``python -m fedlab.optimize``).

The config's pipeline and agent are built as for an evaluation; the training and dev questions are
``dataset``'s (role dev, refused otherwise), the heldout ones ``optimize.heldout``'s (role heldout);
fedlab.evaluation.compile compiles and measures. The program is written atomically to
``optimize.out`` (default models/programs/<lm>-<optimizer>.json, git-ignored) with its provenance,
and logged as the run's artifact beside the figures (<dev|heldout>.<before|after>.<measure>).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from fedlab.errors import FedlabError


@dataclass
class OptimizeResult:
    out: Path
    figures: dict[str, float]
    run_id: str


def program_path(cfg: DictConfig, lm_name: str) -> tuple[str, Path]:
    """(name, path) of the program file the config asks for."""
    settings = cfg.optimize
    name = str(settings.get("name") or f"{lm_name}-{settings.optimizer}")
    if not name.replace("-", "").replace("_", "").replace(".", "").isalnum():
        raise FedlabError(f"optimize.name={name!r}: use letters, digits, '-', '_' and '.' only")
    out = settings.get("out") or Path(cfg.paths.root_dir) / "models" / "programs" / f"{name}.json"
    out = Path(str(out))
    if out.suffix != ".json":
        raise FedlabError(f"optimize.out={out}: a compiled program is written as .json")
    return name, out


def optimize(cfg: DictConfig, console=None) -> OptimizeResult:
    from fedlab.agent.build import build_agent
    from fedlab.agent.searcher import open_direct
    from fedlab.dataset.registry import effective_role, registered
    from fedlab.evaluation.compile import compile_program, split_questions
    from fedlab.evaluation.retrieval.harness import load_questions, load_split
    from fedlab.evaluation.run import check_config_sources, group_choices
    from fedlab.lm.program_file import save_program
    from fedlab.pipeline import build_pipeline
    from fedlab.tracking import Tracker, git_commit, mask_hydra_record, run_params

    mask_hydra_record()
    check_config_sources(cfg)
    choices = group_choices()
    lm_name = choices.get("lm") or str(OmegaConf.select(cfg, "lm._target_", default="lm")).rsplit(".", 2)[-2]
    name, out = program_path(cfg, lm_name)
    dev, _ = load_questions(cfg.dataset)
    role = effective_role(cfg.dataset.get("role"), dev)
    if role != "dev":
        raise FedlabError(f"dataset={cfg.dataset.get('name') or cfg.dataset.get('path')} has role {role}: a program "
                          "is compiled on dev questions only (dataset=dev_sets, or a set of role dev)")
    heldout_set = cfg.optimize.get("heldout")
    heldout = []
    if heldout_set:
        held = registered(str(heldout_set))
        if held.role != "heldout":
            raise FedlabError(f"optimize.heldout={heldout_set} has role {held.role}: name a set of role heldout "
                              "(e.g. realistic_heldout), or optimize.heldout=null")
        heldout = load_split(held.path, held.split, held.ids)
    train, dev_eval, heldout_eval = split_questions(dev, heldout, cfg.optimize)
    tracker = Tracker.shared(cfg.mlflow.tracking_uri, cfg.mlflow.experiment)  # fails fast, in one line
    pipeline = build_pipeline(cfg, progress=cfg.eval.progress)
    agent = build_agent(cfg, search=open_direct(cfg, pipeline))
    resolved = OmegaConf.to_container(cfg, resolve=True)
    commit = git_commit()
    tags = {"git_commit": commit, "dataset_name": str(cfg.dataset.get("name") or ""), "dataset_role": role,
            "optimizer": str(cfg.optimize.optimizer), "program": name}
    with tracker.run(name=cfg.mlflow.run_name or f"optimize:{name}", tags=tags) as run:
        tracker.log_params(run_params(resolved, choices))
        compiled = compile_program(agent, pipeline, train, dev_eval, heldout_eval, cfg.optimize, console)
        provenance = {"git_commit": commit, "lm": lm_name, "model": str(OmegaConf.select(cfg, "lm.model") or ""),
                      "optimizer": str(cfg.optimize.optimizer), "dataset": str(cfg.dataset.get("name") or ""),
                      "heldout": str(heldout_set or ""), "train_ids": compiled.train_ids,
                      "figures": {k: round(v, 6) for k, v in compiled.figures.items()}}
        save_program(compiled.program, out, provenance)
        tracker.log_metrics(compiled.figures)
        tracker.mlflow.log_artifact(str(out), artifact_path="program")
        run_id = run.info.run_id
    return OptimizeResult(out, compiled.figures, run_id)


def print_result(result: OptimizeResult, console) -> None:
    from rich.table import Table

    table = Table(title=f"compiled program: {result.out}")
    # answer_accuracy, abstention_accuracy, lm_failures, seconds, tokens and cost per question
    for column in ("slice", "when", "score", "ans_acc", "abst_acc", "failed", "s/q", "tokens/q", "cost/q"):
        table.add_column(column, justify="right")
    f = result.figures
    for label in ("dev", "heldout"):
        for when in ("before", "after"):
            p = f"{label}.{when}."
            if f"{p}score" not in f:
                continue
            cell = lambda k, fmt="{:.3f}": fmt.format(f[p + k]) if p + k in f else "-"  # noqa: E731
            table.add_row(f"{label} ({int(f[p + 'n'])})", when, cell("score"), cell("answer_accuracy"),
                          cell("abstention_accuracy"), cell("lm_failures", "{:.0f}"), cell("seconds_per_question", "{:.1f}"),
                          cell("tokens_per_question", "{:.0f}"), cell("cost_per_question", "{:.5f}"))
    console.print(table)
    console.print(f"compile: {f.get('compile_s', 0):.0f} s, {f.get('demos', 0):.0f} demos; MLflow run {result.run_id}")
    console.print(f"use it: agent.program={result.out}")

"""Compose the agent from a config: `agent` (settings) and `lm` (backend) groups, both `_target_`."""
from __future__ import annotations

from fedlab.errors import FedlabError


def instantiate_fedlab(node, group: str = "the agent", **kwargs):
    """hydra.utils.instantiate, with a FedlabError raised inside a constructor passed through as is
    and any other failure one line with its cause (fedlab.config.instantiate_group)."""
    from fedlab.config import instantiate_group

    return instantiate_group(node, group, **kwargs)


def require_groups(cfg) -> None:
    for group in ("agent", "lm"):
        if group not in cfg:
            raise FedlabError(f"config has no '{group}' group: add +{group}=... to the overrides")


def settings_from(cfg):
    return instantiate_fedlab(cfg.agent, "agent")


def default_today(cfg) -> str | None:
    return cfg.retriever.get("corpus_end") if "retriever" in cfg else None


def build_backend(cfg):
    return instantiate_fedlab(cfg.lm, "lm")


def build_agent(cfg, search=None, backend=None):
    """The AgentProgram ``cfg`` describes; ``search`` (a SearchAccess) and ``backend`` may be supplied."""
    from fedlab.agent.answerability import load_model
    from fedlab.agent.program import AgentProgram
    from fedlab.agent.searcher import open_search

    require_groups(cfg)
    settings = settings_from(cfg)
    search = search or open_search(cfg, settings.transport)
    backend = backend or build_backend(cfg)
    if settings.program:
        load_program(backend, settings.program)
    model = load_model(settings.calibration)
    check_model(model, cfg)
    return AgentProgram(search, backend, settings, model=model, today=default_today(cfg))


def load_program(backend, path) -> None:
    """A compiled program (``agent.program``) loaded into ``backend``'s predictors; one line when
    the backend has none (the extractive one) or the file is not one."""
    if not hasattr(backend, "load_program"):
        raise FedlabError(f"agent.program={path} is a compiled DSPy program, which lm={getattr(backend, 'name', '?')} "
                          "does not run: use it with the lm it was compiled for (e.g. lm=openai_compatible), "
                          "or drop agent.program")
    backend.load_program(path)


def check_model(model, cfg) -> None:
    """The answerability model's features depend on the retriever kind it was fitted with, and its
    question head on the embedder: refuse to apply it to another, in one line that says how to fit
    the right one."""
    if model is None or "retriever" not in cfg:
        return
    fitted, kind = model.meta.get("retriever"), cfg.retriever.get("kind")
    if fitted and kind and fitted != kind:
        raise FedlabError(
            f"agent.calibration={cfg.agent.calibration} was fitted for {fitted} retrieval, this config retrieves "
            f"with {kind}: fit one (`python -m fedlab.calibrate --set retriever={kind} "
            f"--out conf/calibration/extractive-{kind}.json`) and pass agent.calibration=…, or agent.calibration=null")
    fitted, name = model.meta.get("embedder"), cfg.embedder.get("name") if "embedder" in cfg else None
    if model.reads_questions and fitted and name and fitted != name:
        raise FedlabError(
            f"agent.calibration={cfg.agent.calibration} reads questions embedded by {fitted}, this config embeds "
            f"with {name}: fit one (`python -m fedlab.calibrate --set embedder={name} --out FILE`) and pass "
            "agent.calibration=…, or agent.calibration=null")

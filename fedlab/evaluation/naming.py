"""The name an evaluation run is logged under, read off its config.

e.g. ``hybrid/minilm/exact/recursive200-40/date/k10[/lateinteraction]``; in a sweep the parts
that vary lead, so they stay visible when the MLflow UI truncates names.
"""
from __future__ import annotations

from omegaconf import DictConfig, OmegaConf


def _short(target: str, suffix: str) -> str:
    return target.rsplit(".", 1)[-1].removesuffix(suffix).lower()


def name_parts(cfg: DictConfig) -> list[tuple[str, str]]:
    """(config key, part) pairs of a run's name, in the order of the full name."""
    parts = [("retriever", str(cfg.retriever.kind))]
    if cfg.retriever.kind != "bm25":
        index = _short(cfg.index._target_, "Index")
        parts += [("embedder", str(cfg.embedder.name)),
                  ("index", index + ("-postfilter" if cfg.index.get("filter_mode") == "post" else ""))]
    parts.append(("chunker", f"{_short(cfg.chunker._target_, 'Chunker')}{cfg.chunker.size}-{cfg.chunker.overlap}"))
    parts += [("retriever.date_aware", "date" if cfg.retriever.date_aware else "nodate"),
              ("retriever.top_k", f"k{cfg.retriever.top_k}")]
    reranker = _short(cfg.reranker._target_, "Reranker")
    if reranker != "no":
        parts.append(("reranker", reranker))
    if "agent" in cfg and "lm" in cfg:
        parts.append(("lm", f"agent-{_short(cfg.lm._target_, 'Backend')}"))
    return parts


# Settings a name part spells out besides its group's choice: chunker256-0 shows size and overlap.
SHOWN_BY_PART = {"chunker.size": "chunker", "chunker.overlap": "chunker", "retriever.kind": "retriever",
                 "index.filter_mode": "index", "embedder.name": "embedder"}


def _owner(key: str, parts: list[tuple[str, str]]) -> str | None:
    """The name part that shows a sweep key's value (``chunker.size`` → ``chunker``), or None."""
    keys = [k for k, _ in parts]
    owner = key if key in keys else SHOWN_BY_PART.get(key)
    return owner if owner in keys else None


def run_name(cfg: DictConfig, varying: list[str] | tuple[str, ...] = ()) -> str:
    """e.g. hybrid/minilm/exact/recursive200-40/date/k10[/lateinteraction]. In a sweep the parts
    that vary lead (``bm25 · recursive256-0/date/k10``), so they stay visible when the MLflow UI
    truncates names; a varied setting with no part of its own is shown as ``key=value``."""
    parts = name_parts(cfg)
    if not varying:
        return "/".join(p for _, p in parts)
    lead_keys: list[str] = []
    extra: list[str] = []
    for key in varying:
        owner = _owner(key, parts)
        if owner is not None:
            if owner not in lead_keys:
                lead_keys.append(owner)
        else:
            extra.append(f"{key.rsplit('.', 1)[-1]}={OmegaConf.select(cfg, key, default='?')}")
    lead = [p for k, p in parts if k in lead_keys] + extra
    rest = [p for k, p in parts if k not in lead_keys]
    return "/".join(lead) + (" · " + "/".join(rest) if rest else "")

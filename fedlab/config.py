"""Hydra/OmegaConf glue shared by every entry point."""
from __future__ import annotations

import functools
import os
from pathlib import Path

from omegaconf import OmegaConf

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"


@functools.cache
def project_root() -> str:
    """The checkout root (where conf/ and pyproject.toml live); the cwd for a wheel install."""
    here = Path(__file__).resolve().parent.parent
    if (here / "pyproject.toml").exists() and (here / "conf").is_dir():
        return str(here)
    return os.getcwd()


def register_resolvers() -> None:
    if not OmegaConf.has_resolver("fedlab_root"):
        OmegaConf.register_new_resolver("fedlab_root", project_root)
    if not OmegaConf.has_resolver("fedlab_job_env"):
        from fedlab.env import job_env

        OmegaConf.register_new_resolver("fedlab_job_env", job_env)
    if not OmegaConf.has_resolver("dataset_role"):
        OmegaConf.register_new_resolver("dataset_role", dataset_role)
    if not OmegaConf.has_resolver("eval_traces"):
        OmegaConf.register_new_resolver("eval_traces", default_traces)


def default_traces() -> str:
    """The ``${eval_traces:}`` resolver, ``eval.traces`` unless given: ``sample`` in a Hydra
    multirun (a sweep's configs), ``all`` otherwise (one evaluation, the gate, the report)."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    try:
        return "sample" if HydraConfig.get().mode == RunMode.MULTIRUN else "all"
    except ValueError:  # not in a Hydra app
        return "all"


# The roles of question sets (fedlab.dataset.registry says what each may be used for).
DATASET_ROLES = ("dev", "heldout", "test", "train")


def registered_dataset_file(name: str) -> Path | None:
    """The JSONL file ``conf/dataset/<name>.yaml`` registers (``${paths.root_dir}`` read as the
    project root), or None when there is no such config or it names no path."""
    import yaml

    conf = CONF_DIR / "dataset" / f"{name}.yaml"
    if not name or not conf.is_file():
        return None
    try:
        raw = (yaml.safe_load(conf.read_text(encoding="utf-8")) or {}).get("path")
    except (OSError, yaml.YAMLError, AttributeError):
        return None
    if not raw:
        return None
    file = Path(str(raw).replace("${paths.root_dir}", project_root()))
    return file if file.is_absolute() else Path(project_root()) / file


def dataset_role(role: str, *, _parent_) -> str:
    """The ``${dataset_role:ROLE}`` resolver of a registered question set: ROLE while
    ``dataset.path`` is the config's own file, ``heldout`` once it points at any other file."""
    if role not in DATASET_ROLES:
        raise ValueError(f"dataset role {role!r} is not one of {', '.join(DATASET_ROLES)}")
    own, path = registered_dataset_file(str(_parent_.get("name") or "")), _parent_.get("path")
    try:
        if own is not None and path is not None and Path(str(path)).resolve() == own.resolve():
            return role
    except OSError:
        pass
    return "heldout"


register_resolvers()


def compose(config_name: str, overrides: list[str] | None = None):
    """Compose a config outside a Hydra app: a name in conf/, or a path to a YAML config."""
    from fedlab.errors import FedlabError

    as_path = Path(config_name)
    if as_path.suffix in (".yaml", ".yml"):
        if not as_path.exists():
            raise FedlabError(f"config file {config_name} does not exist: pass the path of a YAML config, "
                              "or the name of a config in conf/ (e.g. --config evaluate)")
        if not as_path.is_file():
            raise FedlabError(f"config file {config_name} is not a file: pass the path of a YAML config")
        check_config_file(as_path)
        cfg = _compose_file(as_path, overrides)
        check_targets(cfg, config_name)  # read from outside conf/: it calls fedlab's code only
        return cfg
    if not (CONF_DIR / f"{config_name}.yaml").is_file():
        raise FedlabError(f"no config {config_name!r} in {CONF_DIR}: run `make export` to write conf/production.yaml, "
                          "or pass the name of a file in conf/ or a path to a YAML config")
    check_config_file(CONF_DIR / f"{config_name}.yaml")
    cfg = _compose_in(CONF_DIR, config_name, overrides)
    check_targets(cfg, config_name)  # nor a `_target_` set by an override (Hydra's refusal is a traceback)
    return cfg


def check_config_file(path: Path) -> dict:
    """The YAML mapping in ``path``; a one-line FedlabError naming the file when it is unreadable,
    not UTF-8, not YAML, or not a mapping of config keys at the top level."""
    import yaml

    from fedlab.errors import FedlabError

    fix = "a config is a YAML mapping such as `defaults: [...]` (see conf/evaluate.yaml)"
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise FedlabError(f"config file {path} cannot be read ({exc.strerror or type(exc).__name__}): "
                          "check its permissions") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FedlabError(f"config file {path} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
                          f"{exc.start}): save it as UTF-8") from None
    try:
        loaded = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise FedlabError(f"config file {path} is not valid YAML ({yaml_problem(exc)}): fix the file; {fix}") from None
    if not isinstance(loaded, dict):
        what = "nothing" if loaded is None else f"a {type(loaded).__name__} ({_clip(repr(loaded))})"
        raise FedlabError(f"config file {path} holds {what} at the top level, not a mapping of config keys: {fix}")
    if not isinstance(loaded.get("defaults", []), list):
        raise FedlabError(f"config file {path} has a defaults entry that is not a list "
                          f"({_clip(repr(loaded['defaults']))}): write it as `defaults: [- group: choice, ...]`")
    return loaded


def yaml_problem(exc: Exception) -> str:
    """A YAML error as one clause: the problem and where it is (line and column, 1-based)."""
    problem = " ".join(str(getattr(exc, "problem", None) or exc).split())
    mark = getattr(exc, "problem_mark", None)
    if mark is not None:
        problem = f"{problem}, line {mark.line + 1} column {mark.column + 1}"
    return _clip(problem, 160)


def _clip(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


# -- the code a config may call --------------------------------------------------------------
# A config names code by `_target_`s, which Hydra imports and calls. fedlab's own are those of the
# group files conf/<group>/<choice>.yaml (the checkout: whoever can write them can change the code
# anyway); every composed config — one read from elsewhere, an override's `_target_`, a config
# rebuilt from a tracking store — may name only those.
SKIPPED_GROUPS = ("experiment", "hydra")  # studies set values only; Hydra's node is Hydra's


@functools.cache
def group_configs(group: str) -> dict[str, dict]:
    """{choice: the YAML mapping of conf/<group>/<choice>.yaml} ({} for a name that is no group)."""
    import yaml

    directory = CONF_DIR / group
    if group in SKIPPED_GROUPS or not directory.is_dir():
        return {}
    return {p.stem: yaml.safe_load(p.read_text(encoding="utf-8")) or {} for p in sorted(directory.glob("*.yaml"))}


def _targets(node, where: str):
    """(dotted place of the node holding it, value) of every ``_target_`` in a plain container."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "_target_":
                yield where, value
            else:
                yield from _targets(value, f"{where}.{key}")
    elif isinstance(node, (list, tuple)):
        for i, value in enumerate(node):
            yield from _targets(value, f"{where}.{i}")


@functools.cache
def fedlab_targets() -> dict[str, frozenset]:
    """{place: the ``_target_``s fedlab's group files put there} (``reranker`` -> the rerankers')."""
    found: dict[str, set] = {}
    for directory in sorted(p for p in CONF_DIR.iterdir() if p.is_dir()):
        for choice in group_configs(directory.name).values():
            for where, target in _targets(choice, directory.name):
                found.setdefault(where, set()).add(target)
    return {k: frozenset(v) for k, v in found.items()}


def check_targets(cfg, label: str) -> None:
    """A one-line FedlabError when ``cfg`` (a composed config or a plain dict) names code that none
    of fedlab's group files names at that place: a ``_target_`` that is not one of the group's,
    or one where no group has any. Interpolations are not followed: a ``_target_`` must be a
    literal name. ``compose`` and the Hydra apps call it before anything of a config is instantiated."""
    from fedlab.errors import FedlabError

    container = OmegaConf.to_container(cfg, resolve=False) if OmegaConf.is_config(cfg) else cfg
    allowed = fedlab_targets()
    for key, node in (container or {}).items():
        if key in SKIPPED_GROUPS:
            continue
        for where, target in _targets(node, str(key)):
            if target not in allowed.get(where, ()):
                group = where.split(".", 1)[0]
                known = sorted(allowed.get(where, ()))
                fix = (f"name one of conf/{group}/ ({', '.join(sorted(group_configs(group)))}) instead"
                       if known else "remove it: fedlab's configs call no code there")
                raise FedlabError(f"config {label!r} sets {where}._target_={_clip(repr(target), 80)}, which is not one "
                                  f"of fedlab's own: {fix}")


def instantiate_group(node, group: str, **kwargs):
    """``hydra.utils.instantiate`` of a config group's node (``reranker``): a FedlabError raised in
    its constructor passes through as it is; any other failure — a constructor's TypeError, Hydra
    refusing a target — is one FedlabError line naming the group and the cause, not Hydra's
    many-line InstantiationException."""
    from hydra.errors import InstantiationException
    from hydra.utils import instantiate

    from fedlab.errors import FedlabError

    try:
        return instantiate(node, **kwargs)
    except InstantiationException as exc:
        cause = exc.__cause__
        while cause is not None and not isinstance(cause, FedlabError):
            cause = cause.__cause__
        if cause is not None:
            raise cause from None
        why = exc.__cause__ if exc.__cause__ is not None else exc
        text = " ".join(str(why).split()) or type(why).__name__
        raise FedlabError(f"{group} cannot be built from its config ({_clip(text, 200)}): check the {group} "
                          "settings and its _target_") from None


# What build_pipeline reads in every config (index / bm25 only for the retrievers that use them).
PIPELINE_GROUPS = ("paths", "corpus", "chunker", "embedder", "retriever", "reranker")


def require_keys(cfg, keys, config_name: str) -> None:
    """A FedlabError when the composed ``cfg`` lacks any of ``keys`` (e.g. a config file that
    does not name the pipeline's groups in its defaults list)."""
    from fedlab.errors import FedlabError

    missing = [k for k in keys if k not in cfg or cfg.get(k) is None]
    if not missing and "retriever" in keys:
        kind = cfg.retriever.get("kind") if hasattr(cfg.retriever, "get") else None
        needs = {"dense": ("index",), "hybrid": ("index", "bm25"), "bm25": ("bm25",)}.get(kind, ())
        missing = [k for k in needs if k not in cfg or cfg.get(k) is None]
    if missing:
        raise FedlabError(f"config {config_name!r} has no {', '.join(missing)}: list the pipeline's groups in its "
                          "defaults list (see conf/evaluate.yaml), or use --config evaluate")
    from omegaconf.errors import OmegaConfBaseException

    for key in keys:  # interpolations resolve now, not as a traceback halfway through the build
        try:
            OmegaConf.to_container(cfg[key], resolve=True) if OmegaConf.is_config(cfg[key]) else cfg[key]
        except OmegaConfBaseException as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise FedlabError(f"config {config_name!r}: {key} does not resolve ({first}): fix the value "
                              "or the --set override") from None


def _compose_file(path: Path, overrides: list[str] | None):
    """A config kept outside conf/ (e.g. an exported production.yaml elsewhere) names conf/'s
    groups in its defaults list, so it is composed beside a copy of conf/."""
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory(prefix="fedlab-conf-") as tmp:
        conf = Path(tmp) / "conf"
        shutil.copytree(CONF_DIR, conf)
        shutil.copyfile(path, conf / "_given.yaml")
        return _compose_in(conf, "_given", overrides, label=str(path))


def _compose_in(config_dir: Path, config_name: str, overrides: list[str] | None, label: str | None = None):
    import yaml
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from fedlab.errors import FedlabError

    from hydra.core.global_hydra import GlobalHydra
    from hydra.initialize import get_gh_backup, restore_gh_from_backup

    # Inside a running Hydra app (export calling the calibrator) Hydra is already initialised:
    # compose in a clean instance and put the app's back afterwards.
    outer = get_gh_backup()
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(config_dir), version_base="1.3"):
            return hydra_compose(config_name=config_name, overrides=list(overrides or []))
    except yaml.YAMLError as exc:  # what safe_load accepts and OmegaConf's loader does not (duplicate keys)
        mark = getattr(exc, "problem_mark", None)
        where = str(getattr(mark, "name", "") or "")
        if label is not None and (not where or where.endswith("_given.yaml")):
            where = label
        elif where.startswith(str(config_dir)):
            where = str(CONF_DIR / Path(where).relative_to(config_dir))
        raise FedlabError(f"config file {where or config_name} is not valid YAML ({yaml_problem(exc)}): "
                          "fix the file") from None
    except (HydraException, OmegaConfBaseException, ValueError) as exc:  # ValueError: a malformed defaults list
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if label is not None:
            first = first.replace("'_given'", repr(label))
        raise FedlabError(f"config {label or config_name!r} does not compose with {overrides}: {first}") from None
    finally:
        restore_gh_from_backup(outer)

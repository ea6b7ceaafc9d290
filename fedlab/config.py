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


register_resolvers()


def compose(config_name: str, overrides: list[str] | None = None):
    """Compose a config outside a Hydra app: a name in conf/, or a path to a YAML config."""
    from fedlab.errors import FedlabError

    as_path = Path(config_name)
    if as_path.suffix in (".yaml", ".yml") and as_path.is_file():
        return _compose_file(as_path, overrides)
    if not (CONF_DIR / f"{config_name}.yaml").is_file():
        raise FedlabError(f"no config {config_name!r} in {CONF_DIR}: run `make export` to write conf/production.yaml, "
                          "or pass the name of a file in conf/ or a path to a YAML config")
    return _compose_in(CONF_DIR, config_name, overrides)


def _compose_file(path: Path, overrides: list[str] | None):
    """A config kept outside conf/ (e.g. an exported production.yaml elsewhere) names conf/'s
    groups in its defaults list, so it is composed beside a copy of conf/."""
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory(prefix="fedlab-conf-") as tmp:
        conf = Path(tmp) / "conf"
        shutil.copytree(CONF_DIR, conf)
        shutil.copyfile(path, conf / "_given.yaml")
        return _compose_in(conf, "_given", overrides)


def _compose_in(config_dir: Path, config_name: str, overrides: list[str] | None):
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
    except (HydraException, OmegaConfBaseException) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise FedlabError(f"config {config_name!r} does not compose with {overrides}: {first}") from None
    finally:
        restore_gh_from_backup(outer)

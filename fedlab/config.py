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

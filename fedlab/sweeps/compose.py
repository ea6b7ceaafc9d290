"""Hydra's config loader for a sweep's jobs, remembering what the jobs share.

Hydra composes every job of a sweep from scratch: about 0.17 s a job for the default study,
a fifth of what a config costs when its artifacts are cached. Most of it goes to two steps that
depend only on the job's config-group choices (``retriever=bm25``), not on its value overrides
(``chunker.size=256``): the defaults list, and the config merged from it. ``SweepConfigLoader``
remembers both per choice of groups and gives each job a deep copy of the merged config; the
rest (value overrides, the ``hydra`` node) runs Hydra's own code. A job's config is the one
Hydra composes (tests/test_sweep_compose.py compares every job of every grid study).

``_load_configuration_impl`` is Hydra 1.3's, with those two steps remembered; the sweeper uses
this loader only under the Hydra version it was written for (``supported``).
"""
from __future__ import annotations

import copy
import os
from typing import Any, List, Optional

from hydra import __version__ as HYDRA_VERSION
from hydra import version
from hydra._internal.config_loader_impl import ConfigLoaderImpl, get_overrides_dirname
from hydra._internal.defaults_list import DefaultsList, create_defaults_list
from hydra.conf import ConfigSourceInfo
from hydra.core.config_loader import ConfigLoader
from hydra.core.default_element import ResultDefault
from hydra.core.override_parser.types import Override
from hydra.core.utils import JobRuntime
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf, open_dict

HYDRA_SERIES = "1.3."


def supported() -> bool:
    """True under the Hydra release series whose loader this one follows."""
    return HYDRA_VERSION.startswith(HYDRA_SERIES)


def for_sweep(loader: ConfigLoader) -> ConfigLoader:
    """The loader a sweep's launcher should compose its jobs with: a SweepConfigLoader over
    Hydra's own, under the Hydra series it follows; any other loader as it is."""
    if supported() and type(loader) is ConfigLoaderImpl:
        return SweepConfigLoader(loader)
    return loader


def _sources(repo) -> tuple:
    """Where configs are read from (hydra.searchpath may add places)."""
    return tuple((s.provider, s.path) for s in repo.get_sources())


class SweepConfigLoader(ConfigLoaderImpl):
    """A ConfigLoaderImpl over the same search path and repository as ``loader``."""

    def __init__(self, loader: ConfigLoaderImpl) -> None:
        self.config_search_path = loader.config_search_path
        self.repository = loader.repository
        self._forget()

    def _forget(self) -> None:
        self._is_group: dict[tuple, bool] = {}
        self._defaults: dict[tuple, DefaultsList] = {}
        self._composed: dict[tuple, DictConfig] = {}

    def __getstate__(self) -> dict[str, Any]:  # launchers ship the loader to their workers
        return {"config_search_path": self.config_search_path, "repository": self.repository}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._forget()

    def _is_value_override(self, override: Override, repo) -> bool:
        """Hydra's own rule (defaults_list.Overrides): a value override sets a key, a group
        override chooses a config; a dict value is always a value override."""
        key = (_sources(repo), override.key_or_group)
        if key not in self._is_group:
            self._is_group[key] = repo.group_exists(override.key_or_group)
        return isinstance(override.value(), dict) or not self._is_group[key]

    def _defaults_list(self, repo, config_name: Optional[str], overrides: List[Override],
                       run_mode: RunMode) -> DefaultsList:
        active = [(o, self._is_value_override(o, repo)) for o in overrides if not o.is_sweep_override()]
        values = [o for o, is_value in active if is_value]
        key = (_sources(repo), config_name, run_mode, tuple(o.input_line for o, is_value in active if not is_value))
        known = self._defaults.get(key)
        if known is None:
            known = self._defaults[key] = create_defaults_list(
                repo=repo, config_name=config_name, overrides_list=overrides, prepend_hydra=True,
                skip_missing=run_mode == RunMode.MULTIRUN)
        return DefaultsList(defaults=known.defaults, config_overrides=values,
                            defaults_tree=known.defaults_tree, overrides=known.overrides)

    def _compose_config_from_defaults_list(self, defaults: List[ResultDefault], repo) -> DictConfig:
        key = (_sources(repo), tuple(repr(d) for d in defaults))
        if key not in self._composed:
            self._composed[key] = super()._compose_config_from_defaults_list(defaults=defaults, repo=repo)
        return copy.deepcopy(self._composed[key])

    def _load_configuration_impl(
        self,
        config_name: Optional[str],
        overrides: List[str],
        run_mode: RunMode,
        from_shell: bool = True,
        validate_sweep_overrides: bool = True,
    ) -> DictConfig:
        # Hydra 1.3.8's ConfigLoaderImpl._load_configuration_impl; only the defaults list differs
        # (remembered per choice of groups, above).
        self.ensure_main_config_source_available()
        parsed_overrides, caching_repo = self._parse_overrides_and_create_caching_repo(config_name, overrides)

        if validate_sweep_overrides:
            self.validate_sweep_overrides_legal(overrides=parsed_overrides, run_mode=run_mode,
                                                from_shell=from_shell)

        defaults_list = self._defaults_list(caching_repo, config_name, parsed_overrides, run_mode)
        config_overrides = defaults_list.config_overrides
        cfg = self._compose_config_from_defaults_list(defaults=defaults_list.defaults, repo=caching_repo)

        OmegaConf.set_struct(cfg, True)
        OmegaConf.set_readonly(cfg.hydra, False)
        ConfigLoaderImpl._apply_overrides_to_config(config_overrides, cfg)
        app_overrides = []
        for override in parsed_overrides:
            if override.is_hydra_override():
                cfg.hydra.overrides.hydra.append(override.input_line)
            else:
                cfg.hydra.overrides.task.append(override.input_line)
                app_overrides.append(override)

        with open_dict(cfg.hydra):
            cfg.hydra.runtime.choices.update(defaults_list.overrides.known_choices)
            for key in cfg.hydra.job.env_copy:
                cfg.hydra.job.env_set[key] = os.environ[key]

        cfg.hydra.runtime.version = HYDRA_VERSION
        cfg.hydra.runtime.version_base = version.getbase()
        cfg.hydra.runtime.cwd = os.getcwd()
        cfg.hydra.runtime.config_sources = [
            ConfigSourceInfo(path=x.path, schema=x.scheme(), provider=x.provider)
            for x in caching_repo.get_sources()
        ]
        if "name" not in cfg.hydra.job:
            cfg.hydra.job.name = JobRuntime().get("name")
        cfg.hydra.job.override_dirname = get_overrides_dirname(
            overrides=app_overrides,
            kv_sep=cfg.hydra.job.config.override_dirname.kv_sep,
            item_sep=cfg.hydra.job.config.override_dirname.item_sep,
            exclude_keys=cfg.hydra.job.config.override_dirname.exclude_keys,
        )
        cfg.hydra.job.config_name = config_name
        return cfg

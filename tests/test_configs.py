"""Every config in conf/ composes as its command composes it, and every study's grid names real keys.

Composed with Hydra's compose API and the Hydra config included (``return_hydra_config``), so the
callbacks and each study's ``hydra.sweeper.params`` are checked too. Needs no corpus.
"""
from __future__ import annotations

import importlib
from pathlib import Path

import pytest
import yaml
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

import fedlab.config  # noqa: F401  (registers the fedlab_root resolver)
from fedlab.sweeps.grid import expand, grid_size, sweep_grid

ROOT = Path(__file__).resolve().parent.parent
CONF = ROOT / "conf"
# conf/<name>.yaml composed by a command (`python -m fedlab.<command>`, `--config-name production`).
PRIMARY = {"evaluate": "evaluate", "export": "export", "ingest": "ingest", "bench": "bench", "production": "evaluate",
           "optimize": "optimize"}
NOT_COMPOSED = {"gates"}  # thresholds read by `make gate`, not a Hydra config
STUDIES = sorted(p.stem for p in (CONF / "experiment").glob("*.yaml"))
# How many configs each study runs (docs/studies.md quotes these).
STUDY_SIZES = {"default": 72, "ann": 10, "embedders": 8, "meeting_aware": 16, "pipeline_choices": 192, "smoke": 2,
               "tpe": 72, "reader": 27, "paraphrase": 8,
               "lm_optimizer": 6}  # tpe: the size of the space its sampler searches (it runs n_trials of it)
# Studies of the production config's own settings, composed on conf/production.yaml (Makefile PRODUCTION_STUDIES).
ON_PRODUCTION = {"reader"}
# Studies of compiling the agent's program (conf/optimize.yaml: `python -m fedlab.optimize experiment=<study>`).
ON_OPTIMIZE = {"lm_optimizer"}


def _study(study: str) -> tuple[str, str]:
    """(primary config, override) that select ``study`` as `make sweep STUDY=<study>` does."""
    if study in ON_OPTIMIZE:
        return "optimize", f"experiment={study}"
    return ("production", f"+experiment={study}") if study in ON_PRODUCTION else ("evaluate", f"experiment={study}")
LAUNCHERS = sorted(p.stem for p in (CONF / "hydra" / "launcher").glob("*.yaml"))


def _compose(name: str, overrides: list[str] = ()):
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose(config_name=name, overrides=list(overrides), return_hydra_config=True)


def _job(cfg) -> dict:
    """The job's config, resolved (the Hydra node left out: it resolves only inside a run)."""
    job = OmegaConf.masked_copy(cfg, [k for k in cfg if k != "hydra"])
    return OmegaConf.to_container(job, resolve=True, throw_on_missing=True)


def _targets(node) -> list[str]:
    if isinstance(node, dict):
        return ([node["_target_"]] if isinstance(node.get("_target_"), str) else []) + [
            t for v in node.values() for t in _targets(v)]
    if isinstance(node, list):
        return [t for v in node for t in _targets(v)]
    return []


def _imports(target: str) -> object:
    module, _, attr = target.rpartition(".")
    return getattr(importlib.import_module(module), attr)


def test_the_primary_configs_are_the_files_in_conf():
    assert {p.stem for p in CONF.glob("*.yaml")} == set(PRIMARY) | NOT_COMPOSED


@pytest.mark.parametrize("name", sorted(PRIMARY))
def test_each_primary_config_composes_and_resolves(name):
    cfg = _compose(name)
    job = _job(cfg)
    assert job["task_name"] == PRIMARY[name]
    assert job["paths"]["root_dir"] == str(ROOT)
    callbacks = OmegaConf.to_container(cfg.hydra.callbacks, resolve=False) or {}
    for target in _targets(job) + _targets(callbacks):
        assert callable(_imports(target)), target


def test_evaluate_without_an_experiment_is_a_single_run_with_no_study():
    cfg = _compose("evaluate")
    assert cfg.hydra.runtime.choices.experiment is None
    assert cfg.hydra.mode is None and not cfg.hydra.sweeper.params
    assert "study" not in cfg
    assert OmegaConf.select(cfg, "hydra.callbacks.mlflow_sweep._target_") == "fedlab.sweeps.callback.SweepCallback"


def test_every_study_is_tested():
    assert STUDIES == sorted(STUDY_SIZES)


@pytest.mark.parametrize("study", STUDIES)
def test_each_study_composes_into_a_named_multirun(study):
    primary, choose = _study(study)
    cfg = _compose(primary, [choose])
    assert cfg.hydra.runtime.choices.experiment == study
    assert str(cfg.hydra.mode) == "RunMode.MULTIRUN"
    assert cfg.study.name == study  # the sweep's parent run is sweep:<study.name> in MLflow
    assert cfg.study.purpose.strip()
    assert not OmegaConf.missing_keys(OmegaConf.masked_copy(cfg, [k for k in cfg if k != "hydra"]))
    grid = sweep_grid(cfg)
    assert "experiment" not in grid  # choosing the study is not part of its grid
    assert grid and grid_size(expand(grid)) == STUDY_SIZES[study]


@pytest.mark.parametrize("study", STUDIES)
def test_each_value_of_a_study_grid_composes(study):
    """Every value of every grid key, beside the first value of the others: each names a key of
    the composed config (or an option of a config group) and its targets import."""
    primary, choose = _study(study)
    base = _compose(primary, [choose])
    values = expand(sweep_grid(base))
    first = {k: v[0] for k, v in values.items()}
    seen = set()
    for key, options in values.items():
        for value in options:
            overrides = [choose, *(f"{k}={value if k == key else v}" for k, v in first.items())]
            if tuple(overrides) in seen:
                continue
            seen.add(tuple(overrides))
            cfg = _compose(primary, overrides)
            group = (CONF / key).is_dir()
            if group:
                assert (CONF / key / f"{value}.yaml").is_file(), (study, key, value)
                assert cfg.hydra.runtime.choices[key] == value
            else:
                node, _, leaf = key.rpartition(".")
                assert leaf in OmegaConf.select(cfg, node), (study, key)  # a key the config has, not a new one
                assert OmegaConf.select(cfg, key) == yaml.safe_load(value), (study, key, value)
            for target in _targets(_job(cfg)):
                assert callable(_imports(target)), (study, target)


def test_studies_extend_the_base_study():
    for study in STUDIES:
        text = (CONF / "experiment" / f"{study}.yaml").read_text()
        assert text.startswith("# @package _global_"), study
        assert "  - base/" in text, study
        assert "/evaluate" not in text  # the study is composed into conf/evaluate.yaml, not the reverse


def test_a_search_study_searches_the_space_of_the_grid_it_is_compared_with():
    """STUDY=tpe against STUDY=default: the same keys and values (the search writes a null as
    the option's own "off" value: statement_quota 0, length_norm none)."""
    search = _compose("evaluate", ["experiment=tpe"])
    grid = _compose("evaluate", [f"experiment={search.study.compare_with}"])
    off = {"null": "off", "0": "off", "none": "off"}
    as_set = lambda values: {k: {off.get(v, v) for v in vs} for k, vs in values.items()}  # noqa: E731
    assert as_set(expand(sweep_grid(search))) == as_set(expand(sweep_grid(grid)))
    assert search.hydra.sweeper.direction == "maximize" and search.hydra.sweeper.n_trials < STUDY_SIZES["default"]


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_each_launcher_config_composes_onto_a_study(launcher):
    cfg = _compose("evaluate", ["experiment=smoke", f"hydra/launcher={launcher}"])
    assert cfg.hydra.runtime.choices["hydra/launcher"] == launcher
    target = OmegaConf.select(cfg, "hydra.launcher._target_")
    assert callable(_imports(target)), target

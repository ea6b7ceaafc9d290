"""The sweep's config loader (fedlab.sweeps.compose) gives every job the config Hydra's own loader
composes, while remembering the defaults list and merged config per choice of config groups."""
from __future__ import annotations

import itertools
import pickle

import pytest
from clirun import ROOT
from hydra import initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.errors import ConfigCompositionException
from hydra.types import RunMode
from omegaconf import OmegaConf

import fedlab.config  # noqa: F401  (registers the fedlab_root resolver)
from fedlab.sweeps import compose
from fedlab.sweeps.grid import covering_jobs, expand, sweep_grid

GRID_STUDIES = sorted(p.stem for p in (ROOT / "conf" / "experiment").glob("*.yaml") if p.stem != "tpe")


@pytest.fixture()
def loaders():
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        hydra_loader = GlobalHydra.instance().config_loader()
        yield hydra_loader, compose.SweepConfigLoader(hydra_loader)


def _jobs(master) -> list[list[str]]:
    values = expand(sweep_grid(master))
    keys = list(values)
    return [[f"{k}={v}" for k, v in zip(keys, combo)] for combo in itertools.product(*values.values())]


def _text(cfg) -> str:
    return OmegaConf.to_yaml(cfg)


def test_the_loader_follows_the_installed_hydra():
    assert compose.supported()


def _same_configs(loaders, study: str, every: int) -> None:
    hydra_loader, sweep_loader = loaders
    # the reader study is composed on the production config (Makefile PRODUCTION_STUDIES)
    primary, choose = ("production", f"+experiment={study}") if study == "reader" else ("evaluate", f"experiment={study}")
    if study == "lm_optimizer":  # compiling the agent's program: conf/optimize.yaml
        primary = "optimize"
    master = hydra_loader.load_configuration(primary, [choose], run_mode=RunMode.MULTIRUN)
    jobs = _jobs(master)
    assert jobs, study
    jobs = covering_jobs(jobs) + jobs[::every]  # every override value, then a spread of combinations
    for job in jobs:
        assert _text(sweep_loader.load_sweep_config(master, job)) == _text(hydra_loader.load_sweep_config(master, job)), job
    # the remembered configs were not changed by the jobs composed from them
    for job in jobs[:2]:
        assert _text(sweep_loader.load_sweep_config(master, job)) == _text(hydra_loader.load_sweep_config(master, job)), job
    assert len(sweep_loader._composed) <= len(jobs)


@pytest.mark.parametrize("study", GRID_STUDIES)
def test_jobs_of_every_grid_study_get_the_config_hydra_composes(loaders, study):
    _same_configs(loaders, study, every=7)


@pytest.mark.slow
@pytest.mark.parametrize("study", GRID_STUDIES)
def test_every_job_of_every_grid_study_gets_the_config_hydra_composes(loaders, study):
    _same_configs(loaders, study, every=1)


def test_a_job_cannot_change_the_config_another_job_is_given(loaders):
    hydra_loader, sweep_loader = loaders
    master = hydra_loader.load_configuration("evaluate", ["experiment=smoke"], run_mode=RunMode.MULTIRUN)
    first = sweep_loader.load_sweep_config(master, ["retriever=dense"])
    expected = _text(first)
    first.retriever.top_k = 999
    first.hydra.job.name = "changed"
    assert _text(sweep_loader.load_sweep_config(master, ["retriever=dense"])) == expected


def test_bad_overrides_fail_in_every_job_that_has_them(loaders):
    hydra_loader, sweep_loader = loaders
    master = hydra_loader.load_configuration("evaluate", ["experiment=smoke"], run_mode=RunMode.MULTIRUN)
    sweep_loader.load_sweep_config(master, ["retriever=dense", "retriever.top_k=5"])
    for _ in range(2):
        with pytest.raises(ConfigCompositionException, match="no_such_retriever"):
            sweep_loader.load_sweep_config(master, ["retriever=no_such_retriever"])
        with pytest.raises(ConfigCompositionException, match="no_such_key"):
            sweep_loader.load_sweep_config(master, ["retriever=dense", "retriever.no_such_key=1"])


def test_the_loader_travels_to_workers_without_what_it_remembered(loaders):
    hydra_loader, sweep_loader = loaders
    master = hydra_loader.load_configuration("evaluate", ["experiment=smoke"], run_mode=RunMode.MULTIRUN)
    expected = _text(sweep_loader.load_sweep_config(master, ["retriever=bm25"]))
    shipped = pickle.loads(pickle.dumps(sweep_loader))
    assert shipped._composed == {} and shipped._defaults == {}
    assert _text(shipped.load_sweep_config(master, ["retriever=bm25"])) == expected

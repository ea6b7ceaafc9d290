"""fedlab's grid sweeper (``hydra/sweeper=covering``, the default): Hydra's basic sweeper, except
that its up-front check composes a covering subset of each batch instead of every job
(fedlab.sweeps.grid.covering_jobs), and that its launcher composes the jobs with a loader that
remembers what they share (fedlab.sweeps.compose). Hydra loads sweeper plugins from the
``hydra_plugins`` namespace only, so the class lives here; the logic lives in fedlab."""
from __future__ import annotations

from typing import Sequence

from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.types import HydraContext

from fedlab.sweeps import compose
from fedlab.sweeps.grid import covering_jobs


class CoveringSweeper(BasicSweeper):
    def setup(self, *, hydra_context: HydraContext, task_function, config) -> None:
        hydra_context = HydraContext(config_loader=compose.for_sweep(hydra_context.config_loader),
                                     callbacks=hydra_context.callbacks)
        super().setup(hydra_context=hydra_context, task_function=task_function, config=config)

    def validate_batch_is_legal(self, batch: Sequence[Sequence[str]]) -> None:
        super().validate_batch_is_legal(covering_jobs(batch))

"""fedlab's grid sweeper (``hydra/sweeper=covering``, the default): Hydra's basic sweeper, except
that its up-front check composes a covering subset of each batch instead of every job
(fedlab.sweeps.grid.covering_jobs). Hydra loads sweeper plugins from the ``hydra_plugins``
namespace only, so the class lives here; the logic lives in fedlab."""
from __future__ import annotations

from typing import Sequence

from hydra._internal.core_plugins.basic_sweeper import BasicSweeper

from fedlab.sweeps.grid import covering_jobs


class CoveringSweeper(BasicSweeper):
    def validate_batch_is_legal(self, batch: Sequence[Sequence[str]]) -> None:
        super().validate_batch_is_legal(covering_jobs(batch))

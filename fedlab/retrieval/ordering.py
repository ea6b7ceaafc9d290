"""Context ordering for a generator.

Models attend best to the start and end of a long context and worst to its middle
(Liu et al., 2023, "Lost in the Middle"), so the strongest passages go to both ends.
"""
from __future__ import annotations

from fedlab.retrieval.types import Hit


def lost_in_the_middle(hits: list[Hit]) -> list[Hit]:
    """Best-first ``hits`` -> best first, second best last, weakest in the middle.

    Ranks 1, 3, 5, ... fill the front in order; ranks 2, 4, 6, ... fill the back in reverse:
    [1, 2, 3, 4, 5] -> [1, 3, 5, 4, 2]. The Hit objects (and their rank fields) are unchanged.
    """
    return hits[0::2] + hits[1::2][::-1]

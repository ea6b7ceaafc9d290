"""Build a chunker from its Hydra config (the ``chunker`` group under conf/chunker/)."""
from __future__ import annotations

from fedlab.chunking.base import Chunker
from fedlab.errors import FedlabError


def instantiate_chunker(cfg) -> Chunker:
    """hydra.utils.instantiate, with a parameter mistake surfaced as the chunker's own
    one-line FedlabError rather than Hydra's wrapped InstantiationException (any other failure is
    one line too: fedlab.config.instantiate_group)."""
    from fedlab.config import instantiate_group

    chunker = instantiate_group(cfg, "chunker")
    if not isinstance(chunker, Chunker):
        raise FedlabError(f"chunker config builds {type(chunker).__name__}, not a Chunker: point _target_ at a fedlab.chunking class")
    return chunker

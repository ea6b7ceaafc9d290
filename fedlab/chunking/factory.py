"""Build a chunker from its Hydra config (the ``chunker`` group under conf/chunker/)."""
from __future__ import annotations

from fedlab.chunking.base import Chunker
from fedlab.errors import FedlabError


def instantiate_chunker(cfg) -> Chunker:
    """hydra.utils.instantiate, with a parameter mistake surfaced as the chunker's own
    one-line FedlabError rather than Hydra's wrapped InstantiationException."""
    from hydra.errors import InstantiationException
    from hydra.utils import instantiate

    try:
        chunker = instantiate(cfg)
    except InstantiationException as e:
        if isinstance(e.__cause__, FedlabError):
            raise e.__cause__ from None
        raise
    if not isinstance(chunker, Chunker):
        raise FedlabError(f"chunker config builds {type(chunker).__name__}, not a Chunker: point _target_ at a fedlab.chunking class")
    return chunker

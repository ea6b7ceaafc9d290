"""Dense embedders behind one interface (see :class:`fedlab.embedding.base.Embedder`).

Backends live in their own modules and import their heavy libraries only when a model
is first used; choose one with a Hydra config from ``conf/embedder/``.
"""
from fedlab.embedding.base import Embedder

__all__ = ["Embedder"]

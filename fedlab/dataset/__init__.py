"""The FOMC QA dataset: schema, loader, quote location and validator."""
from fedlab.dataset.locate import locate_quote
from fedlab.dataset.schema import (
    CATEGORIES,
    SPLITS,
    DatasetError,
    Evidence,
    Problem,
    Question,
    load_dataset,
    read_dataset,
)

__all__ = [
    "CATEGORIES", "SPLITS", "DatasetError", "Evidence", "Problem", "Question",
    "load_dataset", "read_dataset", "locate_quote",
]

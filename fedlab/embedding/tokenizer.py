"""Token spans from a Hugging Face ``tokenizer.json`` (the ``tokenizers`` library)."""
from __future__ import annotations

from pathlib import Path


class HFTokenizerSpans:
    """Character spans of a fast tokenizer's tokens, special tokens excluded.

    Spans cover the whole text (no truncation), so a caller can see that a text is
    longer than ``max_seq_length``, the number of tokens the model reads.
    """

    def __init__(self, tokenizer_json_path: str | Path, max_seq_length: int):
        self.path = Path(tokenizer_json_path)
        self.max_seq_length = int(max_seq_length)
        self._tok = None

    @property
    def tokenizer(self):
        if self._tok is None:
            from tokenizers import Tokenizer

            tok = Tokenizer.from_file(str(self.path))
            tok.no_truncation()
            tok.no_padding()
            self._tok = tok
        return self._tok

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        enc = self.tokenizer.encode(text, add_special_tokens=False)
        return [(int(a), int(b)) for a, b in enc.offsets]

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False).ids)

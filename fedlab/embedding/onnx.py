"""BERT-family sentence embedders exported to ONNX, run with onnxruntime.

Tokenisation uses a ``tokenizer.json`` (the ONNX files ship none); pooling is either the
attention-masked mean of the first output (as sentence-transformers does) or a named
output that already holds the pooled vector.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from fedlab.embedding import packaged
from fedlab.chunking.tokenizers import HFTokenizerSpans
from fedlab.embedding.base import Embedder, files_signature
from fedlab.errors import FedlabError

PACKAGED = {
    "minilm_int8": packaged.minilm_int8_onnx,
    "paraphrase_minilm_l3": packaged.paraphrase_l3_onnx,
}


class OnnxBertEmbedder(Embedder):
    """``model``: a packaged key (``minilm_int8``, ``paraphrase_minilm_l3``) or an .onnx path.
    ``tokenizer``: a tokenizer.json path; None = the packaged BERT-uncased one.
    ``pooled_output``: name of an output that is already the pooled vector; None = mean-pool."""

    def __init__(self, name: str, model: str, tokenizer: str | None = None, max_seq_length: int = 256,
                 pooled_output: str | None = None, query_prefix: str = "", passage_prefix: str = "",
                 batch_size: int = 32, threads: int = 0, progress: bool = False):
        super().__init__(name=name, batch_size=batch_size, progress=progress)
        self.model = str(model)
        self.tokenizer = tokenizer
        self._max_seq_length = int(max_seq_length)
        self.pooled_output = pooled_output
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self.threads = int(threads)
        self._session = None
        self._input_names: list[str] = []
        self._tok = None
        self._spanner: HFTokenizerSpans | None = None
        self._dim: int | None = None

    # ---- paths ----------------------------------------------------------
    def onnx_path(self) -> Path:
        if self.model in PACKAGED:
            return PACKAGED[self.model]()
        path = Path(self.model).expanduser()
        if not path.is_file():
            raise FedlabError(f"ONNX model {self.model!r} not found: give a packaged name "
                              f"({', '.join(PACKAGED)}) or the path of an .onnx file")
        return path

    def tokenizer_path(self) -> Path:
        path = Path(self.tokenizer).expanduser() if self.tokenizer else packaged.minilm_tokenizer_json()
        if not path.is_file():
            raise FedlabError(f"tokenizer file {str(path)!r} not found: set embedder.tokenizer=/path/to/tokenizer.json")
        return path

    # ---- Embedder hooks ------------------------------------------------
    def _load(self) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        opts = ort.SessionOptions()
        if self.threads:
            opts.intra_op_num_threads = self.threads
        self._session = ort.InferenceSession(str(self.onnx_path()), sess_options=opts,
                                             providers=["CPUExecutionProvider"])
        self._input_names = [i.name for i in self._session.get_inputs()]
        outputs = {o.name: o for o in self._session.get_outputs()}
        if self.pooled_output is not None and self.pooled_output not in outputs:
            raise FedlabError(f"ONNX model {self.model!r} has no output {self.pooled_output!r} "
                              f"(outputs: {', '.join(outputs)})")
        first = self._session.get_outputs()[0]
        self._output = self.pooled_output or first.name
        tok = Tokenizer.from_file(str(self.tokenizer_path()))
        tok.enable_truncation(max_length=self._max_seq_length)
        pad_id = tok.token_to_id("[PAD]") or 0
        tok.enable_padding(pad_id=pad_id, pad_token="[PAD]")
        self._tok = tok
        shape = outputs[self._output].shape
        self._dim = shape[-1] if isinstance(shape[-1], int) else None
        if self._dim is None:  # symbolic width: find it by running once
            self._dim = int(self._run(["x"]).shape[-1])

    def _run(self, texts: list[str]) -> np.ndarray:
        encs = self._tok.encode_batch(texts)
        ids = np.array([e.ids for e in encs], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encs], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feed["token_type_ids"] = np.zeros_like(ids)
        feed = {k: v for k, v in feed.items() if k in self._input_names}
        (out,) = self._session.run([self._output], feed)
        if self.pooled_output is not None:
            return out
        m = mask[..., None].astype(np.float32)
        return (out * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)

    def _encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        prefix = self.query_prefix if is_query else self.passage_prefix
        return self._run([prefix + t for t in texts])

    def _span_tokenizer(self) -> HFTokenizerSpans:
        if self._spanner is None:
            self._spanner = HFTokenizerSpans(self.tokenizer_path(), self._max_seq_length)
        return self._spanner

    def _signature(self) -> dict:
        return {
            "model": files_signature(self.onnx_path()),
            "tokenizer": files_signature(self.tokenizer_path()),
            "pooling": self.pooled_output or "mean",
            "max_seq_length": self._max_seq_length,
            "query_prefix": self.query_prefix,
            "passage_prefix": self.passage_prefix,
        }

    @property
    def dim(self) -> int:
        self.ensure_loaded()
        return int(self._dim)

    @property
    def max_seq_length(self) -> int:
        return self._max_seq_length

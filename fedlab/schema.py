"""The settings' schema: each setting's type and range, checked before any run opens.

A value of the wrong type or out of its range used to run and measure nonsense
(``retriever.rrf_k=-60``: recall@5 0.457 -> 0.147) or fail deep inside a search with a traceback
(``retriever.candidates=lots``, ``agent.answerability.threshold=high``). ``check_schema`` refuses it
in one line naming the key, the value and what to use instead. Only the settings a config has are
checked (a BM25 config has no ``retriever.rrf_k``); a key the schema does not name is left to the
code that reads it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from fedlab.errors import FedlabError


@dataclass(frozen=True)
class Setting:
    """One setting: ``kind`` is "int" (a whole number), "number", "bool" or "choice"; ``low`` /
    ``high`` bound a number (``open_low`` / ``open_high``: the bound itself excluded)."""

    kind: str
    low: float | None = None
    high: float | None = None
    open_low: bool = False
    open_high: bool = False
    null: bool = False  # null (None) allowed: "off" or "the default"
    choices: tuple = ()

    def expected(self) -> str:
        """What a value must be, as the fix in a message says it."""
        if self.kind == "bool":
            return "true or false"
        if self.kind == "choice":
            return "one of " + ", ".join(str(c) for c in self.choices) + (" or null" if self.null else "")
        what = "a whole number" if self.kind == "int" else "a number"
        if self.low is not None and self.high is not None and not (self.open_low or self.open_high):
            span = f" from {_num(self.low)} to {_num(self.high)}"
        else:
            parts = []
            if self.low is not None:
                parts.append(f"{'greater than' if self.open_low else 'of at least'} {_num(self.low)}")
            if self.high is not None:
                parts.append(f"{'below' if self.open_high else 'at most'} {_num(self.high)}")
            span = " " + " and ".join(parts) if parts else ""
        return what + span + (", or null" if self.null else "")


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def Count(low: int = 0, high: int | None = None, null: bool = False) -> Setting:  # noqa: N802 — a constructor
    return Setting("int", low, high, null=null)


def Share(null: bool = False, open_low: bool = False, open_high: bool = False) -> Setting:  # noqa: N802
    """A probability or a share: a number from 0 to 1."""
    return Setting("number", 0.0, 1.0, open_low=open_low, open_high=open_high, null=null)


FLAG = Setting("bool")
POSITIVE = Setting("number", 0.0, open_low=True)
NON_NEGATIVE = Setting("number", 0.0)

SCHEMA: dict[str, Setting] = {
    # chunking
    "chunker.size": Count(1), "chunker.overlap": Count(0), "chunker.parent_size": Count(1),
    # embedders
    "embedder.batch_size": Count(1), "embedder.max_seq_length": Count(1, null=True),
    "embedder.threads": Count(0, null=True), "embedder.progress": FLAG,
    # indexes
    "index.filter_mode": Setting("choice", choices=("native", "post")), "index.M": Count(2),
    "index.efConstruction": Count(1), "index.efSearch": Count(1), "index.ef_construction": Count(1),
    "index.ef": Count(1), "index.construction_ef": Count(1), "index.search_ef": Count(1), "index.nlist": Count(1),
    "index.nprobe": Count(1), "index.min_points_per_list": Count(1), "index.num_threads": Count(1),
    "index.batch_size": Count(1), "index.space": Setting("choice", choices=("ip", "cosine")),
    # BM25
    "bm25.variant": Setting("choice", choices=("okapi", "plus", "l")), "bm25.k1": NON_NEGATIVE,
    "bm25.b": Share(), "bm25.epsilon": NON_NEGATIVE, "bm25.delta": Setting("number", 0.0, null=True),
    "bm25.lowercase": FLAG, "bm25.stopwords": FLAG, "bm25.stemming": FLAG,
    # retrievers
    "retriever.kind": Setting("choice", choices=("dense", "bm25", "hybrid")),
    "retriever.fusion": Setting("choice", choices=("rrf", "convex")), "retriever.alpha": Share(),
    "retriever.rrf_k": POSITIVE, "retriever.weights.dense": NON_NEGATIVE, "retriever.weights.bm25": NON_NEGATIVE,
    "retriever.candidates": Count(1), "retriever.date_aware": FLAG, "retriever.top_k": Count(1, 1000),
    "retriever.adaptive_top_k.enabled": FLAG, "retriever.adaptive_top_k.span": Count(1, 1000),
    "retriever.adaptive_top_k.year": Count(1, 1000), "retriever.adaptive_top_k.multi_year": Count(1, 1000),
    "retriever.events": FLAG, "retriever.end_grace_days": Count(0), "retriever.per_meeting": Count(1, null=True),
    "retriever.statement_quota": Count(0, null=True), "retriever.length_norm": Setting("choice", choices=("log",), null=True),
    "retriever.doc_first": FLAG, "retriever.doc_first_docs": Count(1), "retriever.diversity_candidates": Count(1),
    # rerankers
    "reranker.overfetch": Count(1), "reranker.batch_size": Count(1), "reranker.max_length": Count(1),
    "reranker.cache_size": Count(0),
    # the agent
    "agent.top_k": Count(1, 1000, null=True), "agent.max_context": Count(1), "agent.max_reformulations": Count(0),
    "agent.ordering": Setting("choice", choices=("rank", "lost_in_the_middle")),
    "agent.change_passages": Count(0), "agent.vote_passages": Count(0), "agent.balance_sheet_passages": Count(0),
    "agent.signal_top_n": Count(1), "agent.bm25_half": POSITIVE, "agent.off_topic_threshold": Share(),
    "agent.answerability.target_precision": Share(open_low=True),
    "agent.answerability.max_false_abstention": Share(null=True, open_high=True),
    "agent.answerability.threshold": Share(null=True),
    "agent.answerability.max_withheld_correct": Share(null=True, open_high=True),
    "agent.answerability.answer_threshold": Share(null=True),
    **{f"agent.{flag}": FLAG for flag in ("decision_passages", "meeting_changes", "named_doc_type", "marked_doc_type",
                                          "glossary", "shorthand", "statement_runs", "recorded_dissents",
                                          "quoted_wording")},
    # answer backends
    "lm.max_tokens": Count(1), "lm.temperature": NON_NEGATIVE, "lm.timeout_s": POSITIVE, "lm.max_retries": Count(0),
    "lm.max_sentences": Count(1), "lm.rank_weight": Share(), "lm.report_weight": Share(), "lm.n_ctx": Count(1),
    "lm.max_passage_chars": Count(1), "lm.max_context": Count(1), "lm.cache": FLAG,
    "lm.dedup_restated": FLAG, "lm.dedup_threshold": Share(open_low=True),
    # the evaluation
    "eval.relevance": Setting("choice", choices=("meeting", "document")),
    "eval.query_timing": Setting("choice", choices=("per_sweep", "per_run")), "eval.progress": FLAG,
    "dataset.split": Setting("choice", choices=("dev", "test", "all")),
}
_ABSENT = object()


def problem(setting: Setting, value: Any) -> str | None:
    """Why ``value`` does not fit ``setting`` ("is not a whole number", "is out of range"), or None."""
    if value is None:
        return None if setting.null else "is not set"
    if setting.kind == "bool":
        return None if isinstance(value, bool) else "is not true or false"
    if setting.kind == "choice":
        return None if value in setting.choices else "is not a choice"
    if isinstance(value, str):  # "10" from a quoted value reads as 10, as the code reading it does
        try:
            value = int(value.strip()) if setting.kind == "int" else float(value.strip())
        except ValueError:
            pass
    if setting.kind == "int" and (isinstance(value, bool) or not isinstance(value, int)):
        return "is not a whole number"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "is not a number"
    if isinstance(value, float) and not math.isfinite(value):
        return "is not a finite number"
    low, high = setting.low, setting.high
    if low is not None and (value <= low if setting.open_low else value < low):
        return "is out of range"
    if high is not None and (value >= high if setting.open_high else value > high):
        return "is out of range"
    return None


def check_schema(cfg: Any, label: str = "") -> None:
    """Refuse, in one FedlabError line, the first setting of ``cfg`` (a composed config or a plain
    mapping) whose value does not fit ``SCHEMA``: ``retriever.rrf_k=-60 is out of range: use a
    number greater than 0``. Settings ``cfg`` does not have are skipped; one whose interpolation
    does not resolve is left to ``fedlab.config.require_keys``."""
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    for key, setting in SCHEMA.items():
        try:
            value = (OmegaConf.select(cfg, key, default=_ABSENT) if OmegaConf.is_config(cfg)
                     else _plain_select(cfg, key))
        except OmegaConfBaseException:
            continue
        if value is _ABSENT:
            continue
        why = problem(setting, value)
        if why is not None:
            where = f" in {label}" if label else ""
            raise FedlabError(f"{key}={value!r}{where} {why}: use {setting.expected()}")


def _plain_select(data: Any, key: str) -> Any:
    for part in key.split("."):
        if not isinstance(data, dict) or part not in data:
            return _ABSENT
        data = data[part]
    return data

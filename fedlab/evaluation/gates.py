"""The gate: the production config measured against a regression record (``conf/gates.yaml``).

The record, in the manner of Anserini's regression YAMLs, names the data its expected values were
measured on (the corpus and dataset hashes, the split), each gated metric's expected value and the
tolerance (one for all, ``tolerances`` per metric). The data is checked first: other data is its
own failure (``DataChanged``). Then a metric fails when measured < expected - tolerance; one above
expected + tolerance passes, but the record is stale. ``record_gates`` re-derives the record.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from fedlab.config import CONF_DIR
from fedlab.errors import FedlabError

DEFAULT_RECORD = CONF_DIR / "gates.yaml"
RECORD_KEYS = ("split", "corpus_hash", "dataset_hash", "tolerance", "tolerances", "expected", "recorded_at")
OPTIONAL_KEYS = ("tolerances", "recorded_at")
RECORD_DECIMALS = 4  # expected values as recorded (the metrics' own precision in reports)
RERECORD = "re-record the gates (`python -m fedlab.gate --record`)"


class DataChanged(FedlabError):
    """The data under the gate is not the data its production config or its record was measured on."""


@dataclass(frozen=True)
class DataVersion:
    corpus_hash: str
    dataset_hash: str
    split: str


@dataclass(frozen=True)
class GateRecord:
    split: str
    corpus_hash: str
    dataset_hash: str
    tolerance: float
    expected: dict[str, float]
    tolerances: dict[str, float] = field(default_factory=dict)  # per metric, over ``tolerance``
    recorded_at: str | None = None  # ISO time (UTC) the values were measured; test reads are counted since

    def tolerance_for(self, metric: str) -> float:
        return self.tolerances.get(metric, self.tolerance)


@dataclass(frozen=True)
class GateResult:
    metric: str
    measured: float
    expected: float
    tolerance: float
    override: bool = False  # --set METRIC=VALUE: the minimum for this run, not the record's

    @property
    def threshold(self) -> float:
        return round(self.expected - self.tolerance, 6)  # 6 places: no float noise (1.0 - 0.03)

    @property
    def passed(self) -> bool:
        return self.measured >= self.threshold

    @property
    def stale(self) -> bool:
        """Better than the record allows for: the record no longer says what the config measures."""
        return not self.override and self.measured > round(self.expected + self.tolerance, 6)


@dataclass(frozen=True)
class GateOutcome:
    results: list[GateResult]
    data: DataVersion
    data_differs: str | None = None  # why, when --allow-data-change gated other data anyway

    @property
    def failed(self) -> list[GateResult]:
        return [r for r in self.results if not r.passed]

    @property
    def stale(self) -> list[GateResult]:
        return [r for r in self.results if r.stale]


# -- the record file ----------------------------------------------------------------------------
def read_record(path: str | Path) -> GateRecord:
    """The record in ``path``; a one-line FedlabError naming the file and the fix when it is not one."""
    import yaml

    fix = "see conf/gates.yaml, or write one with `python -m fedlab.gate --record --gates FILE`"
    try:
        spec = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError:
        raise FedlabError(f"gates file {path} not found: pass --gates FILE (see conf/gates.yaml)") from None
    except (ValueError, yaml.YAMLError) as exc:
        from fedlab.config import yaml_problem

        raise FedlabError(f"gates file {path} is not UTF-8 YAML ({yaml_problem(exc)}): fix the file") from None
    if not isinstance(spec, dict):
        raise FedlabError(f"gates file {path} is not a mapping of record keys: {fix}")
    unknown = [str(k) for k in spec if k not in RECORD_KEYS]
    if unknown:
        raise FedlabError(f"gates file {path} has unknown key(s) {', '.join(unknown)}: a record has "
                          f"{', '.join(RECORD_KEYS)} ({fix})")
    missing = [k for k in RECORD_KEYS if k not in OPTIONAL_KEYS and spec.get(k) in (None, "", {})]
    if missing:
        raise FedlabError(f"gates file {path} records no {', '.join(missing)}: {fix}")
    for key in ("split", "corpus_hash", "dataset_hash"):
        if not isinstance(spec[key], str):  # e.g. an unquoted all-digit hash, which YAML reads as a number
            raise FedlabError(f"gates file {path}: {key} {spec[key]!r} is not text: quote it ({key}: \"...\")")
    try:
        expected = {str(m): float(v) for m, v in dict(spec["expected"]).items()}
        tolerances = {str(m): float(v) for m, v in dict(spec.get("tolerances") or {}).items()}
        tolerance = float(spec["tolerance"])
    except (TypeError, ValueError):
        raise FedlabError(f"gates file {path}: tolerance, tolerances and expected must be numbers "
                          f"(expected: {{metric: value}}): {fix}") from None
    if tolerance < 0 or any(t < 0 for t in tolerances.values()):
        raise FedlabError(f"gates file {path}: a tolerance is negative: use 0 or more")
    recorded_at = spec.get("recorded_at")
    return GateRecord(spec["split"], spec["corpus_hash"], spec["dataset_hash"], tolerance, expected, tolerances,
                      None if recorded_at is None else str(recorded_at))


def record_text(record: GateRecord, header: str = "") -> str:
    """The record as YAML, under ``header`` (the file's leading comment block)."""
    import yaml

    body = {"split": record.split, "corpus_hash": record.corpus_hash, "dataset_hash": record.dataset_hash,
            "tolerance": record.tolerance, "tolerances": dict(record.tolerances), "expected": dict(record.expected)}
    if record.recorded_at:
        body["recorded_at"] = record.recorded_at
    return header + yaml.safe_dump(body, sort_keys=False, default_flow_style=False, allow_unicode=True)


def leading_comments(path: str | Path) -> str:
    """The comment block a record file starts with (kept when the record is rewritten)."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines(keepends=True)
    except (OSError, ValueError):
        return ""
    header = []
    for line in lines:
        if line.strip() and not line.lstrip().startswith("#"):
            break
        header.append(line)
    return "".join(header)


# -- the data -----------------------------------------------------------------------------------
def data_version(cfg) -> DataVersion:
    """The corpus and dataset ``cfg`` evaluates on, hashed as the evaluation and export hash them."""
    from fedlab.corpus.snapshot import load_corpus
    from fedlab.evaluation.retrieval.harness import dataset_hash

    return DataVersion(load_corpus(cfg.corpus.dir).content_hash, dataset_hash(cfg.dataset.path), str(cfg.dataset.split))


def production_data_change(cfg, now: DataVersion) -> str | None:
    """Why the data is not the one the production config was exported on (None: it is, or the
    config is not an exported one and records nothing)."""
    from omegaconf import OmegaConf

    recorded = OmegaConf.select(cfg, "production", default=None)
    if recorded is None:
        return None
    was = {"corpus": recorded.get("corpus_hash"), "dataset": recorded.get("dataset_hash")}
    is_ = {"corpus": now.corpus_hash, "dataset": now.dataset_hash}
    changed = [f"{what} {was[what]} -> {is_[what]}" for what in is_ if was[what] and was[what] != is_[what]]
    if not changed:
        return None
    return (f"the data changed since the production config was exported ({'; '.join(changed)}): "
            f"re-export (`make export`) and {RERECORD}, or pass --allow-data-change")


def record_data_change(record: GateRecord, now: DataVersion, path: str | Path) -> str | None:
    """Why the data is not the one the record's expected values were measured on (None: it is)."""
    if now.split != record.split:
        return (f"the gates in {path} were recorded on the {record.split} split, not {now.split}: gate on "
                f"{record.split} (leave out --split), or record gates for {now.split} in their own file "
                f"(`python -m fedlab.gate --split {now.split} --gates FILE --record`)")
    fixes = []
    if now.corpus_hash != record.corpus_hash:
        fixes.append(f"the corpus is {now.corpus_hash}, the gates were recorded on {record.corpus_hash}: "
                     "rebuild the corpus (`make data`)")
    if now.dataset_hash != record.dataset_hash:
        fixes.append(f"the dataset is {now.dataset_hash}, the gates were recorded on {record.dataset_hash}: "
                     "restore the dataset file")
    if not fixes:
        return None
    return f"data mismatch with {path}: {'; '.join(fixes)}; or, if the new data is intended, {RERECORD}"


# -- the tasks ----------------------------------------------------------------------------------
def expectations(record: GateRecord, overrides: list[str]) -> dict[str, tuple[float, float, bool]]:
    """metric -> (expected, tolerance, overridden); ``METRIC=VALUE`` makes VALUE that metric's minimum."""
    gates = {m: (v, record.tolerance_for(m), False) for m, v in record.expected.items()}
    for item in overrides:
        name, sep, value = item.partition("=")
        try:
            minimum = float(value) if sep else None
        except ValueError:
            minimum = None
        if minimum is None:
            raise FedlabError(f"--set {item!r}: use METRIC=NUMBER, e.g. --set recall@5=0.6")
        gates[name.strip()] = (minimum, 0.0, True)
    return gates


def _measure(cfg) -> dict[str, float]:
    from fedlab.evaluation.run import evaluate

    return evaluate(cfg).metrics


def _measured(cfg, names, measure: Callable | None) -> dict[str, float]:
    """``cfg`` measured (``measure``: the evaluation), refusing when a gated metric is not among the results."""
    metrics = (measure or _measure)(cfg)
    unknown = [m for m in names if m not in metrics]
    if unknown:
        raise FedlabError(f"gate metric(s) {', '.join(unknown)} not measured: use names such as recall@5, mrr@10")
    return metrics


def _checked_data(cfg, record: GateRecord | None, path, allow_data_change: bool) -> tuple[DataVersion, str | None]:
    """Today's data version, after the checks (DataChanged), or with why it differs when allowed."""
    now = data_version(cfg)
    why = production_data_change(cfg, now) or (record_data_change(record, now, path) if record else None)
    if why and not allow_data_change:
        raise DataChanged(why)
    return now, why


def run_gate(cfg, record: GateRecord, record_path: str | Path, overrides: list[str] = (),
             allow_data_change: bool = False, measure: Callable | None = None) -> GateOutcome:
    """Check the data, measure ``cfg`` (``measure``: the evaluation) and hold each gated metric
    against the record."""
    gates = expectations(record, list(overrides))
    now, why = _checked_data(cfg, record, record_path, allow_data_change)
    metrics = _measured(cfg, gates, measure)
    results = [GateResult(m, float(metrics[m]), *gate) for m, gate in gates.items()]
    return GateOutcome(results, now, why)


def record_gates(cfg, template: GateRecord, path: str | Path, header: str = "", allow_data_change: bool = False,
                 measure: Callable | None = None) -> GateRecord:
    """Measure ``cfg`` and write the record to ``path`` atomically: the template's metrics and
    tolerances, today's data and the measured values."""
    from fedlab.io import write_text

    now, _ = _checked_data(cfg, None, path, allow_data_change)
    metrics = _measured(cfg, template.expected, measure)
    import datetime as dt

    record = GateRecord(now.split, now.corpus_hash, now.dataset_hash, template.tolerance,
                        {m: round(float(metrics[m]), RECORD_DECIMALS) for m in template.expected},
                        dict(template.tolerances),
                        dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z"))
    write_text(path, record_text(record, header))
    return record


# -- rendering ------------------------------------------------------------------------------------
def print_gates(outcome: GateOutcome, path: Path) -> None:
    """The table (stdout), each breach (stderr) and, when the record no longer says what the
    config measures, that it is stale."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"gates ({outcome.data.split} split, record {path.name})")
    for col in ("metric", "measured", "expected", "threshold", "result"):
        table.add_column(col, justify="left" if col in ("metric", "result") else "right")
    for r in outcome.results:
        verdict = "[red]FAIL[/]" if not r.passed else "[yellow]pass, stale[/]" if r.stale else "[green]pass[/]"
        table.add_row(r.metric, f"{r.measured:.4f}", f"{r.expected:.4f}", f"{r.threshold:.4f}", verdict)
    Console().print(table)
    if outcome.data_differs:
        print(f"note: gated anyway (--allow-data-change): {outcome.data_differs}", file=sys.stderr)
    for r in outcome.stale:
        print(f"record stale: {r.metric} = {r.measured:.4f} is above expected {r.expected:.4f} + tolerance "
              f"{r.tolerance:g}: {RERECORD}")
    for r in outcome.failed:
        print(f"gate failed: {r.metric} = {r.measured:.4f} is below its threshold {r.threshold:.4f} "
              f"(expected {r.expected:.4f} - tolerance {r.tolerance:g})", file=sys.stderr)


def print_recorded(old: GateRecord | None, new: GateRecord, path: Path) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"recorded {path} ({new.split} split, corpus {new.corpus_hash}, dataset {new.dataset_hash})")
    for col in ("metric", "was", "expected", "tolerance"):
        table.add_column(col, justify="left" if col == "metric" else "right")
    for m, value in new.expected.items():
        was = f"{old.expected[m]:.4f}" if old is not None and m in old.expected else "-"
        table.add_row(m, was, f"{value:.4f}", f"{new.tolerance_for(m):g}")
    Console().print(table)

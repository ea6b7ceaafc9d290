"""`python -m fedlab.gate`: evaluate the production config on the test split against thresholds.

Exit codes: 0 every metric meets its threshold; 1 a threshold was breached (each breached
metric named); 2 the gate could not run (bad input or config, no corpus, tracking store
unreachable, any failure); 3 the corpus or dataset differs from the one the production config
was exported on (``--allow-data-change`` gates it anyway). ``--set recall@5=0.9`` overrides a
threshold (how CI proves the gate can fail).
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from fedlab.errors import FedlabError

EXIT_PASS, EXIT_BREACH, EXIT_CANNOT_RUN, EXIT_DATA_CHANGED = 0, 1, 2, 3


class DataChanged(FedlabError):
    """The data under the gate is not the data its production config was measured on."""


def check_data(cfg) -> None:
    """The corpus and dataset hashes the production config records must be today's."""
    from omegaconf import OmegaConf

    from fedlab.corpus.snapshot import load_corpus
    from fedlab.evaluation.retrieval.harness import dataset_hash

    recorded = OmegaConf.select(cfg, "production", default=None)
    if recorded is None:
        return  # not an exported config: nothing recorded to check against
    now = {"corpus": load_corpus(cfg.corpus.dir).content_hash, "dataset": dataset_hash(cfg.dataset.path)}
    was = {"corpus": recorded.get("corpus_hash"), "dataset": recorded.get("dataset_hash")}
    changed = [f"{what} {was[what]} -> {now[what]}" for what in now if was[what] and was[what] != now[what]]
    if changed:
        raise DataChanged(f"the data changed since the production config was exported ({'; '.join(changed)}): "
                          "re-export (`make export`) and re-derive conf/gates.yaml, or pass --allow-data-change")


@dataclass(frozen=True)
class GateResult:
    metric: str
    measured: float
    threshold: float

    @property
    def passed(self) -> bool:
        return self.measured >= self.threshold


def load_thresholds(path: str | Path, overrides: list[str]) -> dict[str, float]:
    try:
        spec = yaml.safe_load(Path(path).read_text()) or {}
    except OSError:
        raise FedlabError(f"gates file {path} not found: pass --gates FILE (see conf/gates.yaml)") from None
    thresholds = {str(k): float(v) for k, v in (spec.get("thresholds") or {}).items()}
    for item in overrides:
        name, sep, value = item.partition("=")
        try:
            thresholds[name.strip()] = float(value)
        except ValueError:
            raise FedlabError(f"--set {item!r}: use METRIC=NUMBER, e.g. --set recall@5=0.6") from None
        if not sep:
            raise FedlabError(f"--set {item!r}: use METRIC=NUMBER, e.g. --set recall@5=0.6")
    if not thresholds:
        raise FedlabError(f"{path} sets no thresholds: add a 'thresholds:' mapping of metric: minimum")
    return thresholds


def check(metrics: dict[str, float], thresholds: dict[str, float]) -> list[GateResult]:
    unknown = [m for m in thresholds if m not in metrics]
    if unknown:
        raise FedlabError(f"gate metric(s) {', '.join(unknown)} not measured: use names such as recall@5, mrr@10")
    return [GateResult(m, float(metrics[m]), t) for m, t in thresholds.items()]


def print_results(results: list[GateResult]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="gates (test split)")
    for col in ("metric", "measured", "threshold", "result"):
        table.add_column(col, justify="right" if col in ("measured", "threshold") else "left")
    for r in results:
        table.add_row(r.metric, f"{r.measured:.4f}", f"{r.threshold:.4f}", "[green]pass[/]" if r.passed else "[red]FAIL[/]")
    Console().print(table)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fedlab.gate", description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="production",
                        help="config name under conf/, or a path to a YAML config (default: production)")
    parser.add_argument("--gates", default=None, help="thresholds file (default: conf/gates.yaml)")
    parser.add_argument("--split", default="test", help="dataset split to gate on (default: test)")
    parser.add_argument("--set", action="append", default=[], metavar="METRIC=VALUE", help="override a threshold")
    parser.add_argument("--allow-data-change", action="store_true",
                        help="gate even if the corpus or dataset hash differs from the production config's")
    parser.add_argument("overrides", nargs="*", help="Hydra overrides for the config (key=value)")
    args = parser.parse_args(argv)
    try:
        from fedlab.config import CONF_DIR, compose
        from fedlab.evaluation.run import evaluate

        thresholds = load_thresholds(args.gates or CONF_DIR / "gates.yaml", args.set)
        cfg = compose(args.config, [f"dataset.split={args.split}", "+gate=true", *args.overrides])
        if not args.allow_data_change:
            check_data(cfg)
        metrics = evaluate(cfg).metrics
        results = check(metrics, thresholds)
    except DataChanged as exc:
        print(f"gate refused: {exc}", file=sys.stderr)
        return EXIT_DATA_CHANGED
    except FedlabError as exc:
        print(f"error: the gate could not run: {exc}", file=sys.stderr)
        return EXIT_CANNOT_RUN
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # noqa: BLE001 — "could not run" must never read as "breached"
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        print(f"error: the gate could not run: {type(exc).__name__}: {first}", file=sys.stderr)
        return EXIT_CANNOT_RUN
    print_results(results)
    failed = [r for r in results if not r.passed]
    for r in failed:
        print(f"gate failed: {r.metric} = {r.measured:.4f} is below its threshold {r.threshold:.4f}", file=sys.stderr)
    return EXIT_BREACH if failed else EXIT_PASS


if __name__ == "__main__":
    sys.exit(main())

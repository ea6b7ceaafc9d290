"""`python -m fedlab.gate`: evaluate the production config on the test split against thresholds.

Exits 0 when every metric meets its threshold, 1 naming each breached metric, 2 on a usage
error. ``--set recall@5=0.9`` overrides a threshold (how CI proves the gate can fail).
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from fedlab.errors import FedlabError


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

    table = Table(title="retrieval gates (test split)")
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
    parser.add_argument("overrides", nargs="*", help="Hydra overrides for the config (key=value)")
    args = parser.parse_args(argv)
    try:
        from fedlab.config import CONF_DIR, compose
        from fedlab.evaluate import evaluate

        thresholds = load_thresholds(args.gates or CONF_DIR / "gates.yaml", args.set)
        cfg = compose(args.config, [f"dataset.split={args.split}", "+gate=true", *args.overrides])
        metrics = evaluate(cfg)
        results = check(metrics, thresholds)
    except FedlabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print_results(results)
    failed = [r for r in results if not r.passed]
    for r in failed:
        print(f"gate failed: {r.metric} = {r.measured:.4f} is below its threshold {r.threshold:.4f}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""The best run of a sweep, defined once: for the sweep's closing report and for ``make export``.

The rule is ``conf/export.yaml``'s ``objective`` block: a metric to maximise, tie-breakers applied
in order (a leading ``-`` means lower is better), constraints a run must meet to be eligible, and
the split the runs must have been evaluated on. Runs are ordered by the metric, then by each
tie-breaker; a missing metric or tie-breaker ranks last. A run that breaks a constraint (or was
evaluated on another split) is excluded, not dropped: the report lists it below the eligible runs
with the reason, and export says which excluded runs ranked above the one it chose.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from fedlab.errors import FedlabError
from fedlab.sweeps.runs import ChildRun


@dataclass(frozen=True)
class Rule:
    metric: str
    tie_breakers: tuple[str, ...] = ()
    constraints: dict[str, dict[str, float]] = field(default_factory=dict)  # name -> {max: x} / {min: x}
    split: str | None = None  # None = any split

    @classmethod
    def from_config(cls, objective) -> Rule:
        """From an ``objective`` block shaped as conf/export.yaml's."""
        from omegaconf import OmegaConf

        block = OmegaConf.to_container(objective, resolve=True) if OmegaConf.is_config(objective) else objective
        return cls(str(block["metric"]), tuple(block.get("tie_breakers") or ()),
                   dict(block.get("constraints") or {}), block.get("split"))

    def describe(self) -> str:
        parts = [f"{self.metric}" + (f" on {self.split}" if self.split else "")]
        if self.tie_breakers:
            parts.append("ties broken by " + ", ".join(self.tie_breakers))
        if self.constraints:
            parts.append("excluding runs with " + ", ".join(
                f"{name} {'>' if op == 'max' else '<'} {bound}"
                for name, bounds in self.constraints.items() for op, bound in bounds.items()))
        return "; ".join(parts)


def export_rule(metric: str | None = None) -> Rule:
    """The rule conf/export.yaml declares (its ``objective`` block), with ``metric`` in place of
    its metric when given."""
    from omegaconf import OmegaConf

    from fedlab.config import CONF_DIR

    rule = Rule.from_config(OmegaConf.load(CONF_DIR / "export.yaml").objective)
    return Rule(metric, rule.tie_breakers, rule.constraints, rule.split) if metric else rule


def sort_key(run: ChildRun, metric: str, tie_breakers: tuple[str, ...] | list[str]) -> tuple:
    key = [-run.metrics.get(metric, -math.inf)]
    for tb in tie_breakers:
        name, sign = (tb[1:], 1) if tb.startswith("-") else (tb, -1)
        value = run.metrics.get(name, math.nan)
        key.append(math.inf if math.isnan(value) else sign * value)
    return tuple(key)


def breaches(run: ChildRun, rule: Rule) -> list[str]:
    """Why ``run`` is not eligible: one reason per constraint it breaks (empty = eligible)."""
    out = []
    if rule.split is not None and run.tags.get("dataset_split") != rule.split:
        out.append(f"evaluated on the {run.tags.get('dataset_split', '?')} split, not {rule.split}")
    for name, bound in rule.constraints.items():
        value = run.metrics.get(name)
        if value is None:
            out.append(f"{name} not logged")
            continue
        if "max" in bound and value > bound["max"]:
            out.append(f"{name}={value:.4g} > max {bound['max']}")
        if "min" in bound and value < bound["min"]:
            out.append(f"{name}={value:.4g} < min {bound['min']}")
    return out


@dataclass
class Selection:
    eligible: list[ChildRun]  # the runs that meet the rule, best first
    excluded: list[tuple[ChildRun, list[str]]]  # runs the constraints ruled out, with the reasons, best first

    @property
    def best(self) -> ChildRun | None:
        return self.eligible[0] if self.eligible else None


def rank(runs: list[ChildRun], rule: Rule) -> Selection:
    """Every run in rank order, split into the eligible and the excluded (with why)."""
    judged = [(r, breaches(r, rule)) for r in sorted(runs, key=lambda r: sort_key(r, rule.metric, rule.tie_breakers))]
    return Selection([r for r, why in judged if not why], [(r, why) for r, why in judged if why])


def select(runs: list[ChildRun], rule: Rule) -> Selection:
    """As :func:`rank`, refusing (one line) when no run is eligible."""
    selection = rank(runs, rule)
    if selection.best is None:
        top = selection.excluded[0]
        raise FedlabError(
            f"no run of the sweep meets the constraints {rule.constraints} (the best run, {top[0].name}, has "
            f"{'; '.join(top[1])}): relax objective.constraints or sweep again"
        )
    return selection


def print_exclusions(selection: Selection, metric: str, console=None) -> None:
    """What the constraints took away: every excluded run that ranks above the chosen one (those
    changed the outcome), then a count of the rest."""
    from rich.console import Console

    console = console or Console(stderr=True, highlight=False)
    if not selection.excluded:
        console.print("constraints excluded no run")
        return
    chosen = selection.best.metrics.get(metric, -math.inf)
    above = [(r, why) for r, why in selection.excluded if r.metrics.get(metric, -math.inf) >= chosen]
    console.print(f"constraints excluded {len(selection.excluded)} run(s); {len(above)} of them rank above the "
                  f"chosen run by {metric}:")
    for r, why in above[:20]:
        console.print(f"  excluded {r.name} ({metric}={r.metrics.get(metric, math.nan):.4f}): {'; '.join(why)}")
    if len(above) > 20:
        console.print(f"  … and {len(above) - 20} more above it")

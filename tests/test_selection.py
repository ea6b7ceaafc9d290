"""The best run of a sweep, defined once (fedlab.sweeps.selection): ordering, tie-breakers,
constraints, and the sweep report and export agreeing on it."""
from __future__ import annotations

import math
from io import StringIO

import pytest
from rich.console import Console

from fedlab.errors import FedlabError
from fedlab.sweeps.report import ranked_markdown, ranked_rows
from fedlab.sweeps.runs import ChildRun
from fedlab.sweeps.selection import Rule, export_rule, print_exclusions, rank, select, sort_key

LATENCY = "latency_p95_ms_total"
RULE = Rule("recall@5", ("mrr@10", "ndcg@10", f"-{LATENCY}"), {LATENCY: {"max": 1000}}, "dev")


def _run(run_id: str, recall: float, mrr: float = 0.5, ndcg: float = 0.5, latency: float = 50.0,
         split: str = "dev", **extra: float) -> ChildRun:
    metrics = {"recall@5": recall, "mrr@10": mrr, "ndcg@10": ndcg, LATENCY: latency, **extra}
    return ChildRun(run_id, f"run-{run_id}", {k: v for k, v in metrics.items() if v is not None},
                    {"dataset_split": split})


def test_export_says_what_its_constraints_excluded():
    runs = [ChildRun("a", "hybrid/minilm", {"recall@5": 0.43, "latency_p95_ms_total": 1456.0}, {}),
            ChildRun("b", "dense/minilm", {"recall@5": 0.45, "latency_p95_ms_total": 1200.0}, {}),
            ChildRun("c", "bm25", {"recall@5": 0.34, "latency_p95_ms_total": 12.0}, {}),
            ChildRun("d", "bm25/k5", {"recall@5": 0.30, "latency_p95_ms_total": 2000.0}, {})]
    chosen = select(runs, Rule("recall@5", (), {"latency_p95_ms_total": {"max": 1000}}))
    assert chosen.best.run_id == "c"
    buf = StringIO()
    print_exclusions(chosen, "recall@5", Console(file=buf, width=200))
    text = buf.getvalue()
    assert "excluded 3 run(s); 2 of them rank above" in text
    assert "excluded dense/minilm (recall@5=0.4500): latency_p95_ms_total=1200 > max 1000" in text
    assert "bm25/k5" not in text  # below the chosen run: it changed nothing


def test_the_objective_orders_first():
    runs = [_run("low", 0.40, mrr=0.9), _run("high", 0.60, mrr=0.1), _run("mid", 0.50)]
    assert [r.run_id for r in rank(runs, RULE).eligible] == ["high", "mid", "low"]


def test_tie_breakers_apply_in_order_and_a_minus_means_lower_is_better():
    runs = [_run("slow", 0.5, mrr=0.6, ndcg=0.5, latency=300.0),
            _run("fast", 0.5, mrr=0.6, ndcg=0.5, latency=100.0),
            _run("ndcg", 0.5, mrr=0.6, ndcg=0.7, latency=900.0),
            _run("mrr", 0.5, mrr=0.7, ndcg=0.1, latency=999.0)]
    assert [r.run_id for r in rank(runs, RULE).eligible] == ["mrr", "ndcg", "fast", "slow"]
    # without tie-breakers a tie keeps the order the runs came in (sorted is stable)
    assert [r.run_id for r in rank(runs, Rule("recall@5")).eligible] == ["slow", "fast", "ndcg", "mrr"]


def test_a_missing_metric_ranks_last():
    runs = [_run("no-recall", None), _run("no-mrr", 0.5, mrr=None), _run("full", 0.5, mrr=0.1)]
    assert [r.run_id for r in rank(runs, Rule("recall@5", ("mrr@10",))).eligible] == ["full", "no-mrr", "no-recall"]
    assert sort_key(runs[1], "recall@5", ("mrr@10",))[1] == math.inf


def test_constraints_exclude_with_the_reason_in_rank_order():
    runs = [_run("too-slow", 0.9, latency=1500.0), _run("ok", 0.5), _run("no-latency", 0.8, latency=None),
            _run("on-test", 0.95, split="test")]
    selection = rank(runs, RULE)
    assert selection.best.run_id == "ok"
    assert [(r.run_id, why) for r, why in selection.excluded] == [
        ("on-test", ["evaluated on the test split, not dev"]),
        ("too-slow", ["latency_p95_ms_total=1500 > max 1000"]),
        ("no-latency", ["latency_p95_ms_total not logged"]),
    ]
    floor = rank([_run("a", 0.5, mrr=0.2)], Rule("recall@5", (), {"mrr@10": {"min": 0.3}}))
    assert floor.best is None and floor.excluded[0][1] == ["mrr@10=0.2 < min 0.3"]


def test_select_refuses_in_one_line_when_no_run_is_eligible():
    with pytest.raises(FedlabError, match=r"no run of the sweep meets the constraints .*run-slow, has "
                                          r"latency_p95_ms_total=2000 > max 1000"):
        select([_run("slow", 0.5, latency=2000.0)], RULE)


def test_the_rule_is_conf_export_yaml():
    rule = export_rule()
    assert rule == Rule("recall@5", ("mrr@10", "ndcg@10", "-latency_p95_ms_total"),
                        {"latency_p95_ms_total": {"max": 1000}}, "dev")
    assert export_rule("mrr@10") == Rule("mrr@10", rule.tie_breakers, rule.constraints, rule.split)


def test_the_report_ranks_as_export_picks():
    """A tie on the objective is broken by mrr@10 (not by latency, as the report did before it
    used export's rule), and a run breaking a constraint is listed last, unnumbered, with why."""
    runs = [_run("fast", 0.6, mrr=0.50, latency=90.0), _run("better-mrr", 0.6, mrr=0.55, latency=120.0),
            _run("too-slow", 0.7, latency=1200.0), _run("worse", 0.4)]
    selection = rank(runs, RULE)
    assert selection.best.run_id == select(runs, RULE).best.run_id == "better-mrr"
    assert [(pos, r.run_id) for pos, r, _ in ranked_rows(selection)] == [
        ("1", "better-mrr"), ("2", "fast"), ("3", "worse"), ("–", "too-slow")]
    table = ranked_markdown(selection, RULE, LATENCY, front_ids={"fast"})
    lines = table.splitlines()
    assert lines[0].startswith("Ranked by recall@5 on dev; ties broken by mrr@10, ndcg@10, -latency_p95_ms_total")
    assert lines[4].startswith("| 1 | run-better-mrr | 0.600 | 0.550 |")
    assert lines[5].startswith("| 2 | run-fast |") and "| ★ |" in lines[5]
    assert lines[7].startswith("| – | run-too-slow |")
    assert lines[7].endswith("| latency_p95_ms_total=1200 > max 1000 |")

"""The report as people read it: report.md, a terminal table and two plots, from report.json's data."""
from __future__ import annotations

import math
from pathlib import Path

HEADLINE = ("answer_accuracy", "false_abstention_rate", "abstention_accuracy", "citation_validity", "ece", "auroc",
            "brier", "coverage@precision0.9", "recall@10", "meeting_recall@5", "mrr@10", "latency_p50_ms",
            "latency_p95_ms")
SHORT = {"answer_accuracy": "acc", "false_abstention_rate": "false abst", "abstention_accuracy": "abst",
         "citation_validity": "cit valid", "ece": "ECE", "auroc": "AUROC", "brier": "Brier",
         "coverage@precision0.9": "cov@0.9", "recall@10": "R@10", "meeting_recall@5": "mR@5", "mrr@10": "MRR@10",
         "latency_p50_ms": "p50 ms", "latency_p95_ms": "p95 ms"}
MAX_CHANGED_IDS = 10  # question ids listed per set in report.md's changed answers (report.json: all)
CONSOLE = ("answer_accuracy", "false_abstention_rate", "abstention_accuracy", "ece", "recall@10", "latency_p95_ms")


def cell(est: dict | None, interval: bool = True) -> str:
    """``0.712 [0.65, 0.77]`` (milliseconds without decimals); ``—`` when not measured."""
    if not est or est.get("value") is None:
        return "—"
    big = abs(est["value"]) >= 10
    fmt = (lambda x: f"{x:.0f}") if big else (lambda x: f"{x:.3f}")
    short = (lambda x: f"{x:.0f}") if big else (lambda x: f"{x:.2f}")
    if not interval or est.get("lo") is None:
        return fmt(est["value"])
    return f"{fmt(est['value'])} [{short(est['lo'])}, {short(est['hi'])}]"


def compact(est: dict | None) -> str:
    """``0.88 [0.81,0.94]``: a terminal cell (milliseconds without decimals)."""
    if not est or est.get("value") is None:
        return "—"
    f = (lambda x: f"{x:.0f}") if abs(est["value"]) >= 10 else (lambda x: f"{x:.2f}")
    return f(est["value"]) if est.get("lo") is None else f"{f(est['value'])} [{f(est['lo'])},{f(est['hi'])}]"


def _rows(data: dict) -> list[tuple[str, str, dict]]:
    """(label, role, block) for every set, then every role's pool."""
    rows = [(s["name"], s["role"], s) for s in data["sets"]]
    rows += [(f"**{role} (pooled)**", role, pool) for role, pool in data["pools"].items()]
    return rows


def markdown(data: dict) -> str:
    lines = [f"# fedlab report: `{data['config']}`", "",
             f"git {data['git_commit']} · {data['created']} · MLflow parent run `{data['parent_run_id']}` "
             f"(experiment fedlab-report) · 95% bootstrap intervals over questions ({data['n_boot']} resamples)", ""]
    reads = data.get("test_reads") or {}
    if reads.get("count") is not None:
        since = f" since the gate record of {reads['since']}" if reads.get("since") else ""
        lines += [f"The test split has been evaluated **{reads['count']}** time(s){since}.", ""]
    if data.get("answerability_model"):
        lines += [f"Answerability model: {data['answerability_model']}", ""]
    lines += ["## Per set and pooled by role", "",
              "| set | role | n | " + " | ".join(SHORT[m] for m in HEADLINE) + " |",
              "|---|---|---:|" + "---:|" * len(HEADLINE)]
    for label, role, block in _rows(data):
        o = block["overall"]
        lines.append(f"| {label} | {role} | {o.get('n', 0)} | " + " | ".join(cell(o.get(m)) for m in HEADLINE) + " |")
    if data.get("gap"):
        lines += ["", "## Generalisation gap (dev − heldout)", "",
                  "| " + " | ".join(SHORT[m] for m in HEADLINE if m in data["gap"]) + " |",
                  "|" + "---:|" * sum(1 for m in HEADLINE if m in data["gap"]),
                  "| " + " | ".join(cell(data["gap"][m]) for m in HEADLINE if m in data["gap"]) + " |"]
    for field in data["group_by"]:
        blocks = [(label, block["groups"][field]) for label, _, block in _rows(data) if field in block.get("groups", {})]
        if not blocks:
            continue
        lines += ["", f"## Per {field}", "", "| set | " + field + " | n | acc | false abst | abst | ECE | R@10 |",
                  "|---|---|---:|---:|---:|---:|---:|---:|"]
        for label, groups in blocks:
            for value, est in groups.items():
                lines.append(f"| {label} | {value} | {est['n']} | " + " | ".join(
                    cell(est.get(m)) for m in ("answer_accuracy", "false_abstention_rate", "abstention_accuracy",
                                               "ece", "recall@10")) + " |")
    against = [(s["name"], s["against"]) for s in data["sets"] if s.get("against")]
    if against:
        lines += ["", "## Against the earlier report (B = now, A = earlier; paired test per set)", "",
                  "| set | measure | A | B | B−A | p | better |", "|---|---|---:|---:|---:|---:|---|"]
        for name, rows in against:
            for metric, r in rows.items():
                p = "nan" if r["p"] is None or (isinstance(r["p"], float) and math.isnan(r["p"])) else f"{r['p']:.3g}"
                lines.append(f"| {name} | {metric} | {r['a']:.3f} | {r['b']:.3f} | {r['delta']:+.3f} | {p} | "
                             f"{r['better'] or '—'} |")
    changed = [(s["name"], s["changed_answers"]) for s in data["sets"] if s.get("changed_answers")]
    if changed:
        lines += ["", "## Changed answers against the earlier report (answer text, abstention or skill)", "",
                  "| set | changed | of | questions |", "|---|---:|---:|---|"]
        for name, c in changed:
            shown = ", ".join(c["ids"][:MAX_CHANGED_IDS]) + (" …" if len(c["ids"]) > MAX_CHANGED_IDS else "")
            lines.append(f"| {name} | {c['n']} | {c['of']} | {shown} |")
    lines += ["", "Roles: dev = developed and chosen on; heldout = read only to confirm a choice made on dev; "
              "test = read for a release, never to choose; train = what the answerability model is fitted on.", ""]
    return "\n".join(lines)


def print_table(data: dict, console) -> None:
    from rich import box
    from rich.table import Table

    table = Table(title=f"fedlab report: {data['config']} (95% bootstrap intervals)", box=box.SIMPLE_HEAD)
    against = any(s.get("against") for s in data["sets"])
    changed = any("changed_answers" in s for s in data["sets"])
    for col in ("set", "role", "n", *(SHORT[m] for m in CONSOLE), *(["Δacc (p)"] if against else []),
                *(["changed"] if changed else [])):
        table.add_column(col, justify="left" if col in ("set", "role") else "right", no_wrap=True)
    for label, role, block in _rows(data):
        o = block["overall"]
        delta = []
        if against:
            r = (block.get("against") or {}).get("answer_accuracy")
            delta = [f"{r['delta']:+.3f} ({r['p']:.2g})" if r and r.get("p") is not None
                     and r["p"] == r["p"] else (f"{r['delta']:+.3f}" if r else "")]
        moved = [str(block["changed_answers"]["n"]) if "changed_answers" in block else ""] if changed else []
        table.add_row(label.replace("**", ""), role, str(o.get("n", 0)), *(compact(o.get(m)) for m in CONSOLE), *delta,
                      *moved)
    if data.get("gap"):
        table.add_row("gap dev−heldout", "", "", *(compact(data["gap"].get(m)) for m in CONSOLE),
                      *([""] if against else []), *([""] if changed else []))
    console.print(table)
    reads = data.get("test_reads") or {}
    if reads.get("count") is not None:
        console.print(f"test evaluated {reads['count']} time(s) since the gate record"
                      + (f" ({reads['since']})" if reads.get("since") else ""))
    if data.get("answerability_model"):
        console.print(f"answerability model: {data['answerability_model']}")


ROLE_COLOURS = {"dev": "tab:blue", "heldout": "tab:orange", "test": "tab:red", "train": "tab:grey"}


def accuracy_figure(data: dict, measure: str = "answer_accuracy"):
    """Per-set (and pooled) ``measure`` with its interval as error bars, coloured by role."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [(label.replace("**", ""), role, block["overall"].get(measure)) for label, role, block in _rows(data)]
    rows = [r for r in rows if r[2] and r[2].get("value") is not None]
    fig, ax = plt.subplots(figsize=(7, 0.35 * max(len(rows), 4) + 1.2))
    for i, (label, role, est) in enumerate(rows):
        lo, hi = est.get("lo"), est.get("hi")
        err = [[est["value"] - lo], [hi - est["value"]]] if lo is not None else None
        ax.errorbar(est["value"], i, xerr=err, fmt="o", color=ROLE_COLOURS.get(role, "black"), capsize=3)
    ax.set_yticks(range(len(rows)), [r[0] for r in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set(xlim=(0, 1), xlabel=f"{measure} (95% bootstrap interval)", title=f"{data['config']}: {measure} per set")
    for role, colour in ROLE_COLOURS.items():
        if any(r[1] == role for r in rows):
            ax.plot([], [], "o", color=colour, label=role)
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


def risk_coverage_figure(curves: dict[str, list]):
    """One risk-coverage curve per set (fedlab.evaluation.answers.selective's points)."""
    from fedlab.evaluation.answers.selective import risk_coverage_figure as figure

    fig = figure(curves, title="risk-coverage per set")
    fig.set_size_inches(6, 5)
    for ax in fig.axes:
        ax.legend(loc="upper left", fontsize=6, ncol=2)
    fig.tight_layout()
    return fig


def write_figures(data: dict, rows_by_set: dict[str, list[dict]], out_dir: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fedlab.evaluation.answers.selective import risk_coverage
    from fedlab.io import atomic_path

    def save(fig, name: str) -> None:
        paths.append(out_dir / name)
        with atomic_path(paths[-1]) as tmp:
            fig.savefig(tmp, dpi=120, format="png")
        plt.close(fig)

    paths: list[Path] = []
    save(accuracy_figure(data), "report_accuracy.png")
    curves = {}
    for name, rows in rows_by_set.items():
        judged = [r for r in rows if r.get("correct") is not None and r.get("confidence") is not None]
        if judged:
            curves[name] = risk_coverage([float(r["confidence"]) for r in judged], [bool(r["correct"]) for r in judged])
    if curves:
        save(risk_coverage_figure(curves), "risk_coverage.png")
    return paths

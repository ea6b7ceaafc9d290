"""The benchmark's outputs: markdown report, BENCH_OUT JSON, rich table, recall-vs-latency figure."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from fedlab import io
from fedlab.benchmark.ann import AnnRow
from fedlab.benchmark.cold_start import ColdStart
from fedlab.benchmark.embedders import CacheTiming, ThroughputRow
from fedlab.benchmark.report_cost import ReportCost
from fedlab.benchmark.sweep_cost import SweepCost
from fedlab.benchmark.trace_cost import TARGET as TRACE_TARGET
from fedlab.benchmark.trace_cost import TraceCost

# Parameters shown in the tables (the JSON rows carry all of them).
SHOWN = {
    "faiss_hnsw": ("M", "efConstruction", "efSearch"),
    "faiss_ivf": ("nlist", "nprobe"),
    "hnswlib": ("M", "ef_construction", "ef"),
    "chroma": ("M", "construction_ef", "search_ef"),
}
LOADED = 0.5  # 1-min load average per core above which timings are flagged as noisy
# FedQuery's published table (seed 000, "HNSW vs IVF Benchmark": 1,545 chunks x 384 dims), keyed by
# the row of conf/bench.yaml with the same setting. Its "Recall@5" row is on random vectors.
FEDQUERY_N = 1545
FEDQUERY = {
    "hnsw_M32_ef64": {"label": "HNSW M=32 efSearch=64", "recall_random": 0.933, "recall_real": 1.0,
                      "avg_ms": 0.030, "p99_ms": 0.057, "size_kb": 2727},
    "ivf_nlist25_nprobe10": {"label": "IVF nlist=25 nprobe=10", "recall_random": 0.959, "recall_real": 1.0,
                             "avg_ms": 0.017, "p99_ms": 0.022, "size_kb": 2367},
    "exact": {"label": "brute force", "recall_random": 1.0, "recall_real": 1.0,
              "avg_ms": 0.031, "p99_ms": 0.036, "size_kb": 2318},
}


@dataclass
class BenchResult:
    context: dict  # corpus hash, chunker, embedder, n, dim, query counts, machine load, ...
    rows: list[AnnRow]
    throughput: list[ThroughputRow] = field(default_factory=list)
    cache: CacheTiming | None = None
    k: int = 5
    cold_start: ColdStart | None = None
    sweep_cost: SweepCost | None = None
    trace_cost: TraceCost | None = None
    report_cost: ReportCost | None = None

    @property
    def labels(self) -> list[str]:
        return list(self.rows[0].by_data) if self.rows else []

    def index_rows(self) -> list[dict]:
        """The BENCH_OUT list: one row per index configuration."""
        return [r.to_json(self.k) for r in self.rows]

    def extra(self) -> dict:
        return {"context": self.context, "throughput": [t.to_json() for t in self.throughput],
                "cache": self.cache.to_json() if self.cache else None,
                "cold_start": self.cold_start.to_json() if self.cold_start else None,
                "sweep_cost": self.sweep_cost.to_json() if self.sweep_cost else None,
                "trace_cost": self.trace_cost.to_json() if self.trace_cost else None,
                "report_cost": self.report_cost.to_json() if self.report_cost else None}


def shown_params(row: AnnRow) -> str:
    params = row.params
    parts = []
    for key in SHOWN.get(row.kind, ()):
        value = params.get("nlist_effective", params[key]) if key == "nlist" else params.get(key)
        parts.append(f"{key}={value}")
    return " ".join(parts)


def extra_path(bench_out: str | Path) -> Path:
    """Where the throughput/cache sections go beside BENCH_OUT: bench.json -> bench.extra.json."""
    return Path(bench_out).with_suffix(".extra.json")


def write_json_outputs(bench_out: str | Path, result: BenchResult) -> tuple[Path, Path]:
    io.write_json(bench_out, result.index_rows())
    extra = extra_path(bench_out)
    io.write_json(extra, result.extra())
    return Path(bench_out), extra


def _f(x: float, digits: int = 3) -> str:
    return f"{x:.{digits}f}"


def ann_table_rows(result: BenchResult, compact: bool = False) -> tuple[list[str], list[list[str]]]:
    """Header and cells of the index table; ``compact`` (the terminal) drops params and miss gap."""
    k = result.k
    labels = result.labels
    header = ["index", *([] if compact else ["params"]), *[f"R@{k} {lb}" for lb in labels],
              *([] if compact else [f"miss gap {labels[0]}"]), "avg ms", "p99 ms",
              *[f"×exact {lb}" for lb in labels], "build s", "KB"]
    body = []
    for row in result.rows:
        first = row.by_data[labels[0]]
        body.append([row.index, *([] if compact else [shown_params(row)]),
                     *[_f(row.by_data[lb].recall) for lb in labels],
                     *([] if compact else [_f(first.miss_gap, 4) if first.miss_gap else "–"]),
                     _f(first.avg_ms), _f(first.p99_ms), *[f"{row.ratio[lb]:.2f}" for lb in labels],
                     _f(first.build_s, 2), f"{first.size_kb:,.0f}"])
    return header, body


def _md_table(header: list[str], body: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cells) + " |" for cells in body]
    return "\n".join(lines)


def load_note(ctx: dict) -> str:
    cores = ctx.get("cpu_count") or 1
    start, end = ctx.get("load_start"), ctx.get("load_end")
    if start is None or end is None:
        return ""
    note = (f"Machine: {cores} cores; 1-minute load average {start:.2f} when the benchmark started "
            f"and {end:.2f} when it finished.")
    if max(start, end) / cores > LOADED:
        note += (" Other jobs were running, so absolute times are noisy: compare the ratios to exact "
                 "search, which was timed on each query right after the index, under the same load.")
    return note


def markdown(result: BenchResult) -> str:
    ctx, k = result.context, result.k
    labels = result.labels
    header, body = ann_table_rows(result)
    primary = labels[0] if labels else "real"
    out = [
        "# ANN index benchmark",
        "",
        f"Generated by `make bench` (`python -m fedlab.bench`, config `conf/bench.yaml`) on {ctx.get('date', '?')}"
        f" at commit `{ctx.get('git_commit', '?')}`.",
        "",
        f"How much accuracy and speed do approximate nearest-neighbour indexes trade on a corpus this small? "
        f"Each index is built over the {ctx.get('n')} chunk embeddings of the FOMC corpus "
        f"(chunker `{ctx.get('chunker')}`, embedder `{ctx.get('embedder')}`, {ctx.get('dim')} dimensions; "
        f"corpus hash `{ctx.get('corpus_hash')}`) and, separately, over as many seeded random unit vectors "
        f"of the same shape. Real queries are the {ctx.get('real_queries')} questions of the question set "
        f"embedded with the same model; random queries are {ctx.get('random_queries')} random unit vectors. "
        f"recall@{k} is the overlap of an index's top {k} with exact search's top {k} (a tie with the "
        f"{k}th exact similarity counts as a match). Latency is one `search(query, k={k})` call through "
        f"fedlab's index interface, timed per query after {ctx.get('warmup')} warm-up queries as the median "
        f"of {ctx.get('repeats')} passes, then averaged (avg) or taken at the 99th percentile (p99) over the "
        f"queries; avg/p99/build/size are for the {primary} data. `×exact` divides the average latency by exact "
        f"search's average over the same queries, exact search being timed on each query right after the index "
        f"(both see the same machine load). Size is the saved index on disk; build time is `build()` alone. "
        f"FAISS (OpenMP) and numpy (BLAS) ran with {ctx.get('threads')} thread(s). Configurations that differ "
        f"only in a search-time parameter (efSearch, nprobe, ef) share one built index, hence one build time.",
        "",
        "Reproduce: `make bench` (writes this file; `BENCH_OUT=rows.json make bench` also writes the rows "
        "as JSON, and the throughput/cache sections to `rows.extra.json`). Results are logged to MLflow "
        f"(experiment `{ctx.get('experiment', 'fedlab-bench')}`) with a recall-vs-latency plot.",
        "",
        load_note(ctx),
        "",
        "## Indexes",
        "",
        f"`R@{k}` = recall@{k}; `miss gap` = median amount by which a returned {primary} row outside the exact "
        f"top {k} falls short of the {k}th exact similarity (small = a near-tie, not a wrong passage). "
        f"{_duplicates(ctx)}",
        "",
        _md_table(header, body),
        "",
    ]
    out += _observations(result)
    out += _fedquery(result)
    if result.throughput:
        ref = ctx.get("throughput_reference", "minilm")
        out += [
            "## Embedder throughput",
            "",
            f"`measure_throughput` on a seeded sample of real chunks (the first N of the same sample for each "
            f"model; slow models get fewer). The models were measured in turn for {ctx.get('throughput_rounds', 1)} "
            f"round(s), each keeping its fastest, so that all saw similar machine load; on a busy machine the "
            f"ratios still move, as the runtimes use threads differently. Load = first model load plus a "
            f"warm-up batch. Ratio = passages/s divided by `{ref}`'s.",
            "",
            _md_table(["embedder", "passages", "mean tokens", "load s", "seconds", "passages/s", f"× {ref}"],
                      [[t.embedder, str(t.passages), f"{t.mean_tokens:.0f}", _f(t.load_s, 2), _f(t.seconds, 2),
                        f"{t.passages_per_s:.1f}",
                        "" if t.ratio_vs_reference is None else f"{t.ratio_vs_reference:.2f}"]
                       for t in result.throughput]),
            "",
        ]
    if result.cache:
        c = result.cache
        out += [
            "## Embedding cache: miss vs hit",
            "",
            f"`embed_chunks` on {c.chunks} chunks with `{c.embedder}` (model already loaded), first on a fresh "
            f"temporary cache (a miss: the chunks are embedded and stored), then again (a hit: the stored vectors "
            f"are checked against their manifest and loaded). Cache counters after both calls: "
            f"{', '.join(f'{k}={v}' for k, v in c.stats.items())}; the hit returned "
            f"{'identical' if c.identical else 'DIFFERENT'} vectors.",
            "",
            _md_table(["embedder", "chunks", "miss s", "hit s", "miss / hit"],
                      [[c.embedder, str(c.chunks), _f(c.miss_s, 2), _f(c.hit_s, 4), f"{c.miss_over_hit:,.0f}"]]),
            "",
        ]
    out += cold_start_section(result.cold_start)
    out += sweep_cost_section(result.sweep_cost)
    out += trace_cost_section(result.trace_cost)
    out += report_cost_section(result.report_cost)
    return "\n".join(out).rstrip() + "\n"


def cold_start_section(c: ColdStart | None) -> list[str]:
    if c is None:
        return []
    n = len(c.seconds["new"])
    rows = [["import floor", f"`python -c \"import {', '.join(c.floor_modules)}\"`"],
            ["`import fedlab.ask`", "`python -c \"import fedlab.ask\"`"],
            ["new question", f"`python -m fedlab.ask --config {c.config} --json \"…\"`, a question not asked before"],
            ["repeated question", "the same command, a question asked before (query vector cached)"]]
    body = [[label, what, _f(c.median(case), 2), f"{c.ratio(case):.2f}"]
            for (label, what), case in zip(rows, ("floor", "import", "new", "repeated"))]
    return [
        "## Cold ask",
        "",
        f"Wall time of fresh Python processes, median of {n} rounds (the cases run in turn in each round, "
        f"under similar load). The import floor is what the old ask path imported before answering anything; "
        f"a new question is `{c.question}` with a per-run tag appended, so that its query vector is not cached: "
        f"{c.new_misses} of {c.new_asked} were computed by the timed process (checked in the query cache "
        f"before and after). `× floor` divides by the import floor.",
        "",
        _md_table(["case", "command", "median s", "× floor"], body),
        "",
    ]


def report_cost_section(c: ReportCost | None) -> list[str]:
    if c is None:
        return []
    baseline = (f" One `python -m fedlab.evaluate` process per set took {c.separate_wall_s:.1f} s: the report "
                f"takes {c.ratio:.2f}× that." if c.ratio is not None else "")
    return ["", "## Report cost", "",
            f"`{c.command}` — {len(c.sets)} set(s), {c.n_questions} questions, warm: {c.report_wall_s:.1f} s "
            f"({c.per_question_s:.3f} s a question).{baseline} Choose the sets with "
            "`make bench BENCH_ARGS='report_cost.sets=null'` (every dev and heldout set)."]


def sweep_cost_section(c: SweepCost | None) -> list[str]:
    if c is None:
        return []
    ratio = "-" if c.ratio is None else f"{c.ratio:.2f}"
    return [
        "## Sweep cost",
        "",
        f"`{c.command}` run twice in a subprocess: cold (a fresh data directory with a copy of the corpus, so "
        f"every artifact is built; a fresh sqlite tracking store) and warm (the same data directory again). "
        f"Unique-artifact time = the cold sweep's artifact builds, each counted once (`build_s.<stage>` of the "
        f"run that missed on it). Per config = (cold wall − unique-artifact time) / N, and warm wall / N. "
        f"Ratio = cold wall / unique-artifact time (target ≤ 1.2). Walls include process start and the "
        f"sweep's closing report. Choose the study with `make bench BENCH_ARGS='sweep_cost.study=default'`.",
        "",
        _md_table(["study", "configs", "cold wall s", "warm wall s", "unique-artifact s", "per config cold s",
                   "per config warm s", "cold / unique"],
                  [[c.study, str(c.n_configs), _f(c.cold_wall_s, 1), _f(c.warm_wall_s, 1), _f(c.unique_build_s, 1),
                    _f(c.per_config_cold_s, 2), _f(c.per_config_warm_s, 2), ratio]]),
        "",
    ]


def trace_cost_section(c: TraceCost | None) -> list[str]:
    if c is None:
        return []
    rounds = len(c.seconds["off"])
    return [
        "## Tracing cost",
        "",
        f"`{c.command}`: the {c.config} config evaluated on its {c.n_questions} questions in a subprocess, with "
        f"every question traced (`eval.traces=all`: a trace per question with its spans, retrieved passages and "
        f"assessments, stored before the process ends) and with none (`off`), {rounds} round(s) after an untimed "
        f"warm-up, the order alternating by round, one sqlite tracking store. Median wall per setting; overhead = "
        f"all / off − 1 (target ≤ {TRACE_TARGET:.0%}); CPU all / off is the same ratio of the processes' CPU "
        f"seconds (user + system), which other jobs on a shared machine do not stretch. Choose the config with "
        f"`make bench BENCH_ARGS='trace_cost.config=evaluate'`.",
        "",
        _md_table(["config", "questions", "off s", "all s", "all / off", "overhead", "CPU all / off"],
                  [[c.config, str(c.n_questions), _f(c.median("off"), 1), _f(c.median("all"), 1), f"{c.ratio:.3f}",
                    f"{c.overhead:+.1%}", "–" if c.cpu_ratio is None else f"{c.cpu_ratio:.3f}"]]),
        "",
    ]


def _observations(result: BenchResult) -> list[str]:
    """Facts read off the table (no judgement that the numbers might not support)."""
    k, labels = result.k, result.labels
    approx = result.rows[1:]
    if not approx:
        return []
    lines = ["Read off the table:", ""]
    for lb in labels:
        perfect = [r.index for r in approx if r.by_data[lb].recall >= 0.9995]
        worst = min(approx, key=lambda r: r.by_data[lb].recall)
        lines.append(f"- {lb}: {len(perfect)} of {len(approx)} approximate configurations reach recall@{k} = 1.000; "
                     f"the lowest is {worst.index} at {worst.by_data[lb].recall:.3f}.")
    fastest = min(approx, key=lambda r: r.ratio[labels[0]])
    slowest = max(approx, key=lambda r: r.ratio[labels[0]])
    lines.append(f"- {labels[0]} latency relative to exact search ranges from {fastest.ratio[labels[0]]:.2f}× "
                 f"({fastest.index}) to {slowest.ratio[labels[0]]:.2f}× ({slowest.index}).")
    return lines + [""]


def _duplicates(ctx: dict) -> str:
    if ctx.get("duplicate_rows") is None:
        return ""
    return (f"{ctx['duplicate_rows']} of the {ctx.get('n')} chunk vectors duplicate another row exactly "
            "(boilerplate repeated across statements); ties with them count as matches.")


def _fedquery(result: BenchResult) -> list[str]:
    """FedQuery's published numbers beside ours for the same settings (where the rows exist)."""
    labels = result.labels
    rows = {r.index: r for r in result.rows if r.index in FEDQUERY}
    if not rows or not {"real", "random"} <= set(labels):
        return []
    k, n = result.k, result.context.get("n")
    body = []
    for name, ref in FEDQUERY.items():
        if name not in rows:
            continue
        row = rows[name]
        rnd = row.by_data["random"]
        body.append([ref["label"], f"{ref['recall_random']:.3f} / {rnd.recall:.3f}",
                     f"{ref['recall_real']:.3f} / {row.by_data['real'].recall:.3f}",
                     f"{ref['avg_ms']:.3f} / {rnd.avg_ms:.3f}", f"{ref['p99_ms']:.3f} / {rnd.p99_ms:.3f}",
                     f"{ref['size_kb']:,} / {rnd.size_kb:,.0f}"])
    return [
        "## Against FedQuery's published table",
        "",
        f"FedQuery (seed 000) reports these settings on {FEDQUERY_N:,} chunks; this corpus has {n:,}, so sizes "
        f"scale by about {n / FEDQUERY_N:.1f}× and IVF lists hold more vectors each. Each cell is FedQuery / here; "
        f"latencies here are on the random vectors and include fedlab's wrapper around the library call, so only "
        f"their order, not their value, is comparable.",
        "",
        _md_table(["setting", f"recall@{k} random", f"recall@{k} real queries", "avg ms", "p99 ms", "size KB"], body),
        "",
    ]


def rich_table(result: BenchResult):
    from rich.table import Table

    header, body = ann_table_rows(result, compact=True)
    table = Table(title=f"ANN benchmark (n={result.context.get('n')}, dim={result.context.get('dim')})")
    for i, name in enumerate(header):
        table.add_column(name, justify="left" if i == 0 else "right")
    for cells in body:
        table.add_row(*cells)
    return table


def figure(result: BenchResult):
    """recall@k against latency ratio to exact, one panel per dataset (real, random)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FormatStrFormatter, NullFormatter

    labels = result.labels
    fig, axes = plt.subplots(1, len(labels), figsize=(6 * len(labels), 4.5), sharey=True, squeeze=False)
    colours = {"exact": "black", "faiss_hnsw": "tab:blue", "faiss_ivf": "tab:orange", "hnswlib": "tab:green",
               "chroma": "tab:purple"}
    for ax, lb in zip(axes[0], labels):
        for row in result.rows:
            x, y = row.ratio[lb], row.by_data[lb].recall
            ax.scatter(x, y, color=colours.get(row.kind, "grey"), s=25,
                       label=row.kind if row.kind not in ax.get_legend_handles_labels()[1] else None)
            ax.annotate(row.index, (x, y), fontsize=6, xytext=(3, 2), textcoords="offset points")
        ax.set_xscale("log")
        lo, hi = ax.get_xlim()
        ax.set_xticks([t for t in (0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50) if lo <= t <= hi])
        ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("average latency / exact search (log)")
        ax.set_title(f"{lb} vectors")
        ax.grid(True, alpha=0.3)
    axes[0][0].set_ylabel(f"recall@{result.k}")
    axes[0][0].legend(fontsize=7, loc="lower right")
    fig.suptitle(f"recall@{result.k} vs latency (n={result.context.get('n')}, dim={result.context.get('dim')})")
    fig.tight_layout()
    return fig

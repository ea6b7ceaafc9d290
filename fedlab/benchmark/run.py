"""The benchmark run behind `python -m fedlab.bench` (make bench): ANN indexes, embedder
throughput, embedding cache, cold ask.

Indexes are compared on the corpus's real chunk embeddings (read through the pipeline's cache,
so nothing is re-embedded when cached) and on random unit vectors of the same shape. Results go
to reports/ann_benchmark.md, MLflow (experiment ``fedlab-bench``) and, when BENCH_OUT is
set, to a JSON list of index rows at BENCH_OUT plus the other sections beside it (.extra.json).
"""
from __future__ import annotations

import datetime as dt
import json
import os
from dataclasses import dataclass

from omegaconf import DictConfig, OmegaConf

from fedlab.errors import FedlabError


def _plain(node) -> dict | list:
    return OmegaConf.to_container(node, resolve=True) if OmegaConf.is_config(node) else node


class Steps:
    """One rich progress bar over the benchmark's steps (a no-op when progress is off)."""

    def __init__(self, console, total: int, enabled: bool):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self._progress = Progress(TextColumn("{task.description:<36}"), BarColumn(), MofNCompleteColumn(),
                                  TimeElapsedColumn(), console=console, disable=not enabled)
        self._task = self._progress.add_task("benchmark", total=total)
        self._started = False

    def __enter__(self):
        self._progress.start()
        return self

    def __exit__(self, *exc):
        self._progress.stop()
        return False

    def __call__(self, description: str) -> None:
        if self._started:
            self._progress.advance(self._task)
        self._started = True
        self._progress.update(self._task, description=description)


def embed_questions(embedder, cache, texts: list[str], console, progress: bool):
    """Query vectors for the question set, through the query cache (the pipeline's own)."""
    import numpy as np
    from rich.progress import track

    from fedlab.pipeline import QueryCachingEmbedder

    cached = QueryCachingEmbedder(embedder, cache)
    rows = track(texts, description="embedding questions", console=console, disable=not progress, transient=True)
    return np.stack([cached.embed_query(t) for t in rows]).astype(np.float32)


def log_to_mlflow(result, params: dict, experiment: str, tracking_uri: str | None = None) -> str:
    """One run: params, a metric per index row and field, the report, the JSON sections, the plot."""
    from fedlab.benchmark.report import figure, markdown
    from fedlab.tracking import Tracker, flatten

    tracker = Tracker(tracking_uri, experiment)
    metrics: dict[str, float] = {}
    for row in result.index_rows():
        metrics.update({f"{row['index']}.{key}": value for key, value in row.items()
                        if isinstance(value, (int, float)) and not isinstance(value, bool)})
    for t in result.throughput:
        metrics[f"throughput.{t.embedder}.passages_per_s"] = t.passages_per_s
        if t.ratio_vs_reference is not None:
            metrics[f"throughput.{t.embedder}.ratio_vs_reference"] = t.ratio_vs_reference
    if result.cold_start:
        metrics.update({f"cold_start.{case}_s": result.cold_start.median(case) for case in result.cold_start.seconds})
    if result.sweep_cost:
        metrics.update(result.sweep_cost.metrics())
    if result.trace_cost:
        metrics.update(result.trace_cost.metrics())
    if result.report_cost:
        metrics.update(result.report_cost.metrics())
    if result.cache:
        metrics.update({"cache.miss_s": result.cache.miss_s, "cache.hit_s": result.cache.hit_s,
                        "cache.miss_over_hit": result.cache.miss_over_hit})
    with tracker.run(name="ann-benchmark", tags={"git_commit": str(result.context.get("git_commit"))}) as run:
        tracker.log_params(flatten(params))
        tracker.log_metrics(metrics)
        tracker.log_text(markdown(result), "ann_benchmark.md")
        tracker.log_text(json.dumps(result.index_rows(), indent=2), "ann_benchmark.json")
        tracker.log_text(json.dumps(result.extra(), indent=2), "bench_extra.json")
        fig = figure(result)
        tracker.log_figure(fig, "recall_vs_latency.png")
        import matplotlib.pyplot as plt

        plt.close(fig)
        return run.info.run_id


@dataclass
class RealData:
    """The corpus's chunk embeddings (through the pipeline's cache) and the embedded questions."""

    corpus: object
    chunker: object
    embedder: object
    chunks: list
    vectors: object  # np.ndarray (n, d)
    queries: object  # np.ndarray (q, d)
    info: object  # BuildInfo


def load_real(cfg: DictConfig, console) -> RealData:
    from hydra.utils import instantiate

    from fedlab.cache import ArtifactCache
    from fedlab.chunking.factory import instantiate_chunker
    from fedlab.dataset.schema import load_dataset
    from fedlab.corpus.snapshot import load_corpus
    from fedlab.pipeline import BuildInfo, chunk_corpus, embed_chunks

    cache = ArtifactCache(cfg.paths.cache_dir)
    corpus = load_corpus(cfg.corpus.dir)
    embedder = instantiate(cfg.embedder)
    chunker = instantiate_chunker(cfg.chunker)
    info = BuildInfo()
    chunks = chunk_corpus(corpus, chunker, embedder, cache, info)
    vectors = embed_chunks(chunks, embedder, cache, info, progress=cfg.progress)
    questions = load_dataset(cfg.dataset)
    queries = embed_questions(embedder, cache, [q.question for q in questions], console, cfg.progress)
    console.print(f"[bold]{len(chunks)}[/] chunks × {vectors.shape[1]} dims "
                  f"(chunks: cache {info.cache['chunks']}, embeddings: cache {info.cache['embeddings']}), "
                  f"{len(queries)} questions")
    return RealData(corpus, chunker, embedder, chunks, vectors, queries, info)


def check_embedder_names(cfg: DictConfig) -> None:
    wanted = [*cfg.throughput.run, *([cfg.cache_timing.embedder] if cfg.cache_timing.enabled else [])]
    unknown = [n for n in wanted if n not in cfg.throughput.embedders]
    if unknown:
        raise FedlabError(f"no embedder config for {unknown} under throughput.embedders "
                          f"(have {', '.join(cfg.throughput.embedders)}): add it to conf/bench.yaml's defaults")


def measure(cfg: DictConfig, real: RealData, console):
    """Run the three benchmarks under one progress bar: (index rows, throughput rows, cache timing)."""
    import numpy as np
    from hydra.utils import instantiate

    from fedlab.benchmark.ann import Dataset, parse_specs, random_unit, run_ann
    from fedlab.benchmark.embedders import measure_embedders, sample_chunks, time_cache
    from fedlab.pipeline import chunk_meta

    specs = parse_specs(_plain(cfg.ann.indexes))
    rng = np.random.default_rng(int(cfg.ann.seed))
    n, dim = real.vectors.shape
    meta = chunk_meta(real.chunks)
    datasets = [Dataset("real", real.vectors, real.queries, meta),
                Dataset("random", random_unit(rng, n, dim), random_unit(rng, int(cfg.ann.random_queries), dim), meta)]
    names = list(cfg.throughput.run)
    rounds = int(cfg.throughput.rounds)
    cache_embedder = cfg.cache_timing.embedder if cfg.cache_timing.enabled else None
    total = len(specs) * len(datasets) + len(names) * rounds + (1 if cache_embedder else 0)
    with Steps(console, total, cfg.progress) as step:
        rows = run_ann(specs, datasets, _plain(cfg.index_bases), k=int(cfg.ann.k), warmup=int(cfg.ann.warmup),
                       repeats=int(cfg.ann.repeats), threads=cfg.ann.threads, step=step)
        embedders = {name: instantiate(cfg.throughput.embedders[name]) for name in names}
        sample = sample_chunks(real.chunks, int(cfg.throughput.passages), int(cfg.throughput.seed))
        passages = {name: int(cfg.throughput.passages_per_embedder.get(name, cfg.throughput.passages))
                    for name in names}
        throughput = measure_embedders(embedders, [c.embed_text for c in sample], passages,
                                       reference=cfg.throughput.reference, rounds=rounds, step=step)
        timing = None
        if cache_embedder:
            step(f"cache miss vs hit: {cache_embedder}")
            subset = sample_chunks(real.chunks, cfg.cache_timing.chunks, int(cfg.cache_timing.seed))
            timing = time_cache(subset, embedders.get(cache_embedder)
                                or instantiate(cfg.throughput.embedders[cache_embedder]))
        step("done")
    return rows, throughput, timing


def cold_ask(cfg: DictConfig, console):
    """The cold-ask section (fedlab.benchmark.cold_start); None when switched off or its config
    cannot be asked (said on the console)."""
    if not cfg.cold_start.enabled:
        return None
    from pathlib import Path

    from fedlab.benchmark.cold_start import measure_cold_start, summary

    console.print(f"cold ask: {int(cfg.cold_start.repeats)} rounds of fresh processes …")
    try:
        result = measure_cold_start(cfg.cold_start, Path(cfg.paths.root_dir))
    except FedlabError as exc:
        console.print(f"cold ask skipped: {exc}")
        return None
    console.print(summary(result))
    return result


def context(cfg: DictConfig, real: RealData, load_start: float) -> dict:
    from fedlab.tracking import git_commit

    n, dim = real.vectors.shape
    return {
        "date": dt.datetime.now().strftime("%Y-%m-%d %H:%M"), "git_commit": git_commit(),
        "corpus_hash": real.corpus.content_hash, "chunker": _chunker_label(cfg),
        "chunker_fingerprint": real.chunker.fingerprint(), "embedder": real.embedder.name,
        "embedder_fingerprint": real.embedder.fingerprint(), "n": int(n), "dim": int(dim),
        "duplicate_rows": duplicate_rows(real.vectors), "real_queries": len(real.queries),
        "random_queries": int(cfg.ann.random_queries), "seed": int(cfg.ann.seed), "warmup": int(cfg.ann.warmup),
        "repeats": int(cfg.ann.repeats), "threads": cfg.ann.threads, "cpu_count": os.cpu_count(),
        "load_start": round(load_start, 2), "load_end": round(os.getloadavg()[0], 2),
        "experiment": cfg.experiment, "throughput_reference": cfg.throughput.reference,
        "throughput_rounds": int(cfg.throughput.rounds),
    }


def print_summary(console, result, reference: str) -> None:
    from fedlab.benchmark.report import rich_table

    console.print(rich_table(result))
    for t in result.throughput:
        ratio = "" if t.ratio_vs_reference is None else f" ({t.ratio_vs_reference:.2f}× {reference})"
        console.print(f"throughput {t.embedder}: {t.passages_per_s:.1f} passages/s on {t.passages}{ratio}")
    c = result.cache
    if c:
        console.print(f"cache ({c.embedder}, {c.chunks} chunks): miss {c.miss_s:.2f} s, "
                      f"hit {c.hit_s * 1000:.1f} ms → {c.miss_over_hit:,.0f}× ({'/'.join(c.outcomes)})")


def run(cfg: DictConfig) -> BenchResult:
    from rich.console import Console

    from fedlab import io
    from fedlab.benchmark.report import BenchResult, markdown, write_json_outputs

    console = Console(stderr=True)
    load_start = os.getloadavg()[0]
    check_embedder_names(cfg)
    real = load_real(cfg, console)
    rows, throughput, timing = measure(cfg, real, console)
    cold = cold_ask(cfg, console)
    ctx = context(cfg, real, load_start)
    result = BenchResult(ctx, rows, throughput, timing, k=int(cfg.ann.k), cold_start=cold,
                         sweep_cost=sweep_cost(cfg, console), trace_cost=trace_cost(cfg, console),
                         report_cost=report_cost(cfg, console))
    io.write_text(cfg.report, markdown(result))
    print_summary(console, result, cfg.throughput.reference)
    console.print(f"report: {cfg.report}")
    bench_out = os.environ.get("BENCH_OUT")
    if bench_out:
        rows_path, extra = write_json_outputs(bench_out, result)
        console.print(f"JSON: {rows_path} (index rows), {extra} (context, throughput, cache)")
    params = {**{k: ctx[k] for k in ("corpus_hash", "chunker", "chunker_fingerprint", "embedder",
                                     "embedder_fingerprint", "n", "dim", "real_queries", "git_commit")},
              "chunker_cfg": _plain(cfg.chunker), "embedder_cfg": _plain(cfg.embedder),
              "ann": {k: v for k, v in _plain(cfg.ann).items() if k != "indexes"}}
    run_id = log_to_mlflow(result, params, cfg.experiment)
    console.print(f"MLflow run {run_id} (experiment {cfg.experiment})")
    return result


def report_cost(cfg: DictConfig, console):
    """The report-cost section (fedlab.benchmark.report_cost); None when off."""
    rc = cfg.get("report_cost")
    if not rc or not rc.enabled:
        return None
    from fedlab.benchmark.report_cost import measure_report_cost

    names = list(rc.sets) if rc.sets else None
    console.print(f"report cost: {', '.join(names) if names else 'every dev and heldout set'} …")
    result = measure_report_cost(str(rc.config), names, list(rc.args or []), bool(rc.baseline))
    console.print(f"report: {result.report_wall_s:.1f} s for {result.n_questions} questions"
                  + (f" ({result.ratio:.2f}x one process per set)" if result.ratio is not None else ""))
    return result


def sweep_cost(cfg: DictConfig, console):
    """The sweep-cost section (fedlab.benchmark.sweep_cost): a study cold and warm; None when off."""
    sc = cfg.get("sweep_cost")
    if not sc or not sc.enabled:
        return None
    from fedlab.benchmark.sweep_cost import measure_sweep_cost

    console.print(f"sweep cost: study {sc.study!r}, cold then warm (subprocesses; log lines in their logs)")
    result = measure_sweep_cost(str(sc.study), cfg.corpus.dir, cfg.paths.data_dir, list(sc.args or []),
                                keep=sc.keep)
    console.print(f"sweep cost ({result.study}, {result.n_configs} configs): cold {result.cold_wall_s:.0f} s, "
                  f"warm {result.warm_wall_s:.0f} s, unique artifacts {result.unique_build_s:.0f} s, per config "
                  f"{result.per_config_cold_s:.2f} s cold / {result.per_config_warm_s:.2f} s warm, ratio "
                  f"{'-' if result.ratio is None else f'{result.ratio:.2f}'}")
    return result


def trace_cost(cfg: DictConfig, console):
    """The tracing-cost section (fedlab.benchmark.trace_cost): an evaluation with every question
    traced vs none; None when off, or when its config cannot be evaluated (said on the console)."""
    tc = cfg.get("trace_cost")
    if not tc or not tc.enabled:
        return None
    from fedlab.benchmark.trace_cost import TARGET, measure_trace_cost
    from fedlab.config import CONF_DIR

    config = str(tc.config)
    if not (CONF_DIR / f"{config}.yaml").is_file():
        console.print(f"trace cost skipped: conf/{config}.yaml does not exist (run `make export`, or "
                      "BENCH_ARGS='trace_cost.config=evaluate')")
        return None
    console.print(f"trace cost: {config} evaluated with eval.traces=off and all, {int(tc.repeats)} rounds "
                  "(subprocesses; log lines in their logs)")
    result = measure_trace_cost(config, int(tc.repeats), list(tc.args or []), keep=tc.keep)
    verdict = "within" if result.overhead <= TARGET else "over"
    console.print(f"trace cost ({result.config}, {result.n_questions} questions): off {result.median('off'):.1f} s, "
                  f"all {result.median('all'):.1f} s → {result.overhead:+.1%} ({verdict} the {TARGET:.0%} target)"
                  + ("" if result.cpu_ratio is None else f"; CPU all / off {result.cpu_ratio:.3f}"))
    return result


def duplicate_rows(vectors) -> int:
    """Rows whose vector equals an earlier row's (boilerplate passages repeated across documents)."""
    import numpy as np

    return int(len(vectors) - len(np.unique(vectors.round(5), axis=0)))


def _chunker_label(cfg: DictConfig) -> str:
    target = str(cfg.chunker.get("_target_", "?")).rsplit(".", 1)[-1]
    fields = ", ".join(f"{k}={v}" for k, v in cfg.chunker.items() if k != "_target_")
    return f"{target}({fields})"

"""The benchmark's core on small data: row contract, exact reference, outputs, cache hit path."""
from __future__ import annotations

import json
import math
import sys

import numpy as np
import pytest
from hydra import compose, initialize_config_dir
from hydra.utils import instantiate
from omegaconf import OmegaConf

from fedlab import io
from fedlab.benchmark.ann import Dataset, IndexSpec, parse_specs, random_unit, resolve_param, run_ann
from fedlab.benchmark.embedders import measure_embedders, sample_chunks, time_cache
from fedlab.benchmark.report import BenchResult, extra_path, markdown, write_json_outputs
from fedlab.chunking.chunk import Chunk
from fedlab.config import CONF_DIR
from fedlab.errors import FedlabError

CONTRACT = ("index", "params", "recall@5_real", "recall@5_random", "latency_ms_avg", "latency_ms_p99",
            "latency_ratio_vs_exact", "build_s", "size_kb")
N, DIM, NQ = 1000, 384, 40
SPECS = [
    IndexSpec("exact", "exact"),
    IndexSpec("hnsw_M16_ef32", "faiss_hnsw", {"M": 16, "efSearch": 32}),
    IndexSpec("hnsw_M16_ef64", "faiss_hnsw", {"M": 16, "efSearch": 64}),
    IndexSpec("ivf_sqrt_nprobe1", "faiss_ivf", {"nlist": "sqrt(n)", "nprobe": 1, "min_points_per_list": 8}),
    IndexSpec("ivf_sqrt_all", "faiss_ivf", {"nlist": "sqrt(n)", "nprobe": "all", "min_points_per_list": 8}),
    IndexSpec("hnswlib_M16_ef50", "hnswlib", {"M": 16, "ef": 50}),
    IndexSpec("chroma", "chroma"),
]
FOMC = [
    "The Committee decided to maintain the target range for the federal funds rate at 5-1/4 to 5-1/2 percent.",
    "Inflation has eased over the past year but remains elevated.",
    "Job gains have moderated since early last year but remain strong, and the unemployment rate has remained low.",
    "Participants noted that the economic outlook is uncertain.",
    "The Committee will continue reducing its holdings of Treasury securities and agency debt.",
]


@pytest.fixture(scope="module")
def cfg():
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose(config_name="bench")


@pytest.fixture(scope="module")
def ann_rows(cfg):
    rng = np.random.default_rng(3)
    centers = random_unit(rng, 30, DIM)
    def clustered(n):  # sentence embeddings cluster by topic
        x = centers[rng.integers(0, 30, n)] + rng.standard_normal((n, DIM)).astype(np.float32) * 0.08
        return x / np.linalg.norm(x, axis=1, keepdims=True)
    meta = [{"meeting_date": "2024-01-31", "doc_type": "statement"}] * N
    datasets = [Dataset("real", clustered(N), clustered(NQ), meta),
                Dataset("random", random_unit(rng, N, DIM), random_unit(rng, NQ, DIM), meta)]
    bases = OmegaConf.to_container(cfg.index_bases, resolve=True)
    steps = []
    rows = run_ann(SPECS, datasets, bases, k=5, warmup=2, repeats=1, step=steps.append)
    assert len(steps) == len(SPECS) * 2
    return rows


@pytest.fixture(scope="module")
def embedder_results(cfg):
    texts = [f"{s} ({i})" for i in range(4) for s in FOMC]  # 20 distinct chunks
    chunks = [Chunk(f"c{i}", "statement-2024-01-31", "statement", "2024-01-31", None, 0, len(t), t, t)
              for i, t in enumerate(texts)]
    embedder = instantiate(cfg.throughput.embedders.paraphrase_minilm_l3)
    throughput = measure_embedders({"paraphrase_minilm_l3": embedder}, texts, {"paraphrase_minilm_l3": 12},
                                   reference="paraphrase_minilm_l3", rounds=2)
    return throughput, time_cache(sample_chunks(chunks, None, 0), embedder)


def test_config_composes(cfg):
    specs = parse_specs(OmegaConf.to_container(cfg.ann.indexes, resolve=True))
    assert specs[0].kind == "exact" and {s.kind for s in specs} <= set(cfg.index_bases)
    assert set(cfg.throughput.run) <= set(cfg.throughput.embedders)
    assert cfg.cache_timing.embedder in cfg.throughput.embedders


def test_spec_errors_and_params():
    assert resolve_param("sqrt(n)", 1545) == 39
    assert resolve_param("4*sqrt(n)", 1545) == 157
    assert resolve_param(8, 1545) == 8 and resolve_param("all", 10) == "all"
    with pytest.raises(FedlabError, match="exact"):
        parse_specs([{"name": "h", "kind": "faiss_hnsw"}])
    with pytest.raises(FedlabError, match="duplicate"):
        parse_specs([{"name": "e", "kind": "exact"}, {"name": "e", "kind": "exact"}])


def test_rows_contract(ann_rows):
    rows = [r.to_json(5) for r in ann_rows]
    assert [r["index"] for r in rows] == [s.name for s in SPECS]
    for row in rows:
        assert set(CONTRACT) <= set(row)
        for key in ("recall@5_real", "recall@5_random"):
            assert 0.0 <= row[key] <= 1.0
        for key in ("latency_ms_avg", "latency_ms_p99", "latency_ratio_vs_exact", "build_s", "size_kb"):
            assert row[key] > 0 and math.isfinite(row[key])
        assert isinstance(row["params"], dict)
    exact = rows[0]
    assert exact["recall@5_real"] == 1.0 and exact["recall@5_random"] == 1.0
    assert exact["latency_ratio_vs_exact"] == 1.0 and exact["latency_ratio_vs_exact_random"] == 1.0
    assert exact["miss_gap_real"] == 0.0 and all(r["miss_gap_random"] >= 0 for r in rows)


def test_search_params_share_one_build(ann_rows):
    by = {r.index: r for r in ann_rows}
    ef32, ef64 = by["hnsw_M16_ef32"], by["hnsw_M16_ef64"]
    assert ef32.params["efSearch"] == 32 and ef64.params["efSearch"] == 64
    assert ef32.by_data["real"].build_s == ef64.by_data["real"].build_s
    probe_all = by["ivf_sqrt_all"]
    assert probe_all.params["nlist"] == round(math.sqrt(N))
    assert probe_all.params["nprobe"] == probe_all.params.get("nlist_effective", probe_all.params["nlist"])
    assert by["ivf_sqrt_nprobe1"].params["nprobe"] == 1
    for label in ("real", "random"):  # probing every list is exhaustive search
        assert probe_all.by_data[label].recall == 1.0
    assert by["ivf_sqrt_nprobe1"].by_data["random"].recall < 1.0


def test_cache_timing_is_a_real_hit(embedder_results):
    throughput, timing = embedder_results
    assert timing.outcomes == ["miss", "hit"]
    assert timing.stats == {"embeddings.hit": 1, "embeddings.miss": 1}
    assert timing.identical and timing.chunks == 20
    assert timing.miss_s > 0 and timing.hit_s > 0
    (t,) = throughput
    assert t.passages == 12 and t.passages_per_s > 0 and t.ratio_vs_reference == 1.0


def test_reports_written(ann_rows, embedder_results, tmp_path):
    throughput, timing = embedder_results
    ctx = {"n": N, "dim": DIM, "cpu_count": 2, "load_start": 0.1, "load_end": 0.2}
    result = BenchResult(ctx, ann_rows, throughput, timing, k=5)
    report = tmp_path / "ann_benchmark.md"
    io.write_text(report, markdown(result))
    text = report.read_text()
    assert "| index |" in text and "hnsw_M16_ef32" in text and "make bench" in text
    assert "miss / hit" in text and "paraphrase_minilm_l3" in text
    out = tmp_path / "bench.json"
    rows_path, extra = write_json_outputs(out, result)
    assert extra == extra_path(out) == tmp_path / "bench.extra.json"
    rows = json.loads(rows_path.read_text())
    assert isinstance(rows, list) and len(rows) == len(SPECS)
    assert all(set(CONTRACT) <= set(r) for r in rows)
    sections = json.loads(extra.read_text())
    assert sections["cache"]["outcomes"] == ["miss", "hit"]
    assert sections["throughput"][0]["embedder"] == "paraphrase_minilm_l3"


def test_mlflow_logging(ann_rows, embedder_results, tmp_path, monkeypatch):
    from mlflow.tracking import MlflowClient

    from fedlab.benchmark.run import log_to_mlflow

    monkeypatch.chdir(tmp_path)  # a sqlite store's default artifact root is ./mlruns
    throughput, timing = embedder_results
    result = BenchResult({"n": N, "dim": DIM, "git_commit": "test"}, ann_rows, throughput, timing, k=5)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    run_id = log_to_mlflow(result, {"n": N, "dim": DIM, "corpus_hash": "x"}, "fedlab-bench-test", uri)
    run = MlflowClient(tracking_uri=uri).get_run(run_id)
    assert 0.0 <= run.data.metrics["hnsw_M16_ef64.recall_at_5_real"] <= 1.0
    assert run.data.metrics["exact.latency_ratio_vs_exact"] == 1.0
    assert run.data.params["corpus_hash"] == "x"
    artifacts = {a.path for a in MlflowClient(tracking_uri=uri).list_artifacts(run_id)}
    assert {"ann_benchmark.md", "ann_benchmark.json", "recall_vs_latency.png"} <= artifacts


def test_cold_start_asks_new_questions_and_reports_the_floor(cfg, tmp_path):
    """The cold-ask section with a recorded runner (fresh processes are the benchmark's, not a test's):
    every round asks a question not asked before, the repeated one is the warmed-up one, and the
    report divides by the import floor."""
    from fedlab.benchmark.cold_start import CASES, measure_cold_start, timed_run
    from fedlab.benchmark.report import cold_start_section

    node = OmegaConf.merge(cfg.cold_start, {"repeats": 3})
    ran, cached = [], set()
    seconds = {"import sentence_transformers, torch, dspy, faiss": 8.0, "import fedlab.ask": 0.5}

    def run(cmd, cwd):
        ran.append(cmd)
        if "fedlab.ask" in cmd and "-m" in cmd:
            cached.add(cmd[-1])
            return 2.0
        return seconds[cmd[-1]]

    result = measure_cold_start(node, tmp_path, run=run, cached=cached.__contains__)
    asked = [cmd[-1] for cmd in ran if "-m" in cmd]
    new = [q for q in asked if q != node.question]
    assert asked[0] == node.question and len(new) == len(set(new)) == 3
    assert result.new_misses == result.new_asked == 3
    assert set(result.seconds) == set(CASES) and all(len(v) == 3 for v in result.seconds.values())
    assert result.median("floor") == 8.0 and result.ratio("new") == 0.25
    text = "\n".join(cold_start_section(result))
    assert "## Cold ask" in text and "| new question |" in text and "0.25" in text
    assert BenchResult({}, [], cold_start=result).extra()["cold_start"]["median_s"]["import"] == 0.5
    assert timed_run([sys.executable, "-c", "pass"], tmp_path) > 0
    with pytest.raises(FedlabError, match="exited 3"):
        timed_run([sys.executable, "-c", "import sys; sys.exit(3)"], tmp_path)


# -- sweep cost: a real study, cold then warm, in subprocesses; its log shows where it is --------

def test_sweep_cost_cold_and_warm_and_the_log_says_config_i_of_n(corpus_dir, tmp_path):
    from fedlab.benchmark.report import sweep_cost_section
    from fedlab.benchmark.sweep_cost import measure_sweep_cost

    work = tmp_path / "work"
    # the smoke study with BM25 pinned and date-aware search varied: 2 configs, no corpus embedding
    cost = measure_sweep_cost("smoke", corpus_dir, corpus_dir.parent.parent,
                              ["retriever=bm25", "retriever.date_aware=true,false"], keep=work)
    assert cost.n_configs == 2
    assert cost.unique_build_s > 0  # the cold sweep chunked the corpus and built BM25
    assert cost.cold_wall_s > cost.unique_build_s and cost.warm_wall_s > 0
    assert cost.per_config_cold_s == pytest.approx((cost.cold_wall_s - cost.unique_build_s) / 2)
    assert cost.ratio == pytest.approx(cost.cold_wall_s / cost.unique_build_s)
    # the cold sweep's stderr went to a file (not a terminal): it says where the sweep is
    for label in ("cold", "warm"):
        log = (work / f"{label}.log").read_text()
        assert "config 1 of 2: retriever.date_aware=True (" in log and "config 2 of 2: retriever.date_aware=False (" in log
    assert "building BM25 index over" in (work / "cold.log").read_text()
    assert "building BM25 index over" not in (work / "warm.log").read_text()
    # and so does each job's own log file
    assert "config 2 of 2" in (work / "cold" / "1" / "evaluate.log").read_text()
    section = "\n".join(sweep_cost_section(cost))
    assert "## Sweep cost" in section and f"| smoke | 2 | {cost.cold_wall_s:.1f} |" in section
    assert set(cost.metrics()) >= {"sweep_cost.ratio", "sweep_cost.unique_build_s", "sweep_cost.per_config_warm_s"}


def test_report_cost_section_states_the_ratio_and_the_per_question_time():
    from fedlab.benchmark.report import report_cost_section
    from fedlab.benchmark.report_cost import ReportCost

    cost = ReportCost(["fresh_dev3", "fresh_dev4_b"], 104, report_wall_s=52.0, separate_wall_s=80.0, command="x")
    assert cost.ratio == pytest.approx(0.65) and cost.per_question_s == pytest.approx(0.5)
    text = "\n".join(report_cost_section(cost))
    assert "104 questions" in text and "0.65×" in text
    assert set(cost.metrics()) >= {"report_cost.ratio", "report_cost.report_wall_s", "report_cost.per_question_s"}
    alone = ReportCost(["x"], 10, 5.0, None, "x")
    assert alone.ratio is None and "×" not in "\n".join(report_cost_section(alone))

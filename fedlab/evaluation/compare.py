"""Comparing two evaluated runs with paired significance tests (``python -m fedlab.compare``).

A run is a local directory or an MLflow run id (tracking store: MLFLOW_TRACKING_URI, default
``sqlite:///<project root>/mlflow.db``). Either way the run provides:

    per_question.jsonl   one object per question: "id" and the metric names (required)
    trec/run.trec        TREC run   (optional; with trec/qrels.trec enables ranx.compare)
    trec/qrels.trec      TREC qrels
    agent_answers.jsonl  the agent's judged answers (optional; a run evaluated with an agent)

Metric keys may be the fedlab names (``recall@5``) or their MLflow forms (``recall_at_5``).
Which test route a retrieval metric takes is described in ``fedlab.evaluation.retrieval.significance``.
The agent's measures that are means over questions (``answer_accuracy``, ``abstention_accuracy``,
``false_abstention_rate``, ``correctness``, ``brier``: fedlab.evaluation.answers.measures.question_scores)
are tested question by question like them; ``auroc``, ``ece`` and ``coverage@precision0.9`` by a
paired bootstrap (fedlab.evaluation.answers.significance).
"""
from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path
from typing import Sequence

from fedlab import env as _env  # noqa: F401  (telemetry off before mlflow is imported)
from fedlab.errors import FedlabError

PER_QUESTION = "per_question.jsonl"
TREC_RUN = "trec/run.trec"
TREC_QRELS = "trec/qrels.trec"
AGENT_ANSWERS = "agent_answers.jsonl"
DEFAULT_METRICS = ("recall@5", "mrr@10", "ndcg@10")


def _check_store(uri: str) -> None:
    """Refuse a sqlite URI whose file is missing: MLflow would silently create a new store."""
    if uri.startswith("sqlite:///"):
        path = Path(uri[len("sqlite:///"):])
        if not path.is_file():
            raise FedlabError(f"no MLflow store at {path} (set MLFLOW_TRACKING_URI, or pass a run directory)")


def _looks_like_path(spec: str) -> bool:
    return os.sep in spec or spec.startswith(".") or Path(spec).exists()


def download_run(run_id: str, dest: Path) -> Path:
    """Fetch a run's comparison artifacts from MLflow into ``dest``."""
    from fedlab.tracking import default_tracking_uri

    uri = default_tracking_uri()
    _check_store(uri)
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    import mlflow.artifacts
    from mlflow.exceptions import MlflowException
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    try:
        client.get_run(run_id)
    except MlflowException as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise FedlabError(f"MLflow run {run_id!r} not found in {uri}: {first}") from None
    try:
        names = {a.path for a in client.list_artifacts(run_id)} | {a.path for a in client.list_artifacts(run_id, "trec")}
        if PER_QUESTION not in names:
            raise FedlabError(f"MLflow run {run_id} has no {PER_QUESTION} artifact: was it evaluated?")
        for path in (PER_QUESTION, TREC_RUN, TREC_QRELS, AGENT_ANSWERS):
            if path in names:  # download_artifacts drops the folder: recreate it
                target = (dest / path).parent
                target.mkdir(parents=True, exist_ok=True)
                mlflow.artifacts.download_artifacts(run_id=run_id, artifact_path=path, dst_path=str(target),
                                                    tracking_uri=uri)
    except MlflowException as exc:
        raise FedlabError(f"cannot download artifacts of MLflow run {run_id}: {str(exc).splitlines()[0]}") from None
    return dest


def _jsonl(path: Path) -> list:
    from fedlab.io import read_jsonl

    try:
        return read_jsonl(path)
    except ValueError as exc:
        raise FedlabError(f"{path} is not JSON lines: {exc}") from None


def read_per_question(path: Path) -> dict[str, dict[str, float]]:
    """{qid: {metric: value}} from per_question.jsonl; non-numeric fields are skipped."""
    from fedlab.tracking import metric_from_mlflow_name

    rows = _jsonl(path)
    out: dict[str, dict[str, float]] = {}
    for n, row in enumerate(rows, start=1):
        if not isinstance(row, dict) or not isinstance(row.get("id"), str):
            raise FedlabError(f"{path}: row {n} has no string \"id\"")
        out[row["id"]] = {
            metric_from_mlflow_name(k): float(v) for k, v in row.items()
            if k != "id" and isinstance(v, (int, float)) and not isinstance(v, bool)
        }
    if not out:
        raise FedlabError(f"{path} holds no questions")
    return out


def read_agent_answers(path: Path) -> list[dict]:
    """The judged answers of agent_answers.jsonl, each with "id", "confidence" and "correct"."""
    rows = _jsonl(path)
    for n, row in enumerate(rows, start=1):
        if not isinstance(row, dict) or not isinstance(row.get("id"), str) \
                or not isinstance(row.get("confidence"), (int, float)) or not isinstance(row.get("correct"), bool):
            raise FedlabError(f"{path}: row {n} is not a judged answer (it needs \"id\", \"confidence\" and "
                              "\"correct\"): re-evaluate the run")
    return rows


def outputs_of(rows: list[dict]) -> dict[str, tuple[float, bool]]:
    """{qid: (confidence as reported, correct)}: what the measures of the whole set read."""
    return {row["id"]: (float(row["confidence"]), row["correct"]) for row in rows}


def load_run(directory: Path, name: str, answers: list[dict] | None = None):
    """A ``RunData`` from a directory laid out as the module docstring says; with the run's agent
    answers (read_agent_answers), each question's scores on the agent's per-question measures
    join its metrics."""
    from fedlab.evaluation.answers.measures import question_scores
    from fedlab.evaluation.retrieval.significance import RunData
    from fedlab.evaluation.retrieval.trec import read_qrels, read_run

    pq = directory / PER_QUESTION
    if not pq.is_file():
        raise FedlabError(f"{directory} has no {PER_QUESTION}")
    data = RunData(name=name, per_question=read_per_question(pq))
    if (directory / TREC_RUN).is_file() and (directory / TREC_QRELS).is_file():
        data.qrels = read_qrels(directory / TREC_QRELS)
        data.run = read_run(directory / TREC_RUN)
    for row in answers or ():
        scores = question_scores(bool(row.get("answerable")), bool(row.get("abstained")),
                                 bool(row.get("answer_correct")), row["correct"], row["confidence"])
        data.per_question.setdefault(row["id"], {}).update(scores)
    return data


def resolve(spec: str, scratch: Path) -> Path:
    """A local run directory, or the artifacts of MLflow run ``spec`` downloaded to scratch."""
    path = Path(spec)
    if path.is_dir():
        return path
    if _looks_like_path(spec):
        raise FedlabError(f"{spec} is not a directory (expected a run directory or an MLflow run id)")
    return download_run(spec, scratch)


def compare(spec_a: str, spec_b: str, metrics: Sequence[str] = DEFAULT_METRICS, stat_test: str = "student",
            alpha: float = 0.05, n_permutations: int = 1000):
    """The ``Comparison`` of run B against run A (each a run directory or an MLflow run id) on
    ``metrics``, each of which both runs must have."""
    from fedlab.evaluation.answers.measures import LOWER_IS_BETTER
    from fedlab.evaluation.answers.significance import SET_MEASURES, compare_outputs
    from fedlab.evaluation.retrieval.significance import Comparison, compare_runs

    with tempfile.TemporaryDirectory(prefix="fedlab-compare-") as scratch:
        whole_set = [m for m in metrics if m in SET_MEASURES]
        runs, outputs = [], []
        for label, spec in (("a", spec_a), ("b", spec_b)):
            directory = resolve(spec, Path(scratch) / label)
            answers = read_agent_answers(directory / AGENT_ANSWERS) if (directory / AGENT_ANSWERS).is_file() else None
            run = load_run(directory, spec, answers)
            if whole_set and answers is None:
                raise FedlabError(f"run {run.name} has no {AGENT_ANSWERS} for {whole_set[0]}: evaluate it with "
                                  "an agent (the production config, or agent=default)")
            present = {m for row in run.per_question.values() for m in row}
            unknown = [m for m in metrics if m not in present and m not in SET_MEASURES]
            if unknown:
                raise FedlabError(f"run {run.name} has no metric {unknown[0]} (it has: "
                                  f"{', '.join(sorted(present | (set(SET_MEASURES) if answers is not None else set())))})")
            runs.append(run)
            outputs.append(outputs_of(answers or []))
        per_question = [m for m in metrics if m not in SET_MEASURES]
        if per_question:
            comparison = compare_runs(runs[0], runs[1], per_question, stat_test, alpha, n_permutations, LOWER_IS_BETTER)
        else:
            common = set(outputs[0]) & set(outputs[1])
            comparison = Comparison(spec_a, spec_b, stat_test, alpha, [], sorted(set(outputs[0]) - common),
                                    sorted(set(outputs[1]) - common))
        rows = {r.metric: r for r in comparison.rows}
        if whole_set:
            rows.update({r.metric: r for r in compare_outputs(outputs[0], outputs[1], whole_set, alpha, n_permutations)})
        comparison.rows = [rows[m] for m in metrics]
        return comparison


# -- rendering ------------------------------------------------------------------------------------
def _fmt_p(p: float, n_permutations: int, stat_test: str) -> str:
    if p == 0.0:  # fisher / bootstrap: no shuffle or resample as extreme; student: underflow
        return f"<{1 / n_permutations:.0e}" if stat_test in ("fisher", "bootstrap") else "<1e-99"
    return "nan" if math.isnan(p) else f"{p:.4f}" if p >= 1e-4 else f"{p:.0e}"


def render(comparison, n_permutations: int, console) -> None:
    from rich import box
    from rich.table import Table

    c = comparison
    console.print(f"A = {c.name_a}\nB = {c.name_b}\n{c.stat_test} test, alpha {c.alpha:g}")
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for col, justify in (("metric", "left"), ("A", "right"), ("B", "right"), ("B-A", "right"), ("p", "right"),
                         ("sig", "center"), ("B>A/=/A>B", "right"), ("n", "right"), ("route", "left")):
        table.add_column(col, justify=justify, no_wrap=True)
    for r in c.rows:
        sig = {"B": "[bold green]B[/]", "A": "[bold red]A[/]"}.get(r.better or "", "no")
        wins = "—" if r.wins_b is None else f"{r.wins_b}/{r.ties}/{r.wins_a}"
        test = "bootstrap" if r.route == "boot" else c.stat_test
        table.add_row(r.metric + (" ↓" if r.lower_is_better else ""), f"{r.mean_a:.3f}", f"{r.mean_b:.3f}",
                      f"{r.delta:+.3f}", _fmt_p(r.p_value, n_permutations, test), sig, wins, str(r.n_questions), r.route)
    console.print(table)
    console.print("sig: the better run when p <= alpha (↓: lower is better); B>A/=/A>B: questions each run did "
                  "better on; route: ranx = ranx.compare on the TREC files, per-q = per-question scores, "
                  "boot = paired bootstrap of a measure of the whole set")
    for who, missing in (("A", c.only_a), ("B", c.only_b)):
        if missing:
            console.print(f"{len(missing)} question(s) only in {who} left out, e.g. {missing[0]}")

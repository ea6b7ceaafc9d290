"""Run a question set through a pipeline and measure it (no MLflow here: see fedlab.tracking)."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from fedlab import spans
from fedlab.cache import content_key
from fedlab.dataset.schema import Question, load_dataset
from fedlab.errors import FedlabError
from fedlab.evaluation.assessments import expectations, retrieval_measures, search_measures
from fedlab.evaluation.retrieval.latency import latency_summary
from fedlab.evaluation.retrieval.metrics import evaluate_retrieval
from fedlab.evaluation.retrieval.relevance import check_relevance, resolve_evidence
from fedlab.memo import remember
from fedlab.progress import progress as progress_of

SPLITS = ("dev", "test", "all")


@dataclass
class EvalOutcome:
    metrics: dict[str, float]  # retrieval metrics (recall@5, …), latency, counts
    per_question: list[dict]
    qrels: dict[str, dict[str, int]]
    run: dict[str, list[str]]
    unreachable: list[str] = field(default_factory=list)
    relevance: str = "meeting"  # the relevance rule the metrics and qrels were judged by (eval.relevance)


def dataset_hash(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def load_split(path: str | Path, split: str, ids: str | None = None) -> list[Question]:
    """The questions of ``split`` (dev, test or all) in ``path``; with ``ids`` (``dataset.ids``, a
    regular expression matched at an id's start) only those whose id it matches."""
    from fedlab.dataset.registry import select_ids

    if split not in SPLITS:
        raise FedlabError(f"dataset.split={split!r}: use one of {', '.join(SPLITS)}")
    if not Path(path).is_file():
        raise FedlabError(f"dataset.path={path} does not exist: point it at a JSONL file in the fomc_qa schema")
    questions = check_unique_ids(load_dataset(path), path)
    chosen = questions if split == "all" else [q for q in questions if q.split == split]
    if not chosen:
        raise FedlabError(f"{path} has no questions in split {split!r}: choose another dataset.split")
    return select_ids(chosen, ids, path)


def load_questions(dataset) -> tuple[list[Question], str]:
    """(questions, version hash) of a ``dataset`` config node: its file's split (and ``ids``), or,
    for a pool (``members: [name, ...]``), every member set's questions in order."""
    members = dataset.get("members")
    if not members:
        return load_split(dataset.path, dataset.split, dataset.get("ids")), dataset_hash(dataset.path)
    from fedlab.dataset.registry import registered

    questions, parts, seen = [], [], set()
    for name in members:
        member = registered(str(name))
        chosen = load_split(member.path, member.split, member.ids)
        clash = sorted({q.id for q in chosen} & seen)
        if clash:
            raise FedlabError(f"dataset {dataset.get('name')}: members repeat question ids ({', '.join(clash[:3])}): "
                              "list each set once")
        seen |= {q.id for q in chosen}
        questions += chosen
        parts.append(f"{name}:{dataset_hash(member.path)}:{member.split}:{member.ids or ''}")
    return questions, hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def check_unique_ids(questions: list[Question], path: str | Path) -> list[Question]:
    """``questions``, refused in one line when two share an id: results are kept by id, so one of
    them would silently drop out of the metrics (``dataset validate`` reports every duplicate)."""
    first: dict[str, int] = {}
    for q in questions:
        if q.id in first:
            raise FedlabError(f"{path}: question id {q.id!r} is used on line {first[q.id]} and again on line {q.line}: "
                              "give each question its own id (python -m fedlab.dataset validate "
                              f"{path} lists every duplicate)")
        first[q.id] = q.line
    return questions


QUERY_TIMINGS = ("per_sweep", "per_run")


def check_query_timing(value) -> None:
    if value not in QUERY_TIMINGS:
        raise FedlabError(f"eval.query_timing={value!r}: use one of {', '.join(QUERY_TIMINGS)}")


def evidence_for(questions: list[Question], corpus, relevance: str) -> dict:
    """``resolve_evidence`` of the questions in the corpus, remembered for the process
    (fedlab.memo): the configs of a sweep locate the same quotes in the same documents."""
    key = content_key("evidence", relevance, corpus.content_hash,
                      [(q.id, q.answerable, [(e.doc_id, e.quote) for e in q.evidence]) for q in questions])
    return dict(remember("evidence", key, lambda: resolve_evidence(questions, corpus.by_id, relevance=relevance)))


def evaluate_pipeline(pipeline, questions: list[Question], progress: bool = True,
                      console: Console | None = None, relevance: str = "meeting",
                      query_timing: str = "per_run") -> EvalOutcome:
    """Every question is searched (latency covers all); retrieval metrics cover answerable ones.

    ``relevance`` (``eval.relevance``): ``meeting`` counts a chunk of any document of the
    evidence's meeting that holds the quote, ``document`` only the evidence's own document
    (see ``fedlab.evaluation.retrieval.relevance``); the qrels follow the same rule.
    ``query_timing`` (``eval.query_timing``): ``per_run`` times the embedding model on every
    query in this run; ``per_sweep`` once per query and embedder in the process, so the configs
    of a sweep share that measurement (see ``fedlab.pipeline.QueryCachingEmbedder``).
    """
    check_relevance(relevance)
    check_query_timing(query_timing)
    evidence = evidence_for(questions, pipeline.corpus, relevance)
    # the model loads before the clock runs, then times every query
    pipeline.measure_latency(share_timings=query_timing == "per_sweep")
    results = {}
    with progress_of("evaluating", len(questions), unit="questions", enabled=progress, console=console) as advance:
        for q in questions:
            # a retrieval-only run's trace (fedlab.spans; recorded when a tracer is installed): the search alone
            with spans.question(q.id, q.question, kind="RETRIEVER", name="search") as root:
                results[q.id] = pipeline.search(q.question)
                if root.recording:
                    root.retrieved(results[q.id])
                    root.expect(expectations(q))
                    root.assess(retrieval_measures(search_measures(results[q.id].hits, evidence.get(q.id, ()))))
            advance()
    spans.release()  # every search is timed: the traces may be written now
    evaluation = evaluate_retrieval(evidence, {qid: results[qid].hits for qid in evidence}, pipeline.chunks)
    metrics = dict(evaluation.metrics)
    metrics.update(latency_summary(r.timings for r in results.values()))
    metrics["n_questions"] = float(len(questions))
    metrics["n_answerable"] = float(len(evidence))
    metrics["n_unreachable"] = float(len(evaluation.unreachable))
    scored = {r.id: r for r in evaluation.per_question}
    rows = []
    for q in questions:
        res = results[q.id]
        row = {
            "id": q.id, "question": q.question, "category": q.category, "split": q.split,
            "answerable": q.answerable,
            "hint": None if res.hint is None else [res.hint.date_from, res.hint.date_to, res.hint.scope],
            "k_used": res.k_used,
            "retrieved": [h.chunk.chunk_id for h in res.hits],
            "timings_ms": {k: round(v, 3) for k, v in res.timings.items()},
        }
        if q.id in scored:
            row["first_relevant_rank"] = scored[q.id].first_relevant_rank
            row.update(scored[q.id].metrics)
        rows.append(row)
    metrics.update(by_category(rows))
    return EvalOutcome(metrics, rows, evaluation.qrels, evaluation.run, list(evaluation.unreachable), relevance)


CATEGORY_METRICS = ("recall@5", "recall@10", "mrr@10", "meeting_recall@5", "doc_recall@5")


def by_category(rows: list[dict]) -> dict[str, float]:
    """``<metric>.<category>`` (e.g. ``recall@10.temporal``): the headline metrics averaged over
    each category's answerable questions, so a sweep shows where a change helps or hurts."""
    groups: dict[str, list[dict]] = {}
    for row in rows:
        if "recall@5" in row:  # answerable, scored
            groups.setdefault(row["category"], []).append(row)
    return {f"{m}.{cat}": sum(float(r[m]) for r in members) / len(members)
            for cat, members in sorted(groups.items()) for m in CATEGORY_METRICS if m in members[0]}

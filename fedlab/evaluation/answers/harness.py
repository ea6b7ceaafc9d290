"""Run the agent over a question set and measure its answers (no MLflow here).

The answers are judged against the pipeline that served the retrieval metrics: its corpus
locates the evidence quotes, its chunks give each citation's span, and its embedder (when it
has one) scores ``support``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from rich.console import Console

from fedlab import spans
from fedlab.agent.types import AgentAnswer
from fedlab.dataset.schema import Question
from fedlab.evaluation.answers.calibration import ReliabilityBin, reliability_bins
from fedlab.evaluation.answers.measures import judge_answer, summarize
from fedlab.evaluation.answers.selective import COVERAGE_METRIC, RiskPoint, risk_coverage
from fedlab.evaluation.answers.support import score_answers
from fedlab.evaluation.assessments import answer_measures, expectations
from fedlab.evaluation.record import QuestionRecord
from fedlab.evaluation.retrieval.relevance import covers, resolve_evidence
from fedlab.progress import progress as progress_of


@dataclass
class AgentOutcome:
    metrics: dict[str, float]
    rows: list[dict]  # one per question: agent_answers.jsonl
    results: list[QuestionRecord]
    curves: dict[str, list[ReliabilityBin]] = field(default_factory=dict)  # "raw" / "reported"
    risk_coverage: dict[str, list[RiskPoint]] = field(default_factory=dict)  # "raw" / "reported"


def run_agent(answer: Callable[[str], AgentAnswer], questions: Sequence[Question], progress: bool = True,
              console: Console | None = None,
              assess: Callable[[Question, AgentAnswer], list] | None = None) -> list[AgentAnswer]:
    """``answer(question text)`` for every question, in order. Each is a trace of its own when a
    tracer is installed (fedlab.spans): the answer as its outputs, the question set's answer key
    as its expectations and ``assess(question, answer)`` (fedlab.evaluation.assessments) as its
    feedback."""
    out = []
    with progress_of("agent answering", len(questions), "questions", progress, console=console) as advance:
        for q in questions:
            with spans.question(q.id, q.question) as root:
                a = answer(q.question)
                if root.recording:
                    root.set_outputs(a.outputs())
                    root.expect(expectations(q))
                    if assess is not None:
                        root.assess(assess(q, a))
            out.append(a)
            advance()
    return out


def said_once(answer: Callable[[str], AgentAnswer]) -> Callable[[str], AgentAnswer]:
    """``answer``, each distinct backend failure (an ``lm_failed`` abstention) logged once as a
    warning: a dead server is one line, and an abstention per question."""
    import logging

    seen: set[str] = set()

    def answering(question: str) -> AgentAnswer:
        a = answer(question)
        if a.abstain_reason == "lm_failed" and a.answer not in seen:
            seen.add(a.answer)
            logging.getLogger(__name__).warning("%s (each question it fails is an abstention)", a.answer)
        return a

    return answering


def trace_assessor(questions: Sequence[Question], pipeline,
                   retrieval: Sequence[dict] | None = None) -> Callable[[Question, AgentAnswer], list] | None:
    """``assess`` for run_agent: judge_answer's measures of one answer (as evaluate_answers
    judges it) and the question's retrieval measures from the run's ``retrieval`` rows
    (per_question.jsonl); None when no tracer is installed."""
    if spans.installed() is None:
        return None
    evidence = resolve_evidence(questions, pipeline.corpus.by_id)
    chunks_by_id = {c.chunk_id: c for c in pipeline.chunks}
    by_id = {row["id"]: row for row in retrieval or ()}

    def assess(q: Question, a: AgentAnswer) -> list:
        return answer_measures(q, a, judge_answer(q, a, evidence.get(q.id, ()), chunks_by_id), by_id.get(q.id))

    return assess


def known_vectors(pipeline) -> dict | None:
    """The vectors ``support`` may reuse for ``pipeline``'s embedder, remembered for the process
    (fedlab.memo): its chunks' vectors in the index, then every sentence embedded since — the
    sets of a report, the configs of a sweep and reworded questions repeat answers."""
    from fedlab import memo

    embedder = getattr(pipeline, "embedder", None)
    if embedder is None or not hasattr(embedder, "fingerprint"):
        return None
    passages = getattr(pipeline, "passage_vectors", None)
    return memo.remember("support_vectors", (pipeline.corpus.content_hash, embedder.fingerprint()),
                         lambda: dict(passages()) if passages else {})


def evaluate_answers(questions: Sequence[Question], answers: Sequence[AgentAnswer], pipeline,
                     judge: Any = None, judge_concurrency: int = 4) -> AgentOutcome:
    """Every measure of ``fedlab.evaluation.answers.measures`` plus support and, with a judge, faithfulness.

    ``judge`` is a ragas LLM (``faithfulness.build_judge``) or None.
    """
    evidence = resolve_evidence(questions, pipeline.corpus.by_id)
    chunks_by_id = {c.chunk_id: c for c in pipeline.chunks}
    results = [judge_answer(q, a, evidence.get(q.id, ()), chunks_by_id) for q, a in zip(questions, answers)]
    supports = score_answers(answers, getattr(pipeline, "embedder", None), known=known_vectors(pipeline))
    for r, s in zip(results, supports):
        r.support = s.score
    judged = None
    if judge is not None:
        from fedlab.evaluation.answers.faithfulness import judge_faithfulness

        judged = judge_faithfulness(judge, [(q.id, q.question, a) for q, a in zip(questions, answers)],
                                    judge_concurrency)
        for r in results:
            r.faithfulness = (judged or {}).get(r.id)
    metrics = summarize(results, answers)
    if judged is not None:
        metrics["faithfulness_judged"] = float(len(judged))
    correct = [r.correct for r in results]
    curves = {"raw": reliability_bins([r.raw_confidence for r in results], correct),
              "reported": reliability_bins([r.confidence for r in results], correct)}
    selective = {"raw": risk_coverage([r.raw_confidence for r in results], correct),
                 "reported": risk_coverage([r.confidence for r in results], correct)}
    rows = [_row(q, a, r, s, evidence.get(q.id, ()), chunks_by_id)
            for q, a, r, s in zip(questions, answers, results, supports)]
    return AgentOutcome(metrics, rows, results, curves, selective)


def _row(q: Question, a: AgentAnswer, r: QuestionRecord, support, evidence, chunks_by_id: Mapping) -> dict:
    retrieved = set(a.retrieved_chunk_ids)
    cites = []
    for c in a.citations:
        chunk = chunks_by_id.get(c.chunk_id)
        cites.append({
            "n": c.n, "chunk_id": c.chunk_id, "doc_id": c.doc_id, "meeting_date": c.meeting_date,
            "section": c.section, "valid": c.chunk_id in retrieved,
            "supports_evidence": None if not q.answerable else bool(chunk and any(covers(chunk, ev) for ev in evidence)),
        })
    return {
        "id": q.id, "category": q.category, "answerable": q.answerable, "question": q.question,
        "answer": a.answer, "abstained": a.abstained, "abstain_reason": a.abstain_reason,
        "unknown_words": a.unknown_words, "intent": a.intent, "attempts": a.attempts,
        "confidence_raw": r.raw_confidence, "confidence": r.confidence, "confidence_level": a.confidence_level,
        "signals": a.signals, "citations": cites, "n_retrieved": len(a.retrieved_chunk_ids),
        "correct": r.correct, "answer_correct": r.answer_correct, "missing_facts": r.missing_facts,
        "citation_validity": (r.valid_citations / r.n_citations) if r.n_citations else None,
        "citation_support": (r.supporting_citations / r.n_citations)
        if r.n_citations and r.supporting_citations is not None else None,
        "support": r.support,
        "support_sentences": [{"text": s.text, "supported": s.supported, "missing": list(s.missing),
                               "closeness": s.closeness} for s in support.sentences],
        "faithfulness": r.faithfulness,
        "latency_ms": {k: round(v, 3) for k, v in a.latency_ms.items()}, "lm_usage": a.lm_usage,
        "lm_cost": a.lm_cost,
        "dropped_citations": a.dropped_citations, "skill": a.skill, "skills": list(a.skills),
    }


def evaluate_agent(cfg, pipeline, questions: Sequence[Question], progress: bool = True,
                   console: Console | None = None, retrieval: Sequence[dict] | None = None) -> AgentOutcome:
    """Build the agent ``cfg.agent`` / ``cfg.lm`` describe over ``pipeline``, run it, measure it.
    ``retrieval``: the run's per-question retrieval rows, shown on the questions' traces."""
    from fedlab.agent.build import build_agent
    from fedlab.agent.searcher import open_direct
    from fedlab.errors import FedlabError

    if "lm" not in cfg:
        raise FedlabError("agent is configured without an answer backend: add lm=extractive (or lm=anthropic)")
    agent = build_agent(cfg, search=open_direct(cfg, pipeline))
    answers = run_agent(said_once(agent.answer_with), questions, progress=progress, console=console,
                        assess=trace_assessor(questions, pipeline, retrieval))
    spans.release()  # the answers' latency is measured: the traces may be written now
    judge_cfg = cfg.eval.get("judge")
    judge = None
    if judge_cfg:
        from fedlab.evaluation.answers.faithfulness import build_judge

        judge = build_judge(judge_cfg)
    return evaluate_answers(questions, answers, pipeline, judge=judge,
                            judge_concurrency=int((judge_cfg.get("concurrency") if hasattr(judge_cfg, "get") else None) or 4))


def print_agent_metrics(console: Console, metrics: Mapping[str, float]) -> None:
    from rich.table import Table

    names = ("answer_accuracy", "abstention_accuracy", "false_abstention_rate", "citation_validity",
             "citation_support", "support", "faithfulness", "ece", "ece_if_calibrated", "brier", "auroc", COVERAGE_METRIC,
             "latency_p50_ms_agent_total")
    shown = [n for n in names if n in metrics]
    table = Table(title="agent")
    for n in shown:
        table.add_column(n.replace("latency_p50_ms_agent_total", "p50 ms"), justify="right")
    table.add_row(*(f"{metrics[n]:.1f}" if n.startswith("latency") else f"{metrics[n]:.3f}" for n in shown))
    console.print(table)

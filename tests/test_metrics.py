"""Span relevance, retrieval metrics (hand-computed), TREC files and latency summaries."""
from __future__ import annotations

import math

import pytest

from fedlab.chunking.chunk import Chunk
from fedlab.dataset.schema import Evidence, Question
from fedlab.errors import FedlabError
from fedlab.evaluation.retrieval import trec
from fedlab.evaluation.retrieval.latency import StageTimer, latency_summary
from fedlab.evaluation.retrieval.metrics import METRIC_NAMES, evaluate_retrieval, ranx_scores, to_ranx
from fedlab.evaluation.retrieval.relevance import EvidenceSpan, build_qrels, covers, judge_ranking, resolve_evidence
from fedlab.retrieval.types import Hit
from fedlab.tracking import metric_from_mlflow_name, mlflow_name


def chunk(cid: str, doc: str, start: int, end: int, parent: tuple[int, int] | None = None) -> Chunk:
    return Chunk(cid, doc, "minutes", "2024-01-31", None, start, end, "t", "t",
                 parent[0] if parent else None, parent[1] if parent else None)


def question(qid: str, evidence: list[tuple[str, str]], answerable: bool = True) -> Question:
    return Question(qid, "q?", "factual" if answerable else "unanswerable", answerable,
                    [Evidence(d, q) for d, q in evidence], "a", ["f"] if answerable else [], None, "dev")


# --- relevance ---------------------------------------------------------------------------

QUOTE = EvidenceSpan("d1", 100, 200)  # 100 characters


def test_covers_needs_half_of_the_quote():
    assert not covers(chunk("a", "d1", 0, 140), QUOTE)  # 40 of 100 characters
    assert covers(chunk("b", "d1", 140, 300), QUOTE)  # 60 of 100
    assert covers(chunk("c", "d1", 150, 150 + 400), QUOTE)  # exactly half counts
    assert not covers(chunk("d", "d2", 0, 1000), QUOTE)  # right span, wrong document


def test_covers_tests_every_located_span_of_the_meeting():
    # the quote located in its statement and again in the same meeting's minutes
    ev = EvidenceSpan("statement-2024-01-31", 100, 200, also=(EvidenceSpan("minutes-2024-01-31", 5000, 5100),))
    assert ev.meeting == "2024-01-31" and ev.doc_ids == {"statement-2024-01-31", "minutes-2024-01-31"}
    assert covers(chunk("s", "statement-2024-01-31", 100, 200), ev)
    assert covers(chunk("m", "minutes-2024-01-31", 5050, 5300), ev)  # half of the minutes' copy
    assert not covers(chunk("m2", "minutes-2024-01-31", 5060, 5300), ev)  # 40 of 100
    assert not covers(chunk("m3", "minutes-2024-01-31", 100, 200), ev)  # the statement's offsets, wrong doc
    assert not covers(chunk("x", "statement-2024-03-20", 100, 200), ev)  # another meeting
    plain = EvidenceSpan("statement-2024-01-31", 100, 200)
    assert not covers(chunk("m", "minutes-2024-01-31", 5050, 5300), plain)
    assert EvidenceSpan("d1", 0, 5).meeting is None  # not a corpus id: meeting unknown


def test_resolve_evidence_rules_on_text_documents():
    quote = "the committee decided to raise the target range"
    docs = {"statement-2024-01-31": "Intro. The Committee decided to raise the target range. Outro.",
            "minutes-2024-01-31": "Staff review.\n\nThe Committee decided to\nraise the target range by 25 bp.",
            "minutes-2024-03-20": "The Committee decided to raise the target range."}  # another meeting
    qs = [question("q1", [("statement-2024-01-31", quote)])]
    (by_meeting,) = resolve_evidence(qs, docs, relevance="meeting")["q1"]
    (by_document,) = resolve_evidence(qs, docs, relevance="document")["q1"]
    assert (by_meeting.doc_id, by_meeting.start, by_meeting.end) == (by_document.doc_id, by_document.start,
                                                                     by_document.end)
    (copy,) = by_meeting.also
    assert copy.doc_id == "minutes-2024-01-31"
    assert docs[copy.doc_id][copy.start:copy.end] == "The Committee decided to\nraise the target range"
    assert by_document.also == ()
    with pytest.raises(FedlabError, match="eval.relevance='both': use meeting .* or document"):
        resolve_evidence(qs, docs, relevance="both")


def test_covers_judges_the_returned_parent_span():
    child = chunk("c", "d1", 0, 40, parent=(0, 300))  # small child, parent holds the quote
    assert covers(child, QUOTE)
    assert not covers(chunk("c2", "d1", 0, 300, parent=(0, 120)), QUOTE)  # parent holds 20%


def test_resolve_evidence_locates_quotes_in_documents():
    text = "Intro.\n\nThe Committee  decided to\nRAISE the target range. Outro."
    docs = {"statement-2024-01-31": text}
    qs = [question("q1", [("statement-2024-01-31", "the committee decided to raise the target range")]),
          question("u1", [], answerable=False)]
    resolved = resolve_evidence(qs, docs)
    assert list(resolved) == ["q1"]  # unanswerable questions have nothing to retrieve
    (span,) = resolved["q1"]
    assert text[span.start:span.end] == "The Committee  decided to\nRAISE the target range"


def test_resolve_evidence_refuses_unlocatable_quotes():
    docs = {"d1": "some text"}
    with pytest.raises(FedlabError, match="quote not found in d1"):
        resolve_evidence([question("q1", [("d1", "absent words")])], docs)
    with pytest.raises(FedlabError, match="document d9 is not in the corpus"):
        resolve_evidence([question("q1", [("d9", "some")])], docs)


# --- metrics -----------------------------------------------------------------------------

# q1: two evidence items in different documents; q2: one item.
EVIDENCE = {
    "q1": (EvidenceSpan("d1", 100, 200), EvidenceSpan("d2", 0, 50)),
    "q2": (EvidenceSpan("d1", 500, 600),),
}
A = chunk("a", "d1", 0, 140)  # 40% of q1's first quote: not relevant
B = chunk("b", "d1", 140, 300)  # 60%: relevant to q1 item 0
C = chunk("c", "d2", 0, 100)  # relevant to q1 item 1
D = chunk("d", "d1", 300, 700)  # relevant to q2
E = chunk("e", "d3", 0, 100)  # another document
ALL = [A, B, C, D, E]


def test_metrics_by_hand():
    assert judge_ranking([A, B, C, D], EVIDENCE["q1"]) == [frozenset(), {0}, {1}, frozenset()]
    result = evaluate_retrieval(EVIDENCE, {"q1": [A, E, B, C], "q2": [E, A, D]}, ALL)
    q1, q2 = (r.metrics for r in result.per_question)
    # q1: ranks 1..4 = a (irrelevant, d1), e (d3), b (item 0), c (item 1)
    assert [q1[f"recall@{k}"] for k in (1, 3, 5, 10)] == [0.0, 0.5, 1.0, 1.0]
    assert [q1[f"hit@{k}"] for k in (1, 3, 5, 10)] == [0.0, 1.0, 1.0, 1.0]
    assert [q1[f"doc_recall@{k}"] for k in (1, 3, 5, 10)] == [0.5, 0.5, 1.0, 1.0]  # d1 at 1, d2 at 4
    assert q1["mrr@10"] == pytest.approx(1 / 3)
    dcg = 1 / math.log2(4) + 1 / math.log2(5)
    idcg = 1 + 1 / math.log2(3)
    assert q1["ndcg@10"] == pytest.approx(dcg / idcg)
    # q2: relevant d at rank 3
    assert q2["recall@1"] == 0.0 and q2["recall@3"] == 1.0
    assert q2["doc_recall@1"] == 0.0 and q2["doc_recall@3"] == 1.0
    assert q2["mrr@10"] == pytest.approx(1 / 3)
    assert q2["ndcg@10"] == pytest.approx(1 / math.log2(4))
    assert [r.first_relevant_rank for r in result.per_question] == [3, 3]
    assert result.per_question[0].retrieved == ["a", "e", "b", "c"]
    assert result.metrics["recall@3"] == pytest.approx(0.75)
    assert result.metrics["doc_recall@1"] == pytest.approx(0.25)
    # evidence ids "d1"/"d2" name no meeting: meeting_recall finds none, whatever is retrieved
    assert result.metrics["meeting_recall@10"] == 0.0
    assert list(result.metrics) == METRIC_NAMES
    row = result.per_question[0].to_json()
    assert row["id"] == "q1" and row["first_relevant_rank"] == 3 and row["recall@5"] == 1.0


def test_graded_ndcg_and_mrr_agree_with_ranx_and_hand_calculation():
    # One chunk covering both items of a question has grade 2.
    ev = {"q": (EvidenceSpan("d1", 0, 100), EvidenceSpan("d1", 150, 250))}
    both = chunk("both", "d1", 0, 300)
    one = chunk("one", "d1", 120, 260)  # covers item 1 only (100 of 100) -> grade 1
    none = chunk("none", "d1", 400, 500)
    qrels = build_qrels(ev, [both, one, none])
    assert qrels == {"q": {"both": 2, "one": 1}}
    result = evaluate_retrieval(ev, {"q": [none, one, both]}, [both, one, none])
    # Linear gain: DCG = 0 + 1/log2(3) + 2/log2(4); IDCG = 2 + 1/log2(3)
    expected_ndcg = (1 / math.log2(3) + 2 / math.log2(4)) / (2 + 1 / math.log2(3))
    assert result.metrics["ndcg@10"] == pytest.approx(expected_ndcg)
    assert result.metrics["mrr@10"] == pytest.approx(0.5)
    direct = ranx_scores(qrels, {"q": ["none", "one", "both"]}, ["ndcg@10", "mrr@10"])
    assert direct["q"]["ndcg@10"] == pytest.approx(expected_ndcg)
    assert direct["q"]["mrr@10"] == pytest.approx(0.5)


def test_tied_scores_keep_the_returned_order():
    # Equal scores: ranx alone would order ties its own way; the returned order must win.
    hits = [Hit(E, 1.0, 1), Hit(D, 1.0, 2)]
    result = evaluate_retrieval({"q2": EVIDENCE["q2"]}, {"q2": hits}, ALL)
    assert result.metrics["mrr@10"] == pytest.approx(0.5)
    assert result.metrics["hit@1"] == 0.0


def test_small_to_big_children_of_one_parent_are_one_passage():
    ev = {"q": (EvidenceSpan("d1", 100, 200),)}
    kids = [chunk(f"k{i}", "d1", i * 100, i * 100 + 100, parent=(0, 400)) for i in range(4)]
    result = evaluate_retrieval(ev, {"q": [kids[2], kids[0], E]}, kids + [E])
    assert result.qrels == {"q": {"k0": 1}}  # one relevant passage, named by its smallest id
    assert result.run["q"][:2] == ["k0", "k0~repeat2"]  # the repeat keeps its rank, judged irrelevant
    assert result.metrics["ndcg@10"] == pytest.approx(1.0)
    assert result.metrics["hit@1"] == 1.0


def test_unreachable_question_counts_as_a_miss():
    # no chunk holds half of a 1000-character quote
    ev = {"q": (EvidenceSpan("d1", 0, 1000, meeting="2024-01-31"),)}
    small = [chunk(f"s{i}", "d1", i * 200, i * 200 + 200) for i in range(5)]
    result = evaluate_retrieval(ev, {"q": small}, small)
    assert result.unreachable == ["q"]
    assert all(v == 0.0 for name, v in result.metrics.items()
               if not name.startswith(("doc_recall", "meeting_recall")))
    assert result.metrics["doc_recall@1"] == 1.0  # the right document, all the same
    assert result.metrics["meeting_recall@1"] == 1.0  # and the right meeting
    assert result.per_question[0].first_relevant_rank is None


def test_empty_ranked_list_and_missing_ranking():
    result = evaluate_retrieval({"q2": EVIDENCE["q2"]}, {"q2": []}, ALL)
    assert result.metrics["mrr@10"] == 0.0 and result.metrics["recall@10"] == 0.0
    with pytest.raises(ValueError, match="no ranked list"):
        evaluate_retrieval(EVIDENCE, {"q1": [A]}, ALL)


def test_mlflow_names_round_trip():
    from mlflow.utils.validation import validate_param_and_metric_name

    for name in METRIC_NAMES:
        assert validate_param_and_metric_name(mlflow_name(name)), name
        assert metric_from_mlflow_name(mlflow_name(name)) == name
    assert mlflow_name("recall@5") == "recall_at_5"


# --- TREC --------------------------------------------------------------------------------

def test_trec_round_trip(tmp_path):
    from ranx import evaluate

    result = evaluate_retrieval(EVIDENCE, {"q1": [A, E, B, C], "q2": [E, A, D]}, ALL)
    trec.write_qrels(tmp_path / "trec" / "qrels.trec", result.qrels)
    trec.write_run(tmp_path / "trec" / "run.trec", result.run, tag="cfg1")
    lines = (tmp_path / "trec" / "run.trec").read_text().splitlines()
    assert lines[0] == "q1 Q0 a 1 4 cfg1" and lines[-1] == "q2 Q0 d 3 1 cfg1"
    assert "q2 0 d 1" in (tmp_path / "trec" / "qrels.trec").read_text().splitlines()
    assert sorted(p.name for p in (tmp_path / "trec").iterdir()) == ["qrels.trec", "run.trec"]  # no temp files

    qrels, run = trec.read_qrels(tmp_path / "trec" / "qrels.trec"), trec.read_run(tmp_path / "trec" / "run.trec")
    assert qrels == result.qrels
    assert run == result.run  # same order back
    assert trec.run_tag(tmp_path / "trec" / "run.trec") == "cfg1"
    ranx_qrels, (ranx_run,) = to_ranx(qrels, run)
    scores = evaluate(ranx_qrels, ranx_run, ["mrr@10", "ndcg@10"])
    assert scores["mrr@10"] == pytest.approx(result.metrics["mrr@10"])
    assert scores["ndcg@10"] == pytest.approx(result.metrics["ndcg@10"])


def test_trec_rejects_whitespace_and_empty_files(tmp_path):
    with pytest.raises(ValueError, match="without whitespace"):
        trec.write_run(tmp_path / "r.trec", {"q 1": ["a"]}, tag="t")
    (tmp_path / "empty.trec").write_text("")
    with pytest.raises(FedlabError, match="empty"):
        trec.read_qrels(tmp_path / "empty.trec")
    (tmp_path / "short.trec").write_text("q1 Q0 a 1\n")
    with pytest.raises(FedlabError, match="6 fields"):
        trec.read_run(tmp_path / "short.trec")


def test_read_run_orders_by_score_then_rank(tmp_path):
    (tmp_path / "r.trec").write_text("q Q0 x 1 0.5 t\nq Q0 y 2 0.9 t\nq Q0 z 3 0.5 t\n")
    assert trec.read_run(tmp_path / "r.trec") == {"q": ["y", "x", "z"]}


# --- latency -----------------------------------------------------------------------------

def test_latency_summary_names_and_percentiles():
    timings = [{"embed_ms": float(i), "search_ms": 10.0 * i, "total_ms": 11.0 * i} for i in range(1, 101)]
    timings[0]["rerank_ms"] = 7.0  # timed for one question only
    out = latency_summary(timings)
    assert out["latency_p50_ms_embed"] == pytest.approx(50.5)
    assert out["latency_p95_ms_search"] == pytest.approx(950.5)
    assert out["latency_p50_ms_rerank"] == 7.0
    assert set(out) == {f"latency_p{p}_ms_{s}" for p in (50, 95) for s in ("embed", "search", "rerank", "total")}
    with pytest.raises(ValueError):
        latency_summary([{"bad stage": 1.0}])


def test_stage_timer_records_milliseconds():
    timer = StageTimer()
    with timer.stage("search"):
        sum(range(10000))
    assert set(timer.timings) == {"search"} and 0.0 < timer.timings["search"] < 5000.0

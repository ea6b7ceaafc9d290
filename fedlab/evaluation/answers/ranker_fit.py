"""Fit the reader's sentence ranker on the dev sets' gold quotes (the task behind
``python -m fedlab.fit_sentence_ranker``).

1. ``collect_records``: the agent answers every question of the config's dataset (a pool such as
   ``dev_sets``: each member set apart) exactly as the config would (retrieval, reformulation,
   answerability model); the passages it hands the reader are recorded per answerable question.
2. ``question_table``: the reader's candidate sentences of those passages with their features
   (fedlab.skills.reader.sentence_table); a sentence is relevant when it matches one of the
   question's gold quotes (contained in it, containing it, or difflib ratio >= QUOTE_RATIO over
   normalised text) or states a key fact in a document of the question's evidence.
3. ``cross_fit``: K folds grouped by question set (leave one set out): each set's sentences are
   scored by a model fitted on the other sets, and compared with the hand-set score — ranking
   measures of the gold sentences (P@1, P@3, nDCG@4 over questions with one) and the reader's own
   answers (every key fact stated) on the recorded passages.
4. ``fit_ranker``: a standardised logistic regression (scikit-learn) on every row, written as
   JSON with its provenance (fedlab.skills.sentence_ranker).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Sequence

from rich.console import Console

from fedlab.errors import FedlabError

QUOTE_RATIO = 0.85  # difflib ratio at which a sentence and a gold quote are the same text
C = 1.0  # the logistic regression's inverse regularisation
_SPACE = re.compile(r"\s+")
_FOLD_CHARS = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "–": "-", "—": "-", "\u00a0": " "})


@dataclass
class Record:
    """One answerable question and the passages the agent handed the reader for it."""

    set: str
    id: str
    question: str  # as the reader was given it
    key_facts: list[str]
    evidence: list[tuple[str, str]]  # (doc_id, quote)
    passages: list[str]

    def to_json(self) -> dict:
        return {"set": self.set, "id": self.id, "question": self.question, "key_facts": self.key_facts,
                "evidence": [list(e) for e in self.evidence], "passages": self.passages}

    @classmethod
    def from_json(cls, row: dict) -> "Record":
        return cls(row["set"], row["id"], row["question"], list(row["key_facts"]),
                   [tuple(e) for e in row["evidence"]], list(row["passages"]))


@dataclass
class Collected:
    records: list[Record]
    glossary: dict[str, str]
    datasets: dict[str, str] = field(default_factory=dict)  # set -> version hash
    n_questions: int = 0


def dataset_members(cfg) -> list[tuple[str, list]]:
    """(set name, questions) of ``cfg``'s dataset: each member of a pool, or the one set."""
    from fedlab.dataset.registry import registered
    from fedlab.evaluation.retrieval.harness import load_split

    members = cfg.dataset.get("members")
    if not members:
        return [(str(cfg.dataset.get("name") or "dataset"),
                 load_split(cfg.dataset.path, cfg.dataset.split, cfg.dataset.get("ids")))]
    out = []
    for name in members:
        member = registered(str(name))
        if member.role != "dev":
            raise FedlabError(f"dataset member {name} has role {member.role}: fit the ranker on dev sets only "
                              "(dataset=dev_sets)")
        out.append((str(name), load_split(member.path, member.split, member.ids)))
    return out


def collect_records(cfg, console: Console | None = None) -> Collected:
    """Run the agent over ``cfg``'s dataset as the config does, recording the reader's input per
    answerable question (its last draft's passages: after any reformulation)."""
    from fedlab.agent.build import build_agent, build_backend
    from fedlab.agent.searcher import open_direct
    from fedlab.dataset.registry import registered
    from fedlab.evaluation.answers.harness import run_agent
    from fedlab.evaluation.retrieval.harness import dataset_hash
    from fedlab.pipeline import build_pipeline

    console = console or Console(stderr=True)
    sets = dataset_members(cfg)
    pipeline = build_pipeline(cfg, progress=True)
    backend = build_backend(cfg)
    if not hasattr(backend, "synthesize"):
        raise FedlabError("the sentence ranker is the extractive reader's: compose with lm=extractive")
    search = open_direct(cfg, pipeline)
    seen: dict[str, tuple[str, list[str]]] = {}
    current = {"text": None}
    original = backend.synthesize

    def recording(question: str, passages: list[str]) -> dict:
        seen[current["text"]] = (question, list(passages))
        return original(question, passages)

    backend.synthesize = recording
    agent = build_agent(cfg, search=search, backend=backend)
    records, datasets, n = [], {}, 0

    def answer(text: str):
        current["text"] = text
        return agent(text)

    for name, questions in sets:
        datasets[name] = dataset_hash(registered(name).path) if cfg.dataset.get("members") else \
            dataset_hash(cfg.dataset.path)
        seen.clear()
        console.print(f"{name}: {len(questions)} questions")
        run_agent(answer, questions, progress=True, console=console)
        n += len(questions)
        for q in questions:
            if q.answerable and q.question in seen:
                asked, passages = seen[q.question]
                records.append(Record(name, q.id, asked, list(q.key_facts),
                                      [(e.doc_id, e.quote) for e in q.evidence], passages))
    glossary = dict(getattr(search.searcher, "glossary", None) or {})
    return Collected(records, glossary, datasets, n)


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text.translate(_FOLD_CHARS).lower()).strip(" .")


def matches_quote(sentence: str, quote: str) -> bool:
    """``sentence`` is (part of) ``quote`` or holds it, or the two nearly coincide (QUOTE_RATIO)."""
    s, q = _norm(sentence), _norm(quote)
    if not s or not q:
        return False
    if (len(s) >= 30 and s in q) or (len(q) >= 30 and q in s):
        return True
    m = SequenceMatcher(None, s, q, autojunk=False)
    return m.real_quick_ratio() >= QUOTE_RATIO and m.quick_ratio() >= QUOTE_RATIO and m.ratio() >= QUOTE_RATIO


def _doc_date(doc_id: str) -> str | None:
    found = re.search(r"\d{4}-\d{2}-\d{2}", doc_id)
    return found.group(0) if found else None


def relevant(sentence: str, meeting: str | None, record: Record) -> bool:
    """A gold sentence: it matches a gold quote, or states a key fact in a meeting of the evidence."""
    from fedlab.evaluation.answers.normalize import missing_facts

    if any(matches_quote(sentence, quote) for _, quote in record.evidence):
        return True
    dates = {_doc_date(d) for d, _ in record.evidence}
    return bool(record.key_facts) and meeting in dates and \
        len(missing_facts(sentence, record.key_facts)) < len(record.key_facts)


@dataclass
class QuestionRows:
    record: Record
    features: list[dict[str, float]]
    labels: list[bool]


def question_table(records: Sequence[Record], abbreviations=(), rank_weight: float = 0.0,
                   report_weight: float = 1.0) -> list[QuestionRows]:
    """The candidate sentences of every record, their features and labels (records with none left out)."""
    from fedlab.query.frame import frame_of
    from fedlab.skills.reader import sentence_table

    out = []
    for r in records:
        rows = sentence_table(r.question, r.passages, frame_of(r.question).hint, abbreviations, rank_weight,
                              report_weight)
        if rows:
            out.append(QuestionRows(r, [f for _, _, f in rows], [relevant(s, m, r) for s, m, _ in rows]))
    return out


def fit_ranker(tables: Sequence[QuestionRows], names: Sequence[str] | None = None, meta: dict | None = None,
               min_share: float = 0.5):
    """A standardised logistic regression on every sentence of ``tables`` -> SentenceRanker."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    from fedlab.skills.sentence_ranker import SentenceRanker

    names = tuple(names or tables[0].features[0])
    X = np.array([[f[n] for n in names] for t in tables for f in t.features], dtype=float)
    y = np.array([lab for t in tables for lab in t.labels], dtype=int)
    if len(set(y.tolist())) < 2:
        raise FedlabError("the training sentences hold one class only: no gold quote matched a retrieved sentence")
    mean = X.mean(axis=0)
    scale = X.std(axis=0)
    scale[scale <= 1e-12] = 1.0
    model = LogisticRegression(C=C, max_iter=2000).fit((X - mean) / scale, y)
    return SentenceRanker(names, tuple(mean.tolist()), tuple(scale.tolist()), tuple(model.coef_[0].tolist()),
                          float(model.intercept_[0]), min_share, dict(meta or {}))


def _ordered(scores: list[float]) -> list[int]:
    """Indices by score, best first; ties to the earlier sentence (as the reader breaks them)."""
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))


def ranking_measures(per_question: Sequence[tuple[list[float], list[bool]]]) -> dict[str, float]:
    """P@1, P@3 and nDCG@4 (binary gains) of the gold sentences, over questions with one."""
    p1 = p3 = ndcg = 0.0
    n = 0
    for scores, labels in per_question:
        if not any(labels):
            continue
        n += 1
        order = _ordered(scores)
        p1 += labels[order[0]]
        p3 += sum(labels[i] for i in order[:3]) / 3
        dcg = sum(labels[i] / math.log2(k + 2) for k, i in enumerate(order[:4]))
        ideal = sum(1 / math.log2(k + 2) for k in range(min(4, sum(labels))))
        ndcg += dcg / ideal
    return {"questions": float(n), "p@1": p1 / n if n else 0.0, "p@3": p3 / n if n else 0.0,
            "ndcg@4": ndcg / n if n else 0.0}


def reader_right(record: Record, backend, ranker=None, restated=None) -> bool:
    """The reader's draft for ``record`` (the skills, then the reader, as ``backend`` is set) states every key fact."""
    from fedlab.evaluation.answers.normalize import missing_facts
    from fedlab.lm.extractive import synthesize_answer

    draft = synthesize_answer(record.question, record.passages, backend.max_sentences, backend.abbreviations,
                              backend.rank_weight, backend.report_weight, ranker=ranker, restated=restated)
    return not missing_facts(draft["answer"], record.key_facts)


@dataclass
class CrossFitResult:
    per_set: dict[str, dict[str, float]]  # set -> measures (hand-set and model)
    pooled: dict[str, float]


def cross_fit(tables: Sequence[QuestionRows], backend, answers: bool = True, min_share: float = 0.5) -> CrossFitResult:
    """Leave one question set out: each set's sentences scored by a model fitted on the others;
    ranking measures (hand-set vs model) and, with ``answers``, the drafts right on each set."""
    sets = sorted({t.record.set for t in tables})
    if len(sets) < 2:
        raise FedlabError("cross-fitting groups by question set: give a pool of two or more (dataset=dev_sets)")
    per_set, hand_all, model_all = {}, [], []
    right = {"hand": 0, "model": 0, "n": 0}
    for name in sets:
        train = [t for t in tables if t.record.set != name]
        held = [t for t in tables if t.record.set == name]
        ranker = fit_ranker(train, min_share=min_share)
        hand = [([f["handset"] for f in t.features], t.labels) for t in held]
        model = [([ranker.score(f) for f in t.features], t.labels) for t in held]
        hand_all += hand
        model_all += model
        row = {f"hand.{k}": v for k, v in ranking_measures(hand).items()}
        row.update({f"model.{k}": v for k, v in ranking_measures(model).items() if k != "questions"})
        if answers:
            h = sum(reader_right(t.record, backend) for t in held)
            m = sum(reader_right(t.record, backend, ranker) for t in held)
            row.update({"drafts": float(len(held)), "hand.right": float(h), "model.right": float(m)})
            right["hand"] += h
            right["model"] += m
            right["n"] += len(held)
        per_set[name] = row
    pooled = {f"hand.{k}": v for k, v in ranking_measures(hand_all).items()}
    pooled.update({f"model.{k}": v for k, v in ranking_measures(model_all).items() if k != "questions"})
    if answers:
        pooled.update({"drafts": float(right["n"]), "hand.right": float(right["hand"]),
                       "model.right": float(right["model"])})
    return CrossFitResult(per_set, pooled)

"""Fit the agent's answerability model (fedlab.agent.answerability) on one split's answers.

Each question the agent searched gives one row: its features (fedlab.agent.evidence, from the
first search) and its outcome — ``correct`` (answerable, and the unmodelled agent's answer states
every key fact), ``wrong`` (answerable, it does not) or ``unanswerable`` (unanswerable or off
topic) — and whether it is off topic. Both heads are scikit-learn logistic regressions on
standardised features (L2, C=1: a few hundred rows); their coefficients are stored.

The abstention threshold is chosen on out-of-fold predictions (stratified 5-fold), never on the
fitted rows' own: the lowest P(answerable) at which the questions kept — those the off-topic head
lets through with P(answerable) at or above it — are answerable at least ``target_precision`` of
the time, which keeps as many answerable questions as the target allows.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from fedlab.agent.answerability import ANSWER_CLASSES, OFF_TOPIC_CLASSES, AnswerabilityModel, LogisticHead
from fedlab.agent.evidence import EVIDENCE_FEATURES, QUESTION_FEATURES, Vocabulary
from fedlab.errors import FedlabError

OFF_TOPIC_FEATURES = (*QUESTION_FEATURES, "intent_off_topic", "top_dense")
ANSWER_FEATURES = (*QUESTION_FEATURES, "intent_off_topic", *EVIDENCE_FEATURES, "retrieval_score")
FOLDS = 5
C = 1.0


@dataclass
class Row:
    features: dict[str, float]
    outcome: str  # one of ANSWER_CLASSES
    off_topic: bool


def _matrix(rows: Sequence[Row], names: Sequence[str]) -> np.ndarray:
    return np.array([[float(r.features.get(n, 0.0)) for n in names] for r in rows], dtype=float)


def _pipeline():
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=5000))


def _head(fitted, classes: Sequence[str], names: Sequence[str]) -> LogisticHead:
    scaler, lr = fitted.steps[0][1], fitted.steps[-1][1]
    scale = np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
    return LogisticHead(list(classes), list(names), scaler.mean_.tolist(), scale.tolist(),
                        lr.coef_.tolist(), lr.intercept_.tolist())


def _labels(rows: Sequence[Row]) -> tuple[np.ndarray, np.ndarray]:
    outcome = np.array([ANSWER_CLASSES.index(r.outcome) for r in rows])
    off = np.array([int(r.off_topic) for r in rows])
    return outcome, off


def out_of_fold(rows: Sequence[Row], seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(P(answerable), P(off topic)) for every row from models that did not see it."""
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    outcome, off = _labels(rows)
    folds = StratifiedKFold(n_splits=min(FOLDS, int(np.bincount(outcome).min()), int(np.bincount(off).min())),
                            shuffle=True, random_state=seed)
    p_answer = cross_val_predict(_pipeline(), _matrix(rows, ANSWER_FEATURES), outcome, cv=folds,
                                 method="predict_proba")
    p_off = cross_val_predict(_pipeline(), _matrix(rows, OFF_TOPIC_FEATURES), off, cv=folds,
                              method="predict_proba")[:, 1]
    return p_answer[:, 0] + p_answer[:, 1], p_off


def choose_threshold(p_answerable: np.ndarray, answerable: np.ndarray, kept: np.ndarray,
                     target_precision: float) -> float:
    """The lowest threshold at which the kept rows at or above it are answerable at least
    ``target_precision`` of the time (1.0, answering nothing, when no threshold reaches it)."""
    candidates = sorted(set(np.round(p_answerable[kept], 6).tolist()))
    for t in candidates:
        chosen = kept & (p_answerable >= t)
        if chosen.any() and answerable[chosen].mean() >= target_precision:
            return float(t)
    return 1.0


def fit_model(rows: Sequence[Row], vocabulary: Vocabulary, target_precision: float, off_topic_threshold: float,
              meta: dict | None = None) -> AnswerabilityModel:
    outcome, off = _labels(rows)
    if len(set(outcome.tolist())) < len(ANSWER_CLASSES) or len(set(off.tolist())) < 2:
        raise FedlabError("fitting the answerability model needs correct, wrong and unanswerable answers and "
                          "off-topic questions in the split; evaluate a larger split")
    answer = _pipeline().fit(_matrix(rows, ANSWER_FEATURES), outcome)
    off_topic = _pipeline().fit(_matrix(rows, OFF_TOPIC_FEATURES), off)
    p_answerable, p_off = out_of_fold(rows)
    answerable = outcome != ANSWER_CLASSES.index("unanswerable")
    threshold = choose_threshold(p_answerable, answerable, p_off < off_topic_threshold, target_precision)
    meta = {**(meta or {}), "n": len(rows), "outcomes": {c: int((outcome == i).sum()) for i, c in enumerate(ANSWER_CLASSES)},
            "off_topic": int(off.sum()), "target_precision": target_precision, "threshold_from": "out-of-fold"}
    return AnswerabilityModel(vocabulary, _head(off_topic, OFF_TOPIC_CLASSES, OFF_TOPIC_FEATURES),
                              _head(answer, ANSWER_CLASSES, ANSWER_FEATURES), threshold, meta)

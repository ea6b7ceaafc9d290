"""Fit the agent's answerability model (fedlab.agent.answerability) from one split's rows.

Contract and design notes: docs/answerability.md#design-notes-fedlabagentanswerability_fitpy.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from fedlab.agent.answerability import (ANSWER_CLASSES, ANSWERABLE_CLASSES, CORRECTNESS_CLASSES, OFF_TOPIC_CLASSES,
                                       QUESTION_FEATURE, QUESTION_OFF_TOPIC_FEATURE, AnswerabilityModel, LogisticHead)
from fedlab.agent.evidence import (ANSWER_FEATURES, COMPOSED_FEATURE, EVIDENCE_FEATURES, QUESTION_FEATURES,
                                   RUN_FEATURE, SIMILARITY_FEATURE, TOPIC_FEATURES, Vocabulary)
from fedlab.errors import FedlabError

# what a question is about, not how it is put: its length, a date, a document type named say nothing
# about its topic (on dev every off-topic question is short and undated, and a head reading those
# called "When did tapering start?" off topic)
OFF_TOPIC_FEATURES = (*TOPIC_FEATURES, "intent_off_topic", "top_dense")
ANSWERABLE_FEATURES = (*QUESTION_FEATURES, "intent_off_topic", RUN_FEATURE, *EVIDENCE_FEATURES, "retrieval_score")
# read from the answer itself (fedlab.agent.evidence), and the question's length: a longer question
# asks for more, which the answer's coverage of its terms does not say
CORRECTNESS_FEATURES = (*ANSWER_FEATURES, SIMILARITY_FEATURE, COMPOSED_FEATURE, "n_terms")
FOLDS = 5
C_GRID = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0)
REPEATS = 5
OOF_REPEATS = 10  # shuffles of the folds whose out-of-fold predictions are averaged to choose the thresholds


@dataclass
class Row:
    features: dict[str, float]
    outcome: str  # one of ANSWER_CLASSES
    off_topic: bool
    embedding: Sequence[float] | None = None  # the question's (the dense retriever's query vector)
    fresh: bool = False  # a calibration-set question: one the agent was not developed on
    hard: bool = False  # written toward the kinds of question the agent finds hard (HARD_FEATURE)
    rewordings: Sequence[Sequence[float]] = ()  # embeddings of the question reworded (the question heads' extra rows)


CORRECTNESS_FROM = ("calibration_set", "all", "all_as_new")  # the rows the correctness head is fitted on
FRESH_FEATURE = "calibration_set"  # all_as_new: the indicator the head is fitted with, fixed at 1 when stored
# the indicator of the rows written toward hard questions, fixed at 0 when stored: the head learns how
# much less often such a question is answered right than its features say, and reports P(correct) for
# questions as they come
HARD_FEATURE = "hard_sampled"


@dataclass
class CorrectnessFit:
    head: LogisticHead  # P(correct | answerable) from the answer's features
    p_correct: np.ndarray  # for every row: out of fold for the rows it is fitted on
    c: float
    rows: np.ndarray  # the rows it is fitted on
    mode: str  # what it was fitted as (calibration_set falls back to all without fresh right and wrong answers)
    held: list[str] = field(default_factory=list)  # indicators it was fitted with, stored holding at one value


def _fold_constant(head: LogisticHead, name: str, value: float) -> LogisticHead:
    """``head`` with feature ``name`` fixed at ``value``: its term moves into the intercept."""
    i = head.features.index(name)
    keep = [j for j in range(len(head.features)) if j != i]
    shift = [row[i] * (value - head.mean[i]) / head.scale[i] for row in head.coef]
    return LogisticHead(head.classes, [head.features[j] for j in keep], [head.mean[j] for j in keep],
                        [head.scale[j] for j in keep], [[row[j] for j in keep] for row in head.coef],
                        [b + d for b, d in zip(head.intercept, shift)])


def fit_correctness(x_said: np.ndarray, is_correct: np.ndarray, answerable: np.ndarray, fresh: np.ndarray,
                    mode: str, hard: np.ndarray | None = None) -> CorrectnessFit:
    """The correctness head (see the module docstring) and every row's P(correct). ``hard``: the
    rows written toward hard questions (HARD_FEATURE), when the rows it is fitted on hold both kinds."""
    if mode == "calibration_set" and min(int(is_correct[fresh].sum()), int((~is_correct[fresh]).sum())) < FOLDS:
        mode = "all"  # too few fresh right or wrong answers for its folds
    rows = fresh if mode == "calibration_set" else answerable
    # indicators the head is fitted with and stored held at one value: (name, column, held at)
    held = [(FRESH_FEATURE, fresh[rows], 1.0)] if mode == "all_as_new" else []  # every row read as a fresh one
    if hard is not None and 0 < int(hard[rows].sum()) < int(rows.sum()):
        held.append((HARD_FEATURE, hard[rows], 0.0))  # every row read as a question as it comes
    x = np.column_stack([x_said[rows], *(column.astype(float) for _, column, _ in held)])
    y, names = is_correct[rows].astype(int), (*CORRECTNESS_FEATURES, *(name for name, _, _ in held))
    read_as = x.copy()
    for j, (_, _, value) in enumerate(held, start=len(CORRECTNESS_FEATURES)):
        read_as[:, j] = value
    c = choose_c(x, y)
    head = _head(_pipeline(c).fit(x, y), CORRECTNESS_CLASSES, names)
    for name, _, value in held:
        head = _fold_constant(head, name, value)
    p = head.proba_many([dict(zip(CORRECTNESS_FEATURES, v)) for v in x_said])[:, 1]
    p[rows] = _oof(c, x, y, predict_on=read_as)
    return CorrectnessFit(head, p, c, rows, mode, held=[name for name, _, _ in held])


def _matrix(rows: Sequence[Row], names: Sequence[str]) -> np.ndarray:
    return np.array([[float(r.features.get(n, 0.0)) for n in names] for r in rows], dtype=float)


def _logistic(c: float):
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=c, max_iter=5000)


def _pipeline(c: float):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), _logistic(c))


def _folds(y: np.ndarray, seed: int = 0, grouped: bool = False):
    """Stratified folds; ``grouped``: every row of a group (a question and its rewordings) in one."""
    from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold

    kind = StratifiedGroupKFold if grouped else StratifiedKFold
    return kind(n_splits=max(2, min(FOLDS, int(np.bincount(y).min()))), shuffle=True, random_state=seed)


def _splits(x: np.ndarray, y: np.ndarray, seed: int, groups: np.ndarray | None):
    return _folds(y, seed, groups is not None).split(x, y, groups)


def choose_c(x: np.ndarray, y: np.ndarray, groups: np.ndarray | None = None) -> float:
    """The L2 strength of ``C_GRID`` with the lowest cross-validated log loss (5-fold, repeated
    with ``REPEATS`` shuffles: one shuffle of a small split can favour an extreme value; ``groups``:
    each group's rows held out together)."""
    from sklearn.model_selection import RepeatedStratifiedKFold
    from sklearn.preprocessing import StandardScaler

    if groups is None:
        splits = RepeatedStratifiedKFold(n_splits=_folds(y).n_splits, n_repeats=REPEATS, random_state=0).split(x, y)
    else:
        splits = (split for seed in range(REPEATS) for split in _splits(x, y, seed, groups))
    losses = np.zeros(len(C_GRID))
    for train, held in splits:
        scaler = StandardScaler().fit(x[train])  # what _pipeline(c) fits, shared by every c
        x_train, x_held = scaler.transform(x[train]), scaler.transform(x[held])
        for i, c in enumerate(C_GRID):
            p = _logistic(c).fit(x_train, y[train]).predict_proba(x_held)[np.arange(len(held)), y[held]]
            losses[i] -= np.log(np.clip(p, np.finfo(p.dtype).eps, None)).mean()
    return C_GRID[int(np.argmin(losses))]


def _head(fitted, classes: Sequence[str], names: Sequence[str]) -> LogisticHead:
    scaler, lr = fitted.steps[0][1], fitted.steps[-1][1]
    scale = np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
    return LogisticHead(list(classes), list(names), scaler.mean_.tolist(), scale.tolist(),
                        lr.coef_.tolist(), lr.intercept_.tolist())


def _labels(rows: Sequence[Row]) -> tuple[np.ndarray, np.ndarray]:
    outcome = np.array([ANSWER_CLASSES.index(r.outcome) for r in rows])
    off = np.array([int(r.off_topic) for r in rows])
    return outcome, off


def _oof(c: float, x: np.ndarray, y: np.ndarray, seeds: Sequence[int] = range(OOF_REPEATS),
         predict_on: np.ndarray | None = None, method: str = "predict_proba",
         groups: np.ndarray | None = None) -> np.ndarray:
    """P(y = 1) (``decision_function``: its log-odds) for every row from models that did not see it,
    averaged over the fold shuffles ``seeds``: the thresholds are read from these, and one shuffle's
    luck moves them by as much as a real change does (on dev, the answer threshold spans 0.50-0.60
    over six shuffles, 0.58-0.61 averaged over OOF_REPEATS). ``predict_on``: the rows as they are
    read when predicted (default ``x``); ``groups``: each group's rows held out together."""
    predict_on = x if predict_on is None else predict_on
    p = np.zeros(len(y))
    for seed in seeds:
        for train, held in _splits(x, y, seed, groups):
            out = getattr(_pipeline(c).fit(x[train], y[train]), method)(predict_on[held])
            p[held] += out[:, 1] if out.ndim == 2 else out
    return p / len(seeds)


@dataclass
class QuestionFit:
    head: LogisticHead  # over the question's embedding
    oof_log_odds: np.ndarray  # for each row, from heads that saw neither it nor its rewordings: the reading head's feature
    c: float  # its L2 strength
    n_rewordings: int = 0  # the rewordings it learned from besides the rows' questions


def fit_question_head(rows: Sequence[Row], y: np.ndarray, classes: Sequence[str] = ANSWERABLE_CLASSES) -> QuestionFit | None:
    """A question head over the rows' embeddings and their rewordings' (each with its row's label)
    for the binary labels ``y`` (``classes``); None when a row has no embedding (a retriever
    without a dense side)."""
    if any(r.embedding is None for r in rows):
        return None
    of = np.array([i for i, r in enumerate(rows) for _ in r.rewordings], dtype=int)
    x = np.array([list(r.embedding) for r in rows] + [list(v) for r in rows for v in r.rewordings], dtype=float)
    y_all = np.concatenate([y, y[of]]).astype(int)
    groups = np.concatenate([np.arange(len(rows)), of]) if len(of) else None
    c = choose_c(x, y_all, groups)
    names = [f"embedding[{i}]" for i in range(x.shape[1])]
    head = _head(_pipeline(c).fit(x, y_all), classes, names)
    oof = _oof(c, x, y_all, seeds=(1,), method="decision_function", groups=groups)[:len(rows)]
    return QuestionFit(head, oof, c, len(of))


def _candidates(p_answerable: np.ndarray, kept: np.ndarray) -> list[float]:
    """The thresholds worth trying: the kept rows' distinct P(answerable), ascending."""
    return sorted(set(np.round(p_answerable[kept], 6).tolist()))


def choose_threshold(p_answerable: np.ndarray, answerable: np.ndarray, kept: np.ndarray,
                     target_precision: float) -> float:
    """The lowest threshold at which the kept rows at or above it are answerable at least
    ``target_precision`` of the time (1.0, answering nothing, when no threshold reaches it)."""
    for t in _candidates(p_answerable, kept):
        chosen = kept & (p_answerable >= t)
        if chosen.any() and answerable[chosen].mean() >= target_precision:
            return float(t)
    return 1.0


def choose_answer_threshold(p_correct: np.ndarray, max_withheld_correct: float | None) -> float:
    """The highest P(correct) below which at most ``max_withheld_correct`` of the right answers
    (``p_correct``: theirs) fall; 0.0, withholding nothing, with no budget or no right answer."""
    if max_withheld_correct is None or not len(p_correct):
        return 0.0
    values = np.sort(p_correct)
    k = int(np.floor(max_withheld_correct * len(values) + 1e-9))
    return float(values[k]) if k < len(values) else 1.0


def spend_false_abstentions(p_answerable: np.ndarray, p_said: np.ndarray, answerable: np.ndarray, correct: np.ndarray,
                            on_topic: np.ndarray, threshold: float, max_false_abstention: float | None,
                            max_withheld_correct: float | None) -> tuple[float, float]:
    """The P(answerable) threshold (not below ``threshold``) and the answer threshold (on
    ``p_said``, the P(correct) of each row's drafted answer) that abstain on the most unanswerable
    rows while at most ``max_false_abstention`` of the answerable rows are abstained on by either
    decision — a withheld answer to an answerable question is a false abstention, right or wrong —
    and at most ``max_withheld_correct`` of the right answers kept are withheld (None: no answer
    threshold). Ties go to the higher P(answerable) threshold, then the lower answer threshold: the
    answerable head tells answerable from not far better than the correctness head tells right
    from wrong. With no budget: ``threshold``, and the answer threshold of ``max_withheld_correct``."""
    if max_false_abstention is None or not answerable.any():
        kept = on_topic & (p_answerable >= threshold)
        return threshold, choose_answer_threshold(p_said[kept & correct], max_withheld_correct)
    # when ``threshold`` alone abstains on more, neither may abstain on another answerable row
    allowed = max(int(np.floor(max_false_abstention * answerable.sum() + 1e-9)),
                  int((answerable & ~(on_topic & (p_answerable >= threshold))).sum()))
    best, best_key = (threshold, 0.0), None
    for t in [threshold, *(c for c in _candidates(p_answerable, on_topic) if c > threshold)]:
        kept = on_topic & (p_answerable >= t)
        if (answerable & ~kept).sum() > allowed:
            break
        highest = choose_answer_threshold(p_said[kept & correct], max_withheld_correct)
        for a in [0.0, *(c for c in _candidates(p_said, kept) if c <= highest)]:
            answered = kept & (p_said >= a)
            if (answerable & ~answered).sum() > allowed:
                break
            key = (int((~answerable & ~answered).sum()), t, -a)
            if best_key is None or key > best_key:
                best, best_key = (float(t), float(a)), key
    return best


def _auroc(score: np.ndarray, positive: np.ndarray) -> float:
    """ROC AUC of ``score`` for ``positive`` (both classes are present: ``fit_model`` requires them)."""
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(positive, score))


def fit_model(rows: Sequence[Row], vocabulary: Vocabulary, target_precision: float, off_topic_threshold: float,
              meta: dict | None = None, max_false_abstention: float | None = None,
              max_withheld_correct: float | None = None, correctness_from: str = "all") -> AnswerabilityModel:
    if correctness_from not in CORRECTNESS_FROM:
        raise FedlabError(f"agent.answerability.correctness_from={correctness_from!r}: use one of "
                          f"{', '.join(CORRECTNESS_FROM)}")
    outcome, off = _labels(rows)
    if len(set(outcome.tolist())) < len(ANSWER_CLASSES) or len(set(off.tolist())) < 2:
        raise FedlabError("fitting the answerability model needs correct, wrong and unanswerable answers and "
                          "off-topic questions in the split; evaluate a larger split")
    x_off = _matrix(rows, OFF_TOPIC_FEATURES)
    answerable = outcome != ANSWER_CLASSES.index("unanswerable")
    x_said = _matrix(rows, CORRECTNESS_FEATURES)
    is_correct = outcome == ANSWER_CLASSES.index("correct")
    correctness = fit_correctness(x_said, is_correct, answerable, answerable & np.array([r.fresh for r in rows]),
                                  correctness_from, np.array([r.hard for r in rows]))
    y_answerable = answerable.astype(int)
    question = fit_question_head(rows, y_answerable)
    x_answerable, answerable_features = _matrix(rows, ANSWERABLE_FEATURES), ANSWERABLE_FEATURES
    off_topic_features = OFF_TOPIC_FEATURES
    if question is not None:
        x_answerable = np.column_stack([x_answerable, question.oof_log_odds])
        answerable_features = (*ANSWERABLE_FEATURES, QUESTION_FEATURE)
    question_off = fit_question_head(rows, off, OFF_TOPIC_CLASSES)
    if question_off is not None:
        x_off = np.column_stack([x_off, question_off.oof_log_odds])
        off_topic_features = (*OFF_TOPIC_FEATURES, QUESTION_OFF_TOPIC_FEATURE)
    c_answerable, c_off = choose_c(x_answerable, y_answerable), choose_c(x_off, off)
    heads = {"off_topic": _head(_pipeline(c_off).fit(x_off, off), OFF_TOPIC_CLASSES, off_topic_features),
             "answerable": _head(_pipeline(c_answerable).fit(x_answerable, y_answerable), ANSWERABLE_CLASSES,
                                 answerable_features),
             "correctness": correctness.head}
    p_answerable, p_off = _oof(c_answerable, x_answerable, y_answerable), _oof(c_off, x_off, off)
    on_topic = p_off < off_topic_threshold
    # P(correct) of each row's answer (the correctness head never saw an unanswerable row)
    p_correct_all = correctness.p_correct
    p_said = p_answerable * p_correct_all
    threshold, answer_threshold = spend_false_abstentions(
        p_answerable, p_said, answerable, is_correct, on_topic,
        choose_threshold(p_answerable, answerable, on_topic, target_precision), max_false_abstention, max_withheld_correct)
    kept = on_topic & (p_answerable >= threshold)
    answered = kept & (p_said >= answer_threshold)
    meta = {**(meta or {}), "n": len(rows), "outcomes": {c: int((outcome == i).sum()) for i, c in enumerate(ANSWER_CLASSES)},
            "off_topic": int(off.sum()), "target_precision": target_precision, "max_false_abstention": max_false_abstention,
            "threshold_from": f"out-of-fold, {OOF_REPEATS} shuffles averaged",
            "c_answerable": c_answerable, "c_correct": correctness.c, "c_off_topic": c_off,
            # how the chosen threshold does on the rows no fold was fitted on
            "oof_auroc_answerable": _auroc(p_answerable, answerable),
            "oof_auroc_correct": _auroc(p_correct_all[answerable], is_correct[answerable]),
            "correctness_from": correctness.mode, "n_correctness": int(correctness.rows.sum()),
            "correctness_held": correctness.held,
            "n_hard_sampled": int(sum(r.hard for r in rows)),
            "oof_auroc_off_topic": _auroc(p_off, off.astype(bool)),
            "oof_answered": float(kept.mean()),
            "oof_false_abstention": float(1 - kept[answerable].mean()),
            "oof_abstention_on_unanswerable": float(1 - kept[~answerable].mean()),
            "max_withheld_correct": max_withheld_correct,
            # the answer threshold on top of it
            "oof_withheld": {c: int((kept & ~answered & (outcome == i)).sum()) for i, c in enumerate(ANSWER_CLASSES)},
            "oof_answered_after": float(answered.mean()),
            "oof_false_abstention_after": float(1 - answered[answerable].mean()),
            "oof_abstention_on_unanswerable_after": float(1 - answered[~answerable].mean())}
    if question is not None:
        meta.update(c_question=question.c, oof_auroc_question=_auroc(question.oof_log_odds, answerable),
                    n_rewordings=question.n_rewordings)
    if question_off is not None:
        meta.update(c_question_off_topic=question_off.c,
                    oof_auroc_question_off_topic=_auroc(question_off.oof_log_odds, off.astype(bool)))
    return AnswerabilityModel(vocabulary, **heads,
                              threshold=threshold, meta=meta, question=question.head if question is not None else None,
                              answer_threshold=answer_threshold,
                              question_off_topic=question_off.head if question_off is not None else None)

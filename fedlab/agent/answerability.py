"""The answerability model: one fitted object behind every evidence decision and every reported
confidence of the agent (fitted on the dev split by ``python -m fedlab.calibrate``).

Contract and design notes: docs/answerability.md#design-notes-fedlabagentanswerabilitypy.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fedlab.agent.evidence import SIMILARITY_FEATURE, Vocabulary
from fedlab.errors import FedlabError

ANSWER_CLASSES = ("correct", "wrong", "unanswerable")  # a question's outcome
ANSWERABLE_CLASSES = ("unanswerable", "answerable")
CORRECTNESS_CLASSES = ("wrong", "correct")
OFF_TOPIC_CLASSES = ("on_topic", "off_topic")
MODEL_KIND = "fedlab.answerability/4"
READABLE_KINDS = ("fedlab.answerability/2", "fedlab.answerability/3", MODEL_KIND)  # /2: no question head; /3: no off-topic one
QUESTION_FEATURE = "question_answerable"  # the question head's log-odds, a feature of the answerable head
QUESTION_OFF_TOPIC_FEATURE = "question_off_topic"  # the question_off_topic head's, a feature of the off-topic head
# the heads over the question's embedding: attribute -> (the feature its log-odds is, the head reading it, its classes)
QUESTION_HEADS = {"question": (QUESTION_FEATURE, "answerable", ANSWERABLE_CLASSES),
                  "question_off_topic": (QUESTION_OFF_TOPIC_FEATURE, "off_topic", OFF_TOPIC_CLASSES)}
HEADS = {"off_topic": OFF_TOPIC_CLASSES, "answerable": ANSWERABLE_CLASSES, "correctness": CORRECTNESS_CLASSES}


@dataclass
class LogisticHead:
    """A fitted (multinomial) logistic regression over standardised features."""

    classes: list[str]
    features: list[str]
    mean: list[float]
    scale: list[float]
    coef: list[list[float]]  # one row per class (one row for a binary model: the second class)
    intercept: list[float]

    def _logits(self, x: np.ndarray) -> np.ndarray:
        """One row of logits per row of ``x`` (features in ``features`` order)."""
        z = (np.asarray(x, dtype=float) - np.asarray(self.mean)) / np.asarray(self.scale)
        return z @ np.asarray(self.coef).T + np.asarray(self.intercept)

    def proba_many(self, rows: list[dict[str, float]]) -> np.ndarray:
        """Each row's class probabilities. A row must hold every feature the head reads: a missing
        one read as 0 would shift the answer silently (0 is not the neutral value of a standardised
        feature)."""
        for r in rows:
            missing = [f for f in self.features if f not in r]
            if missing:
                raise ValueError(f"this head reads {', '.join(missing)}, which the features lack")
        x = np.array([[float(r[f]) for f in self.features] for r in rows], dtype=float)
        logits = self._logits(x)
        if len(self.coef) == 1:  # binary: the row scores the second class
            p = 1.0 / (1.0 + np.exp(-logits[:, 0]))
            return np.column_stack([1.0 - p, p])
        logits -= logits.max(axis=1, keepdims=True)
        e = np.exp(logits)
        return e / e.sum(axis=1, keepdims=True)

    def log_odds(self, vector: np.ndarray) -> float:
        """A binary head's log-odds of its second class for one feature vector (in ``features`` order)."""
        return float(self._logits(np.asarray(vector, dtype=float)[None, :])[0, 0])

    def proba(self, row: dict[str, float]) -> dict[str, float]:
        return dict(zip(self.classes, (float(v) for v in self.proba_many([row])[0])))

    def to_json(self) -> dict:
        return {"classes": self.classes, "features": self.features, "mean": self.mean, "scale": self.scale,
                "coef": self.coef, "intercept": self.intercept}

    @classmethod
    def from_json(cls, data: dict) -> LogisticHead:
        head = cls([str(c) for c in data["classes"]], [str(f) for f in data["features"]],
                   [float(v) for v in data["mean"]], [float(v) for v in data["scale"]],
                   [[float(v) for v in row] for row in data["coef"]], [float(v) for v in data["intercept"]])
        n = len(head.features)
        if len(head.mean) != n or len(head.scale) != n or any(len(r) != n for r in head.coef) \
                or len(head.coef) != len(head.intercept) or len(head.coef) not in (1, len(head.classes)):
            raise ValueError("a logistic head needs one mean/scale per feature and one coef row per class")
        return head


@dataclass(frozen=True)
class Outcome:
    correct: float
    wrong: float
    unanswerable: float

    @property
    def answerable(self) -> float:
        return self.correct + self.wrong


@dataclass
class AnswerabilityModel:
    vocabulary: Vocabulary
    off_topic: LogisticHead
    answerable: LogisticHead
    correctness: LogisticHead  # fitted on the answerable questions only
    threshold: float  # abstain when P(answerable) is below it
    meta: dict = field(default_factory=dict)  # provenance: split, dataset/corpus hash, target, fit measures
    question: LogisticHead | None = None  # over the question's embedding (meta["embedder"]); None: not fitted
    answer_threshold: float = 0.0  # withhold a drafted answer whose P(correct) is below it
    question_off_topic: LogisticHead | None = None  # over the question's embedding too; None: not fitted

    @property
    def reads_questions(self) -> bool:
        """Whether a head reads the question's embedding."""
        return any(getattr(self, name) is not None for name in QUESTION_HEADS)

    def question_features(self, vector: np.ndarray | None) -> dict[str, float]:
        """The log-odds of each question head for a question's embedding, as the features the
        other heads read (QUESTION_HEADS); without one (a searcher that cannot embed), the mean the
        reading head was fitted on: a neutral value."""
        out = {}
        for name, (feature, reader, _) in QUESTION_HEADS.items():
            head, reads = getattr(self, name), getattr(self, reader)
            if head is None:
                continue
            if vector is None:
                out[feature] = reads.mean[reads.features.index(feature)] if feature in reads.features else 0.0
                continue
            if len(vector) != len(head.features):
                raise FedlabError(f"the answerability model's question head reads {len(head.features)}-d "
                                  f"embeddings ({self.meta.get('embedder')}), this question's has {len(vector)}: "
                                  "refit it with `python -m fedlab.calibrate` for this embedder")
            out[feature] = head.log_odds(vector)
        return out

    def off_topic_p(self, features: dict[str, float]) -> float:
        return self.off_topic.proba(features)["off_topic"]

    def answerable_p(self, features: dict[str, float]) -> float:
        """P(the documents answer the question), from the question's and the evidence's features."""
        return self.answerable.proba(features)["answerable"]

    def correct_p(self, features: dict[str, float]) -> float:
        """P(the answer states every key fact | the question is answerable): the correctness head
        reads the answer's features (fedlab.agent.evidence.answer_features and the similarity) and
        the question's length (its features, from the search). The similarity alone may be absent
        (no embedder): it is read as the mean it was fitted on, a neutral value."""
        head = self.correctness
        neutral = {SIMILARITY_FEATURE: head.mean[head.features.index(SIMILARITY_FEATURE)]} \
            if SIMILARITY_FEATURE in head.features else {}
        return head.proba({**neutral, **features})["correct"]

    def outcome(self, features: dict[str, float]) -> Outcome:
        """The three outcomes for an answer's features (the evidence's and the answer's)."""
        answerable = self.answerable_p(features)
        correct = self.correct_p(features)
        return Outcome(answerable * correct, answerable * (1.0 - correct), 1.0 - answerable)

    def to_json(self) -> dict:
        return {"kind": MODEL_KIND, "threshold": self.threshold, "answer_threshold": self.answer_threshold, "meta": self.meta,
                **{name: getattr(self, name).to_json() for name in HEADS},
                **{name: getattr(self, name).to_json() if getattr(self, name) is not None else None
                   for name in QUESTION_HEADS},
                "vocabulary": self.vocabulary.to_json()}

    @classmethod
    def from_json(cls, data: dict) -> AnswerabilityModel:
        if data.get("kind") not in READABLE_KINDS:
            raise ValueError(f"kind {data.get('kind')!r}, expected {MODEL_KIND!r}")
        heads = {name: LogisticHead.from_json(data[name]) for name in HEADS}
        questions = {name: LogisticHead.from_json(data[name]) if data.get(name) else None for name in QUESTION_HEADS}
        expected = {**HEADS, **{name: classes for name, (_, _, classes) in QUESTION_HEADS.items()}}
        for name, head in {**heads, **questions}.items():
            if head is not None and tuple(head.classes) != expected[name]:
                raise ValueError(f"the {name} head must predict {expected[name]}")
        return cls(Vocabulary.from_json(data["vocabulary"]), **heads, threshold=float(data["threshold"]),
                   meta=dict(data.get("meta") or {}), **questions,
                   answer_threshold=float(data.get("answer_threshold") or 0.0))

    def save(self, path: str | Path) -> None:
        from fedlab.io import write_text

        write_text(path, json.dumps(self.to_json(), separators=(",", ":")) + "\n")


def load_model(path: str | None) -> AnswerabilityModel | None:
    if not path:
        return None
    try:
        return AnswerabilityModel.from_json(json.loads(Path(path).read_text(encoding="utf-8")))
    except FileNotFoundError:
        raise FedlabError(f"agent.calibration={path} does not exist: fit it with "
                          "`python -m fedlab.calibrate`, or set agent.calibration=null") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise FedlabError(f"agent.calibration={path} is not an answerability model ({exc}): refit it with "
                          "`python -m fedlab.calibrate`") from None

"""A learned sentence ranker: the reader's rule 3 ranks sentences by its score instead of the
hand-set weights (``lm.sentence_ranker``; fitted by ``python -m fedlab.fit_sentence_ranker``).

The model is a logistic regression over the reader's features of a sentence
(fedlab.skills.reader.sentence_table), stored as plain JSON — the feature names, their means and
scales, a coefficient each and the intercept, with the fit's provenance under ``meta``; never a
pickle. ``load_ranker(path)`` reads one (once per process); ``SentenceRanker.score(features)`` is
the probability that a sentence is one the question's answer quotes. Pure Python: no numpy.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from fedlab.errors import FedlabError

FORMAT = "fedlab-sentence-ranker/1"


@dataclass(frozen=True)
class SentenceRanker:
    """score(features) = sigmoid(intercept + sum coef * (value - mean) / scale) over ``names``."""

    names: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    min_share: float = 0.5  # a sentence besides the best is said when it scores this share of the best (chosen on dev)
    meta: dict = field(default_factory=dict, compare=False, hash=False)

    def score(self, features: dict[str, float]) -> float:
        z = self.intercept + math.fsum(w * (features[n] - m) / s
                                       for n, m, s, w in zip(self.names, self.mean, self.scale, self.coef))
        return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))

    def to_json(self) -> dict:
        return {"format": FORMAT, "features": list(self.names), "mean": list(self.mean), "scale": list(self.scale),
                "coef": list(self.coef), "intercept": self.intercept, "min_share": self.min_share, "meta": self.meta}

    @classmethod
    def from_json(cls, data: dict, where: str = "the ranker") -> "SentenceRanker":
        try:
            if data.get("format") != FORMAT:
                raise ValueError(f"format is {data.get('format')!r}, not {FORMAT!r}")
            names = tuple(str(n) for n in data["features"])
            mean, scale, coef = (tuple(float(v) for v in data[k]) for k in ("mean", "scale", "coef"))
            if not (len(names) == len(mean) == len(scale) == len(coef)) or any(s <= 0 for s in scale):
                raise ValueError("features, mean, scale and coef must align, every scale > 0")
            min_share = float(data.get("min_share", 0.5))
            if not 0.0 <= min_share <= 1.0:
                raise ValueError(f"min_share {min_share} is not in [0, 1]")
            return cls(names, mean, scale, coef, float(data["intercept"]), min_share, dict(data.get("meta") or {}))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise FedlabError(f"{where} is not a sentence ranker ({exc}): fit one with "
                              "`python -m fedlab.fit_sentence_ranker`, or set lm.sentence_ranker=null") from None


def resolve(path: str | Path) -> Path:
    """``path`` as given when absolute, else under the checkout (``conf/ranker/<file>``)."""
    from fedlab.config import CONF_DIR

    p = Path(path)
    return p if p.is_absolute() else CONF_DIR.parent / p


@lru_cache(maxsize=8)
def load_ranker(path: str) -> SentenceRanker:
    """The ranker at ``path`` (resolve), read once per process; one clear line when it cannot be."""
    where = resolve(path)
    try:
        data = json.loads(where.read_text(encoding="utf-8"))
    except OSError as exc:
        raise FedlabError(f"lm.sentence_ranker={path} cannot be read ({type(exc).__name__}): fit one with "
                          "`python -m fedlab.fit_sentence_ranker`, or set lm.sentence_ranker=null") from None
    except json.JSONDecodeError as exc:
        raise FedlabError(f"lm.sentence_ranker={path} is not JSON ({exc.msg}, line {exc.lineno}): refit it with "
                          "`python -m fedlab.fit_sentence_ranker`, or set lm.sentence_ranker=null") from None
    if not isinstance(data, dict):
        raise FedlabError(f"lm.sentence_ranker={path} is not a sentence ranker: fit one with "
                          "`python -m fedlab.fit_sentence_ranker`, or set lm.sentence_ranker=null")
    return SentenceRanker.from_json(data, f"lm.sentence_ranker={path}")

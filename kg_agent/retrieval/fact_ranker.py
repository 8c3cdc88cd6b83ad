"""One learned, calibrated model that orders a question's fact candidates and says how
sure the first one is.

Why learned: the hand-weighted score it replaces (coverage + 0.3 x fit − 0.1 per hop …)
and its confidence formula were fitted by eye to one question set; on articles nobody
had looked at, right answers scored too low to be shown (issue 53). The signals stay
(how much of the relation a key explains, whether the value is of the kind asked, the
embedder's similarity of the question to "topic + key"); a conditional logit (a softmax
over one question's candidates) weighs them, fitted by ``scripts/train_fact_ranker.py``
on the plain questions of the English sample, and a Platt scaling fitted on
article-disjoint held-out folds turns the first candidate's score into a probability:
the ``confidence`` a reader sees.

The weights are a small JSON file (:data:`DEFAULT_PATH`) that the training script
reproduces; scoring is numpy alone (scikit-learn is needed only to train). A graph
without vectors has no similarities: its candidates are scored by a second set of
weights fitted with those features left out.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "DEFAULT_PATH",
    "FEATURES",
    "POOL_FEATURES",
    "SIGNS",
    "SIMILARITY_FEATURES",
    "FactRanker",
    "RankerWeights",
]

#: What each candidate is described by, in the order of the weights.
FEATURES: tuple[str, ...] = (
    # share of the question's relation words the key(s) explain, by the table or by name
    "coverage",
    # 1: the value is of the kind asked (a place for "where"); 0.5: could be; 0: is not
    "fit",
    # reached through another fact ("the director of X" → his birth place)
    "two_hops",
    # words of the key's name that the question does not ask ("density" for "how many")
    "unasked_words",
    # the key is itself a word the relation means ("capital"), not one holding it
    "key_asked",
    # items in the fact (a list of ten spouses is seldom one answer)
    "items",
    # other candidates whose short answer is the same value
    "agreement",
    # the embedder's cosine of the relation phrase to the key's name
    "key_similarity",
    # cosine of the whole question to "topic + key name" (names the topic and the key)
    "topic_key_similarity",
    # 1 / rank of topic_key_similarity among the question's candidates
    "similarity_rank",
    # share of the short answer's words the question already writes
    "echo",
    # the candidates are the facts of articles the text search found, the topics'
    # explaining nothing asked: the same for each of a question's candidates, so it
    # shifts the calibration (:attr:`RankerWeights.searched_shift`), not the order
    "searched",
)
#: The side each feature may push a candidate to (+1 up, -1 down, 0 either): what the
#: feature means, not what one sample fits (fitted freely on the plain set, ``echo``
#: took a positive weight and ``agreement`` a negative one, and a birth name outranked
#: the birth place for "where was Ada Lovelace born").
SIGNS: dict[str, int] = {
    "coverage": 1,
    "fit": 1,
    "two_hops": 0,
    "unasked_words": -1,
    "key_asked": 1,
    "items": 0,
    "agreement": 1,
    "key_similarity": 1,
    "topic_key_similarity": 1,
    "similarity_rank": 1,
    "echo": -1,
    "searched": 0,
}
#: Features that describe a question's candidates together: calibrated, never ranked.
POOL_FEATURES = frozenset({"searched"})
#: Features that need the embedder: zero, and a model fitted without them, when the
#: graph has no vectors.
SIMILARITY_FEATURES = frozenset({"key_similarity", "topic_key_similarity", "similarity_rank"})
DEFAULT_PATH = Path(__file__).resolve().parent.parent / "data" / "fact_ranker.json"


@dataclass(frozen=True)
class RankerWeights:
    """A linear score over standardised features (a conditional logit's: it orders one
    question's candidates), and the Platt calibration of the first one's score."""

    features: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float
    platt: tuple[float, float]  # probability = sigmoid(a * score + b)
    #: added to the calibrated logit when the candidates are the found articles' facts
    searched_shift: float = 0.0

    def scores(self, x: np.ndarray) -> np.ndarray:
        """The model's score (a logit) of each row of ``x`` (columns: :data:`FEATURES`)."""
        cols = [FEATURES.index(f) for f in self.features]
        z = (x[:, cols] - self.mean) / self.scale
        return np.asarray(z @ self.coef + self.intercept, dtype=np.float64)

    def probability(self, score: float, searched: bool = False) -> float:
        a, b = self.platt
        return _sigmoid(a * score + b + (self.searched_shift if searched else 0.0))

    def to_json(self) -> dict[str, Any]:
        return {
            "features": list(self.features),
            "mean": [round(float(v), 6) for v in self.mean],
            "scale": [round(float(v), 6) for v in self.scale],
            "coef": [round(float(v), 6) for v in self.coef],
            "intercept": round(float(self.intercept), 6),
            "platt": [round(float(v), 6) for v in self.platt],
            "searched_shift": round(float(self.searched_shift), 6),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RankerWeights:
        feats = tuple(str(f) for f in data["features"])
        unknown = set(feats) - set(FEATURES)
        if unknown:
            raise ValueError(f"unknown ranker features: {sorted(unknown)}")
        return cls(
            features=feats,
            mean=np.asarray(data["mean"], dtype=np.float64),
            scale=np.asarray(data["scale"], dtype=np.float64),
            coef=np.asarray(data["coef"], dtype=np.float64),
            intercept=float(data["intercept"]),
            platt=(float(data["platt"][0]), float(data["platt"][1])),
            searched_shift=float(data.get("searched_shift", 0.0)),
        )


@dataclass(frozen=True)
class FactRanker:
    """Both weight sets and the two thresholds chosen on held-out folds:
    ``use_at`` (below it a fact does not answer: the text does, or "not in the graph")
    and ``show_at`` (at or above it the answer is shown in bold; set for nine shown
    answers in ten right)."""

    with_embedder: RankerWeights
    without_embedder: RankerWeights
    use_at: float
    show_at: float
    trained_on: dict[str, Any]

    def weights(self, embedded: bool) -> RankerWeights:
        return self.with_embedder if embedded else self.without_embedder

    def to_json(self) -> dict[str, Any]:
        return {
            "model": "conditional logit over fact candidates, Platt-calibrated",
            "with_embedder": self.with_embedder.to_json(),
            "without_embedder": self.without_embedder.to_json(),
            "use_at": round(self.use_at, 4),
            "show_at": round(self.show_at, 4),
            "trained_on": self.trained_on,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FactRanker:
        return cls(
            with_embedder=RankerWeights.from_json(data["with_embedder"]),
            without_embedder=RankerWeights.from_json(data["without_embedder"]),
            use_at=float(data["use_at"]),
            show_at=float(data["show_at"]),
            trained_on=dict(data.get("trained_on", {})),
        )

    @classmethod
    def load(cls, path: str | Path = DEFAULT_PATH) -> FactRanker:
        return cls.from_json(json.loads(Path(path).read_text(encoding="utf-8")))

    def save(self, path: str | Path) -> None:
        text = json.dumps(self.to_json(), indent=1, ensure_ascii=False) + "\n"
        Path(path).write_text(text, encoding="utf-8")


@lru_cache(maxsize=1)
def default_ranker() -> FactRanker:
    """The committed model (read once per process)."""
    return FactRanker.load(DEFAULT_PATH)


def _sigmoid(v: float) -> float:
    if v >= 0:
        return 1.0 / (1.0 + math.exp(-v))
    e = math.exp(v)
    return e / (1.0 + e)

"""Is the question about something the graph holds? One calibrated probability.

The name look-ups of :mod:`kg_agent.retrieval.grounding` are exact: a question typed
in lower case ("is the atlantic the largest ocean in the world"), an abbreviation
("the afc"), a plural or an adjective of a title ("agnostids", "angolan") finds no
name, and they refused 44 of the 458 answerable questions of the English sample. A
logistic regression weighs their findings together with signals that need no name:

* how close the search's sections are to the question (the embedder's cosine, best
  and top three);
* whether the titles of the top articles are written in the question (all their words,
  or their initials: "afc");
* the question's words that no top section writes, and how rare the rarest of them is
  in the graph (a rare word nothing found writes, "osmium", "thunberg", is a thing the
  graph lacks; a common one, "called", is not);
* the reader's share of the question the top articles hold, names counted whole
  (:func:`~kg_agent.answering.reader.evidence_support`: "Alice de Lusignan" is not
  held by an article about Mary of Lusignan), which a hand threshold used to decide;
* the look-ups' own verdicts (an article found, a name only mentioned, a name missing),
  and whether the question is in lower case.

Its probability is ``Grounding.probability``; below ``refuse_at`` (set on
article-disjoint held-out folds for 95 % of the unanswerable questions refused) the
answer is "Not in the graph". ``scripts/train_grounding.py`` fits it; without vectors
(no cosine) the look-ups decide alone, as before.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from kg_agent.language.question import Question
from kg_agent.language.tokens import STOP_WORDS, fold, words
from kg_agent.retrieval.base import Evidence

__all__ = [
    "DEFAULT_PATH",
    "FEATURES",
    "GroundingModel",
    "default_grounding_model",
    "features",
]

DEFAULT_PATH = Path(__file__).resolve().parent.parent / "data" / "grounding_model.json"

FEATURES: tuple[str, ...] = (
    "title_in_question_top3",
    "title_in_question_top1",
    "absent_fraction",
    "absent_any",
    "absent_rarity",
    "best_cosine",
    "top3_cosine",
    "support",
    "found",
    "weak",
    "missing",
    "lower_case",
)

_TOP_ARTICLES = 3
_TOP_SECTIONS = 5
_COSINE_SECTIONS = 10
_STEM = 5  # words match on their first letters: "amphibians" ~ "amphibian"
#: words of a question that name no thing ("whats the capital", "how many")
_ASKING = frozenset(["whats", "many", "much", "called", "mean", "means"])

Rarity = Callable[[Sequence[str]], list[float]]


def _content(text: str) -> list[str]:
    return [w for w in words(fold(text)) if len(w) > 2 and w not in STOP_WORDS | _ASKING]


def _title_words(title: str) -> list[str]:
    return [w for w in words(fold(title.split(" (")[0])) if w not in STOP_WORDS]


def _in_question(asked: list[str], titles: Sequence[str]) -> float:
    """The largest share of a title's words the question writes (1 for its initials)."""
    stems = {w[:_STEM] for w in asked}
    best = 0.0
    for t in titles:
        own = _title_words(t)
        if not own:
            continue
        share = sum(w[:_STEM] in stems for w in own) / len(own)
        if len(own) >= 2 and "".join(w[0] for w in own) in asked:
            share = 1.0
        best = max(best, share)
    return best


def features(
    question: Question,
    found: int,
    weak: bool,
    missing: int,
    evidence: Sequence[Evidence],
    rarity: Rarity,
    support: float = 0.0,
) -> np.ndarray | None:
    """The row of :data:`FEATURES` for one question (``support``: the reader's share,
    :func:`~kg_agent.answering.reader.evidence_support`); None when no evidence has a
    cosine (a graph without vectors: the look-ups decide alone)."""
    cosines = sorted(
        (ev.scores["semantic"] for ev in evidence[:_COSINE_SECTIONS] if "semantic" in ev.scores),
        reverse=True,
    )
    if not cosines:
        return None
    asked = words(fold(question.text))
    content = _content(question.text)
    written: set[str] = set()
    for ev in evidence[:_TOP_SECTIONS]:
        written.update(w[:_STEM] for w in words(fold(f"{ev.title} {ev.content}")))
    absent = [w for w in content if w[:_STEM] not in written]
    titles = list(dict.fromkeys(ev.title for ev in evidence))[:_TOP_ARTICLES]
    row = [
        _in_question(asked, titles),
        _in_question(asked, titles[:1]),
        len(absent) / max(1, len(content)),
        float(bool(absent)),
        max(rarity(absent), default=0.0),
        cosines[0],
        float(np.mean(cosines[:3])),
        support,
        float(found > 0),
        float(weak),
        float(missing > 0),
        float(question.text == question.text.lower()),
    ]
    return np.asarray(row, dtype=np.float64)


@dataclass(frozen=True)
class GroundingModel:
    """A logistic regression over standardised :data:`FEATURES`, and the probability
    below which a question is refused."""

    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float
    refuse_at: float
    trained_on: dict[str, Any] = field(default_factory=dict)

    def probability(self, x: np.ndarray) -> float:
        """The probability that the graph holds what the question asks about."""
        z = float(((x - self.mean) / self.scale) @ self.coef + self.intercept)
        if z >= 0:
            return 1.0 / (1.0 + math.exp(-z))
        e = math.exp(z)
        return e / (1.0 + e)

    def to_json(self) -> dict[str, Any]:
        return {
            "model": "logistic regression: does the graph hold what the question asks about",
            "features": list(FEATURES),
            "mean": [round(float(v), 6) for v in self.mean],
            "scale": [round(float(v), 6) for v in self.scale],
            "coef": [round(float(v), 6) for v in self.coef],
            "intercept": round(float(self.intercept), 6),
            "refuse_at": round(float(self.refuse_at), 4),
            "trained_on": self.trained_on,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GroundingModel:
        if tuple(data["features"]) != FEATURES:
            raise ValueError(f"grounding model features {data['features']} are not {FEATURES}")
        return cls(
            mean=np.asarray(data["mean"], dtype=np.float64),
            scale=np.asarray(data["scale"], dtype=np.float64),
            coef=np.asarray(data["coef"], dtype=np.float64),
            intercept=float(data["intercept"]),
            refuse_at=float(data["refuse_at"]),
            trained_on=dict(data.get("trained_on", {})),
        )

    @classmethod
    def load(cls, path: str | Path = DEFAULT_PATH) -> GroundingModel:
        return cls.from_json(json.loads(Path(path).read_text(encoding="utf-8")))

    def save(self, path: str | Path) -> None:
        text = json.dumps(self.to_json(), indent=1, ensure_ascii=False) + "\n"
        Path(path).write_text(text, encoding="utf-8")


@lru_cache(maxsize=1)
def default_grounding_model() -> GroundingModel | None:
    """The committed model (read once per process); None before one was trained."""
    if not DEFAULT_PATH.exists():
        return None
    return GroundingModel.load(DEFAULT_PATH)

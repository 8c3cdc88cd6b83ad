"""Fit the grounding model (:mod:`kg_agent.retrieval.grounding_model`) on plain
questions: each question's features, as the agent computes them, labelled by whether
the graph can answer it.

The refusal threshold is chosen on article-disjoint out-of-fold probabilities (the
folds of :func:`~kg_agent.evaluation.fact_training.article_folds`): the lowest that
refuses :data:`REFUSED_UNANSWERABLE` of the unanswerable questions, so that as few
answerable ones as possible are refused with them.

Fitting on the dev sets' questions too (asked of their own graph and of the others')
was measured and left out: it refused more of the plain set's answerable questions
(5.7 % against 3.3 % out of fold) for out-of-graph refusals the plain-fitted model
already keeps above 95 % (``docs/notes/answers.md``).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from kg_agent.evaluation.fact_training import article_folds
from kg_agent.evaluation.trust import PlainQuestion
from kg_agent.retrieval.grounding_model import FEATURES, GroundingModel

if TYPE_CHECKING:
    from kg_agent.agent import KnowledgeGraphAgent

__all__ = [
    "REFUSED_UNANSWERABLE",
    "collect_grounding",
    "load_grounding_samples",
    "save_grounding_samples",
    "train_grounding",
]

#: the share of unanswerable questions the threshold refuses, out of fold
REFUSED_UNANSWERABLE = 0.95


def collect_grounding(
    agent: KnowledgeGraphAgent,
    questions: Sequence[PlainQuestion],
    *,
    progress: Callable[[int], None] | None = None,
) -> dict[str, np.ndarray]:
    """Ask every question once and keep its grounding features (by ``qid``); a question
    the model does not see (no words, no cosines) has no entry."""
    out: dict[str, np.ndarray] = {}
    with observing(agent, out, questions):
        for i, pq in enumerate(questions):
            agent.query(pq.question)
            if progress is not None:
                progress(i + 1)
    return out


class observing:
    """While open, the agent's grounder writes each asked question's features into
    ``out`` (by the qid of the plain question with that text; the first time only)."""

    def __init__(
        self,
        agent: KnowledgeGraphAgent,
        out: dict[str, np.ndarray],
        questions: Sequence[PlainQuestion],
    ) -> None:
        self.grounder = agent.components.grounder
        self.out = out
        self.ids: dict[str, str] = {}
        for q in questions:
            self.ids.setdefault(q.question, q.qid)

    def _see(self, question: Any, x: np.ndarray) -> None:
        qid = self.ids.get(question.text)
        if qid is not None and qid not in self.out:
            self.out[qid] = x.round(4)

    def __enter__(self) -> observing:
        self.grounder.observer = self._see
        return self

    def __exit__(self, *exc: object) -> None:
        self.grounder.observer = None


def save_grounding_samples(path: str | Path, samples: dict[str, np.ndarray]) -> None:
    """The features (numbers only), gzipped JSON, same bytes for the same samples."""
    data = {
        "features": list(FEATURES),
        "questions": {qid: x.round(4).tolist() for qid, x in samples.items()},
    }
    text = json.dumps(data, separators=(",", ":"), sort_keys=True)
    Path(path).write_bytes(gzip.compress(text.encode(), mtime=0))


def load_grounding_samples(path: str | Path) -> dict[str, np.ndarray]:
    data = json.loads(gzip.decompress(Path(path).read_bytes()))
    if tuple(data["features"]) != FEATURES:
        raise ValueError(f"{path}: features {data['features']} are not {list(FEATURES)}")
    return {qid: np.asarray(x, dtype=np.float64) for qid, x in data["questions"].items()}


def _fit(x: np.ndarray, y: np.ndarray) -> GroundingModel:
    from sklearn.linear_model import LogisticRegression

    mean = x.mean(axis=0).round(6)
    scale = np.where(x.std(axis=0) > 1e-9, x.std(axis=0), 1.0).round(6)
    lr = LogisticRegression(C=1.0, max_iter=2000).fit((x - mean) / scale, y)
    return GroundingModel(mean, scale, lr.coef_[0].round(6), round(float(lr.intercept_[0]), 6), 0.5)


def _refuse_at(probs: np.ndarray, y: np.ndarray) -> float:
    """The lowest threshold under which :data:`REFUSED_UNANSWERABLE` of the
    unanswerable questions fall (halfway to the next probability above it)."""
    neg = np.sort(probs[y == 0])
    if not len(neg):
        return 0.5
    need = int(np.ceil(REFUSED_UNANSWERABLE * len(neg)))
    below = neg[need - 1]
    above = probs[probs > below]
    nxt = float(above.min()) if len(above) else 1.0
    return round((float(below) + nxt) / 2, 4)


def train_grounding(
    samples: dict[str, np.ndarray],
    questions: Sequence[PlainQuestion],
    *,
    k: int = 5,
    note: dict[str, Any] | None = None,
) -> GroundingModel:
    """The model fitted on every question with features; its threshold from an inner
    article-disjoint ``k``-fold cross-validation."""
    known = [q for q in questions if q.qid in samples]
    folds = article_folds(known, k)
    x = np.stack([samples[q.qid] for q in known])
    y = np.asarray([int(q.answerable) for q in known])
    fold = np.asarray([folds[q.qid] for q in known])
    oof = np.zeros(len(known))
    for f in range(k):
        train, held = fold != f, fold == f
        if held.any() and len(set(y[train])) == 2:
            m = _fit(x[train], y[train])
            oof[held] = [m.probability(row) for row in x[held]]
    refuse_at = _refuse_at(oof, y)
    full = _fit(x, y)
    trained_on = {
        "questions": len(known),
        "unanswerable": int((y == 0).sum()),
        "folds": k,
        "out_of_fold_unanswerable_refused": round(float((oof[y == 0] < refuse_at).mean()), 4),
        "out_of_fold_answerable_refused": int((oof[y == 1] < refuse_at).sum()),
        **(note or {}),
    }
    return GroundingModel(full.mean, full.scale, full.coef, full.intercept, refuse_at, trained_on)

"""Fit the sentence ranker (:mod:`kg_agent.answering.sentence_ranker`) on plain questions:
each answerable question's evidence sentences, as the reader splits them, labelled by
whether they write a gold answer (:func:`~kg_agent.evaluation.metrics.answer_in_text`,
the test that "the answer text holds the gold" applies).

A logistic regression, each question weighing the same whatever its number of
sentences. What it is judged by is out of fold, on article-disjoint folds
(:func:`~kg_agent.evaluation.fact_training.article_folds`): for how many questions its
three best sentences hold the gold. Deterministic: the same samples give the same JSON.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from kg_agent.answering.linear import fit_logistic
from kg_agent.answering.reader import UNSURE_SENTENCES
from kg_agent.answering.sentence_ranker import FEATURES, SentenceWeights
from kg_agent.evaluation.fact_training import (
    QuestionCandidates,
    article_folds,
    load_samples,
    save_samples,
)
from kg_agent.evaluation.metrics import answer_in_text
from kg_agent.evaluation.observing import Observing, ask_all
from kg_agent.evaluation.trust import PlainQuestion

if TYPE_CHECKING:
    from kg_agent.agent import KnowledgeGraphAgent

__all__ = [
    "QuestionSentences",
    "collect_sentences",
    "load_sentence_samples",
    "observing_sentences",
    "save_sentence_samples",
    "train_sentences",
]

#: the sentences a reading with nothing in bold shows
SHOWN = UNSURE_SENTENCES
_C = 1.0  # inverse regularisation


#: One question's sentences: features (rows, in the reader's split order) and whether
#: each writes a gold answer.
QuestionSentences = QuestionCandidates


class observing_sentences(Observing):
    """While open, the agent's sentence ranker hands each answerable question's
    sentences, labelled, to ``out`` (by qid; the first reading of the question only)."""

    def __init__(
        self,
        agent: KnowledgeGraphAgent,
        out: dict[str, QuestionCandidates],
        questions: Sequence[PlainQuestion],
    ) -> None:
        super().__init__(agent.components.sentences, out, questions)

    def see(self, question: str, texts: Sequence[str], x: np.ndarray) -> None:
        q = self.first(question)
        if q is None or not len(texts):
            return
        y = np.asarray([bool(answer_in_text(q.answers, t)) for t in texts], dtype=np.float64)
        self.out[q.qid] = QuestionSentences(q.qid, x.round(4), y)


def collect_sentences(
    agent: KnowledgeGraphAgent,
    questions: Sequence[PlainQuestion],
    *,
    progress: Callable[[int], None] | None = None,
) -> dict[str, QuestionSentences]:
    """Ask every question once, offline, and keep its sentences (by ``qid``); a question
    that is unanswerable, or whose reading had no sentences, has no entry."""
    return ask_all(agent, questions, observing_sentences(agent, {}, questions), progress)


def save_sentence_samples(path: str | Path, samples: dict[str, QuestionSentences]) -> None:
    """The features and labels (numbers only), gzipped JSON, same bytes for the same
    samples: what the fit reads, so that it can be reproduced without the graph."""
    save_samples(path, samples, FEATURES)


def load_sentence_samples(path: str | Path) -> dict[str, QuestionSentences]:
    return load_samples(path, FEATURES)


def _fit(samples: Sequence[QuestionSentences]) -> SentenceWeights:
    if not samples:  # nothing read: every score the same, so the hand order stands
        n = len(FEATURES)
        return SentenceWeights(np.zeros(n), np.ones(n), np.zeros(n), 0.0)
    x = np.vstack([s.x for s in samples])
    y = np.concatenate([s.y for s in samples])
    w = np.concatenate([np.full(len(s.y), 1.0 / len(s.y)) for s in samples])
    mean, scale, coef, intercept = fit_logistic(x, y, w * len(samples), _C)
    # the weights as the JSON file holds them: what is scored is what is saved
    return SentenceWeights.from_json(SentenceWeights(mean, scale, coef, intercept).to_json())


def _holds(s: QuestionSentences, scores: np.ndarray, k: int) -> bool:
    """Whether the ``k`` best by ``scores`` (ties: the earlier sentence) write the gold."""
    best = np.argsort(-scores, kind="stable")[:k]
    return bool(s.y[best].any())


def train_sentences(
    samples: dict[str, QuestionSentences],
    questions: Sequence[PlainQuestion],
    *,
    k: int = 5,
    note: dict[str, Any] | None = None,
) -> SentenceWeights:
    """The weights fitted on every question with sentences, with how often their best
    sentences held the gold out of fold (an inner article-disjoint ``k``-fold split)."""
    known = [q for q in questions if q.qid in samples]
    folds = article_folds(known, k)
    top1 = topk = 0
    for f in range(k):
        train = [samples[q.qid] for q in known if folds[q.qid] != f]
        held = [samples[q.qid] for q in known if folds[q.qid] == f]
        if not train or not held:
            continue
        weights = _fit(train)
        for s in held:
            scores = weights.scores(s.x)
            top1 += _holds(s, scores, 1)
            topk += _holds(s, scores, SHOWN)
    full = _fit([samples[q.qid] for q in known])
    trained_on = {
        "questions": len(known),
        "sentences": int(sum(len(samples[q.qid].y) for q in known)),
        "with_the_gold": int(sum(bool(samples[q.qid].y.any()) for q in known)),
        "folds": k,
        "out_of_fold_best_holds_the_gold": int(top1),
        f"out_of_fold_best_{SHOWN}_hold_the_gold": int(topk),
        **(note or {}),
    }
    return SentenceWeights(full.mean, full.scale, full.coef, full.intercept, trained_on)

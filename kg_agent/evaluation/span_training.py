"""Fit the span ranker (:mod:`kg_agent.answering.span_ranker`) on plain questions: the
candidates of each answerable question whose answer is read from the text, labelled by
whether they name a gold answer (:func:`~kg_agent.evaluation.trust.matches`, the test
that "right" applies).

A conditional logit (a softmax over each question's candidates), its L2 penalty chosen
among :data:`LAMBDAS` by the out-of-fold likelihood on the training questions' inner
folds. Its best candidate's share is calibrated on held-out folds: an inner
article-disjoint ``k``-fold split (:func:`~kg_agent.evaluation.fact_training.article_folds`)
gives each question a score from a model that never saw its articles, and a Platt fit of those
scores to "the best candidate is right" makes them probabilities. The bold threshold is
the lowest such probability at which the held-out answers above it were right nine times
in ten, by a lower bound of that precision (:func:`_show_at`). Deterministic: the same
samples give the same JSON.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from kg_agent.answering.span_ranker import FEATURES, SpanCandidate, SpanWeights, best_share
from kg_agent.evaluation.fact_training import (
    QuestionCandidates,
    article_folds,
    load_samples,
    save_samples,
)
from kg_agent.evaluation.observing import Observing, ask_all
from kg_agent.evaluation.trust import PlainQuestion, matches

if TYPE_CHECKING:
    from kg_agent.agent import KnowledgeGraphAgent

__all__ = [
    "collect_spans",
    "load_span_samples",
    "observing_spans",
    "save_span_samples",
    "train_spans",
]

#: The precision bold answers must keep on held-out folds, with this confidence: the
#: threshold is set where a one-sided 95 % Wilson bound of the held-out precision reaches
#: :data:`PRECISION` (a handful right by chance sets none; 20 of 20 right does not yet).
PRECISION = 0.9
_Z = 1.645
_LAMBDA = 3.0  # the L2 penalty of a fit that names none
#: The L2 penalties tried; the one under which the right candidates are likeliest out of
#: fold (the model's own objective, on the training questions' own inner folds, so a held-out
#: fold never chooses it) is used. How often the best pick is right is the figure that
#: counts, but as a chooser it is noise: penalties 3, 10 and 30 stay within four questions
#: of each other, and the winner flipped between 3 and 30 with one refit of the samples,
#: where the likelihood prefers 30 in both (docs/BENCHMARKS.md).
LAMBDAS = (3.0, 10.0, 30.0, 100.0)


class observing_spans(Observing):
    """While open, the agent's span ranker hands each answerable question's candidates,
    labelled, to ``out`` (by qid; the first reading of the question only)."""

    def __init__(
        self,
        agent: KnowledgeGraphAgent,
        out: dict[str, QuestionCandidates],
        questions: Sequence[PlainQuestion],
    ) -> None:
        super().__init__(agent.components.spans, out, questions)

    def see(self, question: str, found: Sequence[SpanCandidate]) -> None:
        q = self.first(question)
        if q is None or not found:
            return
        x = np.vstack([c.x for c in found])
        y = np.asarray([matches(c.text, q.answers) for c in found], dtype=np.float64)
        self.out[q.qid] = QuestionCandidates(q.qid, x, y)


def collect_spans(
    agent: KnowledgeGraphAgent,
    questions: Sequence[PlainQuestion],
    *,
    progress: Callable[[int], None] | None = None,
) -> dict[str, QuestionCandidates]:
    """Ask every question once, offline, and keep its candidates (by ``qid``); a question
    that is unanswerable, or whose answer is not read from spans, has no entry."""
    return ask_all(agent, questions, observing_spans(agent, {}, questions), progress)


def save_span_samples(path: str | Path, samples: dict[str, QuestionCandidates]) -> None:
    save_samples(path, samples, FEATURES)


def load_span_samples(path: str | Path) -> dict[str, QuestionCandidates]:
    return load_samples(path, FEATURES)


def _fit(samples: Sequence[QuestionCandidates], lam: float = _LAMBDA) -> SpanWeights:
    """A conditional logit: the weights that make each question's right candidates
    likely among its own (a softmax per question), with an L2 penalty ``lam``; a
    question without a right candidate teaches the choice nothing (it still sets the
    features' scale)."""
    from scipy.optimize import minimize
    from scipy.special import logsumexp

    n = len(FEATURES)
    if not samples:
        return SpanWeights(np.zeros(n), np.ones(n), np.zeros(n), 0.0)
    x = np.vstack([s.x for s in samples])
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    groups = [((s.x - mean) / scale, s.y > 0) for s in samples if s.y.any()]

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        total, grad = 0.5 * lam * float(w @ w), lam * w
        for xs, right in groups:
            z = xs @ w
            all_z, right_z = logsumexp(z), logsumexp(z[right])
            total -= right_z - all_z
            p = np.exp(z - all_z)
            q = np.zeros_like(z)
            q[right] = np.exp(z[right] - right_z)
            grad = grad - (q - p) @ xs
        return total, grad

    coef = np.zeros(n)
    if groups:
        coef = minimize(loss, coef, jac=True, method="L-BFGS-B").x
    return SpanWeights.from_json(SpanWeights(mean, scale, coef, 0.0).to_json())


def _platt(z: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """``a``, ``b`` with ``sigmoid(a * z + b)`` fitted to ``y`` (nearly unregularised)."""
    if len(set(y.tolist())) < 2:
        return 0.0, (10.0 if y.size and y[0] else -10.0)
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=1e4, max_iter=5000, tol=1e-10)
    model.fit(z.reshape(-1, 1), y)
    return round(float(model.coef_[0][0]), 6), round(float(model.intercept_[0]), 6)


def _wilson_low(right: float, n: int) -> float:
    """A one-sided lower bound of a precision of ``right`` of ``n`` (Wilson)."""
    p = right / n
    centre = p + _Z * _Z / (2 * n)
    margin = _Z * math.sqrt(p * (1 - p) / n + _Z * _Z / (4 * n * n))
    return (centre - margin) / (1 + _Z * _Z / n)


def _show_at(p: np.ndarray, y: np.ndarray) -> float:
    """The lowest confidence from which the held-out answers' precision is at least
    :data:`PRECISION` by its lower bound (above 1: none)."""
    order = np.argsort(-p, kind="stable")
    right = np.cumsum(y[order])
    best = 1.01
    for i in range(len(order)):
        tied = i + 1 < len(order) and p[order[i + 1]] == p[order[i]]
        if not tied and _wilson_low(float(right[i]), i + 1) >= PRECISION:
            best = float(p[order[i]])
    return round(best, 4) if best <= 1.0 else best


def train_spans(
    samples: dict[str, QuestionCandidates],
    questions: Sequence[PlainQuestion],
    *,
    k: int = 5,
    note: dict[str, Any] | None = None,
    lambdas: Sequence[float] = LAMBDAS,
) -> SpanWeights:
    """The weights fitted on every question with candidates, with the penalty of
    :data:`LAMBDAS` under which the right candidates were likeliest on an inner
    article-disjoint ``k``-fold split; calibrated and given their bold threshold on that
    split."""
    from scipy.special import logsumexp

    known = [q for q in questions if q.qid in samples]
    folds = article_folds(known, k)
    best: tuple[float, float, list[float], list[float]] | None = None
    for lam in lambdas:
        z_top: list[float] = []
        y_top: list[float] = []
        likelihood = 0.0
        for f in range(k):
            train = [samples[q.qid] for q in known if folds[q.qid] != f]
            held = [samples[q.qid] for q in known if folds[q.qid] == f]
            if not train or not held:
                continue
            weights = _fit(train, lam)
            for s in held:
                z = weights.scores(s.x)
                z_top.append(best_share(z))
                y_top.append(float(s.y[int(np.argmax(z))]))
                if s.y.any():
                    likelihood += float(logsumexp(z[s.y > 0]) - logsumexp(z))
        if best is None or likelihood > best[0]:  # ties: the first (the smallest)
            best = (likelihood, lam, z_top, y_top)
    assert best is not None
    likelihood, lam, z_top, y_top = best
    zs, ys = np.asarray(z_top), np.asarray(y_top)
    a, b = _platt(zs, ys)
    p = 1.0 / (1.0 + np.exp(-(a * zs + b))) if zs.size else zs
    show_at = _show_at(p, ys) if zs.size else 1.01
    shown = p >= show_at
    full = _fit([samples[q.qid] for q in known], lam)
    trained_on = {
        "questions": len(known),
        "l2_penalty": lam,
        "candidates": int(sum(len(samples[q.qid].y) for q in known)),
        "with_the_gold": int(sum(bool(samples[q.qid].y.any()) for q in known)),
        "folds": k,
        "out_of_fold_best_right": int(ys.sum()),
        "out_of_fold_log_likelihood": round(likelihood, 3),
        "out_of_fold_shown": int(shown.sum()),
        "out_of_fold_shown_right": int(ys[shown].sum()),
        **(note or {}),
    }
    return SpanWeights(
        full.mean, full.scale, full.coef, full.intercept, trained_on, a=a, b=b, show_at=show_at
    )

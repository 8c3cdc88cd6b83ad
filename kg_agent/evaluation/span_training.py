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
in ten, by a lower bound of that precision
(:func:`~kg_agent.evaluation.calibration.bold_threshold`). Deterministic: the same
samples give the same JSON.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from kg_agent.answering.linear import fit_conditional_logit
from kg_agent.answering.span_ranker import FEATURES, SpanCandidate, SpanWeights, best_share
from kg_agent.evaluation.calibration import NEVER, bold_threshold, platt
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
    likely among its own (a softmax per question), with an L2 penalty ``lam``."""
    n = len(FEATURES)
    if not samples:
        return SpanWeights(np.zeros(n), np.ones(n), np.zeros(n), 0.0)
    mean, scale, coef = fit_conditional_logit([(s.x, s.y) for s in samples], lam)
    return SpanWeights.from_json(SpanWeights(mean, scale, coef, 0.0).to_json())


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
    a, b = platt(zs, ys)
    p = 1.0 / (1.0 + np.exp(-(a * zs + b))) if zs.size else zs
    show_at = bold_threshold(p, ys) if zs.size else NEVER
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

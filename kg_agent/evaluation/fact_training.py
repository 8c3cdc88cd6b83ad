"""Fitting the fact ranker (:mod:`kg_agent.retrieval.fact_ranker`) on plain questions,
and scoring it on articles it was not fitted to.

Candidates and their features are read through the real agent (its linking, its fact
retriever), once per question; a candidate is right when the short answer it gives
matches the question's gold (:func:`~kg_agent.evaluation.trust.matches`), and every
candidate of an unanswerable question is wrong. Folds are **article-disjoint**: the
questions about one article (and the articles asked about together) stay in one fold,
so a held-out score is a score on articles the model never saw.

The model: a conditional logit over standardised features (a softmax over each
question's own candidates: which one answers); a Platt scaling of the first candidate's
score, fitted on the out-of-fold scores of an inner article-disjoint cross-validation;
``show_at`` the lowest calibrated probability from which shown answers were right nine
times in ten out of fold, by a lower bound of that precision
(:func:`~kg_agent.evaluation.calibration.bold_threshold`); ``use_at`` (:data:`USE_AT`)
the probability below which a fact does not answer. Deterministic: the same questions
and graph give the same JSON.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from kg_agent.answering.linear import fit_conditional_logit
from kg_agent.answering.sentence_ranker import SentenceWeights
from kg_agent.answering.span_ranker import SpanWeights
from kg_agent.evaluation.calibration import bold_threshold, platt_shifted
from kg_agent.evaluation.trust import Asker, PlainQuestion, TrustResult, matches, run_plain
from kg_agent.retrieval.fact_ranker import (
    FEATURES,
    POOL_FEATURES,
    SIGNS,
    SIMILARITY_FEATURES,
    FactRanker,
    RankerWeights,
)
from kg_agent.retrieval.facts import short_value
from kg_agent.retrieval.grounding_model import GroundingModel

if TYPE_CHECKING:
    from kg_agent.agent import KnowledgeGraphAgent

__all__ = [
    "CrossValidation",
    "QuestionCandidates",
    "article_folds",
    "collect",
    "cross_validate",
    "load_samples",
    "save_samples",
    "train_ranker",
]

USE_AT = 0.2
#: The L2 penalty of the conditional logit. Out of fold on the plain set when it was
#: chosen, 10, 30 and 100 put a right fact first for 125, 126 and 126 questions, 300 for
#: 122 (a pointwise logistic regression, the model before: 120); on today's candidates,
#: with the weights' signs bounded, all four give 133 (2026-12-01).
_LAMBDA = 30.0


@dataclass(frozen=True)
class QuestionCandidates:
    """One question's candidates (its facts, or its evidence sentences): features (rows:
    candidates, in the order the reader found them) and whether each one is right."""

    qid: str
    x: np.ndarray
    y: np.ndarray


def collect(
    agent: KnowledgeGraphAgent,
    questions: Sequence[PlainQuestion],
    *,
    progress: Callable[[int], None] | None = None,
) -> dict[str, QuestionCandidates]:
    """Ask every question once, offline, and keep its fact candidates (by ``qid``);
    a question without candidates has no entry."""
    facts = agent.components.facts
    seen: list[tuple[Any, list[Any], np.ndarray]] = []

    def observe(q: Any, cands: list[Any], x: np.ndarray) -> None:
        seen.append((q, cands, x))

    out: dict[str, QuestionCandidates] = {}
    facts.observer = observe
    try:
        for i, pq in enumerate(questions):
            seen.clear()
            agent.query(pq.question)
            # the question itself, not the sub-questions a plan asked
            mine = [s for s in seen if s[0].text == pq.question]
            if mine:
                q, cands, x = mine[0]
                y = np.asarray(
                    [
                        pq.answerable and matches(short_value(c.rows, q.kind, q.text), pq.answers)
                        for c in cands
                    ],
                    dtype=np.float64,
                )
                out[pq.qid] = QuestionCandidates(pq.qid, x, y)
            if progress is not None:
                progress(i + 1)
    finally:
        facts.observer = None
    return out


def save_samples(
    path: str | Path,
    samples: dict[str, QuestionCandidates],
    features: Sequence[str] = FEATURES,
) -> None:
    """The candidates' features and labels (numbers only), gzipped JSON: what the fit
    reads, so that it can be reproduced without the graph. ``features``: the names of
    the columns (the fact ranker's, or another model's: the sentence ranker's)."""
    data = {
        "features": list(features),
        "questions": {
            qid: {"x": s.x.round(4).tolist(), "y": s.y.astype(int).tolist()}
            for qid, s in samples.items()
        },
    }
    text = json.dumps(data, separators=(",", ":"), sort_keys=True)
    # mtime=0: the same samples give the same bytes
    Path(path).write_bytes(gzip.compress(text.encode(), mtime=0))


def load_samples(
    path: str | Path, features: Sequence[str] = FEATURES
) -> dict[str, QuestionCandidates]:
    data = json.loads(gzip.decompress(Path(path).read_bytes()))
    if tuple(data["features"]) != tuple(features):
        raise ValueError(f"{path}: features {data['features']} are not {list(features)}")
    return {
        qid: QuestionCandidates(
            qid,
            np.asarray(q["x"], dtype=np.float64).reshape(-1, len(features)),
            np.asarray(q["y"], dtype=np.float64),
        )
        for qid, q in data["questions"].items()
    }


def article_folds(questions: Sequence[PlainQuestion], k: int) -> dict[str, int]:
    """Fold (0..k-1) of each question id: questions sharing an article (or, unanswerable,
    a topic) are in one fold; folds are balanced by question count, deterministically."""
    parent: dict[str, str] = {}

    def find(a: str) -> str:
        while parent.setdefault(a, a) != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    keys: dict[str, list[str]] = {}
    for q in questions:
        names = list(q.articles) or [q.topic or f"question:{q.qid}"]
        keys[q.qid] = names
        for other in names[1:]:
            parent[find(other)] = find(names[0])
    groups: dict[str, list[str]] = {}
    for q in questions:
        groups.setdefault(find(keys[q.qid][0]), []).append(q.qid)
    # largest groups first, ties by a hash of the name: every fold gets some of each size
    order = sorted(groups, key=lambda g: (-len(groups[g]), zlib.crc32(g.encode()), g))
    sizes = [0] * k
    out: dict[str, int] = {}
    for g in order:
        fold = min(range(k), key=lambda f: (sizes[f], f))
        sizes[fold] += len(groups[g])
        for qid in groups[g]:
            out[qid] = fold
    return out


def _fit(samples: Sequence[QuestionCandidates], features: tuple[str, ...]) -> RankerWeights:
    """A conditional logit over ``features`` (a softmax over each question's own
    candidates): which fact answers, the only thing the order is used for. Its score
    has no intercept; the Platt scaling of the first candidate's score gives the
    probability that it is right. Each weight keeps the sign its feature's meaning
    allows (:data:`~kg_agent.retrieval.fact_ranker.SIGNS`)."""
    cols = [FEATURES.index(f) for f in features]
    mean, scale, coef = fit_conditional_logit(
        [(s.x[:, cols], s.y) for s in samples], _LAMBDA, [SIGNS[f] for f in features]
    )
    return RankerWeights(features, mean, scale, coef, 0.0, (1.0, 0.0))


def _rounded(w: RankerWeights) -> RankerWeights:
    """The weights as the JSON file holds them: what is scored is what is saved."""
    return RankerWeights.from_json(w.to_json())


def _tops(
    samples: Sequence[QuestionCandidates], weights: RankerWeights
) -> list[tuple[float, float, float]]:
    """(score, searched, right) of each question's first candidate under ``weights``."""
    out = []
    searched = FEATURES.index("searched")
    for s in samples:
        scores = weights.scores(s.x)
        best = int(np.argmax(scores))  # ties: the first, as the retriever orders them
        out.append((float(scores[best]), float(s.x[best, searched]), float(s.y[best])))
    return out


def _show_at(probs: Sequence[tuple[float, float]]) -> float:
    """The bold threshold of the out-of-fold ``(probability, right)`` pairs
    (:func:`~kg_agent.evaluation.calibration.bold_threshold`), never below
    :data:`USE_AT`."""
    p = np.asarray([t[0] for t in probs])
    y = np.asarray([t[1] for t in probs])
    return max(bold_threshold(p, y), USE_AT)


def _weights_and_oof(
    samples: Sequence[QuestionCandidates],
    folds: dict[str, int],
    k: int,
    features: tuple[str, ...],
) -> tuple[RankerWeights, list[tuple[float, float]]]:
    oof: list[tuple[float, float, float]] = []
    for f in range(k):
        train = [s for s in samples if folds[s.qid] != f]
        held = [s for s in samples if folds[s.qid] == f]
        if train and held:
            oof += _tops(held, _rounded(_fit(train, features)))
    weights = _rounded(_fit(samples, features))
    a, b, c = platt_shifted(*(np.asarray([t[i] for t in oof]) for i in range(3)))
    calibrated = RankerWeights(
        weights.features,
        weights.mean,
        weights.scale,
        weights.coef,
        weights.intercept,
        (a, b),
        searched_shift=c,
    )
    probs = [(calibrated.probability(z, bool(s)), ok) for z, s, ok in oof]
    return _rounded(calibrated), probs


def train_ranker(
    samples: dict[str, QuestionCandidates],
    questions: Sequence[PlainQuestion],
    *,
    k: int = 5,
    note: dict[str, Any] | None = None,
) -> FactRanker:
    """The fact ranker fitted on ``samples`` (the questions' candidates), calibrated and
    thresholded on an inner article-disjoint ``k``-fold cross-validation."""
    known = [q for q in questions if q.qid in samples]
    folds = article_folds(known, k)
    ordered = [samples[q.qid] for q in known]
    full = tuple(f for f in FEATURES if f not in POOL_FEATURES)
    bare = tuple(f for f in full if f not in SIMILARITY_FEATURES)
    with_embedder, probs = _weights_and_oof(ordered, folds, k, full)
    without_embedder, _ = _weights_and_oof(ordered, folds, k, bare)
    right = sum(ok for _, ok in probs)
    show_at = _show_at(probs)
    shown = [ok for p, ok in probs if p >= show_at]
    trained_on = {
        "questions": len(questions),
        "with_candidates": len(ordered),
        "candidates": int(sum(len(s.y) for s in ordered)),
        "first_candidate_right_out_of_fold": int(right),
        "out_of_fold_shown": len(shown),
        "out_of_fold_shown_right": int(sum(shown)),
        "folds": k,
        **(note or {}),
    }
    return FactRanker(with_embedder, without_embedder, USE_AT, show_at, trained_on)


@dataclass(frozen=True)
class CrossValidation:
    """Each question answered by the ranker fitted without its fold's articles
    (``held_out``), and by the one fitted on every question (``in_sample``)."""

    held_out: list[TrustResult]
    in_sample: list[TrustResult]
    folds: dict[str, int]
    rankers: list[FactRanker]
    #: the grounding model of each fold (none when the graph has no vectors)
    grounders: list[GroundingModel | None] = field(default_factory=list)
    #: the sentence ranker's weights of each fold
    sentence_orders: list[SentenceWeights] = field(default_factory=list)
    #: the span ranker's weights of each fold
    span_choosers: list[SpanWeights] = field(default_factory=list)


def cross_validate(
    agent: KnowledgeGraphAgent,
    questions: Sequence[PlainQuestion],
    ask: Asker,
    *,
    k: int = 5,
    progress: Callable[[int], None] | None = None,
) -> CrossValidation:
    """Article-disjoint ``k``-fold cross-validation of the fact ranker, the grounding
    model, the sentence ranker and the span ranker through the whole agent (``ask``
    answers one question with it): candidates, grounding features, sentences and spans
    read once, the four models fitted per fold on the other folds' questions, each
    question answered by the models that never saw its articles; then every question
    again by the models fitted on all.
    ``progress`` counts questions over the three passes (3 x len(questions))."""
    from kg_agent.evaluation.grounding_training import observing
    from kg_agent.evaluation.sentence_training import observing_sentences, train_sentences
    from kg_agent.evaluation.span_training import observing_spans, train_spans

    facts = agent.components.facts
    grounder = agent.components.grounder
    ranker = agent.components.sentences
    chooser = agent.components.spans
    before = facts.ranker, grounder.model, ranker.weights, chooser.weights
    n = len(questions)

    def step(offset: int) -> Callable[[int], None] | None:
        return None if progress is None else (lambda done: progress(offset + done))

    grounding: dict[str, np.ndarray] = {}
    sentences: dict[str, QuestionCandidates] = {}
    spans: dict[str, QuestionCandidates] = {}
    with (
        observing(agent, grounding, questions),
        observing_sentences(agent, sentences, questions),
        observing_spans(agent, spans, questions),
    ):
        samples = collect(agent, questions, progress=step(0))
    folds = article_folds(questions, k)
    rankers = []
    grounders: list[GroundingModel | None] = []
    orders = []
    choosers = []
    for f in range(k):
        train = [q for q in questions if folds[q.qid] != f]
        rankers.append(
            train_ranker({q.qid: samples[q.qid] for q in train if q.qid in samples}, train, k=k)
        )
        grounders.append(_grounding_model(grounding, train, k))
        orders.append(train_sentences(sentences, train, k=k))
        choosers.append(train_spans(spans, train, k=k))
    held: dict[str, TrustResult] = {}
    done = 0
    try:
        for f in range(k):
            part = [q for q in questions if folds[q.qid] == f]
            facts.ranker, grounder.model, ranker.weights = rankers[f], grounders[f], orders[f]
            chooser.weights = choosers[f]
            offset = n + done
            for r in run_plain(part, ask, progress=step(offset)):
                held[r.qid] = r
            done += len(part)
        facts.ranker = train_ranker(samples, questions, k=k)
        grounder.model = _grounding_model(grounding, questions, k)
        ranker.weights = train_sentences(sentences, questions, k=k)
        chooser.weights = train_spans(spans, questions, k=k)
        in_sample = run_plain(questions, ask, progress=step(2 * n))
    finally:
        facts.ranker, grounder.model, ranker.weights, chooser.weights = before
    return CrossValidation(
        [held[q.qid] for q in questions], in_sample, folds, rankers, grounders, orders, choosers
    )


def _grounding_model(
    samples: dict[str, np.ndarray], questions: Sequence[PlainQuestion], k: int
) -> GroundingModel | None:
    """The grounding model fitted on ``questions``; None without features (no vectors)."""
    from kg_agent.evaluation.grounding_training import train_grounding

    known = [q for q in questions if q.qid in samples]
    if len({q.answerable for q in known}) < 2:
        return None
    return train_grounding(samples, known, k=k)

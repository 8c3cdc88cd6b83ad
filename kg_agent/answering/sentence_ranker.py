"""Which sentences of the evidence a person reads: one learned model orders them.

The reader scores each sentence with hand weights (:meth:`Context.score`: the question's
rare words it writes, half as much for its article's title, its relation word, a span
of the kind asked) to find a short answer. What a person reads beside that answer, or
instead of it when nothing is sure enough for bold, is a different question: which
sentences hold the answer. A logistic regression over the same signals, fitted by
``scripts/train_sentence_ranker.py`` on the plain questions of the English sample
(a sentence is right when it writes a gold answer), orders them; out of fold, on
articles it was not fitted to, its three best hold the gold for more questions than
the hand weights' three best (``docs/answers.md``).

It only reorders what is shown: the short answer is still read from the hand-weighted
order, so every retrieval figure and exact match stays as it was. The weights are a
small JSON file (:data:`DEFAULT_PATH`) that the training script reproduces; scoring is
numpy alone. The features need no vectors: a graph without them is ordered the same way.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import ClassVar

import numpy as np

from kg_agent.answering.evidence import Context, Sentence
from kg_agent.answering.linear import LinearWeights

__all__ = [
    "DEFAULT_PATH",
    "FEATURES",
    "SentenceRanker",
    "SentenceWeights",
    "default_sentence_weights",
    "sentence_features",
]

DEFAULT_PATH = Path(__file__).resolve().parent.parent / "data" / "sentence_ranker.json"

#: What each sentence is described by, in the order of the weights.
FEATURES: tuple[str, ...] = (
    # the question's words the sentence writes, weighted by rarity (idf), as a share
    # of the question's, and as a sum
    "overlap_share",
    "title_share",  # the same for words only its article's title writes
    "overlap",
    "title_overlap",
    "relation",  # the question's relation words it writes
    "evidence_rank",  # 1 / the number of its section in the evidence
    "position",  # 1 / (1 + its place in the section)
    "kind_span",  # it holds a span of the kind asked (a date for "when")
    "bridge",  # its article is one a named article mentions (a chain's next hop)
    "named",  # its article is one the question names
    "length",  # its words, up to 60, over 60
    "fact",  # an infobox fact's statement
    "covered",  # the share of the question's words it writes, unweighted
)


def sentence_features(ctx: Context) -> np.ndarray:
    """One row of :data:`FEATURES` per sentence of ``ctx`` (in ``ctx.sentences`` order)."""
    facts = {n for n, ev in ctx.items if ev.fact is not None}
    asked = math.fsum(ctx.idf.get(w, 0.0) for w in ctx.q_stems) or 1.0
    rows = []
    for s, st in zip(ctx.sentences, ctx.stems, strict=True):
        title_only = ctx.title_stems[s.title] - st
        overlap = math.fsum(ctx.idf.get(w, 0.0) for w in ctx.q_stems & st)
        title = math.fsum(ctx.idf.get(w, 0.0) for w in ctx.q_stems & title_only)
        rows.append(
            [
                overlap / asked,
                title / asked,
                overlap,
                title,
                float(len(ctx.shape.cues & st)),
                1.0 / s.n,
                1.0 / (1 + s.position),
                1.0 if ctx.candidates(s) else 0.0,
                1.0 if s.title in ctx.bridges else 0.0,
                1.0 if s.title in ctx.named else 0.0,
                min(len(s.text.split()), 60) / 60,
                1.0 if s.n in facts else 0.0,
                len(ctx.q_stems & st) / max(1, len(ctx.q_stems)),
            ]
        )
    x = np.asarray(rows, dtype=np.float64).reshape(len(rows), len(FEATURES))
    return np.round(x, 4)  # as the training script saw them, on any machine


@dataclass(frozen=True)
class SentenceWeights(LinearWeights):
    """A logistic regression over standardised :data:`FEATURES`."""

    FEATURES: ClassVar[tuple[str, ...]] = FEATURES
    MODEL: ClassVar[str] = "logistic regression: does the sentence write the answer"


@lru_cache(maxsize=1)
def default_sentence_weights() -> SentenceWeights | None:
    """The committed weights (read once per process); None before any were trained."""
    if not DEFAULT_PATH.exists():
        return None
    return SentenceWeights.load(DEFAULT_PATH)


#: Sees each reading's question, its sentences' texts and their features (training).
Observer = Callable[[str, Sequence[str], np.ndarray], None]


class SentenceRanker:
    """The order in which a reading's sentences are shown: ``weights`` (None: the hand
    weights' order); ``observer`` sees every reading's features (how the training
    script and ``answers --cv`` read them). One per graph's components: cross-validation
    swaps its weights."""

    def __init__(self, weights: SentenceWeights | None = None) -> None:
        self.weights = weights
        self.observer: Observer | None = None

    def order(self, ctx: Context, ranked: Sequence[Sentence]) -> list[Sentence]:
        """``ranked`` (the hand-weighted order) reordered by the model, best first; ties
        keep the hand order."""
        if self.weights is None and self.observer is None:
            return list(ranked)
        x = sentence_features(ctx)
        if self.observer is not None:
            self.observer(ctx.shape.question, [s.text for s in ctx.sentences], x)
        if self.weights is None or not len(x):
            return list(ranked)
        learned = self.weights.scores(x)
        at = {(s.n, s.position): float(z) for s, z in zip(ctx.sentences, learned, strict=True)}
        order = sorted(
            range(len(ranked)), key=lambda i: (-at[(ranked[i].n, ranked[i].position)], i)
        )
        return [ranked[i] for i in order]


@lru_cache(maxsize=1)
def default_sentence_ranker() -> SentenceRanker:
    """A ranker with the committed weights, for readings that are handed none."""
    return SentenceRanker(default_sentence_weights())

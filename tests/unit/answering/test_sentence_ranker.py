"""The sentence ranker orders what a reading shows, never what it answers."""

from __future__ import annotations

import numpy as np

from kg_agent.answering import read_evidence
from kg_agent.answering.evidence import Context
from kg_agent.answering.sentence_ranker import (
    FEATURES,
    SentenceRanker,
    SentenceWeights,
    default_sentence_weights,
    sentence_features,
)
from kg_agent.language.shape import analyse
from kg_agent.retrieval.base import Evidence

OPERA = Evidence(
    "Tbilisi Opera::intro",
    "Tbilisi Opera",
    "",
    "",
    "The Tbilisi Opera is the main opera house of Georgia. "
    "Its theatre first opened its doors to the public on 12 April 1851, in a building on "
    "Erivan Square designed by the Italian architect Giovanni Scudieri for the viceroy. "
    "After a fire in the following years the opera house moved to a new home on Golovin Avenue.",
    0.5,
)
QUESTION = "When did the Tbilisi Opera open?"


def _weights(**coef: float) -> SentenceWeights:
    n = len(FEATURES)
    c = np.zeros(n)
    for name, v in coef.items():
        c[FEATURES.index(name)] = v
    return SentenceWeights(np.zeros(n), np.ones(n), c, 0.0)


def _context() -> Context:
    return Context(analyse(QUESTION), [(1, OPERA)])


def test_the_features_describe_each_sentence() -> None:
    ctx = _context()
    x = sentence_features(ctx)
    assert x.shape == (len(ctx.sentences), len(FEATURES))
    dated = [i for i, s in enumerate(ctx.sentences) if "1851" in s.text]
    assert x[dated[0], FEATURES.index("kind_span")] == 1.0  # a date, for "when"
    assert x[0, FEATURES.index("position")] == 1.0 and x[1, FEATURES.index("position")] == 0.5


def test_without_weights_the_hand_order_stands() -> None:
    ctx = _context()
    ranked = ctx.ranked()
    assert SentenceRanker(None).order(ctx, ranked) == ranked


def test_the_learned_order_is_what_an_unsure_reading_shows() -> None:
    # weights that put the shortest sentence first: an order no hand rule gives
    shortest = SentenceRanker(_weights(length=-1.0))
    reading = read_evidence(QUESTION, [(1, OPERA)], sentences=shortest)
    assert not reading.shown and reading.short_answer == "12 April 1851"
    texts = [s.text for s in reading.sentences]
    # the unsure candidate's own sentence, then the others in the learned order
    assert "12 April 1851" in texts[0]
    assert texts[1] == "The Tbilisi Opera is the main opera house of Georgia."
    assert texts[2].startswith("After a fire")
    longest = SentenceRanker(_weights(length=1.0))
    again = [s.text for s in read_evidence(QUESTION, [(1, OPERA)], sentences=longest).sentences]
    assert again == [texts[0], texts[2], texts[1]]


def test_the_observer_sees_every_reading() -> None:
    seen: list[tuple[str, int, tuple[int, ...]]] = []
    ranker = SentenceRanker(default_sentence_weights())
    ranker.observer = lambda q, texts, x: seen.append((q, len(texts), x.shape))
    read_evidence(QUESTION, [(1, OPERA)], sentences=ranker)
    assert seen == [(QUESTION, 3, (3, len(FEATURES)))]


def test_the_committed_weights_read_the_features_of_this_code() -> None:
    weights = default_sentence_weights()
    assert weights is not None and len(weights.coef) == len(FEATURES)
    # out of fold, the model's three best sentences held the gold for most questions
    t = weights.trained_on
    assert t["out_of_fold_best_3_hold_the_gold"] > 0.8 * t["with_the_gold"]

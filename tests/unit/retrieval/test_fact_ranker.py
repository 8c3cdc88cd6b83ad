"""The fact ranker's weights: scoring as the file says, and files it cannot read."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from kg_agent.retrieval.fact_ranker import FEATURES, FactRanker, RankerWeights


def _weights(features: tuple[str, ...]) -> RankerWeights:
    n = len(features)
    return RankerWeights(
        features,
        mean=np.full(n, 0.5),
        scale=np.full(n, 2.0),
        coef=np.arange(1, n + 1, dtype=np.float64),
        intercept=-1.0,
        platt=(2.0, 0.5),
    )


def test_scores_are_the_standardised_dot_product_and_probability_is_platt() -> None:
    w = _weights(("coverage", "fit"))
    x = np.zeros((2, len(FEATURES)))
    x[0, FEATURES.index("coverage")] = 1.0
    x[1, FEATURES.index("fit")] = 2.5
    assert w.scores(x).tolist() == pytest.approx([0.25 - 0.5 - 1.0, -0.25 + 2.0 - 1.0])
    assert w.probability(0.0) == pytest.approx(1 / (1 + math.exp(-0.5)))


def test_a_ranker_round_trips_through_its_file(tmp_path: Path) -> None:
    ranker = FactRanker(_weights(FEATURES), _weights(("coverage",)), 0.2, 0.7, {"n": 3})
    path = tmp_path / "r.json"
    ranker.save(path)
    back = FactRanker.load(path)
    assert back.to_json() == ranker.to_json()
    x = np.random.default_rng(0).random((4, len(FEATURES)))
    assert np.allclose(back.weights(True).scores(x), ranker.weights(True).scores(x))


def test_a_file_with_an_unknown_feature_is_refused() -> None:
    data = _weights(("coverage",)).to_json()
    data["features"] = ["shoe_size"]
    with pytest.raises(ValueError, match="shoe_size"):
        RankerWeights.from_json(data)


def test_the_found_articles_candidates_are_calibrated_apart() -> None:
    w = RankerWeights(
        ("coverage",), np.zeros(1), np.ones(1), np.ones(1), 0.0, (1.0, 0.0), searched_shift=-2.0
    )
    assert w.probability(1.0, searched=True) == pytest.approx(1 / (1 + math.exp(1.0)))
    assert w.probability(1.0) == pytest.approx(1 / (1 + math.exp(-1.0)))
    assert RankerWeights.from_json(w.to_json()).to_json() == w.to_json()
    # a file written before the shift reads as none
    data = w.to_json()
    del data["searched_shift"]
    assert RankerWeights.from_json(data).searched_shift == 0.0

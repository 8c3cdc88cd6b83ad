"""Calibration shared by the rankers' training: the bold threshold is set by a lower
bound of the held-out precision, never by a handful right by chance."""

from __future__ import annotations

import numpy as np

from kg_agent.evaluation.calibration import (
    NEVER,
    bold_threshold,
    platt,
    platt_shifted,
    wilson_low,
)


def test_a_lower_bound_of_the_precision_sets_the_bold() -> None:
    low = wilson_low
    assert low(20, 20) < 0.9 < low(40, 40)  # twenty right of twenty could be chance
    assert low(9, 10) < low(90, 100) < 0.9 < low(190, 200)
    p = np.linspace(1.0, 0.0, 100)
    y = np.concatenate([np.ones(60), np.zeros(40)])
    at = bold_threshold(p, y)
    shown = p >= at
    # at the last right answer: the bound would allow two wrong ones after it (60 right
    # of 62), but a threshold lowered to a wrong answer only shows it
    assert int(shown.sum()) == 60 and low(60, 62) >= 0.9
    assert p[59] - 1e-4 < at <= p[59]  # rounded down, never past the answer it was set at
    assert bold_threshold(p[:63], y[:63]) == at
    assert bold_threshold(p[:20], y[:20]) > 1.0  # too few to be sure


def test_ties_are_shown_together_or_not_at_all() -> None:
    # sixty right at one probability, then a wrong one tied with a right one
    p = np.concatenate([np.full(60, 0.9), [0.5, 0.5]])
    y = np.concatenate([np.ones(60), [0.0, 1.0]])
    at = bold_threshold(p, y)
    assert at == 0.5 or at == 0.9
    shown = p >= at
    assert shown.sum() in (60, 62)  # never one of the two tied answers alone


def test_platt_makes_scores_probabilities_in_their_order() -> None:
    z = np.linspace(-3, 3, 200)
    y = (z + np.random.default_rng(0).normal(0, 1, 200) > 0).astype(float)
    a, b = platt(z, y)
    assert a > 0  # a higher score, a likelier right answer
    assert abs(b) < 0.5  # half right at score 0
    assert platt(z, np.ones(200)) == (0.0, 10.0)  # one class: sure, no slope
    assert bold_threshold(np.array([0.99] * 5), np.ones(5)) == NEVER


def test_a_shifted_platt_lowers_the_second_kind_it_is_less_often_right() -> None:
    rng = np.random.default_rng(0)
    z = np.linspace(-3, 3, 400)
    s = np.tile([0.0, 1.0], 200)
    # the second kind is right as if its score were two lower
    y = (z - 2 * s + rng.normal(0, 1, 400) > 0).astype(float)
    a, _, c = platt_shifted(z, s, y)
    assert a > 0 and c < -1.0
    # none of the second kind: no shift, the plain scaling
    assert platt_shifted(z, np.zeros(400), y)[2] == 0.0
    assert platt_shifted(z, np.zeros(400), y)[:2] == platt(z, y)

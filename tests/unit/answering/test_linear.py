"""The conditional logit shared by the fact and span rankers."""

from __future__ import annotations

import numpy as np
import pytest

from kg_agent.answering.linear import fit_conditional_logit


def _groups(seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """Questions of four candidates: column 0 marks the right one (noisily), column 1 is
    lower on the right one in this sample (a feature whose meaning says the opposite)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(60):
        x = rng.normal(size=(4, 2))
        right = int(rng.integers(4))
        x[right, 0] += 2.0
        x[right, 1] -= 1.0
        y = np.zeros(4)
        y[right] = 1.0
        out.append((x, y))
    return out


def test_a_free_fit_follows_the_sample_and_a_signed_one_keeps_the_meaning() -> None:
    groups = _groups()
    _, _, free = fit_conditional_logit(groups, 1.0)
    assert free[0] > 0 and free[1] < 0
    _, _, signed = fit_conditional_logit(groups, 1.0, [1, 1])
    assert signed[0] > 0 and signed[1] == pytest.approx(0.0, abs=1e-9)
    _, _, down = fit_conditional_logit(groups, 1.0, [1, -1])
    np.testing.assert_allclose(down, free, atol=1e-4)  # signs the fit already has: no change
    _, _, loose = fit_conditional_logit(groups, 1.0, [0, 0])
    np.testing.assert_allclose(loose, free, atol=1e-6)


def test_the_fitted_order_picks_the_right_candidate() -> None:
    groups = _groups(seed=1)
    mean, scale, coef = fit_conditional_logit(groups, 1.0, [1, 1])
    firsts = [int(np.argmax(((x - mean) / scale) @ coef)) == int(np.argmax(y)) for x, y in groups]
    assert sum(firsts) / len(firsts) > 0.6  # chance: 0.25


def test_one_sign_per_column() -> None:
    with pytest.raises(ValueError, match="2 columns"):
        fit_conditional_logit(_groups(), 1.0, [1])

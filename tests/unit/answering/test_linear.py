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


def test_the_fit_is_the_minimum_of_the_penalised_likelihood_of_each_question() -> None:
    """Questions of one to nine candidates, some with two right ones and some with none:
    the weights fitted over all rows at once are where the per-question objective, written
    here question by question, is flat and lowest."""
    rng = np.random.default_rng(7)
    groups = []
    for i in range(80):
        n = 1 + i % 9
        x = rng.normal(size=(n, 3))
        y = (rng.random(n) < 0.3).astype(float)
        x[y > 0, 0] += 1.5
        groups.append((x, y))
    lam = 2.0
    mean, scale, coef = fit_conditional_logit(groups, lam)

    def objective(w: np.ndarray) -> float:
        total = 0.5 * lam * float(w @ w)
        for x, y in groups:
            if y.any():
                z = ((x - mean) / scale) @ w
                total -= np.log(np.exp(z[y > 0]).sum()) - np.log(np.exp(z).sum())
        return total

    assert coef[0] > 0.5  # the signal is found
    eps = 1e-5
    slope = [(objective(coef + eps * e) - objective(coef - eps * e)) / (2 * eps) for e in np.eye(3)]
    np.testing.assert_allclose(slope, 0.0, atol=1e-3)  # L-BFGS-B stops on the objective
    for _ in range(5):
        assert objective(coef + rng.normal(scale=0.05, size=3)) > objective(coef)

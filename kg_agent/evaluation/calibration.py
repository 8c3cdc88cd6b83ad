"""From held-out scores to what a reader shows: a Platt scaling that makes a model's score
a probability, and the bold threshold, the lowest probability from which held-out answers
were right nine times in ten by a lower bound of that precision (so that a handful right
by chance sets none). Shared by the fact and span rankers' training."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["NEVER", "PRECISION", "bold_threshold", "platt", "platt_shifted", "wilson_low"]

#: The precision bold answers must keep on held-out folds.
PRECISION = 0.9
_Z = 1.645  # one-sided 95 %
#: A threshold above any probability: nothing in bold.
NEVER = 1.01


def platt(z: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """``a``, ``b`` with ``sigmoid(a * z + b)`` fitted to ``y`` (nearly unregularised)."""
    a, b, _ = platt_shifted(z, np.zeros_like(z), y)
    return a, b


def platt_shifted(z: np.ndarray, s: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """``a``, ``b``, ``c`` with ``sigmoid(a * z + b + c * s)`` fitted to ``y``: a Platt
    scaling whose level moves for the scores of a second kind (``s`` 1), as for fact
    candidates found by the search rather than named; ``c`` is 0 with none of them."""
    if len(set(y.tolist())) < 2:
        return 0.0, (10.0 if y.size and y[0] else -10.0), 0.0
    from sklearn.linear_model import LogisticRegression

    shifted = bool(s.any())
    x = np.column_stack([z, s]) if shifted else z.reshape(-1, 1)
    model = LogisticRegression(C=1e4, max_iter=5000, tol=1e-10)
    model.fit(x, y)
    c = round(float(model.coef_[0][1]), 6) if shifted else 0.0
    return round(float(model.coef_[0][0]), 6), round(float(model.intercept_[0]), 6), c


def wilson_low(right: float, n: int) -> float:
    """A one-sided lower bound of a precision of ``right`` of ``n`` (Wilson)."""
    p = right / n
    centre = p + _Z * _Z / (2 * n)
    margin = _Z * math.sqrt(p * (1 - p) / n + _Z * _Z / (4 * n * n))
    return (centre - margin) / (1 + _Z * _Z / n)


def bold_threshold(p: np.ndarray, y: np.ndarray, precision: float = PRECISION) -> float:
    """The lowest probability ``p`` of a right held-out answer (``y``: right or not) from
    which those answers keep ``precision`` by :func:`wilson_low`; :data:`NEVER` when none
    does. A wrong answer never sets it: lowered to one, the threshold would only show one
    more wrong answer."""
    order = np.argsort(-p, kind="stable")
    right = np.cumsum(y[order])
    best = NEVER
    for i in range(len(order)):
        tied = i + 1 < len(order) and p[order[i + 1]] == p[order[i]]
        if not tied and y[order[i]] and wilson_low(float(right[i]), i + 1) >= precision:
            best = float(p[order[i]])
    # rounded down: rounded up, it would pass over the answer it was set at
    return math.floor(best * 1e4) / 1e4 if best <= 1.0 else best

"""A linear model's weights as the reader's learned models keep them: over named,
standardised features, in a small JSON file that the training script writes and
reproduces, scored with numpy alone (no scikit-learn at query time)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import numpy as np

__all__ = ["LinearWeights", "fit_conditional_logit", "fit_logistic"]

W = TypeVar("W", bound="LinearWeights")


@dataclass(frozen=True)
class LinearWeights:
    """A linear score over standardised :attr:`FEATURES` (a subclass names them and
    what the model says, :attr:`MODEL`)."""

    FEATURES: ClassVar[tuple[str, ...]] = ()
    MODEL: ClassVar[str] = ""

    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float
    trained_on: dict[str, Any] = field(default_factory=dict)

    def scores(self, x: np.ndarray) -> np.ndarray:
        """The model's score (a logit) of each row of ``x``."""
        return np.asarray(((x - self.mean) / self.scale) @ self.coef + self.intercept)

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.MODEL,
            "features": list(self.FEATURES),
            "mean": [round(float(v), 6) for v in self.mean],
            "scale": [round(float(v), 6) for v in self.scale],
            "coef": [round(float(v), 6) for v in self.coef],
            "intercept": round(float(self.intercept), 6),
            **self._more_json(),
            "trained_on": self.trained_on,
        }

    def _more_json(self) -> dict[str, Any]:
        return {}

    @classmethod
    def _more_fields(cls, data: dict[str, Any]) -> dict[str, Any]:
        return {}

    @classmethod
    def from_json(cls: type[W], data: dict[str, Any]) -> W:
        if tuple(data["features"]) != cls.FEATURES:
            raise ValueError(f"{cls.__name__} features {data['features']} are not {cls.FEATURES}")
        return cls(
            mean=np.asarray(data["mean"], dtype=np.float64),
            scale=np.asarray(data["scale"], dtype=np.float64),
            coef=np.asarray(data["coef"], dtype=np.float64),
            intercept=float(data["intercept"]),
            trained_on=dict(data.get("trained_on", {})),
            **cls._more_fields(data),
        )

    @classmethod
    def load(cls: type[W], path: str | Path) -> W:
        return cls.from_json(json.loads(Path(path).read_text(encoding="utf-8")))

    def save(self, path: str | Path) -> None:
        text = json.dumps(self.to_json(), indent=1, ensure_ascii=False) + "\n"
        Path(path).write_text(text, encoding="utf-8")


def fit_logistic(
    x: np.ndarray, y: np.ndarray, w: np.ndarray, c: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Standardise ``x`` and fit a logistic regression (inverse regularisation ``c``,
    sample weights ``w``): (mean, scale, coef, intercept); zero weights when ``y`` has
    one class (nothing to tell apart)."""
    from sklearn.linear_model import LogisticRegression

    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    if len(set(y.tolist())) < 2:
        return mean, scale, np.zeros(x.shape[1]), 0.0
    model = LogisticRegression(C=c, max_iter=5000, tol=1e-8)
    model.fit((x - mean) / scale, y, sample_weight=w)
    return mean, scale, model.coef_[0], float(model.intercept_[0])


def fit_conditional_logit(
    groups: Sequence[tuple[np.ndarray, np.ndarray]],
    lam: float,
    signs: Sequence[int] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Standardise the candidates of every group (one question's rows ``x`` and whether
    each is right, ``y``) and fit a conditional logit, a softmax over each group's own
    rows, with an L2 penalty ``lam``: (mean, scale, coef). It learns which candidate of a
    question is the answer, not how good candidates are across questions (a pointwise
    logistic regression's target); a group with no right row teaches the choice nothing
    and only sets the scale.

    ``signs`` (one per column: +1, -1 or 0 for free) bounds each weight to the side
    that column's meaning allows: with a few hundred questions, two correlated features
    can otherwise trade weights of the wrong sign that fit the sample and not the next
    article."""
    from scipy.optimize import minimize
    from threadpoolctl import threadpool_limits

    x = np.vstack([g[0] for g in groups])
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    taught = [((gx - mean) / scale, gy > 0) for gx, gy in groups if gy.any()]
    # every taught group's rows stacked, so one evaluation is a few array operations
    # (a loop over groups spent its time in Python: the span fit took 21 s, not ~2)
    xs = np.vstack([t[0] for t in taught]) if taught else np.zeros((0, x.shape[1]))
    right = np.concatenate([t[1] for t in taught]) if taught else np.zeros(0, bool)
    sizes = [len(t[1]) for t in taught]
    starts = np.cumsum([0, *sizes[:-1]]).astype(np.intp)
    group = np.repeat(np.arange(len(taught)), sizes)

    def group_logsumexp(z: np.ndarray) -> np.ndarray:
        top = np.maximum.reduceat(z, starts)
        return np.log(np.add.reduceat(np.exp(z - top[group]), starts)) + top

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        z = xs @ w
        all_z = group_logsumexp(z)
        right_z = group_logsumexp(np.where(right, z, -np.inf))
        p = np.exp(z - all_z[group])
        q = np.where(right, np.exp(z - right_z[group]), 0.0)
        total = 0.5 * lam * float(w @ w) - float(np.sum(right_z - all_z))
        return total, lam * w - (q - p) @ xs

    coef = np.zeros(x.shape[1])
    if taught:
        bounds = None
        if signs is not None:
            if len(signs) != x.shape[1]:
                raise ValueError(f"{len(signs)} signs for {x.shape[1]} columns")
            side = {1: (0.0, None), -1: (None, 0.0), 0: (None, None)}
            bounds = [side[int(np.sign(s))] for s in signs]
        # one BLAS thread: OpenBLAS threads on these thin products spun more than they
        # worked (the span fit took 8.7 s with two threads, 2.0 s with one; same weights)
        with threadpool_limits(1, user_api="blas"):
            coef = minimize(loss, coef, jac=True, method="L-BFGS-B", bounds=bounds).x
    return mean, scale, coef

"""When to stop adding retrieval steps: budgets, nothing found, nothing new, nothing missing.

Precedence (the first rule that holds is the reason returned):

1. ``LATENCY_BUDGET``: ``elapsed_s >= max_latency_s``.
2. ``COST_BUDGET``: ``cost_usd > max_cost_usd`` (strict, so ``max_cost_usd: 0`` forbids
   paid calls without stopping offline runs, which cost nothing).
3. ``EMPTY_RESULTS``: ``total_results == 0`` (nothing at all to reason over).
4. ``NO_NEW_EVIDENCE``: ``stop_no_new_steps`` consecutive steps added nothing new.
5. ``NO_GAP``: the gap detector finds nothing missing.
6. ``MAX_STEPS``: ``step >= max_steps`` (steps count from 1).

Budgets come first because they are hard limits the caller promised; the
evidence rules explain an early stop better than the step cap does, so the cap
comes last.
"""

from __future__ import annotations

import math
from enum import Enum

from kg_agent.exceptions import InvalidArgumentError
from kg_agent.multistep.config import MultiStepConfig
from kg_agent.multistep.gaps import GapResult, GapType

__all__ = ["StopCriteria", "StopReason"]


class StopReason(str, Enum):
    """Why the step loop ended (recorded in the run trace)."""

    EMPTY_RESULTS = "empty_results"
    NO_GAP = "no_gap"
    MAX_STEPS = "max_steps"
    NO_NEW_EVIDENCE = "no_new_evidence"
    LATENCY_BUDGET = "latency_budget"
    COST_BUDGET = "cost_budget"
    #: the plan is done: a ``synthesize`` step came, or a model's plan ran every step
    #: and found each step's focus (the completeness stop)
    PLAN_COMPLETE = "plan_complete"


def _count(name: str, value: int, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise InvalidArgumentError(f"{name} must be an integer >= {low}, got {value!r}")


def _amount(name: str, value: float) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value < 0
    ):
        raise InvalidArgumentError(f"{name} must be a finite number >= 0, got {value!r}")


class StopCriteria:
    """Stateful stop check for one question's step loop; :meth:`reset` before the next.

    The state is the run of consecutive steps without new evidence, updated on
    every :meth:`check` before the rules are applied.
    """

    def __init__(self, config: MultiStepConfig) -> None:
        if not isinstance(config, MultiStepConfig):
            raise InvalidArgumentError(
                f"config must be a MultiStepConfig, got {type(config).__name__}"
            )
        self.config = config
        self.steps_without_new = 0

    def reset(self) -> None:
        """Forget the previous question's steps."""
        self.steps_without_new = 0

    def check(
        self,
        step: int,
        new_evidence: int,
        total_results: int,
        gap: GapResult,
        elapsed_s: float,
        cost_usd: float,
    ) -> StopReason | None:
        """The reason to stop after ``step`` (1-based), or ``None`` to run another step.

        ``new_evidence``: items this step added after the novelty filter;
        ``total_results``: evidence held across all steps so far; ``gap``: the
        gap left after this step; ``elapsed_s``/``cost_usd``: spent so far.
        """
        _count("step", step, 1)
        _count("new_evidence", new_evidence, 0)
        _count("total_results", total_results, 0)
        _amount("elapsed_s", elapsed_s)
        _amount("cost_usd", cost_usd)
        if not isinstance(gap, GapResult):
            raise InvalidArgumentError(f"gap must be a GapResult, got {type(gap).__name__}")
        self.steps_without_new = 0 if new_evidence > 0 else self.steps_without_new + 1

        cfg = self.config
        if elapsed_s >= cfg.max_latency_s:
            return StopReason.LATENCY_BUDGET
        if cost_usd > cfg.max_cost_usd:
            return StopReason.COST_BUDGET
        if total_results == 0:
            return StopReason.EMPTY_RESULTS
        if self.steps_without_new >= cfg.stop_no_new_steps:
            return StopReason.NO_NEW_EVIDENCE
        if gap.gap_type is GapType.NONE:
            return StopReason.NO_GAP
        if step >= cfg.max_steps:
            return StopReason.MAX_STEPS
        return None

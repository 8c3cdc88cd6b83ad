"""StopCriteria: each rule alone, their precedence, the no-new-evidence streak, reset."""

from __future__ import annotations

import pytest

from kg_agent.exceptions import InvalidArgumentError
from kg_agent.multistep.config import MultiStepConfig
from kg_agent.multistep.gaps import NO_GAP, GapResult, GapType
from kg_agent.multistep.stop import StopCriteria, StopReason

GAP = GapResult(GapType.MISSING_YEARS, ("2000",), 0.5)
CFG = MultiStepConfig(max_steps=3, stop_no_new_steps=1, max_latency_s=10.0, max_cost_usd=0.05)


def check(
    stop: StopCriteria,
    step: int = 1,
    new: int = 5,
    total: int = 5,
    gap: GapResult = GAP,
    elapsed: float = 1.0,
    cost: float = 0.0,
) -> StopReason | None:
    return stop.check(step, new, total, gap, elapsed, cost)


def test_nothing_holds_so_go_on() -> None:
    assert check(StopCriteria(CFG)) is None


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        ({"elapsed": 10.0}, StopReason.LATENCY_BUDGET),
        ({"cost": 0.051}, StopReason.COST_BUDGET),
        ({"new": 0, "total": 0}, StopReason.EMPTY_RESULTS),
        ({"new": 0}, StopReason.NO_NEW_EVIDENCE),
        ({"gap": NO_GAP}, StopReason.NO_GAP),
        ({"step": 3}, StopReason.MAX_STEPS),
    ],
)
def test_each_rule_alone(kwargs: dict[str, object], reason: StopReason) -> None:
    assert check(StopCriteria(CFG), **kwargs) is reason  # type: ignore[arg-type]


def test_precedence_budgets_then_empty_then_no_new_then_no_gap_then_max_steps() -> None:
    everything = {"step": 3, "new": 0, "total": 0, "gap": NO_GAP, "elapsed": 11.0, "cost": 1.0}
    order = [
        ("elapsed", 1.0, StopReason.LATENCY_BUDGET),
        ("cost", 0.0, StopReason.COST_BUDGET),
        ("total", 4, StopReason.EMPTY_RESULTS),
        ("new", 4, StopReason.NO_NEW_EVIDENCE),
        ("gap", GAP, StopReason.NO_GAP),
        ("step", 1, StopReason.MAX_STEPS),
    ]
    for key, cleared, reason in order:
        assert check(StopCriteria(CFG), **everything) is reason  # type: ignore[arg-type]
        everything[key] = cleared
    assert check(StopCriteria(CFG), **everything) is None  # type: ignore[arg-type]


def test_budget_edges() -> None:
    assert check(StopCriteria(CFG), elapsed=9.99) is None
    assert check(StopCriteria(CFG), cost=0.05) is None  # at the budget, not over it
    free = StopCriteria(CFG.with_overrides(max_cost_usd=0))
    assert check(free, cost=0.0) is None  # an offline run costs nothing
    assert check(free, cost=0.001) is StopReason.COST_BUDGET


def test_no_new_evidence_needs_a_streak_of_stop_no_new_steps() -> None:
    stop = StopCriteria(CFG.with_overrides(stop_no_new_steps=2, max_steps=10))
    assert check(stop, step=1, new=0) is None
    assert stop.steps_without_new == 1
    assert check(stop, step=2, new=3) is None  # new evidence breaks the streak
    assert stop.steps_without_new == 0
    assert check(stop, step=3, new=0) is None
    assert check(stop, step=4, new=0) is StopReason.NO_NEW_EVIDENCE


def test_streak_counts_even_when_another_rule_fires_first() -> None:
    stop = StopCriteria(CFG.with_overrides(stop_no_new_steps=2))
    assert check(stop, new=0, elapsed=20.0) is StopReason.LATENCY_BUDGET
    assert stop.steps_without_new == 1


def test_steps_are_one_based() -> None:
    stop = StopCriteria(CFG)
    assert [check(stop, step=s) for s in (1, 2, 3)] == [None, None, StopReason.MAX_STEPS]
    assert check(StopCriteria(CFG.with_overrides(max_steps=1)), step=1) is StopReason.MAX_STEPS


def test_reset_forgets_the_streak() -> None:
    stop = StopCriteria(CFG.with_overrides(stop_no_new_steps=2))
    check(stop, new=0)
    stop.reset()
    assert stop.steps_without_new == 0
    assert check(stop, new=0) is None


@pytest.mark.parametrize(
    "kwargs",
    [
        {"step": 0},
        {"new": -1},
        {"total": -1},
        {"elapsed": -0.1},
        {"cost": float("nan")},
        {"step": True},
        {"gap": "none"},
    ],
)
def test_bad_arguments(kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidArgumentError):
        check(StopCriteria(CFG), **kwargs)  # type: ignore[arg-type]


def test_needs_a_config() -> None:
    with pytest.raises(InvalidArgumentError, match="MultiStepConfig"):
        StopCriteria({"max_steps": 3})  # type: ignore[arg-type]

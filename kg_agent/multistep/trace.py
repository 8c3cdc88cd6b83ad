"""What a multi-step retrieval did, typed: its route, plan, steps, bridge round and pool.

The retriever writes a :class:`MultiStepTrace`; the multi-step stages read its pool
and add what they did (the relevance loop's telemetry) to a copy. ``to_dict()`` is
the JSON form ``--trace``, ``serve`` and the eval report show.
"""

from __future__ import annotations

import dataclasses
from dataclasses import asdict, dataclass, field
from typing import Any

from kg_agent.retrieval.base import Evidence

__all__ = ["MultiStepTrace", "StepTrace"]


@dataclass(frozen=True, slots=True)
class StepTrace:
    """One step: its query, what it found and why the loop stopped or went on."""

    step: int
    query: str
    query_type: str
    kind: str  # "plan", "refine", "bridge", "single"
    results: int
    new_evidence: int
    gap: dict[str, Any]
    gate: str
    stop_reason: str | None
    seconds: float
    #: the plan step this step ran (0-based), and what it found that the question does
    #: not name (what a step that depends on it searches for)
    plan_step: int | None = None
    finding: str | None = None


@dataclass(frozen=True, slots=True)
class MultiStepTrace:
    """The record of one multi-step retrieval.

    ``route`` is ``"simple"`` (one entity-graph search) or ``"complex"``; ``pool`` is
    everything gathered, best first (what the stages choose from; not in the JSON);
    ``rewrites`` the question and its rephrasings, searched first; ``quality`` the
    relevance loop's telemetry once that stage has run.
    """

    question: str
    route: str
    complexity: dict[str, Any]
    plan: dict[str, Any]
    steps: tuple[StepTrace, ...]
    bridge_round_stats: dict[str, Any]
    stop_reason: str | None
    pool: tuple[Evidence, ...] = ()
    rewrites: tuple[str, ...] = ()
    round1_quality: float | None = None
    quality: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    seconds: float = 0.0
    #: model calls a budget stopped: {"call", "budget" ("cost"/"latency"), "spent",
    #: "limit", "skipped"} (the relevance stage adds its own)
    budget_stops: tuple[dict[str, Any], ...] = ()
    #: what the question's own search found, before any rephrasing or step: the
    #: grounding weighs these, since a later step's cosine is to its own query
    asked: tuple[Evidence, ...] = ()

    @property
    def simple(self) -> bool:
        return self.route == "simple"

    def with_quality(
        self,
        quality: dict[str, Any],
        warnings: list[str],
        budget_stops: list[dict[str, Any]] | tuple[dict[str, Any], ...] = (),
    ) -> MultiStepTrace:
        """A copy with the relevance loop's telemetry, warnings and budget stops added."""
        return dataclasses.replace(
            self,
            quality=dict(quality),
            warnings=(*self.warnings, *warnings),
            budget_stops=(*self.budget_stops, *budget_stops),
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready trace: everything but the evidence texts."""
        quality = dict(self.quality)
        if self.round1_quality is not None and quality:
            quality["round1_quality"] = round(self.round1_quality, 3)
        return {
            "question": self.question,
            "route": self.route,
            "complexity": self.complexity,
            "plan": self.plan,
            "steps": [asdict(s) for s in self.steps],
            "stop_reason": self.stop_reason,
            "bridge_round_stats": self.bridge_round_stats,
            "budget_stops": [dict(b) for b in self.budget_stops],
            **quality,
            "warnings": list(self.warnings),
            "seconds": round(self.seconds, 4),
        }

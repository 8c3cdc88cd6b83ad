"""The cost and latency budgets of one multi-step retrieval, over every model call it
makes: the plan, the rephrasings, the bridge names and the relevance scores.

Why one object: the step loop's stop rule saw the budgets, but the bridge call and up to
20 relevance-scoring calls ran past them. A :class:`Budget` is asked before each model
call (:meth:`Budget.allows`); a call it refuses takes its offline path, and the refusal is
kept (:attr:`Budget.stops`) so the trace says which budget stopped what. A call it allows
gets a timeout cut to the time left (:meth:`Budget.timeout`), so no call runs past the
latency budget either. Offline work (searches) is never stopped here: only model calls.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from kg_agent.llm.client import UsageMeter

__all__ = ["MIN_CALL_TIMEOUT_S", "Budget"]

#: The shortest timeout worth giving a call; with less time left it is not made.
MIN_CALL_TIMEOUT_S = 0.5


@dataclass
class Budget:
    """``max_cost_usd`` and ``max_latency_s`` for the calls counted on ``meter``, from
    ``started`` (``time.perf_counter()``); ``spent_usd`` and ``spent_s`` are what was spent
    before this object (the retriever's share, when the relevance stage resumes it)."""

    max_cost_usd: float
    max_latency_s: float
    meter: UsageMeter
    started: float = field(default_factory=time.perf_counter)
    spent_usd: float = 0.0
    spent_s: float = 0.0
    stops: list[dict[str, Any]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def elapsed(self) -> float:
        return self.spent_s + time.perf_counter() - self.started

    def cost(self) -> float:
        return self.spent_usd + float(self.meter.as_dict()["cost_usd"])

    def exceeded(self) -> str | None:
        """``"latency"`` or ``"cost"`` when that budget is spent, else ``None``."""
        if self.max_latency_s - self.elapsed() < MIN_CALL_TIMEOUT_S:
            return "latency"
        if self.cost() > self.max_cost_usd:
            return "cost"
        return None

    def allows(self, call: str) -> bool:
        """Whether ``call`` (e.g. ``"bridge extraction"``) may be made now; a refusal is
        recorded once per call name and budget."""
        which = self.exceeded()
        if which is None:
            return True
        spent, limit = (
            (round(self.elapsed(), 3), self.max_latency_s)
            if which == "latency"
            else (round(self.cost(), 6), self.max_cost_usd)
        )
        with self._lock:
            for stop in self.stops:
                if stop["call"] == call and stop["budget"] == which:
                    stop["skipped"] += 1
                    return False
            self.stops.append(
                {"call": call, "budget": which, "spent": spent, "limit": limit, "skipped": 1}
            )
        return False

    def timeout(self, default: float) -> float:
        """``default``, cut to the time the latency budget has left."""
        left = self.max_latency_s - self.elapsed()
        return max(MIN_CALL_TIMEOUT_S, min(default, left))

    def describe(self) -> list[str]:
        """One line per stop, for warnings: ``bridge extraction stopped by the cost
        budget (0.051 of 0.05 USD spent)``."""
        lines = []
        for s in self.stops:
            unit = "s" if s["budget"] == "latency" else " USD"
            times = f", {s['skipped']} calls" if s["skipped"] > 1 else ""
            lines.append(
                f"{s['call']} stopped by the {s['budget']} budget "
                f"({s['spent']:g}{unit} spent of {s['limit']:g}{unit}{times}): offline instead"
            )
        return lines

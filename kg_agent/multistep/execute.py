"""How a plan's steps become searches: the order they run in, what a dependent step
searches, and which searches run at once.

- A step runs after the steps it ``depends_on``; its query is built from what they
  found (:func:`dependent_query`): the *finding* of a step is the best article it found
  that the question does not name (:func:`step_finding`), the entity the next hop is about.
- A parallel plan's searches run concurrently (:class:`Prefetch`), and are read in plan
  order, so the step loop and its stop rules see exactly what a one-by-one run sees.
- A conditional plan's later steps run only while a gap is open; a ``synthesize`` step,
  or (for a model's plan) every step done with each focus found, is the completeness stop.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from kg_agent.multistep.gaps import fold
from kg_agent.multistep.planner import Plan, PlanStep
from kg_agent.retrieval.base import Evidence

__all__ = ["PlanCursor", "Prefetch", "dependent_query", "focus_found", "step_finding"]

_SLOT = re.compile(r"\{(\d+)\}|#(\d+)")


def step_finding(found: Sequence[Evidence], named: Sequence[str]) -> str | None:
    """The best-ranked title in ``found`` the question does not name (``named``): what a
    step found that the next hop is about; ``None`` when it found only named articles."""
    skip = {fold(t) for t in named}
    for e in sorted(found, key=lambda e: -e.score):
        if fold(e.title) not in skip:
            return e.title
    return None


def dependent_query(step: PlanStep, findings: dict[int, str | None]) -> str:
    """``step``'s query with what the steps it depends on found: ``{i}`` (or ``#i+1``, the
    1-based form of question decompositions) replaced by step ``i``'s finding, else the
    findings added to the query. A dependency that found nothing leaves the query as is."""

    def fill(match: re.Match[str]) -> str:
        index = int(match.group(1)) if match.group(1) is not None else int(match.group(2)) - 1
        return findings.get(index) or ""

    if _SLOT.search(step.query):
        return " ".join(_SLOT.sub(fill, step.query).split()) or step.query
    extra = [
        f for d in step.depends_on if (f := findings.get(d)) and fold(f) not in fold(step.query)
    ]
    return " ".join([step.query, *extra])


def focus_found(step: PlanStep, pool: Sequence[Evidence]) -> bool:
    """Whether the pool holds evidence about ``step``'s focus (a step without one counts
    as found): the completeness test of a model's plan."""
    focus = fold(step.focus)
    if not focus or step.action in ("bridge", "synthesize"):
        return True
    return any(focus in fold(f"{e.title} {e.content[:2000]}") for e in pool)


@dataclass
class PlanCursor:
    """The plan's steps still to run, in order; ``done`` holds the indices run."""

    plan: Plan
    done: set[int] = field(default_factory=set)
    findings: dict[int, str | None] = field(default_factory=dict)

    def consume_question(self, question: str) -> None:
        """Step 1 searches the question (and its rephrasings): a first plan step that is
        the question itself is that step."""
        first = self.plan.steps[0]
        if first.action == "search" and not first.depends_on and first.query == question:
            self.done.add(0)

    def next(self) -> tuple[int, PlanStep] | None:
        """The next step to run in the loop (a bridge step is the bridge round's, after
        the loop), or ``None`` when none is left."""
        for i, step in enumerate(self.plan.steps):
            if i in self.done or step.action == "bridge":
                continue
            return i, step
        return None

    @property
    def left(self) -> bool:
        return self.next() is not None

    @property
    def complete(self) -> bool:
        """Every step run (bridge steps aside)."""
        return not self.left


class Prefetch:
    """The searches of a parallel plan's independent steps, started at once on
    ``workers`` threads; :meth:`take` waits for one. ``workers=1`` searches when asked."""

    def __init__(
        self,
        search: Callable[[str], list[Evidence]],
        queries: Sequence[str],
        workers: int,
    ) -> None:
        self.search = search
        self._pool: ThreadPoolExecutor | None = None
        self._futures: dict[str, Future[list[Evidence]]] = {}
        if workers > 1 and len(queries) > 1:
            self._pool = ThreadPoolExecutor(
                max_workers=min(workers, len(queries)), thread_name_prefix="kg-plan-step"
            )
            for q in dict.fromkeys(queries):
                self._futures[q] = self._pool.submit(search, q)

    @property
    def concurrent(self) -> bool:
        return self._pool is not None

    def take(self, query: str) -> list[Evidence]:
        future = self._futures.pop(query, None)
        return future.result() if future is not None else self.search(query)

    def close(self) -> None:
        """Drop what the loop did not read (a stop before the last step)."""
        if self._pool is not None:
            for f in self._futures.values():
                f.cancel()
            self._pool.shutdown(wait=True)
            self._pool = None

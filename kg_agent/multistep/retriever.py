"""The multi-step retriever: route, plan, step, bridge; the pool it gathers.

1. The question's reading (:class:`~kg_agent.language.Question`) routes SIMPLE
   questions to one entity-graph search (what single-step retrieval does) and COMPLEX
   ones on.
2. :class:`StepPlanner` plans the first steps by the question's type.
3. Each step searches, drops near-duplicates (:func:`novelty_filter`), looks for a
   gap (:func:`detect_gap`) and asks :class:`StopCriteria` whether to go on; the next
   query is the plan's next step or :func:`refine_query`.
4. The bridge round (:func:`bridge_round`) reads the best round-1 evidence and
   searches the entities it leads to, when round-1 quality is below the gate.

The result is the whole pool, best first, with a typed :class:`MultiStepTrace`.
Choosing from the pool is the stages' work (:mod:`kg_agent.multistep.stages`): the
relevance loop, the tier order and the fill, the same for the answer path and the
eval.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from typing import Any

from kg_agent.entities.linker import QuestionEntityLinker
from kg_agent.language.complexity import Complexity
from kg_agent.language.question import Question, as_question
from kg_agent.llm.client import FAST_MODEL, LLMClient, UsageMeter
from kg_agent.multistep.bridge import BridgeOutcome, bridge_round
from kg_agent.multistep.budget import Budget
from kg_agent.multistep.config import MultiStepConfig
from kg_agent.multistep.execute import (
    PlanCursor,
    Prefetch,
    dependent_query,
    focus_found,
    step_finding,
)
from kg_agent.multistep.gaps import GapResult, detect_gap
from kg_agent.multistep.novelty import novelty_filter
from kg_agent.multistep.planner import StepPlanner
from kg_agent.multistep.refine import refine_query
from kg_agent.multistep.relevance import offline_relevance, rewrite_queries
from kg_agent.multistep.stop import StopCriteria, StopReason
from kg_agent.multistep.trace import MultiStepTrace, StepTrace
from kg_agent.retrieval.base import Evidence, Query, RetrievalResult, Retriever
from kg_agent.retrieval.graph_walk import EntityGraphRetriever
from kg_agent.retrieval.multi_query import offline_variants

__all__ = ["MultiStepRetriever"]

log = logging.getLogger(__name__)


def _gap_dict(gap: GapResult) -> dict[str, Any]:
    return {
        "gap_type": gap.gap_type.value if hasattr(gap.gap_type, "value") else str(gap.gap_type),
        "missing": list(gap.missing),
        "confidence": round(gap.confidence, 3),
    }


class MultiStepRetriever(Retriever):
    """Multi-step retrieval over the graph, a retriever composed of others.

    ``single`` is the entity-graph retriever each step searches with; ``base`` the
    plain ranking (hybrid) the bridge round searches with; ``linker`` names the
    entities of the rewrites and the bridge round's finds. ``route`` forces the
    routing (``"simple"``/``"complex"``; None: the question's complexity decides).
    """

    mode = "multistep"

    def __init__(
        self,
        single: EntityGraphRetriever,
        *,
        base: Retriever,
        linker: QuestionEntityLinker,
        config: MultiStepConfig | None = None,
        llm: LLMClient | None = None,
        llm_timeout: float = 15.0,
        route: Complexity | str | None = None,
        fast_model: str = FAST_MODEL,
        concurrent_steps: int = 1,
    ) -> None:
        self.single = single
        self.fast_model = fast_model
        self.concurrent_steps = concurrent_steps
        self.base = base
        self.linker = linker
        self.config = config or MultiStepConfig()
        self.llm = llm
        self.llm_timeout = llm_timeout
        self.route = route

    def search(self, query: Query, top_k: int = 10) -> RetrievalResult:
        """The pool, best first (``top_k`` does not cut it: the stages choose from the
        whole pool, and :class:`~kg_agent.multistep.stages.Fill` cuts); ``multistep``
        is the trace, ``usage`` the LLM calls made."""
        t0 = time.perf_counter()
        meter = UsageMeter()
        trace = self.run(as_question(query, self.linker.link), meter=meter)
        entry = {
            "stage": "multistep",
            "route": trace.route,
            "steps": len(trace.steps),
            "stop_reason": trace.stop_reason,
            "results": len(trace.pool),
        }
        return RetrievalResult(
            query=trace.question,
            evidence=list(trace.pool),
            timings={"total": time.perf_counter() - t0},
            warnings=list(trace.warnings),
            trace=[entry],
            usage=meter,
            multistep=trace,
        )

    # ------------------------------------------------------------------ main loop
    def run(self, question: Question, *, meter: UsageMeter | None = None) -> MultiStepTrace:
        """Route, then (COMPLEX) plan, step and bridge; the trace holds the pool."""
        cfg = self.config
        meter = meter or UsageMeter()
        t_start = time.perf_counter()
        warnings: list[str] = []
        text = question.text
        decision = question.routed(self.route)
        entities = list(decision.entities) or list(question.entities)
        complexity = {
            "complexity": decision.complexity.value,
            "score": round(decision.score, 3),
            "reasons": list(decision.reasons),
            "entities": entities,
            "forced": self.route is not None,
        }
        if decision.complexity is Complexity.SIMPLE:
            t0 = time.perf_counter()
            r = self.single.search(question, cfg.top_k_final)
            step = StepTrace(
                step=1,
                query=text,
                query_type="-",
                kind="single",
                results=len(r.evidence),
                new_evidence=len(r.evidence),
                gap={},
                gate="simple route",
                stop_reason=None,
                seconds=round(time.perf_counter() - t0, 4),
            )
            return MultiStepTrace(
                question=text,
                route="simple",
                complexity=complexity,
                plan={},
                steps=(step,),
                bridge_round_stats={"triggered": False},
                stop_reason=None,
                pool=tuple(r.evidence),
                asked=tuple(r.evidence),
                warnings=tuple(warnings),
                seconds=time.perf_counter() - t_start,
            )

        budget = Budget(cfg.max_cost_usd, cfg.max_latency_s, meter, started=t_start)
        planning = self.llm if self.llm is not None and budget.allows("planning") else None
        planner = StepPlanner(
            planning, self.fast_model, timeout=budget.timeout(self.llm_timeout), meter=meter
        )
        plan = planner.plan(text, entities, question.query_type)
        warnings += list(plan.warnings)
        qtype = plan.query_type
        rewriting = self.llm if self.llm is not None and budget.allows("rephrasing") else None
        rewrites = rewrite_queries(
            text,
            max(1, cfg.n_rewrites),
            llm=rewriting,
            offline=lambda q: offline_variants(q, self.linker.link),
            model=self.fast_model,
            meter=meter,
            timeout=budget.timeout(self.llm_timeout),
            warnings=warnings,
        )
        stop = StopCriteria(cfg)
        pool: dict[str, Evidence] = {}
        steps: list[StepTrace] = []
        stop_reason = None
        gap: GapResult | None = None
        wide = max(cfg.top_k_each_step, cfg.top_k_final * 3)

        def search(q: str) -> list[Evidence]:
            # the question itself is searched with its reading (linked once)
            return self.single.search(question if q == text else q, wide).evidence

        cursor = PlanCursor(plan)
        cursor.consume_question(text)
        prefetch = Prefetch(
            search,
            [
                st.query
                for i, st in enumerate(plan.steps)
                if i not in cursor.done and st.action == "search" and not st.depends_on
            ]
            if plan.pattern == "parallel"
            else [],
            self.concurrent_steps,
        )
        step_no = 0
        running: int | None = 0 if 0 in cursor.done else None  # the plan step being run
        query, kind = text, "plan"
        asked: list[Evidence] = []
        try:
            while True:
                step_no += 1
                t0 = time.perf_counter()
                queries = rewrites if step_no == 1 else [query]
                found: list[Evidence] = []
                for i, q in enumerate(queries):
                    if i == 0 and step_no == 1:
                        asked = search(q)
                        found += asked
                    elif i == 0:
                        found += prefetch.take(q)
                    else:
                        found += self.single.search(q, cfg.top_k_each_step).evidence
                fresh = [e for e in found if e.section_id not in pool]
                fresh = novelty_filter(
                    fresh, [e.content for e in pool.values()], cfg.novelty_threshold
                )
                for e in fresh:
                    if e.section_id not in pool:
                        # later steps answer a narrower query: rank below the question's hits
                        pool[e.section_id] = e if step_no == 1 else _demote(e, 0.5)
                finding = None
                if running is not None:
                    cursor.done.add(running)
                    finding = cursor.findings[running] = step_finding(found, entities)
                gap = detect_gap(text, qtype, list(pool.values()), entities=entities)
                elapsed = time.perf_counter() - t_start
                reason = stop.check(
                    step_no,
                    len(fresh),
                    len(pool),
                    gap,
                    elapsed,
                    float(meter.as_dict().get("cost_usd", 0.0)),
                )
                # a planned step still queued (a per-entity or per-year search) runs even
                # when no gap is detected, within max_steps; a conditional plan's later
                # steps run only on a gap
                planned_left = cursor.left and step_no < cfg.max_steps
                if reason is StopReason.NO_GAP and planned_left and plan.pattern != "conditional":
                    reason = None
                upcoming = cursor.next()
                if reason is None and upcoming is not None and upcoming[1].action == "synthesize":
                    cursor.done.add(upcoming[0])
                    reason = StopReason.PLAN_COMPLETE
                elif (
                    reason is None
                    and plan.source == "llm"
                    and cursor.complete
                    and all(focus_found(st, list(pool.values())) for st in plan.steps)
                ):
                    reason = StopReason.PLAN_COMPLETE
                steps.append(
                    StepTrace(
                        step=step_no,
                        query=" | ".join(queries),
                        query_type=qtype.value,
                        kind=kind,
                        results=len(found),
                        new_evidence=len(fresh),
                        gap=_gap_dict(gap),
                        gate="",
                        stop_reason=reason.value if reason else None,
                        seconds=round(time.perf_counter() - t0, 4),
                        plan_step=running,
                        finding=finding,
                    )
                )
                if reason is not None:
                    stop_reason = reason.value
                    break
                upcoming = cursor.next()
                if upcoming is None:
                    running, query, kind = None, refine_query(text, gap), "refine"
                    continue
                running, st = upcoming
                if st.action == "refine":
                    query, kind = refine_query(st.query, gap), "refine"
                elif st.depends_on:
                    query, kind = dependent_query(st, cursor.findings), "dependent"
                else:
                    query, kind = st.query, "plan"
        finally:
            prefetch.close()

        round1 = sorted(pool.values(), key=lambda e: -e.score)
        top = round1[: cfg.bridge_top_evidence]
        quality = sum(offline_relevance(e, text) for e in top) / len(top) if top else 0.0
        t0 = time.perf_counter()
        bridge: BridgeOutcome = bridge_round(
            text,
            round1,
            config=cfg,
            quality=quality,
            neighbours=self.single.neighbours,
            score_titles=lambda ts: self.single.score_titles(text, ts),
            search=lambda q, k: self.base.search(q, k).evidence,
            resolve=self.linker.link,
            exclude={e.title for e in round1[: cfg.top_k_final]},
            gap_terms=list(gap.missing) if gap is not None else [],
            llm=self.llm,
            model=self.fast_model,
            meter=meter,
            timeout=self.llm_timeout,
            warnings=warnings,
            budget=budget,
        )
        for line in budget.describe():
            log.warning(line)
            warnings.append(line)
        added = 0
        for e in bridge.evidence:
            if e.section_id not in pool:
                pool[e.section_id] = e
                added += 1
        steps.append(
            StepTrace(
                step=step_no + 1,
                # no query when the gate kept the round shut or nothing led anywhere
                query=" | ".join(bridge.queries) or "(no bridge query)",
                query_type=qtype.value,
                kind="bridge",
                results=len(bridge.evidence),
                new_evidence=added,
                gap={},
                gate=bridge.gate_reason,
                stop_reason=None,
                seconds=round(time.perf_counter() - t0, 4),
            )
        )
        return MultiStepTrace(
            question=text,
            route="complex",
            complexity=complexity,
            plan={
                "pattern": plan.pattern,
                "source": plan.source,
                "query_type": qtype.value,
                "steps": [
                    {
                        "query": s.query,
                        "focus": s.focus,
                        "depends_on": list(s.depends_on),
                        "action": s.action,
                    }
                    for s in plan.steps
                ],
            },
            steps=tuple(steps),
            bridge_round_stats=bridge.stats(),
            stop_reason=stop_reason,
            budget_stops=tuple(budget.stops),
            pool=tuple(sorted(pool.values(), key=lambda e: -e.score)),
            rewrites=tuple(rewrites),
            asked=tuple(asked),
            round1_quality=quality,
            warnings=tuple(warnings),
            seconds=time.perf_counter() - t_start,
        )


def _demote(e: Evidence, factor: float) -> Evidence:
    return dataclasses.replace(e, score=e.score * factor)

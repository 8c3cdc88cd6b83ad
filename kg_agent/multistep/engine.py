"""The multi-step retrieval engine: route, plan, step, bridge, merge.

1. :class:`QueryComplexityClassifier` routes SIMPLE questions to one
   entity-graph search (what the agent does single-step) and COMPLEX ones on.
2. :class:`StepPlanner` types the question and plans the first steps.
3. Each step searches, drops near-duplicates (:func:`novelty_filter`), looks
   for a gap (:func:`detect_gap`) and asks :class:`StopCriteria` whether to go
   on; the next query is the plan's next step or :func:`refine_query`.
4. The bridge round (:func:`bridge_round`) reads the best round-1 evidence
   and searches the entities it leads to, when round-1 quality is below the gate.
5. Everything collected is ranked; a short list is filled from a baseline search.

Every step is recorded in :class:`StepTrace` for ``--trace`` and the eval JSON.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from kg_agent.entities.linker import QuestionEntityLinker
from kg_agent.llm.client import LLMClient, UsageMeter
from kg_agent.multistep.bridge import BridgeOutcome, bridge_round
from kg_agent.multistep.classifier import Complexity, QueryComplexityClassifier
from kg_agent.multistep.config import MultiStepConfig
from kg_agent.multistep.gaps import GapResult, detect_gap
from kg_agent.multistep.novelty import novelty_filter
from kg_agent.multistep.planner import StepPlanner
from kg_agent.multistep.refine import refine_query
from kg_agent.multistep.relevance import (
    offline_relevance,
    quality_telemetry,
    rewrite_queries,
    score_and_rerank,
)
from kg_agent.multistep.stop import StopCriteria, StopReason
from kg_agent.retrieval.base import (
    Evidence,
    RetrievalResult,
    Retriever,
    evidence_tier,
    is_graph_found,
)
from kg_agent.retrieval.graph_walk import EntityGraphRetriever
from kg_agent.retrieval.multi_query import offline_variants
from kg_agent.retrieval.rerank import GraphReranker

__all__ = ["MultiStepEngine", "MultiStepResult", "StepTrace"]

log = logging.getLogger(__name__)


@dataclass(slots=True)
class StepTrace:
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


@dataclass(slots=True)
class MultiStepResult:
    question: str
    route: str  # "simple" or "complex"
    evidence: list[Evidence]  # final top chunks
    collected: list[Evidence]  # everything gathered, best first
    steps: list[StepTrace]
    complexity: dict[str, Any]
    plan: dict[str, Any]
    bridge_round_stats: dict[str, Any]
    quality: dict[str, Any]
    stop_reason: str | None
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def trace(self) -> dict[str, Any]:
        """The JSON-ready trace: everything but the evidence texts."""
        return {
            "question": self.question,
            "route": self.route,
            "complexity": self.complexity,
            "plan": self.plan,
            "steps": [asdict(s) for s in self.steps],
            "stop_reason": self.stop_reason,
            "bridge_round_stats": self.bridge_round_stats,
            **self.quality,
            "warnings": list(self.warnings),
            "seconds": round(self.seconds, 4),
        }


def _gap_dict(gap: GapResult) -> dict[str, Any]:
    return {
        "gap_type": gap.gap_type.value if hasattr(gap.gap_type, "value") else str(gap.gap_type),
        "missing": list(gap.missing),
        "confidence": round(gap.confidence, 3),
    }


class MultiStepEngine(Retriever):
    """Multi-step retrieval over the graph, a retriever composed of others.

    ``single`` is the entity-graph retriever each step searches with; ``base`` the
    plain ranking (hybrid) the bridge round and the fill search; ``linker`` names the
    question's entities; ``reranker`` scales PageRank into the relevance loop's
    authority (the agent's own, so both read PageRank the same way).
    """

    mode = "multistep"

    def __init__(
        self,
        single: EntityGraphRetriever,
        *,
        base: Retriever,
        linker: QuestionEntityLinker,
        reranker: GraphReranker,
        config: MultiStepConfig | None = None,
        llm: LLMClient | None = None,
        llm_timeout: float = 15.0,
    ) -> None:
        self.single = single
        self.base = base
        self.linker = linker
        self.config = config or MultiStepConfig()
        self.llm = llm
        self.llm_timeout = llm_timeout
        self.classifier = QueryComplexityClassifier(count_entities=self.linker.link)
        self._reranker = reranker

    def search(
        self,
        query: str,
        top_k: int = 10,
        *,
        force: Complexity | str | None = None,
        config: MultiStepConfig | None = None,
    ) -> RetrievalResult:
        """The final evidence (at most ``top_k``); ``extra["multistep"]`` is the whole
        :class:`MultiStepResult`, ``usage`` its LLM calls."""
        t0 = time.perf_counter()
        meter = UsageMeter()
        res = self.run(query, force=force, config=config, meter=meter)
        entry = {
            "stage": "multistep",
            "route": res.route,
            "steps": len(res.steps),
            "stop_reason": res.stop_reason,
            "results": len(res.evidence),
        }
        return RetrievalResult(
            query=query,
            evidence=res.evidence[:top_k],
            timings={"total": time.perf_counter() - t0},
            warnings=list(res.warnings),
            trace=[entry],
            usage=meter,
            extra={"multistep": res},
        )

    # ------------------------------------------------------------------ helpers
    def _score_titles(self, question: str, titles: Sequence[str]) -> dict[str, Evidence]:
        return self.single.score_titles(question, titles)

    def _neighbours(self, titles: Sequence[str]) -> list[str]:
        return self.single.neighbours(titles)

    # ------------------------------------------------------------------ main loop
    def run(
        self,
        question: str,
        *,
        force: Complexity | str | None = None,
        config: MultiStepConfig | None = None,
        meter: UsageMeter | None = None,
    ) -> MultiStepResult:
        cfg = config or self.config
        meter = meter or UsageMeter()
        t_start = time.perf_counter()
        warnings: list[str] = []
        decision = self.classifier.classify(question, force=force)
        entities = list(decision.entities) or self.linker.link(question)
        complexity = {
            "complexity": decision.complexity.value,
            "score": round(decision.score, 3),
            "reasons": list(decision.reasons),
            "entities": entities,
            "forced": force is not None,
        }
        if decision.complexity is Complexity.SIMPLE:
            t0 = time.perf_counter()
            r = self.single.search(question, cfg.top_k_final)
            step = StepTrace(
                step=1,
                query=question,
                query_type="-",
                kind="single",
                results=len(r.evidence),
                new_evidence=len(r.evidence),
                gap={},
                gate="simple route",
                stop_reason=None,
                seconds=round(time.perf_counter() - t0, 4),
            )
            return MultiStepResult(
                question=question,
                route="simple",
                evidence=r.evidence,
                collected=r.evidence,
                steps=[step],
                complexity=complexity,
                plan={},
                bridge_round_stats={"triggered": False},
                quality={},
                stop_reason=None,
                warnings=warnings,
                seconds=time.perf_counter() - t_start,
            )

        planner = StepPlanner(self.llm, timeout=self.llm_timeout, meter=meter)
        plan = planner.plan(question, entities)
        warnings += list(plan.warnings)
        qtype = plan.query_type
        queue = [s.query for s in plan.steps if not s.depends_on]
        if not queue or queue[0] != question:
            queue.insert(0, question)
        rewrites = rewrite_queries(
            question,
            max(1, cfg.n_rewrites),
            llm=self.llm,
            offline=lambda q: offline_variants(q, self.linker.link),
            meter=meter,
            timeout=self.llm_timeout,
            warnings=warnings,
        )
        stop = StopCriteria(cfg)
        pool: dict[str, Evidence] = {}
        steps: list[StepTrace] = []
        stop_reason = None
        gap: GapResult | None = None
        step_no = 0
        query = queue.pop(0)
        kind = "plan"
        while True:
            step_no += 1
            t0 = time.perf_counter()
            queries = rewrites if step_no == 1 else [query]
            found: list[Evidence] = []
            for i, q in enumerate(queries):
                res = self.single.search(
                    q, cfg.top_k_each_step if i else max(cfg.top_k_each_step, cfg.top_k_final * 3)
                )
                found += res.evidence
            fresh = [e for e in found if e.section_id not in pool]
            fresh = novelty_filter(fresh, [e.content for e in pool.values()], cfg.novelty_threshold)
            for e in fresh:
                if e.section_id not in pool:
                    # later steps answer a narrower query: rank below the question's own hits
                    pool[e.section_id] = e if step_no == 1 else _demote(e, 0.5)
            gap = detect_gap(question, qtype, list(pool.values()), entities=entities)
            elapsed = time.perf_counter() - t_start
            reason = stop.check(
                step_no,
                len(fresh),
                len(pool),
                gap,
                elapsed,
                float(meter.as_dict().get("cost_usd", 0.0)),
            )
            # a planned step still queued (a per-entity or per-year search) runs
            # even when no gap is detected, within max_steps
            planned_left = bool(queue) and step_no < cfg.max_steps
            if reason is StopReason.NO_GAP and planned_left:
                reason = None
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
                )
            )
            if reason is not None:
                stop_reason = reason.value
                break
            if queue:
                query, kind = queue.pop(0), "plan"
            else:
                query, kind = refine_query(question, gap), "refine"

        round1 = sorted(pool.values(), key=lambda e: -e.score)
        top = round1[: cfg.bridge_top_evidence]
        quality = sum(offline_relevance(e, question) for e in top) / len(top) if top else 0.0
        t0 = time.perf_counter()
        bridge: BridgeOutcome = bridge_round(
            question,
            round1,
            config=cfg,
            quality=quality,
            neighbours=self._neighbours,
            score_titles=lambda ts: self._score_titles(question, ts),
            search=lambda q, k: self.base.search(q, k).evidence,
            resolve=self.linker.link,
            exclude={e.title for e in round1[: cfg.top_k_final]},
            gap_terms=list(gap.missing) if gap is not None else [],
            llm=self.llm,
            meter=meter,
            timeout=self.llm_timeout,
            warnings=warnings,
        )
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
        collected = sorted(pool.values(), key=lambda e: -e.score)
        # relevance loop: score the best candidates (Claude in parallel when
        # available, else the calibrated offline score), weight by PageRank
        # authority, drop those under the threshold, keep rerank_top_k; graph
        # tiers still come first, relevance orders within a tier
        width = max(cfg.rerank_top_k, cfg.top_k_final)
        candidates = _distinct_titles_first(collected, 2 * width)
        outcome = score_and_rerank(
            question,
            candidates,
            llm=self.llm,
            meter=meter,
            timeout=self.llm_timeout,
            authority=lambda e: self._reranker.pagerank_scaled(e.pagerank),
            rerank_top_k=cfg.rerank_top_k,
            relevance_threshold=cfg.relevance_threshold,
            warnings=warnings,
        )
        # graph-found evidence (named entities and their neighbours) stays even
        # under the threshold: a bridge passage is dissimilar to the question by
        # nature (the threshold cut 2Wiki Recall@5 from 96.8 to 70.3 otherwise)
        kept_ids = {e.section_id for e in outcome.kept}
        rescued = [e for e in candidates if is_graph_found(e) and e.section_id not in kept_ids]
        if rescued:
            outcome.notes.append(
                f"kept {len(rescued)} graph-found passage(s) the relevance loop cut"
            )
        final = sorted(
            [*outcome.kept, *rescued],
            key=lambda e: (-evidence_tier(e), -outcome.scores.get(e.section_id, 0.0)),
        )[: cfg.top_k_final]
        if len(final) < cfg.top_k_final:
            have = {e.title for e in final}
            fill = [e for e in collected if e.title not in have]
            fill += self.base.search(question, cfg.top_k_final * 2).evidence
            for e in fill:
                if len(final) >= cfg.top_k_final:
                    break
                if e.title not in have:
                    have.add(e.title)
                    final.append(e)
        quality_info = quality_telemetry(rewrites, outcome)
        quality_info["round1_quality"] = round(quality, 3)
        stats = bridge.stats()
        return MultiStepResult(
            question=question,
            route="complex",
            evidence=final,
            collected=collected,
            steps=steps,
            complexity=complexity,
            plan={
                "pattern": plan.pattern,
                "source": plan.source,
                "query_type": qtype.value,
                "steps": [
                    {"query": s.query, "focus": s.focus, "depends_on": list(s.depends_on)}
                    for s in plan.steps
                ],
            },
            bridge_round_stats=stats,
            quality=quality_info,
            stop_reason=stop_reason,
            warnings=warnings,
            seconds=time.perf_counter() - t_start,
        )


def _demote(e: Evidence, factor: float) -> Evidence:
    return dataclasses.replace(e, score=e.score * factor)


def _distinct_titles_first(ranked: list[Evidence], k: int) -> list[Evidence]:
    """Best chunk of each of the top ``k`` articles (recall is counted per article)."""
    out: list[Evidence] = []
    seen: set[str] = set()
    for e in ranked:
        if e.title not in seen:
            seen.add(e.title)
            out.append(e)
        if len(out) == k:
            break
    return out

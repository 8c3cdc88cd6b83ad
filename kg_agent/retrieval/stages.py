"""What runs between finding evidence and answering: each a :class:`Stage`.

A stage takes the question and a :class:`RetrievalResult` and returns the result it
would pass on (``apply``), recording what it did in ``result.trace``. The agent runs
them in order: the quality filter, the graph rerank (with the tier order applied
once, here), the top-k cut. Eval modes run the same stages, or none.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol

from kg_agent.retrieval.base import Evidence, RetrievalResult, evidence_tier, is_graph_found
from kg_agent.retrieval.quality import CONTENT_QUALITY_THRESHOLD, score_section_quality
from kg_agent.retrieval.rerank import GraphReranker

__all__ = ["GraphRerank", "QualityFilter", "Stage", "TopK", "run_stages"]


class Stage(Protocol):
    """One step after retrieval."""

    name: str

    def apply(self, question: str, result: RetrievalResult) -> RetrievalResult: ...


def _passed(
    result: RetrievalResult, evidence: list[Evidence], entry: dict[str, Any]
) -> RetrievalResult:
    return dataclasses.replace(result, evidence=evidence, trace=[*result.trace, entry])


class QualityFilter:
    """Drops sections too short or too far off the question to cite.

    Graph-found evidence (:func:`~kg_agent.retrieval.base.is_graph_found`) stays
    whatever its score: a bridge passage shares few words with the question by nature
    (measured: dropping them cost 10 points of Recall@5 on 2Wiki). When every section
    is dropped, the ranking is kept rather than answering from nothing. Each item's
    score goes into ``scores["quality"]``.
    """

    name = "quality_filter"

    def __init__(self, threshold: float = CONTENT_QUALITY_THRESHOLD) -> None:
        self.threshold = threshold

    def apply(self, question: str, result: RetrievalResult) -> RetrievalResult:
        kept = []
        exempt = 0
        for ev in result.evidence:
            q = score_section_quality(ev.content, question)
            ev.scores["quality"] = q
            if q >= self.threshold:
                kept.append(ev)
            elif is_graph_found(ev):
                kept.append(ev)
                exempt += 1
        entry = {
            "stage": self.name,
            "kept": len(kept),
            "dropped": len(result.evidence) - len(kept),
            "kept_by_graph": exempt,
            "threshold": self.threshold,
        }
        return _passed(result, kept or list(result.evidence), entry)


class GraphRerank:
    """Retrieval score, global and personalised PageRank (:class:`GraphReranker`), then
    the tier order: evidence named in the question, then its neighbours, then the rest
    (:func:`~kg_agent.retrieval.base.evidence_tier`). PageRank reorders within a tier,
    never across; for evidence found by search alone (one tier) the order is the rerank's.
    """

    name = "rerank"

    def __init__(self, reranker: GraphReranker) -> None:
        self.reranker = reranker

    def apply(self, question: str, result: RetrievalResult) -> RetrievalResult:
        ranked = self.reranker.rerank(result.evidence)
        tiered = any(evidence_tier(e) for e in ranked)
        ranked.sort(key=lambda e: -evidence_tier(e))  # stable: the rerank within a tier
        entry = {"stage": self.name, "weights": self.reranker.describe(), "within_tiers": tiered}
        return _passed(result, ranked, entry)


class TopK:
    """The first ``k`` items."""

    name = "top_k"

    def __init__(self, k: int) -> None:
        self.k = k

    def apply(self, question: str, result: RetrievalResult) -> RetrievalResult:
        return dataclasses.replace(result, evidence=result.evidence[: self.k])


def run_stages(question: str, result: RetrievalResult, stages: list[Stage]) -> RetrievalResult:
    for stage in stages:
        result = stage.apply(question, result)
    return result

"""Typed retrieval results and the :class:`Retriever` base class.

Every retriever (semantic, BM25, multi-query, graph-reranked) returns a
:class:`RetrievalResult` of :class:`Evidence`, so the agent, the eval harness
and the reranker compose them without knowing which produced what.
"""

from __future__ import annotations

import abc
from dataclasses import asdict, dataclass, field
from typing import Any

from kg_agent.llm.client import UsageMeter


@dataclass(slots=True)
class Evidence:
    """One retrieved section, with the scores that ranked it.

    ``similarity`` is the retrieval score of the source that found it (cosine
    for semantic search, normalised BM25 for keyword search); ``score`` is the
    final ranking score after reranking; ``scores`` keeps each component.
    """

    section_id: str
    title: str
    heading: str
    heading_path: str
    content: str
    similarity: float
    pagerank: float = 0.0
    score: float = 0.0
    source: str = "semantic"
    scores: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class RetrievalResult:
    """Ranked evidence, and what finding it cost and did.

    ``timings`` are seconds per part (``embed`` and ``search`` are summed over every
    search a composite retriever ran); ``notes`` say how the evidence was found (the
    entities linked, semantic search off), for traces; ``warnings`` are what the user
    must be told (an LLM step that fell back); ``trace`` lists the steps taken, for
    ``--trace`` and the JSON result; ``usage`` counts the LLM calls made for this
    result; ``extra`` holds what one retriever alone produces (the multi-step
    engine's full result, a Cypher pack's rows).
    """

    query: str
    evidence: list[Evidence]
    timings: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    trace: list[dict[str, Any]] = field(default_factory=list)
    usage: UsageMeter | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def titles(self) -> list[str]:
        """Distinct article titles in rank order (what passage recall is measured on)."""
        return list(dict.fromkeys(e.title for e in self.evidence))

    def add_timings(self, other: RetrievalResult) -> None:
        """Add ``other``'s ``embed`` and ``search`` seconds to this result's."""
        for key in ("embed", "search"):
            spent = other.timings.get(key, 0.0)
            if spent:
                self.timings[key] = self.timings.get(key, 0.0) + float(spent)


class Retriever(abc.ABC):
    """Something that turns a query into ranked evidence.

    Subclasses may take keyword-only options after ``top_k`` (the multi-step engine's
    routing); ``search(query, top_k)`` alone always works.
    """

    #: The name traces and eval tables use for this way of finding evidence.
    mode: str = "retriever"

    @abc.abstractmethod
    def search(self, query: str, top_k: int = 10) -> RetrievalResult:
        """Return at most ``top_k`` evidence items, best first."""


#: Rank tier of each source of evidence found through the graph: a named entity of the
#: question, then its neighbours (and bridge-round evidence linked to round one),
#: then the bridge round's own finds; everything found by text or vector search is 0.
#: Rerankers reorder within a tier, never across.
GRAPH_TIERS: dict[str, int] = {"entity": 3, "graph": 2, "bridge_linked": 2, "bridge": 1}
#: The lowest tier that counts as *graph-found*: kept by the quality filter and by the
#: multi-step relevance threshold whatever its word overlap with the question (a bridge
#: passage shares few words with the question by nature).
GRAPH_FOUND_TIER = 2


def evidence_tier(ev: Evidence) -> int:
    """Rank tier of ``ev`` (:data:`GRAPH_TIERS`; 0 for text and vector search)."""
    return GRAPH_TIERS.get(ev.source, 0)


def is_graph_found(ev: Evidence) -> bool:
    """Whether ``ev`` was found by following the graph (the one definition of it)."""
    return evidence_tier(ev) >= GRAPH_FOUND_TIER

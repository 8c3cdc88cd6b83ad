"""Typed retrieval results and the :class:`Retriever` base class.

Every retriever (semantic, BM25, multi-query, graph-reranked) returns a
:class:`RetrievalResult` of :class:`Evidence`, so the agent, the eval harness
and the reranker compose them without knowing which produced what.
"""

from __future__ import annotations

import abc
from dataclasses import asdict, dataclass, field
from typing import Any


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
    """Ranked evidence plus timings (seconds per stage) for traces and benchmarks."""

    query: str
    evidence: list[Evidence]
    timings: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def titles(self) -> list[str]:
        """Distinct article titles in rank order (what passage recall is measured on)."""
        return list(dict.fromkeys(e.title for e in self.evidence))


class Retriever(abc.ABC):
    """Something that turns a query into ranked evidence."""

    @abc.abstractmethod
    def search(self, query: str, top_k: int = 10) -> RetrievalResult:
        """Return at most ``top_k`` evidence items, best first."""

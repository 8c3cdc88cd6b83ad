"""BM25 retrieval over section text, through the graph's full-text index."""

from __future__ import annotations

import time

from kg_agent.language.question import query_text
from kg_agent.retrieval.base import Evidence, Query, RetrievalResult, Retriever
from kg_agent.store import GraphReader

__all__ = ["KeywordRetriever", "text_off"]


def text_off(store: GraphReader) -> str:
    """What a user is told when the graph's full-text index is missing."""
    return (
        f"keyword search is off: the full-text index of {store.path} is missing; "
        f"'kg-agent reindex --db {store.path}' rebuilds it"
    )


class KeywordRetriever(Retriever):
    """BM25 over section headings and text, through the graph's text index (tantivy).

    ``similarity`` is the BM25 score divided by the best score of the query, so
    it lies in (0, 1] and can be mixed with cosine scores; the raw score stays
    in ``scores["bm25"]``.
    """

    mode = "bm25"

    def __init__(self, store: GraphReader) -> None:
        self.store = store

    @property
    def enabled(self) -> bool:
        """Whether the graph has its text index (a load cut short, or files lost, may
        leave it without one: then this retriever finds nothing and says why)."""
        return self.store.has_text_index()

    def search(self, query: Query, top_k: int = 10) -> RetrievalResult:
        query = query_text(query)
        t0 = time.perf_counter()
        if not self.enabled:
            return RetrievalResult(query=query, evidence=[], notes=[text_off(self.store)])
        hits = self.store.fts_search(query, top_k) if top_k > 0 else []
        best = max((h.score for h in hits), default=0.0)
        evidence = [
            Evidence.from_hit(h, h.score / best if best > 0 else 0.0, source="bm25", raw=h.score)
            for h in hits
        ]
        return RetrievalResult(
            query=query, evidence=evidence, timings={"search": time.perf_counter() - t0}
        )

"""Semantic search over section embeddings: exact scan on small graphs, HNSW on large.

Below :data:`EXACT_SCAN_MAX_SECTIONS` sections, one matrix product over all
embeddings (held in memory, 1.5 KB per section) is both exact and faster than
an index probe; above it, Kùzu's HNSW index answers with bounded memory.
``scripts/bench_query.py --index-recall`` measures the index's recall against
the exact scan.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from kg_agent.embedding import Embedder
from kg_agent.exceptions import InvalidArgumentError
from kg_agent.retrieval.base import Evidence, RetrievalResult, Retriever
from kg_agent.store import GraphStore, SectionHit

EXACT_SCAN_MAX_SECTIONS = 200_000


def _evidence(hit: SectionHit, score: float, source: str) -> Evidence:
    return Evidence(
        section_id=hit.section_id,
        title=hit.title,
        heading=hit.heading,
        heading_path=hit.heading_path,
        content=hit.text,
        similarity=float(score),
        pagerank=hit.pagerank,
        score=float(score),
        source=source,
        scores={source: float(score)},
    )


class SemanticRetriever(Retriever):
    """Cosine similarity between the query and section embeddings."""

    def __init__(
        self,
        store: GraphStore,
        embedder: Embedder,
        *,
        mode: str = "auto",
        exact_max_sections: int = EXACT_SCAN_MAX_SECTIONS,
    ) -> None:
        if mode not in ("auto", "exact", "index"):
            raise InvalidArgumentError(f"mode must be auto, exact or index, not {mode!r}")
        model = store.meta().get("model")
        if model and model != embedder.name:
            raise InvalidArgumentError(
                f"the graph was embedded with {model}, but the query embedder is "
                f"{embedder.name}: use the same model"
            )
        self.store = store
        self.embedder = embedder
        if mode == "auto":
            n = store.count("MATCH (s:Section) RETURN count(s)")
            mode = "exact" if n <= exact_max_sections else "index"
        self.mode = mode
        self._ids: list[str] | None = None
        self._matrix: Any = None

    def _load_matrix(self) -> None:
        if self._ids is None:
            self._ids, self._matrix = self.store.section_embeddings()

    def search(self, query: str, top_k: int = 10) -> RetrievalResult:
        t0 = time.perf_counter()
        vec = self.embedder.embed_query(query)
        t1 = time.perf_counter()
        evidence = self.search_vector(vec, top_k)
        t2 = time.perf_counter()
        return RetrievalResult(
            query=query, evidence=evidence, timings={"embed": t1 - t0, "search": t2 - t1}
        )

    def search_vector(self, vec: Any, top_k: int) -> list[Evidence]:
        """Top sections for an already-embedded query."""
        if top_k < 1:
            return []
        if self.mode == "index":
            hits = self.store.vector_search(vec, top_k)
            return [_evidence(h, h.score, "semantic") for h in hits]
        self._load_matrix()
        assert self._ids is not None
        if not self._ids:
            return []
        sims = self._matrix @ np.asarray(vec, dtype=np.float32)
        k = min(top_k, len(self._ids))
        top = np.argpartition(-sims, k - 1)[:k]
        top = top[np.argsort(-sims[top], kind="stable")]
        ids = [self._ids[i] for i in top]
        rows = self.store.sections_by_ids(ids)
        return [
            _evidence(rows[sid], float(sims[i]), "semantic")
            for sid, i in zip(ids, top, strict=True)
            if sid in rows
        ]

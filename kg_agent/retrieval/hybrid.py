"""Hybrid retrieval: dense and BM25 rankings fused by reciprocal rank.

Reciprocal rank fusion needs no score calibration between a cosine and a BM25
score, which differ in scale per query; ``rrf_k`` = 60 is the value of the
original paper (Cormack et al., 2009) and flattens the head of each list so
that an item both retrievers rank well beats one ranked first by only one.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence

from kg_agent.exceptions import InvalidArgumentError
from kg_agent.language.question import query_text
from kg_agent.retrieval.base import Evidence, Query, RetrievalResult, Retriever

__all__ = ["HybridRetriever", "reciprocal_rank_fusion"]

RRF_K = 60


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[Evidence]],
    *,
    weights: Sequence[float] | None = None,
    rrf_k: int = RRF_K,
) -> list[Evidence]:
    """Fuse ranked lists of sections; ``score`` is the fused score, best first.

    The ``similarity`` of a fused item is the best ``similarity`` any list gave
    it (what the quality filter and the reranker read); ``scores`` keeps each
    source's own score and ``rrf``.
    """
    if weights is None:
        weights = [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise InvalidArgumentError("one weight per ranking is needed")
    fused: dict[str, float] = {}
    first: dict[str, Evidence] = {}
    parts: dict[str, dict[str, float]] = {}
    best_sim: dict[str, float] = {}
    for ranking, w in zip(rankings, weights, strict=True):
        for rank, ev in enumerate(ranking):
            sid = ev.section_id
            fused[sid] = fused.get(sid, 0.0) + w / (rrf_k + rank + 1)
            first.setdefault(sid, ev)
            parts.setdefault(sid, {}).update(ev.scores)
            best_sim[sid] = max(best_sim.get(sid, float("-inf")), ev.similarity)
    order = sorted(fused, key=lambda s: -fused[s])  # stable: ties keep first-seen order
    return [
        dataclasses.replace(
            first[s],
            similarity=best_sim[s],
            score=fused[s],
            source="hybrid",
            scores={**parts[s], "rrf": fused[s]},
        )
        for s in order
    ]


class HybridRetriever(Retriever):
    """Dense + BM25, each asked for ``depth`` candidates, fused by RRF."""

    mode = "hybrid"

    def __init__(
        self,
        dense: Retriever,
        keyword: Retriever,
        *,
        depth: int = 50,
        dense_weight: float = 1.0,
        keyword_weight: float = 1.0,
        rrf_k: int = RRF_K,
    ) -> None:
        if depth < 1:
            raise InvalidArgumentError(f"depth must be >= 1, got {depth}")
        if dense_weight < 0 or keyword_weight < 0 or dense_weight + keyword_weight == 0:
            raise InvalidArgumentError("weights must be >= 0 and not both 0")
        if rrf_k < 0:
            raise InvalidArgumentError(f"rrf_k must be >= 0, got {rrf_k}")
        self.dense = dense
        self.keyword = keyword
        self.depth = depth
        self.weights = (float(dense_weight), float(keyword_weight))
        self.rrf_k = rrf_k

    def search(self, query: Query, top_k: int = 10) -> RetrievalResult:
        query = query_text(query)
        depth = max(self.depth, top_k)
        d = self.dense.search(query, depth)
        t0 = time.perf_counter()
        kw = self.keyword.search(query, depth)
        fused = reciprocal_rank_fusion(
            [d.evidence, kw.evidence], weights=self.weights, rrf_k=self.rrf_k
        )
        timings = dict(d.timings)
        timings["search"] = timings.get("search", 0.0) + time.perf_counter() - t0
        return RetrievalResult(query=query, evidence=fused[:top_k], timings=timings)

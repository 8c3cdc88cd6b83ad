"""Entity-seeded graph retrieval: the question's entities, then their graph neighbours.

The ranking is in tiers, because on multi-hop questions the second-hop
passage is rarely similar to the question ("the director of film X": the
director's article is about a person, not about X):

1. articles the question names (:class:`QuestionEntityLinker`), by similarity;
2. articles one link/mention away from those and from the top base hit, plus
   that hit itself, by similarity of their best section to the question;
3. the rest of the base (hybrid) ranking.

Measured on the three dev sets (``docs/BENCHMARKS.md``) this tiering beats
mixing neighbours into the base ranking by score: a neighbour's cosine is
low exactly when it is the bridge.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence

from kg_agent.exceptions import InvalidArgumentError
from kg_agent.retrieval.base import Evidence, RetrievalResult, Retriever
from kg_agent.retrieval.entities import QuestionEntityLinker
from kg_agent.retrieval.semantic import SemanticRetriever
from kg_agent.store import GraphStore

__all__ = ["EntityGraphRetriever", "evidence_tier", "graph_neighbours"]

#: Tier offsets added to a similarity in [-1, 1], so tiers never interleave.
ENTITY_TIER = 4.0
NEIGHBOUR_TIER = 2.0


def evidence_tier(ev: Evidence) -> int:
    """Rank tier of graph-found evidence (entity 3, neighbour or bridge-linked 2,
    bridge 1, anything else 0): rerankers reorder within a tier, never across."""
    return {"entity": 3, "graph": 2, "bridge_linked": 2, "bridge": 1}.get(ev.source, 0)


def graph_neighbours(store: GraphStore, titles: Sequence[str], *, limit: int) -> list[str]:
    """Articles one ``LINKS_TO`` edge (either direction) from ``titles``, strongest first."""
    anchors = set(titles)
    out: dict[str, int] = {}
    for a, b, n in store.link_neighbourhood(list(titles), limit=limit):
        for x, y in ((a, b), (b, a)):
            if x in anchors and y not in anchors:
                out[y] = max(out.get(y, 0), n)
    return sorted(out, key=lambda t: -out[t])


class EntityGraphRetriever(Retriever):
    """Question entities, then their 1-hop neighbourhood, then a base ranking."""

    mode = "entity_graph"

    def __init__(
        self,
        store: GraphStore,
        dense: SemanticRetriever,
        base: Retriever,
        *,
        linker: QuestionEntityLinker | None = None,
        expand_from_top: int = 1,
        depth: int = 30,
        max_edges: int = 2000,
    ) -> None:
        if expand_from_top < 0 or depth < 1 or max_edges < 1:
            raise InvalidArgumentError("expand_from_top >= 0, depth >= 1, max_edges >= 1")
        self.store = store
        self.dense = dense
        self.base = base
        self.linker = linker or QuestionEntityLinker(store)
        self.expand_from_top = expand_from_top
        self.depth = depth
        self.max_edges = max_edges

    def search(self, query: str, top_k: int = 10) -> RetrievalResult:
        base = self.base.search(query, max(self.depth, top_k))
        t0 = time.perf_counter()
        entities = self.linker.link(query)
        vec = self.dense.query_vector(query)
        hits = list(dict.fromkeys(e.title for e in base.evidence))[: self.expand_from_top]
        anchors = list(dict.fromkeys([*entities, *hits]))
        neighbours = graph_neighbours(self.store, anchors, limit=self.max_edges)
        second = [t for t in dict.fromkeys([*hits, *neighbours]) if t not in entities]
        scored = self.dense.score_articles(vec, [*entities, *second])
        ranked: list[Evidence] = []
        for tier, titles, source in (
            (ENTITY_TIER, entities, "entity"),
            (NEIGHBOUR_TIER, second, "graph"),
        ):
            items = sorted((scored[t] for t in titles if t in scored), key=lambda e: -e.similarity)
            ranked += [
                dataclasses.replace(
                    e, score=tier + e.similarity, source=source, scores={**e.scores, source: 1.0}
                )
                for e in items
            ]
        seen = {e.section_id for e in ranked}
        top = max((e.score for e in base.evidence), default=1.0) or 1.0
        ranked += [
            dataclasses.replace(e, score=0.99 * e.score / top)
            for e in base.evidence
            if e.section_id not in seen
        ]
        timings = dict(base.timings)
        timings["graph"] = time.perf_counter() - t0
        return RetrievalResult(
            query=query,
            evidence=ranked[:top_k],
            timings=timings,
            notes=[f"entities: {entities}", f"expanded from: {anchors}"],
        )

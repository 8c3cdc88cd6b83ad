"""Structural questions ("How is X connected to Y?", "What links to X?") answered by a
named read-only query of a Cypher pack, with the question's entities as parameters.

A :class:`Retriever` like the others, but what it finds is rows, not sections: its
result has no evidence, the rows go in ``extra["graph"]`` and the agent puts them
before the answer. A question of no structural form finds nothing here and costs a
few regular expressions.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from kg_agent.cypher_packs import (
    CypherPack,
    CypherPackError,
    bind_intent,
    default_pack_dir,
    load_packs,
    run_query,
    structural_intent,
)
from kg_agent.entities import EntityResolver
from kg_agent.retrieval.base import RetrievalResult, Retriever
from kg_agent.store import GraphStore

__all__ = ["StructuralRetriever"]

log = logging.getLogger(__name__)


class StructuralRetriever(Retriever):
    """Cypher-pack answers to structural questions; ``packs`` defaults to the bundled."""

    mode = "structure"

    def __init__(
        self,
        store: GraphStore,
        pack_path: str | Path | None = None,
        *,
        resolver: EntityResolver | None = None,
    ) -> None:
        self.store = store
        self.resolver = resolver or EntityResolver(store)
        self.packs: dict[str, CypherPack] = load_packs(
            Path(pack_path) if pack_path else default_pack_dir()
        )

    def search(self, query: str, top_k: int = 10) -> RetrievalResult:
        """``extra["graph"]`` is ``{"query", "params", "rows"}`` when the question has a
        structural form whose entities are all in the graph (and the pack ran)."""
        out = RetrievalResult(query=query, evidence=[])
        intent = structural_intent(query)
        if intent is None:
            return out
        params = bind_intent(self.store, intent, resolver=self.resolver)
        out.trace.append(
            {
                "stage": "structure",
                "query": intent.query,
                "entities": list(intent.entities),
                "bound": params,
            }
        )
        if params is None:
            return out
        try:
            rows = self.run(intent.query, **params)
        except Exception as exc:
            log.warning("cypher pack %s failed: %s", intent.query, exc)
            return out
        out.extra["graph"] = {"query": intent.query, "params": params, "rows": rows}
        return out

    def run(self, name: str, pack: str | None = None, **params: Any) -> list[dict[str, Any]]:
        """Run the named query (of ``pack``, else of whichever pack has it)."""
        return run_query(self.store, self._pack_for(name, pack), name, **params)

    def _pack_for(self, name: str, pack: str | None) -> CypherPack:
        if pack is not None:
            if pack not in self.packs:
                raise CypherPackError(f"no Cypher pack named {pack!r}")
            return self.packs[pack]
        for p in self.packs.values():
            if name in p:
                return p
        known = sorted(q.name for p in self.packs.values() for q in p)
        raise CypherPackError(f"no pack query named {name!r}; known: {', '.join(known)}")

"""Structural questions ("How is X connected to Y?", "What links to X?") answered by a
named read-only query of a Cypher pack, with the question's entities as parameters.

A :class:`Retriever` like the others, but what it finds is rows, not sections: its
result has no evidence, the rows go in ``graph`` and the pipeline puts them before
the answer. Which questions are structural is read by
:mod:`kg_agent.language.intent` (the question's ``intent``); a question of no
structural form finds nothing here.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from kg_agent.cypher_packs import (
    CypherPack,
    CypherPackError,
    default_pack_dir,
    load_packs,
    run_query,
)
from kg_agent.entities import EntityResolver
from kg_agent.language.intent import StructuralIntent
from kg_agent.language.question import as_question
from kg_agent.retrieval.base import GraphAnswer, Query, RetrievalResult, Retriever
from kg_agent.store import GraphReader, GraphStore

__all__ = ["StructuralRetriever", "bind_intent", "format_graph_answer", "resolve_entities"]

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

    def search(self, query: Query, top_k: int = 10) -> RetrievalResult:
        """``graph`` holds the query's rows when the question has a structural form
        whose entities are all in the graph (and the pack ran)."""
        question = as_question(query)
        out = RetrievalResult(query=question.text, evidence=[])
        intent = question.intent
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
        out.graph = GraphAnswer(intent.query, params, rows)
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


def resolve_entities(
    store: GraphReader, names: Sequence[str], *, kind: Literal["article", "category"] = "article"
) -> list[str | None]:
    """Canonical graph names for ``names`` (None where nothing fits), in order
    (:meth:`~kg_agent.entities.EntityResolver.resolve`)."""
    return EntityResolver(store).resolve_all(names, kind=kind)


def bind_intent(
    store: GraphReader, intent: StructuralIntent, *, resolver: EntityResolver | None = None
) -> dict[str, str] | None:
    """Pack parameters for ``intent`` once every entity resolves; None if one does not.

    ``resolver``: one already built over ``store`` (else one is made for the call)."""
    if resolver is None:
        resolved = resolve_entities(store, intent.entities, kind=intent.entity_kind)
    else:
        resolved = resolver.resolve_all(intent.entities, kind=intent.entity_kind)
    if any(r is None for r in resolved):
        return None
    return intent.bind([r for r in resolved if r is not None])


def format_graph_answer(graph: GraphAnswer) -> str:
    """The rows as one line, put before the answer (ten at most)."""
    rows = graph.rows
    if not rows:
        return f"Graph ({graph.query}): no result in the graph."
    shown = "; ".join(", ".join(f"{k}={v}" for k, v in row.items()) for row in rows[:10])
    more = f" (+{len(rows) - 10} more)" if len(rows) > 10 else ""
    return f"Graph ({graph.query}): {shown}{more}"

"""kg-agent: knowledge-graph question answering over Wikipedia on embedded Kùzu.

The public API::

    from kg_agent import KnowledgeGraphAgent, AgentConfig

    with KnowledgeGraphAgent("wiki.kuzu", config=AgentConfig(top_k=5)) as agent:
        result = agent.query("Who designed the Analytical Engine?")
        print(result.answer, [c.title for c in result.citations])

Loading (:func:`load_source`, :func:`embed_graph`), the graph (:class:`GraphStore`), the
query engine (:class:`QueryPipeline` over :class:`GraphComponents`), the reading of a
question (:class:`Question`), the retriever and stage interfaces are here too;
everything else is internal. Names
are imported on first use, so ``import kg_agent`` stays cheap (the ``kg-agent``
executable's supervisor imports this package and must start in milliseconds).
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING, Any

from kg_agent.exceptions import (
    DatabaseError,
    DatabaseLockedError,
    DatabaseNotFoundError,
    InvalidArgumentError,
    KGAgentError,
    LoadAborted,
    SchemaMismatchError,
    SourceError,
    UnknownFormatError,
)

if TYPE_CHECKING:
    from kg_agent.agent import KnowledgeGraphAgent
    from kg_agent.config import AgentConfig
    from kg_agent.embedding import Embedder
    from kg_agent.ingest.compact import compact_graph
    from kg_agent.ingest.embed_graph import EmbedReport, embed_graph
    from kg_agent.ingest.maintain import delete_articles
    from kg_agent.ingest.pipeline import LoadOptions, LoadReport, load_source
    from kg_agent.ingest.update import UpdateOptions, update_graph
    from kg_agent.language.question import Question
    from kg_agent.pipeline import GraphComponents, QueryPipeline, build_pipeline
    from kg_agent.result import QueryResult
    from kg_agent.retrieval.base import Evidence, RetrievalResult, Retriever
    from kg_agent.retrieval.stages import Stage
    from kg_agent.store import GraphStore
    from kg_agent.synthesis.context import Citation

__version__ = "0.1.0"

# A library logs; the application decides where logs go. Without this, Python's
# last-resort handler prints every warning to stderr, so a degraded LLM call showed
# twice on the CLI: once logged, once from QueryResult.warnings.
logging.getLogger(__name__).addHandler(logging.NullHandler())

_LAZY = {
    "KnowledgeGraphAgent": "kg_agent.agent",
    "QueryResult": "kg_agent.result",
    "Question": "kg_agent.language.question",
    "Stage": "kg_agent.retrieval.stages",
    "AgentConfig": "kg_agent.config",
    "Embedder": "kg_agent.embedding",
    "EmbedReport": "kg_agent.ingest.embed_graph",
    "embed_graph": "kg_agent.ingest.embed_graph",
    "LoadOptions": "kg_agent.ingest.pipeline",
    "LoadReport": "kg_agent.ingest.pipeline",
    "load_source": "kg_agent.ingest.pipeline",
    "UpdateOptions": "kg_agent.ingest.update",
    "update_graph": "kg_agent.ingest.update",
    "delete_articles": "kg_agent.ingest.maintain",
    "compact_graph": "kg_agent.ingest.compact",
    "GraphComponents": "kg_agent.pipeline",
    "QueryPipeline": "kg_agent.pipeline",
    "build_pipeline": "kg_agent.pipeline",
    "Evidence": "kg_agent.retrieval.base",
    "RetrievalResult": "kg_agent.retrieval.base",
    "Retriever": "kg_agent.retrieval.base",
    "GraphStore": "kg_agent.store",
    "Citation": "kg_agent.synthesis.context",
}

__all__ = [
    "AgentConfig",
    "Citation",
    "DatabaseError",
    "DatabaseLockedError",
    "DatabaseNotFoundError",
    "EmbedReport",
    "Embedder",
    "Evidence",
    "GraphComponents",
    "GraphStore",
    "InvalidArgumentError",
    "KGAgentError",
    "KnowledgeGraphAgent",
    "LoadAborted",
    "LoadOptions",
    "LoadReport",
    "QueryPipeline",
    "QueryResult",
    "Question",
    "RetrievalResult",
    "Retriever",
    "SchemaMismatchError",
    "SourceError",
    "Stage",
    "UnknownFormatError",
    "UpdateOptions",
    "__version__",
    "build_pipeline",
    "compact_graph",
    "delete_articles",
    "embed_graph",
    "load_source",
    "update_graph",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'kg_agent' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)

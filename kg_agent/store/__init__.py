"""The graph store: the Kùzu database and the indexes kept beside it.

Every Kùzu call of the package goes through here (:class:`GraphStore`), so a
maintained fork of Kùzu, or another embedded graph database, replaces this
package alone.
"""

from kg_agent.store.graph import NODE_TABLES, REL_TABLES, SCHEMA_VERSION, GraphStore
from kg_agent.store.layout import index_dir, remove_database
from kg_agent.store.reader import GraphReader
from kg_agent.store.reads import (
    RECENT,
    UNINDEXED,
    VECTOR_INDEX,
    FactKey,
    FactRow,
    IndexStatus,
    SectionHit,
    StoreStats,
)
from kg_agent.store.text_index import TextIndex
from kg_agent.store.vector_index import VectorIndex
from kg_agent.store.vectors import vector_count

__all__ = [
    "NODE_TABLES",
    "RECENT",
    "REL_TABLES",
    "SCHEMA_VERSION",
    "UNINDEXED",
    "VECTOR_INDEX",
    "FactKey",
    "FactRow",
    "GraphReader",
    "GraphStore",
    "IndexStatus",
    "SectionHit",
    "StoreStats",
    "TextIndex",
    "VectorIndex",
    "index_dir",
    "remove_database",
    "vector_count",
]

"""Bring a graph written by an earlier kg-agent to the current schema, in place.

Schema 1 → 2: section vectors move from ``Section.embedding`` to the ``SectionVector``
table (Kùzu 0.11.3 cannot ``SET`` a vector column an index uses), sections get a
``text_hash`` (unknown, NULL, for the old ones: their vectors are trusted),
``Load`` gets its ``status``, and Kùzu's full-text indexes are dropped (search moved to
the text index beside the graph, which ``reindex`` then builds with the vector index).

The indexes are dropped in a session of their own: dropping a vector index and then
writing in the same session trips a Kùzu 0.11 catalog bug.
"""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from kg_agent.exceptions import DatabaseError, SchemaMismatchError
from kg_agent.store.graph import SCHEMA_VERSION, GraphStore
from kg_agent.store.layout import index_dir

__all__ = ["upgrade_graph"]

_OLD_INDEXES = (
    ("Section", "section_embedding_idx", "DROP_VECTOR_INDEX"),
    ("Section", "section_text_fts", "DROP_FTS_INDEX"),
    ("Article", "article_title_fts", "DROP_FTS_INDEX"),
)


def upgrade_graph(db_path: str | Path) -> bool:
    """Upgrade ``db_path`` to :data:`SCHEMA_VERSION`; False when it is already there."""
    with GraphStore.open(db_path, read_only=False) as store:
        meta = store.meta()
        version = meta.get("schema_version")
        if version == SCHEMA_VERSION:
            return False
        if version != "1":
            raise SchemaMismatchError(
                f"database {db_path} has schema version {version}; this kg-agent reads "
                f"{SCHEMA_VERSION} and upgrades 1"
            )
        names = store.index_names()
        for table, name, proc in _OLD_INDEXES:
            if name in names:
                store._run(f"CALL {proc}('{table}', '{name}')")
    root = index_dir(db_path)
    root.mkdir(parents=True, exist_ok=True)
    with (
        GraphStore.open(db_path, read_only=False) as store,
        tempfile.TemporaryDirectory(prefix=".kg-upgrade-", dir=root) as tmp,
    ):
        dim = int(store.meta().get("dimension", "0"))
        exported = Path(tmp) / "vectors.parquet"
        store.export_parquet(
            "MATCH (s:Section) WHERE s.embedding IS NOT NULL "
            "RETURN s.id AS id, s.embedding AS embedding",
            exported,
        )
        vectors = pq.read_table(exported)
        store._run("ALTER TABLE Section DROP embedding")
        store._run("ALTER TABLE Section ADD text_hash STRING")
        store._run(
            "CREATE NODE TABLE IF NOT EXISTS SectionVector(id STRING PRIMARY KEY, "
            f"text_hash STRING, embedding FLOAT[{dim}])"
        )
        n = vectors.num_rows
        if n:
            table = pa.table(
                {
                    "id": vectors.column("id"),
                    "text_hash": pa.array([None] * n, pa.string()),
                    "embedding": vectors.column("embedding").cast(pa.list_(pa.float32(), dim)),
                }
            )
            ready = Path(tmp) / "section-vectors.parquet"
            pq.write_table(table, ready)
            store.copy_parquet("SectionVector", [ready])
        with contextlib.suppress(DatabaseError):  # a status column already there
            store._run("ALTER TABLE Load ADD status STRING DEFAULT 'complete'")
        sections = int(store._scalar("MATCH (s:Section) RETURN count(s)") or 0)
        state = "complete" if n == sections else ("none" if n == 0 else "partial")
        store.set_meta(
            schema_version=SCHEMA_VERSION,
            embeddings=state,
            indexes_stale="1",
            text_stale="1",
        )
    return True

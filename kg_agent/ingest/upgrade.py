"""Bring a graph written by an earlier kg-agent to the current schema.

Schema 1 → 2: section vectors move from ``Section.embedding`` to the ``SectionVector``
table (Kùzu 0.11.3 cannot ``SET`` a vector column an index uses), sections get their
``text_hash``, ``Load`` gets its ``status``, and Kùzu's full-text indexes go (search
moved to the text index beside the graph, which ``reindex`` then builds with the
vector index).

The graph is rebuilt, not altered: Kùzu 0.11.3 cannot drop a vector index and keep
using its table (after ``DROP_VECTOR_INDEX`` a ``COPY`` or ``CREATE`` into the table
fails on the dropped index's catalog entry, and a ``SET`` crashes the process). So
every table is exported from the old graph (not written to) and copied into a new
database beside it (``.NAME.kg-new``), which replaces the old one with a rename, as a
first load does: ``kill -9`` at any moment leaves the old graph or the upgraded one.

Schema 2 → 3: articles get ``revision`` and ``digest`` (what ``kg-agent update``
compares), added in place with ``ALTER TABLE`` in one transaction: a graph loaded
before has none, so its first update re-reads every article once.

Schema 3 → 4: articles get their ``kind`` (empty: unknown) and the infobox fact tables
(``Fact``, ``HAS_FACT``, ``REFERS_TO``) are created, empty, in place, in one transaction.
Facts and kinds are read from the dump's wikitext, which the graph does not keep: they
come with the articles' next load (``kg-agent load DUMP --force``) or with the update
that changes them; until then a question is answered from the text as before.

Schema 4 → 5: the vector index moves beside the graph (``store/vector_index.py``):
Kùzu's HNSW indexes and the update tables (``UnindexedVector``, ``RecentVector<n>``)
go, every vector into ``SectionVector``. Kùzu 0.11.3 cannot drop a vector index and
keep its table (above), so the graph is compacted (``ingest/compact.py``: every table
copied into a new database, renamed over the old one), which builds the new index.

Schema 5 → 6: fact ids become numbers, and 6 → 7: a ``Fact`` node a fact, not an item
(``ingest/fact_table.py``); both by that compaction.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from kg_agent.exceptions import SchemaMismatchError
from kg_agent.ingest.prepare import text_hashes
from kg_agent.store.graph import SCHEMA_VERSION, GraphStore
from kg_agent.store.integrity import write_checksums
from kg_agent.store.layout import index_dir, install, new_database_path, remove_database

__all__ = ["upgrade_graph"]

#: What schema 1 held, as each schema-2 table takes it (columns in table order).
_V1_TABLES = {
    "Meta": "MATCH (m:Meta) WHERE NOT m.key IN ['schema_version', 'model', 'dimension'] "
    "RETURN m.key AS key, m.value AS value",
    "Load": "MATCH (l:Load) RETURN l.id AS id, l.source AS source, l.format AS format, "
    "l.fingerprint AS fingerprint, l.started_at AS started_at, l.finished_at AS "
    "finished_at, l.articles AS articles, l.redirects AS redirects, l.sections AS "
    "sections, l.model AS model, 'complete' AS status",
    "Article": "MATCH (a:Article) RETURN a.title AS title, a.page_id AS page_id, a.is_stub "
    "AS is_stub, a.is_disambiguation AS is_disambiguation, a.pagerank AS pagerank, "
    "a.n_sections AS n_sections, a.word_count AS word_count, a.load_id AS load_id, "
    "CAST(NULL AS INT64) AS revision, CAST(NULL AS STRING) AS digest, '' AS kind",
    "Category": "MATCH (c:Category) RETURN c.name AS name",
    "Redirect": "MATCH (r:Redirect) RETURN r.title AS title, r.load_id AS load_id",
    "HAS_SECTION": "MATCH (a:Article)-[:HAS_SECTION]->(s:Section) RETURN a.title AS f, s.id AS t",
    "LINKS_TO": "MATCH (a:Article)-[r:LINKS_TO]->(b:Article) "
    "RETURN a.title AS f, b.title AS t, r.count AS count, r.inferred AS inferred",
    "MENTIONS": "MATCH (s:Section)-[r:MENTIONS]->(a:Article) "
    "RETURN s.id AS f, a.title AS t, r.count AS count, r.inferred AS inferred",
    "IN_CATEGORY": "MATCH (a:Article)-[:IN_CATEGORY]->(c:Category) "
    "RETURN a.title AS f, c.name AS t",
    "REDIRECTS_TO": "MATCH (r:Redirect)-[:REDIRECTS_TO]->(a:Article) "
    "RETURN r.title AS f, a.title AS t",
}
_V1_SECTIONS = (
    "MATCH (s:Section) RETURN s.id AS id, s.article AS article, s.heading AS heading, "
    "s.heading_path AS heading_path, s.level AS level, s.ordinal AS ordinal, s.part AS part, "
    "s.text AS text, s.word_count AS word_count, s.embedding AS embedding"
)
#: Tables in an order where every edge's ends are already there.
_ORDER = ("Meta", "Load", "Article", "Category", "Redirect", "Section", "SectionVector")


def upgrade_graph(db_path: str | Path) -> bool:
    """Upgrade ``db_path`` to :data:`SCHEMA_VERSION`; False when it is already there."""
    # Read-write opens take any schema (read-only ones refuse an old one); nothing is
    # written to the old graph.
    with GraphStore.open(db_path, read_only=False) as store:
        meta = store.meta()
    version = meta.get("schema_version")
    if version == SCHEMA_VERSION:
        return False
    if version == "2":
        _upgrade_v2(db_path)
        version = "3"
    if version == "3":
        _upgrade_v3(db_path)
        version = "4"
    if version in ("4", "5", "6"):  # facts renumbered, a node a fact, as the graph is rebuilt
        _upgrade_v4(db_path)
        return True
    if version != "1":
        raise SchemaMismatchError(
            f"database {db_path} has schema version {version}; this kg-agent reads "
            f"{SCHEMA_VERSION} and upgrades 1 to 6"
        )
    root = index_dir(db_path)
    root.mkdir(parents=True, exist_ok=True)
    target = Path(db_path)
    new = new_database_path(target)
    remove_database(new)  # what a killed upgrade left
    with tempfile.TemporaryDirectory(prefix=".kg-upgrade-", dir=root) as tmp:
        files = _export_v1(db_path, Path(tmp), dim=int(meta.get("dimension", "0")))
        with GraphStore.open(new, read_only=False, create=True, home=db_path) as fresh:
            fresh.ensure_schema(dimension=int(meta.get("dimension", "0")), model=meta["model"])
            for table in (*_ORDER, *(t for t in _V1_TABLES if t not in _ORDER)):
                path = files[table]
                if pq.read_metadata(path).num_rows:
                    fresh.copy_parquet(table, [path])
            vectors = pq.read_metadata(files["SectionVector"]).num_rows
            sections = pq.read_metadata(files["Section"]).num_rows
            state = "complete" if vectors == sections else ("none" if not vectors else "partial")
            fresh.set_meta(embeddings=state, indexes_stale="1", text_stale="1")
        install(new, target)
    write_checksums(target)
    return True


def _upgrade_v2(db_path: str | Path) -> None:
    with GraphStore.open(db_path, read_only=False) as store:
        store.begin()
        store.add_article_revision_columns()
        store.set_meta(schema_version="3")
        store.commit()
    write_checksums(db_path)


def _upgrade_v3(db_path: str | Path) -> None:
    with GraphStore.open(db_path, read_only=False) as store:
        store.begin()
        store.add_fact_tables()
        store.set_meta(schema_version="4")
        store.commit()
    write_checksums(db_path)


def _upgrade_v4(db_path: str | Path) -> None:
    from kg_agent.ingest.compact import compact_locked  # compact imports this module's users

    with GraphStore.open(db_path, read_only=False) as store:
        meta = store.meta()
    compact_locked(Path(db_path), meta)


def _export_v1(db_path: str | Path, tmp: Path, *, dim: int) -> dict[str, Path]:
    files = {name: tmp / f"{name}.parquet" for name in (*_V1_TABLES, "Section", "SectionVector")}
    raw = tmp / "sections-v1.parquet"
    with GraphStore.open(db_path, read_only=False) as old:
        for name, query in _V1_TABLES.items():
            old.export_parquet(query, files[name])
        old.export_parquet(_V1_SECTIONS, raw)
    vector = pa.list_(pa.float32(), dim)
    vec_schema = pa.schema([("id", pa.string()), ("text_hash", pa.string()), ("embedding", vector)])
    with (
        pq.ParquetFile(raw) as src,
        pq.ParquetWriter(files["SectionVector"], vec_schema) as vec_out,
    ):
        sec_out: pq.ParquetWriter | None = None
        try:
            for batch in src.iter_batches(batch_size=20_000):
                part = pa.Table.from_batches([batch])
                hashes = text_hashes(part)
                sections = part.drop_columns(["embedding"]).append_column("text_hash", hashes)
                if sec_out is None:
                    sec_out = pq.ParquetWriter(files["Section"], sections.schema)
                sec_out.write_table(sections)
                emb = part.column("embedding")
                has = emb.is_valid()
                vec = pa.table(
                    [part.column("id"), hashes, emb.cast(vector)],
                    schema=vec_schema,
                ).filter(has)
                vec_out.write_table(vec)
        finally:
            if sec_out is not None:
                sec_out.close()
    if not files["Section"].exists():  # no sections at all
        pq.write_table(pa.table({"id": pa.array([], pa.string())}), files["Section"])
    raw.unlink()
    return files

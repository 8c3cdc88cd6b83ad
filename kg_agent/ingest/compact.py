"""``kg-agent compact``: the graph rewritten without the space it no longer uses.

Kùzu reuses much of the space deleted and replaced rows leave behind, but not all
(``docs/notes/updates.md``): every table is exported and copied into a new database
beside the graph, which is indexed and then renamed over it, as a first load is;
``kill -9`` at any moment leaves the old graph or the compacted one. An update or a
delete compacts by itself past the bounds below, or once its vector index holds
more than a quarter in updates' segments and deletions (the compaction builds it
anew as one).

``compact --vector-store index`` also moves a graph's vectors out of its
``SectionVector`` table into its index (``graph`` moves them back): the one way to
shrink an existing graph's file by its float32 copy (store/vectors.py).
"""

from __future__ import annotations

import errno
import os
import shlex
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from kg_agent.crashpoints import crash_point
from kg_agent.entities.saved import save_linker_apart
from kg_agent.exceptions import LoadAborted
from kg_agent.ingest.fact_table import FACT_SCHEMA, ITEM_SCHEMA, group_items
from kg_agent.ingest.finish import prepare_graph
from kg_agent.store import GraphStore
from kg_agent.store.integrity import write_checksums
from kg_agent.store.layout import (
    collect_garbage,
    default_buffer_pool_mb,
    install,
    live_indexes,
    new_database_path,
    remove_database,
)
from kg_agent.store.layout import index_dir as _index_dir
from kg_agent.store.vector_index import VectorIndex, VectorIndexError
from kg_agent.store.vectors import VECTOR_STORES

__all__ = [
    "AUTO_COMPACT_GROWTH",
    "CompactReport",
    "compact_graph",
    "compact_locked",
    "needs_compaction",
]


@dataclass(slots=True)
class CompactReport:
    db_path: str
    bytes_before: int = 0
    bytes_after: int = 0
    seconds: float = 0.0
    #: where the graph stores its vectors after (store/vectors.py)
    vector_store: str = "graph"
    #: the live vector index's files (``PATH.indexes/vectors``)
    vector_bytes_before: int = 0
    vector_bytes_after: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: Each table's rows as its ``COPY`` takes them (columns in table order). ``Meta``
#: leaves out what ``ensure_schema`` writes itself.
_EXPORTS = {
    "Meta": "MATCH (m:Meta) WHERE NOT m.key IN "
    "['schema_version', 'model', 'dimension', 'recent_vectors', 'indexed_vectors', "
    "'vector_manifest', 'vectors_stale', 'vector_store'] "
    "RETURN m.key, m.value",
    "Load": "MATCH (l:Load) RETURN l.id, l.source, l.format, l.fingerprint, l.started_at, "
    "l.finished_at, l.articles, l.redirects, l.sections, l.model, l.status",
    "Article": "MATCH (a:Article) RETURN a.title, a.page_id, a.is_stub, a.is_disambiguation, "
    "a.pagerank, a.n_sections, a.word_count, a.load_id, a.revision, a.digest, a.kind",
    "Section": "MATCH (s:Section) RETURN s.id, s.article, s.heading, s.heading_path, s.level, "
    "s.ordinal, s.part, s.text, s.word_count, s.text_hash",
    "SectionVector": "MATCH (v:SectionVector) RETURN v.id AS id, v.text_hash AS text_hash, "
    "v.embedding AS embedding",
    "Category": "MATCH (c:Category) RETURN c.name",
    "Redirect": "MATCH (r:Redirect) RETURN r.title, r.load_id",
    "HAS_SECTION": "MATCH (a:Article)-[:HAS_SECTION]->(s:Section) RETURN a.title, s.id",
    "LINKS_TO": "MATCH (a:Article)-[r:LINKS_TO]->(b:Article) "
    "RETURN a.title, b.title, r.count, r.inferred",
    "MENTIONS": "MATCH (s:Section)-[r:MENTIONS]->(a:Article) "
    "RETURN s.id, a.title, r.count, r.inferred",
    "IN_CATEGORY": "MATCH (a:Article)-[:IN_CATEGORY]->(c:Category) RETURN a.title, c.name",
    "REDIRECTS_TO": "MATCH (r:Redirect)-[:REDIRECTS_TO]->(a:Article) RETURN r.title, a.title",
    "Fact": "MATCH (f:Fact) RETURN " + ", ".join(f"f.{n}" for n in FACT_SCHEMA.names),
    "HAS_FACT": "MATCH (a:Article)-[:HAS_FACT]->(f:Fact) RETURN a.title, f.id",
    "REFERS_TO": "MATCH (f:Fact)-[:REFERS_TO]->(a:Article) RETURN f.id, a.title",
}
#: A graph of a node an item (schemas 4 to 6): its items, grouped into facts here.
_FACT_ITEMS = "MATCH (f:Fact) RETURN " + ", ".join(f"f.{n}" for n in ITEM_SCHEMA.names)


def _bytes(db: Path) -> int:
    return sum(p.stat().st_size for p in (db, db.with_name(db.name + ".wal")) if p.exists())


def _vector_bytes(db: Path, manifest: str) -> int:
    """Bytes of the files the live vector index's manifest names."""
    try:
        index = VectorIndex.open(_index_dir(db), manifest)
        if index is None:
            return 0
        files = [index.root / manifest]
        for seg in index.segments:
            files.extend(seg.folder.iterdir())
            if seg.deleted_file:
                files.append(index.root / seg.deleted_file)
        return sum(f.stat().st_size for f in files if f.is_file())
    except (OSError, VectorIndexError):
        return 0


def compact_graph(
    db_path: str | os.PathLike[str],
    *,
    progress: bool = False,
    vector_store: str | None = None,
) -> CompactReport:
    """Rewrite the graph without the free space it holds (see the module docstring);
    ``vector_store`` moves its vectors to the index (``index``) or the graph (``graph``)."""
    if vector_store is not None and vector_store not in VECTOR_STORES:
        raise ValueError(f"vector_store must be one of {', '.join(VECTOR_STORES)}")
    from kg_agent.ingest.session import WriteSession  # the session imports this module's users

    db = str(db_path)
    resume = f"kg-agent compact --db {shlex.quote(db)}"
    if vector_store is not None:
        resume += f" --vector-store {vector_store}"
    with WriteSession(db, "compact", resume, key="compact") as session:
        meta = prepare_graph(db)
        session.phase("rebuild")
        report = compact_locked(Path(db_path), meta, vector_store=vector_store)
        session.done()
        return report


#: An update compacts the graph by itself once its file is this many times the size it
#: had after its last compaction (or first update): the bound on what updates may grow it.
AUTO_COMPACT_GROWTH = 2.0


def needs_compaction(db_path: str | os.PathLike[str], meta: dict[str, str]) -> bool:
    """Whether the file outgrew :data:`AUTO_COMPACT_GROWTH` times its compacted size."""
    base = int(meta.get("compacted_bytes") or 0)
    return base > 0 and _bytes(Path(db_path)) > AUTO_COMPACT_GROWTH * base


def compact_locked(
    db: Path, meta: dict[str, str], *, vector_store: str | None = None
) -> CompactReport:
    """:func:`compact_graph` for a caller that holds the graph's load lock."""
    report = CompactReport(db_path=str(db))
    t0 = time.perf_counter()
    report.bytes_before = _bytes(db)
    report.vector_bytes_before = _vector_bytes(db, meta.get("vector_manifest", ""))
    with GraphStore.open(db, read_only=True) as store:
        counts = store.table_counts()
    new = new_database_path(db)
    remove_database(new)
    gen = "gen-" + time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + "-compact"
    try:
        _rebuild(db, new, meta, gen, counts, vector_store or meta.get("vector_store", "graph"))
    except BaseException as exc:
        remove_database(new)
        collect_garbage(db, live=live_indexes(meta))
        if isinstance(exc, KeyboardInterrupt):
            raise LoadAborted(f"compaction of {db} interrupted; the graph is as it was") from None
        if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
            raise LoadAborted(
                f"compaction of {db} stopped: no space left on the disk (it needs room "
                "for a second copy of the graph); the graph is as it was"
            ) from None
        raise
    crash_point("fresh.before_install")
    install(new, db)
    crash_point("fresh.after_install")
    with GraphStore.open(db, read_only=False) as store:
        store.set_meta(compacted_bytes=str(_bytes(db)))
        after = store.meta()
        live = live_indexes(after)
    write_checksums(db)
    collect_garbage(db, live=live)
    save_linker_apart(str(db))
    report.bytes_after = _bytes(db)
    report.vector_bytes_after = _vector_bytes(db, after.get("vector_manifest", ""))
    report.vector_store = after.get("vector_store", "graph")
    report.seconds = round(time.perf_counter() - t0, 3)
    return report


def _rebuild(
    db: Path, new: Path, meta: dict[str, str], gen: str, counts: dict[str, int], store: str
) -> None:
    """Copy every table of ``db`` into ``new``; the text index is copied into generation
    ``gen`` (it holds titles and section ids, not node offsets), and the tables that do
    hold offsets (article, link), the vector index and the linker are built again.
    ``store`` says where ``new`` keeps its vectors (the graph's column or the index)."""
    was_index = meta.get("vector_store", "graph") == "index"
    old_index = (
        VectorIndex.open(_index_dir(db), meta.get("vector_manifest", "")) if was_index else None
    )
    pool = default_buffer_pool_mb(read_only=False)
    root = db.with_name(db.name + ".indexes")
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".kg-compact-", dir=root) as tmp:
        files: dict[str, Path] = {}
        with GraphStore.open(db, read_only=True) as old:
            per_item = old.facts_per_item
            for table, query in _EXPORTS.items():
                files[table] = Path(tmp) / f"{table}.parquet"
                if table == "SectionVector":  # a schema-4 graph's update tables too
                    query = old.over_vector_tables(query)
                if table == "Fact" and per_item:
                    query = _FACT_ITEMS
                old.export_parquet(query, files[table])
            old_gen = old.generation_path()
        if old_index is not None and store == "graph":  # the vectors back into the graph
            _vectors_from_index(files["SectionVector"], old_index)
        if pa.types.is_string(pq.read_schema(files["Fact"]).field(0).type):
            _number_facts(files)  # schema 5: facts keyed by strings
        if per_item:
            _group_facts(files)
        if old_gen is not None and old_gen.is_dir():
            shutil.copytree(
                old_gen, root / gen, ignore=shutil.ignore_patterns("*.arrow", "*.bin", "*.pkl*")
            )
        with GraphStore.open(
            new, read_only=False, create=True, buffer_pool_mb=pool, home=db
        ) as fresh:
            fresh.ensure_schema(
                dimension=int(meta.get("dimension", "0")), model=meta["model"], vector_store=store
            )
            for table in _EXPORTS:
                if pq.read_metadata(files[table]).num_rows:
                    fresh.copy_parquet(table, [files[table]])
            fresh.set_meta(indexes=gen)
            fresh.forget_derived()
            if store == "index":  # from the old index, or the vectors the old graph held
                if old_index is not None:
                    fresh.rebuild_vector_index(source=old_index)
                elif not was_index:
                    fresh.rebuild_vector_index([files["SectionVector"]])
            elif meta.get("embeddings", "complete") == "complete":
                fresh.build_vector_index(force=True)
            fresh.write_article_table()
            fresh.write_link_table()


def _number_facts(files: dict[str, Path]) -> None:
    """Give the facts of a schema-5 export numbers for ids, in page order (by article,
    then the item's place), and the edges the numbers; ``Meta.next_fact_id`` follows."""
    facts = pq.read_table(files["Fact"])
    order = pc.sort_indices(
        pa.table({"a": facts.column(1), "n": _item_number(facts.column(0))}),
        sort_keys=[("a", "ascending"), ("n", "ascending")],
    )
    facts = facts.take(order)
    old = facts.column(0).combine_chunks()
    ids = pa.array(range(facts.num_rows), pa.int64())
    pq.write_table(facts.set_column(0, facts.schema.field(0).name, ids), files["Fact"])
    for table, side in (("HAS_FACT", 1), ("REFERS_TO", 0)):
        edges = pq.read_table(files[table])
        at = pc.index_in(edges.column(side), value_set=old)
        edges = edges.set_column(side, edges.schema.field(side).name, pc.take(ids, at))
        pq.write_table(edges, files[table])
    _set_next_fact_id(files, len(ids))


def _item_number(ids: pa.ChunkedArray) -> pa.Array:
    """The item number of ``title::fNNNN`` ids."""
    tails = [s.rsplit("::f", 1)[-1] for s in ids.to_pylist()]
    return pa.array([int(t) if t.isdigit() else 0 for t in tails], pa.int64())


def _group_facts(files: dict[str, Path]) -> None:
    """Make the items of a graph of a node an item (schemas 4 to 6, numbered in page
    order) a node a fact, numbered anew, and their edges the facts' (once each);
    ``Meta.next_fact_id`` follows."""
    items = pq.read_table(files["Fact"])
    items = items.take(pc.sort_indices(items.column(0)))
    facts, fact_of_item = group_items(items.rename_columns(ITEM_SCHEMA.names))
    pq.write_table(facts, files["Fact"])
    old = items.column(0).combine_chunks()
    for table, side in (("HAS_FACT", 1), ("REFERS_TO", 0)):
        edges = pq.read_table(files[table])
        at = pc.index_in(edges.column(side), value_set=old)
        edges = edges.set_column(side, edges.schema.field(side).name, pc.take(fact_of_item, at))
        edges = edges.group_by(edges.column_names, use_threads=False).aggregate([])
        pq.write_table(edges, files[table])
    _set_next_fact_id(files, facts.num_rows)


def _set_next_fact_id(files: dict[str, Path], value: int) -> None:
    meta = pq.read_table(files["Meta"])
    keep = pc.invert(pc.equal(meta.column(0), "next_fact_id"))
    values = ["next_fact_id", str(value)]
    extra = pa.table({n: [v] for n, v in zip(meta.column_names, values, strict=True)})
    pq.write_table(pa.concat_tables([meta.filter(keep), extra.cast(meta.schema)]), files["Meta"])


def _vectors_from_index(path: Path, index: VectorIndex) -> None:
    """Rewrite the export of ``SectionVector`` (id, text hash, NULL) at ``path`` with
    each section's vector from ``index``: a graph that gets its vectors back. The keys
    are joined in memory (~100 bytes a section)."""
    keys = pq.read_table(path, columns=["id", "text_hash"])
    dim = index.dimension
    with pq.ParquetWriter(path.with_suffix(".tmp"), _vector_schema(dim)) as out:
        for ids, vecs in index.vectors():
            at = pc.index_in(ids, value_set=keys.column("id"))
            found = pc.is_valid(at)
            ids, at = ids.filter(found), at.filter(found)
            vecs = vecs[found.to_numpy(zero_copy_only=False)]
            flat = pa.array(vecs.reshape(-1).astype("float32"))
            out.write_table(
                pa.table(
                    [
                        ids,
                        keys.column("text_hash").take(at),
                        pa.FixedSizeListArray.from_arrays(flat, dim),
                    ],
                    schema=_vector_schema(dim),
                )
            )
    path.with_suffix(".tmp").replace(path)


def _vector_schema(dim: int) -> pa.Schema:
    return pa.schema(
        [
            ("id", pa.string()),
            ("text_hash", pa.string()),
            ("embedding", pa.list_(pa.float32(), dim)),
        ]
    )

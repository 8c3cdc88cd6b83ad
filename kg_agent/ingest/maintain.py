"""``kg-agent delete`` and ``kg-agent compact``: removing articles, reclaiming space.

**Delete** runs as an update with nothing to add (:mod:`.update`, :mod:`.write`): in one
transaction of a child process, each article's sections, vectors, links and categories
go, with the redirects that lead to it (its other names); an article something else
still links to stays as a stub, as a red link would make it. Then the text index,
PageRank and the derived tables are brought up to date.

**Compact** rewrites the graph without the space deleted and replaced rows left behind
(Kùzu reuses much of it, but not all: see ``docs/BENCHMARKS.md``): every table is
exported and copied into a new database beside the graph, which is indexed and then
renamed over it, as a first load is; ``kill -9`` at any moment leaves the old graph or
the compacted one.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from kg_agent.exceptions import DatabaseNotFoundError, KGAgentError, LoadAborted, one_line
from kg_agent.ingest.pipeline import finish_indexes, sigterm_as_interrupt
from kg_agent.ingest.stage import LoadLock, Stage
from kg_agent.ingest.update import READ_EVERY_PAGE
from kg_agent.ingest.write import WriteJob, now, write_in_child
from kg_agent.store import RECENT, SCHEMA_VERSION, UNINDEXED, GraphStore, vector_count
from kg_agent.store.edits import GraphEdits
from kg_agent.store.indexes import LinkChanges, TextSource
from kg_agent.store.integrity import write_checksums
from kg_agent.store.layout import (
    collect_garbage,
    default_buffer_pool_mb,
    install,
    new_database_path,
    remove_database,
    vector_index_need_mb,
)
from kg_agent.store.upgrade import upgrade_graph

__all__ = [
    "AUTO_COMPACT_GROWTH",
    "CompactReport",
    "DeleteReport",
    "compact_graph",
    "compact_locked",
    "delete_articles",
    "needs_compaction",
]


@dataclass(slots=True)
class DeleteReport:
    """What a delete did; ``to_dict()`` is the ``--json`` output."""

    db_path: str
    requested: int = 0
    deleted: int = 0  # gone with their edges
    stubbed: int = 0  # still linked to: kept as stubs
    missing: list[str] = field(default_factory=list)  # not articles of the graph
    removed_redirects: int = 0
    removed_stubs: int = 0
    removed_categories: int = 0
    #: compacted after: over half the vector index's vectors were deleted
    compacted: bool = False
    timings: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _prepare_graph(db_path: str) -> dict[str, str]:
    """The graph's ``Meta``, after upgrading an older graph."""
    if not Path(db_path).exists():
        raise DatabaseNotFoundError(f"database {db_path} does not exist")
    with GraphStore.open(db_path, read_only=False) as store:
        version = store.schema_version()
    if version != SCHEMA_VERSION:
        upgrade_graph(db_path)
    with GraphStore.open(db_path, read_only=True) as store:
        return store.meta()


def delete_articles(
    db_path: str | os.PathLike[str], titles: Sequence[str], *, progress: bool = False
) -> DeleteReport:
    """Delete the articles named ``titles`` from the graph (see the module docstring)."""
    db = str(db_path)
    wanted = list(dict.fromkeys(t.strip() for t in titles if t.strip()))
    report = DeleteReport(db_path=db, requested=len(wanted))
    t0 = time.perf_counter()
    with LoadLock(db), sigterm_as_interrupt():
        meta = _prepare_graph(db)
        _finish_pending_deletes(db, progress)
        with GraphStore.open(db, read_only=True) as store:
            found = GraphEdits(store).existing(wanted)
        report.missing = [t for t in wanted if t not in found]
        if not found:
            return report
        key = hashlib.sha256("\n".join(sorted(found)).encode()).hexdigest()
        stage = Stage.open(db, "delete-" + key, staging_dir=None, restart=False, describe={})
        try:
            out = _delete(db, sorted(found), stage, meta, progress)
        except KeyboardInterrupt:
            raise LoadAborted(
                f"delete from {db} interrupted; the graph was left as it was"
            ) from None
        except OSError as exc:
            if exc.errno == errno.ENOSPC:
                raise LoadAborted(
                    f"delete from {db} stopped: no space left on the disk; nothing was deleted"
                ) from None
            raise
        stage.remove()
        with GraphStore.open(db, read_only=True) as store:
            stranded = store.deleted_share() > MAX_DELETED_SHARE
        if stranded:  # the index would strand queries: built anew by a compaction
            t1 = time.perf_counter()
            compact_locked(Path(db), _prepare_graph(db))
            report.compacted = True
            report.timings["compact"] = round(time.perf_counter() - t1, 3)
    report.deleted = int(out.get("deleted_articles", 0))
    report.stubbed = int(out.get("stubbed_articles", 0))
    report.removed_redirects = int(out.get("removed_redirects", 0))
    report.removed_stubs = int(out.get("removed_stubs", 0))
    report.removed_categories = int(out.get("removed_categories", 0))
    report.timings["total"] = round(time.perf_counter() - t0, 3)
    return report


def _delete(
    db: str, found: list[str], stage: Stage, meta: dict[str, str], progress: bool
) -> dict[str, Any]:
    import pyarrow as pa

    deleted, removed = stage.file("deleted.parquet"), stage.file("removed-redirects.parquet")
    pq.write_table(pa.table({"title": pa.array(found, pa.string())}), deleted)
    pq.write_table(pa.table({"title": pa.array([], pa.string())}), removed)
    result = stage.file("edits-result.json")
    complete = meta.get("embeddings", "complete") == "complete"
    with GraphStore.open(db, read_only=False) as store:
        if GraphEdits(store).redirects_into(found):  # see update.READ_EVERY_PAGE
            store.set_meta(**{READ_EVERY_PAGE: "1"})
    job = WriteJob(
        db_path=db,
        home=db,
        stage_root=str(stage.root),
        units=[],
        load={
            "id": stage.load_id,
            "source": f"kg-agent delete ({len(found)} articles)",
            "format": "delete",
            "fingerprint": stage.info["fingerprint"],
            "started_at": str(stage.info["started_at"]),
            "finished_at": now(),
            "articles": 0,
            "redirects": 0,
            "sections": 0,
            "model": meta.get("model", ""),
        },
        model=meta.get("model", ""),
        dimension=int(meta.get("dimension", "0")),
        embeddings="now" if complete else "none",
        fresh=False,
        progress=progress,
        edits={
            "deleted": str(deleted),
            "removed_redirects": str(removed),
            "result": str(result),
            "drop_redirects_into": True,
        },
    )
    out = write_in_child(job)
    _finish_delete(db, stage, stage.load_id, progress)
    return out


def _finish_delete(db: str, stage: Stage, load_id: str, progress: bool) -> None:
    """After a delete's commit: the text index loses what went, the rest is rebuilt."""
    result = stage.file("edits-result.json")
    text = links = None
    if result.exists():
        edits = json.loads(result.read_text(encoding="utf-8"))
        text = TextSource(removed_titles=edits["removed"], stubbed_titles=edits["stubbed"])
        links = LinkChanges(
            load_id,
            removed_titles=edits["removed"],
            stubbed_titles=edits["stubbed"],
            unlinked=edits.get("unlinked"),
        )
    try:
        if text is None:  # no record of what went: the text index is rebuilt whole
            with GraphStore.open(db, read_only=False) as store:
                store.set_meta(text_stale="1")
        finish_indexes(db, load_id, text, pool_mb=None, progress=progress, links=links)
    except (KeyboardInterrupt, KGAgentError, OSError, RuntimeError) as exc:
        why = "interrupted" if isinstance(exc, KeyboardInterrupt) else one_line(exc)
        raise LoadAborted(
            f"the articles were deleted from {db}, but refreshing its indexes failed ({why}): "
            "run any 'kg-agent delete' (or 'kg-agent reindex') on it to finish them"
        ) from None


def _finish_pending_deletes(db: str, progress: bool) -> None:
    """Finish the indexes of a delete that committed but was stopped before them."""
    with GraphStore.open(db, read_only=True) as store:
        pending = [
            load
            for load in store.loads()
            if str(load["fingerprint"]).startswith("delete-") and load["status"] != "complete"
        ]
    for load in pending:
        fp = str(load["fingerprint"])
        stage = Stage(Stage.path_for(db, fp, None), {}, resumed=True)
        _finish_delete(db, stage, str(load["id"]), progress)
        stage.remove()


# ---------------------------------------------------------------------- compact
@dataclass(slots=True)
class CompactReport:
    db_path: str
    bytes_before: int = 0
    bytes_after: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: Each table's rows as its ``COPY`` takes them (columns in table order). ``Meta``
#: leaves out what ``ensure_schema`` writes itself.
_EXPORTS = {
    "Meta": "MATCH (m:Meta) WHERE NOT m.key IN "
    "['schema_version', 'model', 'dimension', 'recent_vectors', 'indexed_vectors'] "
    "RETURN m.key, m.value",
    "Load": "MATCH (l:Load) RETURN l.id, l.source, l.format, l.fingerprint, l.started_at, "
    "l.finished_at, l.articles, l.redirects, l.sections, l.model, l.status",
    "Article": "MATCH (a:Article) RETURN a.title, a.page_id, a.is_stub, a.is_disambiguation, "
    "a.pagerank, a.n_sections, a.word_count, a.load_id, a.revision, a.digest",
    "Section": "MATCH (s:Section) RETURN s.id, s.article, s.heading, s.heading_path, s.level, "
    "s.ordinal, s.part, s.text, s.word_count, s.text_hash",
    "SectionVector": "MATCH (v:SectionVector) RETURN v.id, v.text_hash, v.embedding",
    "Category": "MATCH (c:Category) RETURN c.name",
    "Redirect": "MATCH (r:Redirect) RETURN r.title, r.load_id",
    "HAS_SECTION": "MATCH (a:Article)-[:HAS_SECTION]->(s:Section) RETURN a.title, s.id",
    "LINKS_TO": "MATCH (a:Article)-[r:LINKS_TO]->(b:Article) "
    "RETURN a.title, b.title, r.count, r.inferred",
    "MENTIONS": "MATCH (s:Section)-[r:MENTIONS]->(a:Article) "
    "RETURN s.id, a.title, r.count, r.inferred",
    "IN_CATEGORY": "MATCH (a:Article)-[:IN_CATEGORY]->(c:Category) RETURN a.title, c.name",
    "REDIRECTS_TO": "MATCH (r:Redirect)-[:REDIRECTS_TO]->(a:Article) RETURN r.title, a.title",
}


def _bytes(db: Path) -> int:
    return sum(p.stat().st_size for p in (db, db.with_name(db.name + ".wal")) if p.exists())


def compact_graph(db_path: str | os.PathLike[str], *, progress: bool = False) -> CompactReport:
    """Rewrite the graph without the free space it holds (see the module docstring)."""
    with LoadLock(str(db_path)), sigterm_as_interrupt():
        meta = _prepare_graph(str(db_path))
        return compact_locked(Path(db_path), meta)


#: An update compacts the graph by itself once its file is this many times the size it
#: had after its last compaction (or first update): the bound on what updates may grow it.
AUTO_COMPACT_GROWTH = 2.0


def needs_compaction(db_path: str | os.PathLike[str], meta: dict[str, str]) -> bool:
    """Whether the file outgrew :data:`AUTO_COMPACT_GROWTH` times its compacted size."""
    base = int(meta.get("compacted_bytes") or 0)
    return base > 0 and _bytes(Path(db_path)) > AUTO_COMPACT_GROWTH * base


#: Kùzu 0.11.3's search never walks through a deleted row, so an index most of whose
#: vectors were deleted strands queries. Recall@10 of 2,000 random vectors with a share
#: deleted (scripts/bench_index_deletes.py, 5 builds): 50% ≥ 0.998, 80% ≥ 0.994, 90%
#: 0.91–0.95, 95% 0.04–0.66 (one build answered every query with fewer than 10 hits).
#: Past half, which leaves room for text vectors, whose deletes take whole neighbourhoods,
#: an update or a delete compacts the graph.
MAX_DELETED_SHARE = 0.5

#: Folds build the recent vector index anew each time; once it would hold more than this
#: share of the main index's vectors, the graph is compacted instead (one index again).
RECENT_SHARE = 0.25


def index_waiting_vectors(db: Path, say: Callable[[str], None], *, compact: bool = True) -> str:
    """Put the vectors waiting beside the index of ``db`` into an index, never by inserting
    into a built one (``store/vectors.py``): the recent index built anew with them
    (``"fold"``), or past :data:`RECENT_SHARE` (unless not to ``compact``), a compaction
    (``"compact"``). For a caller that holds the graph's load lock; says which it did."""
    with GraphStore.open(db, read_only=True) as store:
        counts = store.table_counts()
        dimension = store.dimension
        meta = store.meta()
    waiting = counts.get(UNINDEXED, 0)
    recent = counts.get(RECENT, 0) + waiting
    if compact and recent > RECENT_SHARE * counts.get("SectionVector", 0):
        say(f"compacting {db} ({recent:,} vectors of updates: over a quarter of its index)")
        compact_locked(db, meta)
        return "compact"
    say(f"indexing the {waiting:,} vectors waiting in {db} ({recent:,} in its recent index)")
    pool = default_buffer_pool_mb(read_only=False, need_mb=vector_index_need_mb(recent, dimension))
    try:
        with GraphStore.open(db, read_only=False, buffer_pool_mb=pool) as store:
            store.fold_unindexed()
    except (KeyboardInterrupt, KGAgentError, OSError, RuntimeError) as exc:
        why = "interrupted" if isinstance(exc, KeyboardInterrupt) else one_line(exc)
        raise LoadAborted(
            f"{db} is written, but indexing the vectors waiting beside its index failed "
            f"({why}); they still wait, searched exactly (the next update, or 'kg-agent "
            "compact', indexes them)"
        ) from None
    finally:  # whatever the fold got to, the file changed
        write_checksums(db)
    return "fold"


def compact_locked(db: Path, meta: dict[str, str]) -> CompactReport:
    """:func:`compact_graph` for a caller that holds the graph's load lock."""
    report = CompactReport(db_path=str(db))
    t0 = time.perf_counter()
    report.bytes_before = _bytes(db)
    with GraphStore.open(db, read_only=True) as store:
        counts = store.table_counts()
    new = new_database_path(db)
    remove_database(new)
    gen = "gen-" + time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + "-compact"
    try:
        _rebuild(db, new, meta, gen, counts)
    except BaseException as exc:
        remove_database(new)
        collect_garbage(db, live=[meta.get("indexes", "")])
        if isinstance(exc, KeyboardInterrupt):
            raise LoadAborted(f"compaction of {db} interrupted; the graph is as it was") from None
        if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
            raise LoadAborted(
                f"compaction of {db} stopped: no space left on the disk (it needs room "
                "for a second copy of the graph); the graph is as it was"
            ) from None
        raise
    install(new, db)
    with GraphStore.open(db, read_only=False) as store:
        store.set_meta(compacted_bytes=str(_bytes(db)))
    write_checksums(db)
    collect_garbage(db, live=[gen])
    from kg_agent.store.indexes import save_linker_apart

    save_linker_apart(str(db))
    report.bytes_after = _bytes(db)
    report.seconds = round(time.perf_counter() - t0, 3)
    return report


def _rebuild(db: Path, new: Path, meta: dict[str, str], gen: str, counts: dict[str, int]) -> None:
    """Copy every table of ``db`` into ``new``; the text index is copied into generation
    ``gen`` (it holds titles and section ids, not node offsets), and the tables that do
    hold offsets (article, link), the vector index and the linker are built again."""
    vectors = vector_count(counts)
    pool = default_buffer_pool_mb(
        read_only=False,
        need_mb=vector_index_need_mb(vectors, int(meta.get("dimension", "0"))) if vectors else 0,
    )
    root = db.with_name(db.name + ".indexes")
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".kg-compact-", dir=root) as tmp:
        files: dict[str, Path] = {}
        with GraphStore.open(db, read_only=True) as old:
            for table, query in _EXPORTS.items():
                files[table] = Path(tmp) / f"{table}.parquet"
                if table == "SectionVector":  # with those waiting: the new index takes all
                    query = old.over_vector_tables(query)
                old.export_parquet(query, files[table])
            old_gen = old.generation_path()
        if old_gen is not None and old_gen.is_dir():
            shutil.copytree(
                old_gen, root / gen, ignore=shutil.ignore_patterns("*.arrow", "*.bin", "*.pkl*")
            )
        with GraphStore.open(
            new, read_only=False, create=True, buffer_pool_mb=pool, home=db
        ) as fresh:
            fresh.ensure_schema(dimension=int(meta.get("dimension", "0")), model=meta["model"])
            for table in _EXPORTS:
                if pq.read_metadata(files[table]).num_rows:
                    fresh.copy_parquet(table, [files[table]])
            fresh.set_meta(indexes=gen)
            fresh.forget_derived()
            if meta.get("embeddings", "complete") == "complete":
                fresh.build_vector_index()
            fresh.write_article_table()
            fresh.write_link_table()

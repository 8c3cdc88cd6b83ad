"""The graph store: every Kùzu call in the package goes through this package.

Keeping Kùzu behind one seam means a maintained fork (or another embedded graph
database) can replace it by rewriting this package alone. Callers see plain Python
values and :mod:`kg_agent.exceptions` errors, never ``kuzu`` objects. Full-text
search is a derived tantivy index beside the database (:mod:`.text_index`,
:mod:`.layout`), reached through the same :class:`GraphStore`.

Cypher here never interpolates user text: user values travel as parameters.
The only names formatted into statements are table and index names, which are
module constants.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import threading
import time
import uuid
import warnings
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from kg_agent.crashpoints import crash_point
from kg_agent.exceptions import (
    DatabaseError,
    DatabaseLockedError,
    DatabaseNotFoundError,
    SchemaMismatchError,
)
from kg_agent.store.article_table import FILE_NAME as ARTICLE_TABLE
from kg_agent.store.article_table import ArticleTable, write_article_table
from kg_agent.store.engine import engine
from kg_agent.store.journal import Copy, Journal, count_copied_rows, recovery_plan
from kg_agent.store.layout import default_buffer_pool_mb, index_dir
from kg_agent.store.link_changes import LinkChanges, patch_from_graph
from kg_agent.store.link_table import FILE_NAME as LINK_TABLE
from kg_agent.store.link_table import LinkTable, write_link_table
from kg_agent.store.pagerank import rank_export
from kg_agent.store.reads import (
    RECENT,
    UNINDEXED,
    ArticleRow,
    GraphReads,
    IndexStatus,
)
from kg_agent.store.text_index import TextIndex
from kg_agent.store.vector_index import VectorIndex, VectorIndexError
from kg_agent.store.vectors import VECTOR_STORES, VectorWrites, vector_table_ddl
from kg_agent.store.write_state import (
    PENDING_KEY,
    InterruptedWriteError,
    WriteStatus,
    write_status,
)

log = logging.getLogger(__name__)

#: 2: full-text search moved to a tantivy index beside the database; vectors moved to
#: SectionVector; Section.text_hash; Load.status. 4: infobox facts. 5: the vector index
#: beside the graph (no Kùzu vector index, no update vector tables). 6: fact ids are
#: numbers (``Meta.next_fact_id``), not ``title::fNNNN`` strings. 7: one ``Fact`` node a
#: fact (a box parameter), its items' fields joined by ``|``, not one an item.
SCHEMA_VERSION = "7"
#: Schemas a reader opens as they are: 2 lacks only the articles' ``revision`` and
#: ``digest``, which no query reads; 3 lacks the infobox facts and the articles' kind,
#: which a query then does without; 4 has no vector index beside it, so its semantic
#: search scans every vector; 5 keys its facts by strings; 5 and 6 hold a node an item
#: (a writer upgrades any of them first).
READABLE_SCHEMA_VERSIONS = frozenset({"2", "3", "4", "5", "6", SCHEMA_VERSION})

#: :meth:`GraphStore._keyed` looks rows up one by one while they are at most a
#: 1/_POINT_PER_ROWS share of the rows of the table a scan would read. Measured on graphs
#: of 13k and 125k articles (``scripts/bench_lookups.py``): a scan costs ~0.3 µs a row,
#: node or relationship; a lookup ~0.4 ms on a node table alone, and 5-13 ms once it
#: follows relationships (Kùzu reads the neighbours' properties by scanning every
#: 2,048-row chunk that holds one), a cost that grows with the degree, not the graph.
_POINT_PER_ROWS = 1000
_POINT_PER_REL_ROWS = 20_000
_SCAN_ROWS = 5000
_PARAM = re.compile(r"\$([A-Za-z_]\w*)")

# Index names (constants: safe to format into CALL statements).
LINKER_FILE = "linker.pkl"  # the saved entity linker, in the index generation
# Kùzu full-text indexes of schema 1 graphs, dropped when they are upgraded.
_OLD_FTS_INDEXES = (("Section", "section_text_fts"), ("Article", "article_title_fts"))

# Tables a bulk load copies into, in dependency order (nodes before rels).
NODE_TABLES = ("Article", "Section", "SectionVector", "Category", "Redirect", "Fact")
REL_TABLES = (
    "HAS_SECTION",
    "LINKS_TO",
    "MENTIONS",
    "IN_CATEGORY",
    "REDIRECTS_TO",
    "HAS_FACT",
    "REFERS_TO",
)
FACT_TABLES = frozenset({"Fact", "HAS_FACT", "REFERS_TO"})
#: Each node table's primary key, and its edge tables (out of it, into it).
_NODE_KEYS = {"Article": "title", "Section": "id", "Fact": "id", "Redirect": "title"}
_EDGES_OF: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "Article": (
        ("HAS_SECTION", "LINKS_TO", "IN_CATEGORY", "HAS_FACT"),
        ("LINKS_TO", "MENTIONS", "REDIRECTS_TO", "REFERS_TO"),
    ),
    "Section": (("MENTIONS",), ("HAS_SECTION",)),
    "Fact": (("REFERS_TO",), ("HAS_FACT",)),
    "Redirect": (("REDIRECTS_TO",), ()),
}
#: The infobox facts (schema 7): one node a fact, a box parameter (docs/schema.md). A
#: fact of several items (``spouse = A (1903–1919); B``) joins each item field with ``|``
#: (store/fact_items.py ``ITEM_SEP``); ``number`` is the first item's (``numbers`` every
#: item's, joined, when there are several). A node an item (schemas 4 to 6) cost a
#: primary key's hash index and a ``HAS_FACT`` edge an item (docs/notes/scale.md).
FACT_DDL = (
    "CREATE NODE TABLE IF NOT EXISTS Fact(id INT64 PRIMARY KEY, article STRING, "
    "box STRING, sub_box STRING, key STRING, raw_key STRING, value STRING, item STRING, "
    "kind STRING, target STRING, number DOUBLE, unit STRING, date STRING, note STRING, "
    "numbers STRING)",
    "CREATE REL TABLE IF NOT EXISTS HAS_FACT(FROM Article TO Fact)",
    "CREATE REL TABLE IF NOT EXISTS REFERS_TO(FROM Fact TO Article)",
)


def _schema_ddl(dimension: int) -> list[str]:
    return [
        "CREATE NODE TABLE IF NOT EXISTS Meta(key STRING PRIMARY KEY, value STRING)",
        "CREATE NODE TABLE IF NOT EXISTS Load(id STRING PRIMARY KEY, source STRING, "
        "format STRING, fingerprint STRING, started_at STRING, finished_at STRING, "
        "articles INT64, redirects INT64, sections INT64, model STRING, status STRING)",
        "CREATE NODE TABLE IF NOT EXISTS Article(title STRING PRIMARY KEY, page_id INT64, "
        "is_stub BOOLEAN, is_disambiguation BOOLEAN, pagerank DOUBLE, n_sections INT64, "
        "word_count INT64, load_id STRING, revision INT64, digest STRING, kind STRING)",
        "CREATE NODE TABLE IF NOT EXISTS Section(id STRING PRIMARY KEY, article STRING, "
        "heading STRING, heading_path STRING, level INT64, ordinal INT64, part INT64, "
        "text STRING, word_count INT64, text_hash STRING)",
        # Vectors apart from sections: Kùzu cannot SET a column an index uses (and a SET of
        # a FLOAT[384] costs ~4 ms), so vectors are added and replaced by COPY and DELETE.
        vector_table_ddl(dimension),
        "CREATE NODE TABLE IF NOT EXISTS Category(name STRING PRIMARY KEY)",
        "CREATE NODE TABLE IF NOT EXISTS Redirect(title STRING PRIMARY KEY, load_id STRING)",
        "CREATE REL TABLE IF NOT EXISTS HAS_SECTION(FROM Article TO Section)",
        "CREATE REL TABLE IF NOT EXISTS LINKS_TO(FROM Article TO Article, count INT64, "
        "inferred BOOLEAN)",
        "CREATE REL TABLE IF NOT EXISTS MENTIONS(FROM Section TO Article, count INT64, "
        "inferred BOOLEAN)",
        "CREATE REL TABLE IF NOT EXISTS IN_CATEGORY(FROM Article TO Category)",
        "CREATE REL TABLE IF NOT EXISTS REDIRECTS_TO(FROM Redirect TO Article)",
        *FACT_DDL,
    ]


def _translate(path: str, exc: Exception) -> DatabaseError:
    msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if "lock" in msg.lower():
        return DatabaseLockedError(
            f"database {path} is in use by another process (Kùzu allows one writing "
            "process, or several read-only ones): close it and retry"
        )
    return DatabaseError(f"database {path}: {msg}")


_NEEDS_RECOVERY = ("replay", "shadow", "wal", "write-ahead")


def _open_database(p: Path, *, read_only: bool, pool_mb: int) -> Any:
    """The engine's ``Database`` (:mod:`.engine`); a read-only open that finds an
    interrupted commit recovers first.

    A write killed while committing leaves pages that only a read-write open can
    replay ("Couldn't replay shadow pages under read-only mode"): replay them once,
    when no other process holds the database, then open read-only.
    """
    size = pool_mb * 1024 * 1024
    try:
        return engine().Database(str(p), read_only=read_only, buffer_pool_size=size)
    except RuntimeError as exc:
        msg = str(exc).lower()
        if not read_only or not any(k in msg for k in _NEEDS_RECOVERY):
            raise _translate(str(p), exc) from None
    try:
        engine().Database(str(p), read_only=False, buffer_pool_size=size).close()
        return engine().Database(str(p), read_only=True, buffer_pool_size=size)
    except RuntimeError as exc:
        raise DatabaseError(
            f"database {p} was left mid-commit by a killed writer and needs one read-write "
            f"open to recover ({_translate(str(p), exc)}): stop other users of it and retry"
        ) from None


class GraphStore(GraphReads, VectorWrites):
    """An open Kùzu database holding the knowledge graph.

    Use :meth:`open` to get one. Read-only stores take a shared lock, so many
    query processes can read while no loader writes.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        read_only: bool,
        db: Any,
        home: str | os.PathLike[str] | None = None,
    ) -> None:
        self.path = str(path)
        # where the graph lives: ``path`` itself, except for a new graph being
        # built beside its final place (see kg_agent.store.layout)
        self.home = str(home or path)
        self.index_root = index_dir(self.home)
        self.read_only = read_only
        self._db = db
        # A Kùzu connection runs one query at a time. A read-only store gives each thread
        # its own (made on first use), so one store serves concurrent readers (``serve``);
        # a writer keeps the one connection its transaction lives on.
        self._local = threading.local()
        self._connections: list[Any] = []
        self._connections_lock = threading.Lock()
        self._writer_conn = None if read_only else engine().Connection(db)
        self._in_tx = False
        # a write into the graph at its home journals its copies (:mod:`.journal`); a
        # new graph built beside its place is renamed in only after a clean close
        self.at_home = Path(path).resolve() == Path(self.home).resolve()
        self._journaled = not read_only and self.at_home
        #: seconds the last journaled commit spent on its safety: the row counts, the
        #: journal, the checkpoint between its two transactions (the write's
        #: ``write.commit.journal``; docs/BENCHMARKS.md)
        self.last_journal_s = 0.0
        self._last_checkpoint_s = 0.0
        self._tx_copies: list[Copy] = []
        self._dimension: int | None = None  # a read-only store's, once read
        self._text: TextIndex | None = None
        self._vectors: tuple[str, VectorIndex | None] | None = None  # (manifest, index)
        # what a write transaction changed in the vectors, for the index at commit
        self._vector_deletes: list[str] = []
        self._vector_adds: list[Path] = []
        #: (vectors added to the index, rows deleted) by the last commit that changed it
        self.last_vector_change = (0, 0)
        self._articles: ArticleTable | None = None
        self._links: LinkTable | bool | None = None  # False: none in step with the graph
        self._writer_prepared: dict[str, Any] = {}
        self._row_counts: dict[str, int] = {}
        # article rows by title, for read-only stores only (a writer changes them)
        self._row_cache: dict[str, ArticleRow] | None = {} if read_only else None
        # fact items by (title, query), for read-only stores only (see ``_fact_rows``)
        self._fact_cache: dict[tuple[str, str], list[Any]] | None = {} if read_only else None

    # ------------------------------------------------------------------ open/close
    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        read_only: bool = True,
        create: bool = False,
        buffer_pool_mb: int | None = None,
        home: str | os.PathLike[str] | None = None,
    ) -> GraphStore:
        """Open (or, with ``create``, create) the database at ``path``.

        A missing database is an error on read paths rather than silently
        creating an empty one, which would answer every question with nothing.
        ``home`` is where a graph being built at ``path`` will be installed (its
        indexes are written there).
        """
        p = Path(path)
        if not p.exists():
            if read_only or not create:
                raise DatabaseNotFoundError(
                    f"database {p} not found: build it with 'kg-agent load SOURCE --db {p}'"
                )
            p.parent.mkdir(parents=True, exist_ok=True)
        elif p.is_dir() and not any(p.iterdir()):
            raise DatabaseError(f"database {p} is an empty directory, not a Kùzu database")
        pool = buffer_pool_mb or default_buffer_pool_mb(read_only)
        db = _open_database(p, read_only=read_only, pool_mb=pool)
        store = cls(p, read_only=read_only, db=db, home=home)
        if read_only:
            if not store._has_table("Meta"):
                store.close()
                raise DatabaseError(f"database {p} holds no kg-agent graph (no Meta table)")
            version = store.meta().get("schema_version")
            if version not in READABLE_SCHEMA_VERSIONS:
                store.close()
                raise SchemaMismatchError(
                    f"database {p} has schema version {version}, this kg-agent reads "
                    f"{SCHEMA_VERSION}: upgrade it with 'kg-agent reindex --db {p}'"
                )
        elif store._journaled:
            try:
                store._recover_copies()
            except BaseException:
                store.close()
                raise
        return store

    def close(self) -> None:
        with contextlib.suppress(Exception):
            if self._in_tx:
                self.rollback()
        with self._connections_lock:
            connections, self._connections = self._connections, []
        for conn in [*connections, self._writer_conn]:
            if conn is not None:
                with contextlib.suppress(Exception):
                    conn.close()
        with contextlib.suppress(Exception):
            self._db.close()

    def __enter__(self) -> GraphStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ low level
    @property
    def _conn(self) -> Any:
        if self._writer_conn is not None:
            return self._writer_conn
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = engine().Connection(self._db)
            self._local.conn = conn
            self._local.prepared = {}
            with self._connections_lock:
                self._connections.append(conn)
        return conn

    @property
    def _prepared(self) -> dict[str, Any]:
        """Prepared statements of this thread's connection (a statement is bound to one)."""
        if self._writer_conn is not None:
            return self._writer_prepared
        self._conn  # noqa: B018 - makes this thread's connection and cache
        prepared: dict[str, Any] = self._local.prepared
        return prepared

    def _run(self, cypher: str, params: Mapping[str, Any] | None = None) -> list[list[Any]]:
        try:
            res = self._conn.execute(cypher, dict(params) if params else {})
        except RuntimeError as exc:
            raise _translate(self.path, exc) from None
        if isinstance(res, list):  # several statements: keep the last result
            res = res[-1]
        return [list(r) for r in res.get_all()]

    def _columns(self, cypher: str) -> list[list[Any]]:
        """The result's columns as lists, read through Arrow: for results of a whole
        table's size, ~3x faster than rows (100k titles and 90k redirects: 0.27 s
        against 0.84 s)."""
        try:
            res = self._conn.execute(cypher)
        except RuntimeError as exc:
            raise _translate(self.path, exc) from None
        if isinstance(res, list):
            res = res[-1]
        table = res.get_as_arrow()
        return [table.column(i).to_pylist() for i in range(table.num_columns)]

    def query(self, cypher: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Run Cypher with parameters and return rows as dicts (column name → value)."""
        try:
            res = self._conn.execute(cypher, dict(params) if params else {})
        except RuntimeError as exc:
            raise _translate(self.path, exc) from None
        if isinstance(res, list):
            res = res[-1]
        cols = res.get_column_names()
        return [dict(zip(cols, row, strict=True)) for row in res.get_all()]

    def _pk(self, cypher: str, params: Mapping[str, Any]) -> list[list[Any]]:
        """A query that Kùzu answers by primary-key lookup, prepared once per connection.

        Kùzu 0.11.3 uses its primary-key index only for ``{key: $param}`` patterns:
        ``UNWIND $keys ... {key: k}`` and ``key IN $keys`` scan the whole table
        (25 ms at 125k articles, against 0.2 ms for a prepared lookup, measured in
        ``scripts/bench_scale.py``), so per-query paths loop over keys with this.
        """
        stmt = self._prepared.get(cypher)
        try:
            if stmt is None:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DeprecationWarning)
                    stmt = self._conn.prepare(cypher)
                self._prepared[cypher] = stmt
            res = self._conn.execute(stmt, dict(params))
        except RuntimeError as exc:
            raise _translate(self.path, exc) from None
        assert not isinstance(res, list)  # one statement, one result
        return [list(r) for r in res.get_all()]

    def _keyed(
        self, cypher: str, rows: Sequence[Mapping[str, Any]], *, table: str
    ) -> list[list[Any]]:
        """The rows of ``cypher``, written for one key's parameters, run for each of ``rows``.

        Kùzu 0.11.3 plans ``UNWIND $rows … MATCH (a:Article {title: …})`` as a scan of the
        whole table joined with the list, however short the list (~0.05 s at 100k
        articles: seconds a statement at English Wikipedia's 6.9M), while a prepared
        ``{title: $title}`` is a primary-key lookup (~0.5 ms). So a few rows against a
        large ``table`` run one by one, and many in one scan: the write of an update
        then grows with its changes, not with the graph. ``table`` is the largest table
        the scan would read: the relationship table for a match that follows one
        (1.1 s for 10 titles at 125k articles, 3.9M links, against 0.08 s looked up).
        ``cypher`` is one of this package's statements; for the scan every ``$name``
        becomes a variable.
        """
        if not rows:
            return []
        out: list[list[Any]] = []
        names = list(dict.fromkeys(_PARAM.findall(cypher)))
        per = _POINT_PER_REL_ROWS if table in REL_TABLES else _POINT_PER_ROWS
        if len(rows) * per <= self._table_rows(table):
            for params in rows:  # only its own parameters: Kùzu refuses any other
                out.extend(self._pk(cypher, {n: params[n] for n in names}))
            return out
        # ``{title: row.title}`` is planned as a nested loop (5.6 s for 5,000 titles at
        # 100k articles); ``WITH row.title AS p_title`` then ``{title: p_title}`` as a
        # hash join (0.14 s): each parameter becomes a variable first.
        unwind = (
            "UNWIND $rows AS row WITH "
            + ", ".join(f"row.{n} AS p_{n}" for n in names)
            + " "
            + _PARAM.sub(r"p_\1", cypher)
        )
        for i in range(0, len(rows), _SCAN_ROWS):
            out.extend(self._run(unwind, {"rows": [dict(r) for r in rows[i : i + _SCAN_ROWS]]}))
        return out

    def _keys(self, cypher: str, keys: Sequence[Any], *, table: str = "Article") -> list[list[Any]]:
        """:meth:`_keyed` for a statement of one parameter, ``$key``, over distinct keys."""
        return self._keyed(cypher, [{"key": k} for k in dict.fromkeys(keys)], table=table)

    def _table_rows(self, table: str) -> int:
        """Rows of a table, counted once per store (a write changes it little)."""
        if table not in self._row_counts:
            self._row_counts[table] = self._count_rows(table)
        return self._row_counts[table]

    def _scalar(self, cypher: str, params: Mapping[str, Any] | None = None) -> Any:
        rows = self._run(cypher, params)
        return rows[0][0] if rows else None

    def _has_table(self, name: str) -> bool:
        rows = self._run("CALL SHOW_TABLES() RETURN name")
        return any(r[0] == name for r in rows)

    # ------------------------------------------------------------------ schema/meta
    def ensure_schema(self, *, dimension: int, model: str, vector_store: str = "graph") -> None:
        """Create the tables on first use; refuse a different model or dimension.

        Mixing embeddings from two models in one index would make every
        similarity meaningless, so the model is fixed when the graph is created, and
        so is where its vectors are stored (``vector_store``, :mod:`.vectors`).
        """
        existing = self.meta() if self._has_table("Meta") else {}
        if existing:
            version = existing.get("schema_version")
            if version != SCHEMA_VERSION:
                raise SchemaMismatchError(
                    f"database {self.path} has schema version {version}, this kg-agent "
                    f"writes {SCHEMA_VERSION}: upgrade it with 'kg-agent reindex --db {self.path}'"
                )
            self.check_model(dimension=dimension, model=model)
            return
        for stmt in _schema_ddl(dimension):
            self._run(stmt)
        if vector_store not in VECTOR_STORES:
            raise ValueError(f"vector_store must be one of {', '.join(VECTOR_STORES)}")
        self.set_meta(
            schema_version=SCHEMA_VERSION,
            model=model,
            dimension=str(dimension),
            vector_store=vector_store,
        )

    def add_article_revision_columns(self) -> None:
        """Schema 2 → 3 (see :mod:`kg_agent.ingest.upgrade`)."""
        self._run("ALTER TABLE Article ADD revision INT64")
        self._run("ALTER TABLE Article ADD digest STRING")

    def add_fact_tables(self) -> None:
        """Schema 3 → 4 (see :mod:`kg_agent.ingest.upgrade`): the articles' kind and the
        infobox fact tables (empty: facts come with a load or update of the articles)."""
        self._run("ALTER TABLE Article ADD kind STRING DEFAULT ''")
        for stmt in FACT_DDL:
            self._run(stmt)

    def check_model(self, *, dimension: int, model: str) -> None:
        """Refuse to add sections embedded by another model (or of another dimension)."""
        meta = self.meta()
        if meta.get("model") != model or int(meta.get("dimension", 0)) != dimension:
            raise SchemaMismatchError(
                f"database {self.path} was built with embedding model "
                f"{meta.get('model')} (dimension {meta.get('dimension')}); "
                f"this one is {model} (dimension {dimension}): use the same model, a new "
                f"database, or re-embed it with 'kg-agent embed --db {self.path} --model "
                f"{model} --force'"
            )

    def meta(self) -> dict[str, str]:
        if not self._has_table("Meta"):
            return {}
        return {str(k): str(v) for k, v in self._run("MATCH (m:Meta) RETURN m.key, m.value")}

    def set_meta(self, **values: str) -> None:
        for key, value in values.items():
            self._run("MERGE (m:Meta {key: $k}) SET m.value = $v", {"k": key, "v": value})

    def schema_version(self) -> str:
        return self.meta().get("schema_version", "")

    def next_fact_id(self) -> int:
        """The id the graph's next fact gets (ids are given in page order, never reused)."""
        value = self.meta().get("next_fact_id", "")
        return int(value) if value.isdigit() else 0

    def write_status(self) -> WriteStatus | None:
        """Where the graph's last write stands when it did not finish (None: it did)."""
        return write_status(self.home, self.meta())

    def require_whole(self) -> None:
        """Refuse a graph whose last write changed it and did not finish: its indexes
        lag behind its rows, or rows a crash lost are still to be copied again. Raises
        :class:`~.write_state.InterruptedWriteError` with the command that finishes it."""
        status = self.write_status()
        if status is not None and status.refuses_queries:
            raise InterruptedWriteError(status.message())

    def clear_write_pending(self) -> None:
        """The write that set ``Meta.write_pending`` is whole (:mod:`.write_state`)."""
        meta = self.meta()
        if meta.get(PENDING_KEY) or meta.get("write_key"):
            self.set_meta(**{PENDING_KEY: "", "write_key": ""})

    @property
    def dimension(self) -> int:
        if self._dimension is not None:
            return self._dimension
        dim = int(self.meta().get("dimension", "0"))
        if self.read_only:  # no writer can change it while this store is open
            self._dimension = dim
        return dim

    # ------------------------------------------------------------------ transactions
    def begin(self) -> None:
        self._run("BEGIN TRANSACTION")
        self._in_tx = True

    def commit(self) -> None:
        """Commit, with the vector index's new state for what the transaction changed
        (written first, named by ``Meta`` in the same commit: :mod:`.vectors`).

        A transaction into a graph at its home that copied rows commits in two, under a
        journal (:mod:`.journal`): its logged changes first, then its copies alone."""
        if self._in_tx:
            self.write_pending_vectors()
        copies, self._tx_copies = self._tx_copies, []
        if not (copies and self._journaled):
            self._run("COMMIT")
            self._in_tx = False
            return
        t0 = time.perf_counter()
        journal = Journal(token=uuid.uuid4().hex, copies=copies)
        self.set_meta(commit_token=journal.token)
        for c in copies:  # the copies only add rows: the counts they leave are known
            journal.expected.setdefault(c.table, self._count_rows(c.table))
            journal.expected[c.table] += c.rows
        journal.write(self.index_root)
        crash_point("commit.journaled")
        self._run("COMMIT")
        self._in_tx = False
        crash_point("commit.after_commit")
        self._run("CHECKPOINT")
        extra = time.perf_counter() - t0  # what a commit in one would not have spent
        self._run_copies(copies)
        crash_point("commit.after_checkpoint")
        t0 = time.perf_counter()
        Journal.remove(self.index_root)
        self.last_journal_s = round(extra + self._last_checkpoint_s + time.perf_counter() - t0, 3)

    def _run_copies(self, copies: Sequence[Copy]) -> None:
        """The journal's copies in a transaction of their own, then Kùzu's checkpoint."""
        self.begin()
        for c in copies:
            self._copy(c.table, list(c.files), c.columns)
        crash_point("commit.copied")
        self._run("COMMIT")  # Kùzu checkpoints inside the commit of a COPY
        self._in_tx = False
        t0 = time.perf_counter()
        self._run("CHECKPOINT")  # (a no-op then; here for a fork that does not)
        self._last_checkpoint_s = time.perf_counter() - t0

    def _count_rows(self, table: str) -> int:
        pattern = f"()-[n:{table}]->()" if table in REL_TABLES else f"(n:{table})"
        return int(self._scalar(f"MATCH {pattern} RETURN count(n)") or 0)

    def _recover_copies(self) -> None:
        """Finish a journaled commit a crash cut short (see :mod:`.journal`)."""
        journal = Journal.read(self.index_root)
        if journal is None:
            return
        token = self.meta().get("commit_token")
        counts = {t: self._count_rows(t) for t in journal.expected}
        redo = recovery_plan(journal, token, counts, self.home)
        if redo:
            log.warning(
                "%s: copying the rows of a write a crash cut short (%s)",
                self.home,
                ", ".join(sorted({c.table for c in redo})),
            )
            self._run_copies(redo)
            counts = {t: self._count_rows(t) for t in journal.expected}
            if counts != journal.expected:
                raise DatabaseError(
                    f"database {self.home} could not be brought back to its last commit "
                    f"(rows {counts}, expected {journal.expected}): load its sources again "
                    "into a new --db"
                )
        Journal.remove(self.index_root)

    def rollback(self) -> None:
        """Undo the open transaction; a no-op when Kùzu already rolled it back.

        Kùzu aborts the transaction itself when a statement in it fails, so an
        explicit ROLLBACK after an error may find none open.
        """
        self._tx_copies = []
        self.discard_pending_vectors()
        self._vectors = None
        if self._in_tx:
            self._in_tx = False
            with contextlib.suppress(DatabaseError):
                self._run("ROLLBACK")

    # ------------------------------------------------------------------ bulk writes
    def copy_parquet(
        self,
        table: str,
        paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
        *,
        columns: Sequence[str] | None = None,
    ) -> None:
        """Bulk-load parquet files whose columns match ``table`` (or ``columns``) in order.

        Several files go in one ``COPY``, which Kùzu reads in parallel. Into a graph at
        its home the copy is journaled and runs at the commit, after the transaction's
        other changes (:mod:`.journal`): a statement after it does not see its rows.
        """
        if table not in NODE_TABLES + REL_TABLES + ("Load", "Meta"):
            raise ValueError(f"not a bulk-loadable table: {table}")
        files = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
        if not files:
            return
        cols = None if columns is None else tuple(columns)
        if not self._journaled:
            self._copy(table, files, cols)
            return
        # into a graph at its home: run at the commit, after the transaction's logged
        # changes (see commit); outside a transaction, in one of its own
        names = tuple(str(Path(f).resolve()) for f in files)
        self._tx_copies.append(Copy(table, names, cols, count_copied_rows(files)))
        if not self._in_tx:
            self.begin()
            self.commit()

    def _copy(
        self, table: str, files: Sequence[str | os.PathLike[str]], columns: Sequence[str] | None
    ) -> None:
        """One ``COPY`` statement."""
        quoted = ", ".join("'" + str(Path(f).resolve()).replace("'", "''") + "'" for f in files)
        if table == "SectionVector" and columns is None and self.vectors_in_index():
            # the index stores the vectors: the graph keeps the keys, its column NULL
            # (which Kùzu stores in no space: 20 MiB for 200k rows, 313 MiB with them)
            self._run(
                f"COPY SectionVector FROM (LOAD FROM [{quoted}] RETURN id, text_hash, "
                f"CAST(NULL AS FLOAT[{int(self.dimension)}]))"
            )
        else:
            target = table
            if columns is not None:
                for c in columns:
                    if not c.isidentifier():
                        raise ValueError(f"not a column name: {c!r}")
                target = f"{table}({', '.join(columns)})"
            self._run(f"COPY {target} FROM [{quoted}]")

    def export_parquet(self, cypher: str, path: str | os.PathLike[str]) -> None:
        """Write a query's rows to a parquet file (``COPY (…) TO``), streamed by Kùzu.

        ``cypher`` is one of this package's own read queries, never user text.
        """
        target = str(Path(path).resolve()).replace("'", "''")
        self._run(f"COPY ({cypher}) TO '{target}'")

    def existing_articles(self, titles: Sequence[str]) -> dict[str, bool]:
        """Title → is_stub for the given titles that are already in the graph."""
        rows = self._keys("MATCH (a:Article {title: $key}) RETURN a.title, a.is_stub", titles)
        return {str(t): bool(s) for t, s in rows}

    def all_article_titles(self, *, exclude: Mapping[str, object] | None = None) -> list[str]:
        """Titles of every non-stub article (for mention matching across loads)."""
        rows = self._run("MATCH (a:Article) WHERE a.is_stub = false RETURN a.title")
        skip = exclude or {}
        return [str(r[0]) for r in rows if r[0] not in skip]

    def existing_redirects(self, titles: Sequence[str]) -> dict[str, str]:
        """Redirect title → target article title, for those already in the graph."""
        rows = self._keys(
            "MATCH (r:Redirect {title: $key})-[:REDIRECTS_TO]->(a:Article) RETURN r.title, a.title",
            titles,
            table="REDIRECTS_TO",
        )
        return {str(r): str(a) for r, a in rows}

    def existing_categories(self, names: Sequence[str]) -> set[str]:
        rows = self._keys("MATCH (c:Category {name: $key}) RETURN c.name", names, table="Category")
        return {str(r[0]) for r in rows}

    def clear_article_content(
        self, titles: Sequence[str], *, keep_vectors: Collection[str] = ()
    ) -> None:
        """Remove what a re-load replaces: sections, outgoing links, category edges and
        infobox facts.

        The Article node itself stays, so links *into* it from other loads survive.
        ``keep_vectors``: section ids whose vector stays (the re-load writes the same
        text under the same id): an update writes again only the vectors of text that
        changed.
        """
        if not titles:
            return
        sections = "MATCH (a:Article {title: $key})-[:HAS_SECTION]->(s:Section)"
        found = self._keys(sections + " RETURN s.id", titles, table="HAS_SECTION")
        ids = [str(r[0]) for r in found]
        self.delete_vectors([i for i in ids if i not in keep_vectors] if keep_vectors else ids)
        # by the article, not by each section's key: a statement per node costs ~5 ms
        self._keys(sections + "-[r:MENTIONS]->() DELETE r", titles, table="HAS_SECTION")
        self._keys(
            "MATCH (a:Article {title: $key})-[r:HAS_SECTION]->(s:Section) DELETE r, s", titles
        )
        self._keys(
            "MATCH (a:Article {title: $key})-[r:LINKS_TO]->() DELETE r", titles, table="LINKS_TO"
        )
        self._keys(
            "MATCH (a:Article {title: $key})-[r:IN_CATEGORY]->() DELETE r",
            titles,
            table="IN_CATEGORY",
        )
        self.delete_facts(titles)

    def delete_facts(self, titles: Sequence[str]) -> None:
        """The infobox facts of the articles ``titles`` (with their edges)."""
        if titles and self.has_facts:  # (as the sections above: 1,581 facts 33 s -> 3 s)
            facts = "MATCH (a:Article {title: $key})-[:HAS_FACT]->(:Fact)"
            self._keys(facts + "-[r:REFERS_TO]->() DELETE r", titles, table="HAS_FACT")
            self._keys("MATCH (a:Article {title: $key})-[r:HAS_FACT]->(f:Fact) DELETE r, f", titles)

    def delete_redirects(self, titles: Sequence[str]) -> None:
        self.delete_nodes("Redirect", titles)

    def delete_nodes(self, table: str, keys: Sequence[Any]) -> None:
        """Nodes of ``table`` by primary key, with every edge they have.

        Each edge table is emptied of their edges by a statement of its own before the
        nodes go, never by ``DETACH DELETE``: Kùzu 0.11.3 replays a ``DETACH DELETE``
        wrongly after a crash when the transaction deleted one of the node's edges
        before it (it deletes another edge as well; measured, see
        :mod:`.journal`), and an update deletes a rewritten article's links and then
        the articles nothing links to any more.
        """
        if not keys:
            return
        key = _NODE_KEYS[table]
        facts = self.has_facts
        out, into = _EDGES_OF[table]
        for rel in out:
            if rel in FACT_TABLES and not facts:
                continue
            self._keys(f"MATCH (n:{table} {{{key}: $key}})-[r:{rel}]->() DELETE r", keys, table=rel)
        for rel in into:
            if rel in FACT_TABLES and not facts:
                continue
            self._keys(f"MATCH ()-[r:{rel}]->(n:{table} {{{key}: $key}}) DELETE r", keys, table=rel)
        self._keys(f"MATCH (n:{table} {{{key}: $key}}) DELETE n", keys, table=table)

    def update_articles(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Overwrite the properties of articles that already exist (stubs or re-loads)."""
        self._keyed(
            "MATCH (a:Article {title: $title}) "
            "SET a.page_id = CAST($page_id AS INT64), a.is_stub = $is_stub, "
            "a.is_disambiguation = $is_disambiguation, a.n_sections = $n_sections, "
            "a.word_count = $word_count, a.load_id = $load_id, "
            "a.revision = CAST($revision AS INT64), a.digest = $digest, a.kind = $kind",
            [{"kind": "", **r} for r in rows],
            table="Article",
        )

    def loads(self) -> list[dict[str, Any]]:
        return self.query(
            "MATCH (l:Load) RETURN l.id AS id, l.source AS source, l.format AS format, "
            "l.fingerprint AS fingerprint, l.started_at AS started_at, "
            "l.finished_at AS finished_at, l.articles AS articles, l.redirects AS redirects, "
            "l.sections AS sections, l.model AS model, l.status AS status "
            "ORDER BY l.started_at"
        )

    def find_load(self, fingerprint: str) -> dict[str, Any] | None:
        """The latest load of this fingerprint (``status`` "complete", or "committed"
        when its data is in but its indexes were not finished)."""
        rows = self.query(
            "MATCH (l:Load {fingerprint: $f}) RETURN l.id AS id, l.finished_at AS finished_at, "
            "l.status AS status, l.articles AS articles, l.redirects AS redirects, "
            "l.sections AS sections ORDER BY l.started_at DESC LIMIT 1",
            {"f": fingerprint},
        )
        return rows[0] if rows else None

    def record_load(self, row: Mapping[str, Any]) -> None:
        self._run(
            "MERGE (l:Load {id: $id}) SET l.source = $source, l.format = $format, "
            "l.fingerprint = $fingerprint, l.started_at = $started_at, "
            "l.finished_at = $finished_at, l.articles = $articles, l.redirects = $redirects, "
            "l.sections = $sections, l.model = $model, l.status = $status",
            {"status": "complete", **dict(row)},
        )

    def sections_of_load(self, load_id: str) -> int:
        """Sections of the articles a load (or an update) wrote: what its record says it
        wrote, unless a crash lost rows (see ``ingest.pipeline.check_committed_rows``)."""
        return int(
            self._scalar(
                "MATCH (a:Article)-[:HAS_SECTION]->(s:Section) WHERE a.load_id = $l "
                "RETURN count(s)",
                {"l": load_id},
            )
            or 0
        )

    def set_load_status(self, load_id: str, status: str) -> None:
        self._run("MATCH (l:Load {id: $id}) SET l.status = $s", {"id": load_id, "s": status})

    def table_counts(self) -> dict[str, int]:
        """Rows of each node and relationship table."""
        out = {}
        facts = self.has_facts
        for t in NODE_TABLES:
            if t == "Fact" and not facts:
                continue
            out[t] = int(self._scalar(f"MATCH (n:{t}) RETURN count(n)") or 0)
        if UNINDEXED in self.vector_tables():
            out[UNINDEXED] = self.unindexed_count()
        if self.recent_table() is not None:
            out[RECENT] = self.recent_count()
        for t in REL_TABLES:
            if t in FACT_TABLES and not facts:
                continue
            out[t] = int(self._scalar(f"MATCH ()-[r:{t}]->() RETURN count(r)") or 0)
        return out

    def read_everything(self) -> dict[str, int]:
        """Read every column of every table once (``kg-agent check``); rows per table.

        A damaged page makes Kùzu fail here, or crash (which the ``kg-agent`` parent
        reports), rather than later in the middle of a question.
        """
        out: dict[str, int] = {}
        extra = tuple(t for t in self.vector_tables() if t != "SectionVector")
        facts = self.has_facts
        for table in (*NODE_TABLES, *extra, *REL_TABLES, "Meta", "Load"):
            if table in FACT_TABLES and not facts:
                continue
            cols = [
                (str(r[0]), str(r[1]))
                for r in self._run(f"CALL TABLE_INFO('{table}') RETURN name, type")
            ]
            is_rel = table in REL_TABLES
            var = "r" if is_rel else "n"
            parts = [f"count({var})"]
            for name, kind in cols:
                if not name.isidentifier():
                    continue
                ref = f"{var}.{name}"
                if kind.startswith(("STRING", "FLOAT[", "LIST")) or "[" in kind:
                    parts.append(f"sum(size({ref}))")
                elif kind in ("INT64", "DOUBLE", "FLOAT", "INT32"):
                    parts.append(f"sum({ref})")
                else:
                    parts.append(f"count({ref})")
            pattern = f"()-[{var}:{table}]->()" if is_rel else f"({var}:{table})"
            row = self._run(f"MATCH {pattern} RETURN {', '.join(parts)}")
            out[table] = int(row[0][0]) if row else 0
        return out

    def is_empty(self) -> bool:
        """No article and no load: a graph that a new build may replace whole."""
        if not self._has_table("Article"):
            return True
        return not self._scalar("MATCH (a:Article) RETURN count(a)") and not self._scalar(
            "MATCH (l:Load) RETURN count(l)"
        )

    # ------------------------------------------------------------------ indexes
    def index_names(self) -> set[str]:
        rows = self._run("CALL SHOW_INDEXES() RETURN index_name")
        return {str(r[0]) for r in rows}

    def has_vector_index(self) -> bool:
        return self.vector_index() is not None

    def vector_index(self) -> VectorIndex | None:
        """The graph's vector index (the manifest ``Meta`` names), or None. A read-only
        store opens it once; a writer again whenever ``Meta`` names another."""
        if self.read_only and self._vectors is not None:
            return self._vectors[1]
        manifest = self.meta().get("vector_manifest", "") if self._has_table("Meta") else ""
        if self._vectors is None or self._vectors[0] != manifest:
            try:
                index = VectorIndex.open(self.index_root, manifest)
            except VectorIndexError as exc:  # a graph copied without its folder, say
                log.warning(
                    "%s: %s; semantic search scans every vector until 'kg-agent reindex' "
                    "builds the index",
                    self.home,
                    exc,
                )
                index = None
            self._vectors = (manifest, index)
        return self._vectors[1]

    def forget_vector_index(self) -> None:
        self._vectors = None

    def check_vector_index(self) -> int | None:
        """Read every file of the vector index and compare it with the graph's vectors
        (``kg-agent check``): the vectors it holds, None when the graph has none; a
        :class:`DatabaseError` naming what is wrong."""
        manifest = self.meta().get("vector_manifest", "")
        # where the index is the vectors' only copy, a rebuild cannot mend it: the
        # sections are embedded again
        mend = (
            f"embed the sections again with 'kg-agent embed --db {self.home} --force'"
            if self.vectors_in_index()
            else f"rebuild it with 'kg-agent reindex --db {self.home}'"
        )
        stored = int(self._scalar("MATCH (v:SectionVector) RETURN count(v)") or 0)
        try:
            index = VectorIndex.open(self.index_root, manifest)
            if index is None:
                if stored and self.vectors_in_index():
                    raise VectorIndexError("missing: the graph names none")
                return None
            held = index.check()
        except VectorIndexError as exc:
            raise DatabaseError(
                f"the vector index of {self.home} is damaged ({exc}): {mend}"
            ) from None
        if held != stored:
            raise DatabaseError(
                f"the vector index of {self.home} holds {held:,} vectors, the graph "
                f"{stored:,}: {mend}"
            )
        return held

    def compute_pagerank(self, articles: Path) -> int:
        """Global PageRank over the article link graph (stubs excluded), stored on
        ``Article.pagerank`` and in the ``pagerank`` column of ``articles`` (an
        :meth:`export_articles` of the graph, which the article table is then written
        from); returns how many articles were ranked.

        Computed from the link table (:mod:`.pagerank`, the algorithm of Kùzu's
        ``page_rank``, without its ``algo`` extension), which must be in step with
        the graph: written by :meth:`write_link_table` just before. Stubs are link
        targets outside the loaded pages; including them would let pages we know
        nothing about dominate the ranking.
        """
        table = self.link_table()
        if table is None:
            raise DatabaseError(f"database {self.path}: PageRank needs the link table first")
        ranks_file = articles.with_name("pagerank.parquet")
        n = rank_export(table, articles, ranks_file)
        # only a stub may hold an old rank (an article deleted since); zeroing all
        # was 100k writes at 100k articles
        self._run(
            "MATCH (a:Article) WHERE a.is_stub = true AND a.pagerank <> 0.0 SET a.pagerank = 0.0"
        )
        try:
            source = str(ranks_file.resolve()).replace("'", "''")
            self._run(
                f"LOAD FROM '{source}' WITH title, rank "
                "MATCH (a:Article {title: title}) SET a.pagerank = rank"
            )
        finally:
            ranks_file.unlink(missing_ok=True)
        return n

    # ------------------------------------------------------------------ text index
    def generation_path(self) -> Path | None:
        """Folder of the graph's derived indexes (named in ``Meta``), or None."""
        gen = self.meta().get("indexes")
        return self.index_root / gen if gen else None

    def linker_path(self) -> Path | None:
        """Where the generation keeps the saved question entity linker (may not exist)."""
        gen = self.generation_path()
        return gen / LINKER_FILE if gen is not None else None

    def forget_derived(self) -> None:
        """Drop the open derived indexes (after ``Meta`` named another generation, or
        the article table was rewritten)."""
        self._text = None
        self._articles = None
        self._links = None

    def article_table(self) -> ArticleTable | None:
        """Titles and PageRank by node offset (opened once), or None when missing."""
        if self._articles is None:
            gen = self.generation_path()
            path = gen / ARTICLE_TABLE if gen is not None else None
            if path is None or not path.exists():
                return None
            self._articles = ArticleTable(path)
        return self._articles

    def article_table_before(self, load_id: str) -> ArticleTable | None:
        """The generation's article table if it maps the node offsets of the graph as it
        was before the load ``load_id`` (being written now), else None."""
        gen = self.generation_path()
        path = gen / ARTICLE_TABLE if gen is not None else None
        if path is None or not path.exists():
            return None
        try:
            table = ArticleTable(path)
        except (OSError, ValueError):
            return None
        return table if table.key == self._links_key(without=load_id) else None

    def export_articles(self, path: Path) -> Path:
        """Every article's node offset, title, stub flag and PageRank, as parquet: what
        the article table is written from, and the titles a patch of the link table
        compares."""
        self.export_parquet(
            "MATCH (a:Article) RETURN offset(id(a)) AS offset, a.title AS title, "
            "a.is_stub AS is_stub, a.pagerank AS pagerank",
            path,
        )
        return path

    def write_article_table(self, exported: Path | None = None) -> int:
        """(Re)write the article table of the current generation from the graph (or
        from ``exported``, an :meth:`export_articles` of it)."""
        gen = self.generation_dir()
        if exported is not None:
            n = write_article_table(exported, gen / ARTICLE_TABLE, self._links_key())
            self._articles = None
            return n
        tmp = gen / "articles-export.parquet"
        try:
            n = write_article_table(
                self.export_articles(tmp), gen / ARTICLE_TABLE, self._links_key()
            )
        finally:
            tmp.unlink(missing_ok=True)
        self._articles = None
        return n

    def generation_dir(self) -> Path:
        """:meth:`generation_path`, made if missing (DatabaseError when none is named)."""
        gen = self.generation_path()
        if gen is None:
            raise DatabaseError(f"database {self.path} has no index generation yet")
        gen.mkdir(parents=True, exist_ok=True)
        return gen

    def _links_key(self, without: str | None = None) -> str:
        """What a link table must have been written from: the graph's loads (every
        write of links is a load; ids, not statuses, since a load writes the table
        while it finishes); ``without`` one of them: the key before that load."""
        loads = sorted(str(r.get("id")) for r in self.loads() if str(r.get("id")) != without)
        return hashlib.sha256(json.dumps(loads).encode()).hexdigest()

    def link_table(self) -> LinkTable | None:
        """The graph's link table (opened once), or None when it has none in step
        with the graph (older graphs, or a load that has not finished its indexes).
        A writer checks the key at every call: its own loads change the graph."""
        if self._links is None or not self.read_only:
            gen = self.generation_path()
            path = gen / LINK_TABLE if gen is not None else None
            found: LinkTable | bool = False
            if path is not None and path.exists():
                try:
                    table = LinkTable(path)
                except (OSError, ValueError):
                    table = None
                if table is not None and table.key == self._links_key():
                    found = table
            # published once, whole: concurrent readers (serve) never see a half state
            self._links = found
        return self._links if isinstance(self._links, LinkTable) else None

    def write_link_table(
        self, changes: LinkChanges | None = None, articles: Path | None = None
    ) -> int:
        """Bring the link table of the current generation up to date: patched when
        ``changes`` says what the last load changed and the tables on disk are those of
        the graph before it (:mod:`~kg_agent.store.link_patch`), else rebuilt from an
        export of every link. ``articles``: an :meth:`export_articles` of the graph.
        Returns the number of links."""
        gen = self.generation_dir()
        key = self._links_key()
        if changes is not None and articles is not None:
            before = self._links_key(without=changes.load_id)
            n = patch_from_graph(gen, changes, articles, key, before)
            if n is not None:
                self._links = None
                return n
        tmp = gen / "links-export.parquet"
        self.export_parquet(
            "MATCH (a:Article)-[r:LINKS_TO]->(b:Article) "
            "RETURN offset(id(a)) AS s, offset(id(b)) AS d, r.count AS n",
            tmp,
        )
        nodes = self._scalar("MATCH (a:Article) RETURN max(offset(id(a)))")
        try:
            size = int(nodes) + 1 if nodes is not None else 0
            n = write_link_table(tmp, size, gen / LINK_TABLE, key)
        finally:
            tmp.unlink(missing_ok=True)
        self._links = None
        return n

    def has_text_index(self) -> bool:
        """Whether keyword search can run (a load cut short, or files lost, may leave
        a graph without its full-text index)."""
        return self.text_index() is not None

    def text_index(self) -> TextIndex | None:
        """The graph's full-text index (opened once), or None when it has none."""
        if self._text is None:
            path = self.generation_path()
            if path is None or not TextIndex.exists(path):
                return None
            self._text = TextIndex(path)
        return self._text

    def index_status(self) -> IndexStatus:
        meta = self.meta()
        text = self.generation_path()
        return IndexStatus(
            vector=self.vector_index() is not None,
            text=text is not None and TextIndex.exists(text),
            pagerank=meta.get("pagerank_done") == "1",
            stale=meta.get("indexes_stale") == "1",
            embeddings=meta.get("embeddings", "complete"),
        )

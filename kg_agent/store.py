"""The graph store: every Kùzu call in the package goes through this module.

Keeping Kùzu behind one seam means a maintained fork (or another embedded graph
database) can replace it by rewriting this file alone. Callers see plain Python
values and :mod:`kg_agent.exceptions` errors, never ``kuzu`` objects.

Cypher here never interpolates user text: user values travel as parameters.
The only names formatted into statements are table and index names, which are
module constants.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import kuzu

from kg_agent.exceptions import (
    DatabaseError,
    DatabaseLockedError,
    DatabaseNotFoundError,
    SchemaMismatchError,
)

SCHEMA_VERSION = "1"

# Index names (constants: safe to format into CALL statements).
VECTOR_INDEX = "section_embedding_idx"
SECTION_FTS_INDEX = "section_text_fts"
ARTICLE_FTS_INDEX = "article_title_fts"
_PROJECTED_GRAPH = "kg_link_graph"

# Tables a bulk load copies into, in dependency order (nodes before rels).
NODE_TABLES = ("Article", "Section", "Category", "Redirect")
REL_TABLES = ("HAS_SECTION", "LINKS_TO", "MENTIONS", "IN_CATEGORY", "REDIRECTS_TO")


def _schema_ddl(dimension: int) -> list[str]:
    return [
        "CREATE NODE TABLE IF NOT EXISTS Meta(key STRING PRIMARY KEY, value STRING)",
        "CREATE NODE TABLE IF NOT EXISTS Load(id STRING PRIMARY KEY, source STRING, "
        "format STRING, fingerprint STRING, started_at STRING, finished_at STRING, "
        "articles INT64, redirects INT64, sections INT64, model STRING)",
        "CREATE NODE TABLE IF NOT EXISTS Article(title STRING PRIMARY KEY, page_id INT64, "
        "is_stub BOOLEAN, is_disambiguation BOOLEAN, pagerank DOUBLE, n_sections INT64, "
        "word_count INT64, load_id STRING)",
        "CREATE NODE TABLE IF NOT EXISTS Section(id STRING PRIMARY KEY, article STRING, "
        "heading STRING, heading_path STRING, level INT64, ordinal INT64, part INT64, "
        f"text STRING, word_count INT64, embedding FLOAT[{int(dimension)}])",
        "CREATE NODE TABLE IF NOT EXISTS Category(name STRING PRIMARY KEY)",
        "CREATE NODE TABLE IF NOT EXISTS Redirect(title STRING PRIMARY KEY, load_id STRING)",
        "CREATE REL TABLE IF NOT EXISTS HAS_SECTION(FROM Article TO Section)",
        "CREATE REL TABLE IF NOT EXISTS LINKS_TO(FROM Article TO Article, count INT64, "
        "inferred BOOLEAN)",
        "CREATE REL TABLE IF NOT EXISTS MENTIONS(FROM Section TO Article, count INT64, "
        "inferred BOOLEAN)",
        "CREATE REL TABLE IF NOT EXISTS IN_CATEGORY(FROM Article TO Category)",
        "CREATE REL TABLE IF NOT EXISTS REDIRECTS_TO(FROM Redirect TO Article)",
    ]


@dataclass(frozen=True, slots=True)
class SectionHit:
    """A section returned by vector or full-text search."""

    section_id: str
    title: str
    heading: str
    heading_path: str
    text: str
    score: float
    pagerank: float


@dataclass(frozen=True, slots=True)
class IndexStatus:
    vector: bool
    section_fts: bool
    article_fts: bool
    pagerank: bool
    stale: bool


@dataclass(frozen=True, slots=True)
class StoreStats:
    articles: int
    stub_articles: int
    disambiguation_pages: int
    sections: int
    categories: int
    redirects: int
    links: int
    inferred_links: int
    mentions: int
    category_edges: int
    loads: int
    model: str
    dimension: int
    indexes: IndexStatus
    top_pagerank: list[tuple[str, float]]

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        return asdict(self)


def _translate(path: str, exc: Exception) -> DatabaseError:
    msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if "lock" in msg.lower():
        return DatabaseLockedError(
            f"database {path} is in use by another process (Kùzu allows one writing "
            "process, or several read-only ones): close it and retry"
        )
    return DatabaseError(f"database {path}: {msg}")


class GraphStore:
    """An open Kùzu database holding the knowledge graph.

    Use :meth:`open` to get one. Read-only stores take a shared lock, so many
    query processes can read while no loader writes.
    """

    def __init__(self, path: str | os.PathLike[str], *, read_only: bool, db: Any) -> None:
        self.path = str(path)
        self.read_only = read_only
        self._db = db
        self._conn = kuzu.Connection(db)
        self._in_tx = False

    # ------------------------------------------------------------------ open/close
    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        read_only: bool = True,
        create: bool = False,
        buffer_pool_mb: int | None = None,
    ) -> GraphStore:
        """Open (or, with ``create``, create) the database at ``path``.

        A missing database is an error on read paths rather than silently
        creating an empty one, which would answer every question with nothing.
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
        pool = buffer_pool_mb or int(os.environ.get("KG_AGENT_BUFFER_POOL_MB", "0") or 0)
        if not pool:
            pool = 1024 if read_only else 2048
        try:
            db = kuzu.Database(str(p), read_only=read_only, buffer_pool_size=pool * 1024 * 1024)
        except RuntimeError as exc:
            raise _translate(str(p), exc) from None
        store = cls(p, read_only=read_only, db=db)
        if read_only and not store._has_table("Meta"):
            store.close()
            raise DatabaseError(f"database {p} holds no kg-agent graph (no Meta table)")
        return store

    def close(self) -> None:
        with contextlib.suppress(Exception):
            if self._in_tx:
                self.rollback()
        with contextlib.suppress(Exception):
            self._conn.close()
        with contextlib.suppress(Exception):
            self._db.close()

    def __enter__(self) -> GraphStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ low level
    def _run(self, cypher: str, params: Mapping[str, Any] | None = None) -> list[list[Any]]:
        try:
            res = self._conn.execute(cypher, dict(params) if params else {})
        except RuntimeError as exc:
            raise _translate(self.path, exc) from None
        if isinstance(res, list):  # several statements: keep the last result
            res = res[-1]
        return [list(r) for r in res.get_all()]

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

    def _scalar(self, cypher: str, params: Mapping[str, Any] | None = None) -> Any:
        rows = self._run(cypher, params)
        return rows[0][0] if rows else None

    def _has_table(self, name: str) -> bool:
        rows = self._run("CALL SHOW_TABLES() RETURN name")
        return any(r[0] == name for r in rows)

    # ------------------------------------------------------------------ schema/meta
    def ensure_schema(self, *, dimension: int, model: str) -> None:
        """Create the tables on first use; refuse a different model or dimension.

        Mixing embeddings from two models in one index would make every
        similarity meaningless, so the model is fixed when the graph is created.
        """
        existing = self.meta() if self._has_table("Meta") else {}
        if existing:
            if existing.get("schema_version") != SCHEMA_VERSION:
                raise SchemaMismatchError(
                    f"database {self.path} has schema version "
                    f"{existing.get('schema_version')}, this kg-agent writes {SCHEMA_VERSION}"
                )
            if existing.get("model") != model or int(existing.get("dimension", 0)) != dimension:
                raise SchemaMismatchError(
                    f"database {self.path} was built with embedding model "
                    f"{existing.get('model')} (dimension {existing.get('dimension')}); "
                    f"this load uses {model} (dimension {dimension}): use the same model "
                    "or a new database"
                )
            return
        for stmt in _schema_ddl(dimension):
            self._run(stmt)
        self.set_meta(schema_version=SCHEMA_VERSION, model=model, dimension=str(dimension))

    def meta(self) -> dict[str, str]:
        if not self._has_table("Meta"):
            return {}
        return {str(k): str(v) for k, v in self._run("MATCH (m:Meta) RETURN m.key, m.value")}

    def set_meta(self, **values: str) -> None:
        for key, value in values.items():
            self._run("MERGE (m:Meta {key: $k}) SET m.value = $v", {"k": key, "v": value})

    @property
    def dimension(self) -> int:
        return int(self.meta().get("dimension", "0"))

    # ------------------------------------------------------------------ transactions
    def begin(self) -> None:
        self._run("BEGIN TRANSACTION")
        self._in_tx = True

    def commit(self) -> None:
        self._run("COMMIT")
        self._in_tx = False

    def rollback(self) -> None:
        """Undo the open transaction; a no-op when Kùzu already rolled it back.

        Kùzu aborts the transaction itself when a statement in it fails, so an
        explicit ROLLBACK after an error may find none open.
        """
        if self._in_tx:
            self._in_tx = False
            with contextlib.suppress(DatabaseError):
                self._run("ROLLBACK")

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """All-or-nothing: any exception (Ctrl-C included) rolls the work back."""
        self.begin()
        try:
            yield
        except BaseException:
            self.rollback()
            raise
        self.commit()

    # ------------------------------------------------------------------ snapshots
    def snapshot(self) -> Path:
        """Checkpoint, then copy the database file beside it, for :meth:`restore_snapshot`.

        Kùzu 0.11.3 loses a relationship table's existing rows when a
        transaction that ran ``COPY`` into it is rolled back (reproduced in
        ``tests/e2e/test_load_faults.py``), so ROLLBACK alone cannot undo a
        failed incremental load. A file copy can; it costs one read and write
        of the graph, and only loads into a non-empty graph pay it.
        """
        self._run("CHECKPOINT")
        src = Path(self.path)
        backup = src.with_name(src.name + ".kg-backup")
        remove_database(backup)
        if src.is_dir():
            shutil.copytree(src, backup)
        else:
            shutil.copyfile(src, backup)
        return backup

    def restore_snapshot(self, backup: Path) -> None:
        """Close the database and put the snapshot back in its place."""
        self.close()
        target = Path(self.path)
        wal = target.with_name(target.name + ".wal")
        if target.is_dir():
            shutil.rmtree(target)
        os.replace(backup, target)
        if wal.exists():
            wal.unlink()

    # ------------------------------------------------------------------ bulk writes
    def copy_parquet(self, table: str, parquet_path: str | os.PathLike[str]) -> None:
        """Bulk-load a parquet file whose columns match ``table`` in order."""
        if table not in NODE_TABLES + REL_TABLES + ("Load",):
            raise ValueError(f"not a bulk-loadable table: {table}")
        path = str(Path(parquet_path).resolve()).replace("'", "''")
        self._run(f"COPY {table} FROM '{path}'")

    def existing_articles(self, titles: Sequence[str]) -> dict[str, bool]:
        """Title → is_stub for the given titles that are already in the graph."""
        if not titles:
            return {}
        rows = self._run(
            "MATCH (a:Article) WHERE a.title IN $t RETURN a.title, a.is_stub", {"t": list(titles)}
        )
        return {str(t): bool(s) for t, s in rows}

    def all_article_titles(self, *, exclude: Mapping[str, object] | None = None) -> list[str]:
        """Titles of every non-stub article (for mention matching across loads)."""
        rows = self._run("MATCH (a:Article) WHERE a.is_stub = false RETURN a.title")
        skip = exclude or {}
        return [str(r[0]) for r in rows if r[0] not in skip]

    def existing_redirects(self, titles: Sequence[str]) -> dict[str, str]:
        """Redirect title → target article title, for those already in the graph."""
        if not titles:
            return {}
        rows = self._run(
            "MATCH (r:Redirect)-[:REDIRECTS_TO]->(a:Article) WHERE r.title IN $t "
            "RETURN r.title, a.title",
            {"t": list(titles)},
        )
        return {str(r): str(a) for r, a in rows}

    def existing_categories(self, names: Sequence[str]) -> set[str]:
        if not names:
            return set()
        rows = self._run("MATCH (c:Category) WHERE c.name IN $n RETURN c.name", {"n": list(names)})
        return {str(r[0]) for r in rows}

    def clear_article_content(self, titles: Sequence[str]) -> None:
        """Remove what a re-load replaces: sections, outgoing links and category edges.

        The Article node itself stays, so links *into* it from other loads survive.
        """
        if not titles:
            return
        t = {"t": list(titles)}
        self._run(
            "MATCH (a:Article)-[:HAS_SECTION]->(s:Section) WHERE a.title IN $t DETACH DELETE s", t
        )
        self._run("MATCH (a:Article)-[r:LINKS_TO]->(:Article) WHERE a.title IN $t DELETE r", t)
        self._run("MATCH (a:Article)-[r:IN_CATEGORY]->(:Category) WHERE a.title IN $t DELETE r", t)

    def delete_redirects(self, titles: Sequence[str]) -> None:
        if titles:
            self._run("MATCH (r:Redirect) WHERE r.title IN $t DETACH DELETE r", {"t": list(titles)})

    def update_articles(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Overwrite the properties of articles that already exist (stubs or re-loads)."""
        if not rows:
            return
        self._run(
            "UNWIND $rows AS r MATCH (a:Article {title: r.title}) "
            "SET a.page_id = CAST(r.page_id AS INT64), a.is_stub = r.is_stub, "
            "a.is_disambiguation = r.is_disambiguation, a.n_sections = r.n_sections, "
            "a.word_count = r.word_count, a.load_id = r.load_id",
            {"rows": [dict(r) for r in rows]},
        )

    def loads(self) -> list[dict[str, Any]]:
        return self.query(
            "MATCH (l:Load) RETURN l.id AS id, l.source AS source, l.format AS format, "
            "l.fingerprint AS fingerprint, l.started_at AS started_at, "
            "l.finished_at AS finished_at, l.articles AS articles, l.redirects AS redirects, "
            "l.sections AS sections, l.model AS model ORDER BY l.started_at"
        )

    def find_load(self, fingerprint: str) -> dict[str, Any] | None:
        rows = self.query(
            "MATCH (l:Load {fingerprint: $f}) RETURN l.id AS id, l.finished_at AS finished_at",
            {"f": fingerprint},
        )
        return rows[0] if rows else None

    def record_load(self, row: Mapping[str, Any]) -> None:
        self._run(
            "MERGE (l:Load {id: $id}) SET l.source = $source, l.format = $format, "
            "l.fingerprint = $fingerprint, l.started_at = $started_at, "
            "l.finished_at = $finished_at, l.articles = $articles, l.redirects = $redirects, "
            "l.sections = $sections, l.model = $model",
            dict(row),
        )

    # ------------------------------------------------------------------ indexes
    def index_names(self) -> set[str]:
        rows = self._run("CALL SHOW_INDEXES() RETURN index_name")
        return {str(r[0]) for r in rows}

    def has_vector_index(self) -> bool:
        return VECTOR_INDEX in self.index_names()

    def build_vector_index(self) -> None:
        """HNSW over section embeddings (cosine), built after the bulk load."""
        if VECTOR_INDEX in self.index_names():
            return
        if not self._scalar("MATCH (s:Section) RETURN count(s)"):
            return
        self._run(
            f"CALL CREATE_VECTOR_INDEX('Section', '{VECTOR_INDEX}', 'embedding', "
            "metric := 'cosine')"
        )

    def build_fts_indexes(self, *, rebuild: bool = False) -> None:
        """BM25 indexes over section text and article titles.

        Kùzu keeps them current under COPY, so a load only creates missing ones;
        ``rebuild`` drops and recreates them (``kg-agent reindex``).
        """
        names = self.index_names()
        for table, name, cols in (
            ("Section", SECTION_FTS_INDEX, "['heading', 'text']"),
            ("Article", ARTICLE_FTS_INDEX, "['title']"),
        ):
            if name in names:
                if not rebuild:
                    continue
                self._run(f"CALL DROP_FTS_INDEX('{table}', '{name}')")
            if self._scalar(f"MATCH (n:{table}) RETURN count(n)"):
                self._run(
                    f"CALL CREATE_FTS_INDEX('{table}', '{name}', {cols}, stemmer := 'english')"
                )

    def compute_pagerank(self) -> int:
        """Global PageRank over the article link graph (stubs excluded), stored on Article.

        Stubs are link targets outside the loaded pages; including them would
        let pages we know nothing about dominate the ranking.
        """
        self._run("MATCH (a:Article) SET a.pagerank = 0.0")
        n_real = self._scalar("MATCH (a:Article) WHERE a.is_stub = false RETURN count(a)")
        if not n_real:
            return 0
        with contextlib.suppress(RuntimeError, DatabaseError):
            self._run(f"CALL DROP_PROJECTED_GRAPH('{_PROJECTED_GRAPH}')")
        self._run(
            f"CALL PROJECT_GRAPH('{_PROJECTED_GRAPH}', "
            "{'Article': 'n.is_stub = false'}, ['LINKS_TO'])"
        )
        try:
            n = self._scalar(
                f"CALL page_rank('{_PROJECTED_GRAPH}') WITH node, rank "
                "SET node.pagerank = rank RETURN count(*)"
            )
        finally:
            self._run(f"CALL DROP_PROJECTED_GRAPH('{_PROJECTED_GRAPH}')")
        return int(n or 0)

    def index_status(self) -> IndexStatus:
        names = self.index_names()
        meta = self.meta()
        return IndexStatus(
            vector=VECTOR_INDEX in names,
            section_fts=SECTION_FTS_INDEX in names,
            article_fts=ARTICLE_FTS_INDEX in names,
            pagerank=meta.get("pagerank_done") == "1",
            stale=meta.get("indexes_stale") == "1",
        )

    # ------------------------------------------------------------------ reads
    def count(self, cypher: str) -> int:
        return int(self._scalar(cypher) or 0)

    def stats(self, top: int = 10) -> StoreStats:
        meta = self.meta()
        c = self.count
        top_rows = self._run(
            "MATCH (a:Article) WHERE a.is_stub = false RETURN a.title, a.pagerank "
            "ORDER BY a.pagerank DESC, a.title LIMIT $k",
            {"k": top},
        )
        return StoreStats(
            articles=c("MATCH (a:Article) WHERE a.is_stub = false RETURN count(a)"),
            stub_articles=c("MATCH (a:Article) WHERE a.is_stub = true RETURN count(a)"),
            disambiguation_pages=c(
                "MATCH (a:Article) WHERE a.is_disambiguation = true RETURN count(a)"
            ),
            sections=c("MATCH (s:Section) RETURN count(s)"),
            categories=c("MATCH (c:Category) RETURN count(c)"),
            redirects=c("MATCH (r:Redirect) RETURN count(r)"),
            links=c("MATCH ()-[r:LINKS_TO]->() RETURN count(r)"),
            inferred_links=c("MATCH ()-[r:LINKS_TO]->() WHERE r.inferred RETURN count(r)"),
            mentions=c("MATCH ()-[r:MENTIONS]->() RETURN count(r)"),
            category_edges=c("MATCH ()-[r:IN_CATEGORY]->() RETURN count(r)"),
            loads=c("MATCH (l:Load) RETURN count(l)"),
            model=meta.get("model", ""),
            dimension=int(meta.get("dimension", "0")),
            indexes=self.index_status(),
            top_pagerank=[(str(t), float(p or 0.0)) for t, p in top_rows],
        )

    def vector_search(self, embedding: Sequence[float], k: int) -> list[SectionHit]:
        """Nearest sections by cosine similarity through the HNSW index."""
        rows = self._run(
            f"CALL QUERY_VECTOR_INDEX('Section', '{VECTOR_INDEX}', $q, $k) "
            "WITH node AS s, distance "
            "MATCH (a:Article)-[:HAS_SECTION]->(s) "
            "RETURN s.id, a.title, s.heading, s.heading_path, s.text, 1.0 - distance, "
            "a.pagerank ORDER BY 1.0 - distance DESC",
            {"q": [float(x) for x in embedding], "k": int(k)},
        )
        return [_hit(r) for r in rows]

    def fts_search(self, text: str, k: int) -> list[SectionHit]:
        """BM25 search over section headings and text.

        ``*`` and ``?`` are wildcards to Kùzu's FTS (a question mark would turn
        the last word of every question into a prefix pattern), so they are removed.
        """
        words = " ".join(text.replace("*", " ").replace("?", " ").split())
        if not words or k < 1:
            return []
        rows = self._run(
            f"CALL QUERY_FTS_INDEX('Section', '{SECTION_FTS_INDEX}', $q, top := $k) "
            "WITH node AS s, score "
            "MATCH (a:Article)-[:HAS_SECTION]->(s) "
            "RETURN s.id, a.title, s.heading, s.heading_path, s.text, score, a.pagerank "
            "ORDER BY score DESC",
            {"q": words, "k": int(k)},
        )
        return [_hit(r) for r in rows]

    def article_sections(self, title: str) -> list[dict[str, Any]]:
        return self.query(
            "MATCH (a:Article {title: $t})-[:HAS_SECTION]->(s:Section) "
            "RETURN s.id AS id, s.heading AS heading, s.heading_path AS heading_path, "
            "s.level AS level, s.ordinal AS ordinal, s.part AS part, s.text AS text, "
            "s.word_count AS word_count ORDER BY s.ordinal",
            {"t": title},
        )

    def article(self, title: str) -> dict[str, Any] | None:
        rows = self.query(
            "MATCH (a:Article {title: $t}) RETURN a.title AS title, a.page_id AS page_id, "
            "a.is_stub AS is_stub, a.is_disambiguation AS is_disambiguation, "
            "a.pagerank AS pagerank, a.n_sections AS n_sections, a.word_count AS word_count",
            {"t": title},
        )
        return rows[0] if rows else None

    def resolve_title(self, title: str) -> str | None:
        """Canonical article title for a title or a redirect alias."""
        if self._scalar("MATCH (a:Article {title: $t}) RETURN a.title", {"t": title}):
            return title
        target = self._scalar(
            "MATCH (r:Redirect {title: $t})-[:REDIRECTS_TO]->(a:Article) RETURN a.title",
            {"t": title},
        )
        return str(target) if target else None

    def outgoing_links(self, title: str) -> list[tuple[str, int]]:
        rows = self._run(
            "MATCH (a:Article {title: $t})-[r:LINKS_TO]->(b:Article) "
            "RETURN b.title, r.count ORDER BY r.count DESC, b.title",
            {"t": title},
        )
        return [(str(b), int(n)) for b, n in rows]

    def incoming_links(self, title: str) -> list[tuple[str, int]]:
        rows = self._run(
            "MATCH (b:Article)-[r:LINKS_TO]->(a:Article {title: $t}) "
            "RETURN b.title, r.count ORDER BY r.count DESC, b.title",
            {"t": title},
        )
        return [(str(b), int(n)) for b, n in rows]

    def section_mentions(self, section_id: str) -> list[tuple[str, int]]:
        rows = self._run(
            "MATCH (s:Section {id: $s})-[m:MENTIONS]->(a:Article) "
            "RETURN a.title, m.count ORDER BY m.count DESC, a.title",
            {"s": section_id},
        )
        return [(str(t), int(n)) for t, n in rows]

    def link_neighbourhood(
        self, titles: Sequence[str], *, limit: int
    ) -> list[tuple[str, str, int]]:
        """Each ``LINKS_TO`` edge touching ``titles``, as (title, neighbour, count), once.

        Direction is dropped: the reranker's walk is undirected. ``LINKS_TO``
        already sums the sections' ``MENTIONS``, so it covers both. An edge between
        two of ``titles`` comes once, from the end that sorts first (a link each way
        is two edges). One undirected query: measured faster than an out-query plus
        an in-query, and an ``ORDER BY`` in Cypher cost more than the sort here.
        ``limit`` bounds the rows read (a guard for hub articles; which rows a
        truncated read keeps is Kùzu's scan order). Sorted by count, strongest first.
        """
        if not titles:
            return []
        wanted = list(dict.fromkeys(titles))
        rows = self._run(
            "MATCH (a:Article)-[r:LINKS_TO]-(b:Article) WHERE a.title IN $t "
            "RETURN a.title, b.title, r.count LIMIT $k",
            {"t": wanted, "k": int(limit)},
        )
        inside = set(wanted)
        edges = [
            (str(a), str(b), int(n or 0))
            for a, b, n in rows
            if not (b in inside and b < a)  # seen from both ends: keep one
        ]
        edges.sort(key=lambda e: (-e[2], e[0], e[1]))
        return edges

    def article_pageranks(self, titles: Sequence[str]) -> dict[str, float]:
        """Global PageRank of each of ``titles`` found in the graph (stubs have 0)."""
        if not titles:
            return {}
        rows = self._run(
            "UNWIND $t AS t MATCH (a:Article {title: t}) RETURN a.title, a.pagerank",
            {"t": list(dict.fromkeys(titles))},
        )
        return {str(t): float(p or 0.0) for t, p in rows}

    def pagerank_bounds(self) -> tuple[float, float]:
        """Smallest positive and largest global PageRank; (0, 0) before PageRank ran.

        The reranker log-scales PageRank between these, so a score means the same
        thing whatever the graph's size.
        """
        rows = self._run(
            "MATCH (a:Article) WHERE a.is_stub = false AND a.pagerank > 0 "
            "RETURN min(a.pagerank), max(a.pagerank)"
        )
        if not rows or rows[0][0] is None:
            return (0.0, 0.0)
        return (float(rows[0][0]), float(rows[0][1]))

    def search_article_titles(self, text: str, k: int = 5) -> list[tuple[str, float]]:
        """Articles whose titles match ``text`` (BM25 on ``article_title_fts``), best first.

        Entity lookup for names that are neither a title nor a redirect. Kùzu's FTS
        reads ``*`` and ``?`` as wildcards (a lone ``*`` matches every title), so they
        are removed; ties prefer real articles over stubs, then higher PageRank.
        Returns nothing when the index has not been built.
        """
        words = " ".join(text.replace("*", " ").replace("?", " ").split())
        if not words or k < 1 or ARTICLE_FTS_INDEX not in self.index_names():
            return []
        rows = self._run(
            f"CALL QUERY_FTS_INDEX('Article', '{ARTICLE_FTS_INDEX}', $q, top := $k) "
            "RETURN node.title, score ORDER BY score DESC, node.is_stub, "
            "node.pagerank DESC, node.title",
            {"q": words, "k": int(k)},
        )
        return [(str(t), float(s)) for t, s in rows]

    def resolve_category(self, name: str) -> str | None:
        """Stored category name for ``name``: exact, else case-insensitive; None if absent."""
        bare = name.strip()
        if bare[:9].lower() == "category:":
            bare = bare[9:].strip()
        if not bare:
            return None
        if self._scalar("MATCH (c:Category {name: $n}) RETURN c.name", {"n": bare}):
            return bare
        hit = self._scalar(
            "MATCH (c:Category) WHERE lower(c.name) = lower($n) RETURN c.name "
            "ORDER BY c.name LIMIT 1",
            {"n": bare},
        )
        return str(hit) if hit else None

    def section_embeddings(self) -> tuple[list[str], Any]:
        """Every section id and its embedding as a float32 matrix (for exact search).

        Streams the rows in pages so a large graph does not build one huge
        Python list of lists.
        """
        import numpy as np

        dim = self.dimension
        ids: list[str] = []
        blocks: list[Any] = []
        page, offset = 20000, 0
        while True:
            rows = self._run(
                "MATCH (s:Section) RETURN s.id, s.embedding ORDER BY s.id SKIP $o LIMIT $n",
                {"o": offset, "n": page},
            )
            if not rows:
                break
            ids.extend(str(r[0]) for r in rows)
            blocks.append(np.asarray([r[1] for r in rows], dtype=np.float32))
            offset += len(rows)
            if len(rows) < page:
                break
        matrix = np.vstack(blocks) if blocks else np.zeros((0, dim), dtype=np.float32)
        return ids, matrix

    def entity_names(self) -> tuple[list[str], list[tuple[str, str]]]:
        """Titles of real (non-stub) articles, and (redirect, target) alias pairs.

        What question entity linking matches against; stubs have no text to
        retrieve, so naming one would seed nothing.
        """
        titles = [
            str(r[0]) for r in self._run("MATCH (a:Article) WHERE NOT a.is_stub RETURN a.title")
        ]
        aliases = [
            (str(r), str(t))
            for r, t in self._run(
                "MATCH (r:Redirect)-[:REDIRECTS_TO]->(a:Article) WHERE NOT a.is_stub "
                "RETURN r.title, a.title"
            )
        ]
        return titles, aliases

    def sections_of_articles(self, titles: Sequence[str]) -> list[tuple[SectionHit, list[float]]]:
        """Every section of the given articles with its embedding (for scoring them)."""
        if not titles:
            return []
        rows = self._run(
            "MATCH (a:Article)-[:HAS_SECTION]->(s:Section) WHERE a.title IN $t "
            "RETURN s.id, a.title, s.heading, s.heading_path, s.text, 0.0, a.pagerank, "
            "s.embedding",
            {"t": list(dict.fromkeys(titles))},
        )
        return [(_hit(r[:7]), list(r[7])) for r in rows]

    def sections_by_ids(self, ids: Sequence[str]) -> dict[str, SectionHit]:
        """Section rows (score 0) for the given ids, keyed by id."""
        if not ids:
            return {}
        rows = self._run(
            "MATCH (a:Article)-[:HAS_SECTION]->(s:Section) WHERE s.id IN $ids "
            "RETURN s.id, a.title, s.heading, s.heading_path, s.text, 0.0, a.pagerank",
            {"ids": list(ids)},
        )
        return {str(r[0]): _hit(r) for r in rows}

    def categories_of(self, title: str) -> list[str]:
        rows = self._run(
            "MATCH (a:Article {title: $t})-[:IN_CATEGORY]->(c:Category) RETURN c.name "
            "ORDER BY c.name",
            {"t": title},
        )
        return [str(r[0]) for r in rows]


def _hit(row: Sequence[Any]) -> SectionHit:
    return SectionHit(
        section_id=str(row[0]),
        title=str(row[1]),
        heading=str(row[2] or ""),
        heading_path=str(row[3] or ""),
        text=str(row[4] or ""),
        score=float(row[5]),
        pagerank=float(row[6] or 0.0),
    )


def remove_database(path: str | os.PathLike[str]) -> None:
    """Delete a database (file or directory form) and its write-ahead log."""
    p = Path(path)
    if p.is_dir():
        shutil.rmtree(p)
    elif p.exists():
        p.unlink()
    for extra in (p.with_name(p.name + ".wal"), p.with_name(p.name + ".shadow")):
        if extra.exists():
            extra.unlink()

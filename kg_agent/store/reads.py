"""Read queries of the graph store, shaped for Kùzu 0.11.3's planner.

Per-query paths (everything :class:`~kg_agent.agent.KnowledgeGraphAgent` runs for
a question) look rows up by primary key in a loop of prepared statements, and
read link neighbours from the memory-mapped
:class:`~kg_agent.store.link_table.LinkTable` (else from Kùzu) as node offsets
turned into titles by the memory-mapped
:class:`~kg_agent.store.article_table.ArticleTable`: no path scans a table, so a
question costs the same on a graph of 6k or 6M articles. Whole-table reads
(``stats``, ``entity_names``) are for start-up and reports.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from kg_agent.store.article_table import ArticleTable
from kg_agent.store.fact_items import FactKey, FactRow, fact_query, items_of, naming_count_query
from kg_agent.store.link_table import LinkTable
from kg_agent.store.section_ids import lead_id, section_id
from kg_agent.store.text_index import TextIndex
from kg_agent.store.vector_index import VectorIndex

__all__ = [
    "LOST",
    "RECENT",
    "RECENT_INDEX",
    "UNINDEXED",
    "VECTOR_INDEX",
    "FactKey",
    "FactRow",
    "GraphReads",
    "IndexStatus",
    "SectionHit",
    "StoreStats",
]

log = logging.getLogger(__name__)


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
    """Which derived indexes a graph has.

    ``embeddings`` is ``complete`` (every section has a vector), ``none`` (loaded
    with ``--embeddings none|later``: semantic search is off) or ``partial``.
    ``vector`` is the vector index beside the graph; ``text`` the full-text index of sections and
    titles, in step with the graph; ``stale`` says a load committed its data but
    not yet its indexes (``kg-agent load`` again, or ``reindex``, finishes them).
    """

    vector: bool
    text: bool
    pagerank: bool
    stale: bool
    embeddings: str = "complete"


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
    incomplete_loads: list[str] = field(default_factory=list)
    #: the vector index's parts: updates add one each (store/vector_index.py)
    vector_segments: int = 0
    #: rows of the vector index whose sections left since it was built
    deleted_vectors: int = 0
    #: where the section vectors are stored: ``graph`` (its column and the index) or
    #: ``index`` (the index alone; store/vectors.py)
    vector_store: str = "graph"
    #: infobox facts (Fact nodes: an item each on schemas 4 to 6), and the articles that
    #: have at least one (0: a graph of schema 3)
    facts: int = 0
    articles_with_facts: int = 0
    #: articles (not stubs) of each kind: person, place, … ("" for unknown)
    kinds: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        return asdict(self)


#: titles whose fact rows a read-only store keeps (each query apart): ~40 items a title,
#: ~300 bytes an item, so ~25 MB at most
_FACT_CACHE_MAX = 2_000


#: Schema 4's Kùzu HNSW index, and the tables where its updates' vectors waited
#: (``UnindexedVector``) or had a second index (``RecentVector<n>``, the one
#: ``Meta.recent_vectors`` names): read as they are, moved by the upgrade to schema 5.
VECTOR_INDEX = "section_embedding_idx"
UNINDEXED = "UnindexedVector"
RECENT = "RecentVector"
RECENT_INDEX = "recent_embedding_idx"
#: A load's status once a crash lost rows it had committed and a forced load wrote them
#: again: kept in the load history, not an unfinished load.
LOST = "lost"

_SECTION_BY_ID = (
    "MATCH (s:Section {id: $i}) RETURN s.id, s.article, s.heading, s.heading_path, s.text"
)
_ROW_CACHE_MAX = 200_000
_ARTICLE_BY_TITLE = (
    "MATCH (a:Article {title: $t}) RETURN a.title, a.pagerank, a.n_sections, offset(id(a)), a.kind"
)
# schemas 2 and 3 have no kind (READABLE_SCHEMA_VERSIONS)
_ARTICLE_BY_TITLE_NO_KIND = _ARTICLE_BY_TITLE.replace("a.kind", "''")
#: An article's row as a read-only store remembers it: (pagerank, n_sections, node
#: offset, kind).
ArticleRow = tuple[float, int, int, str]
_OUT_OFFSETS = (
    "MATCH (a:Article {title: $t})-[r:LINKS_TO]->(b:Article) RETURN offset(id(b)), r.count LIMIT $k"
)
_IN_OFFSETS = (
    "MATCH (a:Article {title: $t})<-[r:LINKS_TO]-(b:Article) RETURN offset(id(b)), r.count LIMIT $k"
)


class GraphReads:
    """Read methods of :class:`~kg_agent.store.GraphStore` (a mixin: see the module doc)."""

    if TYPE_CHECKING:  # provided by GraphStore

        def _run(self, cypher: str, params: Any = None) -> list[list[Any]]: ...
        def _columns(self, cypher: str) -> list[list[Any]]: ...
        def _pk(self, cypher: str, params: Any) -> list[list[Any]]: ...
        def _scalar(self, cypher: str, params: Any = None) -> Any: ...
        def query(self, cypher: str, params: Any = None) -> list[dict[str, Any]]: ...
        def meta(self) -> dict[str, str]: ...
        def index_status(self) -> IndexStatus: ...
        def text_index(self) -> TextIndex | None: ...
        def article_table(self) -> ArticleTable | None: ...
        def link_table(self) -> LinkTable | None: ...
        def vector_index(self) -> VectorIndex | None: ...
        def vectors_in_index(self) -> bool: ...
        @property
        def dimension(self) -> int: ...

    def vector_tables(self) -> tuple[str, ...]:
        """The tables that hold section vectors: ``SectionVector`` and, in a graph
        written by this version, the recent index's (once an update folded) and
        ``UnindexedVector``. A read-only store asks once."""
        known: tuple[str, ...] | None = getattr(self, "_vector_tables", None)
        if known is not None:
            return known
        names = {str(r[0]) for r in self._run("CALL SHOW_TABLES() RETURN name")}
        recent = self.meta().get("recent_vectors", "") if "Meta" in names else ""
        found = tuple(t for t in ("SectionVector", recent, UNINDEXED) if t and t in names)
        if getattr(self, "read_only", False):
            self._vector_tables = found
        return found

    def recent_table(self) -> str | None:
        """The table of the recent vector index, if the graph has one."""
        return next((t for t in self.vector_tables() if t.startswith(RECENT)), None)

    def recent_count(self) -> int:
        table = self.recent_table()
        return self._count(f"MATCH (v:{table}) RETURN count(v)") if table else 0

    def unindexed_count(self) -> int:
        """Vectors waiting outside the index (0 in a graph older than their table)."""
        if UNINDEXED not in self.vector_tables():
            return 0
        return self._count(f"MATCH (u:{UNINDEXED}) RETURN count(u)")

    def over_vector_tables(self, query: str) -> str:
        """``query`` (one of this package's, over ``SectionVector``) over the vectors
        waiting beside the index too: an export that rebuilds the index from both."""
        others = [t for t in self.vector_tables() if t != "SectionVector"]
        return " UNION ALL ".join([query, *(query.replace("SectionVector", t, 1) for t in others)])

    # ------------------------------------------------------------------ by key
    def _article_rows(self, titles: Sequence[str]) -> dict[str, ArticleRow]:
        """title → (pagerank, n_sections, node offset, kind) for those of ``titles`` in
        the graph.

        A read-only store remembers them (they change only when a load writes), so a
        long-running reader looks each article up once.
        """
        cache: dict[str, ArticleRow] | None = getattr(self, "_row_cache", None)
        out: dict[str, ArticleRow] = {}
        by_title = ""
        for t in dict.fromkeys(titles):
            # one lookup (get): another thread may clear the cache between two
            row = cache.get(t) if cache is not None else None
            if row is not None:
                out[t] = row
                continue
            if not by_title:  # what the graph's schema has (once a call, when needed)
                by_title = _ARTICLE_BY_TITLE if self.has_facts else _ARTICLE_BY_TITLE_NO_KIND
            for title, pr, n, offset, kind in self._pk(by_title, {"t": t}):
                out[str(title)] = (float(pr or 0.0), int(n or 0), int(offset), str(kind or ""))
                if cache is not None:
                    if len(cache) >= _ROW_CACHE_MAX:
                        cache.clear()
                    cache[str(title)] = out[str(title)]
        return out

    def _sections(self, ids: Sequence[str]) -> dict[str, list[Any]]:
        rows: dict[str, list[Any]] = {}
        for i in dict.fromkeys(ids):
            for row in self._pk(_SECTION_BY_ID, {"i": i}):
                rows[str(row[0])] = row
        return rows

    # ------------------------------------------------------------------ reads
    def _count(self, cypher: str) -> int:
        """The number a ``RETURN count(...)`` query of this package gives (tests, reports);
        other modules call the named counts below."""
        return int(self._scalar(cypher) or 0)

    def count_articles(self) -> int:
        """Articles with a page in the graph (stubs, link targets without one, excluded)."""
        return self._count("MATCH (a:Article) WHERE a.is_stub = false RETURN count(a)")

    def count_redirects(self) -> int:
        return self._count("MATCH (r:Redirect) RETURN count(r)")

    def count_sections(self) -> int:
        return self._count("MATCH (s:Section) RETURN count(s)")

    def stats(self, top: int = 10) -> StoreStats:
        meta = self.meta()
        c = self._count
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
            incomplete_loads=[
                str(r[0])
                for r in self._run(
                    "MATCH (l:Load) WHERE l.status <> 'complete' AND l.status <> $lost "
                    "RETURN l.id ORDER BY l.id",
                    {"lost": LOST},
                )
            ],
            **self._vector_stats(),
            **self._fact_stats(),
        )

    def _vector_stats(self) -> dict[str, Any]:
        store = {"vector_store": "index" if self.vectors_in_index() else "graph"}
        index = self.vector_index()
        if index is None:
            return store
        return {**store, "vector_segments": len(index.segments), "deleted_vectors": index.deleted}

    def _fact_stats(self) -> dict[str, Any]:
        if not self.has_facts:
            return {}
        kinds = self._run(
            "MATCH (a:Article) WHERE a.is_stub = false RETURN a.kind, count(a) ORDER BY a.kind"
        )
        return {
            "facts": self._count("MATCH (f:Fact) RETURN count(f)"),
            "articles_with_facts": self._count(
                "MATCH (a:Article)-[:HAS_FACT]->(:Fact) RETURN count(DISTINCT a)"
            ),
            "kinds": {str(k or ""): int(n) for k, n in kinds},
        }

    @property
    def has_facts(self) -> bool:
        """Whether the graph has the infobox fact tables (schema 4; a reader may open a 3,
        whose questions are then answered from the text alone)."""
        known: bool | None = getattr(self, "_has_facts", None)
        if known is None:
            names = {str(r[0]) for r in self._run("CALL SHOW_TABLES() RETURN name")}
            known = "Fact" in names
            if getattr(self, "read_only", False):
                self._has_facts = known
        return known

    @property
    def facts_per_item(self) -> bool:
        """Whether the graph holds a ``Fact`` node an item (schemas 4 to 6), not one a
        fact (schema 7: :mod:`.fact_items`)."""
        known: bool | None = getattr(self, "_facts_per_item", None)
        if known is None:
            rows = self._run("CALL TABLE_INFO('Fact') RETURN name")
            known = any(r[0] == "position" for r in rows)
            if getattr(self, "read_only", False):
                self._facts_per_item = known
        return known

    def facts_of(self, titles: Sequence[str]) -> list[FactRow]:
        """The infobox facts of the articles ``titles`` (redirects not followed), each
        item a row, in the articles' order and then page order; [] on a schema-3 graph."""
        if not self.has_facts or not titles:
            return []
        out: list[FactRow] = []
        for title in dict.fromkeys(titles):  # a primary-key lookup each (see _keyed)
            out.extend(self._fact_rows(title, "of"))
        return out

    def facts_naming(self, titles: Sequence[str]) -> list[FactRow]:
        """The fact items whose link names one of ``titles`` (the other side of
        ``REFERS_TO``: "the country whose capital is Luanda"); [] on a schema-3 graph."""
        if not self.has_facts or not titles:
            return []
        out: list[FactRow] = []
        for title in dict.fromkeys(titles):
            out.extend(self._fact_rows(title, "naming"))
        return out

    def fact_keys_naming(self, titles: Sequence[str]) -> list[FactKey]:
        """:meth:`facts_naming` without the values: five columns of the Fact table read
        instead of fifteen, for a caller that reads only the facts it chooses by key."""
        if not self.has_facts or not titles:
            return []
        out: list[FactKey] = []
        for title in dict.fromkeys(titles):
            out.extend(self._fact_rows(title, "keys"))
        return out

    def _fact_rows(self, title: str, query: Literal["of", "naming", "keys"]) -> list[Any]:
        """The fact items of ``title`` (``of``), or those naming it (``naming``, or only
        their keys: ``keys``), sorted.

        Reading a fact's properties makes Kùzu 0.11.3 scan the chunks of the Fact table
        that hold the wanted rows, every column of them: ~0.3 ms a string column for an
        article's own facts, which lie together, and several times that for the facts
        naming a title, which lie all over the table (``MATCH … RETURN count(*)`` reads
        no property and costs ~1 ms). So the facts naming a title are counted first
        (many titles are named by none), and a read-only store remembers what it read:
        a reader serving questions meets the same countries and people again.
        """
        cache: dict[tuple[str, str], list[Any]] | None = getattr(self, "_fact_cache", None)
        key = (title, query)
        rows = cache.get(key) if cache is not None else None  # one get: see _article_rows
        if rows is not None:
            return rows
        per_item = self.facts_per_item
        if query != "of" and not self._pk(naming_count_query(), {"title": title})[0][0]:
            raw: list[list[Any]] = []
        else:
            raw = self._pk(fact_query(query, per_item), {"title": title})
        rows = items_of(raw, query, per_item, title)
        if cache is not None:
            if len(cache) >= _FACT_CACHE_MAX:
                cache.clear()
            cache[key] = rows
        return rows

    def article_kinds(self, titles: Sequence[str]) -> dict[str, str]:
        """The kind of each of ``titles`` that is an article ("" when unknown)."""
        if not self.has_facts or not titles:
            return {}
        return {t: row[3] for t, row in self._article_rows(titles).items()}

    def vector_search(self, embedding: Sequence[float], k: int) -> list[SectionHit]:
        """Nearest sections by cosine similarity, through the vector index beside the
        graph (:mod:`.vector_index`); by an exact scan of the graph's vectors when it
        has none (a graph of schema 4 opened read-only, or an index not built yet).
        Hits whose section left the graph are dropped."""
        index = self.vector_index()
        if index is not None:
            found: list[tuple[str, float]] = index.search(embedding, int(k))
        else:
            found = self._scanned_hits(embedding, int(k))
        rows = self.sections_by_ids([sid for sid, _ in found])
        return [dataclasses.replace(rows[sid], score=sim) for sid, sim in found if sid in rows]

    def _scanned_hits(self, embedding: Sequence[float], k: int) -> list[tuple[str, float]]:
        """(id, similarity) of the ``k`` vectors nearest ``embedding``, by a scan of every
        vector table (a scan is exact, and costs ~0.3 s a million vectors)."""
        if not self.vector_tables() or self.vectors_in_index():  # no copy in the graph
            return []
        warned = self.__dict__.setdefault("_scan_warned", [])
        if not warned and self.meta().get("embeddings", "complete") == "complete":
            warned.append(True)
            log.warning(
                "the graph has no vector index beside it: semantic search scans every "
                "vector; 'kg-agent reindex' builds the index"
            )
        params = {"q": [float(x) for x in embedding], "k": k}
        found: list[tuple[str, float]] = []
        for table in self.vector_tables():
            rows = self._run(
                f"MATCH (u:{table}) WITH u, array_cosine_similarity(u.embedding, "
                f"CAST($q, 'FLOAT[{int(self.dimension)}]')) AS sim "
                "RETURN u.id, sim ORDER BY sim DESC LIMIT $k",
                params,
            )
            found.extend((str(r[0]), float(r[1])) for r in rows)
        return sorted(found, key=lambda t: -t[1])[:k]

    def word_rarity(self, words: Sequence[str]) -> list[float]:
        """How rare each word is in the sections' text (1: no section writes it; see
        :meth:`TextIndex.rarity`); 0 for each without a text index."""
        index = self.text_index()
        if index is None:
            return [0.0] * len(words)
        return index.rarity(words)

    def fts_search(self, text: str, k: int) -> list[SectionHit]:
        """BM25 search over section headings and text (the graph's text index).

        Empty when the graph has no text index yet. Hits whose section is no longer
        in the graph (an index a moment behind a re-load) are dropped.
        """
        index = self.text_index()
        if index is None or k < 1:
            return []
        found = index.search_sections(text, k)
        rows = self.sections_by_ids([sid for sid, _ in found])
        return [dataclasses.replace(rows[sid], score=score) for sid, score in found if sid in rows]

    def text_search_within(self, text: str, titles: Sequence[str], k: int) -> list[SectionHit]:
        """BM25 over the sections of ``titles`` only (what ranks graph neighbours when
        a graph has no embeddings). Empty without a text index."""
        found = [(sid, score) for sid, _, score in self.text_hits_within(text, titles, k)]
        rows = self.sections_by_ids([sid for sid, _ in found])
        return [dataclasses.replace(rows[sid], score=score) for sid, score in found if sid in rows]

    def text_hits_within(
        self, text: str, titles: Sequence[str], k: int
    ) -> list[tuple[str, str, float]]:
        """:meth:`text_search_within` unread: (section id, its article, BM25 score), best
        first, for a caller that reads only the few that make its cut (each read is a
        primary-key lookup)."""
        index = self.text_index()
        wanted = list(dict.fromkeys(titles))
        if index is None or k < 1 or not wanted:
            return []
        # a section's id is its article's title and its number (:meth:`lead_sections`)
        return [
            (sid, sid.rsplit("::", 1)[0], score)
            for sid, score in index.search_sections_of(text, wanted, k)
        ]

    def lead_sections(self, titles: Sequence[str]) -> dict[str, SectionHit]:
        """The first section of each of ``titles`` that has one (title → section).

        A lead section's id is ``TITLE::0000`` (:mod:`kg_agent.store.section_ids`).
        """
        hits = self.sections_by_ids([lead_id(t) for t in titles])
        return {h.title: h for h in hits.values()}

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

    def resolve_title(self, title: str, *, with_text: bool = False) -> str | None:
        """Canonical article title for a title or a redirect alias (``with_text``: None
        when that article is a stub)."""
        rows = self._pk("MATCH (a:Article {title: $t}) RETURN a.title, a.is_stub", {"t": title})
        if not rows:
            rows = self._pk(
                "MATCH (r:Redirect {title: $t})-[:REDIRECTS_TO]->(a:Article) "
                "RETURN a.title, a.is_stub",
                {"t": title},
            )
        if not rows or (with_text and rows[0][1]):
            return None
        return str(rows[0][0])

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

    def link_neighbourhood(
        self, titles: Sequence[str], *, limit: int, per_title: int | None = None
    ) -> list[tuple[str, str, int]]:
        """Each ``LINKS_TO`` edge touching ``titles``, as (title, neighbour, count), once.

        Direction is dropped: the reranker's walk is undirected. ``LINKS_TO``
        already sums the sections' ``MENTIONS``, so it covers both. An edge between
        two of ``titles`` comes once, from the end that sorts first (a link each way
        is two edges). Neighbours come as node offsets that the article table turns
        into titles (see the module docstring): from the link table when the graph
        has one in step (strongest links first), else from Kùzu by primary key.
        ``limit`` bounds the rows read, shared among the titles (a guard for hub
        articles; which rows a read capped in Kùzu keeps is its scan order);
        ``per_title`` caps the rows of one title and direction. Sorted by count,
        strongest first.
        """
        wanted = list(dict.fromkeys(titles))
        if not wanted:
            return []
        per = max(1, -(-int(limit) // (2 * len(wanted))))  # each title and direction
        if per_title is not None:
            per = min(per, per_title)
        raw: list[tuple[str, int, int]] = []
        links = self.link_table()
        if links is not None:
            at = {t: row[2] for t, row in self._article_rows(wanted).items()}
            for t in wanted:
                if t in at:
                    for incoming in (False, True):
                        found = links.neighbours(at[t], incoming=incoming, k=per)
                        raw.extend((t, o, n) for o, n in found)
        else:
            for t in wanted:
                for query in (_OUT_OFFSETS, _IN_OFFSETS):
                    raw.extend(
                        (t, int(o), int(n or 0)) for o, n in self._pk(query, {"t": t, "k": per})
                    )
        raw = raw[: int(limit)]
        names = self._titles_at([o for _, o, _ in raw])
        inside = set(wanted)
        edges = []
        for (a, _, n), b in zip(raw, names, strict=True):
            if b is None or (b in inside and b < a):  # seen from both ends: keep one
                continue
            edges.append((a, b, n))
        edges.sort(key=lambda e: (-e[2], e[0], e[1]))
        return edges

    def _titles_at(self, offsets: Sequence[int]) -> list[str | None]:
        """Article titles at node offsets: from the article table, else (a table older
        than the graph, a moment after a load) from Kùzu."""
        table = self.article_table()
        names: list[str | None] = (
            table.titles(offsets) if table is not None else [None] * len(offsets)
        )
        missing = sorted({o for o, n in zip(offsets, names, strict=True) if n is None})
        if missing:
            found = {
                int(o): str(t)
                for o, t in self._run(
                    "MATCH (a:Article) WHERE offset(id(a)) IN $o RETURN offset(id(a)), a.title",
                    {"o": missing},
                )
            }
            names = [
                n if n is not None else found.get(o) for o, n in zip(offsets, names, strict=True)
            ]
        return names

    def article_pageranks(self, titles: Sequence[str]) -> dict[str, float]:
        """Global PageRank of each of ``titles`` found in the graph (stubs have 0)."""
        return {t: row[0] for t, row in self._article_rows(titles).items()}

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

    def search_article_titles(
        self, text: str, k: int = 5, *, with_text: bool = False
    ) -> list[tuple[str, float]]:
        """Articles whose titles match ``text`` (BM25 over title words), best first.

        Entity lookup for names that are neither a title nor a redirect. Ties
        prefer real articles over stubs, then higher PageRank, then the title;
        ``with_text`` leaves stubs out. Returns nothing when the graph has no text
        index.
        """
        index = self.text_index()
        if index is None or k < 1:
            return []
        found = index.search_titles(text, max(4 * k, 20))
        info: dict[str, tuple[bool, float]] = {}
        for t, _ in found:
            for title, stub, pr in self._pk(
                "MATCH (a:Article {title: $t}) RETURN a.title, a.is_stub, a.pagerank", {"t": t}
            ):
                info[str(title)] = (bool(stub), float(pr or 0.0))
        ranked = [(t, sc) for t, sc in found if t in info and not (with_text and info[t][0])]
        ranked.sort(key=lambda ts: (-round(ts[1], 6), info[ts[0]][0], -info[ts[0]][1], ts[0]))
        return ranked[:k]

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
        if self.vectors_in_index():  # the index's copy, in the graph's order (by id)
            index = self.vector_index()
            for chunk_ids, vecs in index.vectors() if index is not None else ():
                ids.extend(str(i) for i in chunk_ids.to_pylist())
                blocks.append(vecs)
            matrix = np.vstack(blocks) if blocks else np.zeros((0, dim), dtype=np.float32)
            order = sorted(range(len(ids)), key=ids.__getitem__)
            return [ids[i] for i in order], matrix[order]
        for table in self.vector_tables():
            page, offset = 20000, 0
            while True:
                rows = self._run(
                    f"MATCH (v:{table}) RETURN v.id, v.embedding ORDER BY v.id SKIP $o LIMIT $n",
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
        (titles,) = self._columns("MATCH (a:Article) WHERE NOT a.is_stub RETURN a.title")
        redirects, targets = self._columns(
            "MATCH (r:Redirect)-[:REDIRECTS_TO]->(a:Article) WHERE NOT a.is_stub "
            "RETURN r.title, a.title"
        )
        return [str(t) for t in titles], [
            (str(r), str(t)) for r, t in zip(redirects, targets, strict=True)
        ]

    def sections_of_articles(self, titles: Sequence[str]) -> list[tuple[SectionHit, list[float]]]:
        """Every section of the given articles with its embedding (for scoring them).

        Section ids are ``TITLE::0000`` to ``TITLE::{n_sections - 1}``, so each section
        and its vector is a primary-key lookup.
        """
        out: list[tuple[SectionHit, list[float]]] = []
        in_index = self.vectors_in_index()
        for title, (pr, n, _offset, _kind) in self._article_rows(titles).items():
            for i in range(n):
                sid = section_id(title, i)
                rows = self._pk(_SECTION_BY_ID, {"i": sid})
                if not rows:
                    continue
                _, _, heading, path, text = rows[0]
                vec: list[list[Any]] = []
                for table in () if in_index else self.vector_tables():
                    vec = vec or self._pk(
                        f"MATCH (v:{table} {{id: $i}}) RETURN v.embedding", {"i": sid}
                    )
                hit = SectionHit(
                    sid, title, str(heading or ""), str(path or ""), str(text or ""), 0.0, pr
                )
                out.append((hit, list(vec[0][0]) if vec and vec[0][0] is not None else []))
        if in_index and out:  # the index holds the only copy: one lookup for them all
            index = self.vector_index()
            found = index.vectors_of([h.section_id for h, _ in out]) if index is not None else {}
            out = [
                (h, found[h.section_id].tolist() if h.section_id in found else []) for h, _ in out
            ]
        return out

    def sections_by_ids(self, ids: Sequence[str]) -> dict[str, SectionHit]:
        """Section rows (score 0) for the given ids, keyed by id (primary-key lookups)."""
        rows = self._sections(ids)
        pr = self.article_pageranks([str(r[1]) for r in rows.values()])
        return {
            sid: SectionHit(
                sid,
                str(r[1]),
                str(r[2] or ""),
                str(r[3] or ""),
                str(r[4] or ""),
                0.0,
                pr.get(str(r[1]), 0.0),
            )
            for sid, r in rows.items()
        }

    def mention_sections(self, source: str, targets: Sequence[str]) -> list[tuple[str, str, int]]:
        """(target, section id, section ordinal) for each section of ``source`` that
        mentions one of ``targets`` (a ``MENTIONS`` edge), the lead first: where the
        source's text says what links it to each."""
        if not targets:
            return []
        rows = self._run(
            "MATCH (a:Article {title: $s})-[:HAS_SECTION]->(x:Section)-[:MENTIONS]->(b:Article) "
            "WHERE b.title IN $t RETURN b.title, x.id, x.ordinal ORDER BY x.ordinal, x.id",
            {"s": source, "t": list(dict.fromkeys(targets))},
        )
        return [(str(t), str(sid), int(o or 0)) for t, sid, o in rows]

    def shared_links(self, a: str, b: str, k: int = 50) -> list[tuple[str, int, int, int]]:
        """Articles linked with both ``a`` and ``b`` (either direction), as (title,
        links with ``a``, links with ``b``, articles linking to it), most linked first:
        what two articles have in common in the graph, and how common it is."""
        rows = self._run(
            "MATCH (x:Article {title: $a})-[r1:LINKS_TO]-(z:Article)-[r2:LINKS_TO]-"
            "(y:Article {title: $b}) WHERE z.title <> $a AND z.title <> $b "
            "RETURN z.title, sum(r1.count), sum(r2.count)",
            {"a": a, "b": b},
        )
        found = [(str(z), int(c1 or 0), int(c2 or 0)) for z, c1, c2 in rows]
        found.sort(key=lambda r: (-(r[1] * r[2]), r[0]))
        found = found[:k]
        linking = dict(
            self._run(
                "MATCH (w:Article)-[:LINKS_TO]->(z:Article) WHERE z.title IN $z "
                "RETURN z.title, count(*)",
                {"z": [z for z, _, _ in found]},
            )
        )
        return [(z, c1, c2, int(linking.get(z, 0))) for z, c1, c2 in found]

    def categories_of(self, title: str) -> list[str]:
        rows = self._run(
            "MATCH (a:Article {title: $t})-[:IN_CATEGORY]->(c:Category) RETURN c.name "
            "ORDER BY c.name",
            {"t": title},
        )
        return [str(r[0]) for r in rows]

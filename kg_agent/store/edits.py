"""Edits an update or a delete makes to a graph: articles removed, kept as stubs, orphans
swept, and what the planner reads to compare a newer dump with the graph.

Every statement takes its titles as a parameter (never interpolated) and runs in the
caller's transaction: :func:`kg_agent.ingest.write.write_graph` wraps a whole update in
one, in a child process that dies rather than rolls back (see that module).

What makes the result equal to a fresh load of the newer dump:

* a deleted article that something still links to (a written link, a written
  mention, a redirect) stays as a **stub**, as a fresh load would create it for
  that red link; one nothing links to goes, with its edges;
* **inferred** mention edges (passage corpora) are only ever drawn to articles with
  text, so they go when their target becomes a stub;
* a stub or a category that lost its last edge goes (a fresh load would not have it).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Any

from kg_agent.store.graph import GraphStore

__all__ = ["GraphEdits"]

_CHUNK = 5000


def _chunks(items: Sequence[str]) -> Iterator[list[str]]:
    unique = list(dict.fromkeys(items))
    for i in range(0, len(unique), _CHUNK):
        yield unique[i : i + _CHUNK]


class GraphEdits:
    """The update's and delete's statements over one open (writable) store."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store

    def _titles(self, cypher: str, items: Sequence[str], table: str = "Article") -> set[str]:
        """The first column of ``cypher`` (written for one ``$key``) over ``items``."""
        return {str(r[0]) for r in self.store._keys(cypher, items, table=table)}

    def _each(self, cypher: str, items: Sequence[str], table: str = "Article") -> None:
        self.store._keys(cypher, items, table=table)

    # ------------------------------------------------------------------ reads
    def export_articles(self, path: str | os.PathLike[str]) -> None:
        """Every article's title, page id, revision, digest and stub flag, as parquet."""
        self.store.export_parquet(
            "MATCH (a:Article) RETURN a.title AS title, a.page_id AS page_id, "
            "a.revision AS revision, a.digest AS digest, a.is_stub AS is_stub",
            path,
        )

    def articles_named(self, titles: Sequence[str]) -> list[list[Any]]:
        """:meth:`export_articles`' rows of ``titles`` (those the graph has): what a
        partial export's diff reads, by key, instead of every article."""
        return self.store._keys(
            "MATCH (a:Article {title: $key}) RETURN a.title, a.page_id, a.revision, "
            "a.digest, a.is_stub",
            titles,
        )

    def articles_with_ids(self, page_ids: Sequence[int]) -> list[list[Any]]:
        """:meth:`export_articles`' rows of the articles with these page ids. One scan of
        the page id column (not a key), in one statement: a partial export names few."""
        if not page_ids:
            return []
        return self.store._run(
            "MATCH (a:Article) WHERE a.page_id IN $ids RETURN a.title, a.page_id, "
            "a.revision, a.digest, a.is_stub",
            {"ids": list(page_ids)},
        )

    def export_redirects(self, path: str | os.PathLike[str]) -> None:
        """Every redirect and the article it leads to, as parquet."""
        self.store.export_parquet(
            "MATCH (r:Redirect)-[:REDIRECTS_TO]->(a:Article) RETURN r.title AS title, "
            "a.title AS target",
            path,
        )

    def section_vectors(self, titles: Sequence[str]) -> Iterator[list[Any]]:
        """(article, heading path, text, vector, section id, text hash) of the sections
        of ``titles`` that have a vector: what an update reuses for a section whose text
        did not change (and leaves in place when its id did not change either)."""
        for chunk in _chunks(titles):
            yield from self.store._keys(
                "MATCH (a:Article {title: $key})-[:HAS_SECTION]->(s:Section) "
                "MATCH (v:SectionVector {id: s.id}) "
                "RETURN s.article, s.heading_path, s.text, v.embedding, v.id, v.text_hash",
                chunk,
                table="HAS_SECTION",
            )

    def mentioning_articles(self, titles: Sequence[str]) -> set[str]:
        """Articles whose sections have an inferred mention of one of ``titles``."""
        return self._titles(
            "MATCH (x:Section)-[m:MENTIONS]->(a:Article {title: $key}) "
            "WHERE m.inferred = true RETURN DISTINCT x.article",
            titles,
            table="MENTIONS",
        )

    def linking_articles(self, titles: Sequence[str]) -> set[str]:
        """Articles with a link to one of ``titles`` (a link through a redirect counts
        as one to the redirect's target: the graph keeps no redirect on an edge)."""
        return self._titles(
            "MATCH (x:Article)-[:LINKS_TO]->(a:Article {title: $key}) RETURN DISTINCT x.title",
            titles,
            table="LINKS_TO",
        )

    def existing(self, titles: Sequence[str]) -> set[str]:
        """Which of ``titles`` are articles with text (not stubs)."""
        return self._titles(
            "MATCH (a:Article {title: $key}) WHERE a.is_stub = false RETURN a.title",
            titles,
        )

    def stubs_linked_from(self, titles: Sequence[str]) -> set[str]:
        """Stubs that the given articles (by a link or a mention) link to.

        Their links are enough: a mention of a section is written from the same link
        rows as its article's link, so what a section mentions, its article links to
        (``resolve_links``), and no edit deletes one without the other."""
        return self._titles(
            "MATCH (a:Article {title: $key})-[:LINKS_TO]->(b:Article) "
            "WHERE b.is_stub = true RETURN DISTINCT b.title",
            titles,
            "LINKS_TO",
        )

    def stubs_redirected_from(self, redirects: Sequence[str]) -> set[str]:
        return self._titles(
            "MATCH (r:Redirect {title: $key})-[:REDIRECTS_TO]->(b:Article) "
            "WHERE b.is_stub = true RETURN b.title",
            redirects,
            "REDIRECTS_TO",
        )

    def categories_of(self, titles: Sequence[str]) -> set[str]:
        return self._titles(
            "MATCH (a:Article {title: $key})-[:IN_CATEGORY]->(c:Category) RETURN DISTINCT c.name",
            titles,
            "IN_CATEGORY",
        )

    def redirects_into(self, titles: Sequence[str]) -> set[str]:
        return self._titles(
            "MATCH (r:Redirect)-[:REDIRECTS_TO]->(a:Article {title: $key}) RETURN r.title",
            titles,
            table="REDIRECTS_TO",
        )

    def still_linked(self, titles: Sequence[str]) -> set[str]:
        """Which of ``titles`` something written links to: a link, a mention, a redirect."""
        return self._linked(titles, written=True)

    def unlinked_stubs(self, titles: Sequence[str]) -> set[str]:
        """Which of ``titles`` are stubs with no edge into them left."""
        stubs = self._titles(
            "MATCH (a:Article {title: $key}) WHERE a.is_stub = true RETURN a.title", titles
        )
        return stubs - self._linked(sorted(stubs), written=False)

    def _linked(self, titles: Sequence[str], *, written: bool) -> set[str]:
        """Which of ``titles`` have an edge into them (``written``: not an inferred one).

        Three statements, each from the article backwards: Kùzu 0.11.3 plans
        ``WHERE EXISTS { MATCH (:Article)-[:LINKS_TO]->(a) }`` as a scan of every link
        (0.4 s an article at 100k articles), a backward match as a lookup (~1 ms).
        """
        links = "WHERE r.inferred = false " if written else ""
        mentions = "WHERE m.inferred = false " if written else ""
        out = self._titles(
            f"MATCH (:Article)-[r:LINKS_TO]->(a:Article {{title: $key}}) {links}"
            "RETURN DISTINCT a.title",
            titles,
            "LINKS_TO",
        )
        rest = [t for t in titles if t not in out]
        out |= self._titles(
            f"MATCH (:Section)-[m:MENTIONS]->(a:Article {{title: $key}}) {mentions}"
            "RETURN DISTINCT a.title",
            rest,
            "MENTIONS",
        )
        rest = [t for t in rest if t not in out]
        return out | self._titles(
            "MATCH (:Redirect)-[:REDIRECTS_TO]->(a:Article {title: $key}) RETURN DISTINCT a.title",
            rest,
            "REDIRECTS_TO",
        )

    # ------------------------------------------------------------------ writes
    def make_stubs(self, titles: Sequence[str]) -> list[list[int]]:
        """Articles whose text went but that are still linked: stubs, as a fresh load
        makes them (no inferred mentions: those only ever point at text). Returns the
        inferred links it deleted, as (source, target) node offsets: what the link
        table loses besides the links of the articles the update wrote."""
        self._each(
            "MATCH (:Section)-[m:MENTIONS]->(a:Article {title: $key}) "
            "WHERE m.inferred = true DELETE m",
            titles,
            "MENTIONS",
        )
        unlinked = self.store._keys(
            "MATCH (x:Article)-[r:LINKS_TO]->(a:Article {title: $key}) "
            "WHERE r.inferred = true DELETE r RETURN offset(id(x)), offset(id(a))",
            titles,
            table="LINKS_TO",
        )
        self._each(
            "MATCH (a:Article {title: $key}) SET a.is_stub = true, "
            "a.page_id = NULL, a.is_disambiguation = false, a.pagerank = 0.0, "
            "a.n_sections = 0, a.word_count = 0, a.revision = NULL, a.digest = NULL",
            titles,
        )
        return [[int(x), int(a)] for x, a in unlinked]

    def delete_articles(self, titles: Sequence[str]) -> None:
        """Articles and every edge they have (their content must be cleared first)."""
        self._each("MATCH (a:Article {title: $key}) DETACH DELETE a", titles)

    def delete_unused_categories(self, names: Sequence[str]) -> int:
        """The categories among ``names`` no article is in any more, deleted (no
        ``NOT EXISTS`` subquery: Kùzu scans every edge for one)."""
        have = self._titles("MATCH (c:Category {name: $key}) RETURN c.name", names, "Category")
        used = self._titles(
            "MATCH (:Article)-[:IN_CATEGORY]->(c:Category {name: $key}) RETURN DISTINCT c.name",
            sorted(have),
            "IN_CATEGORY",
        )
        gone = sorted(have - used)
        self._each("MATCH (c:Category {name: $key}) DELETE c", gone, table="Category")
        return len(gone)

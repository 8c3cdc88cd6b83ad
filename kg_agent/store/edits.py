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
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kg_agent.store.article_table import ArticleTable
from kg_agent.store.graph import GraphStore

__all__ = ["ArticleContent", "GraphEdits"]

_CHUNK = 5000


def _chunks(items: Sequence[str]) -> Iterator[list[str]]:
    unique = list(dict.fromkeys(items))
    for i in range(0, len(unique), _CHUNK):
        yield unique[i : i + _CHUNK]


#: A section as the graph holds it, less its text (whose hash is compared): id, article,
#: heading, heading path, level, ordinal, part, word count, text hash.
SECTION_FIELDS = (
    "id",
    "article",
    "heading",
    "heading_path",
    "level",
    "ordinal",
    "part",
    "word_count",
    "text_hash",
)


@dataclass(slots=True)
class ArticleContent:
    """What some articles hold in the graph: the rows an update compares with what it
    writes (:mod:`kg_agent.ingest.replace`), so that only the rows that changed go."""

    #: section id → its :data:`SECTION_FIELDS`
    sections: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    #: section id → its mentions, (target, count, inferred), sorted
    mentions: dict[str, list[tuple[Any, ...]]] = field(default_factory=dict)
    #: (source, target) → (count, inferred)
    links: dict[tuple[str, str], tuple[Any, ...]] = field(default_factory=dict)
    #: (article, category)
    categories: set[tuple[str, str]] = field(default_factory=set)


class _Stale(Exception):
    """An article table that does not describe the graph (see ``article_content``)."""


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
        tables = self.store.vector_tables()
        if not tables:
            return
        # the sections by their articles, then each one's vector by its id, a primary-key
        # lookup per table until one holds it (most are in the main one). Joined in one
        # statement, Kùzu builds its hash join on the vector table, every vector of the
        # graph as payload (0.50 s against 0.03 s without them for 110 titles at 10k
        # articles; 5.1 s of a 1% update at 100k on 2 CPU cores, 8.6 s on a GPU machine), growing
        # with the graph, and its memory too (2.3 GB of that update's 4.0 GB peak).
        lookups = [f"MATCH (v:{t} {{id: $key}}) RETURN v.embedding, v.text_hash" for t in tables]
        index = self.store.vector_index() if self.store.vectors_in_index() else None
        for chunk in _chunks(titles):
            rows = self.store._keys(
                "MATCH (a:Article {title: $key})-[:HAS_SECTION]->(s:Section) "
                "RETURN s.article, s.heading_path, s.text, s.id",
                chunk,
                table="HAS_SECTION",
            )
            held: list[list[Any]] = []
            for article, path, text, sid in rows:
                for lookup in lookups:
                    found = self.store._pk(lookup, {"key": sid})
                    if found:
                        held.append([article, path, text, found[0][0], sid, found[0][1]])
                        break
            if index is not None:  # the graph's column is NULL: the vectors from the index
                vectors = index.vectors_of([row[4] for row in held])
                held = [[*r[:3], vectors[r[4]], *r[4:]] for r in held if r[4] in vectors]
            yield from held

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

    def stubs_linked_from(
        self, titles: Sequence[str], articles: ArticleTable | None = None
    ) -> set[str]:
        """Stubs that the given articles (by a link or a mention) link to.

        Their links are enough: a mention of a section is written from the same link
        rows as its article's link, so what a section mentions, its article links to
        (``resolve_links``), and no edit deletes one without the other. With
        ``articles``, the article table in step with the graph, and a link table in step
        too, they are read from those two (slices of memory-mapped arrays), not by Kùzu,
        whose statement scans every link once the titles are more than a few."""
        links = self.store.link_table() if articles is not None else None
        if articles is not None and links is not None:
            targets = np.unique(links.out_neighbours(articles.offsets(list(titles))))
            targets = targets[targets < articles.size]
            found = articles.titles(targets[articles.stubs(targets)])
            return {t for t in found if t is not None}
        return self._titles(
            "MATCH (a:Article {title: $key})-[:LINKS_TO]->(b:Article) "
            "WHERE b.is_stub = true RETURN DISTINCT b.title",
            titles,
            "LINKS_TO",
        )

    def stubs_referred_from(self, titles: Sequence[str]) -> set[str]:
        """Stubs that the given articles' infobox facts name (a fact's link makes a
        stub as a link does, also where the text does not link it: ``{{flag|X}}``)."""
        if not self.store.has_facts:
            return set()
        return self._titles(
            "MATCH (a:Article {title: $key})-[:HAS_FACT]->(:Fact)-[:REFERS_TO]->(b:Article) "
            "WHERE b.is_stub = true RETURN DISTINCT b.title",
            titles,
            "HAS_FACT",
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
        """Which of ``titles`` something written links to: a link, a mention, a redirect,
        an infobox fact."""
        return self._linked(titles, written=True)

    def unlinked_stubs(self, titles: Sequence[str]) -> set[str]:
        """Which of ``titles`` are stubs with no edge into them left."""
        stubs = self._titles(
            "MATCH (a:Article {title: $key}) WHERE a.is_stub = true RETURN a.title", titles
        )
        return stubs - self._linked(sorted(stubs), written=False)

    def _linked(self, titles: Sequence[str], *, written: bool) -> set[str]:
        """Which of ``titles`` have an edge into them (``written``: not an inferred one).

        Up to four statements, each from the article backwards: Kùzu 0.11.3 plans
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
        out |= self._titles(
            "MATCH (:Redirect)-[:REDIRECTS_TO]->(a:Article {title: $key}) RETURN DISTINCT a.title",
            rest,
            "REDIRECTS_TO",
        )
        rest = [t for t in rest if t not in out]
        if not rest or not self.store.has_facts:
            return out
        return out | self._titles(
            "MATCH (:Fact)-[:REFERS_TO]->(a:Article {title: $key}) RETURN DISTINCT a.title",
            rest,
            "REFERS_TO",
        )

    def article_content(
        self,
        titles: Sequence[str],
        titles_at: Callable[[list[int]], list[str | None]] | None = None,
    ) -> ArticleContent:
        """The sections (less their text), mentions, links and categories of ``titles``.

        ``titles_at``: node offset → title of the articles the graph held before this
        write (its article table). The neighbours' titles are then read there, not by
        Kùzu 0.11.3, which reads a neighbour's property by scanning the chunk that holds
        it: the links of 190 articles at 100k articles take 0.17 s, not 1.7 s, and their
        sections' mentions 0.5 s, not 2.4 s. A table that does not name an offset as the
        graph does gives way to the titles read from the graph."""
        if titles_at is not None:
            try:
                return self._content_by_offset(titles, titles_at)
            except _Stale:
                pass
        return self._content_by_title(titles)

    def _sections(self, titles: Sequence[str], out: ArticleContent) -> dict[int, str]:
        """Fill ``out.sections``; returns section node offset → id."""
        fields = ", ".join(f"s.{f}" for f in SECTION_FIELDS)
        at: dict[int, str] = {}
        for row in self.store._keys(
            "MATCH (a:Article {title: $key})-[:HAS_SECTION]->(s:Section) "
            f"RETURN offset(id(s)), {fields}",
            titles,
            table="HAS_SECTION",
        ):
            sid = str(row[1])
            out.sections[sid] = tuple(row[1:])
            out.mentions[sid] = []
            at[int(row[0])] = sid
        return at

    def _categories(self, titles: Sequence[str], out: ArticleContent) -> None:
        for article, name in self.store._keys(
            "MATCH (a:Article {title: $key})-[:IN_CATEGORY]->(c:Category) RETURN a.title, c.name",
            titles,
            table="IN_CATEGORY",
        ):
            out.categories.add((str(article), str(name)))

    def _content_by_offset(
        self, titles: Sequence[str], titles_at: Callable[[list[int]], list[str | None]]
    ) -> ArticleContent:
        out = ArticleContent()
        section_at = self._sections(titles, out)
        mentions = self.store._keys(
            "MATCH (a:Article {title: $key})-[:HAS_SECTION]->(s:Section)-[m:MENTIONS]->"
            "(b:Article) RETURN offset(id(s)), offset(id(b)), m.count, m.inferred",
            titles,
            table="MENTIONS",
        )
        targets = titles_at([int(r[1]) for r in mentions])
        for (s, _, count, inferred), target in zip(mentions, targets, strict=True):
            if target is None or int(s) not in section_at:
                raise _Stale
            out.mentions[section_at[int(s)]].append((target, count, inferred))
        links = self.store._keys(
            "MATCH (a:Article {title: $key})-[r:LINKS_TO]->(b:Article) "
            "RETURN a.title, offset(id(a)), offset(id(b)), r.count, r.inferred",
            titles,
            table="LINKS_TO",
        )
        sources = titles_at([int(r[1]) for r in links])
        targets = titles_at([int(r[2]) for r in links])
        for row, source, target in zip(links, sources, targets, strict=True):
            if source is None or source != row[0] or target is None:  # not this graph's table
                raise _Stale
            out.links[(source, target)] = (row[3], row[4])
        self._categories(titles, out)
        for found in out.mentions.values():
            found.sort(key=repr)
        return out

    def _content_by_title(self, titles: Sequence[str]) -> ArticleContent:
        out = ArticleContent()
        self._sections(titles, out)
        for sid, target, count, inferred in self.store._keys(
            "MATCH (a:Article {title: $key})-[:HAS_SECTION]->(s:Section)-[m:MENTIONS]->"
            "(b:Article) RETURN s.id, b.title, m.count, m.inferred",
            titles,
            table="MENTIONS",
        ):
            out.mentions[str(sid)].append((target, count, inferred))
        for source, target, count, inferred in self.store._keys(
            "MATCH (a:Article {title: $key})-[r:LINKS_TO]->(b:Article) "
            "RETURN a.title, b.title, r.count, r.inferred",
            titles,
            table="LINKS_TO",
        ):
            out.links[(str(source), str(target))] = (count, inferred)
        self._categories(titles, out)
        for found in out.mentions.values():
            found.sort(key=repr)
        return out

    # ------------------------------------------------------------------ writes
    def delete_content(
        self,
        sections: Sequence[str],
        links: Iterable[tuple[str, str]],
        categories: Iterable[tuple[str, str]],
    ) -> None:
        """Sections (with their edges), links and category edges, each named by key."""
        self.store.delete_nodes("Section", sections)
        self.store._keyed(
            "MATCH (a:Article {title: $a})-[r:LINKS_TO]->(b:Article {title: $b}) DELETE r",
            [{"a": a, "b": b} for a, b in links],
            table="LINKS_TO",
        )
        self.store._keyed(
            "MATCH (a:Article {title: $a})-[r:IN_CATEGORY]->(c:Category {name: $b}) DELETE r",
            [{"a": a, "b": b} for a, b in categories],
            table="IN_CATEGORY",
        )

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
            "a.n_sections = 0, a.word_count = 0, a.revision = NULL, a.digest = NULL, "
            "a.kind = ''",
            titles,
        )
        return [[int(x), int(a)] for x, a in unlinked]

    def delete_articles(self, titles: Sequence[str]) -> None:
        """Articles and every edge they have (their content must be cleared first)."""
        self.store.delete_nodes("Article", titles)

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

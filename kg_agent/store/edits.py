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

    def _titles(self, cypher: str, items: Sequence[str]) -> set[str]:
        out: set[str] = set()
        for chunk in _chunks(items):
            out.update(str(r[0]) for r in self.store._run(cypher, {"t": chunk}))
        return out

    def _each(self, cypher: str, items: Sequence[str]) -> None:
        for chunk in _chunks(items):
            self.store._run(cypher, {"t": chunk})

    # ------------------------------------------------------------------ reads
    def export_articles(self, path: str | os.PathLike[str]) -> None:
        """Every article's title, page id, revision, digest and stub flag, as parquet."""
        self.store.export_parquet(
            "MATCH (a:Article) RETURN a.title AS title, a.page_id AS page_id, "
            "a.revision AS revision, a.digest AS digest, a.is_stub AS is_stub",
            path,
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
            yield from self.store._run(
                "UNWIND $t AS t MATCH (a:Article {title: t})-[:HAS_SECTION]->(s:Section) "
                "MATCH (v:SectionVector {id: s.id}) "
                "RETURN s.article, s.heading_path, s.text, v.embedding, v.id, v.text_hash",
                {"t": chunk},
            )

    def mentioning_articles(self, titles: Sequence[str]) -> set[str]:
        """Articles whose sections have an inferred mention of one of ``titles``."""
        return self._titles(
            "UNWIND $t AS t MATCH (x:Section)-[m:MENTIONS]->(a:Article {title: t}) "
            "WHERE m.inferred = true RETURN DISTINCT x.article",
            titles,
        )

    def linking_articles(self, titles: Sequence[str]) -> set[str]:
        """Articles with a link to one of ``titles`` (a link through a redirect counts
        as one to the redirect's target: the graph keeps no redirect on an edge)."""
        return self._titles(
            "UNWIND $t AS t MATCH (x:Article)-[:LINKS_TO]->(a:Article {title: t}) "
            "RETURN DISTINCT x.title",
            titles,
        )

    def existing(self, titles: Sequence[str]) -> set[str]:
        """Which of ``titles`` are articles with text (not stubs)."""
        return self._titles(
            "UNWIND $t AS t MATCH (a:Article {title: t}) WHERE a.is_stub = false RETURN a.title",
            titles,
        )

    def stubs_linked_from(self, titles: Sequence[str]) -> set[str]:
        """Stubs that the given articles (by a link or a mention) link to."""
        return self._titles(
            "UNWIND $t AS t MATCH (a:Article {title: t})-[:LINKS_TO]->(b:Article) "
            "WHERE b.is_stub = true RETURN DISTINCT b.title",
            titles,
        ) | self._titles(
            "UNWIND $t AS t MATCH (a:Article {title: t})-[:HAS_SECTION]->(:Section)"
            "-[:MENTIONS]->(b:Article) WHERE b.is_stub = true RETURN DISTINCT b.title",
            titles,
        )

    def stubs_redirected_from(self, redirects: Sequence[str]) -> set[str]:
        return self._titles(
            "UNWIND $t AS t MATCH (r:Redirect {title: t})-[:REDIRECTS_TO]->(b:Article) "
            "WHERE b.is_stub = true RETURN b.title",
            redirects,
        )

    def categories_of(self, titles: Sequence[str]) -> set[str]:
        return self._titles(
            "UNWIND $t AS t MATCH (a:Article {title: t})-[:IN_CATEGORY]->(c:Category) "
            "RETURN DISTINCT c.name",
            titles,
        )

    def redirects_into(self, titles: Sequence[str]) -> set[str]:
        return self._titles(
            "UNWIND $t AS t MATCH (r:Redirect)-[:REDIRECTS_TO]->(a:Article {title: t}) "
            "RETURN r.title",
            titles,
        )

    def still_linked(self, titles: Sequence[str]) -> set[str]:
        """Which of ``titles`` something written links to: a link, a mention, a redirect."""
        return self._titles(
            "UNWIND $t AS t MATCH (a:Article {title: t}) "
            "WHERE EXISTS { MATCH (:Article)-[r:LINKS_TO]->(a) WHERE r.inferred = false } "
            "OR EXISTS { MATCH (:Section)-[m:MENTIONS]->(a) WHERE m.inferred = false } "
            "OR EXISTS { MATCH (:Redirect)-[:REDIRECTS_TO]->(a) } RETURN a.title",
            titles,
        )

    def unlinked_stubs(self, titles: Sequence[str]) -> set[str]:
        """Which of ``titles`` are stubs with no edge into them left."""
        return self._titles(
            "UNWIND $t AS t MATCH (a:Article {title: t}) WHERE a.is_stub = true "
            "AND NOT EXISTS { MATCH (:Article)-[:LINKS_TO]->(a) } "
            "AND NOT EXISTS { MATCH (:Section)-[:MENTIONS]->(a) } "
            "AND NOT EXISTS { MATCH (:Redirect)-[:REDIRECTS_TO]->(a) } RETURN a.title",
            titles,
        )

    # ------------------------------------------------------------------ writes
    def make_stubs(self, titles: Sequence[str]) -> None:
        """Articles whose text went but that are still linked: stubs, as a fresh load
        makes them (no inferred mentions: those only ever point at text)."""
        self._each(
            "UNWIND $t AS t MATCH (:Section)-[m:MENTIONS]->(a:Article {title: t}) "
            "WHERE m.inferred = true DELETE m",
            titles,
        )
        self._each(
            "UNWIND $t AS t MATCH (:Article)-[r:LINKS_TO]->(a:Article {title: t}) "
            "WHERE r.inferred = true DELETE r",
            titles,
        )
        self._each(
            "UNWIND $t AS t MATCH (a:Article {title: t}) SET a.is_stub = true, "
            "a.page_id = NULL, a.is_disambiguation = false, a.pagerank = 0.0, "
            "a.n_sections = 0, a.word_count = 0, a.revision = NULL, a.digest = NULL",
            titles,
        )

    def delete_articles(self, titles: Sequence[str]) -> None:
        """Articles and every edge they have (their content must be cleared first)."""
        self._each("UNWIND $t AS t MATCH (a:Article {title: t}) DETACH DELETE a", titles)

    def delete_unused_categories(self, names: Sequence[str]) -> int:
        gone = self._titles(
            "UNWIND $t AS t MATCH (c:Category {name: t}) "
            "WHERE NOT EXISTS { MATCH (:Article)-[:IN_CATEGORY]->(c) } RETURN c.name",
            names,
        )
        self._each("UNWIND $t AS t MATCH (c:Category {name: t}) DELETE c", sorted(gone))
        return len(gone)

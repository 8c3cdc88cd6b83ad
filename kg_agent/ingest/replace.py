"""Rewrite an article by its differences: rows it still has stay in the graph.

An update rewrites every article that changed. Deleting all of its sections, links and
category edges and copying them again leaves the graph as a fresh load would, but each
deleted edge costs the writer's commit dearly: Kùzu 0.11.3's checkpoint rewrites the
storage of the relationship table the edge was in, and the more edges the table holds,
the more it rewrites. Measured on graphs of 0.1, 0.3 and 1M articles with ~39 links
each (``scripts/bench_checkpoint.py`` at ``e84b41d``; docs/notes/updates.md): the commit
after deleting every link of 100 articles took 2.2, 4.4 and 15.7 s; after inserting 100
links, 0.4, 0.8 and 2.3 s.

Most edits touch a part of an article, not all of it. So the rows of a rewritten article are
compared with the graph's: a section whose fields and text hash are the same and whose
mentions are the same stays, with its edges; so does a link with the same count and
flag, and a category edge. Only the rest is deleted, and only rows the graph lacks are
copied. The result is the same graph (the update tests compare it with a fresh load).

The keys of what stays are held until the copy, as Arrow arrays: a rewrite of more than
:data:`MAX_ARTICLES` articles (a forced re-load of a whole dump) deletes and copies
everything instead, as every storage region is rewritten then anyway.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from kg_agent.store.edits import SECTION_FIELDS, ArticleContent

__all__ = ["MAX_ARTICLES", "StagedRows", "Unchanged"]

#: Above this many rewritten articles in one write, every row is rewritten.
MAX_ARTICLES = 200_000

_EDGE = ("from", "to", "count", "inferred")
_SEP = "\x1f"  # joins a pair's two titles into one key (no title holds a control char)


class StagedRows:
    """The rows a write copies for some articles: their sections (less the text),
    mentions, links and category edges, read from the stage's resolved files once."""

    def __init__(self, files: dict[str, list[Path]], titles: Sequence[str]) -> None:
        want = pa.array(sorted(set(titles)), pa.string())
        self.sections = _read(files.get("sections", []), SECTION_FIELDS, "article", want)
        ids = self.sections.column("id")
        self.mentions = _read(files.get("mentions", []), _EDGE, "from", ids)
        self.links = _read(files.get("links_to", []), _EDGE, "from", want)
        self.categories = _read(files.get("in_category", []), ("from", "to"), "from", want)

    def content(self, titles: Sequence[str]) -> ArticleContent:
        """The rows of ``titles``, in the form :meth:`GraphEdits.article_content` has."""
        want = pa.array(sorted(set(titles)), pa.string())
        out = ArticleContent()
        secs = self.sections.filter(pc.is_in(self.sections.column("article"), value_set=want))
        for row in zip(*(secs.column(f).to_pylist() for f in SECTION_FIELDS), strict=True):
            out.sections[str(row[0])] = tuple(row)
            out.mentions[str(row[0])] = []
        ment = self.mentions.filter(pc.is_in(self.mentions.column("from"), value_set=secs["id"]))
        for sid, target, count, inferred in _rows(ment, _EDGE):
            out.mentions[str(sid)].append((target, count, inferred))
        for found in out.mentions.values():
            found.sort(key=repr)
        links = self.links.filter(pc.is_in(self.links.column("from"), value_set=want))
        for source, target, count, inferred in _rows(links, _EDGE):
            out.links[(str(source), str(target))] = (count, inferred)
        cats = self.categories.filter(pc.is_in(self.categories.column("from"), value_set=want))
        out.categories = {(str(a), str(c)) for a, c in _rows(cats, ("from", "to"))}
        return out


class Unchanged:
    """Keys of the rows that stay: sections by id, links and category edges by pair."""

    def __init__(self) -> None:
        self._sections: list[pa.Array] = []
        self._links: list[pa.Array] = []
        self._categories: list[pa.Array] = []
        self._joined: dict[str, pa.Array] = {}  # by kind, once every row was noted
        self.rows = 0  # sections, mentions, links and category edges left in place

    def add(self, graph: ArticleContent, staged: ArticleContent) -> ArticleContent:
        """Note what ``staged`` repeats of ``graph``; returns what of ``graph`` goes."""
        self._joined.clear()
        sections = [
            sid
            for sid, row in staged.sections.items()
            if graph.sections.get(sid) == row and graph.mentions.get(sid) == staged.mentions[sid]
        ]
        links = [p for p, v in staged.links.items() if graph.links.get(p) == v]
        cats = sorted(staged.categories & graph.categories)
        self._sections.append(pa.array(sections, pa.string()))
        self._links.append(pa.array([_SEP.join(p) for p in links], pa.string()))
        self._categories.append(pa.array([_SEP.join(p) for p in cats], pa.string()))
        self.rows += len(sections) + sum(len(staged.mentions[s]) for s in sections)
        self.rows += len(links) + len(cats)
        stays, kept = set(sections), set(links)
        gone = ArticleContent()
        gone.sections = {s: r for s, r in graph.sections.items() if s not in stays}
        gone.links = {p: v for p, v in graph.links.items() if p not in kept}
        gone.categories = graph.categories - set(cats)
        return gone

    def _keys(self, kind: str) -> pa.Array:
        """The keys that stay for the rows of a stage file of ``kind`` (joined once)."""
        if kind not in self._joined:
            parts = {"sections": self._sections, "has_section": self._sections,
                     "mentions": self._sections, "links_to": self._links,
                     "in_category": self._categories}[kind]  # fmt: skip
            self._joined[kind] = pa.concat_arrays(parts) if parts else pa.array([], pa.string())
        return self._joined[kind]

    def new_rows(self, kind: str, path: Path, tmp: Path) -> Path | None:
        """``path``'s rows less those that stay (a filtered copy in ``tmp`` when some
        do; None when none is left)."""
        stay = self._keys(kind)
        if not len(stay):
            return path
        table = pq.read_table(path)
        if kind == "sections":
            key = table.column("id")
        elif kind == "has_section":
            key = table.column("to")
        elif kind == "mentions":
            key = table.column("from")
        else:
            key = pc.binary_join_element_wise(table.column("from"), table.column("to"), _SEP)
        if len(stay) > len(key):
            # Arrow hashes the value set at every call: hash the smaller side, the file's
            # keys, to keep the kept keys this file holds (3M kept keys, a 100k-row file:
            # 1.5 s a file before, 0.2 s now)
            own = key.combine_chunks() if isinstance(key, pa.ChunkedArray) else key
            stay = stay.filter(pc.is_in(stay, value_set=own))
        rest = table.filter(pc.invert(pc.is_in(key, value_set=stay)))
        if rest.num_rows == table.num_rows:
            return path
        if not rest.num_rows:
            return None
        out = tmp / f"new-{kind}-{path.name}"
        pq.write_table(rest, out)
        return out


def _read(files: list[Path], columns: Sequence[str], key: str, want: pa.Array) -> pa.Table:
    """The rows of ``files`` whose ``key`` is in ``want``, only ``columns``."""
    parts = []
    for path in files:
        table = pq.read_table(path, columns=list(columns))
        parts.append(table.filter(pc.is_in(table.column(key), value_set=want)))
    if not parts:
        return pa.table({n: pa.array([], pa.string()) for n in columns})  # no rows to match
    return pa.concat_tables(parts)


def _rows(table: pa.Table, names: Sequence[str]) -> zip[tuple[object, ...]]:
    return zip(*(table.column(n).to_pylist() for n in names), strict=True)

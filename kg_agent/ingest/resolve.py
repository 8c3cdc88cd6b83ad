"""Link targets to canonical article titles, shard by shard.

What a whole load must hold in memory is per *title*, never per text or link: the
table of loaded titles (each with the position of its winning page), this load's
redirects, and the stubs (link targets outside the source). Measured in
``scripts/bench_scale.py``; at about 100-150 bytes a title they are the load's
only structures that grow with the dump. Links themselves are resolved a shard at
a time with Arrow: each distinct target of the shard is resolved once in Python,
then mapped back and aggregated in vectorised C++.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from kg_agent.ingest.shards import ShardSet

__all__ = ["EDGE_SCHEMA", "LinkResolver", "TitleTable", "resolve_links"]

EDGE_SCHEMA = pa.schema(
    [("from", pa.string()), ("to", pa.string()), ("count", pa.int64()), ("inferred", pa.bool_())]
)
_LOOKUP_BATCH = 5000
_MAX_HOPS = 5  # redirect chains longer than this are loops or vandalism

#: ``lookup(titles) -> (articles, redirects)``: which of ``titles`` the graph
#: already holds as articles (stubs included), and which as redirects (→ target).
Lookup = Callable[[Sequence[str]], tuple[set[str], dict[str, str]]]


@dataclass(slots=True)
class TitleTable:
    """Titles of a load (title → position of the page that wins) and its redirects."""

    titles: dict[str, int] = field(default_factory=dict)
    redirects: dict[str, str] = field(default_factory=dict)
    duplicates: int = 0
    cut: int | None = None  # with --limit: rows of pages after this position are dropped

    @classmethod
    def from_shards(cls, shards: ShardSet, units: Iterable[int], cut: int | None) -> TitleTable:
        table = cls(cut=cut)
        table.add_units(shards, units)
        return table

    def add_units(self, shards: ShardSet, units: Iterable[int]) -> None:
        """Read the titles of later ``units`` (their pages win over earlier ones)."""
        table = self
        cut = self.cut
        for unit in units:
            arts = shards.read(unit, "articles", ["title", "_ord"])
            for title, ord_ in zip(
                arts.column("title").to_pylist(), arts.column("_ord").to_pylist(), strict=True
            ):
                if cut is not None and ord_ > cut:
                    continue
                if title in table.titles:
                    table.duplicates += 1
                table.titles[title] = ord_  # the later page wins
            reds = shards.read(unit, "redirects", ["title", "target", "_ord"])
            for title, target, ord_ in zip(
                reds.column("title").to_pylist(),
                reds.column("target").to_pylist(),
                reds.column("_ord").to_pylist(),
                strict=True,
            ):
                if (cut is None or ord_ <= cut) and title not in table.redirects:
                    table.redirects[title] = target

    def current(self, table: pa.Table, title_column: str) -> pa.Table:
        """Rows of each title's winning page (and not past ``cut``), without ``_ord``."""
        if table.num_rows:
            # looked up once a title, not once a row: a shard's millions of links and
            # fact items name only its own few thousand articles
            titles = table.column(title_column)
            distinct = pc.unique(titles)
            won = pa.array([self.titles.get(t, -1) for t in distinct.to_pylist()], pa.int64())
            winners = pc.take(won, pc.index_in(titles, value_set=distinct))
            table = table.filter(pc.equal(table.column("_ord"), winners))
        return table.drop_columns(["_ord"])


class LinkResolver:
    """Resolve link targets: this load's titles, then its redirects, then the graph.

    Targets found nowhere become stub articles, so the link graph keeps edges to
    pages outside the loaded source (and a later load fills the stub in).
    """

    def __init__(self, table: TitleTable, lookup: Lookup | None = None) -> None:
        self.table = table
        self.lookup = lookup
        self.db_articles: set[str] = set()
        self.db_redirects: dict[str, str] = {}
        self.looked_up: set[str] = set()
        self.stubs: set[str] = set()

    def _follow(self, title: str) -> str:
        titles, redirects = self.table.titles, self.table.redirects
        hops = 0
        while title not in titles and title in redirects and hops < _MAX_HOPS:
            title = redirects[title]
            hops += 1
        return title

    def prefetch(self, targets: Iterable[str]) -> None:
        if self.lookup is None:
            return
        todo = sorted(
            {
                t
                for t in (self._follow(x) for x in targets if x)
                if t not in self.table.titles and t not in self.looked_up
            }
        )
        for i in range(0, len(todo), _LOOKUP_BATCH):
            chunk = todo[i : i + _LOOKUP_BATCH]
            self.looked_up.update(chunk)
            articles, redirects = self.lookup(chunk)
            self.db_articles |= articles
            self.db_redirects.update(redirects)

    def resolve_all(self, targets: Sequence[str]) -> list[str]:
        """:meth:`resolve` of each target. Most name an article of this load as they are
        written: one set lookup each, not two calls (a load resolves tens of millions)."""
        titles = self.table.titles
        resolve = self.resolve
        return [t if t in titles else resolve(t) for t in targets]

    def resolve(self, target: str) -> str:
        if not target:
            return ""
        t = self._follow(target)
        if t in self.table.titles or t in self.db_articles:
            return t
        if t in self.db_redirects:
            return self.db_redirects[t]
        self.stubs.add(t)
        return t

    def redirect_rows(self, only: Collection[str] | None = None) -> list[tuple[str, str]]:
        """(redirect, target article) of this load; an article of the same title wins.
        ``only``: the redirects to resolve (an update writes those that changed)."""
        red = self.table.redirects
        wanted = None if only is None else set(only)
        todo = [t for t in red if t not in self.table.titles and (wanted is None or t in wanted)]
        self.prefetch(red[t] for t in todo)
        rows = []
        for title in todo:
            target = self.resolve(title)
            if target and target != title:
                rows.append((title, target))
        return rows


def resolve_links(raw: pa.Table, resolver: LinkResolver) -> tuple[pa.Table, pa.Table]:
    """Raw link rows (current only) → (MENTIONS edges section→article, LINKS_TO edges).

    Self-links and empty targets are dropped; counts are summed per edge, and an
    edge is ``inferred`` only when every row behind it was.
    """
    if raw.num_rows == 0:
        return EDGE_SCHEMA.empty_table(), EDGE_SCHEMA.empty_table()
    targets = raw.column("target")
    distinct = pc.unique(targets)
    names = distinct.to_pylist()
    resolver.prefetch(names)
    resolved = pa.array(resolver.resolve_all(names), pa.string())
    to = pc.take(resolved, pc.index_in(targets, value_set=distinct))
    rows = raw.append_column("to", to)
    keep = pc.and_(
        pc.not_equal(rows.column("to"), ""), pc.not_equal(rows.column("to"), rows.column("article"))
    )
    rows = rows.filter(keep)
    sections = rows.filter(pc.not_equal(rows.column("section_id"), ""))
    return _edges(sections, "section_id"), _edges(rows, "article")


def _edges(rows: pa.Table, key: str) -> pa.Table:
    if rows.num_rows == 0:
        return EDGE_SCHEMA.empty_table()
    agg = rows.group_by([key, "to"], use_threads=False).aggregate(
        [("count", "sum"), ("inferred", "all")]
    )
    return pa.table(
        [agg.column(key), agg.column("to"), agg.column("count_sum"), agg.column("inferred_all")],
        schema=EDGE_SCHEMA,
    )

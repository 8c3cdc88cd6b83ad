"""Article titles, stub flags and PageRank by Kùzu node offset, memory-mapped.

Why: a query step such as "the link neighbours of X" is a primary-key lookup and
a relationship scan in Kùzu, under a millisecond, but *reading the neighbours'
titles* makes Kùzu 0.11.3 scan the Article table (a semi-masked scan), which
costs time in proportion to the whole table: 12 ms a lookup at 125k articles,
and hundreds at millions. Returning the neighbours' node offsets instead costs
0.9 ms (``scripts/bench_scale.py`` measures both), and this table turns offsets
into titles with an Arrow ``take``.

It is a derived index written after every load (offsets change only when a load
adds or deletes articles, PageRank after every load), as an Arrow IPC file that
readers memory-map: opening it costs nothing, and its pages are shared by every
process reading the graph.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

__all__ = ["ArticleTable", "by_offset", "write_article_table"]

FILE_NAME = "articles.arrow"
_KEY = "kg-agent.loads"


def by_offset(exported: Path, columns: list[str]) -> pa.Table:
    """An export's ``columns`` with each row at its ``offset`` (null where none is)."""
    table = pq.read_table(exported, columns=["offset", *columns])
    n = int(pc.max(table.column("offset")).as_py()) + 1 if table.num_rows else 0
    order = np.asarray(table.column("offset").to_numpy(), dtype=np.int64)
    slots = np.full(n, -1, dtype=np.int64)
    slots[order] = np.arange(table.num_rows, dtype=np.int64)
    mask = slots < 0
    index = pa.array(np.where(mask, 0, slots), mask=mask)
    return pa.table({c: table.column(c).take(index) for c in columns})


def write_article_table(exported: Path, target: Path, key: str = "") -> int:
    """Turn an export (offset, title, is_stub, pagerank rows) into the table at ``target``,
    for a graph whose loads give ``key`` (what a patch of the link table checks).

    Rows are placed at their offset; offsets of deleted articles stay null.
    Returns the number of articles.
    """
    dense = by_offset(exported, ["title", "is_stub", "pagerank"])
    dense = dense.replace_schema_metadata({_KEY: key})
    tmp = target.with_name(target.name + ".tmp")
    with pa.OSFile(str(tmp), "wb") as sink, ipc.new_file(sink, dense.schema) as writer:
        writer.write_table(dense)
    os.replace(tmp, target)
    return int(pq.read_metadata(exported).num_rows)


class ArticleTable:
    """Read side: offsets → titles, PageRank, stub flags."""

    def __init__(self, path: Path) -> None:
        self.path = path
        source = pa.memory_map(str(path), "r")
        self._table = ipc.open_file(source).read_all()
        meta = self._table.schema.metadata or {}
        #: the graph's loads it was written for ("" for a table older than the key)
        self.key = meta.get(_KEY.encode(), b"").decode()
        self.size = self._table.num_rows
        self._titles = self._table.column("title")
        self._pagerank = self._table.column("pagerank")

    def titles(self, offsets: Any) -> list[str | None]:
        """Titles at ``offsets`` (None for an offset the table does not know)."""
        idx = np.asarray(offsets, dtype=np.int64)
        inside = (idx >= 0) & (idx < self.size)
        safe = np.where(inside, idx, 0)
        got = self._titles.take(pa.array(safe)).to_pylist()
        return [t if ok else None for t, ok in zip(got, inside.tolist(), strict=True)]

    def all_titles(self) -> pa.Array:
        """Every title by offset (null where no article is)."""
        return self._titles.combine_chunks()

    def offsets(self, titles: list[str]) -> np.ndarray:
        """The node offset of each of ``titles`` (-1 for one the table lacks)."""
        if not titles:
            return np.zeros(0, dtype=np.int64)
        found = self._where(titles)
        return np.fromiter((found.get(t, -1) for t in titles), dtype=np.int64, count=len(titles))

    def stubs(self, offsets: np.ndarray) -> np.ndarray:
        """Whether the article at each of ``offsets`` (all inside the table) is a stub."""
        flags = self._table.column("is_stub").take(pa.array(offsets, pa.int64()))
        return np.asarray(pc.fill_null(flags, False).to_numpy(zero_copy_only=False), dtype=bool)

    def present(self, titles: list[str]) -> set[str]:
        """Those of ``titles`` the table holds (articles and stubs): one scan of its
        memory-mapped titles, where Kùzu 0.11.3 answers a list of titles with a scan of
        its Article table per statement, or a lookup per title (see
        ``GraphStore._keyed``)."""
        if not titles:
            return set()
        return set(self._where(titles))

    def _where(self, titles: list[str]) -> dict[str, int]:
        """The offset of each of ``titles`` the table holds. The table's titles are
        scanned against a hash of the few asked, not the asked looked up in a hash of
        every title, which Arrow builds anew per call (7M titles, 70k asked: 0.12 s
        against 1.5 s, and a write asks three or four times)."""
        asked = pa.array(titles, pa.string())
        mask = pc.is_in(self._titles, value_set=asked).to_numpy()
        hits = np.flatnonzero(np.asarray(mask, dtype=bool))
        names = self._titles.take(pa.array(hits, pa.int64())).to_pylist()
        found: dict[str, int] = {}
        for name, offset in zip(names, hits.tolist(), strict=True):
            found.setdefault(name, offset)
        return found

    def pageranks(self, offsets: Any) -> list[float]:
        idx = np.clip(np.asarray(offsets, dtype=np.int64), 0, max(0, self.size - 1))
        return [float(p or 0.0) for p in self._pagerank.take(pa.array(idx)).to_pylist()]

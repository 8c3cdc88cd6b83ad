"""Writes to the section vectors: what ``kg-agent embed`` needs beside the bulk ``COPY``.

A mixin of :class:`~kg_agent.store.GraphStore`, like :mod:`.reads`. Vectors live in
``SectionVector`` apart from the sections because Kùzu cannot ``SET`` a column that a
vector index uses; adding vectors is a ``COPY``, and rebuilding the index means
recreating the table (see :meth:`VectorWrites.recreate_vector_table`).

**Vectors an update writes wait in ``UnindexedVector``**, a table without an index, which
search scans exactly beside the index
(:meth:`~kg_agent.store.reads.GraphReads.vector_search`). A section's vector is in one table
or another, never two. Nothing is ever inserted into a built HNSW index:

* Kùzu 0.11.3's inserts into a built index can strand part of it. After 9 vectors went
  into a 138-vector index (the e2e test's update), every query near one section found 2
  hits, whatever ``k``, neither of them that section; 3 runs in 16 did so. An index
  ``CREATE_VECTOR_INDEX`` builds from all the vectors at once has never done that (it
  may, as any HNSW graph, leave a lone node no search reaches: one of 183 once).
* The inserts cost ~1 s a ``COPY`` plus ~5 ms a vector at 10k articles and ~20 ms at
  100k (docs/notes/updates.md; scripts/bench_vector_inserts.py at e84b41d): 20,000 of them,
  ~100 s and ~400 s.

So once more than :data:`MAX_UNINDEXED` wait, the update (or load) that passed the mark
**folds** them (:meth:`VectorWrites.fold_unindexed`): a second, smaller index, the
*recent* one (``RecentVector<n>``, named by ``Meta.recent_vectors``), is built anew from
its own vectors and the waiting ones, and search asks both indexes. A fold costs what
updates wrote since the last compaction, not what the graph holds. Once the recent index
would hold more than a quarter of the main one's vectors, the update compacts the graph
instead (``ingest/compact.py``), which builds one index from all of them, as
``kg-agent compact`` and ``kg-agent embed`` do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kg_agent.exceptions import InvalidArgumentError
from kg_agent.store.reads import RECENT, RECENT_INDEX, UNINDEXED, VECTOR_INDEX

__all__ = [
    "MAX_UNINDEXED",
    "UNINDEXED",
    "VectorWrites",
    "check_max_unindexed",
    "vector_count",
    "vector_table_ddl",
]

#: Vectors that wait outside the indexes before an update folds them into the recent
#: index: 20,000 add ~12 ms to a search on 2 cores, whose own cost is ~15 ms
#: (scripts/bench_vector_inserts.py at e84b41d).
MAX_UNINDEXED = 20_000


def check_max_unindexed(n: object) -> None:
    """The mark of a load's or an update's options: a whole number, 0 or more."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise InvalidArgumentError(
            f"max_unindexed_vectors must be a whole number of 0 or more, got {n!r}"
        )


def vector_count(counts: Mapping[str, int]) -> int:
    """Section vectors in a graph, indexed or waiting, from :meth:`GraphStore.table_counts`."""
    return sum(int(counts.get(t, 0)) for t in ("SectionVector", RECENT, UNINDEXED))


def vector_table_ddl(dimension: int, table: str = "SectionVector") -> str:
    return (
        f"CREATE NODE TABLE IF NOT EXISTS {table}(id STRING PRIMARY KEY, "
        f"text_hash STRING, embedding FLOAT[{int(dimension)}])"
    )


class VectorWrites:
    """Vector-table writes of :class:`~kg_agent.store.GraphStore` (a mixin)."""

    if TYPE_CHECKING:  # provided by GraphStore

        def _run(self, cypher: str, params: Any = None) -> list[list[Any]]: ...
        def _pk(self, cypher: str, params: Any) -> list[list[Any]]: ...
        def _keys(self, cypher: str, keys: Sequence[Any], *, table: str) -> list[list[Any]]: ...
        def index_names(self) -> set[str]: ...
        def set_meta(self, **values: str) -> None: ...
        def vector_tables(self) -> tuple[str, ...]: ...
        def recent_table(self) -> str | None: ...
        def unindexed_count(self) -> int: ...
        def begin(self) -> None: ...
        def commit(self) -> None: ...
        def rollback(self) -> None: ...
        @property
        def dimension(self) -> int: ...

        _in_tx: bool

    def recreate_vector_table(self, dimension: int) -> None:
        """An empty ``SectionVector`` of ``dimension``, with no index (and an empty
        ``UnindexedVector``: a caller keeping vectors exports both first).

        Kùzu 0.11.3 cannot drop a vector index alone: after ``DROP_VECTOR_INDEX`` a new
        index of that name is refused ("already exists", or "not loaded yet" after a
        reopen), and the next insert into the table crashes the process or fails on
        the dropped index's catalog entry. Dropping the index *and the table* leaves
        no trace, so that is the only way to rebuild an index here.
        """
        self.drop_recent_tables(keep=None)
        if VECTOR_INDEX in self.index_names():
            self._run(f"CALL DROP_VECTOR_INDEX('SectionVector', '{VECTOR_INDEX}')")
        self._run("DROP TABLE IF EXISTS SectionVector")
        self._run(f"DROP TABLE IF EXISTS {UNINDEXED}")
        self._run(vector_table_ddl(dimension))
        self._run(vector_table_ddl(dimension, UNINDEXED))

    def drop_recent_tables(self, *, keep: str | None) -> None:
        """Drop every recent-index table but ``keep`` (with its index: the only way to drop
        one, see :meth:`recreate_vector_table`): those of a fold cut short, or all."""
        if keep is None:
            self.set_meta(recent_vectors="")
        indexed = {
            str(r[0])
            for r in self._run("CALL SHOW_INDEXES() RETURN table_name, index_name")
            if r[1] == RECENT_INDEX
        }
        for r in self._run("CALL SHOW_TABLES() RETURN name"):
            table = str(r[0])
            if table.startswith(RECENT) and table != keep:
                if table in indexed:
                    self._run(f"CALL DROP_VECTOR_INDEX('{table}', '{RECENT_INDEX}')")
                self._run(f"DROP TABLE {table}")

    def fold_unindexed(self) -> int:
        """Build the recent vector index anew from its vectors and those waiting; how many
        it holds after (0: nothing waited, nothing built). Never inside a transaction
        (Kùzu builds an index only outside one), and never by inserting into a built
        index (the module doc).

        Each step leaves the graph whole if cut short: the new table is copied, indexed
        and checkpointed first (Kùzu 0.11.3 keeps a ``COPY``'s rows out of its log, so a
        ``kill -9`` before the checkpoint would lose them: ``committed_rows_lost``), then
        one transaction checks it holds them all, names it and empties
        ``UnindexedVector``, then the old table goes (a table no ``Meta`` names is
        dropped by the next fold).
        """
        if self._in_tx:
            raise RuntimeError("fold_unindexed builds an index: not inside a transaction")
        old = self.recent_table()
        self.drop_recent_tables(keep=old)
        if not self.unindexed_count():
            return 0
        new = f"{RECENT}{int(old[len(RECENT) :]) + 1 if old else 1}"
        self._run(vector_table_ddl(self.dimension, new))
        for table in (old, UNINDEXED):
            if table:
                self._run(
                    f"COPY {new} FROM (MATCH (v:{table}) RETURN v.id, v.text_hash, v.embedding)"
                )
        self._run(
            f"CALL CREATE_VECTOR_INDEX('{new}', '{RECENT_INDEX}', 'embedding', metric := 'cosine')"
        )
        self._run("CHECKPOINT")
        self.begin()
        want = self.unindexed_count() + (self._count_rows(old) if old else 0)
        if self._count_rows(new) != want:  # nothing deleted: the next fold starts over
            self.rollback()
            raise RuntimeError(f"the fold's {new} lacks vectors; the old tables stay")
        self._run(f"MATCH (u:{UNINDEXED}) DELETE u")
        self.set_meta(recent_vectors=new)
        self.commit()
        self.drop_recent_tables(keep=new)
        return self._count_rows(new)

    def _count_rows(self, table: str) -> int:
        return int(self._run(f"MATCH (v:{table}) RETURN count(v)")[0][0])

    def delete_vectors(self, ids: Sequence[str]) -> None:
        for table in self.vector_tables():
            self._keys(f"MATCH (v:{table} {{id: $key}}) DELETE v", ids, table=table)

    def vector_hash(self, section_id: str) -> str | None:
        """The text hash a section's vector was computed from (None: no vector)."""
        for table in self.vector_tables():
            rows = self._pk(f"MATCH (v:{table} {{id: $i}}) RETURN v.text_hash", {"i": section_id})
            if rows and rows[0][0] is not None:
                return str(rows[0][0])
        return None

    def reset_vectors(self, *, dimension: int, model: str) -> None:
        """Make an empty vector table take another model (and dimension)."""
        self.recreate_vector_table(dimension)
        self.set_meta(model=model, dimension=str(int(dimension)))

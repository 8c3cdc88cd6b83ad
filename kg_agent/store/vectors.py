"""Writes to the section vectors, and the vector index kept in step with them.

A mixin of :class:`~kg_agent.store.GraphStore`, like :mod:`.reads`. Each section with
a vector has a row in the graph's ``SectionVector`` table (apart from the sections:
Kùzu cannot ``SET`` a list column cheaply, so vectors are added by ``COPY`` and
replaced by ``DELETE``); search goes through the index beside the graph
(:mod:`.vector_index`), which Kùzu knows nothing of.

**Where the vectors are stored** (``Meta.vector_store``, chosen when a graph is
created, changed by ``compact --vector-store``):

* ``graph``: the float32 vectors in ``SectionVector.embedding`` *and* in the index
  (SQ8 in an IVF segment). 1.85 GiB a million sections: ~61 GiB for English.
* ``index``: ``SectionVector`` keeps ids and text hashes, its ``embedding`` NULL (which
  Kùzu stores in no space); the index is the only copy, read by id where the graph's
  column was (:meth:`~.vector_index.VectorIndex.vectors_of`): 0.43 KiB a section in
  an IVF segment, ~14 GiB for English. Vectors read back from an IVF segment are SQ8
  decoded, so a rebuild (``reindex``, ``compact``) quantises them again.

**One transaction for both.** Inside a write transaction, :meth:`delete_vectors` and
:meth:`note_added_vectors` record what changes; :meth:`VectorWrites.commit` writes the
index's new segment, deletion files and manifest, sets ``Meta.vector_manifest`` to
it, and only then commits. A write killed before the commit leaves the old manifest
named (its new files are garbage the next writer removes); after it, the new one.

Graphs of schema 4 kept an HNSW index in Kùzu and updates' vectors in
``UnindexedVector`` and ``RecentVector<n>``; the upgrade to schema 5 moves those
vectors into ``SectionVector`` and drops the HNSW indexes (``ingest/upgrade.py``).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from kg_agent.exceptions import DatabaseError
from kg_agent.store.reads import RECENT, UNINDEXED
from kg_agent.store.vector_index import (
    VectorIndex,
    build_vector_index,
    write_vector_changes,
)

__all__ = [
    "VECTOR_STORES",
    "VECTOR_STORE_ENV",
    "VectorWrites",
    "default_vector_store",
    "vector_count",
    "vector_parts",
    "vector_table_ddl",
]

_BATCH = 50_000
#: Where a graph's section vectors are stored (see the module docstring).
VECTOR_STORES = ("graph", "index")
#: The store a new graph gets when its load names none.
VECTOR_STORE_ENV = "KG_AGENT_VECTOR_STORE"


def default_vector_store() -> str:
    """``graph``, or what ``KG_AGENT_VECTOR_STORE`` names."""
    value = os.environ.get(VECTOR_STORE_ENV, "").strip().lower()
    return value if value in VECTOR_STORES else "graph"


def vector_count(counts: Mapping[str, int]) -> int:
    """Section vectors in a graph, from :meth:`GraphStore.table_counts` (a graph of
    schema 4 may hold some in its update tables)."""
    return sum(int(counts.get(t, 0)) for t in ("SectionVector", RECENT, UNINDEXED))


def vector_table_ddl(dimension: int, table: str = "SectionVector") -> str:
    return (
        f"CREATE NODE TABLE IF NOT EXISTS {table}(id STRING PRIMARY KEY, "
        f"text_hash STRING, embedding FLOAT[{int(dimension)}])"
    )


def vector_parts(files: Sequence[Path], dimension: int) -> Iterator[tuple[pa.Array, np.ndarray]]:
    """(ids, float32 matrix) in batches from parquet files of ``id`` and ``embedding``."""
    for f in files:
        if not Path(f).exists():
            continue
        for batch in pq.ParquetFile(f).iter_batches(batch_size=_BATCH, columns=["id", "embedding"]):
            emb = batch.column("embedding")
            flat = emb.flatten() if hasattr(emb, "flatten") else emb.values
            vecs = np.asarray(flat.to_numpy(zero_copy_only=False), np.float32)
            yield batch.column("id"), vecs.reshape(-1, int(dimension))


class VectorWrites:
    """Vector writes of :class:`~kg_agent.store.GraphStore` (a mixin)."""

    if TYPE_CHECKING:  # provided by GraphStore

        def _run(self, cypher: str, params: Any = None) -> list[list[Any]]: ...
        def _pk(self, cypher: str, params: Any) -> list[list[Any]]: ...
        def _keys(self, cypher: str, keys: Sequence[Any], *, table: str) -> list[list[Any]]: ...
        def set_meta(self, **values: str) -> None: ...
        def meta(self) -> dict[str, str]: ...
        def vector_tables(self) -> tuple[str, ...]: ...
        def vector_index(self) -> VectorIndex | None: ...
        def export_parquet(self, cypher: str, path: str | Path) -> None: ...
        def forget_vector_index(self) -> None: ...
        @property
        def dimension(self) -> int: ...

        index_root: Path
        home: str
        _in_tx: bool
        _vector_deletes: list[str]
        _vector_adds: list[Path]
        last_vector_change: tuple[int, int]

    def vectors_in_index(self) -> bool:
        """Whether the index holds the graph's only copy of its vectors (``Meta.vector_store``)."""
        known: bool | None = getattr(self, "_in_index", None)
        if known is not None:
            return known
        found = self.meta().get("vector_store", "graph") == "index"
        if getattr(self, "read_only", False):
            self._in_index = found
        return found

    # ------------------------------------------------------------------ in a transaction
    def delete_vectors(self, ids: Sequence[str]) -> None:
        """Delete the vectors of ``ids`` (and, at commit, their rows in the index)."""
        for table in self.vector_tables():
            self._keys(f"MATCH (v:{table} {{id: $key}}) DELETE v", ids, table=table)
        if ids and self._in_tx and self.vector_index() is not None:
            self._vector_deletes.extend(str(i) for i in ids)

    def note_added_vectors(self, files: Sequence[Path]) -> None:
        """Vectors this write copied into ``SectionVector`` from ``files`` (parquet of
        ``id``, ``embedding``), for the index at commit. They must stay until then."""
        if self._in_tx and (self.vector_index() is not None or self.vectors_in_index()):
            self._vector_adds.extend(Path(f) for f in files)

    def write_pending_vectors(self) -> None:
        """The index's new state for what this transaction changed, named in ``Meta``
        (called by ``commit``, inside the transaction)."""
        index = self.vector_index()
        deletes, adds = self._vector_deletes, self._vector_adds
        self._vector_deletes, self._vector_adds = [], []
        if not (deletes or adds) or (index is None and not (adds and self.vectors_in_index())):
            return
        added = sum(pq.read_metadata(f).num_rows for f in adds if f.exists())
        dim = self.dimension
        if index is None:  # the first vectors of a graph whose index stores them
            name = build_vector_index(self.index_root, lambda: vector_parts(adds, dim), dim)
        else:
            name = write_vector_changes(index, lambda: vector_parts(adds, dim), deletes)
        self.last_vector_change = (added, len(set(deletes)))
        self.set_meta(vector_manifest=name)
        self.forget_vector_index()

    def discard_pending_vectors(self) -> None:
        self._vector_deletes, self._vector_adds = [], []

    # ------------------------------------------------------------------ whole index
    def build_vector_index(self, *, force: bool = False) -> bool:
        """The vector index over every section vector of the graph, built anew (with
        ``force``, or when the graph has none). Only over a graph whose every section
        has a vector (``Meta.embeddings``): returns whether an index exists after.

        The graph's ``Meta`` names the new index once it is whole; the old one's files
        stay until the next writer's garbage collection (a compaction builds beside a
        graph still in use)."""
        meta = self.meta()
        if not force and meta.get("vectors_stale") != "1" and self.vector_index() is not None:
            return True
        if self.vectors_in_index():
            return self.rebuild_vector_index()
        if meta.get("embeddings", "complete") != "complete":
            return False
        self.index_root.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".kg-vectors-", dir=self.index_root) as tmp:
            files = []
            for i, table in enumerate(self.vector_tables()):
                files.append(Path(tmp) / f"{i}.parquet")
                self.export_parquet(
                    f"MATCH (v:{table}) RETURN v.id AS id, v.embedding AS embedding", files[-1]
                )
            rows = sum(pq.read_metadata(f).num_rows for f in files)
            if not rows:
                self.set_meta(vector_manifest="", vectors_stale="0")
                self.forget_vector_index()
                return False
            dim = self.dimension
            name = build_vector_index(self.index_root, lambda: vector_parts(files, dim), dim)
        self.set_meta(vector_manifest=name, vectors_stale="0")
        self.forget_vector_index()
        return True

    def rebuild_vector_index(
        self,
        files: Sequence[Path] = (),
        *,
        drop: Sequence[str] = (),
        source: VectorIndex | None = None,
    ) -> bool:
        """A graph whose index stores its vectors: one index built anew from the live
        vectors of ``source`` (default: the graph's index) other than ``drop`` and the
        ids of ``files``, and the vectors of ``files`` (parquet of ``id``, ``embedding``).
        Named in ``Meta`` once whole, so a write killed after it and rerun finds its
        vectors in the index and replaces them rather than adding them twice."""
        current = source if source is not None else self.vector_index()
        if current is None and source is None and self.meta().get("vector_manifest"):
            # the only copy cannot be read: rebuilding "from nothing" would forget it
            raise DatabaseError(
                f"the vector index of {self.home} cannot be read, and it holds the graph's "
                f"only copy of its vectors: embed them again with 'kg-agent embed --db "
                f"{self.home} --force'"
            )
        files = [Path(f) for f in files if Path(f).exists()]
        dim = self.dimension
        gone: pa.Array | None = None
        if current is not None and (drop or files):
            replaced = [pa.array(list(drop), pa.string())]
            for f in files:
                replaced.extend(pq.read_table(f, columns=["id"]).column("id").chunks)
            gone = pa.concat_arrays([c.cast(pa.string()) for c in replaced])

        def parts() -> Iterator[tuple[pa.Array, np.ndarray]]:
            if current is not None:
                for ids, vecs in current.vectors():
                    if gone is not None and len(gone):
                        keep = pc.invert(pc.is_in(ids, value_set=gone))
                        ids, vecs = ids.filter(keep), vecs[keep.to_numpy(zero_copy_only=False)]
                    yield ids, vecs
            yield from vector_parts(files, dim)

        rows = (len(current) if current is not None else 0) + sum(
            pq.read_metadata(f).num_rows for f in files
        )
        if not rows:
            self.set_meta(vector_manifest="", vectors_stale="0")
            self.forget_vector_index()
            return False
        name = build_vector_index(self.index_root, parts, dim)
        self.set_meta(vector_manifest=name, vectors_stale="0")
        self.forget_vector_index()
        return True

    def recreate_vector_table(self, dimension: int) -> None:
        """An empty ``SectionVector`` of ``dimension`` (and none of schema 4's update
        tables); the index is dropped with it."""
        for table in self.vector_tables():
            self._run(f"DROP TABLE IF EXISTS {table}")
        self._run(vector_table_ddl(dimension))
        self.set_meta(vector_manifest="", recent_vectors="")
        self.forget_vector_index()

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

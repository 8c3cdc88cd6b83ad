"""Writes to the section vectors: what ``kg-agent embed`` needs beside the bulk ``COPY``.

A mixin of :class:`~kg_agent.store.GraphStore`, like :mod:`.reads`. Vectors live in
``SectionVector`` apart from the sections because Kùzu cannot ``SET`` a column that a
vector index uses; adding vectors is a ``COPY``, and rebuilding the index means
recreating the table (see :meth:`VectorWrites.recreate_vector_table`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kg_agent.store.reads import VECTOR_INDEX

__all__ = ["VectorWrites", "vector_table_ddl"]


def vector_table_ddl(dimension: int) -> str:
    return (
        "CREATE NODE TABLE IF NOT EXISTS SectionVector(id STRING PRIMARY KEY, "
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

    def recreate_vector_table(self, dimension: int) -> None:
        """An empty ``SectionVector`` of ``dimension``, with no index.

        Kùzu 0.11.3 cannot drop a vector index alone: after ``DROP_VECTOR_INDEX`` a new
        index of that name is refused ("already exists", or "not loaded yet" after a
        reopen), and the next insert into the table crashes the process or fails on
        the dropped index's catalog entry. Dropping the index *and the table* leaves
        no trace, so that is the only way to rebuild an index here.
        """
        if VECTOR_INDEX in self.index_names():
            self._run(f"CALL DROP_VECTOR_INDEX('SectionVector', '{VECTOR_INDEX}')")
        self._run("DROP TABLE IF EXISTS SectionVector")
        self._run(vector_table_ddl(dimension))

    def delete_vectors(self, ids: Sequence[str]) -> None:
        self._keys("MATCH (v:SectionVector {id: $key}) DELETE v", ids, table="SectionVector")

    def vector_hash(self, section_id: str) -> str | None:
        """The text hash a section's vector was computed from (None: no vector)."""
        rows = self._pk("MATCH (v:SectionVector {id: $i}) RETURN v.text_hash", {"i": section_id})
        return str(rows[0][0]) if rows and rows[0][0] is not None else None

    def reset_vectors(self, *, dimension: int, model: str) -> None:
        """Make an empty vector table take another model (and dimension)."""
        self.recreate_vector_table(dimension)
        self.set_meta(model=model, dimension=str(int(dimension)))

"""A graph whose index stores its vectors (``Meta.vector_store = index``), on real Kùzu.

Its ``SectionVector`` rows keep keys alone; a transaction's vectors reach the index at its
commit even when the graph had none before (the index is created then), a rollback leaves
nothing, and every reader of vectors gets the index's copy.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kg_agent.store import GraphStore
from tests.unit.store.test_vector_writes import (
    DIM,
    IDS,
    VECTORS,
    _exact,
    _section_file,
    _vector_file,
    _vectors,
)


def _graph_vectors(store: GraphStore) -> int:
    return int(
        store._scalar("MATCH (v:SectionVector) WHERE v.embedding IS NOT NULL RETURN count(v)")
    )


@pytest.fixture()
def empty(tmp_path: Path) -> Path:
    db = tmp_path / "g.kuzu"
    with GraphStore.open(db, read_only=False, create=True) as store:
        store.ensure_schema(dimension=DIM, model="test-model", vector_store="index")
        store.copy_parquet("Section", _section_file(tmp_path / "s.parquet", IDS))
    return db


def _add_all(store: GraphStore, tmp_path: Path) -> None:
    path = _vector_file(tmp_path / "v.parquet", IDS, VECTORS)
    store.copy_parquet("SectionVector", path)
    store.note_added_vectors([path])


def test_the_first_commit_creates_the_index_that_holds_the_only_copy(
    empty: Path, tmp_path: Path
) -> None:
    with GraphStore.open(empty, read_only=False) as store:
        assert store.vectors_in_index() and store.vector_index() is None
        store.begin()
        _add_all(store, tmp_path)
        store.commit()
        assert store.last_vector_change == (len(IDS), 0)
        assert store.check_vector_index() == len(IDS) and _graph_vectors(store) == 0
    with GraphStore.open(empty, read_only=True) as store:
        assert store.stats().vector_store == "index"
        for q in _vectors(10, 5):
            assert [h.section_id for h in store.vector_search(q.tolist(), 5)] == _exact(
                q, IDS, VECTORS, 5
            )
        ids, matrix = store.section_embeddings()
        assert ids == sorted(IDS)
        np.testing.assert_allclose(matrix, VECTORS[[IDS.index(i) for i in ids]], atol=1e-6)


def test_a_rollback_leaves_neither_keys_nor_index(empty: Path, tmp_path: Path) -> None:
    with GraphStore.open(empty, read_only=False) as store:
        store.begin()
        _add_all(store, tmp_path)
        store.rollback()
        assert store.vector_index() is None and store.meta().get("vector_manifest", "") == ""
        assert store.table_counts().get("SectionVector", 0) == 0


def test_a_rebuild_reads_the_index_and_drops_what_it_replaces(empty: Path, tmp_path: Path) -> None:
    """``rebuild_vector_index`` (what ``reindex``, ``compact`` and ``embed`` run): the
    index's own vectors, less those dropped and those the new files bring again."""
    with GraphStore.open(empty, read_only=False) as store:
        store.begin()
        _add_all(store, tmp_path)
        store.commit()
        again = _vector_file(tmp_path / "again.parquet", IDS[:5], _vectors(5, 9))
        assert store.rebuild_vector_index([again], drop=IDS[5:10])
        index = store.vector_index()
        assert index is not None and len(index) == len(IDS) - 5
        got = index.vectors_of(IDS[:12])
        assert sorted(got) == sorted(IDS[:5] + IDS[10:12])
        np.testing.assert_allclose(got[IDS[0]], _vectors(5, 9)[0], atol=1e-6)
        assert store.build_vector_index(force=True) and len(store.vector_index() or ()) == 55

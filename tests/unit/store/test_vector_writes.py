"""The graph and its vector index change together (``store/vectors.py``), on real Kùzu.

A write transaction's vector deletions and additions reach the index at its commit,
named by ``Meta`` in the same commit: a rollback, or ``kill -9`` before the commit,
leaves the index the graph names as it was; ``kill -9`` during a build leaves the
previous index. A graph without an index beside it (schema 4 read as it is) is
searched by an exact scan.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kg_agent.exceptions import DatabaseError
from kg_agent.store import GraphStore
from kg_agent.store.layout import collect_garbage, live_indexes
from kg_agent.store.vector_index import FOLDER

DIM = 16
N = 60


def _vectors(n: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


VECTORS = _vectors(N, 0)
IDS = [f"Article {i}::0000" for i in range(N)]


def _vector_file(path: Path, ids: list[str], vecs: np.ndarray) -> Path:
    pq.write_table(
        pa.table(
            [
                pa.array(ids),
                pa.array(["h"] * len(ids)),
                pa.FixedSizeListArray.from_arrays(pa.array(vecs.reshape(-1)), DIM),
            ],
            names=["id", "text_hash", "embedding"],
        ),
        path,
    )
    return path


def _section_file(path: Path, ids: list[str]) -> Path:
    n = len(ids)
    pq.write_table(
        pa.table(
            {
                "id": ids,
                "article": [s.split("::")[0] for s in ids],
                "heading": [""] * n,
                "heading_path": [""] * n,
                "level": [0] * n,
                "ordinal": [0] * n,
                "part": [0] * n,
                "text": [f"text {i}" for i in range(n)],
                "word_count": [2] * n,
                "text_hash": ["h"] * n,
            }
        ),
        path,
    )
    return path


@pytest.fixture()
def graph(tmp_path: Path) -> Path:
    db = tmp_path / "g.kuzu"
    with GraphStore.open(db, read_only=False, create=True) as store:
        store.ensure_schema(dimension=DIM, model="test-model")
        store.copy_parquet("Section", _section_file(tmp_path / "s.parquet", IDS))
        store.copy_parquet("SectionVector", _vector_file(tmp_path / "v.parquet", IDS, VECTORS))
        assert store.build_vector_index()
    return db


def _exact(q: np.ndarray, ids: list[str], vecs: np.ndarray, k: int) -> list[str]:
    return [ids[i] for i in np.argsort(-(vecs @ q))[:k]]


def test_a_built_index_is_named_by_the_graph_and_searched_exactly(graph: Path) -> None:
    with GraphStore.open(graph, read_only=True) as store:
        assert store.meta()["vector_manifest"].startswith("manifest-")
        assert store.index_status().vector and store.check_vector_index() == N
        assert not any(r for r in store.index_names())  # no index inside Kùzu
        for q in _vectors(20, 1):
            hits = store.vector_search(q.tolist(), 5)
            assert [h.section_id for h in hits] == _exact(q, IDS, VECTORS, 5)
            np.testing.assert_allclose(
                [h.score for h in hits], np.sort(VECTORS @ q)[::-1][:5], atol=1e-5
            )


def _change(
    store: GraphStore, tmp: Path, gone: list[str], new: list[str], vecs: np.ndarray
) -> None:
    store.delete_vectors(gone)
    if new:
        store.copy_parquet("Section", _section_file(tmp / "ns.parquet", new))
        path = _vector_file(tmp / "nv.parquet", new, vecs)
        store.copy_parquet("SectionVector", path)
        store.note_added_vectors([path])


def test_a_commit_carries_the_transactions_vectors_into_the_index(
    graph: Path, tmp_path: Path
) -> None:
    new, more = [f"New {i}::0000" for i in range(8)], _vectors(8, 2)
    with GraphStore.open(graph, read_only=False) as store:
        before = store.meta()["vector_manifest"]
        store.begin()
        _change(store, tmp_path, IDS[:10], new, more)
        store.commit()
        assert store.last_vector_change == (8, 10)
        after = store.meta()["vector_manifest"]
        assert after != before and store.check_vector_index() == N - 10 + 8
    ids, vecs = IDS[10:] + new, np.vstack([VECTORS[10:], more])
    with GraphStore.open(graph, read_only=True) as store:
        for q in [*_vectors(20, 3), *more]:
            assert [h.section_id for h in store.vector_search(q.tolist(), 5)] == _exact(
                q, ids, vecs, 5
            )
        assert store.stats().vector_segments == 2 and store.stats().deleted_vectors == 10


def test_a_rollback_leaves_the_index_the_graph_names(graph: Path, tmp_path: Path) -> None:
    with GraphStore.open(graph, read_only=False) as store:
        before = store.meta()["vector_manifest"]
        store.begin()
        _change(store, tmp_path, IDS[:10], ["New::0000"], _vectors(1, 2))
        store.rollback()
        assert store.meta()["vector_manifest"] == before
        store.begin()  # nothing of the rolled-back change reaches a later commit
        store.set_meta(note="x")
        store.commit()
        assert store.meta()["vector_manifest"] == before
    with GraphStore.open(graph, read_only=True) as store:
        assert store.check_vector_index() == N
        assert store.vector_search(VECTORS[3].tolist(), 1)[0].section_id == IDS[3]


def _killed_before_commit(path: str, tmp: str) -> None:
    store = GraphStore.open(path, read_only=False)
    store.begin()
    _change(store, Path(tmp), IDS[:10], ["New::0000"], _vectors(1, 2))
    store.write_pending_vectors()  # the index's new files, named in the open transaction
    os.kill(os.getpid(), 9)


def _killed_while_building(path: str) -> None:
    import kg_agent.store.vector_index as vi

    def die(*args: object) -> str:
        os.kill(os.getpid(), 9)  # the new segment is written; no manifest names it yet
        return ""

    vi._write_manifest = die  # type: ignore[assignment]
    with GraphStore.open(path, read_only=False) as store:
        store.build_vector_index(force=True)


@pytest.mark.parametrize("when", ["before the commit", "while building"])
def test_kill_9_leaves_the_previous_index(graph: Path, tmp_path: Path, when: str) -> None:
    with GraphStore.open(graph, read_only=True) as store:
        before = store.meta()["vector_manifest"]
    if when == "before the commit":
        target, args = _killed_before_commit, (str(graph), str(tmp_path))
    else:
        target, args = _killed_while_building, (str(graph),)  # type: ignore[assignment]
    child = multiprocessing.get_context("spawn").Process(target=target, args=args)
    child.start()
    child.join(120)
    assert child.exitcode == -9
    folder = tmp_path / "g.kuzu.indexes" / FOLDER
    assert len(list(folder.glob("seg-*"))) == 2  # the old index and the killed write's
    with GraphStore.open(graph, read_only=False) as store:
        assert store.meta()["vector_manifest"] == before
        assert store.check_vector_index() == N
        assert store.vector_search(VECTORS[3].tolist(), 1)[0].section_id == IDS[3]
        live = live_indexes(store.meta())
    collect_garbage(graph, live)  # what the next writer does first
    assert len(list(folder.glob("seg-*"))) == 1 and len(list(folder.glob("manifest-*"))) == 1


def test_a_graph_without_an_index_beside_it_is_scanned(
    graph: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with GraphStore.open(graph, read_only=False) as store:
        store.set_meta(vector_manifest="")  # as a graph of schema 4 reads
    with GraphStore.open(graph, read_only=True) as store, caplog.at_level(logging.WARNING):
        assert not store.index_status().vector and store.check_vector_index() is None
        for q in _vectors(5, 4):
            assert [h.section_id for h in store.vector_search(q.tolist(), 5)] == _exact(
                q, IDS, VECTORS, 5
            )
    said = [r.message for r in caplog.records if "no vector index" in r.message]
    assert len(said) == 1 and "kg-agent reindex" in said[0]


def test_check_names_an_index_out_of_step_with_the_graph(graph: Path, tmp_path: Path) -> None:
    with GraphStore.open(graph, read_only=False) as store:
        store.copy_parquet(
            "SectionVector", _vector_file(tmp_path / "x.parquet", ["Stray::0000"], _vectors(1, 5))
        )  # a vector written outside a transaction, past the index
        with pytest.raises(DatabaseError, match=f"holds {N} vectors, the graph {N + 1}"):
            store.check_vector_index()
        assert store.build_vector_index(force=True) and store.check_vector_index() == N + 1
        folder = tmp_path / "g.kuzu.indexes" / FOLDER
        ids = next(p for p in folder.glob("seg-*/ids.arrow") if p.stat().st_size)
        store.forget_vector_index()
        newest = max(folder.glob("seg-*"), key=lambda p: p.name)
        (newest / "ids.arrow").write_bytes(b"garbage")
        with pytest.raises(DatabaseError, match=r"damaged.*reindex"):
            store.check_vector_index()
        assert ids.exists()

"""The vector index beside the graph (``store/vector_index.py``), on its own files.

Exact segments must rank as numpy's exact search does; IVF-PQ segments must hold a
recall floor against it; a change (deletions and a new segment) must answer as an
index built afresh from the same vectors; merges, the rebuild mark, ``check`` and the
garbage collection must do what they say.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from kg_agent.store import vector_index as vi

DIM = 32


def _clustered(n: int, seed: int, dim: int = DIM) -> np.ndarray:
    """Unit vectors around 50 centres: near neighbours that an index must tell apart,
    as sentence embeddings are (random vectors are all about equally far)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((50, dim))
    v = centres[rng.integers(0, 50, n)] + 0.35 * rng.standard_normal((n, dim))
    v = v.astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _parts(ids: list[str], vecs: np.ndarray, size: int = 700) -> list[tuple[pa.Array, np.ndarray]]:
    return [(pa.array(ids[a : a + size]), vecs[a : a + size]) for a in range(0, len(ids), size)]


def _exact(q: np.ndarray, ids: list[str], vecs: np.ndarray, k: int) -> list[str]:
    qq = q / np.linalg.norm(q)
    return [ids[i] for i in np.argsort(-(vecs @ qq), kind="stable")[:k]]


VECS = _clustered(3000, 0)
IDS = [f"Article {i}::0000" for i in range(len(VECS))]
QUERIES = _clustered(40, 1)


def test_an_exact_segment_ranks_as_exact_search(tmp_path: Path) -> None:
    name = vi.build_vector_index(tmp_path, lambda: _parts(IDS, VECS), DIM)
    index = vi.VectorIndex(tmp_path / vi.FOLDER, name)
    assert len(index) == 3000 and index.describe()["exact_segments"] == 1
    for q in QUERIES:
        hits = index.search(q, 10)
        assert [sid for sid, _ in hits] == _exact(q, IDS, VECS, 10)
        want = np.sort(VECS @ (q / np.linalg.norm(q)))[::-1][:10]
        np.testing.assert_allclose([s for _, s in hits], want, atol=1e-5)
    assert index.search(QUERIES[0], 0) == []


def test_an_ivf_pq_segment_holds_its_recall_floor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same index as large graphs get (IVF-PQ fast-scan codes, SQ8 rescoring), forced
    at 20k; 4 dimensions a sub-quantizer, as 96 are for 384 (the real vectors' own test is
    tests/e2e/test_vector_index_e2e.py)."""
    monkeypatch.setattr(vi, "PQ_BYTES", 24)
    vecs = _clustered(20_000, 2, dim=96)
    ids = [f"S {i}" for i in range(len(vecs))]
    name = vi.build_vector_index(tmp_path, lambda: _parts(ids, vecs, 5000), 96, exact_max=0)
    index = vi.VectorIndex(tmp_path / vi.FOLDER, name)
    assert index.describe()["exact_segments"] == 0 and len(index) == 20_000
    queries = _clustered(60, 3, dim=96)
    found = [
        len(set(_exact(q, ids, vecs, 10)) & {sid for sid, _ in index.search(q, 10)}) / 10
        for q in queries
    ]
    assert np.mean(found) >= 0.9
    assert index.check() == 20_000
    import faiss

    segment = index.segments[0]
    segment.open()
    assert isinstance(segment._ivf, faiss.IndexIVFPQFastScan)  # the 4-bit fast-scan layout
    # a search runs on its own thread alone and leaves the thread's OpenMP setting as it was
    before = faiss.omp_get_max_threads()
    index.search(queries[0], 10)
    assert faiss.omp_get_max_threads() == before


def test_a_tiny_ivf_segment_takes_eight_bit_codes(tmp_path: Path) -> None:
    """Too few vectors to train 4-bit codes' centroids well: 8-bit codes, fewer centroids."""
    import faiss

    vecs = _clustered(600, 4)
    ids = [f"T {i}" for i in range(len(vecs))]
    name = vi.build_vector_index(tmp_path, lambda: _parts(ids, vecs), DIM, exact_max=0)
    index = vi.VectorIndex(tmp_path / vi.FOLDER, name)
    segment = index.segments[0]
    segment.open()
    assert type(segment._ivf) is faiss.IndexIVFPQ
    hits = [sid for sid, _ in index.search(vecs[7], 5)]
    assert hits[0] == "T 7"


def _fresh(tmp: Path, ids: list[str], vecs: np.ndarray) -> vi.VectorIndex:
    name = vi.build_vector_index(tmp, lambda: _parts(ids, vecs), DIM)
    return vi.VectorIndex(tmp / vi.FOLDER, name)


def test_changes_answer_as_an_index_built_afresh(tmp_path: Path) -> None:
    index = _fresh(tmp_path / "a", IDS, VECS)
    gone = [*IDS[100:400], "no such section"]
    rewritten = IDS[50:60]  # deleted and added again with another vector
    new_ids = [f"New {i}::0000" for i in range(200)] + rewritten
    new_vecs = _clustered(len(new_ids), 4)
    name = vi.write_vector_changes(index, lambda: _parts(new_ids, new_vecs), gone + rewritten)
    changed = vi.VectorIndex(index.root, name)
    keep = [i for i, sid in enumerate(IDS) if sid not in set(gone + rewritten)]
    all_ids = [IDS[i] for i in keep] + new_ids
    all_vecs = np.vstack([VECS[keep], new_vecs])
    fresh = _fresh(tmp_path / "b", all_ids, all_vecs)
    assert len(changed) == len(fresh) == len(all_ids)
    assert changed.describe()["segments"] == 2 and changed.deleted == 310
    for q in [*QUERIES, *new_vecs[-10:]]:
        a, b = changed.search(q, 10), fresh.search(q, 10)
        assert [s for s, _ in a] == [s for s, _ in b]
        np.testing.assert_allclose([x for _, x in a], [x for _, x in b], atol=1e-6)
    hit = changed.search(new_vecs[-1], 1)[0]
    assert hit[0] == rewritten[-1] and hit[1] == pytest.approx(1.0, abs=1e-5)
    assert sorted(pa.concat_arrays(list(changed.ids())).to_pylist()) == sorted(all_ids)
    # the earlier state is untouched: its manifest still answers as before
    assert index.search(VECS[200], 1)[0][0] == IDS[200]


def test_small_segments_merge_and_the_rebuild_mark_is_kept(tmp_path: Path) -> None:
    index = _fresh(tmp_path, IDS, VECS)
    added: list[str] = []
    vecs: list[np.ndarray] = []
    for step in range(vi.MAX_SEGMENTS + 2):
        ids = [f"Step {step} {i}::0000" for i in range(20)]
        v = _clustered(20, 10 + step)
        name = vi.write_vector_changes(
            index, lambda ids=ids, v=v: _parts(ids, v), added[:5] if step == 3 else []
        )
        index = vi.VectorIndex(index.root, name)
        added += ids
        vecs.append(v)
    assert len(index.segments) <= vi.MAX_SEGMENTS + 1
    assert len(index) == 3000 + len(added) - 5
    every = np.vstack(vecs)
    for sid, v in list(zip(added, every, strict=True))[5::17]:
        assert index.search(v, 1)[0][0] == sid
    assert not index.rebuild_due()
    name = vi.write_vector_changes(index, list, IDS[:1600])  # most of an exact index
    assert vi.VectorIndex(index.root, name).rebuild_due()


def test_check_names_a_damaged_file(tmp_path: Path) -> None:
    index = _fresh(tmp_path, IDS, VECS)
    assert index.check() == 3000
    vectors = index.segments[0].folder / "vectors.npy"
    vectors.write_bytes(vectors.read_bytes()[:5000])
    with pytest.raises(vi.VectorIndexError, match=index.segments[0].folder.name):
        vi.VectorIndex(index.root, index.manifest).check()
    (index.root / index.manifest).write_text("{not json")
    with pytest.raises(vi.VectorIndexError, match="manifest"):
        vi.VectorIndex(index.root, index.manifest)


def test_garbage_collection_keeps_what_the_live_manifest_names(tmp_path: Path) -> None:
    first = _fresh(tmp_path, IDS, VECS)
    name = vi.write_vector_changes(first, lambda: _parts(["x"], VECS[:1]), IDS[:3])
    second = vi.build_vector_index(tmp_path, lambda: _parts(IDS, VECS), DIM)  # another build
    (tmp_path / vi.FOLDER / "seg-left-by-a-kill").mkdir()
    vi.collect_vector_garbage(tmp_path, [name])
    left = {p.name for p in (tmp_path / vi.FOLDER).iterdir()}
    live = vi.VectorIndex(tmp_path / vi.FOLDER, name)
    assert second not in left and "seg-left-by-a-kill" not in left
    assert left == {name, *(s.folder.name for s in live.segments), *_deletion_files(live)}
    assert live.search(VECS[10], 1)[0][0] == IDS[10]


def _deletion_files(index: vi.VectorIndex) -> set[str]:
    import json

    spec = json.loads((index.root / index.manifest).read_text())
    return {s["deleted"] for s in spec["segments"] if s.get("deleted")}


@pytest.mark.parametrize("exact_max", [None, 0], ids=["exact", "ivf-pq"])
def test_vectors_are_read_back_by_id(tmp_path: Path, exact_max: int | None) -> None:
    """What a graph whose index stores its vectors reads where its column was: each
    live id's vector (float32 as stored, or SQ8-decoded within a step), none for an id
    deleted or never added, and the same through a segment written before id keys."""
    n = 3000
    vecs = _clustered(n, 7)
    ids = [f"Title {i}::{i % 3:04d}" for i in range(n)]
    name = vi.build_vector_index(tmp_path, lambda: _parts(ids, vecs), DIM, exact_max=exact_max)
    index = vi.VectorIndex(tmp_path / vi.FOLDER, name)
    seg = index.segments[0]
    assert (seg.folder / "keys.npy").exists() and seg.is_exact == (exact_max is None)
    wanted = [ids[5], ids[2999], "Nowhere::0000", ids[1234]]
    got = index.vectors_of(wanted)
    assert sorted(got) == sorted([ids[5], ids[2999], ids[1234]])
    tolerance = 1e-6 if exact_max is None else 0.02
    for sid in got:
        np.testing.assert_allclose(got[sid], vecs[ids.index(sid)], atol=tolerance)
    # a change: one deleted, one added in a new (exact) segment
    new = _clustered(1, 8)
    changed = vi.write_vector_changes(index, lambda: [(pa.array(["Added::0000"]), new)], [ids[5]])
    after = vi.VectorIndex(tmp_path / vi.FOLDER, changed)
    got = after.vectors_of([ids[5], "Added::0000", ids[6]])
    assert sorted(got) == ["Added::0000", ids[6]]
    np.testing.assert_allclose(got["Added::0000"], new[0], atol=1e-6)
    # a segment without its key files (written before them) computes its keys once
    for f in ("keys.npy", "keyrows.npy"):
        (seg.folder / f).unlink()
    older = vi.VectorIndex(tmp_path / vi.FOLDER, changed)
    assert sorted(older.vectors_of([ids[6], ids[5]])) == [ids[6]]
    live = sum(len(i) for i, _ in older.vectors())
    assert live == len(older) == n

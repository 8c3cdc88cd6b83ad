"""The section vector index: segments of files beside the graph, searched without Kùzu.

Why not Kùzu's HNSW index (``scripts/bench_vectors.py``, real all-MiniLM vectors and
real questions, docs/BENCHMARKS.md): at 200k sections its recall@10 against exact
search is 0.86, its build runs at ~1,500 vectors/s on 2 cores (~6 h for English's
32.7M sections), it keeps the float32 vectors in the database (~61 GiB for English),
it cannot index int8 columns, and inserts into a built index strand parts of it.
faiss's IVF-PQ with fast-scan codes (96 sub-quantizers of 4 bits: 48 bytes), whose
2,000 best candidates are rescored from int8 (SQ8) vectors, reached recall@10 0.964 at 5M
in 6.6 ms p50 on 2 cores in 466 bytes a vector, and takes new vectors without a
rebuild (docs/BENCHMARKS.md). A graph of up to :data:`EXACT_MAX` vectors is searched
exactly (float32): no training, perfect recall.

**Layout.** ``PATH.indexes/vectors/`` holds immutable *segments* (``seg-*/``: the
section ids as an Arrow file, their 64-bit keys sorted with the rows they sit at, to
read a vector by id, and either the float32 vectors of an exact segment or the IVF-PQ
index and SQ8 codes of a large one), *deletion files* (``del-*.npy``: the
rows of a segment whose sections left, sorted) and *manifests*
(``manifest-*.json``: the segments and deletion files of one state of the index).
The graph's ``Meta.vector_manifest`` names the live manifest, so the graph and its
vector index change together in the graph's own transaction: an update writes its
new segment, deletion files and manifest first, then commits the ``Meta`` row that
names them (``kill -9`` before the commit leaves files no manifest in use names,
removed by the next writer: :func:`collect_vector_garbage`).

**Updates** add one small segment and deletion files; they never rebuild the index.
Past :data:`MAX_SEGMENTS` small segments are merged into one; once updates' segments
and deletions pass :data:`REBUILD_SHARE` of an IVF-PQ index (or most rows of any index
are deleted), :meth:`VectorIndex.rebuild_due` says so, and the writer compacts (which
builds the index anew).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import os
import shutil
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kg_agent.store.layout import fsync_path

__all__ = [
    "EXACT_MAX",
    "MAX_SEGMENTS",
    "REBUILD_SHARE",
    "VectorIndex",
    "VectorIndexError",
    "build_vector_index",
    "collect_vector_garbage",
    "id_keys",
    "write_vector_changes",
]

#: A segment of up to this many vectors is searched exactly, from float32 vectors (no
#: training, perfect recall). Scans share the cores badly: at 200k a scan took 16 ms
#: alone but 379 ms (p50) with 8 queries at once on 2 cores, where IVF-PQ took 2.6 and
#: 10.6 ms (docs/BENCHMARKS.md); at 50k a scan is ~4 ms.
EXACT_MAX = 50_000
#: Candidates an IVF-PQ segment rescores with its SQ8 vectors: real questions meet
#: many sections at almost the same similarity, which PQ codes order too coarsely for a
#: few hundred candidates to hold the exact top 10. At 5M real-distribution vectors and
#: 1,024 probes, 2,000 gave recall@10 0.982 where 1,000 gave 0.961 (docs/BENCHMARKS.md).
RESCORE = 2000
#: Sub-quantizers of a vector's PQ code (4 dimensions each at 384), of 4 bits each: faiss's
#: fast-scan layout, whose SIMD scan of a list is ~4x quicker than 8-bit codes' table
#: lookups. At 5M and the same search, fast-scan codes gave recall@10 0.964 in 11.8 ms p50
#: on 2 cores, 8-bit 96-byte codes 0.972 in 41.6 ms (docs/BENCHMARKS.md).
PQ_BYTES = 96
#: Bits a sub-quantizer's code takes: 4 is the fast-scan layout (48 bytes a vector).
PQ_BITS = 4
#: Fewer training vectors than this fall back to 8-bit codes with fewer centroids (a tiny
#: segment of a test; k-means of 16 centroids wants a few dozen points each).
FAST_SCAN_MIN_TRAIN = 1_000
#: Small segments (updates') kept apart before they are merged into one.
MAX_SEGMENTS = 8
#: Share of an IVF-PQ index, in vectors updates added or deleted, past which a rebuild is
#: due: its lists were trained on the vectors it was built from, and its deleted rows take
#: candidates from the live ones. An exact index is as good in segments; it is rebuilt
#: only once most of its rows are deleted (:data:`REBUILD_DELETED`), for the disk.
REBUILD_SHARE = 0.25
REBUILD_DELETED = 0.5
#: Overrides :data:`EXACT_MAX` for the graphs a process builds (tests; a user who wants
#: IVF-PQ sooner, or exact search longer).
EXACT_MAX_ENV = "KG_AGENT_VECTOR_EXACT_MAX"
_CHUNK = 65_536
FOLDER = "vectors"


class VectorIndexError(RuntimeError):
    """The vector index's files are missing or do not agree with its manifest."""


def default_exact_max() -> int:
    """:data:`EXACT_MAX`, or what ``KG_AGENT_VECTOR_EXACT_MAX`` says."""
    value = os.environ.get(EXACT_MAX_ENV, "").strip()
    return int(value) if value.isdigit() else EXACT_MAX


def _stamp() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S%f")


def _unit(vecs: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 (cosine as an inner product); zero rows stay zero."""
    v = np.ascontiguousarray(vecs, dtype=np.float32)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    out: np.ndarray = v / np.maximum(norms, 1e-12)
    return out


def id_keys(ids: Iterable[str]) -> np.ndarray:
    """64-bit keys of section ids (BLAKE2b, the same in every process): a segment keeps
    them sorted, so the rows of a few ids are found by binary search, not by hashing
    every id of a 33M-row segment (what reading vectors by id needs when the index holds
    the graph's only copy of them)."""
    digest = b"".join(hashlib.blake2b(str(s).encode(), digest_size=8).digest() for s in ids)
    return np.frombuffer(digest, dtype="<u8").astype(np.uint64)


def ivf_lists(n: int) -> int:
    """IVF lists: ~4·sqrt(N), a power of two, at least 256 (fewer for a small segment:
    k-means needs ~39 training points a list)."""
    return int(max(1, min(max(256, 1 << round(np.log2(4 * np.sqrt(max(n, 1))))), n // 39)))


def ivf_probes(nlist: int) -> int:
    """Lists a search probes: an eighth, at least 64 and at most 1,024 (docs/BENCHMARKS.md,
    2,000 candidates rescored). Small segments need a larger share: on the 2Wiki pool's
    6,784 real vectors (173 lists) recall@5 against exact search was 0.92 at 21 probes,
    0.99 at 64. At 5M (8,944 lists) with fast-scan codes, 512 probes gave recall@10 0.951
    and 1,024 gave 0.961 (1,000 rescored; 0.982 with 2,000), 2,048 gave 0.985 for 9.6 ms."""
    return int(min(nlist, max(64, min(1024, nlist // 8))))


def _one_thread_search(index: Any, q: np.ndarray, k: int) -> np.ndarray:
    """``index``'s ``k`` candidates for one query, on the calling thread alone: faiss's
    OpenMP threads for a single query cost more than they save, and under concurrent
    queries (``serve``'s workers) they oversubscribe the cores. OpenMP's thread count is
    per calling thread, so builds elsewhere keep every core."""
    import faiss

    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        return np.asarray(index.search(q[None, :].astype(np.float32), k)[1][0])
    finally:
        faiss.omp_set_num_threads(before)


# ---------------------------------------------------------------------- a segment
@dataclass(eq=False)
class Segment:
    """One immutable part of the index, with the rows deleted from it since."""

    folder: Path
    rows: int
    deleted: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    #: the deletion file ``deleted`` was read from (kept by a change that adds none)
    deleted_file: str | None = None
    _ids: pa.ChunkedArray | None = None
    _exact: np.ndarray | None = None
    _ivf: Any = None
    _sq8: np.ndarray | None = None
    _lo: np.ndarray | None = None
    _step: np.ndarray | None = None
    _keys: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def is_exact(self) -> bool:
        return (self.folder / "vectors.npy").exists()

    @property
    def ids(self) -> pa.ChunkedArray:
        """The ids, memory-mapped as written (one chunk a part: never copied whole)."""
        if self._ids is None:
            source = pa.memory_map(str(self.folder / "ids.arrow"))
            self._ids = pa.ipc.open_file(source).read_all().column("id")
        return self._ids

    def open(self) -> None:
        self._open_vectors()
        if not self.is_exact:
            import faiss

            self._ivf = faiss.read_index(str(self.folder / "ivfpq.faiss"))
            self._ivf.nprobe = ivf_probes(int(self._ivf.nlist))

    def _open_vectors(self) -> None:
        """The stored vectors, memory-mapped: float32 (exact) or SQ8 codes and their scale."""
        if self._exact is not None or self._sq8 is not None:
            return
        if self.is_exact:
            self._exact = np.load(self.folder / "vectors.npy", mmap_mode="r")
        else:
            sq = json.loads((self.folder / "sq8.json").read_text())
            self._lo = np.asarray(sq["lo"], np.float32)
            self._step = np.asarray(sq["step"], np.float32)
            self._sq8 = np.load(self.folder / "sq8.npy", mmap_mode="r")

    def rows_of(self, ids: Sequence[str]) -> np.ndarray:
        """The live row of each of ``ids`` in this segment, -1 where it has none."""
        if self._keys is None:
            path = self.folder / "keys.npy"
            if path.exists():
                self._keys = (
                    np.load(path, mmap_mode="r"),
                    np.load(self.folder / "keyrows.npy", mmap_mode="r"),
                )
            else:  # a segment written before keys were kept: computed once, held
                keys = id_keys(self.ids.to_pylist())
                order = np.argsort(keys, kind="stable")
                self._keys = (keys[order], order)
        keys, order = self._keys
        wanted = id_keys(ids)
        out = np.full(len(ids), -1, np.int64)
        at = np.searchsorted(keys, wanted)
        for i, (pos, key) in enumerate(zip(at.tolist(), wanted.tolist(), strict=True)):
            while pos < len(keys) and int(keys[pos]) == key:  # a collision: the next one
                row = int(order[pos])
                if self.ids[row].as_py() == ids[i]:
                    out[i] = row
                    break
                pos += 1
        if self.deleted.size:
            out[np.isin(out, self.deleted)] = -1
        return out

    def vectors_at(self, rows: np.ndarray) -> np.ndarray:
        """The unit vectors of ``rows``: as stored (exact) or decoded from SQ8."""
        self._open_vectors()
        if self._exact is not None:
            return np.asarray(self._exact[rows], np.float32)
        assert self._sq8 is not None and self._lo is not None and self._step is not None
        decoded: np.ndarray = np.asarray(self._sq8[rows], np.float32) * self._step + self._lo
        return decoded

    def search(self, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(rows, similarities) of the ``k`` nearest live vectors, best first."""
        if self._exact is None and self._ivf is None:
            self.open()
        want = k + min(int(self.deleted.size), 4 * k)
        # einsum, not ``@``: a matrix-vector product goes to BLAS, whose threads, called
        # from several searching threads at once, contend (8 concurrent rescorings of 2,000
        # rows took 63 ms p50 through BLAS, 0.3 ms through einsum's own loop)
        if self._exact is not None:
            sims = np.einsum("ij,j->i", self._exact, q).astype(np.float32, copy=False)
            top = min(want, sims.shape[0])
            rows = np.argpartition(-sims, top - 1)[:top] if top else np.zeros(0, np.int64)
        else:
            cand = _one_thread_search(self._ivf, q, max(RESCORE, want))
            rows = np.sort(cand[cand >= 0])
            assert self._sq8 is not None and self._lo is not None and self._step is not None
            # (code * step + lo) . q == code . (step * q) + lo . q: no decoded copy
            codes = self._sq8[rows].astype(np.float32)
            sims = np.einsum("ij,j->i", codes, self._step * q) + float(self._lo @ q)
            order = np.argsort(-sims)
            rows, sims = rows[order], sims[order]
            return self._live(rows, sims, k)
        sims = sims[rows]
        order = np.argsort(-sims, kind="stable")
        return self._live(rows[order], sims[order], k)

    def _live(self, rows: np.ndarray, sims: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        if self.deleted.size:
            keep = ~np.isin(rows, self.deleted, assume_unique=False)
            rows, sims = rows[keep], sims[keep]
        return rows[:k], sims[:k]

    def vectors(self) -> Iterator[tuple[pa.Array, np.ndarray]]:
        """(ids, unit vectors) of the live rows in chunks: an exact segment's as stored,
        an IVF segment's decoded from SQ8 (what a merge re-indexes)."""
        dead = np.zeros(self.rows, bool)
        dead[self.deleted] = True
        exact = self.is_exact
        stored = np.load(self.folder / ("vectors.npy" if exact else "sq8.npy"), mmap_mode="r")
        if not exact:
            sq = json.loads((self.folder / "sq8.json").read_text())
            lo, step = np.asarray(sq["lo"], np.float32), np.asarray(sq["step"], np.float32)
        for a in range(0, self.rows, _CHUNK):
            b = min(self.rows, a + _CHUNK)
            live = ~dead[a:b]
            block = np.asarray(stored[a:b], np.float32)
            if not exact:
                block = block * step + lo
            ids = self.ids.slice(a, b - a).filter(pa.array(live)).combine_chunks()
            yield ids, block[live]

    def check(self) -> None:
        """Raise :class:`VectorIndexError` unless the files hold :attr:`rows` rows."""
        try:
            n_ids = len(self.ids)
            if self.is_exact:
                n_vec = int(np.load(self.folder / "vectors.npy", mmap_mode="r").shape[0])
            else:
                import faiss

                n_vec = int(np.load(self.folder / "sq8.npy", mmap_mode="r").shape[0])
                ivf = faiss.read_index(str(self.folder / "ivfpq.faiss"), faiss.IO_FLAG_MMAP)
                if int(ivf.ntotal) != self.rows:
                    raise VectorIndexError(
                        f"{self.folder.name}: IVF-PQ holds {ivf.ntotal} of {self.rows} vectors"
                    )
            keys = self.folder / "keys.npy"
            if keys.exists() and int(np.load(keys, mmap_mode="r").shape[0]) != self.rows:
                raise VectorIndexError(f"{self.folder.name}: its id keys are not {self.rows}")
        except (OSError, ValueError, pa.ArrowException, RuntimeError) as exc:
            raise VectorIndexError(f"{self.folder.name}: {str(exc).splitlines()[0]}") from None
        if n_ids != self.rows or n_vec != self.rows:
            raise VectorIndexError(
                f"{self.folder.name}: {n_ids} ids and {n_vec} vectors, the manifest says "
                f"{self.rows}"
            )


# ---------------------------------------------------------------------- writing a segment
#: What a segment is written from: a callable that yields its (ids, vectors) parts, the
#: same parts each time it is called (a large segment reads them three times).
Parts = Callable[[], Iterable[tuple[pa.Array, np.ndarray]]]
_ID_SCHEMA = pa.schema([("id", pa.string())])


def _write_segment(root: Path, parts: Parts, dim: int, exact_max: int | None = None) -> Segment:
    """A segment of ``parts``: exact up to :data:`EXACT_MAX` vectors, else IVF-PQ.

    Memory stays flat: the ids stream to their file and an exact segment's vectors are
    held (at most :data:`EXACT_MAX`). A large segment reads ``parts`` three times: to
    count them, to gather a uniform sample to train on (40 vectors a list), and to
    encode every vector; only the sample is held."""
    limit = default_exact_max() if exact_max is None else exact_max
    folder = root / f"seg-{_stamp()}"
    folder.mkdir(parents=True)
    blocks: list[np.ndarray] = []
    keys: list[np.ndarray] = []
    n = 0
    with (
        pa.OSFile(str(folder / "ids.arrow"), "wb") as sink,
        pa.ipc.new_file(sink, _ID_SCHEMA) as writer,
    ):
        for chunk_ids, vecs in parts():
            chunk = pa.array(chunk_ids, pa.string())
            writer.write_batch(pa.record_batch([chunk], _ID_SCHEMA))
            keys.append(id_keys(chunk.to_pylist()))
            rows = np.asarray(vecs, np.float32).reshape(-1, dim)
            n += len(rows)
            if n <= limit:
                blocks.append(_unit(rows))
            elif blocks:
                blocks = []
    if n <= limit:
        vectors = np.concatenate(blocks) if blocks else np.zeros((0, dim), np.float32)
        np.save(folder / "vectors.npy", vectors)
    else:
        _write_ivf(folder, parts, n, dim)
    every = np.concatenate(keys) if keys else np.zeros(0, np.uint64)
    order = np.argsort(every, kind="stable")
    np.save(folder / "keys.npy", every[order])
    np.save(folder / "keyrows.npy", order.astype(np.uint32 if n < 2**32 else np.int64))
    del every, order
    for p in folder.iterdir():
        fsync_path(p)
    fsync_path(folder)
    return Segment(folder, n)


def _sample(parts: Parts, n: int, dim: int, size: int) -> np.ndarray:
    """``size`` of the ``n`` vectors of ``parts``, chosen uniformly (unit rows)."""
    pick = np.sort(np.random.default_rng(0).choice(n, size, replace=False))
    out = np.empty((size, dim), np.float32)
    start = got = 0
    for _ids, vecs in parts():
        rows = np.asarray(vecs, np.float32).reshape(-1, dim)
        a, b = np.searchsorted(pick, [start, start + len(rows)])
        if b > a:
            out[got : got + b - a] = _unit(rows[pick[a:b] - start])
            got += int(b - a)
        start += len(rows)
    if got != size or start != n:
        raise VectorIndexError("the vectors changed between the reads of a build")
    return out


def _write_ivf(folder: Path, parts: Parts, n: int, dim: int) -> None:
    """IVF-PQ over the ``n`` vectors of ``parts``, trained on a uniform sample of them,
    and their SQ8 codes for rescoring."""
    import faiss

    nlist = ivf_lists(n)
    m = PQ_BYTES if dim % PQ_BYTES == 0 else max(d for d in range(1, 65) if dim % d == 0)
    train = _sample(parts, n, dim, min(n, max(40 * nlist, 256)))
    metric = faiss.METRIC_INNER_PRODUCT
    index: Any
    if len(train) >= FAST_SCAN_MIN_TRAIN:
        index = faiss.IndexIVFPQFastScan(faiss.IndexFlatIP(dim), dim, nlist, m, PQ_BITS, metric)
    else:
        bits = max(1, min(8, int(np.log2(max(len(train), 2)))))  # k-means: a point a centroid
        index = faiss.IndexIVFPQ(faiss.IndexFlatIP(dim), dim, nlist, m, bits, metric)
    index.cp.niter = 10
    index.train(np.ascontiguousarray(train, np.float32))
    lo, hi = train.min(0), train.max(0)
    step = np.maximum(hi - lo, 1e-6) / 255.0
    codes = np.lib.format.open_memmap(folder / "sq8.npy", mode="w+", dtype=np.uint8, shape=(n, dim))
    a = 0
    for _ids, vecs in parts():
        block = _unit(np.asarray(vecs, np.float32).reshape(-1, dim))
        b = a + len(block)
        if b > n:
            raise VectorIndexError("the vectors changed between the reads of a build")
        index.add_with_ids(block, np.arange(a, b, dtype=np.int64))
        codes[a:b] = np.clip(np.rint((block - lo) / step), 0, 255).astype(np.uint8)
        a = b
    if a != n:
        raise VectorIndexError("the vectors changed between the two reads of a build")
    codes.flush()
    del codes
    faiss.write_index(index, str(folder / "ivfpq.faiss"))
    (folder / "sq8.json").write_text(json.dumps({"lo": lo.tolist(), "step": step.tolist()}))


# ---------------------------------------------------------------------- the index
class VectorIndex:
    """The live state of a graph's vector index: its manifest's segments."""

    def __init__(self, root: Path, manifest: str) -> None:
        self.root = Path(root)
        self.manifest = manifest
        path = self.root / manifest
        try:
            spec = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise VectorIndexError(f"vector index manifest {path}: {exc}") from None
        self.dimension = int(spec["dimension"])
        self.segments: list[Segment] = []
        for s in spec["segments"]:
            deleted = np.zeros(0, np.int64)
            if s.get("deleted"):
                try:
                    deleted = np.load(self.root / s["deleted"])
                except (OSError, ValueError) as exc:
                    raise VectorIndexError(f"{s['deleted']}: {exc}") from None
            self.segments.append(
                Segment(self.root / s["name"], int(s["rows"]), deleted, s.get("deleted") or None)
            )

    @staticmethod
    def open(index_root: Path, manifest: str | None) -> VectorIndex | None:
        if not manifest:
            return None
        return VectorIndex(Path(index_root) / FOLDER, manifest)

    def __len__(self) -> int:
        return sum(s.rows - int(s.deleted.size) for s in self.segments)

    @property
    def deleted(self) -> int:
        return sum(int(s.deleted.size) for s in self.segments)

    def describe(self) -> dict[str, Any]:
        """What ``stats`` shows of the index."""
        return {
            "vectors": len(self),
            "segments": len(self.segments),
            "exact_segments": sum(1 for s in self.segments if s.is_exact),
            "deleted": self.deleted,
            "rebuild_due": self.rebuild_due(),
        }

    def rebuild_due(self) -> bool:
        """Whether an IVF-PQ index's updates (segments and deletions) outgrew
        :data:`REBUILD_SHARE` of it, or most rows of any index are deleted."""
        if not self.segments or (len(self.segments) == 1 and not self.deleted):
            return False
        total = sum(s.rows for s in self.segments)
        main = self.segments[0]
        if max(self.deleted / total, main.deleted.size / max(main.rows, 1)) > REBUILD_DELETED:
            return True
        if main.is_exact:
            return False
        return (total - main.rows) + self.deleted > REBUILD_SHARE * max(main.rows, 1)

    def search(self, query: Sequence[float] | np.ndarray, k: int) -> list[tuple[str, float]]:
        """(section id, cosine similarity) of the ``k`` nearest sections, best first."""
        if k < 1:
            return []
        q = _unit(np.asarray(query, np.float32).reshape(1, -1))[0]
        found: list[tuple[float, int, int]] = []
        for i, seg in enumerate(self.segments):
            rows, sims = seg.search(q, k)
            found.extend((float(s), i, int(r)) for r, s in zip(rows, sims, strict=True))
        found = sorted(found, key=lambda t: -t[0])[:k]
        ids: dict[tuple[int, int], str] = {}
        for i, seg in enumerate(self.segments):
            picked = [row for _, j, row in found if j == i]
            if picked:
                # one id at a time: ``take`` on the memory-mapped ids (a chunk a written
                # batch) concatenates them first, a cost that grows with the segment
                # (0.72 ms for 10 ids at 1M in 10 chunks, ~0.01 ms this way)
                names = [seg.ids[row].as_py() for row in picked]
                ids.update(((i, r), str(n)) for r, n in zip(picked, names, strict=True))
        return [(ids[(i, row)], sim) for sim, i, row in found]

    def check(self) -> int:
        """Check every file the manifest names; the live vectors it holds."""
        for seg in self.segments:
            seg.check()
            if seg.deleted.size and (seg.deleted.min() < 0 or seg.deleted.max() >= seg.rows):
                raise VectorIndexError(f"{seg.folder.name}: deletion rows outside the segment")
        return len(self)

    def ids(self) -> Iterator[pa.Array]:
        """The live section ids (what ``check`` compares with the graph's vectors)."""
        for seg in self.segments:
            ids = seg.ids
            if seg.deleted.size:
                dead = np.zeros(seg.rows, bool)
                dead[seg.deleted] = True
                ids = ids.filter(pa.array(~dead))
            yield ids.combine_chunks()

    def vectors(self) -> Iterator[tuple[pa.Array, np.ndarray]]:
        """(ids, unit vectors) of every live row, segment by segment, in chunks: an exact
        segment's as stored, an IVF segment's decoded from SQ8."""
        for seg in self.segments:
            yield from seg.vectors()

    def vectors_of(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The unit vector of each of ``ids`` the index holds (decoded from SQ8 in an IVF
        segment): how a graph whose vectors live in its index alone reads them by id."""
        wanted = [str(i) for i in dict.fromkeys(ids)]
        out: dict[str, np.ndarray] = {}
        for seg in self.segments:
            todo = [i for i in wanted if i not in out]
            if not todo:
                break
            rows = seg.rows_of(todo)
            hit = np.flatnonzero(rows >= 0)
            if hit.size:
                vecs = seg.vectors_at(rows[hit])
                out.update((todo[j], vecs[k]) for k, j in enumerate(hit.tolist()))
        return out


def _write_manifest(root: Path, dim: int, segments: Sequence[tuple[Segment, str | None]]) -> str:
    name = f"manifest-{_stamp()}.json"
    spec = {
        "format": 1,
        "metric": "cosine",
        "dimension": dim,
        "segments": [{"name": s.folder.name, "rows": s.rows, "deleted": d} for s, d in segments],
    }
    tmp = root / f".{name}.tmp"
    with open(tmp, "w") as f:
        json.dump(spec, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, root / name)
    fsync_path(root)
    return name


def build_vector_index(
    index_root: Path,
    parts: Parts,
    dimension: int,
    *,
    exact_max: int | None = None,
) -> str:
    """A new index of all the (ids, vectors) ``parts`` yields, as one segment; the name
    of its manifest, for the graph's ``Meta.vector_manifest``."""
    root = Path(index_root) / FOLDER
    root.mkdir(parents=True, exist_ok=True)
    seg = _write_segment(root, parts, dimension, exact_max)
    return _write_manifest(root, dimension, [(seg, None)])


def write_vector_changes(
    index: VectorIndex,
    added: Parts,
    deleted_ids: Sequence[str],
    *,
    exact_max: int | None = None,
) -> str:
    """A new state of ``index``: ``deleted_ids`` removed (their rows recorded as deleted in
    the segments that hold them, before ``added`` goes in) and ``added`` in a new
    segment; small segments are merged past :data:`MAX_SEGMENTS`. Returns the new
    manifest's name; nothing is live until the graph's ``Meta`` names it."""
    root = index.root
    gone = pa.array(sorted(set(deleted_ids)), pa.string())
    states: list[tuple[Segment, np.ndarray]] = []
    for seg in index.segments:
        dead = seg.deleted
        if len(gone):
            hit = np.flatnonzero(pc.is_in(seg.ids, value_set=gone).to_numpy(zero_copy_only=False))
            if hit.size:
                dead = np.union1d(dead, hit.astype(np.int64))
        states.append((seg, dead))
    new = _write_segment(root, added, index.dimension, exact_max)
    if new.rows:
        states.append((new, np.zeros(0, np.int64)))
    else:
        shutil.rmtree(new.folder, ignore_errors=True)
    # the first segment is the index's main one; updates' small ones merge into one
    small = [(s, d) for s, d in states[1:] if s.is_exact]
    if len(small) > MAX_SEGMENTS:

        def merged_parts() -> Iterator[tuple[pa.Array, np.ndarray]]:
            for seg, dead in small:
                yield from Segment(seg.folder, seg.rows, dead).vectors()

        merged = _write_segment(root, merged_parts, index.dimension, exact_max)
        gone_ids = {id(s) for s, _ in small}
        states = [(s, d) for s, d in states if id(s) not in gone_ids]
        states.append((merged, np.zeros(0, np.int64)))
    listed: list[tuple[Segment, str | None]] = []
    for seg, dead in states:
        name = None
        if dead.size:
            if np.array_equal(dead, seg.deleted):
                name = seg.deleted_file
            if name is None:
                name = f"del-{_stamp()}-{seg.folder.name}.npy"
                np.save(root / name, dead)
                fsync_path(root / name)
        listed.append((seg, name))
    return _write_manifest(root, index.dimension, listed)


def collect_vector_garbage(index_root: Path, live: Iterable[str]) -> None:
    """Remove the manifests other than ``live`` and the files none of them names (what a
    killed write or a replaced index left). For a writer holding the graph's lock."""
    root = Path(index_root) / FOLDER
    if not root.is_dir():
        return
    keep: set[str] = set()
    for name in live:
        if not name or not (root / name).exists():
            continue
        keep.add(name)
        with contextlib.suppress(OSError, ValueError):
            spec = json.loads((root / name).read_text())
            for s in spec["segments"]:
                keep.add(s["name"])
                if s.get("deleted"):
                    keep.add(s["deleted"])
    for child in root.iterdir():
        if child.name not in keep:
            if child.is_dir():
                shutil.rmtree(child, ignore_errors=True)
            else:
                child.unlink(missing_ok=True)

"""The vector indexes scripts/bench_vectors.py compares, each behind one small interface.

Every candidate is built from a memory-mapped ``float32`` matrix of unit vectors (row
``i`` has key ``i``), saved into a folder, and reopened from that folder in a fresh process
for search, so the memory a search needs is what the saved index costs, not what the build
left behind. Similarity is the inner product of unit vectors (cosine).

* ``flat``: exact float32 search (faiss ``IndexFlatIP``), the reference.
* ``kuzu-hnsw``: what the graph has today, Kùzu 0.11.3's HNSW over a ``FLOAT[384]``
  column (built only at small sizes: ~1,100-1,900 vectors/s on 2 cores).
* ``usearch-i8``: usearch's HNSW over int8-quantised vectors, memory-mapped at search.
* ``ivfpq-sq8``: faiss IVF with 48-byte product-quantised codes in memory, the top
  :data:`RESCORE` candidates rescored from int8 (scalar-quantised) vectors kept in a
  memory-mapped file. 432 bytes a vector on disk, ~56 in memory.
* ``ivfpq-sq8-r1000``: the same, rescoring 1,000 candidates and probing up to 512 lists.
* ``binary-sq8``: 48-byte sign codes searched exhaustively by Hamming distance, then the
  same int8 rescoring.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np

from kg_agent.store.vector_index import ivf_lists

RESCORE = 200  # candidates the quantised indexes rescore with the int8 vectors
K = 10
RECALL_GOAL = 0.95


def _chunks(n: int, size: int = 65_536) -> list[tuple[int, int]]:
    return [(i, min(n, i + size)) for i in range(0, n, size)]


def disk_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


# ---------------------------------------------------------------------- int8 rescoring
class Int8Vectors:
    """Unit vectors quantised to int8 per dimension (min/max of a sample), memory-mapped.

    Row ``i`` holds the vector of key ``i``; rescoring a query reads ``RESCORE`` rows."""

    def __init__(self, folder: Path) -> None:
        meta = json.loads((folder / "sq8.json").read_text())
        self.lo = np.asarray(meta["lo"], np.float32)
        self.step = np.asarray(meta["step"], np.float32)
        self.codes: np.ndarray = np.load(folder / "sq8.npy", mmap_mode="r")

    def quantise(self, vecs: np.ndarray) -> np.ndarray:
        return np.clip(np.rint((vecs - self.lo) / self.step), 0, 255).astype(np.uint8)

    def append(self, vecs: np.ndarray) -> None:
        """Rows for new keys (held in memory: what the writes measurement needs)."""
        self.codes = np.concatenate([np.asarray(self.codes), self.quantise(vecs)])

    @staticmethod
    def write(base: np.ndarray, folder: Path) -> None:
        sample = np.asarray(base[:: max(1, base.shape[0] // 100_000)], np.float32)
        lo, hi = sample.min(0), sample.max(0)
        step = np.maximum(hi - lo, 1e-6) / 255.0
        out = np.lib.format.open_memmap(
            folder / "sq8.npy", mode="w+", dtype=np.uint8, shape=base.shape
        )
        for a, b in _chunks(base.shape[0]):
            q = np.rint((np.asarray(base[a:b], np.float32) - lo) / step)
            out[a:b] = np.clip(q, 0, 255).astype(np.uint8)
        out.flush()
        del out
        meta = {"lo": lo.tolist(), "step": step.tolist()}
        (folder / "sq8.json").write_text(json.dumps(meta))

    def rescore(self, q: np.ndarray, ids: np.ndarray, k: int) -> np.ndarray:
        ids = ids[ids >= 0]
        if not ids.size:
            return ids
        order = np.argsort(ids)  # ascending reads of the file
        rows = self.codes[ids[order]].astype(np.float32) * self.step + self.lo
        sims = rows @ q
        best = np.argsort(-sims)[:k]
        return np.asarray(ids[order][best])


# ---------------------------------------------------------------------- candidates
class Flat:
    name = "flat"

    def build(self, base: np.ndarray, folder: Path) -> None:
        import faiss

        index = faiss.IndexFlatIP(base.shape[1])
        for a, b in _chunks(base.shape[0]):
            index.add(np.ascontiguousarray(base[a:b], np.float32))
        faiss.write_index(index, str(folder / "flat.faiss"))

    def open(self, folder: Path) -> None:
        import faiss

        self.index = faiss.read_index(str(folder / "flat.faiss"), faiss.IO_FLAG_MMAP)

    def search(self, q: np.ndarray, k: int) -> np.ndarray:
        return self.index.search(q[None, :], k)[1][0]


class KuzuHnsw:
    name = "kuzu-hnsw"

    def build(self, base: np.ndarray, folder: Path) -> None:
        import kuzu
        import pyarrow as pa
        import pyarrow.parquet as pq

        dim = base.shape[1]
        db = kuzu.Database(str(folder / "graph.kuzu"))
        conn = kuzu.Connection(db)
        conn.execute(f"CREATE NODE TABLE V(id INT64 PRIMARY KEY, embedding FLOAT[{dim}])")
        for a, b in _chunks(base.shape[0], 200_000):
            part = np.ascontiguousarray(base[a:b], np.float32)
            vec = pa.FixedSizeListArray.from_arrays(pa.array(part.reshape(-1)), dim)
            table = pa.table({"id": pa.array(np.arange(a, b, dtype=np.int64)), "embedding": vec})
            tmp = folder / "part.parquet"
            pq.write_table(table, tmp)
            conn.execute(f"COPY V FROM '{tmp}'")
            tmp.unlink()
        conn.execute("CALL CREATE_VECTOR_INDEX('V', 'v_idx', 'embedding', metric := 'cosine')")
        conn.execute("CHECKPOINT")
        conn.close()
        db.close()

    def open(self, folder: Path) -> None:
        import kuzu

        self.db = kuzu.Database(str(folder / "graph.kuzu"), read_only=True)
        self.conn = kuzu.Connection(self.db)

    def search(self, q: np.ndarray, k: int) -> np.ndarray:
        return self.search_on(self.conn, q, k)

    @staticmethod
    def search_on(conn: Any, q: np.ndarray, k: int) -> np.ndarray:
        res = conn.execute(
            "CALL QUERY_VECTOR_INDEX('V', 'v_idx', $q, $k) RETURN node.id ORDER BY distance",
            {"q": q.tolist(), "k": k},
        )
        out = []
        while res.has_next():
            out.append(int(res.get_next()[0]))
        return np.asarray(out, np.int64)


class UsearchI8:
    name = "usearch-i8"

    def _index(self, dim: int) -> Any:
        from usearch.index import Index

        return Index(
            ndim=dim,
            metric="ip",
            dtype="i8",
            connectivity=16,
            expansion_add=128,
            expansion_search=64,
        )

    def build(self, base: np.ndarray, folder: Path) -> None:
        index = self._index(base.shape[1])
        for a, b in _chunks(base.shape[0]):
            index.add(
                np.arange(a, b, dtype=np.uint64), np.asarray(base[a:b], np.float32), threads=2
            )
        index.save(str(folder / "usearch.i8"))

    def open(self, folder: Path) -> None:
        from usearch.index import Index

        self.index = Index.restore(str(folder / "usearch.i8"), view=True)
        self.index.expansion_search = 64

    sweep = (64, 128, 256)

    def set_probe(self, value: int) -> None:
        self.index.expansion_search = value

    def search(self, q: np.ndarray, k: int) -> np.ndarray:
        return np.asarray(self.index.search(q, k, threads=1).keys, np.int64)

    def open_for_writes(self, folder: Path) -> None:
        from usearch.index import Index

        self.index = Index.restore(str(folder / "usearch.i8"), view=False)

    def insert(self, vecs: np.ndarray, start: int) -> None:
        keys = np.arange(start, start + vecs.shape[0], dtype=np.uint64)
        self.index.add(keys, vecs, threads=2)

    def delete(self, keys: np.ndarray) -> None:
        self.index.remove(keys.astype(np.uint64))


class IvfPqSq8:
    name = "ivfpq-sq8"
    nprobe = 32
    sweep: tuple[int, ...] = (16, 32, 64, 128)
    rescore = RESCORE

    def set_probe(self, value: int) -> None:
        self.index.nprobe = value

    def build(self, base: np.ndarray, folder: Path) -> None:
        import faiss

        n, dim = base.shape
        nlist = ivf_lists(n)
        quantizer = faiss.IndexFlatIP(dim)
        index = faiss.IndexIVFPQ(quantizer, dim, nlist, 48, 8, faiss.METRIC_INNER_PRODUCT)
        rng = np.random.default_rng(0)
        train_n = min(n, 40 * nlist)
        pick = np.sort(rng.choice(n, train_n, replace=False))
        index.cp.niter = 10
        index.train(np.ascontiguousarray(base[pick], np.float32))
        for a, b in _chunks(n):
            index.add_with_ids(
                np.ascontiguousarray(base[a:b], np.float32), np.arange(a, b, dtype=np.int64)
            )
        faiss.write_index(index, str(folder / "ivfpq.faiss"))
        Int8Vectors.write(base, folder)

    def open(self, folder: Path) -> None:
        import faiss

        self.index = faiss.read_index(str(folder / "ivfpq.faiss"))
        self.index.nprobe = self.nprobe
        self.sq8 = Int8Vectors(folder)

    def search(self, q: np.ndarray, k: int) -> np.ndarray:
        cand = self.index.search(q[None, :], self.rescore)[1][0]
        return self.sq8.rescore(q, cand, k)

    def open_for_writes(self, folder: Path) -> None:
        self.open(folder)

    def insert(self, vecs: np.ndarray, start: int) -> None:
        ids = np.arange(start, start + vecs.shape[0], dtype=np.int64)
        self.index.add_with_ids(np.ascontiguousarray(vecs, np.float32), ids)
        self.sq8.append(vecs)

    def delete(self, keys: np.ndarray) -> None:
        import faiss

        self.index.remove_ids(faiss.IDSelectorBatch(keys.astype(np.int64)))


class IvfPqSq8Wide(IvfPqSq8):
    """The same index, rescoring 1,000 candidates and probing more lists: real questions
    meet many sections at almost the same similarity, and 48-byte codes order them
    too coarsely for 200 candidates to hold the exact top 10 (recall@10 0.90 at 200k)."""

    name = "ivfpq-sq8-r1000"
    sweep = (64, 128, 256, 512)
    rescore = 1000


class BinarySq8:
    name = "binary-sq8"

    def build(self, base: np.ndarray, folder: Path) -> None:
        import faiss

        n, dim = base.shape
        mean = np.asarray(base[:: max(1, n // 100_000)], np.float32).mean(0)
        index = faiss.IndexBinaryFlat(dim)
        for a, b in _chunks(n):
            index.add(np.packbits(np.asarray(base[a:b], np.float32) > mean, axis=1))
        faiss.write_index_binary(index, str(folder / "binary.faiss"))
        np.save(folder / "mean.npy", mean)
        Int8Vectors.write(base, folder)

    def open(self, folder: Path) -> None:
        import faiss

        self.index = faiss.read_index_binary(str(folder / "binary.faiss"))
        self.mean = np.load(folder / "mean.npy")
        self.sq8 = Int8Vectors(folder)

    def search(self, q: np.ndarray, k: int) -> np.ndarray:
        code = np.packbits(q[None, :] > self.mean, axis=1)
        cand = self.index.search(code, 2 * RESCORE)[1][0]
        return self.sq8.rescore(q, cand.astype(np.int64), k)


class KgAgentIndex:
    """kg-agent's own vector index (``kg_agent/store/vector_index.py``) as a graph uses
    it: exact up to ``EXACT_MAX`` vectors, else IVF-PQ (96-byte codes) probing an eighth
    of its lists (64 to 512) and rescoring 1,000 candidates from SQ8; writes add a
    segment and deletion files."""

    name = "kg-agent"

    def build(self, base: np.ndarray, folder: Path) -> None:
        import pyarrow as pa

        from kg_agent.store.vector_index import build_vector_index

        n, dim = base.shape

        def parts() -> Any:
            for a, b in _chunks(n):
                yield pa.array([str(i) for i in range(a, b)]), np.asarray(base[a:b], np.float32)

        (folder / "live").write_text(build_vector_index(folder, parts, dim))

    def open(self, folder: Path) -> None:
        from kg_agent.store.vector_index import FOLDER, VectorIndex

        self.folder = folder
        self.index = VectorIndex(folder / FOLDER, (folder / "live").read_text())

    def search(self, q: np.ndarray, k: int) -> np.ndarray:
        return np.asarray([int(sid) for sid, _ in self.index.search(q, k)], np.int64)

    def open_for_writes(self, folder: Path) -> None:
        self.open(folder)

    def insert(self, vecs: np.ndarray, start: int) -> None:
        import pyarrow as pa

        from kg_agent.store.vector_index import write_vector_changes

        ids = pa.array([str(i) for i in range(start, start + len(vecs))])
        self._write(write_vector_changes(self.index, lambda: [(ids, vecs)], []))

    def delete(self, keys: np.ndarray) -> None:
        from kg_agent.store.vector_index import write_vector_changes

        self._write(write_vector_changes(self.index, list, [str(int(k)) for k in keys]))

    def _write(self, manifest: str) -> None:
        from kg_agent.store.vector_index import VectorIndex

        self.index = VectorIndex(self.index.root, manifest)


class KgAgentIndexPq8(KgAgentIndex):
    """kg-agent's index with 8-bit PQ codes (96 bytes: its default before the fast-scan
    codes), searched with the same probes and rescoring: what the fast-scan layout gains in
    latency and loses in recall (the package's constants are set in this process only)."""

    name = "kg-agent-pq8"

    def build(self, base: np.ndarray, folder: Path) -> None:
        import kg_agent.store.vector_index as vi

        vi.FAST_SCAN_MIN_TRAIN = 1 << 62  # every segment takes the 8-bit branch
        super().build(base, folder)


INDEXES: dict[str, type] = {
    c.name: c
    for c in (
        Flat,
        KuzuHnsw,
        UsearchI8,
        IvfPqSq8,
        IvfPqSq8Wide,
        BinarySq8,
        KgAgentIndex,
        KgAgentIndexPq8,
    )
}


def build(name: str, base: np.ndarray, folder: Path) -> float:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    t0 = time.perf_counter()
    INDEXES[name]().build(base, folder)
    return time.perf_counter() - t0


def thread_search(index: Any) -> Any:
    """A search function one thread may call while others call theirs (Kùzu needs a
    connection per thread; faiss and usearch indexes are safe to share for reads)."""
    if isinstance(index, KuzuHnsw):
        import kuzu

        conn = kuzu.Connection(index.db)
        return lambda q, k: KuzuHnsw.search_on(conn, q, k)
    return index.search

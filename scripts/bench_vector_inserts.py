#!/usr/bin/env python3
"""What an update's vectors cost in Kùzu's HNSW index, and what they cost waiting beside it.

Why: an update's new vectors used to go straight into the index, and Kùzu inserts them
one at a time (at 100k articles, a 1% update's 1,905 vectors were ~40 s of its 90 s on a
GPU machine). Now they wait in ``UnindexedVector``, scanned exactly by every search, until
``MAX_UNINDEXED`` wait (``kg_agent/store/vectors.py``). This measures, on a copy of a
loaded graph, the two numbers behind that mark:

* ``insert``: one ``COPY`` of a batch of vectors into the indexed table (what an update
  paid, and what inserting the waiting vectors would pay: an update now compacts the
  graph instead), seconds and milliseconds a vector, per batch size;
* ``search``: the median of ``vector_search`` (the index's top 10 and the scan beside it)
  with that many vectors waiting, against none waiting;
* ``folds``: what an update now does past the mark instead of inserting: the recent index
  built anew from that many waiting vectors (``GraphStore.fold_unindexed``), seconds, and
  the median search afterwards, asking both indexes.

The vectors are the graph's own, moved a little (noise of 0.05, normalised again: like an
edited section's) under new ids, so the index sees text-like vectors, not random ones.

    .venv/bin/python scripts/bench_vector_inserts.py --db bench_out/update/n10000/base.kuzu \\
        --batches 100,500,2000,8000 --waiting 0,1000,5000,20000 --folds 2000,20000 \\
        --json bench_out/vector-inserts.json
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kg_agent.store import UNINDEXED, GraphStore  # noqa: E402
from kg_agent.store.layout import default_buffer_pool_mb, vector_index_need_mb  # noqa: E402


def copy_graph(src: Path, dst: Path) -> None:
    shutil.copy2(src, dst)
    indexes = Path(str(src) + ".indexes")
    if indexes.is_dir():
        shutil.copytree(indexes, Path(str(dst) + ".indexes"))


def moved_vectors(db: Path, n: int, seed: int) -> tuple[list[str], np.ndarray]:
    """``n`` of the graph's vectors (cycled if it has fewer), each moved a little."""
    with GraphStore.open(db, read_only=True) as store:
        rows = store.query(
            "MATCH (v:SectionVector) RETURN v.id AS id, v.embedding AS v LIMIT $n", {"n": n}
        )
    if not rows:
        raise SystemExit(f"{db} has no section vectors")
    base = np.asarray([r["v"] for r in rows], dtype=np.float32)
    base = base[np.arange(n) % len(base)]
    rng = np.random.default_rng(seed)
    moved = base + 0.05 * rng.standard_normal(base.shape).astype(np.float32)
    moved /= np.linalg.norm(moved, axis=1, keepdims=True)
    return [f"{rows[i % len(rows)]['id']}#{seed}-{i}" for i in range(n)], moved


def vector_file(path: Path, ids: list[str], vectors: np.ndarray) -> Path:
    flat = pa.array(vectors.reshape(-1))
    emb = pa.FixedSizeListArray.from_arrays(flat, vectors.shape[1])
    pq.write_table(
        pa.table(
            [pa.array(ids), pa.array(["x"] * len(ids)), emb], ["id", "text_hash", "embedding"]
        ),
        path,
    )
    return path


def bench_inserts(db: Path, batches: list[int], tmp: Path) -> list[dict[str, Any]]:
    rows = []
    for i, n in enumerate(batches):
        ids, vectors = moved_vectors(db, n, seed=100 + i)
        path = vector_file(tmp / f"insert-{n}.parquet", ids, vectors)
        with GraphStore.open(db, read_only=False) as store:
            t0 = time.perf_counter()
            store.copy_parquet("SectionVector", path)
            seconds = time.perf_counter() - t0
        rows.append({"vectors": n, "s": round(seconds, 3), "ms_each": round(seconds / n * 1e3, 2)})
        print(f"insert {n:>7,} vectors: {seconds:7.2f} s, {seconds / n * 1e3:6.2f} ms each")
    return rows


def bench_search(db: Path, waiting: list[int], queries: int, tmp: Path) -> list[dict[str, Any]]:
    _, asked = moved_vectors(db, queries, seed=7)
    rows: list[dict[str, Any]] = []
    have = 0
    for n in sorted(waiting):
        if n > have:
            ids, vectors = moved_vectors(db, n - have, seed=200 + n)
            with GraphStore.open(db, read_only=False) as store:
                # what every write does first: a graph older than the table gains it
                store.ensure_schema(dimension=store.dimension, model=store.meta()["model"])
                store.copy_parquet(UNINDEXED, vector_file(tmp / f"wait-{n}.parquet", ids, vectors))
            have = n
        with GraphStore.open(db, read_only=True) as store:
            assert store.unindexed_count() == n
        ms = _median_search_ms(db, asked)
        rows.append({"waiting": n, "search_ms": round(ms, 2)})
        print(f"search with {n:>7,} waiting: {ms:6.2f} ms (median of {queries})")
    return rows


def _median_search_ms(db: Path, asked: np.ndarray) -> float:
    with GraphStore.open(db, read_only=True) as store:
        store.vector_search(asked[0].tolist(), 10)  # warm
        times = []
        for q in asked:
            t0 = time.perf_counter()
            store.vector_search(q.tolist(), 10)
            times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def bench_folds(src: Path, sizes: list[int], queries: int, tmp: Path) -> list[dict[str, Any]]:
    _, asked = moved_vectors(src, queries, seed=7)
    rows: list[dict[str, Any]] = []
    for n in sizes:
        db = tmp / f"fold-{n}.kuzu"
        copy_graph(src, db)
        ids, vectors = moved_vectors(db, n, seed=300 + n)
        with GraphStore.open(db, read_only=False) as store:
            store.ensure_schema(dimension=store.dimension, model=store.meta()["model"])
            store.copy_parquet(UNINDEXED, vector_file(tmp / f"fold-{n}.parquet", ids, vectors))
            dimension = store.dimension
        pool = default_buffer_pool_mb(read_only=False, need_mb=vector_index_need_mb(n, dimension))
        with GraphStore.open(db, read_only=False, buffer_pool_mb=pool) as store:
            t0 = time.perf_counter()
            store.fold_unindexed()
            seconds = time.perf_counter() - t0
        ms = _median_search_ms(db, asked)
        rows.append({"vectors": n, "fold_s": round(seconds, 3), "search_ms": round(ms, 2)})
        print(f"fold of {n:>7,} vectors: {seconds:7.2f} s; then search {ms:6.2f} ms")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", type=Path, required=True, help="a loaded graph with its vector index")
    ap.add_argument("--batches", default="100,500,2000")
    ap.add_argument("--waiting", default="0,1000,5000,20000")
    ap.add_argument("--folds", default="2000,20000", help="waiting vectors folded, each on a copy")
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    with GraphStore.open(args.db, read_only=True) as store:
        if not store.has_vector_index():
            raise SystemExit(f"{args.db} has no vector index")
        vectors = store.table_counts()["SectionVector"]
    out: dict[str, Any] = {
        "machine": platform.processor() or platform.machine(),
        "graph": str(args.db),
        "indexed_vectors": vectors,
    }
    with tempfile.TemporaryDirectory(prefix="bench-vectors-") as tmp_name:
        tmp = Path(tmp_name)
        for part in ("inserts", "search"):
            db = tmp / f"{part}.kuzu"  # each on its own copy of the graph
            copy_graph(args.db, db)
            if part == "inserts":
                out["inserts"] = bench_inserts(db, [int(b) for b in args.batches.split(",")], tmp)
            else:
                waiting = [int(w) for w in args.waiting.split(",")]
                out["search"] = bench_search(db, waiting, args.queries, tmp)
        sizes = [int(f) for f in args.folds.split(",") if f]
        out["folds"] = bench_folds(args.db, sizes, args.queries, tmp)
    print(f"\nindexed vectors: {vectors:,}")
    print("| batch into the index | s | ms a vector |\n|---:|---:|---:|")
    for r in out["inserts"]:
        print(f"| {r['vectors']:,} | {r['s']} | {r['ms_each']} |")
    print("\n| vectors waiting | search ms |\n|---:|---:|")
    for r in out["search"]:
        print(f"| {r['waiting']:,} | {r['search_ms']} |")
    print("\n| vectors folded | fold s | search ms after |\n|---:|---:|---:|")
    for r in out["folds"]:
        print(f"| {r['vectors']:,} | {r['fold_s']} | {r['search_ms']} |")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()

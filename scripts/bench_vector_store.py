#!/usr/bin/env python3
"""Where a graph stores its section vectors: disk, build time and reads by id, per size.

Why: a graph of ``--vector-store graph`` keeps every vector twice, float32 in Kùzu's
``SectionVector.embedding`` and again in its index; ``--vector-store index`` keeps the
keys in Kùzu (the column NULL) and the index's copy alone (store/vectors.py). This
builds both, through ``GraphStore`` as a load does, from the vectors
``bench_vectors.py`` sampled (``base-N.npy``: the real all-MiniLM vectors, then vectors
drawn from their distribution; a prefix of the largest is each size), and measures:

* the graph file and the index folder in bytes (Kùzu checkpointed), per section, and
  their projection to English's 32.7M sections (bytes grow linearly with rows);
* the time to ``COPY`` the rows and build the index;
* reading 200 sections' vectors by id (all of them, in a smaller graph), as
  ``sections_of_articles`` does: primary-key lookups in Kùzu, or
  :meth:`VectorIndex.vectors_of` (median of 20 rounds).

    .venv/bin/python scripts/bench_vector_store.py --base /tmp/vec-work/base-5000000.npy \\
        --sizes 200000,1000000 --work /tmp/vs-work --json bench_out/vector_store.json
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_scale import cpu_model  # noqa: E402

from kg_agent.store import GraphStore  # noqa: E402

ENGLISH_SECTIONS = 32_700_000
_CHUNK = 200_000


def _files(base: np.ndarray, n: int, out: Path) -> list[Path]:
    """Parquet files of ``SectionVector`` rows (id, text hash, embedding) for ``n`` sections."""
    out.mkdir(parents=True, exist_ok=True)
    files = []
    dim = base.shape[1]
    for a in range(0, n, _CHUNK):
        b = min(n, a + _CHUNK)
        ids = pa.array([f"Article {i // 4}::{i % 4:04d}" for i in range(a, b)])
        hashes = pa.array([f"{i:016x}" for i in range(a, b)])
        flat = pa.array(np.ascontiguousarray(base[a:b], np.float32).reshape(-1))
        table = pa.table(
            [ids, hashes, pa.FixedSizeListArray.from_arrays(flat, dim)],
            names=["id", "text_hash", "embedding"],
        )
        files.append(out / f"v-{a:09d}.parquet")
        pq.write_table(table, files[-1])
    return files


def _dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def measure(base: np.ndarray, n: int, store_kind: str, work: Path) -> dict[str, Any]:
    root = work / f"{store_kind}-{n}"
    shutil.rmtree(root, ignore_errors=True)
    files = _files(base, n, root / "rows")
    db = root / "g.kuzu"
    dim = base.shape[1]
    with GraphStore.open(db, read_only=False, create=True) as store:
        store.ensure_schema(dimension=dim, model="bench", vector_store=store_kind)
        t0 = time.perf_counter()
        store.copy_parquet("SectionVector", files)
        copy_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        if store_kind == "index":
            store.rebuild_vector_index(files)
        else:
            store.build_vector_index(force=True)
        index_s = time.perf_counter() - t0
        store._run("CHECKPOINT")
    shutil.rmtree(root / "rows")
    graph_bytes = db.stat().st_size
    index_bytes = _dir_bytes(Path(f"{db}.indexes") / "vectors")
    rng = np.random.default_rng(0)
    rounds = []
    with GraphStore.open(db, read_only=True) as store:
        index = store.vector_index()
        assert index is not None
        for _ in range(20):
            pick = rng.choice(n, min(n, 200), replace=False)
            ids = [f"Article {i // 4}::{i % 4:04d}" for i in pick]
            t0 = time.perf_counter()
            if store_kind == "index":
                got = index.vectors_of(ids)
            else:
                got = {
                    i: store._pk("MATCH (v:SectionVector {id: $i}) RETURN v.embedding", {"i": i})
                    for i in ids
                }
            rounds.append((time.perf_counter() - t0) * 1000)
            assert len(got) == len(ids)
    shutil.rmtree(root)
    total = graph_bytes + index_bytes
    return {
        "sections": n,
        "vector_store": store_kind,
        "graph_mib": round(graph_bytes / 2**20, 1),
        "index_mib": round(index_bytes / 2**20, 1),
        "bytes_per_section": round(total / n, 1),
        "english_gib": round(total / n * ENGLISH_SECTIONS / 2**30, 1),
        "copy_s": round(copy_s, 1),
        "index_s": round(index_s, 1),
        "read_200_by_id_ms": round(statistics.median(rounds), 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--base",
        type=Path,
        required=True,
        help="a base-N.npy of bench_vectors.py, or a graph (its own vectors)",
    )
    ap.add_argument("--sizes", default="200000,1000000")
    ap.add_argument("--stores", default="graph,index")
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    if args.base.suffix == ".npy":
        base = np.load(args.base, mmap_mode="r")
    else:  # a graph: its own vectors (a toy run)
        with GraphStore.open(args.base, read_only=True) as store:
            base = store.section_embeddings()[1]
    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        if n > base.shape[0]:
            sys.exit(f"{args.base} holds {base.shape[0]:,} vectors, not {n:,}")
        for kind in args.stores.split(","):
            rows.append(measure(base, n, kind, args.work))
            print(json.dumps(rows[-1]), flush=True)
    head = list(rows[0])
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(str(r[k]) for k in head) + " |")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps({"machine": cpu_model(), "command": sys.argv, "rows": rows}, indent=1)
        )


if __name__ == "__main__":
    main()

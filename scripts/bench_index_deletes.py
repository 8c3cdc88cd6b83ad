#!/usr/bin/env python3
"""What deleted rows do to Kùzu's HNSW index: recall of its top k against an exact search.

Why: an update deletes the vectors of the sections it rewrites from the main index, and
Kùzu 0.11.3's search never walks through a deleted row. This measures how much of the
exact top k the index still finds once a share of its vectors is deleted, and how often
it answers with fewer than k hits, over several builds (the build is multi-threaded, so
each is a different graph). It is what ``MAX_DELETED_SHARE`` in
``kg_agent/ingest/maintain.py`` rests on (an update or a delete past it compacts).

Random unit vectors, one table per build, through ``GraphStore`` as the package writes them:

    .venv/bin/python scripts/bench_index_deletes.py --vectors 2000 --shares 0.5,0.8,0.95 \\
        --builds 5 --json bench_out/index-deletes.json
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kg_agent.store import VECTOR_INDEX, GraphStore  # noqa: E402


def unit_vectors(n: int, dim: int, rng: np.random.Generator) -> np.ndarray:
    v = rng.standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def one_build(
    tmp: Path, n: int, dim: int, share: float, queries: int, k: int, seed: int
) -> dict[str, Any]:
    """Build the index over ``n`` vectors, delete ``share`` of them, ask ``queries``."""
    rng = np.random.default_rng(seed)
    vectors = unit_vectors(n, dim, rng)
    ids = [f"Article {i}::0000" for i in range(n)]
    path = tmp / f"v-{seed}.parquet"
    pq.write_table(
        pa.table(
            [
                pa.array(ids),
                pa.array(["h"] * n),
                pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), dim),
            ],
            names=["id", "text_hash", "embedding"],
        ),
        path,
    )
    db = tmp / f"g-{share}-{seed}.kuzu"
    doomed = rng.random(n) < share
    with GraphStore.open(db, read_only=False, create=True) as store:
        store.ensure_schema(dimension=dim, model="random")
        store.copy_parquet("SectionVector", path)
        assert store.build_vector_index()
        store.delete_vectors([ids[i] for i in np.flatnonzero(doomed)])
    live = np.flatnonzero(~doomed)
    want = min(k, len(live))
    short = found = 0
    with GraphStore.open(db, read_only=True) as store:
        for q in unit_vectors(queries, dim, rng):
            rows = store.query(
                f"CALL QUERY_VECTOR_INDEX('SectionVector', '{VECTOR_INDEX}', $q, $k) "
                "RETURN node.id AS id",
                {"q": q.tolist(), "k": k},
            )
            got = {r["id"] for r in rows}
            exact = {ids[i] for i in live[np.argsort(-(vectors[live] @ q))[:want]]}
            short += len(rows) < want
            found += len(got & exact)
    return {"recall": found / (want * queries), "short": short / queries}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vectors", type=int, default=2000)
    ap.add_argument("--dim", type=int, default=16)
    ap.add_argument("--shares", default="0,0.5,0.8,0.95", help="shares of the vectors deleted")
    ap.add_argument("--builds", type=int, default=5)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    out: dict[str, Any] = {
        "machine": platform.processor() or platform.machine(),
        "vectors": args.vectors,
        "dim": args.dim,
        "k": args.k,
        "rows": [],
    }
    with tempfile.TemporaryDirectory(prefix="bench-deletes-") as tmp_name:
        for share in (float(s) for s in args.shares.split(",")):
            builds = [
                one_build(Path(tmp_name), args.vectors, args.dim, share, args.queries, args.k, seed)
                for seed in range(args.builds)
            ]
            row = {
                "deleted": share,
                "recall": [round(b["recall"], 3) for b in builds],
                "short": [round(b["short"], 3) for b in builds],
            }
            out["rows"].append(row)
            print(f"deleted {share:.0%}: recall {row['recall']}, short answers {row['short']}")
    print(
        f"\n{args.vectors:,} vectors of {args.dim} dimensions, top {args.k}, "
        f"{args.builds} builds of {args.queries} queries each"
    )
    print("| deleted | recall@k (each build) | answers with fewer than k hits |")
    print("|---:|---|---|")
    for r in out["rows"]:
        recall = ", ".join(f"{x:.3f}" for x in r["recall"])
        short = ", ".join(f"{x:.0%}" for x in r["short"])
        print(f"| {r['deleted']:.0%} | {recall} | {short} |")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()

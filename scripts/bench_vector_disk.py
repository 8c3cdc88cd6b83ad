#!/usr/bin/env python3
"""What section vectors cost on disk in Kùzu 0.11.3, and what reduces it.

Why: a full English Wikipedia is ~33M sections; at 384 float32 dimensions the vectors
alone are ~50 GB before the HNSW index. This measures, in fresh databases, the bytes a
vector takes in a ``FLOAT[dim]`` column and in the HNSW index (default and smaller
neighbour lists), the build time and the recall@10 each keeps against an exact scan,
and the other storage Kùzu 0.11.3 offers (``INT8[dim]`` quantised vectors, which its
vector index cannot use, scanned exactly instead), then projects per million sections
and for a full English Wikipedia.

    .venv/bin/python scripts/bench_vector_disk.py --n 50000 --json bench_out/vector_disk.json

Vectors are real: passages of the 2WikiMultihopQA corpus embedded with the default model
(``--real N`` of them), tiled to ``--n`` with small noise and renormalised; queries are
other real passages. ``--dim`` and random vectors (``--random``) are for comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "data" / "multihop" / "2wikimultihopqa" / "corpus.json"
ENWIKI_SECTIONS = 32_700_000

VARIANTS: dict[str, dict[str, Any]] = {
    "float32": {"what": "FLOAT[dim] column, no index"},
    "hnsw-default": {"what": "FLOAT[dim] + HNSW (mu 30, ml 60: Kùzu's defaults)", "index": ""},
    "hnsw-small": {"what": "FLOAT[dim] + HNSW (mu 15, ml 30)", "index": ", mu := 15, ml := 30"},
    "int8": {"what": "INT8[dim] column (scaled by 127), no index possible: exact scan"},
}


def real_vectors(n_real: int, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    from kg_agent.embedding import Embedder

    passages = [f"{p['title']}: {p['text']}" for p in json.loads(DATA.read_text())]
    emb = Embedder()
    base = emb.embed(passages[: n_real + 100])
    queries, base = base[n_real:], base[:n_real]
    reps = -(-n // len(base))
    tiled = np.tile(base, (reps, 1))[:n]
    tiled = tiled + rng.normal(0, 0.02, tiled.shape).astype(np.float32)
    tiled /= np.linalg.norm(tiled, axis=1, keepdims=True)
    return tiled.astype(np.float32), queries.astype(np.float32)


def worker(variant: str, vec_file: str, q_file: str, work: str) -> dict[str, Any]:
    import kuzu
    import pyarrow as pa
    import pyarrow.parquet as pq

    vecs = np.load(vec_file)
    queries = np.load(q_file)
    n, dim = vecs.shape
    os.makedirs(work, exist_ok=True)
    col = "INT8" if variant == "int8" else "FLOAT"
    data = np.clip(np.round(vecs * 127), -127, 127).astype(np.int8) if variant == "int8" else vecs
    arrow_type = pa.int8() if variant == "int8" else pa.float32()
    flat = pa.array(data.reshape(-1), type=arrow_type)
    pq.write_table(
        pa.table(
            {
                "id": [f"s{i:08d}" for i in range(n)],
                "e": pa.FixedSizeListArray.from_arrays(flat, dim),
            }
        ),
        f"{work}/v.parquet",
    )
    db_path = f"{work}/v.kuzu"
    db = kuzu.Database(db_path, buffer_pool_size=4 * 2**30)
    c = kuzu.Connection(db)
    c.execute(f"CREATE NODE TABLE V(id STRING PRIMARY KEY, e {col}[{dim}])")
    c.execute(f"COPY V FROM '{work}/v.parquet'")
    c.execute("CHECKPOINT")
    table_bytes = os.path.getsize(db_path)
    out: dict[str, Any] = {"variant": variant, "vectors": n, "dim": dim, "table_bytes": table_bytes}
    spec = VARIANTS[variant]
    if "index" in spec:
        t = time.perf_counter()
        c.execute(f"CALL CREATE_VECTOR_INDEX('V', 'vi', 'e', metric := 'cosine'{spec['index']})")
        out["build_s"] = round(time.perf_counter() - t, 1)
        c.execute("CHECKPOINT")
        out["index_bytes"] = os.path.getsize(db_path) - table_bytes
        hits, lat = 0, []
        for q in queries:
            exact = set(np.argsort(-(vecs @ q))[:10].tolist())
            t = time.perf_counter()
            rows = c.execute(
                "CALL QUERY_VECTOR_INDEX('V', 'vi', $q, 10) RETURN node.id", {"q": q.tolist()}
            ).get_all()
            lat.append(time.perf_counter() - t)
            hits += len(exact & {int(r[0][1:]) for r in rows})
        out["recall_at_10"] = round(hits / (10 * len(queries)), 4)
        out["query_ms_p50"] = round(1000 * sorted(lat)[len(lat) // 2], 2)
    elif variant == "int8":
        q8 = data.astype(np.float32) / 127
        hits = 0
        for q in queries:
            exact = set(np.argsort(-(vecs @ q))[:10].tolist())
            hits += len(exact & set(np.argsort(-(q8 @ q))[:10].tolist()))
        out["recall_at_10"] = round(hits / (10 * len(queries)), 4)
    c.close()
    db.close()
    out["bytes_per_vector"] = round(os.path.getsize(db_path) / n, 1)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=50_000, help="vectors in each table")
    ap.add_argument("--real", type=int, default=3000, help="real passages embedded")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--work", type=Path, default=ROOT / "bench_out" / "vector_disk")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(*args.worker)))
        return
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if not DATA.exists():
        raise SystemExit(f"{DATA} not found: this benchmark reads ../shared/data")
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    rng = np.random.default_rng(0)
    vecs, queries = real_vectors(args.real, args.n, rng)
    np.save(args.work / "v.npy", vecs)
    np.save(args.work / "q.npy", queries)
    rows = []
    for variant in args.variants.split(","):
        proc = subprocess.run(
            [
                sys.executable,
                __file__,
                "--worker",
                variant,
                str(args.work / "v.npy"),
                str(args.work / "q.npy"),
                str(args.work / variant),
            ],
            capture_output=True,
            text=True,
        )
        shutil.rmtree(args.work / variant, ignore_errors=True)
        if proc.returncode != 0:
            rows.append({"variant": variant, "error": proc.stderr.strip().splitlines()[-1][:200]})
        else:
            rows.append(json.loads(proc.stdout))
        r = rows[-1]
        r["what"] = VARIANTS[variant]["what"]
        if "bytes_per_vector" in r:
            r["gib_per_million"] = round(r["bytes_per_vector"] * 1e6 / 2**30, 2)
            r["enwiki_gib"] = round(r["bytes_per_vector"] * ENWIKI_SECTIONS / 2**30, 1)
        print(json.dumps(r), flush=True)
    print()
    print(
        f"{'variant':<14} {'B/vector':>9} {'GiB/1M':>7} {'enwiki GiB':>10}"
        f" {'build s':>8} {'R@10':>6}"
    )
    for r in rows:
        if "error" in r:
            print(f"{r['variant']:<14} error: {r['error']}")
            continue
        print(
            f"{r['variant']:<14} {r['bytes_per_vector']:>9} {r['gib_per_million']:>7} "
            f"{r['enwiki_gib']:>10} {r.get('build_s', ''):>8} {r.get('recall_at_10', ''):>6}"
        )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"command": " ".join(sys.argv), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()

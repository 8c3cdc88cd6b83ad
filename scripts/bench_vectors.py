#!/usr/bin/env python3
"""Vector indexes at Wikipedia's size: build time, memory, disk, recall and latency.

Why: semantic search is the first retrieval step, and English Wikipedia has ~32.7M
sections. The graph's own index (Kùzu 0.11.3's HNSW inside the database) builds at
~1,100-1,900 vectors/s on 2 cores and costs 1.85 GiB a million on disk. This measures the
candidates of ``scripts/_vector_indexes.py`` on real all-MiniLM-L6-v2 vectors, fits how each
figure grows, and projects English, so the index is chosen by measurement.

    # 1. real vectors: the sections of a scale dump loaded without embeddings (resumable)
    kg-agent load bench_out/dumps/synthwiki-100000-pages-articles.xml --db /tmp/g.kuzu \\
        --embeddings none --limit 45000
    .venv/bin/python scripts/bench_vectors.py embed --db /tmp/g.kuzu --out bench_out/vectors
    # 2. the indexes, per size
    .venv/bin/python scripts/bench_vectors.py run --vectors bench_out/vectors \\
        --work /tmp/vec-work --sizes 200000,1000000,2000000,5000000 \\
        --json bench_out/vectors.json

**Vectors past the real ones** are sampled from the real ones' distribution: each is a real
vector (chosen uniformly) plus Gaussian noise with the real vectors' per-dimension spread,
scaled so that its cosine to that parent equals the median cosine of a real vector to its
nearest real neighbour, then renormalised. The neighbourhood density of the real set is
kept; the clusters of real topics stay clusters.

**Recall is always measured on real queries** (the questions of the multi-hop dev sets and
our plain questions, embedded as ``ask`` embeds them) against exact float32 search over the
same vectors. The last :data:`HELD_OUT` real vectors are never in a base: they are what the
insert measurement adds.

Each index is built in a fresh process (its peak RSS is the build's), saved, then opened in
another fresh process for search (its peak RSS is what a search needs: the index in memory
plus the pages of memory-mapped files that the queries read). Latency is one query at a
time on one thread, then 8 threads querying at once.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import _real_vectors  # noqa: E402
import _vector_indexes as vi  # noqa: E402
from bench_scale import cpu_model  # noqa: E402

ENWIKI_SECTIONS = 32_700_000
HELD_OUT = 10_000  # at most: a tenth of the real vectors when they are fewer
WRITES = 10_000  # vectors inserted, then as many deleted (at most the held-out)
CONCURRENT = 8
EPS = 1e-3  # ann-benchmarks' tolerance on the 10th similarity


def anon_rss_mib() -> float:
    """Memory this process holds that is not a file's pages (``RssAnon``, now): what a
    search cannot give back, unlike the pages of memory-mapped files it has read, which
    count in the peak RSS but are the kernel's page cache to reclaim."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) / 1024
    return 0.0


def peak_rss_mib() -> float:
    """This process's peak resident memory (``VmHWM``: unlike ``ru_maxrss``, it starts
    afresh at ``exec``, so a child does not report its parent's peak)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# ---------------------------------------------------------------------- vectors
def held_out(real: np.ndarray) -> int:
    return min(HELD_OUT, real.shape[0] // 10)


def real_vectors(folder: Path) -> tuple[np.ndarray, np.ndarray]:
    path = folder / "sections.npy"
    if not path.exists():
        sys.exit(f"no {path}: run 'bench_vectors.py embed' first")
    return np.load(path, mmap_mode="r"), np.load(folder / "queries.npy")


def noise_scale(real: np.ndarray, rng: np.random.Generator) -> tuple[float, np.ndarray, float]:
    """(sigma, per-dimension spread, median nearest-neighbour cosine) of the real set."""
    pick = rng.choice(real.shape[0], min(2000, real.shape[0]), replace=False)
    sample = np.asarray(real[np.sort(pick)], np.float32)
    best = np.full(sample.shape[0], -1.0, np.float32)
    for a, b in vi._chunks(real.shape[0]):
        sims = sample @ np.asarray(real[a:b], np.float32).T
        sims[sims > 0.9999] = -1.0  # the sample vector itself
        best = np.maximum(best, sims.max(1))
    m = float(np.median(best))
    spread = np.asarray(real[:: max(1, real.shape[0] // 50_000)], np.float32).std(0)
    sigma = math.sqrt(max(1.0 / (m * m) - 1.0, 1e-6) / float((spread**2).sum()))
    return sigma, spread, m


def base_file(work: Path, real: np.ndarray, n_max: int) -> tuple[np.ndarray, dict[str, Any]]:
    """A file of ``n_max`` unit vectors: the real ones (but the held-out), then sampled."""
    path = work / f"base-{n_max}.npy"
    info_path = work / f"base-{n_max}.json"
    n_real = real.shape[0] - held_out(real)
    if path.exists() and info_path.exists():
        return np.load(path, mmap_mode="r"), json.loads(info_path.read_text())
    rng = np.random.default_rng(7)
    out = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(n_max, real.shape[1]))
    take = min(n_real, n_max)
    for a, b in vi._chunks(take):
        out[a:b] = real[a:b]
    info: dict[str, Any] = {"real": take, "sampled": n_max - take}
    if n_max > take:
        sigma, spread, m = noise_scale(np.asarray(real[:n_real]), rng)
        info.update(sigma=sigma, median_nn_cosine=m)
        for a, b in vi._chunks(n_max - take):
            parents = np.asarray(real[np.sort(rng.integers(0, n_real, b - a))], np.float32)
            x = parents + sigma * spread * rng.standard_normal(parents.shape, dtype=np.float32)
            x /= np.linalg.norm(x, axis=1, keepdims=True)
            out[take + a : take + b] = x
    out.flush()
    del out
    info_path.write_text(json.dumps(info))
    return np.load(path, mmap_mode="r"), info


def ground_truth(work: Path, base: np.ndarray, n: int, queries: np.ndarray) -> np.ndarray:
    """Exact float32 top-:data:`vi.K` of every query over ``base[:n]`` (cached, with
    their similarities in ``gt-N-sims.npy``)."""
    path = work / f"gt-{n}.npy"
    sims_path = work / f"gt-{n}-sims.npy"
    if path.exists() and sims_path.exists():
        return np.load(path)
    best_s = np.full((queries.shape[0], vi.K), -np.inf, np.float32)
    best_i = np.full((queries.shape[0], vi.K), -1, np.int64)
    for a, b in vi._chunks(n, 262_144):
        sims = queries @ np.asarray(base[a:b], np.float32).T
        top = np.argpartition(-sims, vi.K, axis=1)[:, : vi.K]
        s = np.take_along_axis(sims, top, 1)
        all_s = np.concatenate([best_s, s], 1)
        all_i = np.concatenate([best_i, top + a], 1)
        keep = np.argsort(-all_s, axis=1)[:, : vi.K]
        best_s = np.take_along_axis(all_s, keep, 1)
        best_i = np.take_along_axis(all_i, keep, 1)
    np.save(path, best_i)
    np.save(sims_path, best_s)
    return best_i


# ---------------------------------------------------------------------- one measurement
def one(args: argparse.Namespace) -> dict[str, Any]:
    """Run in a fresh process: build, search or writes of one index at one size."""
    import faiss

    work: Path = args.work
    folder = work / f"{args.index}-{args.n}"
    base = np.load(work / f"base-{args.n_max}.npy", mmap_mode="r")[: args.n]
    if args.phase == "build":
        faiss.omp_set_num_threads(os.cpu_count() or 1)
        seconds = vi.build(args.index, base, folder)
        return {
            "build_s": round(seconds, 2),
            "build_peak_rss_mib": round(peak_rss_mib(), 1),
            "disk_mib": round(vi.disk_bytes(folder) / 2**20, 1),
        }
    real, queries = real_vectors(args.vectors)
    if args.phase == "search":
        faiss.omp_set_num_threads(1)
        index = vi.INDEXES[args.index]()
        index.open(folder)
        gt = np.load(work / f"gt-{args.n}.npy")
        kth = np.load(work / f"gt-{args.n}-sims.npy")[:, -1]
        truth = (gt, kth, base)
        out: dict[str, Any] = {}
        sweep = getattr(index, "sweep", None)
        if sweep:  # a setting that trades latency for recall: every value, then the chosen
            out["sweep"] = {}
            for value in sweep:
                index.set_probe(value)
                out["sweep"][str(value)] = single_latency(index, queries, truth)
            ok = [v for v in sweep if out["sweep"][str(v)]["recall_at_10_eps"] >= vi.RECALL_GOAL]
            index.set_probe(ok[0] if ok else sweep[-1])
            out["probe"] = ok[0] if ok else sweep[-1]
        out.update(single_latency(index, queries, truth))
        conc = concurrent_latency(index, queries)
        out.update(
            p50_ms_8=round(statistics.median(conc), 2),
            p95_ms_8=round(float(np.percentile(conc, 95)), 2),
            search_peak_rss_mib=round(peak_rss_mib(), 1),
            search_anon_rss_mib=round(anon_rss_mib(), 1),
        )
        return out
    # writes: insert the held-out real vectors, then delete as many keys of the base
    faiss.omp_set_num_threads(os.cpu_count() or 1)
    index = vi.INDEXES[args.index]()
    if not hasattr(index, "insert"):
        return {}
    index.open_for_writes(folder)
    new = np.asarray(real[real.shape[0] - held_out(real) :][:WRITES], np.float32)
    t0 = time.perf_counter()
    index.insert(new, args.n)
    ins = time.perf_counter() - t0
    probe = min(200, len(new))
    found = sum(int(args.n + i in index.search(new[i], vi.K).tolist()) for i in range(probe))
    keys = np.random.default_rng(3).choice(args.n, min(len(new), args.n), replace=False)
    t0 = time.perf_counter()
    index.delete(keys)
    dele = time.perf_counter() - t0
    return {
        "insert_ms_per_vector": round(ins * 1000 / WRITES, 4),
        "delete_ms_per_vector": round(dele * 1000 / len(keys), 4),
        "inserted_found_self": round(found / 200, 3),
    }


def single_latency(
    index: Any, queries: np.ndarray, truth: tuple[np.ndarray, np.ndarray, np.ndarray]
) -> dict[str, float]:
    """Latency one query at a time, and recall@10 two ways: ``recall_at_10``, the share of
    the exact top 10's ids returned; ``recall_at_10_eps``, ann-benchmarks' measure, the
    share of returned vectors at least as similar as the exact 10th less :data:`EPS`
    (which counts a near-tie as found: real questions meet many sections at almost the
    same similarity, see docs/BENCHMARKS.md)."""
    gt, kth, base = truth
    for q in queries[:20]:  # warm the first reads
        index.search(q, vi.K)
    lat, hits, near = [], 0, 0
    for q, want, floor in zip(queries, gt, kth, strict=True):
        t0 = time.perf_counter()
        got = index.search(q, vi.K)
        lat.append((time.perf_counter() - t0) * 1000)
        hits += len(set(got.tolist()) & set(want.tolist()))
        ids = np.sort(np.asarray(got, np.int64)[: vi.K])
        if ids.size:
            sims = np.asarray(base[ids], np.float32) @ q
            near += int((sims >= floor - EPS).sum())
    return {
        "recall_at_10": round(hits / (vi.K * len(queries)), 4),
        "recall_at_10_eps": round(near / (vi.K * len(queries)), 4),
        "p50_ms": round(statistics.median(lat), 2),
        "p95_ms": round(float(np.percentile(lat, 95)), 2),
    }


def concurrent_latency(index: Any, queries: np.ndarray) -> list[float]:
    lat: list[float] = []
    lock = threading.Lock()

    def worker(part: np.ndarray) -> None:
        search = vi.thread_search(index)
        mine = []
        for q in part:
            t0 = time.perf_counter()
            search(q, vi.K)
            mine.append((time.perf_counter() - t0) * 1000)
        with lock:
            lat.extend(mine)

    threads = [
        threading.Thread(target=worker, args=(queries[i::CONCURRENT],)) for i in range(CONCURRENT)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return lat


def child(args: argparse.Namespace, phase: str, index: str, n: int, n_max: int) -> dict[str, Any]:
    cmd = [
        sys.executable,
        __file__,
        "one",
        "--phase",
        phase,
        "--index",
        index,
        "--n",
        str(n),
        "--n-max",
        str(n_max),
        "--work",
        str(args.work),
        "--vectors",
        str(args.vectors),
    ]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["?"]
        return {"error": f"{phase} failed: {tail[0][:200]}"}
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    out[f"{phase}_wall_s"] = round(time.perf_counter() - t0, 1)
    return out


# ---------------------------------------------------------------------- run, fit, report
def fit(points: list[tuple[int, float]]) -> tuple[float, float] | None:
    """(a, b) of ``y = a * N^b`` by least squares in log-log (None under 2 sizes)."""
    pts = [(n, y) for n, y in points if y and y > 0]
    if len(pts) < 2:
        return None
    x = np.log([p[0] for p in pts])
    y = np.log([p[1] for p in pts])
    b, log_a = np.polyfit(x, y, 1)
    return float(math.exp(log_a)), float(b)


FIGURES = (
    "build_s",
    "disk_mib",
    "search_peak_rss_mib",
    "search_anon_rss_mib",
    "p50_ms",
    "build_peak_rss_mib",
)


def project(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in sorted({r["index"] for r in rows}):
        mine = [r for r in rows if r["index"] == name and "error" not in r]
        big = [r for r in mine if r["n"] >= 1_000_000] or mine
        per: dict[str, Any] = {}
        for fig in FIGURES:
            ab = fit([(r["n"], r.get(fig)) for r in big])
            if ab is not None:
                a, b = ab
                per[fig] = {
                    "a": a,
                    "b": round(b, 3),
                    "english": round(a * ENWIKI_SECTIONS**b, 1),
                    "from_sizes": [r["n"] for r in big],
                }
        out[name] = per
    return out


def print_table(rows: list[dict[str, Any]]) -> None:
    cols = (
        "index",
        "n",
        "build_s",
        "build_peak_rss_mib",
        "disk_mib",
        "search_peak_rss_mib",
        "recall_at_10",
        "recall_at_10_eps",
        "p50_ms",
        "p95_ms",
        "p50_ms_8",
        "p95_ms_8",
        "insert_ms_per_vector",
        "delete_ms_per_vector",
    )
    print(" | ".join(cols))
    for r in rows:
        print(" | ".join(str(r.get(c, r.get("error", "")) if c != "index" else r[c]) for c in cols))


def run(args: argparse.Namespace) -> None:
    args.work.mkdir(parents=True, exist_ok=True)
    if args.embed_db is not None and not (args.vectors / "sections.npy").exists():
        _real_vectors.embed_all(args.embed_db, args.vectors, args.shared, args.embed_limit)
    real, queries = real_vectors(args.vectors)
    sizes = sorted(int(s) for s in args.sizes.split(","))
    n_max = max(sizes)
    base, info = base_file(args.work, real, n_max)
    report: dict[str, Any] = {
        "machine": {"cpu": cpu_model(), "cores": os.cpu_count(), "platform": platform.platform()},
        "vectors": {
            "real_sections": int(real.shape[0]),
            "held_out": HELD_OUT,
            "queries": int(queries.shape[0]),
            "base": info,
        },
        "rows": [],
    }
    out_path: Path = args.json
    if out_path.exists():
        report["rows"] = json.loads(out_path.read_text()).get("rows", [])
    done = {(r["index"], r["n"]) for r in report["rows"] if "error" not in r}
    for n in sizes:
        ground_truth(args.work, base, n, queries)
        for name in args.indexes.split(","):
            if (name, n) in done:
                continue
            if name == "kuzu-hnsw" and n > args.kuzu_max:
                continue
            if name == "usearch-i8" and n > args.usearch_max:
                continue
            row: dict[str, Any] = {"index": name, "n": n, "real": min(n, info["real"])}
            print(f"[{time.strftime('%H:%M:%S')}] {name} at {n:,}: build", flush=True)
            row.update(child(args, "build", name, n, n_max))
            if "error" not in row:
                row.update(child(args, "search", name, n, n_max))
            if "error" not in row and not args.no_writes:
                row.update(child(args, "writes", name, n, n_max))
            report["rows"].append(row)
            print(json.dumps(row), flush=True)
            if not args.keep:
                vi.shutil.rmtree(args.work / f"{name}-{n}", ignore_errors=True)
            report["projection"] = project(report["rows"])
            out_path.parent.mkdir(parents=True, exist_ok=True)
            out_path.write_text(json.dumps(report, indent=1))
    print_table(report["rows"])
    print(json.dumps(report["projection"], indent=1))
    failed = [f"{r['index']} at {r['n']:,}: {r['error']}" for r in report["rows"] if "error" in r]
    if failed:
        sys.exit("failed: " + "; ".join(failed))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("embed", help="embed a graph's sections and real questions")
    e.add_argument("--db", type=Path, required=True)
    e.add_argument("--out", type=Path, required=True)
    e.add_argument("--limit", type=int)
    e.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    r = sub.add_parser("run", help="build and measure the indexes per size")
    r.add_argument("--vectors", type=Path, required=True)
    r.add_argument("--embed-db", type=Path, help="embed this graph's sections first if missing")
    r.add_argument("--embed-limit", type=int)
    r.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    r.add_argument("--work", type=Path, required=True)
    r.add_argument("--sizes", default="200000,1000000")
    r.add_argument(
        "--indexes",
        default="flat,kuzu-hnsw,usearch-i8,ivfpq-sq8,ivfpq-sq8-r1000,binary-sq8,kg-agent",
    )
    r.add_argument("--kuzu-max", type=int, default=250_000)
    r.add_argument("--usearch-max", type=int, default=2_000_000)
    r.add_argument("--no-writes", action="store_true")
    r.add_argument("--keep", action="store_true", help="keep the built indexes")
    r.add_argument("--timeout", type=int, default=5400)
    r.add_argument("--json", type=Path, default=ROOT / "bench_out" / "vectors.json")
    o = sub.add_parser("one")
    for flag in ("--phase", "--index"):
        o.add_argument(flag, required=True)
    o.add_argument("--n", type=int, required=True)
    o.add_argument("--n-max", type=int, required=True)
    o.add_argument("--work", type=Path, required=True)
    o.add_argument("--vectors", type=Path, required=True)
    args = ap.parse_args()
    if args.cmd == "embed":
        _real_vectors.embed_all(args.db, args.out, args.shared, args.limit)
    elif args.cmd == "run":
        run(args)
    else:
        print(json.dumps(one(args)))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Benchmark loads and queries as Wikipedia grows: 10k, 100k, 1M articles, and a projection.

Why: kg-agent must load a whole Wikipedia (English: ~6.9M articles, ~100 GB of XML). This
builds realistic dumps of growing size from the real samples in ../shared/data/wiki
(``scripts/make_dump.py``: real article text, power-law links, redirects, categories; 8 KB
of wikitext per article), loads each with ``kg-agent load --embeddings none`` in a fresh
process, and measures what grows: seconds per phase, pages/s, peak RSS of the whole process
tree (the loader and its parse workers, sampled from /proc), database and index size on disk,
index build times, then warm ``ask`` latency (BM25 + graph, offline) over generated questions
and the cold start of ``kg-agent ask``. It fits each figure to ``a * N^b`` (the exponent
``b`` says how it grows) and projects a full English dump on this machine and per core.

    .venv/bin/python scripts/bench_scale.py --sizes 10000,100000 --json bench_out/scale.json
    .venv/bin/python scripts/bench_scale.py --sizes 1000000 --dump-dir /big/disk --keep
    .venv/bin/python scripts/bench_scale.py --report bench_out/scale-*.json   # fit + project
    .venv/bin/python scripts/bench_scale.py --asks OLD_TREE=old.kuzu,.=new.kuzu --rounds 4

``--asks`` measures the warm ``ask`` alone, on graphs already loaded (each with the checkout
that loaded it), the checkouts alternating round by round: a load's single query run moves
±20 % from run to run on a busy 2-core machine, and alternating rounds shows a change of a
few per cent.

Dumps are cached in ``--dump-dir`` (``synthwiki-N-pages-articles.xml``); ``--multistream``
also loads the multistream ``.bz2`` variant. Needs ~10 GB of XML and ~6 GB of graph per 1M
articles.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ENWIKI_ARTICLES = 6_900_000
ENWIKI_REDIRECTS = 11_000_000
PHASES = ("parse", "resolve", "write", "index", "total")


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


class TreeRSS:
    """Peak resident memory of a process and all its descendants, sampled every 0.2 s."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _tree(self) -> list[int]:
        children: dict[int, list[int]] = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry.name))
        out, todo = [], [self.pid]
        while todo:
            p = todo.pop()
            out.append(p)
            todo.extend(children.get(p, []))
        return out

    def _rss(self, pid: int) -> int:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        except OSError:
            pass
        return 0

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, sum(self._rss(p) for p in self._tree()))
            self._stop.wait(0.2)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


def kg_agent(tree: Path | None = None) -> list[str]:
    """The ``kg-agent`` command of this checkout, or of the checkout ``tree``."""
    if tree is not None and tree.resolve() != ROOT:
        boot = f"import sys; sys.path.insert(0, {str(tree)!r}); "
        boot += "from kg_agent._entry import main; main()"
        return [sys.executable, "-c", boot]
    exe = Path(sys.executable).with_name("kg-agent")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "kg_agent._entry"]


def tree_label(tree: Path) -> str:
    """The commit a checkout is at (its short hash), for the rows' ``tree`` column."""
    out = subprocess.run(
        ["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    dirty = subprocess.run(
        ["git", "-C", str(tree), "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
    )
    label = out.stdout.strip() or tree.name
    return label + ("+" if dirty.stdout.strip() else "")


def ensure_dump(n: int, dump_dir: Path, multistream: bool) -> dict[str, Path]:
    from scripts._synth import generate

    xml = dump_dir / f"synthwiki-{n}-pages-articles.xml"
    ms = dump_dir / f"synthwiki-{n}-pages-articles-multistream.xml.bz2"
    need = [
        f
        for f, p in (("xml", xml), ("multistream", ms))
        if (f == "xml" or multistream) and not p.exists()
    ]
    if need:
        print(f"generating {n:,} articles ({', '.join(need)}) in {dump_dir} ...", flush=True)
        generate(n, dump_dir, seed=0, formats=",".join(need))
    return {"xml": xml, "multistream": ms}


def disk_size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def run_load(src: Path, db: Path, workers: int | None, tree: Path = ROOT) -> dict[str, Any]:
    cmd = [*kg_agent(tree), "load", str(src), "--db", str(db), "--embeddings", "none", "--json"]
    cmd.append("-q")
    if workers:
        cmd += ["--workers", str(workers)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=str(tree)
    )
    rss = TreeRSS(proc.pid)
    out, err = proc.communicate()
    peak = rss.stop()
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"load of {src} failed: {err.strip()[-500:]}")
    report = json.loads(out)
    return {"report": report, "wall_s": round(wall, 1), "peak_rss_mib": round(peak / 2**20)}


def questions(db: Path, n: int) -> list[str]:
    from kg_agent.store import GraphStore

    with GraphStore.open(db, read_only=True) as store:
        titles = [
            str(r[0])
            for r in store._run(
                "MATCH (a:Article) WHERE a.is_stub = false AND a.n_sections > 2 "
                "RETURN a.title ORDER BY a.title LIMIT 20000"
            )
        ]
    rng = random.Random(0)
    picks = rng.sample(titles, min(n, len(titles)))
    shapes = [
        "What is {} known for?",
        "When was {} founded, and by whom?",
        "Who was the leader of {}?",
        "Where is {} located?",
    ]
    return [shapes[i % len(shapes)].format(t) for i, t in enumerate(picks)]


def bench_queries(db: Path, n: int, tree: Path = ROOT) -> dict[str, Any]:
    """Warm ask in one process (after one untimed question), then a cold CLI ask."""
    code = f"""
import json, time, sys
sys.path.insert(0, {str(tree)!r})
t0 = time.perf_counter()
from kg_agent.agent import KnowledgeGraphAgent
agent = KnowledgeGraphAgent({str(db)!r}, offline=True)
qs = json.loads(sys.stdin.read())
t1 = time.perf_counter()
agent.query(qs[0])
first = time.perf_counter() - t1
lat, stages = [], []
for q in qs[1:]:
    t = time.perf_counter(); r = agent.query(q); lat.append(time.perf_counter() - t)
    stages.append(r.timings)
print(json.dumps({{"open_s": t1 - t0, "first_query_s": first, "latencies": lat,
                  "stages": stages}}))
"""
    qs = questions(db, n + 1)
    proc = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(qs),
        capture_output=True,
        text=True,
        cwd=str(tree),
    )
    if proc.returncode != 0:
        raise SystemExit(f"query benchmark failed: {proc.stderr[-800:]}")
    res = json.loads(proc.stdout)
    lat = sorted(res["latencies"])
    t0 = time.perf_counter()
    cold = subprocess.run(
        [*kg_agent(tree), "ask", qs[0], "--db", str(db)], capture_output=True, text=True
    )
    cold_s = time.perf_counter() - t0
    names = sorted({k for st in res["stages"] for k in st})
    return {
        # where a warm question's time goes (QueryResult.timings; seconds → ms)
        "stage_p50_ms": {
            k: round(1000 * statistics.median(st.get(k, 0.0) for st in res["stages"]), 1)
            for k in names
        },
        "questions": len(lat),
        "warm_p50_ms": round(1000 * statistics.median(lat), 1),
        "warm_p95_ms": round(1000 * lat[int(0.95 * (len(lat) - 1))], 1),
        "open_s": round(res["open_s"], 2),
        "first_query_s": round(res["first_query_s"], 2),
        "cold_cli_ask_s": round(cold_s, 2),
        "cold_ok": cold.returncode == 0,
    }


def bench_size(n: int, args: argparse.Namespace) -> list[dict[str, Any]]:
    dumps = ensure_dump(n, args.dump_dir, args.multistream)
    rows = []
    variants = [("xml", dumps["xml"])] + (
        [("multistream", dumps["multistream"])] if args.multistream else []
    )
    runs = [
        (fmt, src, tree) for _ in range(args.repeat) for fmt, src in variants for tree in args.trees
    ]
    for fmt, src, tree in runs:
        label = tree_label(tree)
        db_dir = args.db_dir / f"scale-{n}-{fmt}-{label.rstrip('+')}"
        shutil.rmtree(db_dir, ignore_errors=True)
        db_dir.mkdir(parents=True)
        db = db_dir / "g.kuzu"
        print(f"loading {src.name} ({disk_size(src) / 2**30:.2f} GiB) with {label} ...", flush=True)
        load = run_load(src, db, args.workers, tree)
        rep = load["report"]
        t = rep["timings"]
        row: dict[str, Any] = {
            "tree": label,
            "articles": rep["articles"],
            "format": fmt,
            "layout": rep["layout"],
            "workers": rep["workers"],
            "xml_bytes": disk_size(dumps["xml"]),
            "source_bytes": disk_size(src),
            "redirects": rep["redirects"],
            "sections": rep["sections"],
            "links": rep["links"],
            "mentions": rep["mentions"],
            "stubs": rep["stubs"],
            "shards": rep["shards"],
            "parse_s": t.get("parse", 0.0),
            "resolve_s": t.get("resolve", 0.0),
            "write_s": t.get("write", 0.0),
            "index_s": t.get("index", 0.0),
            "text_index_s": t.get("index.text_index", 0.0),
            "pagerank_s": t.get("index.pagerank", 0.0),
            "article_table_s": t.get("index.article_table", 0.0),
            "link_table_s": t.get("index.link_table", 0.0),
            "total_s": load["wall_s"],
            "pages_per_s": rep["pages_per_s"],
            "rows_per_s": rep["rows_per_s"],
            "peak_rss_mib": load["peak_rss_mib"],
            "entity_linker_s": t.get("index.entity_linker", 0.0),
            "install_s": t.get("install", 0.0),
            # high-water marks after each phase: which phase sets the peak
            "rss_by_phase_mib": rep.get("peak_rss_mib", {}),
            "db_bytes": disk_size(db),
            "indexes_bytes": disk_size(Path(str(db) + ".indexes")),
        }
        if fmt == "xml":
            print("querying ...", flush=True)
            row.update(bench_queries(db, args.questions, tree))
        rows.append(row)
        print_table([row])
        for phase, peaks in row["rss_by_phase_mib"].items():
            print(f"  peak RSS after {phase}: {peaks}")
        if row.get("stage_p50_ms"):
            print(f"  warm query stages, p50 ms: {row['stage_p50_ms']}")
        if not args.keep:
            shutil.rmtree(db_dir, ignore_errors=True)
    return rows


def bench_hnsw(n: int, dim: int, work: Path) -> dict[str, Any]:
    """Kùzu's HNSW build over ``n`` random unit vectors (a load with embeddings builds it
    after the write), in a fresh process: seconds, peak RSS, disk, query ms."""
    code = f"""
import json, os, resource, time, numpy as np, pyarrow as pa, pyarrow.parquet as pq, kuzu
n, dim, work = {n}, {dim}, {str(work)!r}
rng = np.random.default_rng(0)
v = rng.standard_normal((n, dim), dtype=np.float32)
v /= np.linalg.norm(v, axis=1, keepdims=True)
emb = pa.FixedSizeListArray.from_arrays(pa.array(v.reshape(-1)), dim)
ids = [f"s{{i}}" for i in range(n)]
pq.write_table(pa.table({{"id": ids, "embedding": emb}}), work + "/v.parquet")
del v, emb
db = kuzu.Database(work + "/h.kuzu"); c = kuzu.Connection(db)
c.execute(f"CREATE NODE TABLE S(id STRING PRIMARY KEY, embedding FLOAT[{{dim}}])")
c.execute(f"COPY S FROM '{{work}}/v.parquet'")
t = time.perf_counter()
c.execute("CALL CREATE_VECTOR_INDEX('S', 'vi', 'embedding', metric := 'cosine')")
build = time.perf_counter() - t
q = rng.standard_normal(dim).astype(np.float32).tolist()
lat = []
for _ in range(20):
    t = time.perf_counter()
    c.execute("CALL QUERY_VECTOR_INDEX('S', 'vi', $q, 30) RETURN node.id", {{"q": q}}).get_all()
    lat.append(time.perf_counter() - t)
c.close(); db.close()
print(json.dumps({{"vectors": n, "hnsw_build_s": round(build, 1),
  "hnsw_query_ms": round(1000 * sorted(lat)[10], 1),
  "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
  "db_mib": round(os.path.getsize(work + "/h.kuzu") / 2**20)}}))
"""
    work.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    shutil.rmtree(work, ignore_errors=True)
    if proc.returncode != 0:
        return {"vectors": n, "error": proc.stderr.strip().splitlines()[-1][:200]}
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


def fit(rows: list[dict[str, Any]], key: str) -> tuple[float, float] | None:
    """Least squares of log(y) = log(a) + b log(N) over the sizes; (a, b)."""
    pts = [(math.log(r["articles"]), math.log(r[key])) for r in rows if r.get(key, 0) > 0]
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    if sxx == 0:
        return None
    b = sum((x - mx) * (y - my) for x, y in pts) / sxx
    return math.exp(my - b * mx), b


def project(rows: list[dict[str, Any]], cores: int) -> dict[str, Any]:
    """Fit each phase and project a full English dump, here and with more cores.

    Parse scales with cores (measured: workers are independent); resolve runs in one
    process; write, text index and PageRank use Kùzu's and tantivy's threads, assumed to
    scale with cores up to 8 (stated, not measured here: this machine has 2)."""
    xml = [r for r in rows if r["format"] == "xml"]
    out: dict[str, Any] = {"fits": {}, "enwiki": {}}
    for key in (
        "parse_s",
        "resolve_s",
        "write_s",
        "index_s",
        "total_s",
        "peak_rss_mib",
        "db_bytes",
        "warm_p50_ms",
    ):
        f = fit(xml, key)
        if f is not None:
            out["fits"][key] = {"a": f[0], "exponent": round(f[1], 3)}
    scale = ENWIKI_ARTICLES
    here = {}
    for key in ("parse_s", "resolve_s", "write_s", "index_s"):
        f = out["fits"].get(key)
        if f:
            here[key] = f["a"] * scale ** f["exponent"]
    if here:
        out["enwiki"]["this_machine_h"] = round(sum(here.values()) / 3600, 2)
        for c in (8, 16):
            k = c / cores
            t = (
                here.get("parse_s", 0) / k
                + here.get("resolve_s", 0)
                + (here.get("write_s", 0) + here.get("index_s", 0)) / min(k, 8 / cores)
            )
            out["enwiki"][f"{c}_cores_h"] = round(t / 3600, 2)
        out["enwiki"]["phases_this_machine_h"] = {k: round(v / 3600, 2) for k, v in here.items()}
    return out


def print_table(rows: list[dict[str, Any]]) -> None:
    cols = [
        ("tree", "{}"),
        ("articles", "{:,}"),
        ("format", "{}"),
        ("sections", "{:,}"),
        ("links", "{:,}"),
        ("parse_s", "{:.0f}"),
        ("pages_per_s", "{:,.0f}"),
        ("resolve_s", "{:.0f}"),
        ("write_s", "{:.0f}"),
        ("text_index_s", "{:.0f}"),
        ("pagerank_s", "{:.1f}"),
        ("total_s", "{:.0f}"),
        ("peak_rss_mib", "{:,}"),
        ("db_bytes", "{}"),
        ("warm_p50_ms", "{}"),
        ("warm_p95_ms", "{}"),
        ("cold_cli_ask_s", "{}"),
    ]
    print(" | ".join(c for c, _ in cols))
    for r in rows:
        vals = []
        for c, f in cols:
            v = r.get(c, "")
            if c == "db_bytes" and v != "":
                v = f"{(r['db_bytes'] + r.get('indexes_bytes', 0)) / 2**20:,.0f} MiB"
                vals.append(v)
                continue
            vals.append(f.format(v) if v != "" else "-")
        print(" | ".join(vals))


def _tree_graphs(value: str) -> list[tuple[Path, Path]]:
    pairs = []
    for item in value.split(","):
        tree, sep, graph = item.partition("=")
        if not sep:
            raise argparse.ArgumentTypeError(f"{item!r} is not TREE=GRAPH")
        pairs.append((Path(tree).resolve(), Path(graph).resolve()))
    return pairs


def bench_asks(args: argparse.Namespace) -> None:
    """Warm ``ask`` of each (checkout, graph) pair, the pairs alternating ``--rounds`` times
    (the same generated questions for every pair); a table of each round's p50 and the
    median of the rounds, and the rounds in ``--json``."""
    pairs: list[tuple[Path, Path]] = args.asks
    names = [f"{t.name}={g.name}" for t, g in pairs]
    names = [n if names.count(n) == 1 else f"{n} #{i + 1}" for i, n in enumerate(names)]
    runs: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
    for rnd in range(args.rounds):
        for name, (tree, graph) in zip(names, pairs, strict=True):
            r = bench_queries(graph, args.questions, tree)
            runs[name].append(r)
            print(f"round {rnd + 1}: {name}: warm p50 {r['warm_p50_ms']} ms", flush=True)
    first = names[0]
    base = statistics.median(r["warm_p50_ms"] for r in runs[first])
    print()
    print("tree=graph | warm p50 per round (ms) | median | against the first")
    summary = []
    for name in names:
        p50s = [r["warm_p50_ms"] for r in runs[name]]
        med = statistics.median(p50s)
        change = 100 * (med / base - 1) if base else 0.0
        summary.append({"pair": name, "p50s_ms": p50s, "median_p50_ms": med, "change": change})
        print(f"{name} | {' / '.join(f'{v:.1f}' for v in p50s)} | {med:.1f} | {change:+.1f} %")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        doc = {
            "machine": {"cpu": cpu_model(), "cores": os.cpu_count()},
            "command": " ".join(sys.argv),
            "asks": summary,
            "runs": runs,
        }
        args.json.write_text(json.dumps(doc, indent=1))
        print(f"saved {args.json}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000", help="comma list of article counts")
    ap.add_argument("--dump-dir", type=Path, default=ROOT / "bench_out" / "dumps")
    ap.add_argument("--db-dir", type=Path, default=ROOT / "bench_out" / "scale")
    ap.add_argument("--multistream", action="store_true", help="also load the .bz2 variant")
    ap.add_argument("--workers", type=int, help="parse workers (default: one per core)")
    ap.add_argument("--questions", type=int, default=100, help="warm questions per size")
    ap.add_argument("--keep", action="store_true", help="keep the graphs")
    ap.add_argument("--json", type=Path, help="save the rows and the projection here")
    ap.add_argument("--report", nargs="*", type=Path, help="only fit and project saved JSON")
    ap.add_argument(
        "--trees",
        type=lambda v: [Path(p).resolve() for p in v.split(",")],
        default=[ROOT],
        help="checkouts to measure side by side on the same dumps (comma list; default: this "
        "one), e.g. a git worktree of an older commit",
    )
    ap.add_argument("--repeat", type=int, default=1, help="runs of each tree, alternated")
    ap.add_argument(
        "--hnsw-sizes", help="also time Kùzu's HNSW build over this many random vectors (list)"
    )
    ap.add_argument(
        "--asks",
        type=_tree_graphs,
        help="only the warm ask: TREE=GRAPH pairs (comma list), measured in alternating rounds",
    )
    ap.add_argument("--rounds", type=int, default=4, help="rounds of --asks")
    args = ap.parse_args()
    if args.asks:
        bench_asks(args)
        return
    args.dump_dir.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    if args.report:
        for p in args.report:
            rows += json.loads(p.read_text())["rows"]
    else:
        for n in (int(x) for x in args.sizes.split(",")):
            rows += bench_size(n, args)
    rows.sort(key=lambda r: (r["articles"], r["format"]))
    print()
    print_table(rows)
    proj = project(rows, os.cpu_count() or 1)
    print(json.dumps(proj, indent=1))
    hnsw = []
    for n in (int(x) for x in (args.hnsw_sizes or "").split(",") if x):
        hnsw.append(bench_hnsw(n, 384, args.db_dir / f"hnsw-{n}"))
        print(hnsw[-1], flush=True)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        doc = {
            "machine": {
                "cpu": cpu_model(),
                "cores": os.cpu_count(),
                "python": platform.python_version(),
            },
            "command": " ".join(sys.argv),
            "rows": rows,
            "projection": proj,
            "hnsw": hnsw,
        }
        args.json.write_text(json.dumps(doc, indent=1))
        print(f"saved {args.json}")


if __name__ == "__main__":
    main()

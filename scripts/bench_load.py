#!/usr/bin/env python3
"""Benchmark `kg-agent load`: pages/s parsed, sections/s embedded, rows/s written, peak RSS.

Each load runs in a fresh subprocess (cold start, as a user runs it) into a new
temporary database, so peak RSS is that of one load. Prints a table and saves
JSON. Reads the real data from ../shared/data beside the project.

    .venv/bin/python scripts/bench_load.py                      # English sample + 2Wiki corpus
    .venv/bin/python scripts/bench_load.py --sources enwiki --json bench_out/load.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
SOURCES = {
    "sample": ROOT / "kg_agent" / "data" / "sample" / "pages-articles.xml",
    "enwiki": SHARED
    / "wiki"
    / "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2",
    "latgalian": SHARED / "wiki" / "smallwiki-latest-pages-articles.xml",
    "2wiki": SHARED / "multihop" / "2wikimultihopqa" / "corpus.json",
    "hotpotqa": SHARED / "multihop" / "hotpotqa" / "hotpot_dev_distractor.dev.json",
    "musique": SHARED / "multihop" / "musique" / "musique_ans.dev.jsonl",
}


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def run_load(name: str, source: Path, extra: list[str]) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="kg-bench-") as tmp:
        db = Path(tmp) / "graph.kuzu"
        cmd = [sys.executable, "-m", "kg_agent.cli", "load", str(source), "--db", str(db)]
        # --no-cache: measure real embedding, not vectors reused from an earlier run.
        cmd += ["--json", "-q", "--no-cache", *extra]
        env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        _pid, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        out = proc.stdout.read() if proc.stdout else b""
        err = proc.stderr.read() if proc.stderr else b""
        if status != 0:
            raise SystemExit(f"{name}: load failed: {err.decode(errors='replace')[-2000:]}")
        report = json.loads(out)
        size = sum(f.stat().st_size for f in Path(tmp).glob("graph.kuzu*"))
    t = report["timings"]
    return {
        "source": name,
        "articles": report["articles"],
        "redirects": report["redirects"],
        "sections": report["sections"],
        "rows_written": report["rows_written"],
        "pages_per_s": report["pages_per_s"],
        "sections_per_s": report["sections_per_s"],
        "rows_per_s": report["rows_per_s"],
        "timings": t,
        "wall_s": round(wall, 1),
        "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
        "db_mib": round(size / 2**20, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sources", nargs="+", default=["enwiki", "2wiki"], choices=sorted(SOURCES))
    ap.add_argument("--json", type=Path, help="save results here")
    ap.add_argument("--load-args", default="", help="extra 'kg-agent load' arguments, quoted")
    args = ap.parse_args()
    rows = []
    for name in args.sources:
        src = SOURCES[name]
        if not src.exists():
            raise SystemExit(f"{src} not found: benchmarks read ../shared/data beside the project")
        print(f"loading {name} ...", file=sys.stderr, flush=True)
        rows.append(run_load(name, src, args.load_args.split()))
    header = (
        f"{'source':<10} {'articles':>8} {'sections':>8} {'pages/s':>8} {'sect/s':>7} "
        f"{'rows/s':>8} {'parse':>6} {'embed':>7} {'write':>6} {'index':>6} {'total':>7} "
        f"{'RSS MiB':>8} {'DB MiB':>7}"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        t = r["timings"]
        assert isinstance(t, dict)
        print(
            f"{r['source']:<10} {r['articles']:>8} {r['sections']:>8} {r['pages_per_s']:>8} "
            f"{r['sections_per_s']:>7} {r['rows_per_s']:>8} {t.get('parse', 0):>6.1f} "
            f"{t.get('embed', 0):>7.1f} {t.get('write', 0):>6.1f} {t.get('index', 0):>6.1f} "
            f"{r['wall_s']:>7} {r['peak_rss_mib']:>8} {r['db_mib']:>7}"
        )
    meta = {
        "machine": f"{os.cpu_count()} cores, {cpu_model()}, {platform.platform()}",
        "python": platform.python_version(),
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
        "date": time.strftime("%Y-%m-%d"),
    }
    print(f"\n{meta['machine']}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"meta": meta, "results": rows}, indent=2))
        print(f"saved {args.json}")


if __name__ == "__main__":
    main()

"""A bounded load test of ``kg-agent serve`` on 127.0.0.1: requests/s, latency percentiles,
errors and the server's memory at 1, 4 and 16 concurrent clients.

The real executable is started on a graph (default: the 2WikiMultihopQA eval graph) in the
offline path; each client is a thread with its own keep-alive connection (``httpx2``, the
client the ``anthropic`` SDK uses) sending a fixed number of ``POST /v1/ask`` requests, the
dev set's questions in turn. Every question is asked once before timing (warm: the model,
indexes and linker loaded, the questions' first-time costs paid).

    .venv/bin/python scripts/bench_serve.py --db bench_out/evalgraphs/2wikimultihopqa.kuzu

Prints a table and writes JSON (``--out``). The client runs on the same 2 cores as the
server, so the numbers include its cost.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kg_agent.evaluation.datasets import load_dataset  # noqa: E402

_URL = re.compile(r" at (http://\S+/) ")


def start_server(db: str, workers: int, extra: list[str]) -> tuple[subprocess.Popen[str], str]:
    exe = Path(sys.executable).with_name("kg-agent")
    cmd = [
        str(exe),
        "serve",
        "--db",
        db,
        "--port",
        "0",
        "--offline",
        "--workers",
        str(workers),
        "--queue",
        "256",
        *extra,
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    for line in proc.stderr:
        m = _URL.search(line)
        if m:
            threading.Thread(target=proc.stderr.read, daemon=True).start()
            return proc, m.group(1).rstrip("/")
    raise SystemExit(f"server did not start: exit {proc.wait()}")


def tree_rss_mib(pid: int) -> float:
    """Resident memory of ``pid`` and its descendants (the supervisor and the server)."""
    total = 0
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            status = Path(f"/proc/{p}/status").read_text()
            total += int(re.search(r"VmRSS:\s+(\d+)", status).group(1))  # type: ignore[union-attr]
            for task in Path(f"/proc/{p}/task").iterdir():
                kids = (task / "children").read_text().split()
                todo.extend(int(k) for k in kids)
        except (OSError, AttributeError):
            continue
    return total / 1024


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1))))
    return ordered[k]


def run_level(
    urls: list[str], questions: list[str], clients: int, per_client: int
) -> dict[str, Any]:
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    barrier = threading.Barrier(clients + 1)

    def client(i: int) -> None:
        with httpx2.Client(base_url=urls[i % len(urls)], timeout=120) as c:
            barrier.wait()
            for j in range(per_client):
                q = questions[(i * per_client + j) % len(questions)]
                t0 = time.perf_counter()
                try:
                    r = c.post("/v1/ask", json={"question": q})
                    ok = r.status_code == 200 and "answer" in r.json()
                    why = f"HTTP {r.status_code}: {r.text[:100]}"
                except Exception as exc:  # a benchmark counts every failure
                    ok, why = False, repr(exc)
                dt = time.perf_counter() - t0
                with lock:
                    latencies.append(dt)
                    if not ok:
                        errors.append(why)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    barrier.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    ms = [x * 1000 for x in latencies]
    return {
        "clients": clients,
        "requests": len(latencies),
        "errors": len(errors),
        "error_examples": errors[:3],
        "wall_s": round(wall, 2),
        "rps": round(len(latencies) / wall, 2),
        "p50_ms": round(statistics.median(ms), 1),
        "p95_ms": round(percentile(ms, 95), 1),
        "p99_ms": round(percentile(ms, 99), 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default=str(ROOT / "bench_out/evalgraphs/2wikimultihopqa.kuzu"))
    ap.add_argument("--dataset", default="2wiki")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--questions", type=int, default=100)
    ap.add_argument("--clients", default="1,4,16")
    ap.add_argument("--requests", type=int, default=40, help="requests per client")
    ap.add_argument("--workers", type=int, default=4, help="server worker threads")
    ap.add_argument("--server-arg", action="append", default=[], help="extra serve option")
    ap.add_argument(
        "--servers",
        type=int,
        default=1,
        help="server processes on the same graph (clients spread over them): what "
        "processes instead of threads would give",
    )
    ap.add_argument("--out", default=str(ROOT / "bench_out/serve.json"))
    args = ap.parse_args()
    if not Path(args.db).exists():
        raise SystemExit(f"{args.db} not found: build the eval graphs first (kg-agent eval)")
    data = load_dataset(args.dataset, data_dir=args.data_dir)
    questions = list(dict.fromkeys(q.question for q in data.questions))[: args.questions]
    started = [start_server(args.db, args.workers, args.server_arg) for _ in range(args.servers)]
    procs = [p for p, _ in started]
    urls = [u for _, u in started]

    def rss() -> float:
        return sum(tree_rss_mib(p.pid) for p in procs)

    try:
        # warm every process: each question on 4 connections per server (the kernel
        # spreads a server's connections over its processes, if it has several)
        def warm(url: str) -> None:
            with httpx2.Client(base_url=url, timeout=120) as c:
                for q in questions:
                    c.post("/v1/ask", json={"question": q}).raise_for_status()

        warmers = [threading.Thread(target=warm, args=(u,)) for u in urls for _ in range(4)]
        for t in warmers:
            t.start()
        for t in warmers:
            t.join()
        rss_start = rss()
        rows = []
        for n in (int(x) for x in args.clients.split(",")):
            row = run_level(urls, questions, n, args.requests)
            row["server_rss_mib"] = round(rss(), 1)
            rows.append(row)
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            proc.wait(timeout=60)
    base = rows[0]["rps"]
    for row in rows:
        row["speedup"] = round(row["rps"] / base, 2) if base else None
    print(
        f"kg-agent serve x{args.servers}, {args.db}, {args.workers} workers, offline, "
        f"{len(questions)} {args.dataset} questions; server RSS warm {rss_start:.0f} MiB"
    )
    print(
        f"{'clients':>7} {'requests':>8} {'errors':>6} {'req/s':>7} {'x1':>5} "
        f"{'p50 ms':>7} {'p95 ms':>7} {'p99 ms':>7} {'RSS MiB':>8}"
    )
    for r in rows:
        print(
            f"{r['clients']:>7} {r['requests']:>8} {r['errors']:>6} {r['rps']:>7.1f} "
            f"{r['speedup']:>5.2f} {r['p50_ms']:>7.1f} {r['p95_ms']:>7.1f} {r['p99_ms']:>7.1f} "
            f"{r['server_rss_mib']:>8.0f}"
        )
    out = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}",
        "db": args.db,
        "workers": args.workers,
        "servers": args.servers,
        "server_args": args.server_arg,
        "questions": len(questions),
        "rss_warm_mib": round(rss_start, 1),
        "levels": rows,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2))
    print(f"JSON: {args.out}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""Query latency of ``KnowledgeGraphAgent.query`` on a built graph, offline.

Measures, on the 2WikiMultihopQA dev questions (or any JSON list of
``{"question": ...}``):

* **cold start**: a fresh Python process from exec to the first answer, split
  into interpreter start, ``import kg_agent.agent``, agent construction and the
  first ``query()`` (which loads the embedding model); run ``--cold-runs`` times,
  medians reported. The OS page cache stays warm (nothing is dropped), so this is
  a cold *process*, not a cold disk.
* **warm** ``query()`` latency per stage over ``--n`` questions, p50/p95, from
  ``QueryResult.timings``: ``embed`` (the query vector), ``search`` (exact scan or
  HNSW probe, and reading the hit rows), ``rerank`` (quality filter and graph
  reranker), ``synthesis`` (the offline extractive answer), ``total`` (the whole
  call; ``other`` is what no stage covers: structural-intent check, bookkeeping).
  ``--passes`` repeats the pass over the same questions; the summary is the median
  of the per-pass p50 and p95, so a burst of load from another process moves one
  pass, not the result.
* **peak RSS** (``resource.getrusage``) of the cold child after its first answer
  and of this process after the warm passes.
* ``--index-recall``: recall@k of the HNSW index (``GraphStore.vector_search``)
  against the exact scan (numpy over every embedding) for the same questions, and
  the latency of each (``SemanticRetriever.search_vector`` in exact and index
  mode: both return the hit rows, so they compare like for like; the scan rows
  are the matrix product and top-k alone, numpy ``einsum`` as the retriever runs
  it and BLAS ``@`` for comparison). Every timed call follows the question's
  embedding, as inside ``query()``.

Always offline: ``ANTHROPIC_API_KEY``/``ANTHROPIC_AUTH_TOKEN`` are removed from
the environment, so synthesis is extractive and nothing leaves the machine.

    .venv/bin/python scripts/bench_query.py --db /tmp/kg2wiki.kuzu --n 100 --index-recall \\
        --json bench_query.json

Data: ``../shared/data/multihop/2wikimultihopqa/questions.dev.json`` relative to
the project root (``--questions`` overrides). Build the graph first with
``kg-agent load ../shared/data/multihop/2wikimultihopqa/corpus.json --db PATH``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import resource
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

_T_MAIN = time.time()  # as early as this script can record it (cold-start child)

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
for _var in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
    os.environ.pop(_var, None)  # offline path only

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_QUESTIONS = (
    ROOT.parent / "shared" / "data" / "multihop" / "2wikimultihopqa" / "questions.dev.json"
)
sys.path.insert(0, str(ROOT))

STAGES = ("embed", "search", "rerank", "synthesis", "other", "total")
STAGE_NOTES = {
    "embed": "query embedding (MiniLM, one text)",
    "search": "exact scan / HNSW probe + hit rows",
    "rerank": "quality filter + graph rerank (PPR)",
    "synthesis": "extractive answer",
    "other": "structural-intent check, bookkeeping",
    "total": "whole query() call",
}


# --------------------------------------------------------------------------- helpers


def die(msg: str, code: int = 2) -> None:
    print(f"bench_query: {msg}", file=sys.stderr)
    raise SystemExit(code)


def peak_rss_mib() -> float:
    # ru_maxrss is KiB on Linux, bytes on macOS
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolated percentile (numpy's default), ``q`` in [0, 100]."""
    xs = sorted(values)
    if not xs:
        return float("nan")
    pos = (len(xs) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def ms(x: float) -> str:
    return f"{x * 1000:8.1f}"


def _python_label() -> str:
    """The interpreter as typed from the project root (``.venv/bin/python``), else its path."""
    exe = Path(sys.executable)
    try:
        return str(exe.relative_to(ROOT))
    except ValueError:
        return str(exe)


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_info() -> dict[str, Any]:
    info: dict[str, Any] = {
        "cpu_model": cpu_model(),
        "cores": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
    }
    try:
        with open("/proc/meminfo", encoding="utf-8") as fh:
            kb = int(fh.readline().split()[1])
        info["memory_gib"] = round(kb / 1024 / 1024, 1)
    except (OSError, ValueError, IndexError):
        pass
    for mod in ("torch", "kuzu", "numpy", "sentence_transformers"):
        with contextlib.suppress(Exception):  # version info is best effort
            info[mod] = __import__(mod).__version__
    try:
        info["git_commit"] = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        info["git_dirty"] = bool(dirty)
    except (OSError, subprocess.CalledProcessError):
        pass
    return info


def load_questions(path: Path, n: int) -> list[str]:
    if not path.exists():
        shared = ROOT.parent / "shared" / "data"
        hint = f"{shared} is absent" if not shared.exists() else f"{path} is absent"
        die(
            f"{hint}: this benchmark needs the 2WikiMultihopQA dev questions "
            "(../shared/data/multihop/2wikimultihopqa/questions.dev.json beside the "
            "project, or --questions FILE)"
        )
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, dict):
        data = data.get("questions") or data.get("data") or []
    qs = [d["question"] if isinstance(d, dict) else str(d) for d in data]
    qs = [q for q in qs if q and q.strip()]
    if not qs:
        die(f"{path} holds no questions")
    return qs[:n]


# --------------------------------------------------------------------------- cold start


def cold_child(db: str, question: str) -> None:
    """Runs in a fresh process: import, construct, first answer; prints one JSON line."""
    t_import = time.time()
    from kg_agent.agent import KnowledgeGraphAgent

    t_construct = time.time()
    agent = KnowledgeGraphAgent(db)
    if agent.llm is not None:
        die("an LLM client was configured: the benchmark measures the offline path")
    t_query = time.time()
    result = agent.query(question)
    t_done = time.time()
    print(
        json.dumps(
            {
                "t_main": _T_MAIN,
                "t_import": t_import,
                "t_construct": t_construct,
                "t_query": t_query,
                "t_done": t_done,
                "first_timings": result.timings,
                "retriever_mode": agent.retriever.mode,
                "peak_rss_mib": peak_rss_mib(),
            }
        )
    )
    agent.close()


def cold_start(db: str, question: str, runs: int) -> dict[str, Any]:
    samples: list[dict[str, float]] = []
    extra: dict[str, Any] = {}
    for _ in range(runs):
        t0 = time.time()
        proc = subprocess.run(
            [
                sys.executable,
                str(Path(__file__).resolve()),
                "--cold-child",
                "--db",
                db,
                "--cold-question",
                question,
            ],
            capture_output=True,
            text=True,
            env=os.environ.copy(),
        )
        t_end = time.time()
        if proc.returncode != 0:
            die(f"cold-start child failed ({proc.returncode}):\n{proc.stderr.strip()[-2000:]}")
        line = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")][-1]
        r = json.loads(line)
        samples.append(
            {
                "interpreter": r["t_main"] - t0,  # exec → this script's first line
                "import": r["t_construct"] - r["t_import"],
                "construct": r["t_query"] - r["t_construct"],
                "first_query": r["t_done"] - r["t_query"],
                "first_query_embed": r["first_timings"].get("embed", 0.0),
                "to_first_answer": r["t_done"] - t0,
                "process_wall": t_end - t0,
                "peak_rss_mib": r["peak_rss_mib"],
            }
        )
        extra["retriever_mode"] = r["retriever_mode"]
    summary = {k: statistics.median(s[k] for s in samples) for k in samples[0]}
    return {"runs": runs, "median": summary, "samples": samples, **extra}


# --------------------------------------------------------------------------- warm


def stage_stats(rows: list[dict[str, float]]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for stage in STAGES:
        vals = [r[stage] for r in rows]
        out[stage] = {
            "p50": percentile(vals, 50),
            "p95": percentile(vals, 95),
            "mean": statistics.fmean(vals),
            "max": max(vals),
        }
    return out


def warm_pass(agent: Any, questions: list[str]) -> list[dict[str, float]]:
    rows = []
    for q in questions:
        t0 = time.perf_counter()
        r = agent.query(q)
        wall = time.perf_counter() - t0
        if r.path != "offline":
            die(f"query ran the {r.path} path; the benchmark measures the offline path")
        t = r.timings
        row = {
            "embed": t.get("embed", float("nan")),
            "search": t.get("search", float("nan")),
            "rerank": t["rerank"],
            "synthesis": t["synthesis"],
            "total": wall,
        }
        row["other"] = max(
            0.0, wall - row["embed"] - row["search"] - row["rerank"] - row["synthesis"]
        )
        rows.append(row)
    return rows


def warm(
    db: str, questions: list[str], passes: int, warmup: int, retriever: str = "auto"
) -> tuple[Any, dict[str, Any]]:
    from kg_agent.agent import KnowledgeGraphAgent
    from kg_agent.retrieval.semantic import SemanticRetriever

    agent = KnowledgeGraphAgent(db)
    if retriever != "auto":
        agent.retriever = SemanticRetriever(agent.store, agent.embedder, mode=retriever)
    if agent.llm is not None:
        die("an LLM client was configured: the benchmark measures the offline path")
    if "embed" not in agent.query(questions[0]).timings:
        die("QueryResult.timings has no 'embed' key: this kg_agent predates the stage split")
    for q in questions[1 : 1 + warmup]:
        agent.query(q)
    per_pass = []
    load = []
    for _ in range(passes):
        load.append(os.getloadavg()[0])
        per_pass.append(stage_stats(warm_pass(agent, questions)))
    summary = {
        stage: {
            "p50": statistics.median(p[stage]["p50"] for p in per_pass),
            "p95": statistics.median(p[stage]["p95"] for p in per_pass),
        }
        for stage in STAGES
    }
    mode = agent.retriever.mode
    threads: dict[str, Any] = {}
    torch = sys.modules.get("torch")
    if torch is not None:
        threads["torch_intra_op"] = torch.get_num_threads()
    return agent, {
        "questions": len(questions),
        "passes": passes,
        "warmup": warmup,
        "retriever_mode": mode,
        "summary": summary,
        "per_pass": per_pass,
        "load_avg_1m_per_pass": load,
        "peak_rss_mib": peak_rss_mib(),
        **threads,
    }


# --------------------------------------------------------------------------- index recall


def index_recall(agent: Any, questions: list[str], k: int, repeats: int = 3) -> dict[str, Any]:
    import numpy as np

    from kg_agent.retrieval.semantic import SemanticRetriever

    store, embedder = agent.store, agent.embedder
    if not store.has_vector_index():
        return {"error": "the graph has no vector index (kg-agent reindex builds it)"}
    exact = SemanticRetriever(store, embedder, mode="exact")
    index = SemanticRetriever(store, embedder, mode="index")
    ids, matrix = store.section_embeddings()
    from kg_agent.retrieval import semantic

    # embed as the retriever does (one torch thread), where that helper exists
    threads = getattr(semantic, "_query_threads", None)

    def embed(q: str) -> Any:
        if threads is None:
            return embedder.embed_query(q)
        with threads(embedder):
            return embedder.embed_query(q)

    vecs = [embed(q) for q in questions]

    def scan(vec: Any, blas: bool = False) -> list[str]:
        v = np.asarray(vec, dtype=np.float32)
        # einsum as the retriever does; blas=True: numpy's BLAS product, for comparison
        sims = matrix @ v if blas else np.einsum("ij,j->i", matrix, v)
        kk = min(k, len(ids))
        top = np.argpartition(-sims, kk - 1)[:kk]
        top = top[np.argsort(-sims[top], kind="stable")]
        return [ids[i] for i in top]

    def timed(fn: Any) -> tuple[list[list[str]], list[float]]:
        # Each call follows the query's embedding, as in query(): a search run
        # back to back with the previous one finds BLAS and Kùzu worker threads
        # still awake and caches warm, and looks faster than it is in a query.
        per_q: list[list[float]] = [[] for _ in vecs]
        results: list[list[str]] = []
        for rep in range(repeats):
            for i, v in enumerate(vecs):
                embed(questions[i])
                t0 = time.perf_counter()
                got = fn(v)
                per_q[i].append(time.perf_counter() - t0)
                if rep == 0:
                    results.append(got)
        return results, [statistics.median(x) for x in per_q]

    exact.search_vector(vecs[0], k)  # load the matrix outside the timings
    index.search_vector(vecs[0], k)
    truth, t_scan = timed(scan)
    _, t_blas = timed(lambda v: scan(v, blas=True))
    exact_rows, t_exact = timed(lambda v: [e.section_id for e in exact.search_vector(v, k)])
    hnsw, t_index = timed(lambda v: [e.section_id for e in index.search_vector(v, k)])
    recalls = [len(set(h) & set(t)) / len(t) for h, t in zip(hnsw, truth, strict=True) if t]
    top1 = [bool(h) and h[0] == t[0] for h, t in zip(hnsw, truth, strict=True) if t]
    agree = [e == t for e, t in zip(exact_rows, truth, strict=True)]

    def lat(xs: list[float]) -> dict[str, float]:
        return {"p50": percentile(xs, 50), "p95": percentile(xs, 95)}

    return {
        "k": k,
        "questions": len(vecs),
        "sections": len(ids),
        "recall_at_k": statistics.fmean(recalls),
        "recall_min": min(recalls),
        "perfect_share": sum(r == 1.0 for r in recalls) / len(recalls),
        "top1_agreement": sum(top1) / len(top1),
        "exact_retriever_matches_scan": all(agree),
        "latency": {
            "scan_only": lat(t_scan),
            "scan_blas": lat(t_blas),
            "exact": lat(t_exact),
            "index": lat(t_index),
        },
        "repeats": repeats,
    }


# --------------------------------------------------------------------------- report


def print_report(out: dict[str, Any]) -> None:
    m = out["machine"]
    print(
        f"\nMachine: {m['cpu_model']}, {m['cores']} cores, {m.get('memory_gib', '?')} GiB; "
        f"torch {m.get('torch', '?')}, kuzu {m.get('kuzu', '?')}"
    )
    print(
        f"Load average (1/5/15 min) before: {out['load_avg_before']}, "
        f"after: {out['load_avg_after']}"
    )
    if "cold" in out:
        c = out["cold"]["median"]
        print(f"\nCold start (fresh process, median of {out['cold']['runs']}):")
        print(f"  interpreter start      {ms(c['interpreter'])} ms")
        print(f"  import kg_agent.agent  {ms(c['import'])} ms")
        print(f"  KnowledgeGraphAgent()  {ms(c['construct'])} ms")
        print(
            f"  first query()          {ms(c['first_query'])} ms  "
            f"(model load + embed {c['first_query_embed'] * 1000:.0f} ms)"
        )
        print(f"  exec → first answer    {ms(c['to_first_answer'])} ms")
        print(f"  peak RSS               {c['peak_rss_mib']:8.0f} MiB")
    w = out["warm"]
    print(
        f"\nWarm query(), offline, {w['questions']} questions × {w['passes']} passes "
        f"(retriever: {w['retriever_mode']}; median over passes):"
    )
    print(f"  {'stage':<10} {'p50 ms':>8} {'p95 ms':>8}   what")
    for stage in STAGES:
        s = w["summary"][stage]
        print(f"  {stage:<10} {ms(s['p50'])} {ms(s['p95'])}   {STAGE_NOTES[stage]}")
    print(f"  peak RSS after warm passes: {w['peak_rss_mib']:.0f} MiB")
    if "index_recall" in out:
        r = out["index_recall"]
        if "error" in r:
            print(f"\nIndex recall: {r['error']}")
        else:
            lat = r["latency"]
            print(
                f"\nHNSW index vs exact scan, {r['questions']} questions, "
                f"{r['sections']:,} sections, k={r['k']}:"
            )
            print(
                f"  recall@{r['k']} {r['recall_at_k']:.3f} (min {r['recall_min']:.1f}, "
                f"{r['perfect_share']:.0%} perfect), top-1 agreement "
                f"{r['top1_agreement']:.0%}"
            )
            print(f"  {'path':<34} {'p50 ms':>8} {'p95 ms':>8}")
            for key, label in (
                ("scan_only", "exact: einsum scan + top-k"),
                ("scan_blas", "exact: BLAS matmul + top-k"),
                ("exact", "exact + hit rows (retriever)"),
                ("index", "HNSW + hit rows (retriever)"),
            ):
                print(f"  {label:<34} {ms(lat[key]['p50'])} {ms(lat[key]['p95'])}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", required=True, help="graph built by kg-agent load")
    ap.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS)
    ap.add_argument("--n", type=int, default=100, help="questions (default 100)")
    ap.add_argument("--passes", type=int, default=3, help="warm passes (default 3)")
    ap.add_argument("--warmup", type=int, default=5, help="warm-up queries (default 5)")
    ap.add_argument("--cold-runs", type=int, default=3, help="cold-start processes (0: skip)")
    ap.add_argument(
        "--retriever",
        choices=("auto", "exact", "index"),
        default="auto",
        help="semantic search mode for the warm passes (default auto: exact below 200k sections)",
    )
    ap.add_argument("--index-recall", action="store_true", help="HNSW recall vs exact scan")
    ap.add_argument("--k", type=int, default=10, help="k for --index-recall (default 10)")
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--cold-child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--cold-question", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.cold_child:
        cold_child(args.db, args.cold_question)
        return
    if args.n < 1 or args.passes < 1 or args.warmup < 0 or args.cold_runs < 0:
        die("--n and --passes must be >= 1, --warmup and --cold-runs >= 0")
    questions = load_questions(args.questions, args.n)
    if not Path(args.db).exists():
        die(
            f"database {args.db} not found: build it with 'kg-agent load "
            f"../shared/data/multihop/2wikimultihopqa/corpus.json --db {args.db}'"
        )

    out: dict[str, Any] = {
        "command": " ".join(shlex.quote(a) for a in [_python_label(), *sys.argv]),
        "db": str(args.db),
        "questions_file": str(args.questions),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "load_avg_before": [round(x, 2) for x in os.getloadavg()],
    }
    if args.cold_runs:
        print(f"cold start: {args.cold_runs} fresh process(es)…", file=sys.stderr)
        out["cold"] = cold_start(args.db, questions[0], args.cold_runs)
    print(f"warm: {len(questions)} questions × {args.passes} passes…", file=sys.stderr)
    agent, out["warm"] = warm(args.db, questions, args.passes, args.warmup, args.retriever)
    if args.index_recall:
        print("index recall…", file=sys.stderr)
        out["index_recall"] = index_recall(agent, questions, args.k)
    agent.close()
    out["load_avg_after"] = [round(x, 2) for x in os.getloadavg()]
    out["machine"] = machine_info()
    print_report(out)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()

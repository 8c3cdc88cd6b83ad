#!/usr/bin/env python
"""Run multi-step retrieval over a multi-hop question file and write its traces.

    .venv/bin/python scripts/run_multistep_retrieval.py --config configs/run_multistep.yaml \\
        --questions ../shared/data/multihop/2wikimultihopqa/questions.dev.json --limit 100

``--questions`` is any of the three dev files (2WikiMultihopQA, HotpotQA, MuSiQue;
the format is detected, :func:`kg_agent.evaluation.datasets.load_dataset`). The
graph of the dataset's corpus is built into ``--db`` (default
``bench_out/eval_dbs/<dataset>.kuzu``, the same place ``scripts/eval_multihop.py``
uses) on the first run and reused after (:func:`kg_agent.evaluation.runner.ensure_graph`).
Every question goes through the pipeline the eval's ``multistep`` mode runs (the
:class:`kg_agent.multistep.retriever.MultiStepRetriever` and its stages, then the
quality filter and the graph rerank), offline (no Claude: planning, rewriting, bridge
extraction and relevance scoring take their rule paths).

``--out`` (default ``bench_out/multistep/``) receives:

* ``multistep_traces.jsonl``: one line per question, ``{"id", **MultiStepTrace.to_dict()}``:
  route and complexity decision, plan, every step (query, query type, kind, gap,
  gate decision, results, new evidence, stop reason, seconds), bridge-round stats,
  relevance telemetry, warnings, total seconds;
* ``retrieval_results.jsonl``: one line per question with ``id``, ``question``,
  ``gold_titles``, ``route``, ``recall_at_5``, ``seconds``, ``final_top_chunks`` and
  ``all_collected_chunks`` (each chunk ``{section_id, title, score, source, text}``,
  text cut to 300 characters).

A question whose run raises is written with an ``error`` field (and no chunks) and
counted in the summary; the run goes on. The summary printed at the end: questions,
mean steps, share routed complex, bridge-triggered share, Recall@5 against the gold
titles (:func:`kg_agent.evaluation.metrics.recall_at_k` over the final top chunks'
distinct titles) and p50/p95 latency of the pipeline's search, warm: one untimed
run of the first question loads the model, the embedding matrix and the entity
linker before the timed pass.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kg_agent.config import AgentConfig  # noqa: E402
from kg_agent.embedding import Embedder  # noqa: E402
from kg_agent.evaluation.datasets import EvalQuestion, load_dataset  # noqa: E402
from kg_agent.evaluation.metrics import percentile, recall_at_k  # noqa: E402
from kg_agent.evaluation.runner import ensure_graph  # noqa: E402
from kg_agent.exceptions import InvalidArgumentError, KGAgentError, one_line  # noqa: E402
from kg_agent.multistep.config import load_config  # noqa: E402
from kg_agent.pipeline import GraphComponents  # noqa: E402
from kg_agent.retrieval.base import Evidence, RetrievalResult  # noqa: E402
from kg_agent.store import GraphStore  # noqa: E402

DEFAULT_CONFIG = ROOT / "configs" / "run_multistep.yaml"
DEFAULT_DB_DIR = ROOT / "bench_out" / "eval_dbs"
DEFAULT_OUT = ROOT / "bench_out" / "multistep"
TRACES_NAME = "multistep_traces.jsonl"
RESULTS_NAME = "retrieval_results.jsonl"
TEXT_CHARS = 300
RECALL_K = 5


def chunk(e: Evidence) -> dict[str, Any]:
    """One evidence item as written to ``retrieval_results.jsonl``."""
    return {
        "section_id": e.section_id,
        "title": e.title,
        "score": round(float(e.score), 6),
        "source": e.source,
        "text": e.content[:TEXT_CHARS],
    }


def result_line(q: EvalQuestion, r: RetrievalResult, seconds: float) -> dict[str, Any]:
    assert r.multistep is not None
    return {
        "id": q.qid,
        "question": q.question,
        "gold_titles": list(q.gold_titles),
        "route": r.multistep.route,
        "recall_at_5": recall_at_k([e.title for e in r.evidence], q.gold_titles, RECALL_K),
        "seconds": round(seconds, 4),
        "final_top_chunks": [chunk(e) for e in r.evidence],
        "all_collected_chunks": [chunk(e) for e in r.multistep.pool],
    }


def error_lines(q: EvalQuestion, error: str) -> tuple[dict[str, Any], dict[str, Any]]:
    trace = {"id": q.qid, "question": q.question, "steps": [], "error": error}
    result = {
        "id": q.qid,
        "question": q.question,
        "gold_titles": list(q.gold_titles),
        "route": None,
        "recall_at_5": 0.0,
        "seconds": None,
        "final_top_chunks": [],
        "all_collected_chunks": [],
        "error": error,
    }
    return trace, result


def summarise(results: list[dict[str, Any]], traces: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [(r, t) for r, t in zip(results, traces, strict=True) if "error" not in r]
    n = len(results)
    lat = [float(r["seconds"]) for r, _ in ok]

    def pct(count: int) -> float:
        return round(100.0 * count / len(ok), 1) if ok else float("nan")

    return {
        "questions": n,
        "errors": n - len(ok),
        "mean_steps": round(statistics.mean(len(t["steps"]) for _, t in ok), 2)
        if ok
        else float("nan"),
        "complex_pct": pct(sum(t["route"] == "complex" for _, t in ok)),
        "bridge_triggered_pct": pct(
            sum(bool(t["bridge_round_stats"].get("triggered")) for _, t in ok)
        ),
        "recall_at_5": round(100.0 * sum(r["recall_at_5"] for r in results) / n, 2)
        if n
        else float("nan"),
        "latency_p50_ms": round(1000.0 * percentile(lat, 50), 1),
        "latency_p95_ms": round(1000.0 * percentile(lat, 95), 1),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--config",
        type=Path,
        default=DEFAULT_CONFIG,
        help="multi-step settings YAML (default: configs/run_multistep.yaml)",
    )
    ap.add_argument(
        "--questions", required=True, help="a 2WikiMultihopQA, HotpotQA or MuSiQue question file"
    )
    ap.add_argument(
        "--db", type=Path, help="graph database (default: bench_out/eval_dbs/<dataset>.kuzu)"
    )
    ap.add_argument("--limit", type=int, help="only the first N questions")
    ap.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        help="output folder (default: bench_out/multistep/)",
    )
    ap.add_argument(
        "--force-route",
        choices=("simple", "complex"),
        help="skip the complexity classifier and take this route",
    )
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    args = ap.parse_args(argv)

    try:
        config = load_config(args.config)
        dataset = load_dataset(args.questions, limit=args.limit)
        if args.out.exists() and not args.out.is_dir():
            raise InvalidArgumentError(f"--out {args.out} is a file, not a folder")
        db = args.db or DEFAULT_DB_DIR / f"{dataset.name}.kuzu"
        db.parent.mkdir(parents=True, exist_ok=True)
        embedder = Embedder()
        build_s, built = ensure_graph(
            dataset.corpus_path, str(db), embedder=embedder, progress=not args.quiet
        )
        print(
            f"{dataset.name}: {len(dataset.questions)} questions, graph {db} "
            + (f"built in {build_s:.0f} s" if built else "reused"),
            file=sys.stderr,
        )
        store = GraphStore.open(str(db), read_only=True)
        components = GraphComponents(store, embedder)
    except KGAgentError as exc:
        print(f"run_multistep_retrieval: {one_line(exc)}", file=sys.stderr)
        return 1

    args.out.mkdir(parents=True, exist_ok=True)
    traces_path, results_path = args.out / TRACES_NAME, args.out / RESULTS_NAME
    traces: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    try:
        pipeline = components.pipeline(
            AgentConfig(
                offline=True,
                fewshot=False,
                retrieval="multistep",
                top_k=30,
                route=args.force_route,
                multistep_config=config,
            )
        )
        if dataset.questions:  # load the model, the embedding matrix and the linker's automaton
            pipeline.search(dataset.questions[0].question)
        t0 = time.perf_counter()
        with (
            traces_path.open("w", encoding="utf-8") as tf,
            results_path.open("w", encoding="utf-8") as rf,
        ):
            for i, q in enumerate(dataset.questions, start=1):
                try:
                    started = time.perf_counter()
                    r = pipeline.search(q.question)
                    took = time.perf_counter() - started
                    assert r.multistep is not None
                    trace = {"id": q.qid, **r.multistep.to_dict()}
                    result = result_line(q, r, took)
                except Exception as exc:  # one bad question must not lose the run
                    trace, result = error_lines(q, f"{type(exc).__name__}: {one_line(exc)}")
                    print(f"  {q.qid}: {trace['error']}", file=sys.stderr)
                traces.append(trace)
                results.append(result)
                tf.write(json.dumps(trace, ensure_ascii=False) + "\n")
                rf.write(json.dumps(result, ensure_ascii=False) + "\n")
                if not args.quiet and (i % 25 == 0 or i == len(dataset.questions)):
                    print(f"  {i}/{len(dataset.questions)} questions", file=sys.stderr)
    finally:
        store.close()

    s = summarise(results, traces)
    print(f"dataset              {dataset.name}")
    print(f"questions            {s['questions']} ({s['errors']} errors)")
    print(f"mean steps           {s['mean_steps']}")
    print(f"routed complex       {s['complex_pct']} %")
    print(f"bridge triggered     {s['bridge_triggered_pct']} %")
    print(f"Recall@{RECALL_K}             {s['recall_at_5']} %")
    print(f"latency p50 / p95    {s['latency_p50_ms']} / {s['latency_p95_ms']} ms")
    print(f"wrote {traces_path} and {results_path} in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python
"""Tune the graph reranker's weights on 2WikiMultihopQA: passage recall per setting.

Loads the 6,119-passage corpus into a graph (or reuses one with ``--db``), runs
dense retrieval (top ``--candidates`` sections per dev question through the
HNSW index), reranks the candidates with each setting of a small weight grid
and prints Recall@2 and Recall@5 (share of a question's gold titles among the
top-k distinct titles, averaged) beside the no-rerank baseline. Also times the
reranker: the subgraph fetch (Kùzu), the personalised PageRank (scipy) on the
real subgraphs, and PPR on a synthetic 2,000-node graph.

    .venv/bin/python scripts/tune_rerank.py --db /tmp/kg2wiki.kuzu --json out.json

Building the graph embeds ~6.6k sections (minutes on 2 cores); give ``--db`` a
path to keep it: an existing database there is reused, a missing one is built.
Data: ``../shared/data/multihop/2wikimultihopqa`` (``--data`` overrides).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "multihop" / "2wikimultihopqa"
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

from kg_agent.embedding import Embedder  # noqa: E402
from kg_agent.ingest.pipeline import LoadOptions, load_source  # noqa: E402
from kg_agent.retrieval.base import Evidence  # noqa: E402
from kg_agent.retrieval.rerank import (  # noqa: E402
    DEFAULT_WEIGHTS,
    GraphReranker,
    RerankWeights,
    personalized_pagerank,
)
from kg_agent.store import GraphStore  # noqa: E402

GLOBAL = (0.0, 0.1, 0.25, 0.5)
PERSONAL = (0.0, 0.1, 0.25, 0.5, 1.0, 2.0)
HOPS = (1, 2)


def recall(ranked: list[Evidence], gold: set[str], k: int) -> float:
    titles = list(dict.fromkeys(e.title for e in ranked))[:k]
    return len(gold.intersection(titles)) / len(gold)


def candidates(store: GraphStore, vectors: np.ndarray, k: int) -> list[list[Evidence]]:
    out = []
    for v in vectors:
        hits = store.vector_search(v.tolist(), k)
        out.append(
            [
                Evidence(
                    section_id=h.section_id,
                    title=h.title,
                    heading=h.heading,
                    heading_path=h.heading_path,
                    content=h.text,
                    similarity=h.score,
                    pagerank=h.pagerank,
                    score=h.score,
                )
                for h in hits
            ]
        )
    return out


def ms(values: list[float]) -> dict[str, float]:
    v = sorted(values)
    return {
        "median": round(1000 * statistics.median(v), 3),
        "p95": round(1000 * v[int(0.95 * (len(v) - 1))], 3),
        "max": round(1000 * v[-1], 3),
    }


def synthetic_ppr_ms(n: int = 2000, degree: int = 5, repeats: int = 50) -> dict[str, Any]:
    """PPR alone on a random undirected graph of ``n`` nodes (matrix build included)."""
    rng = np.random.default_rng(0)
    m = n * degree
    rows, cols = rng.integers(0, n, m), rng.integers(0, n, m)
    w = sp.csr_matrix((np.ones(m), (rows, cols)), shape=(n, n))
    adj = w + w.T
    seeds = np.zeros(n)
    seeds[:30] = rng.random(30)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        personalized_pagerank(adj, seeds)
        times.append(time.perf_counter() - t0)
    return {"nodes": n, "edges": int(adj.nnz // 2), **ms(times)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", type=Path, help="graph to reuse, or where to build it")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--candidates", type=int, default=30)
    ap.add_argument("--limit", type=int, help="only the first N questions")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args(argv)

    questions = json.loads((args.data / "questions.dev.json").read_text(encoding="utf-8"))
    if args.limit:
        questions = questions[: args.limit]
    embedder = Embedder()
    tmp: tempfile.TemporaryDirectory[str] | None = None
    db = args.db
    if db is None:
        tmp = tempfile.TemporaryDirectory(prefix="tune_rerank_")
        db = Path(tmp.name) / "2wiki.kuzu"
    if not db.exists():
        print(f"building {db} from {args.data / 'corpus.json'} (minutes) ...", file=sys.stderr)
        t0 = time.perf_counter()
        load_source(
            args.data / "corpus.json", db, embedder=embedder, options=LoadOptions(progress=False)
        )
        print(f"built in {time.perf_counter() - t0:.0f}s", file=sys.stderr)

    result: dict[str, Any] = {"questions": len(questions), "candidates": args.candidates}
    with GraphStore.open(db, read_only=True) as store:
        st = store.stats()
        result["graph"] = {
            "articles": st.articles,
            "stubs": st.stub_articles,
            "links": st.links,
            "sections": st.sections,
        }
        vectors = embedder.embed([q["question"] for q in questions])
        t0 = time.perf_counter()
        cands = candidates(store, vectors, args.candidates)
        result["retrieval_s"] = round(time.perf_counter() - t0, 2)
        gold = [set(q["supporting_facts"]) for q in questions]

        def evaluate(rank: Any) -> dict[str, float]:
            r2 = r5 = 0.0
            for c, g in zip(cands, gold, strict=True):
                ranked = rank(c)
                r2 += recall(ranked, g, 2)
                r5 += recall(ranked, g, 5)
            return {"recall@2": round(r2 / len(gold), 4), "recall@5": round(r5 / len(gold), 4)}

        base = evaluate(lambda c: c)
        result["baseline"] = base
        result["candidate_recall"] = round(
            sum(recall(c, g, 10**6) for c, g in zip(cands, gold, strict=True)) / len(gold), 4
        )
        rows = []
        print(
            f"{len(questions)} questions, dense top-{args.candidates}; candidates hold "
            f"{result['candidate_recall']:.3f} of the gold titles"
        )
        print(f"{'setting':<34} {'R@2':>7} {'R@5':>7}")
        print(f"{'baseline (no rerank)':<34} {base['recall@2']:>7.4f} {base['recall@5']:>7.4f}")
        for hops, g, p in itertools.product(HOPS, GLOBAL, PERSONAL):
            if g == 0 and p == 0:
                continue
            if hops > 1 and p == 0:
                continue  # hops only changes the personalised signal
            w = RerankWeights(retrieval=1.0, global_pagerank=g, personalized_pagerank=p)
            rr = GraphReranker(store, weights=w, hops=hops)
            scores = evaluate(rr.rerank)
            label = f"hops={hops} global={g:<4} ppr={p:<4}"
            mark = " *" if w == DEFAULT_WEIGHTS and hops == 1 else ""
            print(f"{label:<34} {scores['recall@2']:>7.4f} {scores['recall@5']:>7.4f}{mark}")
            rows.append(
                {
                    "hops": hops,
                    "weights": {"retrieval": 1.0, "global_pagerank": g, "personalized_pagerank": p},
                    **scores,
                }
            )
        result["grid"] = rows

        # Latency of the default reranker on the real candidate lists.
        timing: dict[str, Any] = {}
        for hops in HOPS:
            rr = GraphReranker(store, hops=hops)
            fetch, ppr, total, nodes, edges = [], [], [], [], []
            for c in cands:
                seeds: dict[str, float] = {}
                for e in c:
                    seeds[e.title] = max(seeds.get(e.title, 0.0), e.similarity)
                t0 = time.perf_counter()
                g = rr.subgraph(list(seeds))
                t1 = time.perf_counter()
                pers = np.zeros(len(g.titles))
                pers[: len(seeds)] = list(seeds.values())
                personalized_pagerank(g.adjacency, pers)
                t2 = time.perf_counter()
                rr.rerank(c)
                t3 = time.perf_counter()
                fetch.append(t1 - t0)
                ppr.append(t2 - t1)
                total.append(t3 - t2)
                nodes.append(len(g.titles))
                edges.append(g.adjacency.nnz // 2)
            timing[f"hops={hops}"] = {
                "subgraph_nodes_median": int(statistics.median(nodes)),
                "subgraph_nodes_max": max(nodes),
                "subgraph_edges_median": int(statistics.median(edges)),
                "fetch_ms": ms(fetch),
                "ppr_ms": ms(ppr),
                "rerank_total_ms": ms(total),
            }
        timing["synthetic_2k"] = synthetic_ppr_ms()
        result["timing"] = timing
    print("timing (ms):")
    print(json.dumps(timing, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Does Kùzu's checkpoint after a small write grow with the graph or with the write?

An update's commit pays Kùzu's checkpoint, which rewrites the storage a deleted edge
was in. On the update benchmark's graphs (13k and 125k articles) the commit after the
same ten deletions took 0.28 and 1.52 s, which reads as "grows with the graph". But a
graph of 13k articles has few storage regions: ten changes touch all of them. This
script builds graphs of the benchmark's shape (articles and their links, the table an
update deletes the most from) at sizes the loader would take an hour to reach, each
straight from parquet, and times the commit and close after a few small writes (inserts, property
updates, deletions of one link or of every link of a few articles), each on a fresh
copy::

    .venv/bin/python scripts/bench_checkpoint.py --sizes 100000,300000,1000000 \\
        --json bench_out/checkpoint-scale.json

If the commit followed the regions a write touches, the cost of the same write would
level off once the graph holds many more regions than the write touches.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_scale import cpu_model

from kg_agent.store import GraphStore


def build(db: Path, n: int, degree: int, work: Path, skew: float = 3.0, seed: int = 1) -> int:
    """A graph of ``n`` articles and ~``degree`` links each, written by ``COPY`` as a load
    writes it. Returns the links.

    A link's target is ``n * u**skew`` for a uniform ``u``: ``skew`` 1 spreads them evenly,
    3 (the default) sends half of them to the first eighth of the articles, hubs as
    Wikipedia has (whose old, much-linked articles also come first in a dump)."""
    rng = np.random.default_rng(seed)
    titles = pa.array([f"Article {i:08d}" for i in range(n)], pa.string())
    articles = pa.table(
        {
            "title": titles,
            "page_id": pa.array(np.arange(1, n + 1), pa.int64()),
            "is_stub": pa.array(np.zeros(n, bool)),
            "is_disambiguation": pa.array(np.zeros(n, bool)),
            "pagerank": pa.array(np.zeros(n)),
            "n_sections": pa.array(np.full(n, 5), pa.int64()),
            "word_count": pa.array(np.full(n, 500), pa.int64()),
            "load_id": pa.array(["bench"] * n, pa.string()),
            "revision": pa.array(np.arange(1, n + 1), pa.int64()),
            "digest": pa.array(["0" * 16] * n, pa.string()),
        }
    )
    pq.write_table(articles, work / "articles.parquet")
    files = []
    step = max(1, 2_000_000 // degree)
    for lo in range(0, n, step):  # sources in load order, in pieces that fit memory
        hi = min(n, lo + step)
        per = rng.poisson(degree, hi - lo)
        src = np.repeat(np.arange(lo, hi), per)
        dst = (n * rng.random(len(src)) ** skew).astype(np.int64)
        keep = src != dst
        src, dst = src[keep], dst[keep]
        pairs = np.unique(src * n + dst)  # one edge per pair, as the loader counts them
        src, dst = pairs // n, pairs % n
        path = work / f"links-{lo:09d}.parquet"
        pq.write_table(
            pa.table(
                {
                    "from": titles.take(pa.array(src)),
                    "to": titles.take(pa.array(dst)),
                    "count": pa.array(np.ones(len(src), np.int64)),
                    "inferred": pa.array(np.zeros(len(src), bool)),
                }
            ),
            path,
        )
        files.append(path)
    with GraphStore.open(db, read_only=False, create=True) as store:
        store.ensure_schema(dimension=384, model="bench")
        store.copy_parquet("Article", [work / "articles.parquet"])
        store.copy_parquet("LINKS_TO", files)
        links = int(store._scalar("MATCH ()-[r:LINKS_TO]->() RETURN count(r)") or 0)
    for path in [work / "articles.parquet", *files]:
        path.unlink()
    return links


_DELETE_LINKS = "MATCH (a:Article {title: $a})-[r:LINKS_TO]->() DELETE r"
_DELETE_LINK = "MATCH (a:Article {title: $a})-[r:LINKS_TO]->(b:Article {title: $b}) DELETE r"
_INSERT_LINK = (
    "MATCH (a:Article {title: $a}), (b:Article {title: $b}) "
    "CREATE (a)-[:LINKS_TO {count: 1, inferred: false}]->(b)"
)
_SET_WORDS = "MATCH (a:Article {title: $a}) SET a.word_count = 1"


def edits(db: Path, n: int, seed: int = 7) -> dict[str, list[tuple[str, dict[str, str]]]]:
    """What each measured transaction runs: statements written for one title, run as the
    update's write runs a few titles (prepared primary-key lookups)."""
    rng = random.Random(seed)
    picked = [f"Article {i:08d}" for i in rng.sample(range(n), 100)]
    with GraphStore.open(db, read_only=True) as store:
        one = [  # one link of each picked article
            (a, str(found[0][0]))
            for a in picked
            if (
                found := store._pk(
                    "MATCH (a:Article {title: $a})-[:LINKS_TO]->(b:Article) RETURN b.title LIMIT 1",
                    {"a": a},
                )
            )
        ]
    others = picked[1:] + picked[:1]
    return {
        "nothing": [],
        "set 100 articles' word counts": [(_SET_WORDS, {"a": a}) for a in picked],
        "insert 1 link": [(_INSERT_LINK, {"a": picked[0], "b": others[0]})],
        "insert 100 links": [
            (_INSERT_LINK, {"a": a, "b": b}) for a, b in zip(picked, others, strict=True)
        ],
        "delete 1 link": [(_DELETE_LINK, {"a": a, "b": b}) for a, b in one[:1]],
        "delete 1 link of 100 articles": [(_DELETE_LINK, {"a": a, "b": b}) for a, b in one],
        "delete 1 article's links": [(_DELETE_LINKS, {"a": a}) for a in picked[:1]],
        "delete 10 articles' links": [(_DELETE_LINKS, {"a": a}) for a in picked[:10]],
        "delete 100 articles' links": [(_DELETE_LINKS, {"a": a}) for a in picked],
    }


def commit_after(
    db: Path, copy: Path, statements: list[tuple[str, dict[str, str]]]
) -> tuple[float, float]:
    """(statements s, commit and close s) of one transaction on a fresh copy of ``db``."""
    shutil.copy2(db, copy)
    store = GraphStore.open(copy, read_only=False)
    store.begin()
    t0 = time.perf_counter()
    for cypher, params in statements:
        store._pk(cypher, params)
    t1 = time.perf_counter()
    store.commit()
    store.close()
    t2 = time.perf_counter()
    copy.unlink()
    Path(str(copy) + ".wal").unlink(missing_ok=True)
    return t1 - t0, t2 - t1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100000,300000,1000000", help="Articles, comma-separated.")
    ap.add_argument("--degree", type=int, default=39, help="Mean links an article (the bench's).")
    ap.add_argument(
        "--skew", type=float, default=3.0, help="Targets n*u**skew: 1 even, 3 hubs first."
    )
    ap.add_argument("--repeat", type=int, default=2, help="Runs of each; the median is kept.")
    ap.add_argument("--work", type=Path, help="Where the graphs go (default: a temporary dir).")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    rows: list[dict[str, Any]] = []
    print(f"{'articles':>10} {'edit':<32} {'edit s':>8} {'commit s':>9}")
    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        work = Path(tmp)
        for n in (int(s) for s in args.sizes.split(",")):
            db = work / f"g{n}.kuzu"
            t = time.perf_counter()
            links = build(db, n, args.degree, work, skew=args.skew)
            built = time.perf_counter() - t
            mib = db.stat().st_size / 2**20
            print(f"{n:>10,} {links:>11,} links, built in {built:.1f} s, {mib:,.0f} MiB")
            for name, statements in edits(db, n).items():
                runs = [
                    commit_after(db, work / "copy.kuzu", statements) for _ in range(args.repeat)
                ]
                edit = float(np.median([r[0] for r in runs]))
                commit = float(np.median([r[1] for r in runs]))
                rows.append(
                    {
                        "articles": n,
                        "links": links,
                        "edit": name,
                        "edit_s": round(edit, 3),
                        "commit_and_close_s": round(commit, 3),
                        "runs": [[round(a, 3), round(b, 3)] for a, b in runs],
                        "file_mib": round(db.stat().st_size / 2**20, 1),
                    }
                )
                print(f"{n:>10,} {name:<32} {edit:>8.3f} {commit:>9.3f}", flush=True)
            db.unlink()
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        out = {"machine": cpu_model(), "degree": args.degree, "skew": args.skew, "rows": rows}
        args.json.write_text(json.dumps(out, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()

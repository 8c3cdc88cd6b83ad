#!/usr/bin/env python3
"""Benchmark an update's statements by primary-key lookups against one scan, by graph size.

Why: an update's write looks up and edits the articles it touches (``GraphStore._keyed``).
Kùzu 0.11.3 answers ``UNWIND $titles … MATCH (a:Article {title: …})`` with a scan of the
table, whose cost grows with the graph however few the titles, and a prepared
``{title: $key}`` with a primary-key lookup, whose cost does not. ``_keyed`` picks one by
the ratio of titles to rows. This measures both forms, and the one it picks, of a
few of the update's statements, for ``--keys`` titles, on graphs of each size (the
graphs ``scripts/bench_update.py`` loads: ``--graphs``), so that what each costs on a larger
graph can be read off the table. Writes run in a transaction that is rolled back (no
``COPY`` in it: the rollback is safe). ``--checkpoint`` also times the commit of a few
small edits (deleting edges makes Kùzu's checkpoint rewrite the relationship table's
node groups they were in, however few edges each loses; inserting does not). Prints
tables and saves JSON::

    .venv/bin/python scripts/bench_lookups.py \\
        --graphs bench_out/update/n10000/base.kuzu,bench_out/update/n100000/base.kuzu \\
        --checkpoint --json bench_out/lookups.json
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_scale import cpu_model  # noqa: E402

from kg_agent.store import GraphStore  # noqa: E402
from kg_agent.store import graph as graph_module  # noqa: E402
from kg_agent.store.edits import GraphEdits  # noqa: E402

#: The ratios of keys to rows forcing each form; "auto" is what an update picks.
DEFAULT = (graph_module._POINT_PER_ROWS, graph_module._POINT_PER_REL_ROWS)
FORMS = {"point": (0, 0), "scan": (10**12, 10**12), "auto": DEFAULT}

STATEMENTS: dict[str, Callable[[GraphStore, list[str]], Any]] = {
    "existing_articles": lambda s, t: s.existing_articles(t),
    "linking_articles": lambda s, t: GraphEdits(s).linking_articles(t),
    "still_linked": lambda s, t: GraphEdits(s).still_linked(t),
    "stubs_linked_from": lambda s, t: GraphEdits(s).stubs_linked_from(t),
    "clear_article_content": lambda s, t: s.clear_article_content(t),
}
WRITES = {"clear_article_content"}


def measure(db: Path, keys: list[int], repeat: int) -> list[dict[str, Any]]:
    with GraphStore.open(db, read_only=True) as store:
        titles = [
            str(r[0]) for r in store._run("MATCH (a:Article) WHERE NOT a.is_stub RETURN a.title")
        ]
        articles = int(store._scalar("MATCH (a:Article) RETURN count(a)"))
        links = int(store._scalar("MATCH ()-[r:LINKS_TO]->() RETURN count(r)"))
    rng = random.Random(0)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / db.name
        shutil.copy2(db, copy)  # writes are rolled back, but never into the benchmark's graph
        with GraphStore.open(copy, read_only=False) as store:
            for k in keys:
                sample = rng.sample(titles, min(k, len(titles)))
                for name, fn in STATEMENTS.items():
                    row: dict[str, Any] = {
                        "graph": str(db),
                        "articles": articles,
                        "links": links,
                        "keys": len(sample),
                        "statement": name,
                    }
                    for form, (nodes, rels) in FORMS.items():
                        graph_module._POINT_PER_ROWS = nodes
                        graph_module._POINT_PER_REL_ROWS = rels
                        best = float("inf")
                        for _ in range(repeat):
                            if name in WRITES:
                                store.begin()
                            t0 = time.perf_counter()
                            fn(store, sample)
                            best = min(best, time.perf_counter() - t0)
                            if name in WRITES:
                                store.rollback()
                        row[f"{form}_s"] = round(best, 4)
                    rows.append(row)
                    print(
                        f"{articles:>9,} {links:>11,} {len(sample):>6} {name:<22} "
                        f"{row['point_s']:>8.3f} {row['scan_s']:>8.3f} {row['auto_s']:>8.3f}",
                        flush=True,
                    )
    return rows


#: What a transaction does before its commit, for the checkpoint's cost (``--checkpoint``).
EDITS: dict[str, str | None] = {
    "nothing": None,
    "insert 1 link": "MATCH (a:Article {title: $t[1]}), (b:Article {title: $t[2]}) "
    "CREATE (a)-[:LINKS_TO {count: 1, inferred: false}]->(b)",
    "set 10 articles' word counts": "UNWIND $t[1:10] AS t MATCH (a:Article {title: t}) "
    "SET a.word_count = 1",
    "delete 1 article's links": "UNWIND $t[1:1] AS t "
    "MATCH (a:Article {title: t})-[r:LINKS_TO]->() DELETE r",
    "delete 10 articles' links": "UNWIND $t[1:10] AS t "
    "MATCH (a:Article {title: t})-[r:LINKS_TO]->() DELETE r",
    "delete 10 articles' sections": "UNWIND $t[1:10] AS t "
    "MATCH (a:Article {title: t})-[:HAS_SECTION]->(s:Section) DETACH DELETE s",
    # a hundred articles spread over the graph, as an update of 0.1% at 100k rewrites:
    # the checkpoint's cost follows the node groups touched, not the edges deleted
    "delete 100 articles' links": "UNWIND $t[1:100] AS t "
    "MATCH (a:Article {title: t})-[r:LINKS_TO]->() DELETE r",
    "delete 1 link of 100 articles": "UNWIND $p AS p "
    "MATCH (a:Article {title: p[1]})-[r:LINKS_TO]->(b:Article {title: p[2]}) DELETE r",
}


def checkpoint(db: Path) -> list[dict[str, Any]]:
    """Seconds of the commit and the close (where Kùzu checkpoints a small write) after
    each of ``EDITS``, each on a fresh copy of ``db``."""
    with GraphStore.open(db, read_only=True) as store:
        titles = [
            str(r[0]) for r in store._run("MATCH (a:Article) WHERE NOT a.is_stub RETURN a.title")
        ]
    sample = random.Random(1).sample(titles, min(100, len(titles)))
    with GraphStore.open(db, read_only=True) as store:
        pairs = [  # one link of each sampled article (the first its lookup returns)
            [t, str(found[0][0])]
            for t in sample
            if (
                found := store._pk(
                    "MATCH (a:Article {title: $t})-[:LINKS_TO]->(b:Article) RETURN b.title LIMIT 1",
                    {"t": t},
                )
            )
        ]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / db.name
        for name, cypher in EDITS.items():
            shutil.copy2(db, copy)
            store = GraphStore.open(copy, read_only=False)
            store.begin()
            t0 = time.perf_counter()
            if cypher:
                store._run(cypher, {"p": pairs} if "$p" in cypher else {"t": sample})
            t1 = time.perf_counter()
            store.commit()
            store.close()
            t2 = time.perf_counter()
            rows.append(
                {
                    "graph": str(db),
                    "edit": name,
                    "edit_s": round(t1 - t0, 3),
                    "commit_and_close_s": round(t2 - t1, 3),
                }
            )
            print(f"{db.parent.name:>10} {name:<30} {t1 - t0:>8.3f} {t2 - t1:>8.3f}", flush=True)
            copy.unlink()
            Path(str(copy) + ".wal").unlink(missing_ok=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graphs", required=True, help="Graphs to measure on, comma-separated.")
    ap.add_argument("--keys", default="10,100,1000", help="Titles looked up, comma-separated.")
    ap.add_argument("--repeat", type=int, default=3, help="Runs of each; the best is kept.")
    ap.add_argument(
        "--checkpoint", action="store_true", help="Also time the commit after small edits."
    )
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    keys = [int(k) for k in args.keys.split(",")]
    head = ("articles", "links", "titles", "statement", "point s", "scan s", "auto s")
    print("{:>9} {:>11} {:>6} {:<22} {:>8} {:>8} {:>8}".format(*head))
    rows: list[dict[str, Any]] = []
    for g in args.graphs.split(","):
        rows += measure(Path(g), keys, args.repeat)
    commits: list[dict[str, Any]] = []
    if args.checkpoint:
        print("\n{:>10} {:<30} {:>8} {:>8}".format("graph", "edit", "edit s", "commit s"))
        for g in args.graphs.split(","):
            commits += checkpoint(Path(g))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        out = {"machine": cpu_model(), "rows": rows, "checkpoint": commits}
        args.json.write_text(json.dumps(out, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()

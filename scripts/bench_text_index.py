#!/usr/bin/env python3
"""Kùzu's full-text index against tantivy: build time, memory, disk, query time, recall.

Why: kg-agent's BM25 moved from Kùzu 0.11.3's FTS extension to a tantivy index beside the
graph; this is the measurement behind that choice. Sections are synthetic but made of real
English text (160-word windows of the English sample's words, as a graph of Wikipedia has
~6 sections of <=160 words per article). Each engine builds in a fresh process, so peak RSS
is its own; recall is BM25 Recall@2/@5 on the 2WikiMultihopQA dev questions over the
6,119-passage pool with each engine (same sections, same top-30, distinct titles).

    .venv/bin/python scripts/bench_text_index.py --sizes 100000,1000000 --json bench_out/text.json
"""

from __future__ import annotations

import argparse
import bz2
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared" / "data"
ENWIKI = SHARED / "wiki" / "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
QUERIES = [
    "Who was the mother of the director of the film about anarchism in Spain",
    "When did Apollo 11 land on the moon",
    "capital of Algeria",
    "Which university did Albert Einstein attend",
    "albedo of snow and forests",
    "Aristotle and the philosophy of nature",
]


def make_sections(n: int, path: Path) -> None:
    with bz2.open(ENWIKI) as fh:
        words = re.findall(r"[A-Za-z]{2,}", fh.read().decode("utf-8", "replace"))
    rng = random.Random(1)
    ids, texts = [], []
    for i in range(n):
        s = rng.randrange(len(words) - 200)
        texts.append(" ".join(words[s : s + 160]))
        ids.append(f"A{i // 6}::{i % 6:04d}")
    pq.write_table(
        pa.table({"id": ids, "article": [x.split("::")[0] for x in ids], "text": texts}), path
    )


def build_kuzu(parquet: Path, work: Path) -> dict[str, Any]:
    import kuzu

    db_path = work / "fts.kuzu"
    db = kuzu.Database(str(db_path), buffer_pool_size=int(os.environ.get("POOL_MB", "12000")) << 20)
    c = kuzu.Connection(db)
    c.execute("CREATE NODE TABLE S(id STRING PRIMARY KEY, article STRING, text STRING)")
    c.execute(f"COPY S FROM '{parquet}'")
    t0 = time.perf_counter()
    c.execute("CALL CREATE_FTS_INDEX('S', 'fts', ['text'], stemmer := 'english')")
    build = time.perf_counter() - t0
    lat = []
    for q in QUERIES * 3:
        t = time.perf_counter()
        c.execute(
            "CALL QUERY_FTS_INDEX('S', 'fts', $q, top := 30) RETURN node.id, score", {"q": q}
        ).get_all()
        lat.append(time.perf_counter() - t)
    c.close()
    db.close()
    return {
        "build_s": build,
        "query_ms": 1000 * statistics.median(lat),
        "disk_mib": db_path.stat().st_size / 2**20,
    }


def build_tantivy(parquet: Path, work: Path) -> dict[str, Any]:
    from kg_agent.store.text_index import TextIndex

    t0 = time.perf_counter()
    index = TextIndex(work / "tv", create=True)
    w = index.writer(threads=os.cpu_count() or 1)
    for b in pq.ParquetFile(parquet).iter_batches(batch_size=20000):
        ids = b.column("id").to_pylist()
        w.add_sections(
            ids, b.column("article").to_pylist(), [""] * len(ids), b.column("text").to_pylist()
        )
    w.commit()
    w.close()
    build = time.perf_counter() - t0
    index.reload()
    lat = []
    for q in QUERIES * 3:
        t = time.perf_counter()
        index.search_sections(q, 30)
        lat.append(time.perf_counter() - t)
    size = sum(p.stat().st_size for p in (work / "tv").rglob("*") if p.is_file())
    return {"build_s": build, "query_ms": 1000 * statistics.median(lat), "disk_mib": size / 2**20}


def recall(engine: str) -> dict[str, float]:
    """BM25 Recall@2/@5 on the 2Wiki dev questions, sections as the loader makes them."""
    from kg_agent.evaluation.metrics import recall_at_k
    from kg_agent.ingest.chunking import chunk_text
    from kg_agent.ingest.passages import iter_passage_pages

    corpus = SHARED / "multihop" / "2wikimultihopqa" / "corpus.json"
    rows: dict[str, list[str]] = {"id": [], "article": [], "text": []}
    for page in iter_passage_pages(corpus, "passages"):
        n = 0
        for sec in page.sections:
            for part in chunk_text(sec.text):
                rows["id"].append(f"{page.title}::{n:04d}")
                rows["article"].append(page.title)
                rows["text"].append(part)
                n += 1
    qs = json.loads((SHARED / "multihop" / "2wikimultihopqa" / "questions.dev.json").read_text())
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        parquet = work / "s.parquet"
        pq.write_table(pa.table(rows), parquet)
        search: Any
        if engine == "kuzu":
            import kuzu

            db = kuzu.Database(str(work / "k.kuzu"))
            c = kuzu.Connection(db)
            c.execute("CREATE NODE TABLE S(id STRING PRIMARY KEY, article STRING, text STRING)")
            c.execute(f"COPY S FROM '{parquet}'")
            c.execute("CALL CREATE_FTS_INDEX('S', 'fts', ['text'], stemmer := 'english')")

            def search(q: str) -> list[str]:
                q = " ".join(q.replace("*", " ").replace("?", " ").split())
                res = c.execute(
                    "CALL QUERY_FTS_INDEX('S', 'fts', $q, top := 30) RETURN node.article, score "
                    "ORDER BY score DESC",
                    {"q": q},
                ).get_all()
                return [str(r[0]) for r in res]
        else:
            from kg_agent.store.text_index import TextIndex

            index = TextIndex(work / "tv", create=True)
            w = index.writer()
            w.add_sections(rows["id"], rows["article"], [""] * len(rows["id"]), rows["text"])
            w.commit()
            w.close()
            index.reload()

            def search(q: str) -> list[str]:
                return [sid.rsplit("::", 1)[0] for sid, _ in index.search_sections(q, 30)]

        r2 = r5 = 0.0
        for q in qs:
            titles = search(q["question"])
            r2 += recall_at_k(titles, q["supporting_facts"], 2)
            r5 += recall_at_k(titles, q["supporting_facts"], 5)
    return {"R@2": round(100 * r2 / len(qs), 1), "R@5": round(100 * r5 / len(qs), 1)}


def child(engine: str, parquet: str, work: str) -> None:
    fn = build_kuzu if engine == "kuzu" else build_tantivy
    out = fn(Path(parquet), Path(work))
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100000", help="sections, comma list")
    ap.add_argument("--engines", default="kuzu,tantivy")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return
    rows = []
    for n in (int(x) for x in args.sizes.split(",")):
        with tempfile.TemporaryDirectory(prefix="kg-text-") as tmp:
            parquet = Path(tmp) / "sections.parquet"
            make_sections(n, parquet)
            for engine in args.engines.split(","):
                work = Path(tmp) / engine
                work.mkdir()
                proc = subprocess.run(
                    [sys.executable, __file__, "--child", engine, str(parquet), str(work)],
                    capture_output=True,
                    text=True,
                )
                if proc.returncode != 0:
                    res = {"error": proc.stderr.strip().splitlines()[-1][:200]}
                else:
                    res = json.loads(proc.stdout.strip().splitlines()[-1])
                rows.append({"sections": n, "engine": engine, **res})
                print(rows[-1], flush=True)
                shutil.rmtree(work, ignore_errors=True)
    quality = {e: recall(e) for e in args.engines.split(",")}
    print("2Wiki BM25 recall:", quality)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"rows": rows, "recall_2wiki": quality}, indent=1))


if __name__ == "__main__":
    main()

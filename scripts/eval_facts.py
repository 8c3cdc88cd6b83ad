#!/usr/bin/env python
"""How the FactRetriever maps relation words to infobox keys: the synonym table, the
similarity of the relation phrase to key names, both, or neither.

    .venv/bin/kg-agent load ../shared/data/wiki/enwiki-latest-pages-articles1.xml-\
p000000010p000030302-shortened.bz2 --db en.kuzu
    .venv/bin/python scripts/eval_facts.py --db en.kuzu --json bench_out/eval_facts.json

For every question of the plain set (``tests/questions/enwiki_sample.json``) of the
kinds asked (infobox, two-hop and text by default), the retriever's best fact candidate
is read as the short answer; the table counts how many match the gold, each way, and how
many of those the retriever is sure of (confidence at or above the reader's threshold).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parents[1]
WAYS = {
    "table + key-name similarity (default)": (True, True),
    "table alone": (True, False),
    "key-name similarity alone": (False, True),
    "neither": (False, False),
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", required=True, help="graph of the English sample")
    ap.add_argument("--questions", default=str(ROOT / "tests/questions/enwiki_sample.json"))
    ap.add_argument("--kinds", default="infobox,two_hop,text")
    ap.add_argument("--json", type=Path, help="save the rows here")
    args = ap.parse_args()

    from kg_agent.embedding import Embedder
    from kg_agent.evaluation.trust import load_plain, matches
    from kg_agent.pipeline import GraphComponents
    from kg_agent.retrieval.facts import FactRetriever, short_value
    from kg_agent.store import GraphStore

    kinds = set(args.kinds.split(","))
    questions = [q for q in load_plain(args.questions) if q.kind in kinds and q.answerable]
    rows = []
    with GraphStore.open(args.db, read_only=True) as store:
        components = GraphComponents(store, Embedder(store.meta().get("model")))
        embed = components.facts.embed
        for name, (synonyms, similar) in WAYS.items():
            facts = FactRetriever(store, embed=embed if similar else None, synonyms=synonyms)
            right = sure = sure_right = 0
            t0 = time.perf_counter()
            for q in questions:
                question = components.read(q.question)
                found = facts.candidates(question)
                if not found:
                    continue
                ok = matches(short_value(found[0].rows, question.kind, q.question), q.answers)
                confident = facts.confidence(found[0]) >= facts.ranker.show_at
                right += ok
                sure += confident
                sure_right += ok and confident
            ms = 1000 * (time.perf_counter() - t0) / max(1, len(questions))
            rows.append(
                {
                    "way": name,
                    "questions": len(questions),
                    "right": right,
                    "sure": sure,
                    "sure_right": sure_right,
                    "ms_per_question": round(ms, 1),
                }
            )
    head = ("relation words matched by", "right", "sure", "sure right", "ms/q")
    print(f"{head[0]:40s} {head[1]:>6s} {head[2]:>6s} {head[3]:>11s} {head[4]:>6s}")
    for r in rows:
        print(
            f"{r['way']:40s} {r['right']:>3d}/{r['questions']:<3d}"
            f"{r['sure']:>5d} {r['sure_right']:>11d} {r['ms_per_question']:>6.1f}"
        )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"rows": rows, "questions": args.questions}, indent=1))
        print(f"saved {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/env python3
"""Measure the inferred mention graph on the multi-hop QA passage pools.

For each benchmark pool it builds a :class:`MentionMatcher` from the pool's titles,
links every section to the titles it mentions, and asks: for each question with
two or more gold passages, are the gold passages joined by a mention edge
(either direction), directly or within two hops? Also prints edge counts,
degrees, pages with no edge at all, build time and matching throughput.

The gold passages of a multi-hop question are what a graph walk must bridge, so
this is the number the matcher's guards are tuned on. ``ceiling`` is the share
whose gold passages name each other at all (case-insensitive substring of the
title or its base name), i.e. what title matching could reach.

Usage::

    python scripts/eval_mentions.py                 # table for the three pools
    python scripts/eval_mentions.py --json out.json # also save the numbers
    python scripts/eval_mentions.py --variants      # ablations of the matcher options
    python scripts/eval_mentions.py --sample 20     # print random edges to judge by eye

Reads ``../shared/data/multihop`` relative to the project root.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import re
import sys
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kg_agent.entities.matcher import MentionMatcher, base_name
from kg_agent.ingest.passages import iter_passage_pages
from kg_agent.ingest.records import ParsedPage

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "multihop"

DATASETS = {
    "2wiki": ("2wikimultihopqa/corpus.json", "2wikimultihopqa/questions.dev.json"),
    "hotpotqa": (
        "hotpotqa/hotpot_dev_distractor.dev.json",
        "hotpotqa/hotpot_dev_distractor.dev.json",
    ),
    "musique": ("musique/musique_ans.dev.jsonl", "musique/musique_ans.dev.jsonl"),
}

VARIANTS: dict[str, dict[str, Any]] = {
    "default": {},
    "ambiguous=all": {"ambiguous": "all"},
    "no base names": {"base_names": False},
    "case-sensitive only": {"case_insensitive": False},
    "min_length=3": {"min_length": 3},
    "min_length=5": {"min_length": 5},
    "no common-word list": {"common_words": frozenset()},
    "no spelling variants": {"spelling_variants": False},
    # private knobs of the matcher, set after construction
    "leftmost-longest": {"_longest_first": False},
    "no own-title rules": {"_own_words": False},
}


# 2WikiMultihopQA comparison questions ("Who was born first, A or B?") have two gold
# pages that need not name each other; the file has no type field, so guess it.
_COMPARISON = re.compile(
    r"^(Which|Who|Are|Were|Is|Was|Do|Did|Does)\b.*\b(first|earlier|later|more recently|"
    r"longer|older|younger|same|both)\b",
    re.IGNORECASE,
)


def gold_sets(name: str, path: Path) -> list[tuple[list[str], bool]]:
    """Each question's gold titles, and whether it is a bridge (chain) question."""
    if name == "2wiki":
        return [
            (
                gold := list(dict.fromkeys(q["supporting_facts"])),
                not (len(gold) == 2 and _COMPARISON.search(q["question"])),
            )
            for q in json.loads(path.read_text())
        ]
    if name == "hotpotqa":
        return [
            (list(dict.fromkeys(t for t, _ in q["supporting_facts"])), q.get("type") == "bridge")
            for q in json.loads(path.read_text())
        ]
    out = []
    with path.open() as fh:
        for line in fh:
            if line.strip():
                q = json.loads(line)
                gold = list(
                    dict.fromkeys(p["title"] for p in q["paragraphs"] if p["is_supporting"])
                )
                out.append((gold, True))  # MuSiQue questions are all compositional chains
    return out


@dataclass
class Result:
    dataset: str
    variant: str
    pages: int
    sections: int
    forms: int
    build_s: float
    match_s: float
    sections_per_s: float
    edges: int
    mentions: int
    mean_out_degree: float
    isolated_pages: int
    no_out_pages: int
    questions: int
    bridge_questions: int
    bridge_direct_any: float
    direct_any: float
    direct_all: float
    hop2_any: float
    hop2_all: float
    pairs_direct: float
    ceiling_any: float
    missing_gold: int
    extra: dict[str, Any] = field(default_factory=dict)


def build_graph(
    pages: list[ParsedPage], matcher: MentionMatcher
) -> tuple[dict[str, dict[str, int]], float]:
    """Page → {mentioned page: count}, and the seconds spent matching."""
    out: dict[str, dict[str, int]] = {}
    t0 = time.perf_counter()
    for page in pages:
        agg: dict[str, int] = {}
        for section in page.sections:
            for target, n in matcher.find(section.text, source_title=page.title).items():
                agg[target] = agg.get(target, 0) + n
        out[page.title] = agg
    return out, time.perf_counter() - t0


def _pct(num: int, den: int) -> float:
    return round(100.0 * num / den, 1) if den else 0.0


def evaluate(
    name: str,
    pages: list[ParsedPage],
    golds: list[tuple[list[str], bool]],
    variant: str,
    opts: dict[str, Any],
) -> tuple[Result, dict[str, dict[str, int]]]:
    titles = [p.title for p in pages]
    t0 = time.perf_counter()
    matcher = MentionMatcher(titles, **{k: v for k, v in opts.items() if k[0] != "_"})
    for k, v in opts.items():
        if k[0] == "_":
            setattr(matcher, k, v)
    build_s = time.perf_counter() - t0
    graph, match_s = build_graph(pages, matcher)

    und: dict[str, set[str]] = defaultdict(set)
    for src, targets in graph.items():
        for dst in targets:
            und[src].add(dst)
            und[dst].add(src)
    edges = sum(len(t) for t in graph.values())
    sections = sum(len(p.sections) for p in pages)
    texts = {p.title: " ".join(s.text for s in p.sections).lower() for p in pages}

    def near2(a: str, b: str) -> bool:
        na = und.get(a, set())
        return b in na or any(b in und.get(x, ()) for x in na)

    def names(a: str, b: str) -> bool:
        forms = {b.lower()}
        base = base_name(b)
        if base:
            forms.add(base.lower())
        return any(f in texts.get(a, "") for f in forms)

    n_q = d_any = d_all = h_any = h_all = ceil = pairs = pairs_ok = missing = 0
    n_bridge = bridge_ok = 0
    for gold, bridge in golds:
        present = [g for g in gold if g in graph]
        missing += len(gold) - len(present)
        if len(present) < 2:
            continue
        n_q += 1
        direct = {g: False for g in present}
        hop = {g: False for g in present}
        any_ceiling = False
        for a, b in itertools.combinations(present, 2):
            pairs += 1
            if b in und.get(a, ()):
                pairs_ok += 1
                direct[a] = direct[b] = True
            if near2(a, b):
                hop[a] = hop[b] = True
            if names(a, b) or names(b, a):
                any_ceiling = True
        d_any += any(direct.values())
        n_bridge += bridge
        bridge_ok += bridge and any(direct.values())
        d_all += all(direct.values())
        h_any += any(hop.values())
        h_all += all(hop.values())
        ceil += any_ceiling

    result = Result(
        dataset=name,
        variant=variant,
        pages=len(pages),
        sections=sections,
        forms=len(matcher),
        build_s=round(build_s, 4),
        match_s=round(match_s, 4),
        sections_per_s=round(sections / match_s) if match_s else 0.0,
        edges=edges,
        mentions=sum(sum(t.values()) for t in graph.values()),
        mean_out_degree=round(edges / len(pages), 3) if pages else 0.0,
        isolated_pages=sum(1 for t in titles if not und.get(t)),
        no_out_pages=sum(1 for t in titles if not graph.get(t)),
        questions=n_q,
        bridge_questions=n_bridge,
        bridge_direct_any=_pct(bridge_ok, n_bridge),
        direct_any=_pct(d_any, n_q),
        direct_all=_pct(d_all, n_q),
        hop2_any=_pct(h_any, n_q),
        hop2_all=_pct(h_all, n_q),
        pairs_direct=_pct(pairs_ok, pairs),
        ceiling_any=_pct(ceil, n_q),
        missing_gold=missing,
    )
    return result, graph


def sample_edges(
    pages: list[ParsedPage], graph: dict[str, dict[str, int]], k: int, seed: int
) -> Iterable[str]:
    """Random edges with the sentence that mentions the target, to judge precision."""
    rng = random.Random(seed)
    all_edges = sorted((s, t) for s, ts in graph.items() for t in ts)
    text = {p.title: " ".join(s.text for s in p.sections) for p in pages}
    for src, dst in rng.sample(all_edges, min(k, len(all_edges))):
        body = text[src]
        forms = [dst] + ([b] if (b := base_name(dst)) else [])
        at = -1
        for f in forms:
            at = body.find(f)
            if at < 0:
                at = body.lower().find(f.lower())
            if at >= 0:
                break
        snippet = body[max(0, at - 70) : at + len(dst) + 70].replace("\n", " ")
        yield f"[{src}] -> [{dst}]\n    …{snippet}…"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", metavar="OUT", help="save the numbers as JSON")
    ap.add_argument("--variants", action="store_true", help="run matcher ablations")
    ap.add_argument("--sample", type=int, default=0, help="print N random edges per pool")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--dataset", choices=sorted(DATASETS), action="append")
    args = ap.parse_args(argv)

    if not DATA.is_dir():
        print(
            f"shared data not found at {DATA} (expected ../shared/data/multihop)", file=sys.stderr
        )
        return 2
    results: list[Result] = []
    for name in args.dataset or list(DATASETS):
        corpus, questions = (DATA / p for p in DATASETS[name])
        if not corpus.is_file() or not questions.is_file():
            print(f"skipping {name}: {corpus} or {questions} is missing", file=sys.stderr)
            continue
        t0 = time.perf_counter()
        pages = list(iter_passage_pages(corpus))
        read_s = time.perf_counter() - t0
        golds = gold_sets(name, questions)
        variants = VARIANTS if args.variants else {"default": {}}
        for variant, opts in variants.items():
            res, graph = evaluate(name, pages, golds, variant, opts)
            res.extra["read_s"] = round(read_s, 4)
            results.append(res)
            if args.sample and variant == "default":
                print(f"\n--- {args.sample} random edges, {name} ---")
                for line in sample_edges(pages, graph, args.sample, args.seed):
                    print(line)

    cols = [
        ("dataset", "dataset", 8),
        ("variant", "variant", 19),
        ("pages", "pages", 5),
        ("questions", "qs", 3),
        ("direct_any", "direct%", 7),
        ("direct_all", "all-dir%", 8),
        ("bridge_direct_any", "bridge%", 7),
        ("hop2_any", "2hop%", 5),
        ("hop2_all", "all-2hop%", 9),
        ("pairs_direct", "pairs%", 6),
        ("ceiling_any", "ceil%", 5),
        ("edges", "edges", 5),
        ("mean_out_degree", "out-deg", 7),
        ("isolated_pages", "isolated", 8),
        ("build_s", "build_s", 7),
        ("sections_per_s", "sect/s", 6),
    ]
    print()
    print("  ".join(h.rjust(w) if i > 1 else h.ljust(w) for i, (_, h, w) in enumerate(cols)))
    for r in results:
        row = asdict(r)
        print(
            "  ".join(
                str(row[k]).rjust(w) if i > 1 else str(row[k]).ljust(w)
                for i, (k, _, w) in enumerate(cols)
            )
        )
    print(
        "\ndirect%: questions (>=2 gold pages) with a mention edge between two gold pages; "
        "all-dir%: every gold page has one;\nbridge%: direct% among bridge/chain questions "
        "(comparison questions left out); 2hop%: same within two undirected hops; "
        "pairs%: gold pairs joined directly; ceil%: a gold page names another at all."
    )
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(r) for r in results], indent=2))
        print(f"saved {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The embedder alone, in one process, over a graph's section texts: what its batch plan,
precision and the tokenizer's threads cost on a GPU (or a CPU).

Why: ``scripts/bench_embed_stage.py`` times ``kg-agent embed`` as a user runs it; when a
GPU's stage runs far below the model's speed, this says whether the model, the batches
or the tokenizer is the bound. Each configuration builds its own embedder, warms it on
256 texts, then embeds every text once (CUDA synchronised); the vectors are compared
with the fp32 run's.

    .venv/bin/python scripts/bench_embed_batches.py --db G.kuzu --device cuda --json out.json
    .venv/bin/python scripts/bench_embed_batches.py --db G.kuzu --device cpu --limit 300
    .venv/bin/python scripts/bench_embed_batches.py --db G.kuzu --device cuda --configs default \
        --stage-form --passes 3   # what each shape's first sight costs on a GPU

``G.kuzu``: any graph with sections, e.g. ``kg-agent load DUMP --db G.kuzu --embeddings
later``. The configurations with a token cap of 4,096 are what an explicit batch size
on a GPU got before the cap followed the batch size.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kg_agent.embedding import Embedder  # noqa: E402
from kg_agent.ingest.chunking import embedding_input  # noqa: E402
from kg_agent.store import GraphStore  # noqa: E402
from scripts.bench_embed_stage import chosen  # noqa: E402

#: name → (Embedder arguments, batch order, tokenizer threads); "f16" becomes float32 on a CPU
CONFIGS: dict[str, tuple[dict[str, Any], str, bool]] = {
    "fp32-b256-cap4096": ({"precision": "float32", "batch_size": 256, "cap": 4096}, "tokens", True),
    "fp32-b256": ({"precision": "float32", "batch_size": 256, "cap": None}, "tokens", True),
    "fp16-b256-cap4096": ({"precision": "f16", "batch_size": 256, "cap": 4096}, "tokens", True),
    "fp16-b1024": ({"precision": "f16", "batch_size": 1024, "cap": None}, "tokens", True),
    "default": ({}, "tokens", True),
    "default-chars": ({}, "chars", True),
    "default-one-thread": ({}, "tokens", False),
}


def section_texts(db: Path, limit: int | None, stage_form: bool = False) -> list[str]:
    """The sections' texts; ``stage_form``: as the embedding stage gives them to the model
    (title and heading path before the text, so longer)."""
    with GraphStore.open(db) as store:
        rows = store.query(
            "MATCH (s:Section) RETURN s.article AS article, s.heading_path AS heading_path, "
            "s.text AS text ORDER BY s.id"
        )
    if stage_form:
        return [embedding_input(r["article"], r["heading_path"], r["text"]) for r in rows][:limit]
    return [str(r["text"]) for r in rows][:limit]


def shapes(emb: Embedder, model: Any, texts: list[str]) -> set[tuple[int, int]]:
    """The (texts, padded word pieces) shapes the model is given for ``texts``."""
    lengths = emb._token_lengths(model, texts) or [len(t) for t in texts]
    return {(len(idx), max(lengths[i] for i in idx)) for idx in emb._batches(model, texts)}


def run(
    name: str, texts: list[str], device: str, passes: int = 1
) -> tuple[dict[str, Any], np.ndarray]:
    import torch

    kwargs, order, threads = CONFIGS[name]
    args = dict(kwargs)
    if args.get("precision") == "f16":
        args["precision"] = "float16" if device.startswith("cuda") else "float32"
    if "cap" in args:
        args["max_batch_tokens"] = args.pop("cap")
    os.environ["TOKENIZERS_PARALLELISM"] = "true" if threads else "false"

    def sync() -> None:
        if device.startswith("cuda"):
            torch.cuda.synchronize()

    t0 = time.perf_counter()
    emb = Embedder(device=device, **args)
    emb._sort_by = order  # type: ignore[assignment]
    model = emb.load()
    emb.embed(texts[:256])
    sync()
    warm = time.perf_counter() - t0
    t1 = time.perf_counter()
    lengths = emb._token_lengths(model, texts)
    tokenise = time.perf_counter() - t1
    seen = shapes(emb, model, texts[:256])
    times, new_shapes = [], []
    for _ in range(passes):  # the first pass meets shapes the warm-up did not; later ones none
        now = shapes(emb, model, texts)
        new_shapes.append(len(now - seen))
        seen |= now
        t2 = time.perf_counter()
        vectors = emb.embed(texts)
        sync()
        times.append(time.perf_counter() - t2)
    seconds = times[0]
    row = {
        "config": name,
        "batch_size": emb.batch_size,
        "max_batch_tokens": emb.max_batch_tokens,
        "fp16": emb.uses_fp16,
        "order": order,
        "tokenizer_threads": threads,
        "batches": sum(1 for _ in emb._batches(model, texts)),
        "mean_tokens": round(float(np.mean(lengths)), 1) if lengths else None,
        "load_and_warm_s": round(warm, 2),
        "tokenise_once_s": round(tokenise, 2),
        "embed_s": round(seconds, 2),
        "sections_per_s": round(len(texts) / seconds, 1),
    }
    if passes > 1:
        row["passes_s"] = [round(t, 2) for t in times]
        row["new_shapes"] = new_shapes
        row["warm_sections_per_s"] = round(len(texts) / times[-1], 1)
    return row, vectors


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, required=True, help="a graph with sections")
    ap.add_argument("--device", default="cuda", help="cuda, cuda:N, mps or cpu")
    ap.add_argument("--configs", default=",".join(CONFIGS), help=", ".join(CONFIGS))
    ap.add_argument("--limit", type=int, help="embed only the first N sections")
    ap.add_argument(
        "--passes",
        type=int,
        default=1,
        help="embed the texts N times in each process: on a GPU each shape's first sight costs",
    )
    ap.add_argument(
        "--stage-form", action="store_true", help="texts as the stage embeds them (title, heading)"
    )
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    names = chosen(args.configs, CONFIGS)
    texts = section_texts(args.db, args.limit, args.stage_form)
    rows, vectors = [], {}
    for name in names:
        row, vectors[name] = run(name, texts, args.device, args.passes)
        rows.append(row)
        print(json.dumps(row), flush=True)
    ref = vectors.get("fp32-b256")
    for row in rows:
        if ref is not None:
            cos = (ref * vectors[row["config"]]).sum(axis=1)
            row["cosine_to_fp32_min"] = round(float(cos.min()), 5)
    print(f"\n{'config':<20} {'batches':>7} {'tokenise s':>10} {'embed s':>8} {'sect/s':>8}")
    for r in rows:
        print(
            f"{r['config']:<20} {r['batches']:>7} {r['tokenise_once_s']:>10} {r['embed_s']:>8}"
            f" {r['sections_per_s']:>8}"
        )
    if args.json:
        import torch

        gpu = args.device.startswith("cuda")
        doc = {
            "device": torch.cuda.get_device_name() if gpu else platform.processor() or "cpu",
            "torch": torch.__version__,
            "cpus": os.cpu_count(),
            "sections": len(texts),
            "command": " ".join(sys.argv),
            "rows": rows,
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(doc, indent=1), encoding="utf-8")
        print(f"saved {args.json}")


if __name__ == "__main__":
    main()

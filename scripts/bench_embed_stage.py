#!/usr/bin/env python3
"""The embedding stage (``kg-agent embed``) end to end: sections/s on the CPU with 1 and 2
threads, on a local Ray with 1 and 2 model workers, on CUDA when there is a GPU, and with
a trivial model (what the stage costs outside the model), then a projection for a full
English Wikipedia.

Why: embedding is the whole cost of a load on a CPU; this measures the stage as a user
runs it (a fresh ``kg-agent embed`` process on a graph loaded with ``--embeddings
later``, model load and Ray start-up included), not the model alone
(``scripts/bench_embed.py`` does that, and calls this with ``--stage``).

    .venv/bin/python scripts/bench_embed_stage.py --json bench_out/embed_stage.json
    .venv/bin/python scripts/bench_embed_stage.py --articles 300 --configs cpu-t2,tiny-t2

The corpus is a synthetic dump of real English text (``scripts/make_dump.py``; 8 KB of
wikitext an article, sections cut at 160 words like a real load), so sections are as
long as a real Wikipedia's. Each configuration embeds a fresh copy of the same graph
with ``--no-cache``. ``cuda-*`` configurations run only where torch sees a GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scripts.bench_scale import TreeRSS, cpu_model, kg_agent  # noqa: E402

#: Sections of a full English Wikipedia at this loader's ratio (the scale benchmark:
#: 4.74 sections an article, 6.9M articles).
ENWIKI_SECTIONS = 32_700_000

CONFIGS: dict[str, tuple[str, list[str]]] = {
    "cpu-t1": ("in-process, 1 torch thread", ["--threads", "1"]),
    "cpu-t2": ("in-process, 2 torch threads", ["--threads", "2"]),
    "ray-w1": ("local Ray, 1 worker of 1 CPU", ["--ray", "--ray-workers", "1"]),
    "ray-w2": ("local Ray, 2 workers of 1 CPU", ["--ray", "--ray-workers", "2"]),
    "tiny-t2": ("in-process, 2 threads, a 1-layer 32-d model (cost outside the model)", []),
    "cuda-auto": ("CUDA, the defaults (fp16, batch 256)", ["--device", "cuda"]),
    "cuda-fp16-b64": ("CUDA, fp16, batch 64", ["--device", "cuda", "--batch-size", "64"]),
    "cuda-fp16-b256": ("CUDA, fp16, batch 256", ["--device", "cuda", "--batch-size", "256"]),
    "cuda-fp16-b1024": ("CUDA, fp16, batch 1024", ["--device", "cuda", "--batch-size", "1024"]),
    "cuda-fp32-b256": (
        "CUDA, fp32, batch 256",
        ["--device", "cuda", "--batch-size", "256", "--precision", "float32"],
    ),
}
DEFAULT = ",".join(CONFIGS)


def chosen(configs: str, known: Mapping[str, object]) -> list[str]:
    """The names of a ``--configs`` list, each one of ``known`` (else exit with a message)."""
    names = [c for c in configs.split(",") if c]
    unknown = [c for c in names if c not in known]
    if unknown:
        raise SystemExit(f"unknown configs: {', '.join(unknown)}")
    return names


def has_cuda() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def base_graph(articles: int, work: Path) -> Path:
    """A graph of ``articles`` synthetic articles loaded with ``--embeddings later``."""
    from scripts._synth import generate

    dump_dir = ROOT / "bench_out" / "dumps"
    xml = dump_dir / f"synthwiki-{articles}-pages-articles.xml"
    if not xml.exists():
        generate(articles, dump_dir, seed=0, formats="xml")
    db = work / "base" / "g.kuzu"
    if not db.exists():
        db.parent.mkdir(parents=True, exist_ok=True)
        cmd = [*kg_agent(), "load", str(xml), "--db", str(db), "--embeddings", "later", "-q"]
        subprocess.run(cmd, check=True, capture_output=True)
    return db


def copy_graph(base: Path, to: Path) -> Path:
    shutil.rmtree(to, ignore_errors=True)
    to.mkdir(parents=True)
    shutil.copy(base, to / base.name)
    idx = Path(str(base) + ".indexes")
    if idx.exists():
        shutil.copytree(idx, to / idx.name)
    return to / base.name


def run(name: str, base: Path, work: Path, tiny: Path | None) -> dict[str, Any]:
    what, args = CONFIGS[name]
    db = copy_graph(base, work / name)
    if name.startswith("tiny"):
        assert tiny is not None
        # a graph without vectors may take any model; the tiny one costs ~nothing
        args = ["--model", str(tiny), "--threads", "2"]
    cmd = [*kg_agent(), "embed", "--db", str(db), "--no-cache", "--json", "-q", *args]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rss = TreeRSS(proc.pid)
    out, err = proc.communicate()
    peak = rss.stop()
    wall = time.perf_counter() - t0
    shutil.rmtree(work / name, ignore_errors=True)
    if proc.returncode != 0:
        return {"config": name, "what": what, "error": err.strip().splitlines()[-1][:300]}
    rep = json.loads(out)
    embed_s = float(rep["seconds"]["embed"])
    return {
        "config": name,
        "what": what,
        "sections": rep["embedded"],
        "embed_s": round(embed_s, 1),
        "sections_per_s": round(rep["embedded"] / embed_s, 1),
        "write_s": rep["seconds"].get("write"),
        "vector_index_s": rep["seconds"].get("vector_index"),
        "wall_s": round(wall, 1),
        "peak_rss_mib": round(peak / 2**20),
    }


def project(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Hours to embed a full English Wikipedia at each measured rate; GPUs scale by count
    (each GPU an independent Ray actor on its own shards)."""
    out: dict[str, Any] = {"enwiki_sections": ENWIKI_SECTIONS}
    for r in rows:
        if r.get("sections_per_s"):
            hours = ENWIKI_SECTIONS / r["sections_per_s"] / 3600
            out[r["config"]] = {"hours": round(hours, 1)}
            if r["config"].startswith("cuda"):
                out[r["config"]].update(
                    {f"{n}_gpus_hours": round(hours / n, 2) for n in (1, 4, 8, 32)}
                )
    return out


def print_table(rows: list[dict[str, Any]]) -> None:
    print(f"{'config':<16} {'sections':>9} {'embed s':>8} {'sect/s':>8} {'RSS MiB':>8}  what")
    for r in rows:
        if "error" in r:
            print(f"{r['config']:<16} error: {r['error']}")
            continue
        print(
            f"{r['config']:<16} {r['sections']:>9,} {r['embed_s']:>8} {r['sections_per_s']:>8}"
            f" {r['peak_rss_mib']:>8,}  {r['what']}"
        )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--articles", type=int, default=1000, help="synthetic articles")
    ap.add_argument("--configs", default=DEFAULT, help=f"comma list of {', '.join(CONFIGS)}")
    ap.add_argument("--work", type=Path, default=ROOT / "bench_out" / "embed_stage")
    ap.add_argument("--json", type=Path, help="save rows and projection here")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    names = chosen(args.configs, CONFIGS)
    cuda = has_cuda()
    names = [c for c in names if cuda or not c.startswith("cuda")]
    args.work.mkdir(parents=True, exist_ok=True)
    base = base_graph(args.articles, args.work)
    tiny = None
    if any(c.startswith("tiny") for c in names):
        from scripts._tiny_model import make_tiny_model

        tiny = make_tiny_model(args.work / "tiny-model")
    rows = []
    for name in names:
        print(f"{name}: {CONFIGS[name][0]} ...", flush=True)
        rows.append(run(name, base, args.work, tiny))
        print_table(rows[-1:])
    print()
    print_table(rows)
    by = {r["config"]: r for r in rows if "sections_per_s" in r}
    ratios = {}
    if "ray-w1" in by and "ray-w2" in by:
        ratios["ray_2_over_1_workers"] = round(
            by["ray-w2"]["sections_per_s"] / by["ray-w1"]["sections_per_s"], 2
        )
    if "cpu-t1" in by and "cpu-t2" in by:
        ratios["cpu_2_over_1_threads"] = round(
            by["cpu-t2"]["sections_per_s"] / by["cpu-t1"]["sections_per_s"], 2
        )
    proj = project(rows)
    print(json.dumps({"ratios": ratios, "projection": proj}, indent=1))
    if not cuda:
        print("no CUDA GPU here: the cuda-* configurations were skipped")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        doc = {
            "machine": {"cpu": cpu_model(), "cores": os.cpu_count(), "cuda": cuda},
            "python": platform.python_version(),
            "command": " ".join(sys.argv),
            "rows": rows,
            "ratios": ratios,
            "projection": proj,
        }
        args.json.write_text(json.dumps(doc, indent=1))
        print(f"saved {args.json}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""What an update's change of names costs the question linker: a new build, or an overlay.

Why: an update that adds, deletes or moves articles changes the names the question
entity linker matches. It used to build the linker again from every name (100k
titles: ~1.5 s, 1M: ~25 s), whatever the size of the change. Now it lays an overlay
of the changed names over the saved linker (``kg_agent.entities.overlay``). This
measures both on realistic titles (``scripts/make_dump.py``'s ``build_titles``, ~0.9
redirects a title) for a share of the titles deleted, as many new ones added, and a
tenth of that share of the redirects moved to another article:

* ``build s``: a build from the new names and its save (what an update paid);
* ``overlay s``: reading the saved linker, making the overlay, saving it (what an
  update pays now; both leave out reading the names from the graph, the same for
  both: ~0.26 s per 100k titles and 90k redirects through Arrow);
* ``load s``: a query process's load of the saved linker alone, and with its overlay
  (the median of three, alternately);
* ``link ms``: per question, without and with the overlay;
* ``same``: the overlaid linker links every test question as the fresh build does
  (questions naming the added, removed and moved names, and others).

    .venv/bin/python scripts/bench_linker_overlay.py --sizes 100000,1000000 \\
        --rates 0.001,0.01 --json bench_out/linker-overlay.json
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_linker import _make_dump  # noqa: E402

from kg_agent.entities import linker as L  # noqa: E402


def names(size: int, seed: int) -> tuple[list[str], list[tuple[str, str]]]:
    md = _make_dump()
    built = md.build_titles(md.load_material(), size, seed)
    titles = list(built.articles)
    aliases = [(r, titles[t]) for r, t in zip(built.redirects, built.redirect_targets, strict=True)]
    return titles, aliases


def changed(
    titles: list[str], aliases: list[tuple[str, str]], extra: list[str], rate: float, seed: int
) -> tuple[list[str], list[tuple[str, str]], list[str]]:
    """The names after an update: ``rate`` of the titles deleted (with their redirects),
    as many added, a tenth of ``rate`` of the redirects moved. Also returns the names
    touched, for the questions."""
    rng = random.Random(seed)
    k = max(1, int(len(titles) * rate))
    gone = set(rng.sample(titles, k))
    have = set(titles)
    new = [t for t in extra if t not in have][:k]
    now = [t for t in titles if t not in gone] + new
    moved = max(1, k // 10)
    kept = [(a, t) for a, t in aliases if t not in gone]
    for i in rng.sample(range(len(kept)), moved):
        kept[i] = (kept[i][0], rng.choice(now))
    touched = [*list(gone)[:50], *new[:50], *(a for a, _ in kept[:50])]
    return now, kept, touched


def questions(touched: list[str], titles: list[str], seed: int) -> list[str]:
    rng = random.Random(seed)
    named = touched + rng.sample(titles, 100)
    return [f"Who wrote {t}, and when did {rng.choice(titles)} see it?" for t in named]


def run(size: int, rate: float, work: Path) -> dict[str, Any]:
    titles, aliases = names(size, 7)
    extra, _ = names(max(1000, int(size * rate * 3)), 11)
    path = work / "linker.pkl"
    base = L._build(titles, aliases)
    L._write(path, base, "base")
    del base
    now, now_aliases, touched = changed(titles, aliases, extra, rate, 5)
    del titles, aliases

    t0 = time.perf_counter()
    fresh = L._build(now, now_aliases)
    L._write(work / "fresh.pkl", fresh, "fresh")
    build_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    assert L._save_overlay(path, "now", now, now_aliases), "too many names changed"
    overlay_s = time.perf_counter() - t0
    saved = L._read_overlay(path, "now")
    assert saved is not None
    overlay = saved[1]

    loads: dict[str, list[float]] = {"base": [], "now": []}
    for _ in range(3):  # alternately, the median of three: a load's time is noisy
        for key in loads:
            gc.collect()
            t0 = time.perf_counter()
            loaded = L._read_saved(path, key)
            loads[key].append(time.perf_counter() - t0)
            assert loaded is not None
            del loaded
    load_s, load_overlay_s = (statistics.median(v) for v in loads.values())
    plain = L._read_saved(path, "base")
    patched = L._read_saved(path, "now")
    assert plain is not None and patched is not None

    qs = questions(touched, now, 3)
    same = all(list(patched.find(q).items()) == list(fresh.find(q).items()) for q in qs)
    timings = {}
    for name, m in (("base", plain), ("overlay", patched)):
        t0 = time.perf_counter()
        for _ in range(3):
            for q in qs:
                m.find(q)
        timings[name] = (time.perf_counter() - t0) / (3 * len(qs)) * 1000
    return {
        "titles": len(now),
        "redirects": len(now_aliases),
        "rate": rate,
        "changed_names": overlay.changed,
        "overlay_keys": len(overlay.keys),
        "build_s": round(build_s, 3),
        "overlay_s": round(overlay_s, 3),
        "overlay_file_bytes": L._overlay_path(path).stat().st_size,
        "linker_file_bytes": path.stat().st_size,
        "load_s": round(load_s, 3),
        "load_overlay_s": round(load_overlay_s, 3),
        "link_ms": round(timings["base"], 4),
        "link_overlay_ms": round(timings["overlay"], 4),
        "same": same,
        "questions": len(qs),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100000")
    ap.add_argument("--rates", default="0.001,0.01")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    rows: list[dict[str, Any]] = []
    for size in (int(s) for s in args.sizes.split(",") if s):
        for rate in (float(r) for r in args.rates.split(",") if r):
            with tempfile.TemporaryDirectory(prefix="kg-overlay-") as tmp:
                rows.append(run(size, rate, Path(tmp)))
            if args.json is not None:
                args.json.parent.mkdir(parents=True, exist_ok=True)
                args.json.write_text(json.dumps({"rows": rows}, indent=2))
    print(
        "\n| titles | changed | names changed | build s | overlay s | overlay file | "
        "load s (alone / with overlay) | link ms (alone / with) | same |"
    )
    print("|---:|---:|---:|---:|---:|---:|---|---|---|")
    for r in rows:
        print(
            f"| {r['titles']:,} | {r['rate']:.1%} | {r['changed_names']:,} | {r['build_s']:.2f} | "
            f"{r['overlay_s']:.2f} | {r['overlay_file_bytes'] / 1024:,.0f} KiB | "
            f"{r['load_s']:.2f} / {r['load_overlay_s']:.2f} | "
            f"{r['link_ms']:.3f} / {r['link_overlay_ms']:.3f} | {r['same']} |"
        )
    return 0 if all(r["same"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

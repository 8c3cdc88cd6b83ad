#!/usr/bin/env python3
"""Benchmark ``kg-agent update`` against a full load: time, what it touches, disk.

Why: an update must cost a small share of a full load (the issue's goal: at most 5% of a
full load's time with embeddings on) and grow with the number of changes, not with the
size of the graph. For each size of the scale benchmark's synthetic dumps
(``scripts/make_dump.py``, cached in ``--dump-dir``) this:

1. writes a newer version (``scripts/make_newer_dump.py``: a rate's share of the articles
   edited, a tenth of it new, a tenth gone, and a tenth of that share of the redirects
   pointed at another article);
2. loads the older version in a fresh process (embeddings as ``--embeddings`` says: ``now``
   with the default model is the real thing, and slow on a CPU; ``none`` measures
   everything but the model);
3. for each change rate in ``--rates``, updates a copy of that graph to a newer version
   in a fresh process, and reads its report (phases, articles and sections touched);
4. with ``--disk N``, updates back and forth N times, recording the database's size
   after each, then compacts it;
5. with ``--partial``, applies the same changes as a partial export (the changed, new
   and moved pages only, as a day's "adds-changes" dump holds them) and a
   ``kg-agent delete`` of the deleted titles, on a fresh copy of the graph, then as one
   ``kg-agent update --deletions`` (``--partial-only`` skips the full dump's updates);
6. with ``--compare REF``, runs each update also with the package as it is at the git
   ref ``REF`` (a worktree, on ``PYTHONPATH``), the two alternating ``--repeat`` times on
   fresh copies of the same graph: an A/B of a change on one machine, where one run's
   noise is larger than the change (the medians are reported). On a machine without the
   repository's history, ``--compare-tree DIR`` names a folder holding that package.

It prints a table and saves JSON::

    .venv/bin/python scripts/bench_update.py --sizes 10000 --embeddings now \\
        --json bench_out/update-10k.json
    .venv/bin/python scripts/bench_update.py --sizes 10000,100000 --embeddings none \\
        --rates 0.001,0.01,0.05 --disk 10 --json bench_out/update-scale.json
    .venv/bin/python scripts/bench_update.py --sizes 100000 --embeddings none \\
        --rates 0.001,0.01 --compare 88ef3fb --repeat 3 --json bench_out/update-ab.json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_scale import TreeRSS, cpu_model, disk_size, ensure_dump, kg_agent  # noqa: E402

#: Real embedding every time: vectors an earlier run left in the embedding cache would make
#: a load look cheaper than it is (an update's reuse of the graph's own vectors is not a cache).
NO_CACHE = ["--no-cache"]


def _newer_module() -> Any:
    spec = importlib.util.spec_from_file_location(
        "make_newer_dump", ROOT / "scripts" / "make_newer_dump.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(cmd: list[str], code: Path = ROOT) -> dict[str, Any]:
    """Run a ``--json`` command in a fresh process (the package of the tree ``code``:
    first on ``PYTHONPATH``, and the working directory, which a supervisor older than
    ``kg_agent._entry``'s fix imported from): its report, wall time, peak RSS."""
    rest = os.environ.get("PYTHONPATH")  # where the packages were put (a GPU machine's)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(code), *([rest] if rest else [])])}
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=code
    )
    rss = TreeRSS(proc.pid)
    out, err = proc.communicate()
    peak = rss.stop()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:3])} failed: {err.strip()[-800:]}")
    return {
        "report": json.loads(out),
        "wall_s": round(time.perf_counter() - t0, 1),
        "peak_rss_mib": round(peak / 2**20),
    }


def copy_graph(src: Path, dst: Path) -> None:
    """``src`` copied over ``dst``, and the stages an interrupted run left beside ``dst``
    removed: an update would resume from one, and be timed without its parse."""
    for stale in dst.parent.glob(f".{dst.name}.kg-*"):
        shutil.rmtree(stale, ignore_errors=True)
    for suffix in ("", ".indexes"):
        target = Path(str(dst) + suffix)
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()
        source = Path(str(src) + suffix)
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("load.lock"))
        elif source.exists():
            shutil.copy2(source, target)


def bench_size(n: int, args: argparse.Namespace) -> dict[str, Any]:
    work = args.work / f"n{n}"
    work.mkdir(parents=True, exist_ok=True)
    old = ensure_dump(n, args.dump_dir, False)["xml"]
    base = work / "base.kuzu"
    emb = ["--embeddings", args.embeddings]
    model = ["--model", args.model] if args.model else []
    saved = work / f"base-{args.embeddings}.load.json"  # the load that made base.kuzu
    if args.reuse_load and base.exists() and saved.exists():
        print(f"[{n:,}] reusing the load of {old.name} in {base}", flush=True)
        load = json.loads(saved.read_text(encoding="utf-8"))
    else:
        print(f"[{n:,}] loading {old.name} (embeddings {args.embeddings}) ...", flush=True)
        saved.unlink(missing_ok=True)
        if base.exists():
            shutil.rmtree(Path(str(base) + ".indexes"), ignore_errors=True)
            base.unlink()
        cmd = [*kg_agent(), "load", str(old), "--db", str(base), *emb, *model, *NO_CACHE]
        load = run([*cmd, "--json", "-q"])
        saved.write_text(json.dumps(load), encoding="utf-8")
    lr = load["report"]
    row: dict[str, Any] = {
        "articles": n,
        "sections": lr["sections"],
        "embeddings": args.embeddings,
        "full_load_s": load["wall_s"],
        "full_load_phases": {k: v for k, v in lr["timings"].items() if "." not in k},
        "full_load_peak_rss_mib": load["peak_rss_mib"],
        "db_bytes": disk_size(base),
        "embed_device": lr.get("embed_device", ""),
        "updates": [],
    }
    args.save(row)
    newer = _newer_module()
    for rate in args.rates:
        src = work / f"v2-{rate}-pages-articles.xml"
        summary = newer.newer_dump(
            old,
            src,
            changed=rate,
            added=0 if args.edits_only else rate / 10,
            deleted=0 if args.edits_only else rate / 10,
            retargeted=0 if args.edits_only else rate / 10,
            seed=1,
        )
        db = work / "updated.kuzu"
        trees = [("now", ROOT), *([(args.compare, args.compare_tree)] if args.compare else [])]
        if args.partial_only:
            trees = []
        for device in args.devices:
            runs: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in trees}
            on = ["--device", device]
            kept = list(row["updates"])
            for i in range(args.repeat if trees else 0):
                for name, tree in trees:
                    copy_graph(base, db)
                    print(
                        f"[{n:,}] update, {rate:.1%} changed ({name}, --device {device}, "
                        f"run {i + 1}) ...",
                        flush=True,
                    )
                    cmd = [*kg_agent(), "update", str(src), "--db", str(db), *model, *on]
                    runs[name].append(run([*cmd, *NO_CACHE, "--json", "-q"], tree))
                    # saved after every run: one cut short (a lent machine's time) keeps them
                    row["updates"] = kept + [
                        {
                            **_update_entry(done, load["wall_s"], rate, summary),
                            "device": device,
                            **({"code": each} if args.compare else {}),
                        }
                        for each, done in runs.items()
                        if done
                    ]
                    args.save(row)
        if args.partial:
            row.setdefault("partial", []).append(
                bench_partial(base, src, summary, work, load["wall_s"], rate, args, newer)
            )
        src.unlink()
    if args.disk:
        row["disk"] = bench_disk(base, old, work, args, newer)
    return row


def bench_partial(
    base: Path,
    newer_dump: Path,
    summary: dict[str, Any],
    work: Path,
    load_s: float,
    rate: float,
    args: argparse.Namespace,
    newer: Any,
) -> dict[str, Any]:
    """The same changes as a partial export (only the changed, new and moved pages, as a
    day's "adds-changes" dump holds them) and a ``kg-agent delete`` of the deleted
    titles: the path whose reading grows with the changes alone. Then both at once
    (``update --deletions``), which pays the graph-wide work once."""
    export = work / f"v2-{rate}-export.xml"
    pages = newer.partial_export(newer_dump, summary, export)
    deleted = work / f"v2-{rate}-deleted.txt"
    deleted.write_text("".join(f"{t}\n" for t in summary["deleted"]), encoding="utf-8")
    db = work / "updated.kuzu"
    model = ["--model", args.model] if args.model else []
    updates, deletes, together = [], [], []
    for i in range(args.repeat):
        copy_graph(base, db)
        print(f"[{base.parent.name}] partial export, {rate:.1%} (run {i + 1}) ...", flush=True)
        cmd = [*kg_agent(), "update", str(export), "--db", str(db), *model, *NO_CACHE]
        updates.append(run([*cmd, "--json", "-q"]))
        cmd = [*kg_agent(), "delete", "--from-file", str(deleted), "--db", str(db)]
        if summary["deleted"]:  # none with --edits-only
            deletes.append(run([*cmd, "--json", "-q"]))
        copy_graph(base, db)
        print(f"[{base.parent.name}] the same with --deletions (run {i + 1}) ...", flush=True)
        cmd = [*kg_agent(), "update", str(export), "--db", str(db), *model, *NO_CACHE]
        together.append(run([*cmd, "--deletions", str(deleted), "--json", "-q"]))
    r = updates[0]["report"]
    timings = {
        k: _median([u["report"]["timings"].get(k, 0.0) for u in updates]) for k in r["timings"]
    }
    update_s = _median([u["wall_s"] for u in updates])
    delete_s = _median([d["wall_s"] for d in deletes]) if deletes else 0.0
    one = together[0]["report"]
    one_timings = {
        k: _median([u["report"]["timings"].get(k, 0.0) for u in together]) for k in one["timings"]
    }
    export_bytes = export.stat().st_size
    export.unlink()
    deleted.unlink()
    return {
        "rate": rate,
        "export_pages": pages,
        "export_bytes": export_bytes,
        "update_s": update_s,
        "delete_s": delete_s,
        "wall_s": round(update_s + delete_s, 1),
        "share_of_full_load": round((update_s + delete_s) / load_s, 4),
        "peak_rss_mib": max(u["peak_rss_mib"] for u in [*updates, *deletes]),
        **{k: r[k] for k in ("added", "changed", "unchanged", "sections_written")},
        "deleted": sum(deletes[0]["report"].get(k, 0) for k in ("stubbed", "deleted"))
        if deletes
        else 0,
        "phases": {k: v for k, v in timings.items() if "." not in k},
        "index_steps": {k: v for k, v in timings.items() if k.startswith("index.")},
        "with_deletions": {
            "wall_s": _median([u["wall_s"] for u in together]),
            "share_of_full_load": round(_median([u["wall_s"] for u in together]) / load_s, 4),
            "peak_rss_mib": max(u["peak_rss_mib"] for u in together),
            **{k: one[k] for k in ("added", "changed", "deleted", "stubbed")},
            "phases": {k: v for k, v in one_timings.items() if "." not in k},
            "index_steps": {k: v for k, v in one_timings.items() if k.startswith("index.")},
        },
    }


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 3)


def _update_entry(
    runs: list[dict[str, Any]], load_s: float, rate: float, summary: dict[str, Any]
) -> dict[str, Any]:
    """One rate's result: the report of the first run, times as medians over the runs."""
    r = runs[0]["report"]
    wall = _median([u["wall_s"] for u in runs])
    timings = {k: _median([u["report"]["timings"].get(k, 0.0) for u in runs]) for k in r["timings"]}
    return {
        "rate": rate,
        "generated": {k: len(v) for k, v in summary.items() if isinstance(v, list)},
        "wall_s": wall,
        "runs_wall_s": [u["wall_s"] for u in runs],
        "peak_rss_mib": max(u["peak_rss_mib"] for u in runs),
        "share_of_full_load": round(wall / load_s, 4),
        **{
            k: r.get(k)
            for k in (
                "added",
                "changed",
                "unchanged",
                "deleted",
                "stubbed",
                "relinked",
                "kept_unparsed",
                "reparsed",
                "sections_written",
                "sections_embedded",
                "sections_reused",
                "vectors_kept",
                "vectors_added",
                "vectors_deleted",
                "embed_device",
                "db_bytes_before",
                "db_bytes_after",
            )
        },
        "phases": {k: v for k, v in timings.items() if "." not in k},
        "index_steps": {k: v for k, v in timings.items() if k.startswith("index.")},
        "write_steps": {k: v for k, v in timings.items() if k.startswith("write.")},
        "embed_steps": {k: v for k, v in timings.items() if k.startswith("embed.")},
        "outside_phases_s": round(wall - sum(v for k, v in timings.items() if "." not in k), 3),
    }


def bench_disk(
    base: Path, old: Path, work: Path, args: argparse.Namespace, newer: Any
) -> dict[str, Any]:
    """Update back and forth ``--disk`` times: the file's size after each, then compact."""
    db = work / "disk.kuzu"
    copy_graph(base, db)
    v1 = work / "v1-pages-articles.xml"
    shutil.copy(old, v1)
    v2 = work / "v2-disk-pages-articles.xml"
    rate = args.rates[len(args.rates) // 2]
    newer.newer_dump(old, v2, changed=rate, added=rate / 10, deleted=rate / 10, seed=2)
    model = ["--model", args.model] if args.model else []
    sizes = [disk_size(db)]
    for i in range(args.disk):
        src = v2 if i % 2 == 0 else v1
        print(f"  disk round {i + 1}/{args.disk} ...", flush=True)
        run([*kg_agent(), "update", str(src), "--db", str(db), *model, *NO_CACHE, "--json", "-q"])
        sizes.append(Path(db).stat().st_size)
    compact = run([*kg_agent(), "compact", "--db", str(db), "--json", "-q"])
    v1.unlink()
    v2.unlink()
    return {
        "rate": rate,
        "db_file_bytes": sizes,
        "compact_s": compact["wall_s"],
        "after_compact_bytes": compact["report"]["bytes_after"],
    }


def _partial_cells(phases: dict[str, float], steps: dict[str, float], rss: int) -> str:
    cells = [f"{phases.get(k, 0.0):.1f}" for k in ("known", "parse", "diff", "resolve")]
    cells += [f"{phases.get(k, 0.0):.1f}" for k in ("write", "index")]
    # the linker's step is named for what it did: built, overlaid or carried over
    linker = sum(v for k, v in steps.items() if k.startswith("index.entity_linker"))
    cells += [f"{steps.get('index.pagerank', 0.0):.1f}", f"{linker:.1f}"]
    return " | ".join(cells) + f" | {rss:,} |"


def print_table(rows: list[dict[str, Any]]) -> None:
    print(
        "\n| articles | embeddings | full load s | changed | update s | share | added/changed/"
        "deleted/relinked | pages kept/read again | sections written/embedded | known | parse "
        "| diff | reparse | resolve | embed | write | index | peak RSS MiB |"
    )
    print("|---:|---|---:|---:|---:|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        for u in row["updates"]:
            p = u["phases"]
            print(
                f"| {row['articles']:,} | {row['embeddings']} | {row['full_load_s']:,.1f} | "
                f"{u['rate']:.1%}{' ' + u['code'] if 'code' in u else ''}"
                f"{' on ' + u['embed_device'] if u.get('embed_device') else ''} | "
                f"{u['wall_s']:,.1f} | {u['share_of_full_load']:.1%} | "
                f"{u['added']}/{u['changed']}/{u['deleted']}/{u['relinked']} | "
                f"{u.get('kept_unparsed', 0):,}/{u.get('reparsed', 0):,} | "
                f"{u['sections_written']:,}/{u['sections_embedded']:,} | "
                + " | ".join(
                    f"{p.get(k, 0.0):.1f}"
                    for k in (
                        "known",
                        "parse",
                        "diff",
                        "reparse",
                        "resolve",
                        "embed",
                        "write",
                        "index",
                    )
                )
                + f" | {u['peak_rss_mib']:,} |"
            )
    if any("partial" in row for row in rows):
        print(
            "\nThe same changes as a partial export and a delete:\n\n| articles | changed "
            "| export pages | update s | delete s | together | share | known | parse | diff | "
            "resolve | write | index | pagerank | linker | peak RSS MiB |"
        )
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        for u in row.get("partial", []):
            p, ix = u["phases"], u["index_steps"]
            print(
                f"| {row['articles']:,} | {u['rate']:.1%} | {u['export_pages']:,} | "
                f"{u['update_s']:.1f} | {u['delete_s']:.1f} | {u['wall_s']:.1f} | "
                f"{u['share_of_full_load']:.1%} | " + _partial_cells(p, ix, u["peak_rss_mib"])
            )
    if any("partial" in row for row in rows):
        print(
            "\nThe same in one update (--deletions):\n\n| articles | changed | export pages "
            "| update s | share | added/changed/deleted | known | parse | diff | resolve | "
            "write | index | pagerank | linker | peak RSS MiB |"
        )
        print("|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        for u in row.get("partial", []):
            w = u["with_deletions"]
            p, ix = w["phases"], w["index_steps"]
            print(
                f"| {row['articles']:,} | {u['rate']:.1%} | {u['export_pages']:,} | "
                f"{w['wall_s']:.1f} | {w['share_of_full_load']:.1%} | "
                f"{w['added']}/{w['changed']}/{w['deleted']} | "
                + _partial_cells(p, ix, w["peak_rss_mib"])
            )
    steps = [(row, u) for row in rows for u in row.get("updates", []) if u.get("write_steps")]
    if steps:
        print("\nThe embed's and the write's steps (s), and the time outside the phases:\n")
    for row, u in steps:
        where = f"{row['articles']:,}, {u['rate']:.1%} {u.get('code', '')}".rstrip()
        embed = ", ".join(f"{k[6:]} {v:.2f}" for k, v in u.get("embed_steps", {}).items())
        parts = ", ".join(f"{k[6:]} {v:.2f}" for k, v in u["write_steps"].items())
        print(
            f"- {where}: embed: {embed or '-'}; write: {parts}; "
            f"outside the phases {u['outside_phases_s']:.1f}"
        )
    for row in rows:
        if "disk" in row:
            d = row["disk"]
            mib = ", ".join(f"{b / 2**20:.0f}" for b in d["db_file_bytes"])
            print(
                f"\n{row['articles']:,} articles, {len(d['db_file_bytes']) - 1} updates of "
                f"{d['rate']:.1%} back and forth: database file MiB {mib}; compacted to "
                f"{d['after_compact_bytes'] / 2**20:.0f} MiB in {d['compact_s']:.1f} s"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000")
    ap.add_argument("--rates", default="0.01", help="Shares of articles changed, comma-separated.")
    ap.add_argument("--embeddings", choices=("now", "none"), default="now")
    ap.add_argument("--model", help="Embedding model (default: the bundled all-MiniLM-L6-v2).")
    ap.add_argument("--dump-dir", type=Path, default=ROOT / "bench_out" / "dumps")
    ap.add_argument("--work", type=Path, default=ROOT / "bench_out" / "update")
    ap.add_argument("--disk", type=int, default=0, help="Back-and-forth updates to measure size.")
    ap.add_argument("--compare", help="A git ref whose package each update also runs with.")
    ap.add_argument(
        "--compare-tree",
        type=Path,
        help="With --compare (as its label): a folder holding that package (kg_agent/), for "
        "a machine without the repository's history (a lent GPU machine).",
    )
    ap.add_argument("--repeat", type=int, default=1, help="Runs of each update (medians).")
    ap.add_argument(
        "--partial",
        action="store_true",
        help="Also apply each rate's changes as a partial export plus a delete, and as "
        "one update with --deletions.",
    )
    ap.add_argument(
        "--edits-only",
        action="store_true",
        help="Changes are edits only: no page added, deleted or moved, no redirect changed "
        "(the update then carries the entity linker over instead of building it).",
    )
    ap.add_argument(
        "--partial-only",
        action="store_true",
        help="With --partial: skip the full dump's updates (the load is still timed).",
    )
    ap.add_argument(
        "--devices",
        default="auto",
        help="Devices each update runs with (--device), each on a fresh copy: auto,cpu,cuda.",
    )
    ap.add_argument(
        "--reuse-load",
        action="store_true",
        help="Keep the graph and the timing of an earlier run's load of the same dump "
        "(same --work and --embeddings): an A/B of updates without loading again.",
    )
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    args.devices = args.devices.split(",")
    done: list[dict[str, Any]] = []

    def save(row: dict[str, Any]) -> None:
        """The rows so far, the current one as it stands: a run cut short keeps them."""
        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            rows = [*done, row] if row not in done else done
            args.json.write_text(
                json.dumps({"machine": cpu_model(), "rows": rows}, indent=1), encoding="utf-8"
            )

    args.save = save
    args.rates = [float(r) for r in args.rates.split(",")]
    # absolute: a --compare run works in the other tree's folder
    args.work, args.dump_dir = args.work.resolve(), args.dump_dir.resolve()
    args.dump_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-update-") as tmp:
        given = args.compare_tree
        args.compare_tree = None
        if args.compare and given is not None:
            args.compare_tree = given.resolve()
        elif args.compare:
            args.compare_tree = Path(tmp) / "tree"
            subprocess.run(
                [
                    "git",
                    "-C",
                    str(ROOT),
                    "worktree",
                    "add",
                    "--detach",
                    "-q",
                    str(args.compare_tree),
                    args.compare,
                ],
                check=True,
            )
        try:
            for n in args.sizes.split(","):
                done.append(bench_size(int(n), args))
            rows = done
        finally:
            if args.compare_tree is not None and given is None:
                subprocess.run(
                    [
                        "git",
                        "-C",
                        str(ROOT),
                        "worktree",
                        "remove",
                        "--force",
                        str(args.compare_tree),
                    ],
                    check=False,
                )
    print_table(rows)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps({"machine": cpu_model(), "rows": rows}, indent=1), encoding="utf-8"
        )


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Kill every write command with ``kill -9`` at hundreds of moments and check the rule:
after the documented recovery (the same command again), the graph equals the graph
before the command or the graph a clean run gives, table for table and index for index;
and right after the kill, readers either see one of those two or refuse with the line
that names the command to run.

Each scenario (``load``, ``load --force``, ``load into``, ``update``, ``delete``,
``compact``, ``embed``, ``reindex``) runs on the English sample with embeddings (a
newer version of it, written by ``scripts/make_newer_dump.py``, for ``update``), and is
killed at every crash point and file event and at ``--times`` moments drawn with
``--seed`` over its clean run (``scripts/_crash.py``). Prints a table per command and
phase, and saves every outcome as JSON::

    .venv/bin/python scripts/crash_test.py --times 20 --json bench_out/crash.json
    .venv/bin/python scripts/crash_test.py --articles 20 --times 2 --scenarios update,delete

Needs ../shared/data. A full run (~230 kills) takes about two hours on 2 cores; the JSON is
saved after every kill, so a run cut short keeps what it did, and runs of some scenarios
each (two at once, say) are reported together with ``--report A.json B.json``.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scripts._crash import (  # noqa: E402
    Outcome,
    clean_run,
    kill_once,
    moments,
    prepare,
    to_json,
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--work", type=Path, help="work folder (default: a temporary one)")
    ap.add_argument("--articles", type=int, help="the sample's first N articles only")
    ap.add_argument("--times", type=int, default=20, help="timed kills per scenario")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scenarios", help="comma list (default: all)")
    ap.add_argument(
        "--vector-store",
        choices=["graph", "index"],
        default="graph",
        help="where new graphs keep their vectors (KG_AGENT_VECTOR_STORE)",
    )
    ap.add_argument("--json", type=Path, help="save every outcome here")
    ap.add_argument("--report", type=Path, nargs="+", help="print the table of saved runs")
    args = ap.parse_args()
    if args.report:
        docs = [json.loads(p.read_text()) for p in args.report]
        fields = {f.name for f in dataclasses.fields(Outcome)}
        report(
            [
                Outcome(**{k: v for k, v in o.items() if k in fields})
                for doc in docs
                for o in doc["outcomes"]
            ]
        )
        return
    if not (args.shared / "data").is_dir():
        sys.exit(f"skipped: {args.shared / 'data'} is absent (the real dumps live there)")
    work = args.work or Path(tempfile.mkdtemp(prefix="kg-crash-"))
    env = dict(
        os.environ,
        HF_HUB_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
        KG_AGENT_CACHE_DIR=str(work / "cache"),
        KG_AGENT_VECTOR_STORE=args.vector_store,
    )
    t0 = time.perf_counter()
    print(f"preparing the graphs in {work} ...", flush=True)
    prep = prepare(args.shared, work, articles=args.articles, env=env)
    names = args.scenarios.split(",") if args.scenarios else list(prep.scenarios)
    outcomes: list[Outcome] = []
    db = work / "run" / "g.kuzu"
    db.parent.mkdir(exist_ok=True)
    for i, name in enumerate(names):
        scenario = prep.scenarios[name]
        before, clean, seconds = clean_run(scenario, db, env)
        todo = moments(seconds, times=args.times, seed=args.seed + i)
        print(f"{name}: clean run {seconds:.1f} s; {len(todo)} moments", flush=True)
        for kind, at in todo:
            out = kill_once(scenario, db, kind=kind, at=at, before=before, clean=clean, env=env)
            outcomes.append(out)
            if args.json:
                save(args.json, outcomes, t0)
            mark = "ok  " if out.ok else "FAIL"
            if out.killed:
                print(
                    f"  {mark} {kind:<5} {at:<26} phase {out.phase or '-':<12} after kill "
                    f"{out.after_kill:<8} check {out.check:<11} recovered -> "
                    f"{out.after_recovery or '-'} {out.detail} {out.differs or ''}",
                    flush=True,
                )
    report(outcomes)
    if args.json:
        save(args.json, outcomes, t0)
        print(f"saved {args.json}")
    if not all(o.ok for o in outcomes):
        sys.exit(1)


def save(path: Path, outcomes: list[Outcome], t0: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "machine": {"cores": os.cpu_count(), "python": platform.python_version()},
        "command": " ".join(sys.argv),
        "seconds": round(time.perf_counter() - t0, 1),
        "outcomes": to_json(outcomes),
    }
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1))
    tmp.replace(path)


def report(outcomes: list[Outcome]) -> None:
    """Kills per command and phase, what readers saw after them, how recovery ended."""
    table: dict[tuple[str, str], collections.Counter[str]] = collections.defaultdict(
        collections.Counter
    )
    for o in outcomes:
        if not o.killed:
            continue
        row = table[(o.scenario, o.phase or "-")]
        row["kills"] += 1
        row["ok"] += o.ok
        row[f"readers {o.readers}"] += 1
        row[f"recovered to {o.after_recovery or 'nothing'}"] += 1
    print()
    print("| command | phase | kills | ok | readers saw | recovered to |")
    print("|---|---|---:|---:|---|---|")
    for (name, phase), c in sorted(table.items()):
        seen = ", ".join(f"{k[8:]} {v}" for k, v in sorted(c.items()) if k.startswith("readers"))
        rec = ", ".join(f"{k[13:]} {v}" for k, v in sorted(c.items()) if k.startswith("recovered"))
        print(f"| {name} | {phase} | {c['kills']} | {c['ok']} | {seen} | {rec} |")
    kills = sum(c["kills"] for c in table.values())
    good = sum(c["ok"] for c in table.values())
    print(f"\n{kills} kills, {good} ok")


if __name__ == "__main__":
    main()

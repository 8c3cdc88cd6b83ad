#!/usr/bin/env python
"""The full dev evaluation: 2WikiMultihopQA, HotpotQA and MuSiQue under every mode.

    .venv/bin/python scripts/eval_multihop.py                      # everything
    .venv/bin/python scripts/eval_multihop.py --datasets 2wiki --modes bm25,hybrid --limit 50

The same library call as ``kg-agent eval`` (:func:`kg_agent.evaluation.evaluate`).
Each dataset's graph is built from its corpus into ``bench_out/eval_dbs/<dataset>.kuzu``
on the first run (embeddings cached under ``$KG_AGENT_CACHE_DIR``) and reused after;
``bench_out/eval/`` receives ``eval.json`` (every question's ranking under every
mode), ``eval.md`` (tables beside the published numbers) and ``recall_at_5.png``.
Data: ``../shared/data/multihop/`` beside the project (``--data-dir`` overrides).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kg_agent.evaluation import evaluate, format_failures, format_table  # noqa: E402
from kg_agent.exceptions import KGAgentError  # noqa: E402

DATASETS = ("2wiki", "hotpotqa", "musique")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default=",".join(DATASETS), help="comma list (default: all 3)")
    ap.add_argument("--modes", default="all", help="comma list, 'all' or 'default' (default: all)")
    ap.add_argument("--limit", type=int, help="only the first N questions of each dataset")
    ap.add_argument("--show-failures", type=int, default=0, metavar="N",
                    help="print the N worst questions of each mode after the table")  # fmt: skip
    ap.add_argument("--db-dir", type=Path, default=ROOT / "bench_out" / "eval_dbs")
    ap.add_argument("--out", type=Path, default=ROOT / "bench_out" / "eval")
    ap.add_argument("--data-dir", type=Path, help="folder holding multihop/")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress display")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    argv_used = sys.argv[1:] if argv is None else argv
    command = " ".join(shlex.quote(a) for a in ["python", "scripts/eval_multihop.py", *argv_used])
    try:
        ev = evaluate(
            [s.strip() for s in args.datasets.split(",") if s.strip()],
            command=command,
            db_dir=args.db_dir,
            out_dir=args.out,
            modes=args.modes,
            limit=args.limit,
            data_dir=args.data_dir,
            progress=not args.quiet,
        )
    except KGAgentError as exc:
        print(f"eval_multihop: {exc}", file=sys.stderr)
        return 1
    print(format_table(ev.runs))
    if args.show_failures > 0:
        for run in ev.runs:
            for mode in run.summaries:
                print("\n" + format_failures(run, mode, args.show_failures))
    print("\nWrote " + ", ".join(str(p) for p in ev.written))
    print(f"Total wall time {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

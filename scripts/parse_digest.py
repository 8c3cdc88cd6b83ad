"""A digest of what the parser makes of a dump's pages, to check that a change to the
parser keeps its output: run it on two checkouts and compare the digests.

Every page the reader yields (sections, links, categories, infobox facts, redirects) is
written out with ``repr`` and hashed; with ``--save`` the reprs are kept, and ``--against``
names the first pages that differ from a saved run. Speed is not measured here
(``scripts/bench_scale.py`` does that).

    .venv/bin/python scripts/parse_digest.py DUMP --pages 40000 --save /tmp/before.pkl
    .venv/bin/python scripts/parse_digest.py DUMP --pages 40000 --tree /path/to/other/checkout \
        --against /tmp/before.pkl
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import sys
import time
from pathlib import Path
from typing import Any


def page_reprs(source: str, pages: int | None) -> list[str]:
    from kg_agent.ingest.sources import iter_pages

    out: list[str] = []
    for page in iter_pages(source, "mediawiki", progress=None):
        out.append(repr(page))
        if pages is not None and len(out) >= pages:
            break
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("source", help="a MediaWiki XML dump (.xml or .bz2)")
    ap.add_argument("--pages", type=int, default=None, help="the first N pages (default all)")
    ap.add_argument("--tree", type=Path, default=None, help="parse with this checkout")
    ap.add_argument("--save", type=Path, default=None, help="keep the pages' reprs here")
    ap.add_argument("--against", type=Path, default=None, help="compare with a saved run")
    ap.add_argument("--json", type=Path, default=None, help="write the result as JSON")
    args = ap.parse_args()
    if args.tree is not None:
        sys.path.insert(0, str(args.tree.resolve()))
    started = time.perf_counter()
    reprs = page_reprs(args.source, args.pages)
    digest = hashlib.sha256("\n".join(reprs).encode()).hexdigest()
    result: dict[str, Any] = {
        "source": args.source,
        "pages": len(reprs),
        "sha256": digest,
        "seconds": round(time.perf_counter() - started, 1),
    }
    if args.save is not None:
        args.save.write_bytes(pickle.dumps(reprs))
    if args.against is not None:
        before: list[str] = pickle.loads(args.against.read_bytes())
        differ = [i for i, (a, b) in enumerate(zip(before, reprs, strict=False)) if a != b]
        result["compared"] = min(len(before), len(reprs))
        result["differ"] = len(differ) + abs(len(before) - len(reprs))
        result["first_differing_pages"] = differ[:10]
    print(" | ".join(f"{k} {v}" for k, v in result.items()))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=1))
    if result.get("differ"):
        sys.exit(1)


if __name__ == "__main__":
    main()

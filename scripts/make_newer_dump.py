#!/usr/bin/env python3
"""Write a newer version of a MediaWiki XML dump, as the next dump would be: a share of
its articles edited (a sentence added to the lead, a link gained, a new revision id and
sha1), some deleted, some new ones added, and optionally a share of the redirects pointed
at another article (every other redirect kept).

Streams the dump page by page (memory stays flat). Used by ``scripts/bench_update.py`` and
the update tests::

    python scripts/make_newer_dump.py OLD.xml NEW-pages-articles.xml --changed 0.01 \\
        --added 0.001 --deleted 0.001 --retargeted 0.001 --seed 1
"""

from __future__ import annotations

import argparse
import hashlib
import html
import json
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_TITLE = re.compile(r"<title>([^<]*)</title>")
_REVISION_ID = re.compile(r"(<revision>\s*<id>)(\d+)")
_PAGE_ID = re.compile(r"(</ns>\s*<id>)(\d+)")
_TEXT = re.compile(r"(<text[^>]*>)(.*?)(</text>)", re.S)
_SHA1 = re.compile(r"<sha1>\w*</sha1>")


def sha1_base36(text: str) -> str:
    """MediaWiki's ``<sha1>``: the text's SHA-1 in base 36, 31 digits."""
    n = int(hashlib.sha1(text.encode("utf-8")).hexdigest(), 16)
    digits = ""
    while n:
        n, r = divmod(n, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[r] + digits
    return digits.rjust(31, "0")


def pages(path: Path) -> Iterator[tuple[str, str]]:
    """("head" | "page" | "tail", text) pieces of a dump, in order."""
    buf: list[str] = []
    in_page = False
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if not in_page and line.lstrip().startswith("<page>"):
                if buf:
                    yield "head", "".join(buf)
                buf, in_page = [line], True
            elif in_page:
                buf.append(line)
                if line.rstrip().endswith("</page>"):
                    yield "page", "".join(buf)
                    buf, in_page = [], False
            else:
                buf.append(line)
    if buf:
        yield "tail", "".join(buf)


def _with_text(page: str, new_text: str) -> str:
    """``page`` with ``new_text`` (escaped), a new revision id and the text's sha1."""
    m = _TEXT.search(page)
    assert m is not None
    page = page[: m.start(2)] + html.escape(new_text, quote=False) + page[m.end(2) :]
    page = _REVISION_ID.sub(lambda r: r.group(1) + str(int(r.group(2)) + 1), page, count=1)
    return _SHA1.sub(f"<sha1>{sha1_base36(new_text)}</sha1>", page, count=1)


def edit(page: str, rng: random.Random, titles: list[str]) -> str:
    """An edited revision: one sentence added after the lead's first paragraph, naming
    (and linking) another article."""
    m = _TEXT.search(page)
    assert m is not None
    text = html.unescape(m.group(2))
    other = rng.choice(titles) if titles else "Wikipedia"
    sentence = (
        f" A later revision added that its history is also told in [[{other}]], "
        f"in the account numbered {rng.randrange(10**6)}."
    )
    cut = text.find("\n\n", text.find("'''"))
    text = text + sentence if cut < 0 else text[:cut] + sentence + text[cut:]
    return _with_text(page, text)


def is_redirect(page: str) -> bool:
    return "<redirect" in page


_REDIRECT_TAG = re.compile(r'<redirect title="[^"]*"\s*/>')


def retarget(page: str, target: str) -> str:
    """The redirect ``page`` pointed at ``target`` (a new revision)."""
    page = _REDIRECT_TAG.sub(
        f'<redirect title="{html.escape(target, quote=True)}" />', page, count=1
    )
    return _with_text(page, f"#REDIRECT [[{target}]]")


def newer_dump(
    src: Path,
    out: Path,
    *,
    changed: float,
    added: float,
    deleted: float,
    retargeted: float = 0.0,
    seed: int = 0,
) -> dict[str, Any]:
    """Write the newer version of ``src`` to ``out``; returns what changed, by title."""
    rng = random.Random(seed)
    summary: dict[str, Any] = {
        "changed": [],
        "deleted": [],
        "added": [],
        "retargeted": [],
        "unchanged": 0,
    }
    # redirects draw from their own generator: the articles' changes stay those of
    # the same seed without retargets
    redirect_rng = random.Random(seed + 1)
    titles: list[str] = []  # a sample of article titles, for links and new pages
    next_id = 0
    templates: list[str] = []
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as fh:
        for kind, piece in pages(src):
            if kind != "page":
                if kind == "tail":
                    _add_pages(fh, rng, templates, summary, next_id, added_share=added)
                fh.write(piece)
                continue
            pid = _PAGE_ID.search(piece)
            next_id = max(next_id, int(pid.group(2)) if pid else 0)
            title_m = _TITLE.search(piece)
            title = html.unescape(title_m.group(1)) if title_m else ""
            if is_redirect(piece) and titles and redirect_rng.random() < retargeted:
                summary["retargeted"].append(title)
                fh.write(retarget(piece, redirect_rng.choice(titles)))
                continue
            if is_redirect(piece) or ":" in title:
                fh.write(piece)
                continue
            if len(titles) < 1000:
                titles.append(title)
            elif rng.random() < 0.01:
                titles[rng.randrange(len(titles))] = title
            if len(templates) < 200 and rng.random() < 0.05:
                templates.append(piece)
            roll = rng.random()
            if roll < deleted:
                summary["deleted"].append(title)
                continue
            if roll < deleted + changed:
                summary["changed"].append(title)
                fh.write(edit(piece, rng, titles))
                continue
            summary["unchanged"] += 1
            fh.write(piece)
    return summary


def _add_pages(
    fh: Any,
    rng: random.Random,
    templates: list[str],
    summary: dict[str, Any],
    last_id: int,
    *,
    added_share: float,
) -> None:
    """New articles, each a copy of a seen article's text under a new title and id."""
    seen = summary["unchanged"] + len(summary["changed"]) + len(summary["deleted"])
    n = round(seen * added_share)
    for i in range(n):
        if not templates:
            return
        base = rng.choice(templates)
        old = html.unescape(_TITLE.search(base).group(1))  # type: ignore[union-attr]
        title = f"{old} (new article {i + 1})"
        page = _TITLE.sub(f"<title>{html.escape(title, quote=False)}</title>", base, count=1)
        new_id = str(last_id + 1 + i)
        page = _PAGE_ID.sub(lambda m, new_id=new_id: m.group(1) + new_id, page, count=1)
        m = _TEXT.search(page)
        assert m is not None
        page = _with_text(page, html.unescape(m.group(2)).replace(old, title))
        summary["added"].append(title)
        fh.write(page)


def partial_export(newer: Path, summary: dict[str, Any], out: Path) -> int:
    """Write the pages of ``newer`` that ``summary`` says changed, were added or had their
    redirect moved, as a ``Special:Export`` (or a day's "adds-changes" dump) holds them:
    a partial export, which never deletes (the deleted titles go to ``kg-agent delete``).
    Returns how many pages it holds."""
    wanted = {*summary["changed"], *summary["added"], *summary["retargeted"]}
    n = 0
    with out.open("w", encoding="utf-8") as fh:
        for kind, piece in pages(newer):
            if kind == "page":
                title_m = _TITLE.search(piece)
                if title_m is None or html.unescape(title_m.group(1)) not in wanted:
                    continue
                n += 1
            fh.write(piece)
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--changed", type=float, default=0.01)
    ap.add_argument("--added", type=float, default=0.001)
    ap.add_argument("--deleted", type=float, default=0.001)
    ap.add_argument("--retargeted", type=float, default=0.0, help="Share of redirects moved.")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--summary", type=Path, help="Write what changed (titles) as JSON here.")
    args = ap.parse_args()
    summary = newer_dump(
        args.src,
        args.out,
        changed=args.changed,
        added=args.added,
        deleted=args.deleted,
        retargeted=args.retargeted,
        seed=args.seed,
    )
    if args.summary:
        args.summary.write_text(json.dumps(summary), encoding="utf-8")
    print(
        f"{args.out}: {len(summary['changed']):,} changed, {len(summary['added']):,} added, "
        f"{len(summary['deleted']):,} deleted, {len(summary['retargeted']):,} redirects "
        f"moved, {summary['unchanged']:,} unchanged"
    )


if __name__ == "__main__":
    main()

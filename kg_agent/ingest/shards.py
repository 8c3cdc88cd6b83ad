"""Parsed pages as parquet shards: one shard per work unit, written by whoever parsed it.

A shard is a handful of parquet files (articles, sections, raw links, category
memberships, redirects, infobox facts) and a JSON marker written last, by rename: a shard with
its marker is complete, one without is garbage from a killed worker and is parsed
again. That marker is what makes a load resumable.

Every row carries ``_ord``, the page's position in the dump (``unit << 32 |
page``): when a title appears twice, the later page wins, and the rows of
earlier ones are dropped when shards are read (see :class:`TitleTable`).
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from kg_agent.ingest.chunking import DEFAULT_MAX_WORDS, chunk_text
from kg_agent.ingest.facts import Fact, Link, iso_year
from kg_agent.ingest.known import PageFilter
from kg_agent.ingest.records import ParsedPage
from kg_agent.store.section_ids import section_id

__all__ = [
    "KINDS",
    "ShardBuilder",
    "ShardSet",
    "add_fact_columns",
    "fact_rows",
    "parse_unit",
    "unit_ord",
]

ORD = pa.field("_ord", pa.int64())
SCHEMAS: dict[str, pa.Schema] = {
    "articles": pa.schema(
        [
            ("title", pa.string()),
            ("page_id", pa.int64()),
            ("is_disambiguation", pa.bool_()),
            ("n_sections", pa.int64()),
            ("word_count", pa.int64()),
            ("revision", pa.int64()),
            ("digest", pa.string()),
            ("kept", pa.bool_()),  # an update's unchanged page: no other rows (known.py)
            ("offset", pa.int64()),  # where the page can be read again alone (units.py)
            ("kind", pa.string()),  # person, place, … (kinds.py)
            ORD,
        ]
    ),
    "sections": pa.schema(
        [
            ("id", pa.string()),
            ("article", pa.string()),
            ("heading", pa.string()),
            ("heading_path", pa.string()),
            ("level", pa.int64()),
            ("ordinal", pa.int64()),
            ("part", pa.int64()),
            ("text", pa.string()),
            ("word_count", pa.int64()),
            ORD,
        ]
    ),
    # section_id "" marks an article-level link (a link-only section: a table list)
    "links": pa.schema(
        [
            ("section_id", pa.string()),
            ("article", pa.string()),
            ("target", pa.string()),
            ("count", pa.int64()),
            ("inferred", pa.bool_()),
            ORD,
        ]
    ),
    "categories": pa.schema([("from", pa.string()), ("to", pa.string()), ORD]),
    # one row per item of an infobox fact (infobox.py): a link (``target`` as written,
    # resolved later) or a typed literal (``number``, ``date``)
    "facts": pa.schema(
        [
            # the item's number in its article here; the graph's id once resolved
            # (prepare.py numbers the facts of a load from the graph's next_fact_id)
            ("id", pa.int64()),
            ("article", pa.string()),
            ("box", pa.string()),
            ("sub_box", pa.string()),
            ("key", pa.string()),
            ("raw_key", pa.string()),
            ("value", pa.string()),
            ("position", pa.int64()),
            ("item", pa.string()),
            ("kind", pa.string()),
            ("target", pa.string()),
            ("number", pa.float64()),
            ("unit", pa.string()),
            ("date", pa.string()),
            ("note", pa.string()),
            ORD,
        ]
    ),
    "redirects": pa.schema([("title", pa.string()), ("target", pa.string()), ORD]),
}
KINDS = tuple(SCHEMAS)


def unit_ord(unit: int, page: int) -> int:
    return (unit << 32) | page


def _assign_links(parts: Sequence[str], links: Iterable[str]) -> list[Counter[str]]:
    """Attribute a section's links to the part whose text names the target.

    Readers report links per section; after chunking, the evidence edge should
    start at the part that actually talks about the target. A target whose
    name is not in any part (a piped label) stays with the first part.
    """
    out: list[Counter[str]] = [Counter() for _ in parts]
    if len(parts) == 1:
        out[0].update(links)
        return out
    lowered = [p.lower() for p in parts]
    for target in links:
        key = target.lower()
        idx = next((i for i, p in enumerate(lowered) if key in p), 0)
        out[idx][target] += 1
    return out


def _empty_columns() -> dict[str, dict[str, list[Any]]]:
    return {kind: {name: [] for name in schema.names} for kind, schema in SCHEMAS.items()}


@dataclass(slots=True)
class ShardBuilder:
    """Rows of one shard, built page by page (sections chunked, links counted).

    Held as column lists, not a dict a row: a load makes tens of millions of link rows,
    and building a dict for each, then a column from the dicts, was a tenth of a
    worker's time."""

    unit: int
    max_section_words: int = DEFAULT_MAX_WORDS
    #: kind → column name → values (the columns of :data:`SCHEMAS`)
    columns: dict[str, dict[str, list[Any]]] = field(default_factory=_empty_columns)
    counts: Counter[str] = field(default_factory=Counter)
    pages: int = 0

    def rows(self, kind: str) -> list[dict[str, Any]]:
        """The rows of one kind, a dict each (for tests and small readers)."""
        cols = self.columns[kind]
        rows = zip(*cols.values(), strict=True)
        return [dict(zip(cols, values, strict=True)) for values in rows]

    def add(self, page: ParsedPage) -> None:
        ord_ = unit_ord(self.unit, self.pages)
        self.pages += 1
        columns = self.columns
        if page.is_redirect:
            _append(columns["redirects"], (page.title, page.redirect_to, ord_))
            self.counts["redirects"] += 1
            return
        self.counts["articles"] += 1
        if page.kept:
            self.counts["kept"] += 1
            _append(columns["articles"], _article(page, 0, 0, ord_))
            return
        self.counts["disambiguation_pages"] += int(page.is_disambiguation)
        self.counts["infer_mentions"] |= int(page.infer_mentions)
        title = page.title
        links = columns["links"]
        sections = columns["sections"]
        ordinal = words = 0
        limit = self.max_section_words
        for sec in page.sections:
            heading_path = " > ".join(sec.heading_path)
            # most sections are one part: their words are counted once (chunk_text's
            # own first test, and the part's count)
            whole = sec.text.strip()
            n = len(whole.split())
            parts = [whole] if 0 < n <= limit else chunk_text(whole, max_words=limit)
            if not parts:
                # A link-only section (a table-only list): its links are real
                # article-level links, with no section to start a mention edge.
                _add_links(links, "", title, Counter(sec.links), ord_)
                continue
            for part_no, (text, counts) in enumerate(
                zip(parts, _assign_links(parts, sec.links), strict=True)
            ):
                sid = section_id(title, ordinal)
                wc = n if text is whole else len(text.split())
                words += wc
                _append(
                    sections,
                    (
                        sid,
                        title,
                        sec.heading,
                        heading_path,
                        sec.level,
                        ordinal,
                        part_no,
                        text,
                        wc,
                        ord_,
                    ),
                )
                _add_links(links, sid, title, counts, ord_)
                ordinal += 1
        self.counts["sections"] += ordinal
        categories = columns["categories"]
        for cat in dict.fromkeys(page.categories):
            _append(categories, (title, cat, ord_))
        self.counts["facts"] += add_fact_columns(columns["facts"], title, page.facts, ord_)
        _append(columns["articles"], _article(page, ordinal, words, ord_))

    def write(self, directory: Path, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """Write the shard's files, then its marker; returns the marker's content."""
        shards = ShardSet(directory)
        files = []
        for kind in KINDS:
            columns = self.columns[kind]
            if not next(iter(columns.values())):
                continue
            path = shards.path(self.unit, kind)
            tmp = path.with_suffix(".parquet.tmp")
            pq.write_table(_table(columns, SCHEMAS[kind]), tmp)
            os.replace(tmp, path)
            files.append(kind)
        marker = {"unit": self.unit, "pages": self.pages, "files": files, **dict(self.counts)}
        marker.update(extra or {})
        shards.mark(self.unit, marker)
        return marker


def _append(columns: dict[str, list[Any]], row: Sequence[Any]) -> None:
    """One row, its values in the order of the columns (the schema's)."""
    for values, value in zip(columns.values(), row, strict=True):
        values.append(value)


def _add_links(
    columns: dict[str, list[Any]], sid: str, article: str, counts: Counter[str], ord_: int
) -> None:
    """A section's links (``sid`` "" for an article-level one), one row a target."""
    n = len(counts)
    if not n:
        return
    columns["section_id"].extend([sid] * n)
    columns["article"].extend([article] * n)
    columns["target"].extend(counts)
    columns["count"].extend(counts.values())
    columns["inferred"].extend([False] * n)
    columns["_ord"].extend([ord_] * n)


def _article(page: ParsedPage, sections: int, words: int, ord_: int) -> tuple[Any, ...]:
    return (
        page.title,
        page.page_id,
        page.is_disambiguation,
        sections,
        words,
        page.revision,
        page.digest,
        page.kept,
        page.offset,
        page.kind or ("" if page.kept else "other"),
        ord_,
    )


def add_fact_columns(
    columns: dict[str, list[Any]], title: str, facts: Sequence[Fact], ord_: int
) -> int:
    """Append one row per item of each fact to ``columns`` (the facts schema's columns),
    numbered across the article from 0 (the resolve phase gives each its id in the
    graph); returns the rows added. Column lists, not a dict a row: a load writes
    millions of fact items, and ``Table.from_pylist`` took ~17 µs an item."""
    if not facts:
        return 0
    c = columns
    # bound appends, fetched once a page: the per-item dict and attribute lookups
    # were half of this function's time
    ids, articles, boxes, sub_boxes = (c[k].append for k in ("id", "article", "box", "sub_box"))
    keys, raw_keys, values, positions = (
        c[k].append for k in ("key", "raw_key", "value", "position")
    )
    notes, ords, items, kinds = (c[k].append for k in ("note", "_ord", "item", "kind"))
    targets, units, numbers, dates = (c[k].append for k in ("target", "unit", "number", "date"))
    n = 0
    for fact in facts:
        box, sub_box, key, raw_key, value = (
            fact.box,
            fact.sub_box,
            fact.key,
            fact.raw_key,
            fact.value,
        )
        for position, item in enumerate(fact.items):
            ids(n)
            articles(title)
            boxes(box)
            sub_boxes(sub_box)
            keys(key)
            raw_keys(raw_key)
            values(value)
            positions(position)
            notes(item.note)
            ords(ord_)
            number: float | None = None
            date = ""
            if isinstance(item, Link):
                items(item.label)
                kinds("link")
                targets(item.target)
                units("")
            else:
                kind = item.kind
                items(item.text)
                kinds(kind)
                targets("")
                units(item.unit)
                if kind == "number":
                    number = float(item.value)
                elif kind == "date":
                    date = str(item.value)
                elif kind == "year":
                    number = float(item.value)
                    date = iso_year(int(item.value))
            numbers(number)
            dates(date)
            n += 1
    return n


def fact_rows(title: str, facts: Sequence[Fact], ord_: int) -> list[dict[str, Any]]:
    """:func:`add_fact_columns` as one dict a row."""
    columns: dict[str, list[Any]] = {name: [] for name in SCHEMAS["facts"].names}
    n = add_fact_columns(columns, title, facts, ord_)
    return [{name: values[i] for name, values in columns.items()} for i in range(n)]


def _table(columns: dict[str, list[Any]], schema: pa.Schema) -> pa.Table:
    """Columns (lists) as a table of ``schema``: column by column, ~3x faster than
    ``Table.from_pylist``."""
    return pa.table(
        {name: pa.array(columns[name], type=schema.field(name).type) for name in schema.names},
        schema=schema,
    )


class ShardSet:
    """The shard files of one load's stage folder."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)

    def path(self, unit: int, kind: str) -> Path:
        return self.dir / f"u{unit:06d}.{kind}.parquet"

    def marker_path(self, unit: int) -> Path:
        return self.dir / f"u{unit:06d}.json"

    def mark(self, unit: int, marker: dict[str, Any]) -> None:
        path = self.marker_path(unit)
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(marker), encoding="utf-8")
        os.replace(tmp, path)

    def markers(self) -> dict[int, dict[str, Any]]:
        """Complete shards: unit → marker."""
        out: dict[int, dict[str, Any]] = {}
        for p in self.dir.glob("u*.json"):
            try:
                m = json.loads(p.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue  # a marker is written by rename: a bad one is not ours
            out[int(m["unit"])] = m
        return dict(sorted(out.items()))

    def read(self, unit: int, kind: str, columns: Sequence[str] | None = None) -> pa.Table:
        """One shard's table of ``kind`` (empty, with its schema, when it has no rows)."""
        path = self.path(unit, kind)
        if path.exists():
            return pq.read_table(path, columns=list(columns) if columns else None)
        table = SCHEMAS[kind].empty_table()
        return table.select(list(columns)) if columns else table

    def units(self) -> list[int]:
        return list(self.markers())

    def drop_from(self, first: int) -> None:
        """Remove the shards of units ``first`` and after (markers first: never a
        marker without its files)."""
        for marker in self.dir.glob("u*.json"):
            if int(marker.name[1:].split(".")[0]) >= first:
                marker.unlink(missing_ok=True)
        for path in self.dir.glob("u*.parquet"):
            if int(path.name[1:].split(".")[0]) >= first:
                path.unlink(missing_ok=True)


def parse_unit(job: dict[str, Any]) -> dict[str, Any]:
    """Parse one work unit of a MediaWiki dump into a shard (a worker's whole job).

    ``job`` is plain data so it can cross a process boundary: the plan's path,
    layout and namespaces, the unit, its text when the parent decompressed it
    (``stream`` layout), whether it is the dump's last, where shards go, and for an
    update which pages to keep or read (:class:`~kg_agent.ingest.known.PageFilter`).
    """
    from kg_agent.ingest.mediawiki import iter_dump_pages, iter_fragment_pages
    from kg_agent.ingest.units import DumpPlan, Unit, read_pages_at, read_unit_located

    t0 = time.perf_counter()
    unit = Unit(*job["unit"])
    plan = DumpPlan(job["path"], job["layout"], job["compression"], job["size"], job["namespaces"])
    # a reparse writes its pages as another unit, after every unit of the dump
    out = int(job.get("as_unit", unit.index))
    builder = ShardBuilder(out, max_section_words=job["max_section_words"])
    which = PageFilter.from_job(job)
    pages: Iterable[ParsedPage]
    if plan.layout == "single":
        pages = iter_dump_pages(plan.path, keep_link_only_sections=True, pages=which)
    else:
        data = job.get("data")
        locate = None
        last = job["last"]
        pieces = job.get("pieces")
        if pieces:  # a reparse of some pages: only theirs are read
            data = read_pages_at(plan, pieces)
            last = data.rstrip().endswith(b"</mediawiki>")
        elif data is None:
            data, locate = read_unit_located(plan, unit)
        where = f"part {unit.index + 1} at byte {unit.start:,}" + (
            " of the decompressed text" if plan.layout == "stream" else ""
        )
        if plan.layout == "plain" and unit.start:
            where = f"part {unit.index + 1}, starting at byte {unit.start:,}"
        pages = iter_fragment_pages(
            data,
            plan.namespaces,
            source=plan.path,
            where=where,
            last=last,
            pages=which,
            locate=locate,
        )
    for page in pages:
        builder.add(page)
    extra = {"start": unit.start, "end": unit.end, "seconds": round(time.perf_counter() - t0, 3)}
    return builder.write(Path(job["out_dir"]), extra)

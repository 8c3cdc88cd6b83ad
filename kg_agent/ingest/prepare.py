"""The resolve phase: parsed shards → copy-ready tables for the graph.

For each shard: the rows of each title's winning page, link targets resolved to
canonical titles (through redirects, or to new stubs), edges aggregated, and the
result written as parquet files whose columns are the graph tables' columns, so
the write phase is nothing but ``COPY FROM``. Passage corpora also get their
mention edges inferred here (:class:`~kg_agent.entities.matcher.MentionMatcher`).

It reads the graph only through the callbacks it is given (what titles,
redirects and categories exist), so it runs before any write and is redone on a
resumed load whose graph changed meanwhile.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from kg_agent.ingest.chunking import embedding_input
from kg_agent.ingest.fact_table import FACT_SCHEMA, group_items
from kg_agent.ingest.parse import ParseResult
from kg_agent.ingest.resolve import LinkResolver, Lookup, TitleTable, resolve_links
from kg_agent.ingest.shards import SCHEMAS
from kg_agent.ingest.stage import Stage
from kg_agent.progress import Progress

__all__ = ["ARTICLE_SCHEMA", "FACT_SCHEMA", "SECTION_SCHEMA", "GraphLookups", "prepare"]

ARTICLE_SCHEMA = pa.schema(
    [
        ("title", pa.string()),
        ("page_id", pa.int64()),
        ("is_stub", pa.bool_()),
        ("is_disambiguation", pa.bool_()),
        ("pagerank", pa.float64()),
        ("n_sections", pa.int64()),
        ("word_count", pa.int64()),
        ("load_id", pa.string()),
        ("revision", pa.int64()),
        ("digest", pa.string()),
        ("kind", pa.string()),
    ]
)
#: Section columns as the graph has them: the parsed ones and ``text_hash``, the hash of
#: the text a vector is computed from (what tells a stale vector).
SECTION_SCHEMA = (
    SCHEMAS["sections"]
    .remove(SCHEMAS["sections"].get_field_index("_ord"))
    .append(pa.field("text_hash", pa.string()))
)


def text_hashes(secs: pa.Table) -> pa.Array:
    """Hash of each section's embedding input (title, heading path, text)."""
    return pa.array(
        [
            hashlib.blake2b(embedding_input(a, h, t).encode("utf-8"), digest_size=12).hexdigest()
            for a, h, t in zip(
                secs.column("article").to_pylist(),
                secs.column("heading_path").to_pylist(),
                secs.column("text").to_pylist(),
                strict=True,
            )
        ],
        pa.string(),
    )


PAIR_SCHEMA = pa.schema([("from", pa.string()), ("to", pa.string())])
#: HAS_FACT (article → fact id) and REFERS_TO (fact id → article) rows.
HAS_FACT_SCHEMA = pa.schema([("from", pa.string()), ("to", pa.int64())])
REFERS_SCHEMA = pa.schema([("from", pa.int64()), ("to", pa.string())])


@dataclass(frozen=True, slots=True)
class GraphLookups:
    """What the resolve phase asks of the graph it adds to (all None for a new graph)."""

    lookup: Lookup | None = None  # titles → (articles, redirects) already in the graph
    article_titles: Callable[[], list[str]] | None = None  # non-stub titles (mentions)
    categories: Callable[[Sequence[str]], set[str]] | None = None  # which names exist
    state: str = "new"  # identifies the graph's content; a change redoes this phase
    #: An update writes only these articles' rows (new, changed and relinked ones),
    #: resolved against every title of the source, as a whole load would resolve them.
    only: pa.Array | None = None
    #: And only these redirects (those the diff found new or moved, or without a row):
    #: the rest are the graph's already, and a dump of English Wikipedia holds millions. An
    #: unchanged redirect adds no stub: its target is in the graph.
    redirects: pa.Array | None = None
    #: The id the graph's next fact gets (``Meta.next_fact_id``): ids are numbers, given
    #: in page order and never reused (a string key cost a hash index twice the size
    #: of the whole fact table: docs/BENCHMARKS.md)
    fact_base: int = 0


def _only(table: pa.Table, column: str, titles: pa.Array | None) -> pa.Table:
    if titles is None or table.num_rows == 0:
        return table
    return table.filter(pc.is_in(table.column(column), value_set=titles))


def prepare(
    stage: Stage,
    parsed: ParseResult,
    graph: GraphLookups,
    *,
    progress: bool = True,
    table: TitleTable | None = None,
) -> dict[str, Any]:
    """Write ``stage.resolved``; returns the counts (also kept in ``resolve.json``).

    ``table``: the title table of ``parsed.units``, when the caller has it (an update's
    diff builds it): ~1.5 s per 100k articles not spent twice."""
    done = stage.done("resolve")
    if done is not None and done.get("state") == graph.state:
        return dict(done["counts"])
    stage.forget("resolve")
    if table is None:
        table = TitleTable.from_shards(stage.units, parsed.units, parsed.cut)
    matcher = _matcher(table, graph) if parsed.counts.get("infer_mentions") else None
    resolver = LinkResolver(table, graph.lookup)
    # the graph looked up once for every shard's link targets, not shard by shard: past a
    # few hundred titles each lookup is a scan of the graph's table (an update of 5% of
    # 100k articles made 59 of them, 7 s with the redirects of a partial export)
    resolver.prefetch(_link_targets(stage, parsed.units))
    counts: dict[str, int] = dict.fromkeys(
        ("articles", "sections", "links", "mentions", "inferred_mentions", "facts"), 0
    )
    next_fact = graph.fact_base
    counts["duplicate_pages"] = table.duplicates
    categories: set[str] = set()
    prog = Progress("resolve", total=len(parsed.units), unit="shards", enabled=progress)
    out = stage.resolved
    for unit in parsed.units:
        arts = _only(
            table.current(stage.units.read(unit, "articles"), "title"), "title", graph.only
        )
        if "kept" in arts.column_names and pc.any(arts.column("kept")).as_py():
            # a kept page has no sections: writing it would empty the graph's article
            raise RuntimeError(f"resolve: a page kept unparsed is to be written (unit {unit})")
        counts["articles"] += arts.num_rows
        _write(out.path(unit, "articles"), _article_rows(arts, stage.load_id))
        secs = _only(
            table.current(stage.units.read(unit, "sections"), "article"), "article", graph.only
        )
        secs = secs.append_column("text_hash", text_hashes(secs))
        counts["sections"] += secs.num_rows
        _write(out.path(unit, "sections"), secs)
        has = pa.table([secs.column("article"), secs.column("id")], schema=PAIR_SCHEMA)
        _write(out.path(unit, "has_section"), has)
        cats = _only(
            table.current(stage.units.read(unit, "categories"), "from"), "from", graph.only
        )
        categories.update(cats.column("to").to_pylist())
        _write(out.path(unit, "in_category"), cats)
        raw = _only(
            table.current(stage.units.read(unit, "links"), "article"), "article", graph.only
        )
        if matcher is not None:
            inferred = _inferred_links(matcher, secs)
            counts["inferred_mentions"] += inferred.num_rows
            raw = pa.concat_tables([raw, inferred])
        mentions, links = resolve_links(raw, resolver)
        counts["mentions"] += mentions.num_rows
        counts["links"] += links.num_rows
        _write(out.path(unit, "mentions"), mentions)
        _write(out.path(unit, "links_to"), links)
        facts = _only(
            table.current(stage.units.read(unit, "facts"), "article"), "article", graph.only
        )
        facts, refers = resolve_facts(facts, resolver, next_fact)
        next_fact += facts.num_rows
        counts["facts"] += facts.num_rows
        _write(out.path(unit, "facts"), facts)
        has_fact = pa.table([facts.column("article"), facts.column("id")], schema=HAS_FACT_SCHEMA)
        _write(out.path(unit, "has_fact"), has_fact)
        _write(out.path(unit, "refers_to"), refers)
        prog.update(1)
    prog.close()
    only_redirects = None if graph.redirects is None else graph.redirects.to_pylist()
    redirects = resolver.redirect_rows(only_redirects)
    _write_globals(stage, resolver, redirects, categories, graph)
    counts.update(
        next_fact_id=next_fact,
        stubs=len(resolver.stubs),
        redirect_rows=len(redirects),
        categories=len(categories),
    )
    stage.mark("resolve", {"state": graph.state, "counts": counts})
    return counts


def _matcher(table: TitleTable, graph: GraphLookups) -> Any:
    from kg_agent.entities.matcher import MentionMatcher

    known = list(table.titles)
    if graph.article_titles is not None:
        known.extend(t for t in graph.article_titles() if t not in table.titles)
    return MentionMatcher(known, aliases=dict(table.redirects))


def _link_targets(stage: Stage, units: Sequence[int]) -> Iterator[str]:
    """The targets of the staged links and fact links of ``units``, shard by shard (as
    written: unresolved; the resolver keeps only those the load's own titles lack)."""
    for unit in units:
        links = stage.units.read(unit, "links")
        yield from pc.unique(links.column("target")).to_pylist()
        facts = stage.units.read(unit, "facts", ["target"])
        yield from pc.unique(facts.column("target")).to_pylist()


def resolve_facts(
    facts: pa.Table, resolver: LinkResolver, first_id: int = 0
) -> tuple[pa.Table, pa.Table]:
    """The facts of the parsed fact items ``facts`` (current only), a row a fact with
    its id (``first_id`` on, in page order) and its items' link targets resolved to
    titles (through redirects, or to new stubs, as links are), and the ``REFERS_TO``
    edges they make (fact id → article, once for each article; none to the fact's own
    article)."""
    if facts.num_rows == 0:
        return FACT_SCHEMA.empty_table(), REFERS_SCHEMA.empty_table()
    targets = facts.column("target")
    distinct = pc.unique(targets)
    names = distinct.to_pylist()
    resolver.prefetch([n for n in names if n])
    resolved = pa.array(resolver.resolve_all(names), pa.string())
    to = pc.take(resolved, pc.index_in(targets, value_set=distinct))
    facts = facts.set_column(facts.schema.get_field_index("target"), "target", to)
    grouped, fact_of_item = group_items(facts, first_id)
    named = pc.and_(pc.not_equal(to, ""), pc.not_equal(to, facts.column("article")))
    edges = pa.table([pc.filter(fact_of_item, named), pc.filter(to, named)], schema=REFERS_SCHEMA)
    refers = edges.group_by(["from", "to"], use_threads=False).aggregate([])
    return grouped, refers.select(REFERS_SCHEMA.names).cast(REFERS_SCHEMA)


def _inferred_links(matcher: Any, secs: pa.Table) -> pa.Table:
    """Passage corpora have no hyperlinks: link sections to the articles they name."""
    rows: dict[str, list[Any]] = {k: [] for k in SCHEMAS["links"].names if k != "_ord"}
    for sid, art, text in zip(
        secs.column("id").to_pylist(),
        secs.column("article").to_pylist(),
        secs.column("text").to_pylist(),
        strict=True,
    ):
        for target, n in matcher.find(text, source_title=art).items():
            rows["section_id"].append(sid)
            rows["article"].append(art)
            rows["target"].append(target)
            rows["count"].append(n)
            rows["inferred"].append(True)
    schema = SCHEMAS["links"].remove(SCHEMAS["links"].get_field_index("_ord"))
    return pa.table(rows, schema=schema)


def _article_rows(arts: pa.Table, load_id: str) -> pa.Table:
    n = arts.num_rows
    return pa.table(
        [
            arts.column("title"),
            arts.column("page_id"),
            pa.array([False] * n, pa.bool_()),
            arts.column("is_disambiguation"),
            pa.array([0.0] * n, pa.float64()),
            arts.column("n_sections"),
            arts.column("word_count"),
            pa.array([load_id] * n, pa.string()),
            arts.column("revision"),
            arts.column("digest"),
            arts.column("kind"),
        ],
        schema=ARTICLE_SCHEMA,
    )


def _write_globals(
    stage: Stage,
    resolver: LinkResolver,
    redirects: list[tuple[str, str]],
    categories: set[str],
    graph: GraphLookups,
) -> None:
    stubs = sorted(resolver.stubs)
    n = len(stubs)
    _write(
        stage.file("stubs.parquet"),
        pa.table(
            {
                "title": stubs,
                "page_id": pa.array([None] * n, pa.int64()),
                "is_stub": [True] * n,
                "is_disambiguation": [False] * n,
                "pagerank": [0.0] * n,
                "n_sections": [0] * n,
                "word_count": [0] * n,
                "load_id": [stage.load_id] * n,
                "revision": pa.array([None] * n, pa.int64()),
                "digest": pa.array([None] * n, pa.string()),
                "kind": [""] * n,
            },
            schema=ARTICLE_SCHEMA,
        ),
    )
    names = sorted(categories)
    if graph.categories is not None and names:
        known: set[str] = set()
        for i in range(0, len(names), 5000):
            known |= graph.categories(names[i : i + 5000])
        names = [c for c in names if c not in known]
    _write(stage.file("categories.parquet"), pa.table({"name": pa.array(names, pa.string())}))
    titles = [r for r, _ in redirects]
    _write(
        stage.file("redirects.parquet"),
        pa.table(
            {"title": pa.array(titles, pa.string()), "load_id": [stage.load_id] * len(titles)}
        ),
    )
    _write(
        stage.file("redirects_to.parquet"),
        pa.table(
            {"from": pa.array(titles, pa.string()), "to": pa.array([t for _, t in redirects])},
            schema=PAIR_SCHEMA,
        ),
    )


def _write(path: Any, table: pa.Table) -> None:
    """Write ``table`` (also when empty: the write phase copies what exists)."""
    if table.num_rows == 0:
        if path.exists():
            path.unlink()
        return
    tmp = path.with_name(path.name + ".tmp")
    pq.write_table(table, tmp)
    tmp.replace(path)


def count_rows(paths: Sequence[Any]) -> int:
    return sum(pq.read_metadata(p).num_rows for p in paths)

"""Building what a graph derives from its data: vector index, text index, PageRank,
article table.

A new graph builds its text index straight from the load's staged parquet files
(no read-back from Kùzu); a load into an existing graph adds and deletes the
load's documents in place (tantivy commits atomically); ``reindex`` rebuilds a
whole new generation from the graph and switches to it in one ``Meta`` update.
Each step records itself in ``Meta``, and :func:`finalize_indexes` runs only the
steps still owed, so a load killed while indexing is finished by the next run.
"""

from __future__ import annotations

import datetime as _dt
import os
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from kg_agent.progress import Progress
from kg_agent.store.graph import GraphStore
from kg_agent.store.layout import drop_index_generations
from kg_agent.store.link_changes import LinkChanges
from kg_agent.store.text_index import TextIndex

__all__ = ["LinkChanges", "TextSource", "build_text_index", "finalize_indexes", "sync_text_index"]

_BATCH_ROWS = 20_000


@dataclass(frozen=True, slots=True)
class TextSource:
    """The documents of a load, as parquet files: sections (id, article, heading, text…)
    and article titles (a ``title`` column; stubs included)."""

    section_files: Sequence[Path] = ()
    title_files: Sequence[Path] = ()
    #: An update's or a delete's: titles that left the graph (title and sections go),
    #: and titles kept as stubs (their sections go, the title stays).
    removed_titles: Sequence[str] = ()
    stubbed_titles: Sequence[str] = ()


def _threads() -> int:
    return max(1, min(8, os.cpu_count() or 1))


def _batches(files: Iterable[Path], columns: list[str]) -> Iterator[pa.RecordBatch]:
    for f in files:
        if Path(f).exists():
            yield from pq.ParquetFile(f).iter_batches(batch_size=_BATCH_ROWS, columns=columns)


def _fill(
    index: TextIndex,
    sections: Iterable[pa.RecordBatch],
    titles: Iterable[pa.RecordBatch],
    *,
    replace: bool = False,
    removed: Sequence[str] = (),
    stubbed: Sequence[str] = (),
    progress: bool,
    total: int | None,
) -> None:
    """Add documents; with ``replace``, first delete what the index holds for each title
    (its title and its sections: a re-loaded article's old text goes)."""
    writer = index.writer(threads=_threads())
    prog = Progress("text index", total=total, unit="sections", enabled=progress)
    try:
        for i in range(0, len(removed), _BATCH_ROWS):
            writer.delete_titles(list(removed[i : i + _BATCH_ROWS]))
            writer.delete_article_sections(list(removed[i : i + _BATCH_ROWS]))
        for i in range(0, len(stubbed), _BATCH_ROWS):
            writer.delete_article_sections(list(stubbed[i : i + _BATCH_ROWS]))
        if replace:
            titles = list(titles)
            for b in titles:
                names = b.column("title").to_pylist()
                writer.delete_titles(names)
                writer.delete_article_sections(names)
        for b in sections:
            writer.add_sections(
                b.column("id").to_pylist(),
                b.column("article").to_pylist(),
                b.column("heading").to_pylist(),
                b.column("text").to_pylist(),
            )
            prog.update(b.num_rows)
        for b in titles:
            writer.add_titles(b.column("title").to_pylist())
        writer.commit()
    finally:
        writer.close()
        prog.close()


def build_text_index(
    store: GraphStore, source: TextSource | None = None, *, progress: bool = True
) -> str:
    """Build a new text index generation (from ``source``, else from the whole graph)
    and make it the graph's; returns its name. The previous generation is removed (by
    the install, for a graph built beside its place)."""
    gen = "gen-" + _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S%f")
    path = store.index_root / gen
    TextIndex.remove(path)
    index = TextIndex(path, create=True)
    with tempfile.TemporaryDirectory(prefix=".kg-text-", dir=store.index_root) as tmp:
        if source is None:
            source = _export_graph_text(store, Path(tmp))
        total = sum(pq.read_metadata(f).num_rows for f in source.section_files if Path(f).exists())
        _fill(
            index,
            _batches(source.section_files, ["id", "article", "heading", "text"]),
            _batches(source.title_files, ["title"]),
            progress=progress,
            total=total,
        )
    store.set_meta(indexes=gen)
    store.forget_derived()
    if store.at_home:  # a graph built beside its place leaves the one in place its own
        drop_index_generations(store.home, live=[gen])
    return gen


def _export_graph_text(store: GraphStore, tmp: Path) -> TextSource:
    sections, titles = tmp / "sections.parquet", tmp / "titles.parquet"
    store.export_parquet(
        "MATCH (s:Section) RETURN s.id AS id, s.article AS article, s.heading AS heading, "
        "s.text AS text",
        sections,
    )
    store.export_parquet("MATCH (a:Article) RETURN a.title AS title", titles)
    return TextSource([sections], [titles])


def sync_text_index(store: GraphStore, source: TextSource, *, progress: bool = True) -> None:
    """Add a load's documents to the graph's text index, replacing those of re-loaded
    articles (an index with no generation yet is built whole instead)."""
    index = store.text_index()
    if index is None:
        build_text_index(store, progress=progress)
        return
    total = sum(pq.read_metadata(f).num_rows for f in source.section_files if Path(f).exists())
    _fill(
        index,
        _batches(source.section_files, ["id", "article", "heading", "text"]),
        _batches(source.title_files, ["title"]),
        replace=True,
        removed=source.removed_titles,
        stubbed=source.stubbed_titles,
        progress=progress,
        total=total,
    )
    index.reload()


def finalize_indexes(
    store: GraphStore,
    *,
    text: Callable[[], object] | None = None,
    links: LinkChanges | None = None,
    progress: bool = True,
) -> dict[str, float]:
    """Build what the graph still owes: vector index, text index, PageRank, article and
    link tables (the saved entity linker is the caller's: :mod:`kg_agent.entities.saved`,
    once the writer's buffer pool is gone).

    ``text`` updates the text index for this load (else it is rebuilt from the
    graph when missing); ``links`` says what it did to the links, so that the link
    table is patched rather than rebuilt. Returns seconds per step.
    """
    timings: dict[str, float] = {}

    def step(name: str, fn: Callable[[], object]) -> None:
        t0 = time.perf_counter()
        fn()
        timings[name] = round(time.perf_counter() - t0, 3)

    meta = store.meta()
    if meta.get("embeddings", "complete") == "complete":
        step("vector_index", store.build_vector_index)  # when missing, or stale
    if meta.get("text_stale") == "1" or store.text_index() is None:
        step("text_index", text or (lambda: build_text_index(store, progress=progress)))
        store.set_meta(text_stale="0")
    articles = store.generation_dir() / "articles-export.parquet"
    try:
        step("article_export", lambda: store.export_articles(articles))
        # the link table first: a patch compares the article table it replaces, and
        # PageRank is computed from it (and written into the export)
        step("link_table", lambda: store.write_link_table(links, articles))
        step("pagerank", lambda: store.compute_pagerank(articles))
        step("article_table", lambda: store.write_article_table(articles))
    finally:
        articles.unlink(missing_ok=True)
    store.set_meta(indexes_stale="0", pagerank_done="1")
    return timings

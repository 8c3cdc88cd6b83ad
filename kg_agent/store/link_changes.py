"""Which articles' links an update or a delete changed, and their links now.

What :func:`~kg_agent.store.link_patch.patch_link_table` needs, worked out from what
the update already holds instead of from an export of every link: the staged links of
the articles it wrote, the titles it removed or made stubs, and the graph's article
titles by node offset before and after (the article table's). The articles whose
links changed are:

* the written ones (their links are the staged ones);
* the removed ones, and those whose node now holds another title (a new article or
  stub in a freed offset): they link nowhere now;
* those made stubs (their text, and so their links, went);
* the articles that linked to a removed one (those links went with it), and those
  whose inferred links to a new stub the write deleted (``GraphEdits.make_stubs``
  returns them; the update records them in its result).

Nothing else loses or gains a link in an update (:mod:`kg_agent.store.edits`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from kg_agent.store.article_table import FILE_NAME as ARTICLE_TABLE
from kg_agent.store.article_table import ArticleTable, by_offset
from kg_agent.store.link_patch import _gather, _member, patch_link_table
from kg_agent.store.link_table import FILE_NAME as LINK_TABLE
from kg_agent.store.link_table import LinkTable

__all__ = ["LinkChanges", "changed_links", "patch_from_graph"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class LinkChanges:
    """What one update or delete (the load ``load_id``) did to the links."""

    load_id: str
    #: staged parquet files: the articles written (a ``title`` column) and their links
    #: (``from``, ``to``, ``count``, ``inferred``)
    article_files: Sequence[Path] = ()
    link_files: Sequence[Path] = ()
    removed_titles: Sequence[str] = ()
    stubbed_titles: Sequence[str] = ()
    #: the inferred links the write deleted into new stubs, (source, target) offsets;
    #: None when not recorded (the link table is then rebuilt)
    unlinked: Sequence[Sequence[int]] | None = ()


Edges = tuple[np.ndarray, np.ndarray, np.ndarray]


def changed_links(
    old: LinkTable, old_titles: pa.Array, new_titles: pa.Array, changes: LinkChanges
) -> tuple[np.ndarray, Edges]:
    """The offsets whose links changed, and every link they have now (source, target,
    count). ``old_titles``/``new_titles``: title by node offset (null: no article).
    Raises ValueError when a staged title is not in the graph (the caller rebuilds)."""
    written = _offsets(_column(changes.article_files, "title"), new_titles)
    stubbed = _offsets(pa.array(list(changes.stubbed_titles), pa.string()), new_titles)
    gone = _gone(old_titles, new_titles)
    lost = np.unique(np.concatenate([gone, stubbed]))
    pairs = np.asarray(changes.unlinked or [], dtype=np.int64).reshape(-1, 2)
    linkers = _gather(old._arrays["in_nbr"], old._arrays["in_ptr"], gone[gone < old.nodes])[0]
    changed = np.unique(np.concatenate([written, lost, linkers, pairs[:, 0]]))
    others = np.setdiff1d(changed, np.concatenate([written, lost]))

    # the written articles: their staged links, less inferred ones into a new stub
    links = _links(changes.link_files)
    if len(changes.stubbed_titles) and links.num_rows:
        into_stub = pc.is_in(links.column("to"), value_set=pa.array(changes.stubbed_titles))
        links = links.filter(pc.invert(pc.and_(links.column("inferred"), into_stub)))
    s_written = _offsets(links.column("from"), new_titles)
    d_written = _offsets(links.column("to"), new_titles)
    n_written = np.asarray(links.column("count").fill_null(0).to_numpy(), dtype=np.int64)

    # the articles that linked to a removed one, or by an inferred link to a new stub:
    # their old links less those
    d_old, n_old, s_old = _gather(
        old._arrays["out_nbr"], old._arrays["out_ptr"], others, old._arrays["out_cnt"]
    )
    keep = ~_member(d_old, gone)
    if len(pairs):
        width = max(int(old.nodes), int(pairs.max()) + 1, 1)
        keep &= ~_member(s_old * width + d_old, np.unique(pairs[:, 0] * width + pairs[:, 1]))
    return changed, (
        np.concatenate([s_written, s_old[keep]]),
        np.concatenate([d_written, d_old[keep]]),
        np.concatenate([n_written, n_old[keep]]),
    )


def _column(files: Sequence[Path], name: str) -> pa.Array:
    parts = [
        pq.read_table(f, columns=[name]).column(name).combine_chunks()
        for f in files
        if Path(f).exists()
    ]
    return pa.concat_arrays(parts) if parts else pa.array([], pa.string())


def _links(files: Sequence[Path]) -> pa.Table:
    cols = ["from", "to", "count", "inferred"]
    tables = [pq.read_table(f, columns=cols) for f in files if Path(f).exists()]
    if not tables:
        schema = pa.schema(
            [
                ("from", pa.string()),
                ("to", pa.string()),
                ("count", pa.int64()),
                ("inferred", pa.bool_()),
            ]
        )
        return schema.empty_table()
    return pa.concat_tables(tables).combine_chunks()


def _offsets(titles: pa.Array | pa.ChunkedArray, by_offset: pa.Array) -> np.ndarray:
    """Node offsets of ``titles`` (each must be an article of ``by_offset``)."""
    if not len(titles):
        return np.zeros(0, dtype=np.int64)
    at = pc.index_in(titles, value_set=by_offset)
    if at.null_count:
        missing = pc.filter(titles, pc.is_null(at))[0]
        raise ValueError(f"{missing} is not an article of the graph")
    return np.asarray(at.to_numpy(zero_copy_only=False), dtype=np.int64)


def _gone(old_titles: pa.Array, new_titles: pa.Array) -> np.ndarray:
    """Offsets that held an article before and hold none, or another, now."""
    n = len(old_titles)
    if len(new_titles) >= n:
        now = new_titles.slice(0, n)
    else:
        now = pa.concat_arrays([new_titles, pa.nulls(n - len(new_titles), new_titles.type)])
    differs = pc.fill_null(pc.not_equal(old_titles, now), True)
    mask = pc.and_(pc.is_valid(old_titles), differs)
    return np.flatnonzero(np.asarray(mask.to_numpy(zero_copy_only=False)))


def patch_from_graph(
    gen: Path, changes: LinkChanges, articles: Path, key: str, before: str
) -> int | None:
    """The generation's link table patched for ``changes`` (returns its number of links),
    or None when it must be rebuilt: no table, or tables that are not those of the graph
    before this load (an older graph, a finish cut short between two loads).

    ``articles`` is the graph's ``export_articles``; ``key`` its loads' key now and
    ``before`` the key without this load. A patch that fails is logged and the table
    rebuilt: the update never fails for it."""
    link_path, article_path = gen / LINK_TABLE, gen / ARTICLE_TABLE
    try:
        old = LinkTable(link_path)
        old_articles = ArticleTable(article_path)
    except (OSError, ValueError):
        return None
    if old.key == key:  # patched already, by a finish that was then cut short
        return old.edges
    if changes.unlinked is None:
        return None
    if old.key != before or old_articles.key != before:
        return None
    new_titles = by_offset(articles, ["title"]).column("title").combine_chunks()
    try:
        changed, edges = changed_links(old, old_articles.all_titles(), new_titles, changes)
        return patch_link_table(old, len(new_titles), changed, edges, link_path, key)
    except (ValueError, IndexError, pa.ArrowException) as exc:
        log.warning("the link table could not be patched (%s): rebuilding it", exc)
        return None

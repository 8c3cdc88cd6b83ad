"""Titles and PageRank by node offset: holes, out-of-range offsets, round trip on disk."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from kg_agent.cli import SAMPLE_DUMP
from kg_agent.embedding import Embedder
from kg_agent.ingest.pipeline import LoadOptions, load_source
from kg_agent.ingest.write import existing_titles
from kg_agent.store import GraphStore
from kg_agent.store.article_table import ArticleTable, write_article_table
from kg_agent.store.edits import GraphEdits


def test_offsets_map_to_titles_with_holes(tmp_path: Path) -> None:
    export = tmp_path / "x.parquet"
    pq.write_table(
        pa.table(
            {
                "offset": [3, 0, 1],  # offset 2 was deleted
                "title": ["D", "A", "B"],
                "is_stub": [False, False, True],
                "pagerank": [0.5, 0.25, 0.0],
            }
        ),
        export,
    )
    target = tmp_path / "articles.arrow"
    assert write_article_table(export, target) == 3
    table = ArticleTable(target)
    assert table.size == 4
    assert table.titles([0, 1, 2, 3, 4, -1]) == ["A", "B", None, "D", None, None]
    assert table.pageranks([3, 0]) == [0.5, 0.25]


def test_present_finds_the_titles_it_holds_and_no_hole(tmp_path: Path) -> None:
    export = tmp_path / "x.parquet"
    pq.write_table(
        pa.table(
            {
                "offset": [2, 0],  # offset 1 was deleted: its null is no title
                "title": ["Zürich", "A"],
                "is_stub": [True, False],
                "pagerank": [0.1, 0.2],
            }
        ),
        export,
    )
    write_article_table(export, tmp_path / "articles.arrow")
    table = ArticleTable(tmp_path / "articles.arrow")
    assert table.present(["A", "Zürich", "B", "a", ""]) == {"A", "Zürich"}
    assert table.present([]) == set()


def test_the_writes_title_checks_answer_from_the_table_as_kuzu_does(tmp_path: Path) -> None:
    """A write looks up which titles the graph holds (the edges' targets, the articles it
    replaces) in the article table of the graph before it, not with Kùzu's statements,
    which scan the Article table: the same answer, articles and stubs alike."""
    db = tmp_path / "g.kuzu"
    load_source(
        SAMPLE_DUMP, db, embedder=Embedder(), options=LoadOptions(progress=False, embeddings="none")
    )
    with GraphStore.open(db, read_only=True) as store:
        table = store.article_table_before("a-load-being-written")
        assert table is not None
        rows = store.query("MATCH (a:Article) RETURN a.title AS t, a.is_stub AS s ORDER BY t")
        stubs = [r["t"] for r in rows if r["s"]][:20]
        articles = [r["t"] for r in rows if not r["s"]][:20]
        asked = [*stubs, *articles, "No Such Article", "charles babbage", "Babbage"]
        assert stubs and articles
        found = existing_titles(store, asked, table)
        assert found == existing_titles(store, asked) == {*stubs, *articles}
        # the stubs the articles link to: from the article and link tables, as from Kùzu
        every = [r["t"] for r in rows if not r["s"]]
        edits = GraphEdits(store)
        assert store.link_table() is not None
        linked = edits.stubs_linked_from([*every, "No Such Article", *stubs[:3]], table)
        assert linked == edits.stubs_linked_from([*every, "No Such Article", *stubs[:3]])
        assert len(linked) > 10 and linked <= set(r["t"] for r in rows if r["s"])

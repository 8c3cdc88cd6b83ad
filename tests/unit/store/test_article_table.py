"""Titles and PageRank by node offset: holes, out-of-range offsets, round trip on disk."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from kg_agent.store.article_table import ArticleTable, write_article_table


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

"""Which rows of a rewritten article stay in the graph, and what is copied instead."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from kg_agent.ingest.prepare import SECTION_SCHEMA
from kg_agent.ingest.replace import StagedRows, Unchanged
from kg_agent.ingest.resolve import EDGE_SCHEMA
from kg_agent.store.edits import SECTION_FIELDS, ArticleContent


def _section(sid: str, text_hash: str, ordinal: int = 0) -> dict[str, Any]:
    article = sid.split("::")[0]
    return {
        "id": sid,
        "article": article,
        "heading": "",
        "heading_path": "",
        "level": 0,
        "ordinal": ordinal,
        "part": 0,
        "text": f"text of {sid}",
        "word_count": 3,
        "text_hash": text_hash,
    }


def _stage(tmp: Path) -> dict[str, list[Path]]:
    """Ada's newer rows (one section edited, one link new, one changed) and Byron's."""
    rows = {
        "sections": pa.Table.from_pylist(
            [
                _section("Ada::0000", "same"),
                _section("Ada::0001", "edited", 1),
                _section("Ada::0002", "same", 2),
                _section("Byron::0000", "new"),
            ],
            schema=SECTION_SCHEMA,
        ),
        "mentions": pa.Table.from_pylist(
            [
                {"from": "Ada::0000", "to": "Babbage", "count": 1, "inferred": False},
                {"from": "Ada::0001", "to": "Byron", "count": 1, "inferred": False},
                {"from": "Ada::0002", "to": "Byron", "count": 2, "inferred": False},
                {"from": "Byron::0000", "to": "Ada", "count": 1, "inferred": False},
            ],
            schema=EDGE_SCHEMA,
        ),
        "links_to": pa.Table.from_pylist(
            [
                {"from": "Ada", "to": "Babbage", "count": 1, "inferred": False},
                {"from": "Ada", "to": "Byron", "count": 3, "inferred": False},
                {"from": "Ada", "to": "Milbanke", "count": 1, "inferred": False},
                {"from": "Byron", "to": "Ada", "count": 1, "inferred": False},
            ],
            schema=EDGE_SCHEMA,
        ),
        "in_category": pa.Table.from_pylist(
            [{"from": "Ada", "to": "Mathematicians"}, {"from": "Byron", "to": "Poets"}],
            schema=pa.schema([("from", pa.string()), ("to", pa.string())]),
        ),
    }
    rows["has_section"] = pa.table(
        {"from": rows["sections"]["article"], "to": rows["sections"]["id"]}
    )
    out = {}
    for kind, table in rows.items():
        pq.write_table(table, tmp / f"{kind}.parquet")
        out[kind] = [tmp / f"{kind}.parquet"]
    return out


def _graph() -> ArticleContent:
    """Ada as the graph holds her: the old text of section 1, one mention fewer in
    section 2, a link counted twice where it is now thrice, a category since dropped."""
    g = ArticleContent()
    for sid, h, o in (("Ada::0000", "same", 0), ("Ada::0001", "old", 1), ("Ada::0002", "same", 2)):
        row = _section(sid, h, o)
        g.sections[sid] = tuple(row[f] for f in SECTION_FIELDS)
    g.mentions = {
        "Ada::0000": [("Babbage", 1, False)],
        "Ada::0001": [],
        "Ada::0002": [("Byron", 1, False)],
    }
    g.links = {("Ada", "Babbage"): (1, False), ("Ada", "Byron"): (2, False)}
    g.categories = {("Ada", "Mathematicians"), ("Ada", "Computing")}
    return g


def test_only_rows_that_are_the_same_in_every_field_stay(tmp_path: Path) -> None:
    files = _stage(tmp_path)
    staged = StagedRows(files, ["Ada"])
    unchanged = Unchanged()
    gone = unchanged.add(_graph(), staged.content(["Ada"]))
    # section 1's text changed; section 2's text did not, but its mentions did
    assert set(gone.sections) == {"Ada::0001", "Ada::0002"}
    assert set(gone.links) == {("Ada", "Byron")}  # its count changed
    assert gone.categories == {("Ada", "Computing")}
    # what stays: section 0 and its mention, one link, one category edge
    assert unchanged.rows == 4

    def copied(kind: str) -> list[dict[str, Any]]:
        path = unchanged.new_rows(kind, files[kind][0], tmp_path)
        return [] if path is None else pq.read_table(path).to_pylist()

    assert [r["id"] for r in copied("sections")] == ["Ada::0001", "Ada::0002", "Byron::0000"]
    assert [r["to"] for r in copied("has_section")] == ["Ada::0001", "Ada::0002", "Byron::0000"]
    assert [r["from"] for r in copied("mentions")] == ["Ada::0001", "Ada::0002", "Byron::0000"]
    links = [(r["from"], r["to"], r["count"]) for r in copied("links_to")]
    assert links == [("Ada", "Byron", 3), ("Ada", "Milbanke", 1), ("Byron", "Ada", 1)]
    cats = [(r["from"], r["to"]) for r in copied("in_category")]
    assert cats == [("Byron", "Poets")]  # Ada's is in the graph already


def test_more_kept_keys_than_a_file_has_rows_filter_it_the_same(tmp_path: Path) -> None:
    files = _stage(tmp_path)
    unchanged = Unchanged()
    unchanged.add(_graph(), StagedRows(files, ["Ada"]).content(["Ada"]))
    # another article, unchanged in every row: its 40 kept keys outnumber the file's rows
    other = ArticleContent()
    for i in range(40):
        row = _section(f"Zed::{i:04d}", "same", i)
        other.sections[row["id"]] = tuple(row[f] for f in SECTION_FIELDS)
        other.mentions[row["id"]] = []
    unchanged.add(other, other)
    assert len(unchanged._keys("sections")) > pq.read_metadata(files["sections"][0]).num_rows
    path = unchanged.new_rows("sections", files["sections"][0], tmp_path)
    assert path is not None
    assert [r["id"] for r in pq.read_table(path).to_pylist()] == [
        "Ada::0001",
        "Ada::0002",
        "Byron::0000",
    ]


def test_nothing_stays_for_an_article_the_graph_holds_no_rows_of(tmp_path: Path) -> None:
    files = _stage(tmp_path)
    unchanged = Unchanged()
    gone = unchanged.add(ArticleContent(), StagedRows(files, ["Ada"]).content(["Ada"]))
    assert not (gone.sections or gone.links or gone.categories)
    assert unchanged.rows == 0
    # the stage's files are copied as they are
    assert all(unchanged.new_rows(k, p[0], tmp_path) == p[0] for k, p in files.items())


def test_no_staged_files_reads_as_no_rows() -> None:
    content = StagedRows({}, ["Ada"]).content(["Ada"])
    assert content == ArticleContent()

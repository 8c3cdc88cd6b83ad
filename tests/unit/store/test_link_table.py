"""Links by node offset: strongest first, both directions, built in bounded passes."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kg_agent.store import link_table
from kg_agent.store.link_table import LinkTable, write_link_table


def _export(path: Path, edges: list[tuple[int, int, int | None]]) -> Path:
    s, d, n = zip(*edges, strict=True) if edges else ((), (), ())
    pq.write_table(
        pa.table(
            {
                "s": pa.array(s, pa.int64()),
                "d": pa.array(d, pa.int64()),
                "n": pa.array(n, pa.int64()),
            }
        ),
        path,
        row_group_size=50,
    )
    return path


@pytest.mark.parametrize("range_edges", [7, 8_000_000], ids=["many-passes", "one-pass"])
def test_neighbours_equal_a_sort_of_the_links(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, range_edges: int
) -> None:
    monkeypatch.setattr(link_table, "_RANGE_EDGES", range_edges)
    monkeypatch.setattr(link_table, "_BATCH", 37)  # export read in several batches
    rng = random.Random(3)
    nodes = 60  # the last few have no links at all
    edges = [(rng.randrange(50), rng.randrange(50), rng.randrange(6)) for _ in range(400)]
    edges = list({(s, d): (s, d, n) for s, d, n in edges}.values())
    target = tmp_path / "links.bin"
    assert write_link_table(_export(tmp_path / "x.parquet", edges), nodes, target, "k1") == len(
        edges
    )
    table = LinkTable(target)
    assert (table.key, table.nodes, table.edges) == ("k1", nodes, len(edges))
    for node in range(nodes):
        out = sorted(((d, n) for s, d, n in edges if s == node), key=lambda e: (-e[1], e[0]))
        inc = sorted(((s, n) for s, d, n in edges if d == node), key=lambda e: (-e[1], e[0]))
        assert table.neighbours(node, incoming=False, k=1000) == out
        assert table.neighbours(node, incoming=True, k=1000) == inc
        assert table.neighbours(node, incoming=False, k=2) == out[:2]
    assert table.neighbours(nodes, incoming=False, k=5) == []
    assert table.neighbours(-1, incoming=True, k=5) == []
    assert table.neighbours(0, incoming=True, k=0) == []


def test_null_counts_and_an_empty_graph(tmp_path: Path) -> None:
    target = tmp_path / "links.bin"
    write_link_table(_export(tmp_path / "x.parquet", [(0, 1, None), (0, 2, 3)]), 3, target, "k")
    assert LinkTable(target).neighbours(0, incoming=False, k=5) == [(2, 3), (1, 0)]
    empty = tmp_path / "empty.bin"
    assert write_link_table(_export(tmp_path / "e.parquet", []), 0, empty, "k") == 0
    assert LinkTable(empty).neighbours(0, incoming=False, k=5) == []


def test_a_file_of_another_kind_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "links.bin"
    bad.write_bytes(b'{"magic": "something else"}'.ljust(4096, b" "))
    with pytest.raises(ValueError, match="not a link table"):
        LinkTable(bad)


@pytest.mark.parametrize(
    ("n_nodes", "max_count"),
    [(1, 1), (5_000, 7), (7_000_000, 300), (2**31 - 1, 2**31 - 1)],
    ids=["one-node", "small", "english-wikipedia", "too-wide-for-one-int64"],
)
def test_one_packed_sort_orders_as_lexsort(n_nodes: int, max_count: int) -> None:
    """The packed int64 sort (and the lexsort kept for numbers too wide to pack) give
    the order of a three-column sort: key, count descending, neighbour."""
    rng = np.random.default_rng(5)
    n_keys = min(n_nodes, 1_000)
    k = rng.integers(0, n_keys, 5_000).astype(np.int32)
    o = rng.integers(0, n_nodes, 5_000).astype(np.int32)
    c = rng.integers(0, max_count, 5_000, endpoint=True).astype(np.int32)
    order = np.lexsort((o, -c.astype(np.int64), k))
    nbr, cnt = link_table._sorted(k, o, c, n_keys, n_nodes)
    assert nbr.dtype == cnt.dtype == np.int32
    assert np.array_equal(nbr, o[order]) and np.array_equal(cnt, c[order])

"""PageRank over the link table: the algorithm Kùzu's ``page_rank`` runs, in bounded ranges."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kg_agent.store import pagerank
from kg_agent.store.link_table import LinkTable, write_link_table
from kg_agent.store.pagerank import page_rank


def _table(tmp_path: Path, nodes: int, edges: list[tuple[int, int]]) -> LinkTable:
    s, d = zip(*edges, strict=True)
    export = tmp_path / "links.parquet"
    pq.write_table(
        pa.table(
            {
                "s": pa.array(s, pa.int64()),
                "d": pa.array(d, pa.int64()),
                "n": pa.array([1 + (a + b) % 3 for a, b in edges], pa.int64()),
            }
        ),
        export,
    )
    write_link_table(export, nodes, tmp_path / "links.bin", "k")
    return LinkTable(tmp_path / "links.bin")


def _dense(nodes: int, edges: list[tuple[int, int]], ranked: np.ndarray, iters: int) -> np.ndarray:
    """The same iteration written plainly over a dense matrix (the reference)."""
    kept = [(a, b) for a, b in edges if ranked[a] and ranked[b]]
    m = np.zeros((nodes, nodes))
    for a, b in kept:
        m[b, a] += 1.0
    deg = m.sum(0)
    n = int(ranked.sum())
    p = np.where(ranked, 1.0 / n, 0.0)
    for _ in range(1, iters):
        share = np.divide(p, deg, out=np.zeros(nodes), where=deg > 0)
        nxt = np.where(ranked, 0.85 * (m @ share) + 0.15 / n, 0.0)
        done = np.abs(nxt - p).sum() < 1e-7
        p = nxt
        if done:
            break
    return p


@pytest.mark.parametrize("range_links", [5, 1 << 22], ids=["many-ranges", "one-range"])
def test_ranks_equal_a_dense_computation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, range_links: int
) -> None:
    monkeypatch.setattr(pagerank, "_RANGE", range_links)
    rng = random.Random(5)
    nodes = 40  # the last have no links; some are stubs, whose links do not count
    edges = sorted({(rng.randrange(34), rng.randrange(34)) for _ in range(150)})
    ranked = np.array([i % 7 != 3 for i in range(nodes)])
    got = page_rank(_table(tmp_path, nodes, edges), ranked)
    want = _dense(nodes, edges, ranked, 20)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)
    assert got[~ranked].max() == 0.0
    assert got[ranked].min() == pytest.approx(0.15 / ranked.sum())  # nothing links to it
    # a dangling article's rank is not passed on: the ranks sum to less than one
    assert 0.5 < got.sum() < 1.0


def test_a_cycle_ranks_evenly_and_iterations_stop_at_the_tolerance(tmp_path: Path) -> None:
    table = _table(tmp_path, 3, [(0, 1), (1, 2), (2, 0)])
    ranks = page_rank(table, np.ones(3, bool))
    np.testing.assert_allclose(ranks, [1 / 3] * 3, atol=1e-15)


def test_ranked_must_cover_the_table(tmp_path: Path) -> None:
    table = _table(tmp_path, 3, [(0, 1)])
    with pytest.raises(ValueError, match="ranked has 2 nodes"):
        page_rank(table, np.ones(2, bool))
    assert not page_rank(table, np.zeros(3, bool)).any()

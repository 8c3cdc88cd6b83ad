"""PageRank without the ``algo`` extension equals Kùzu's ``page_rank`` on real dumps.

The load computes ranks from the link table (:mod:`kg_agent.store.pagerank`); here
Kùzu 0.11.3's own ``page_rank`` runs over a copy of the loaded graph (a projected graph
needs a read-write database) and every article's rank must agree to 6 decimals (in fact
to ~1e-15: the same sums in another order).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import kuzu
import pytest

from kg_agent.ingest.pipeline import LoadReport
from kg_agent.store import GraphStore

Graph = tuple[Path, LoadReport]
Opener = Callable[[Path], GraphStore]


def _kuzu_ranks(db: Path, tmp: Path) -> dict[str, float]:
    copy = tmp / "copy.kuzu"
    shutil.copy(db, copy)
    database = kuzu.Database(str(copy))
    conn = kuzu.Connection(database)
    try:
        conn.execute("CALL PROJECT_GRAPH('ranked', {'Article': 'n.is_stub = false'}, ['LINKS_TO'])")
        res = conn.execute("CALL page_rank('ranked') RETURN node.title, rank")
        out: dict[str, float] = {}
        while res.has_next():
            title, rank = res.get_next()
            out[str(title)] = float(rank)
        return out
    finally:
        conn.close()
        database.close()


@pytest.mark.parametrize("graph", ["enwiki_graph", "latgalian_graph"])
def test_ranks_equal_kuzus_page_rank(
    graph: str, request: pytest.FixtureRequest, open_store: Opener, tmp_path: Path
) -> None:
    db, _ = request.getfixturevalue(graph)
    want = _kuzu_ranks(db, tmp_path)
    store = open_store(db)
    rows = store.query("MATCH (a:Article) RETURN a.title AS t, a.is_stub AS s, a.pagerank AS p")
    got = {r["t"]: r["p"] for r in rows if not r["s"]}
    assert len(want) > 100 and set(got) == set(want)
    worst = max(abs(got[t] - want[t]) for t in want)
    assert worst < 1e-6 * max(want.values()), worst
    assert all(r["p"] == 0.0 for r in rows if r["s"])  # stubs are not ranked
    # the article table (what the reranker reads) holds the same ranks
    table = store.article_table()
    assert table is not None
    offsets = store.query(
        "MATCH (a:Article) WHERE a.is_stub = false RETURN offset(id(a)) AS o, a.title AS t"
    )
    ranks = table.pageranks([r["o"] for r in offsets])
    assert max(abs(p - got[r["t"]]) for p, r in zip(ranks, offsets, strict=True)) < 1e-12

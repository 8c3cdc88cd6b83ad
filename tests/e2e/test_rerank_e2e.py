"""Graph reranker on the shipped sample graph: link structure a person can check in the dump."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kg_agent.cli import SAMPLE_DUMP
from kg_agent.ingest.pipeline import LoadOptions, LoadReport, load_source
from kg_agent.retrieval.base import Evidence
from kg_agent.retrieval.rerank import GraphReranker, RerankWeights
from kg_agent.store import GraphStore
from kg_agent.store.link_table import FILE_NAME, write_link_table

Opener = Callable[[Path], GraphStore]


@pytest.fixture
def store(sample_graph: tuple[Path, LoadReport], open_store: Any) -> GraphStore:
    opener: Opener = open_store
    return opener(sample_graph[0])


def _lead(store: GraphStore, title: str, similarity: float) -> Evidence:
    s = store.article_sections(title)[0]
    return Evidence(
        section_id=s["id"],
        title=title,
        heading=s["heading"],
        heading_path=s["heading_path"],
        content=s["text"],
        similarity=similarity,
    )


def test_store_reads_for_the_reranker(store: GraphStore) -> None:
    rows = store.link_neighbourhood(["Analytical Engine"], limit=1000)
    assert rows and all(a == "Analytical Engine" for a, _, _ in rows)
    assert "Charles Babbage" in {b for _, b, _ in rows}
    counts = [n for _, _, n in rows]
    assert counts == sorted(counts, reverse=True)
    # An edge between two of the titles comes once; COBOL is linked to neither.
    both = store.link_neighbourhood(["Analytical Engine", "Charles Babbage", "COBOL"], limit=1000)
    pairs = [frozenset((a, b)) for a, b, _ in both]
    ae_cb = frozenset(("Analytical Engine", "Charles Babbage"))
    n_links = sum(
        1
        for a, b in (
            ("Analytical Engine", "Charles Babbage"),
            ("Charles Babbage", "Analytical Engine"),
        )
        if b in {t for t, _ in store.outgoing_links(a)}
    )
    assert pairs.count(ae_cb) == n_links >= 1
    assert not any({"COBOL"} < p and p & {"Analytical Engine", "Charles Babbage"} for p in pairs)
    assert len(store.link_neighbourhood(["Analytical Engine"], limit=1)) == 1  # the row guard
    lo, hi = store.pagerank_bounds()
    assert 0 < lo < hi
    pr = store.article_pageranks(["Charles Babbage", "No such article"])
    assert set(pr) == {"Charles Babbage"} and lo <= pr["Charles Babbage"] <= hi
    assert store.link_neighbourhood([], limit=10) == []


def test_ppr_from_analytical_engine_favours_babbage_over_cobol(store: GraphStore) -> None:
    ppr = GraphReranker(store).personalized({"Analytical Engine": 1.0})
    assert ppr["Analytical Engine"] == max(ppr.values())
    assert ppr["Charles Babbage"] > ppr.get("COBOL", 0.0)
    assert sum(ppr.values()) == pytest.approx(1.0)


def test_rerank_lifts_the_linked_candidate(store: GraphStore) -> None:
    # COBOL and Charles Babbage tie on retrieval; only Babbage is linked to the top hit.
    evidence = [
        _lead(store, "Analytical Engine", 0.9),
        _lead(store, "COBOL", 0.6),
        _lead(store, "Charles Babbage", 0.6),
    ]
    out = GraphReranker(store, weights=RerankWeights(1.0, 0.0, 1.0)).rerank(evidence)
    titles = [e.title for e in out]
    assert titles.index("Charles Babbage") < titles.index("COBOL")
    assert out[0].title == "Analytical Engine"
    babbage = next(e for e in out if e.title == "Charles Babbage")
    assert babbage.scores["pagerank"] > 0 and 0 < babbage.scores["pagerank_norm"] <= 1
    # Global PageRank alone: Babbage is the most linked page in the sample.
    by_pr = GraphReranker(store, weights=RerankWeights(0.0, 1.0, 0.0)).rerank(evidence)
    assert by_pr[0].title == "Charles Babbage"


def test_the_link_table_reads_what_kuzu_reads(
    store: GraphStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The load wrote a link table; where no cap binds it gives Kùzu's rows exactly."""
    assert store.link_table() is not None
    titles = [t for t, _ in store.outgoing_links("Charles Babbage")] + ["Charles Babbage", "COBOL"]
    assert len(titles) > 5
    from_table = store.link_neighbourhood(titles, limit=100_000)
    capped = store.link_neighbourhood(["Charles Babbage"], limit=100_000, per_title=2)
    monkeypatch.setattr(store, "link_table", lambda: None)
    from_kuzu = store.link_neighbourhood(titles, limit=100_000)
    assert from_table == from_kuzu and len(from_table) > 20
    # Capped, the table keeps each direction's strongest links (Kùzu: its scan order).
    everything = store.link_neighbourhood(["Charles Babbage"], limit=100_000)
    assert len(capped) <= 4 and capped[0][2] == everything[0][2] == max(n for *_, n in everything)


def test_a_link_table_older_than_the_graph_is_not_read(tmp_path: Path) -> None:
    db = tmp_path / "g.kuzu"
    load_source(SAMPLE_DUMP, db, options=LoadOptions(progress=False, embeddings="none"))
    with GraphStore.open(db) as store:
        fresh = store.link_table()
        assert (
            fresh is not None
            and fresh.edges
            == store.query("MATCH (:Article)-[r:LINKS_TO]->(:Article) RETURN count(r) AS n")[0]["n"]
        )
        gen = store.generation_path()
        assert gen is not None
        export = tmp_path / "none.parquet"
        pq.write_table(
            pa.table(
                {
                    "s": pa.array([], pa.int64()),
                    "d": pa.array([], pa.int64()),
                    "n": pa.array([], pa.int64()),
                }
            ),
            export,
        )
        write_link_table(export, 1, gen / FILE_NAME, "the key of other loads")
    with GraphStore.open(db) as store:
        assert store.link_table() is None  # stale: the reranker reads Kùzu instead
        assert store.link_neighbourhood(["Charles Babbage"], limit=1000)

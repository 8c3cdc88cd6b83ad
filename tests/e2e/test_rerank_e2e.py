"""Graph reranker on the shipped sample graph: link structure a person can check in the dump."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kg_agent.ingest.pipeline import LoadReport
from kg_agent.retrieval.base import Evidence
from kg_agent.retrieval.rerank import GraphReranker, RerankWeights
from kg_agent.store import GraphStore

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

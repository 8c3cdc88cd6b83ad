"""Every retriever on the in-memory graph: dense, BM25, hybrid (RRF), entity graph,
multi-query; the Kùzu-backed runs of the same classes are in tests/e2e."""

from __future__ import annotations

import pytest

from kg_agent.embedding import Embedder
from kg_agent.entities import EntityResolver
from kg_agent.exceptions import InvalidArgumentError, SchemaMismatchError
from kg_agent.retrieval.base import Evidence, RetrievalResult, Retriever, evidence_tier
from kg_agent.retrieval.graph_walk import EntityGraphRetriever, graph_neighbours
from kg_agent.retrieval.hybrid import HybridRetriever, reciprocal_rank_fusion
from kg_agent.retrieval.keyword import KeywordRetriever
from kg_agent.retrieval.multi_query import MultiQueryRetriever, offline_variants
from kg_agent.retrieval.semantic import SemanticRetriever
from tests.support.memory_graph import MemoryGraph
from tests.unit.conftest import world_articles

TWO_HOP = "Who is the mother of the director of Polish-Russian War?"


def _ev(sid: str, sim: float = 0.5, source: str = "semantic") -> Evidence:
    title = sid.split("::")[0]
    return Evidence(sid, title, "", title, "text", sim, score=sim, source=source)


class _Fixed(Retriever):
    """A retriever that returns a fixed ranking (for the fusion's arithmetic)."""

    def __init__(self, items: list[Evidence]) -> None:
        self.items = items

    def search(self, query: str, top_k: int = 10) -> RetrievalResult:
        return RetrievalResult(query, list(self.items[:top_k]), timings={"search": 0.001})


# ---------------------------------------------------------------- reciprocal rank fusion


def test_rrf_rewards_agreement_over_one_first_place() -> None:
    dense = [_ev("A::0000", 0.9), _ev("B::0000", 0.8), _ev("C::0000", 0.7)]
    bm25 = [_ev("C::0000", 1.0, "bm25"), _ev("B::0000", 0.6, "bm25")]
    fused = reciprocal_rank_fusion([dense, bm25])
    assert [e.section_id for e in fused] == ["C::0000", "B::0000", "A::0000"]
    c = fused[0]
    assert c.score == pytest.approx(1 / 63 + 1 / 61)
    assert c.scores["rrf"] == c.score and c.source == "hybrid"
    assert c.similarity == 1.0  # the best similarity any list gave it


def test_rrf_weights_and_ties() -> None:
    a, b = [_ev("A::0000")], [_ev("B::0000")]
    assert [e.title for e in reciprocal_rank_fusion([a, b])] == ["A", "B"]  # first seen
    assert [e.title for e in reciprocal_rank_fusion([a, b], weights=[1, 2])] == ["B", "A"]
    muted = reciprocal_rank_fusion([b, a], weights=[0, 1])
    assert [(e.title, e.score) for e in muted] == [("A", 1 / 61), ("B", 0.0)]
    with pytest.raises(InvalidArgumentError):
        reciprocal_rank_fusion([a, b], weights=[1.0])


def test_hybrid_asks_both_for_depth_and_cuts_to_top_k() -> None:
    dense = _Fixed([_ev(f"D{i}::0000", 1 - i / 10) for i in range(6)])
    bm25 = _Fixed([_ev("D5::0000", 1.0, "bm25"), _ev("K::0000", 0.9, "bm25")])
    out = HybridRetriever(dense, bm25, depth=6).search("q", top_k=3)
    # D5: 1/66 + 1/61 beats D0's 1/61; K and D1 tie at 1/62, the dense list came first
    assert [e.title for e in out.evidence] == ["D5", "D0", "D1"]
    assert out.timings["search"] > 0
    with pytest.raises(InvalidArgumentError):
        HybridRetriever(dense, bm25, dense_weight=0, keyword_weight=0)


# ---------------------------------------------------------------- dense and BM25


def test_dense_exact_and_index_agree(world: MemoryGraph, embedder: Embedder) -> None:
    exact = SemanticRetriever(world, embedder, mode="exact").search("Zen Buddhism teacher", 3)
    index = SemanticRetriever(world, embedder, mode="index").search("Zen Buddhism teacher", 3)
    assert [e.section_id for e in exact.evidence] == [e.section_id for e in index.evidence]
    assert exact.evidence[0].title == "Małgorzata Braunek"
    sims = [e.similarity for e in exact.evidence]
    assert sims == sorted(sims, reverse=True)
    assert [round(s, 5) for s in sims] == [round(e.similarity, 5) for e in index.evidence]


def test_dense_refuses_another_model(world: MemoryGraph, embedder: Embedder) -> None:
    other = MemoryGraph(world_articles(), embed=embedder.embed, model="some/other-model")
    with pytest.raises(SchemaMismatchError, match="--force"):
        SemanticRetriever(other, embedder)


def test_dense_is_off_without_vectors(world_no_vectors: MemoryGraph, embedder: Embedder) -> None:
    dense = SemanticRetriever(world_no_vectors, embedder)
    out = dense.search("Zen Buddhism", 5)
    assert not dense.enabled and out.evidence == [] and "kg-agent embed" in out.notes[0]


def test_bm25_normalises_to_the_best_hit(world: MemoryGraph) -> None:
    out = KeywordRetriever(world).search("Zen Buddhism Warsaw", 3)
    assert out.evidence[0].title == "Małgorzata Braunek"
    assert out.evidence[0].similarity == 1.0 and out.evidence[0].scores["bm25"] > 1.0
    assert all(0 < e.similarity <= 1 for e in out.evidence)


def test_bm25_without_a_text_index_says_what_fixes_it() -> None:
    graph = MemoryGraph(world_articles(), text_index=False)
    out = KeywordRetriever(graph).search("Zen", 3)
    assert out.evidence == [] and "kg-agent reindex --db memory-graph" in out.notes[0]


# ---------------------------------------------------------------- entity graph


def _graph_retriever(store: MemoryGraph, embedder: Embedder) -> EntityGraphRetriever:
    dense = SemanticRetriever(store, embedder)
    base = HybridRetriever(dense, KeywordRetriever(store), depth=10)
    return EntityGraphRetriever(store, dense, base, depth=10)


def test_graph_neighbours_are_undirected_and_strongest_first(world: MemoryGraph) -> None:
    # the film links to its director twice, to the writer once; the director links back
    assert graph_neighbours(world, ["Polish-Russian War (film)"], limit=50) == [
        "Xawery Żuławski",
        "Dorota Masłowska",
    ]
    assert graph_neighbours(world, ["Małgorzata Braunek"], limit=50) == ["Xawery Żuławski"]


def test_entity_tier_then_neighbours_then_the_base(world: MemoryGraph, embedder: Embedder) -> None:
    out = _graph_retriever(world, embedder).search(TWO_HOP, top_k=6)
    ev = out.evidence
    assert ev[0].title == "Polish-Russian War (film)" and ev[0].source == "entity"
    tiers = [evidence_tier(e) for e in ev]
    assert tiers == sorted(tiers, reverse=True)  # tiers never interleave
    graph_found = {e.title for e in ev if e.source == "graph"}
    assert {"Xawery Żuławski", "Dorota Masłowska"} <= graph_found
    scores = [e.score for e in ev]
    assert scores == sorted(scores, reverse=True)
    # the distractor is closer to the question than the bridge, yet ranks after it
    war = next(e for e in ev if e.title == "War film")
    bridge = next(e for e in ev if e.title == "Xawery Żuławski")
    assert war.similarity > bridge.similarity and ev.index(war) > ev.index(bridge)
    assert any("entities: ['Polish-Russian War (film)']" in n for n in out.notes)


def test_entity_graph_without_vectors_ranks_by_bm25_and_reads_leads(
    world_no_vectors: MemoryGraph, embedder: Embedder
) -> None:
    out = _graph_retriever(world_no_vectors, embedder).search(TWO_HOP, top_k=4)
    assert out.evidence[0].title == "Polish-Russian War (film)"
    assert all(e.content for e in out.evidence)  # every lead left unread was read
    assert all("unread" not in e.scores for e in out.evidence)
    assert {e.title for e in out.evidence[1:3]} == {"Xawery Żuławski", "Dorota Masłowska"}


def test_without_vectors_the_walk_reads_only_the_sections_that_make_the_cut(
    world_no_vectors: MemoryGraph, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    retriever = _graph_retriever(world_no_vectors, embedder)
    titles = [a.title for a in world_articles()]
    # unread, each article's best section is the one the reading scoring finds (an
    # article with no section at all keeps an unread lead, dropped when read)
    lazy = retriever.score_titles(TWO_HOP, titles, lazy=True)
    eager = retriever.score_titles(TWO_HOP, titles)
    assert {t: (e.section_id, e.similarity) for t, e in lazy.items() if t in eager} == {
        t: (e.section_id, e.similarity) for t, e in eager.items()
    }
    assert [lazy[t].section_id for t in lazy if t not in eager] == ["Szamotuły::0000"]
    assert not any(e.content for e in lazy.values()) and all(e.content for e in eager.values())
    read: list[str] = []
    real = world_no_vectors.sections_by_ids
    monkeypatch.setattr(
        world_no_vectors, "sections_by_ids", lambda ids: read.extend(ids) or real(ids)
    )
    out = retriever.search(TWO_HOP, top_k=2)
    assert len(out.evidence) == 2 and all(e.content for e in out.evidence)
    assert 0 < len(read) <= 2 and set(read) <= {e.section_id for e in out.evidence}


def test_ambiguous_entities_are_ranked_by_similarity(
    world: MemoryGraph, embedder: Embedder
) -> None:
    out = _graph_retriever(world, embedder).search("Which Dark River is about a farm?", 2)
    assert [e.title for e in out.evidence] == ["Dark River (film)", "Dark River (novel)"]
    assert {e.source for e in out.evidence} == {"entity"}


# ---------------------------------------------------------------- multi-query


def test_offline_variants_name_resolved_titles(world: MemoryGraph) -> None:
    resolver = EntityResolver(world)
    variants = offline_variants(
        "Who directed the film of Masłowska's novel?", resolver.similar_titles
    )
    assert variants[0] == "directed film Masłowska's novel"
    assert "Dorota Masłowska" in variants[1]


def test_multi_query_keeps_one_best_section_per_article_first(
    world: MemoryGraph, embedder: Embedder
) -> None:
    dense = SemanticRetriever(world, embedder)
    mq = MultiQueryRetriever(dense, resolve_entities=EntityResolver(world).similar_titles)
    out = mq.search("Who directed the film of Masłowska's novel?", top_k=6)
    titles = [e.title for e in out.evidence]
    assert "Dorota Masłowska" in titles[:3]
    head = titles[: len(set(titles))]
    assert len(head) == len(set(head))
    assert out.warnings == []


def test_multi_query_wraps_the_graph_retriever_and_keeps_its_tiers(
    world: MemoryGraph, embedder: Embedder
) -> None:
    graph = _graph_retriever(world, embedder)
    mq = MultiQueryRetriever(graph, resolve_entities=EntityResolver(world).similar_titles)
    assert mq.merge_by == "score"  # the graph's tiers live in its scores, not similarities
    out = mq.search(TWO_HOP, top_k=6)
    head = out.evidence[: len({e.title for e in out.evidence})]
    assert head[0].title == "Polish-Russian War (film)" and head[0].source == "entity"
    tiers = [evidence_tier(e) for e in head]
    assert tiers == sorted(tiers, reverse=True)  # the merge keeps the tier order
    assert out.trace[-1]["stage"] == "multi_query" and len(out.trace[-1]["queries"]) >= 2
    # the question's own search is the graph retriever's: entities and neighbours first
    assert {"Xawery Żuławski", "Dorota Masłowska"} <= {e.title for e in head}
    # by similarity instead (the dense merge), a near distractor could pass the bridge
    dense_merge = MultiQueryRetriever(
        SemanticRetriever(world, embedder), resolve_entities=EntityResolver(world).similar_titles
    )
    assert dense_merge.merge_by == "similarity"

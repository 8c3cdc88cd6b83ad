"""The stages after retrieval: quality filter, graph rerank, tier order, top k."""

from __future__ import annotations

import dataclasses

from kg_agent.language.question import Question
from kg_agent.retrieval.base import GRAPH_TIERS, Evidence, RetrievalResult, is_graph_found
from kg_agent.retrieval.rerank import GraphReranker, RerankWeights
from kg_agent.retrieval.stages import (
    GraphRerank,
    Leads,
    QualityFilter,
    TierOrder,
    TopK,
    run_stages,
)
from tests.support.memory_graph import MemoryArticle, MemoryGraph
from tests.unit.conftest import DIRECTOR, MOTHER, WAR_FILM

Q = "Who is the mother of the director of Polish-Russian War?"
QUESTION = Question(Q)


def _ev(title: str, text: str, sim: float, source: str, pagerank: float = 0.0) -> Evidence:
    return Evidence(
        f"{title}::0000", title, "", title, text, sim, pagerank, score=sim, source=source
    )


def test_graph_found_is_one_predicate() -> None:
    assert [s for s in GRAPH_TIERS if is_graph_found(_ev("x", "", 0, s))] == [
        "fact",
        "entity",
        "graph",
        "bridge_linked",
    ]
    assert not is_graph_found(_ev("x", "", 0, "semantic"))
    assert not is_graph_found(_ev("x", "", 0, "bridge"))


def test_quality_filter_keeps_graph_found_evidence_whatever_its_score() -> None:
    short = "A Polish actress."  # under 20 words: quality 0
    result = RetrievalResult(
        Q,
        [
            _ev("Small", short, 0.9, "semantic"),
            _ev("Małgorzata Braunek", short, 0.2, "graph"),
            _ev("Xawery Żuławski", DIRECTOR, 0.5, "semantic"),
        ],
    )
    out = QualityFilter().apply(QUESTION, result)
    assert [e.title for e in out.evidence] == ["Małgorzata Braunek", "Xawery Żuławski"]
    assert out.trace[-1] == {
        "stage": "quality_filter",
        "kept": 2,
        "dropped": 1,
        "kept_by_graph": 1,
        "threshold": 0.3,
    }
    assert out.evidence[1].scores["quality"] > 0.3
    # the stage scored copies: what it was given is unchanged
    assert all("quality" not in e.scores for e in result.evidence)


def test_quality_filter_keeps_the_ranking_rather_than_nothing() -> None:
    result = RetrievalResult(Q, [_ev("Small", "Too short.", 0.9, "semantic")])
    assert [e.title for e in QualityFilter().apply(QUESTION, result).evidence] == ["Small"]


def test_rerank_reorders_within_tiers_never_across(world: MemoryGraph) -> None:
    # "War film" has the highest PageRank and similarity but was found by search alone
    items = [
        _ev("War film", WAR_FILM, 0.9, "semantic"),
        _ev("Małgorzata Braunek", MOTHER, 0.1, "graph"),
        _ev("Xawery Żuławski", DIRECTOR, 0.2, "graph"),
        _ev("Polish-Russian War (film)", "", 0.3, "entity"),
    ]
    stages = [GraphRerank(GraphReranker(world)), TierOrder()]
    out = run_stages(QUESTION, RetrievalResult(Q, items), stages)
    titles = [e.title for e in out.evidence]
    assert titles[0] == "Polish-Russian War (film)" and titles[-1] == "War film"
    assert set(titles[1:3]) == {"Małgorzata Braunek", "Xawery Żuławski"}
    assert out.trace[-1] == {"stage": "tier_order", "tiered": True}
    assert all("pagerank" in e.scores for e in out.evidence)
    # within the neighbour tier, the rerank's order is kept
    reranked = [
        e.title
        for e in GraphRerank(GraphReranker(world))
        .apply(QUESTION, RetrievalResult(Q, items))
        .evidence
    ]
    neighbours = [t for t in reranked if t in ("Małgorzata Braunek", "Xawery Żuławski")]
    assert titles[1:3] == neighbours


def test_rerank_alone_orders_search_results_by_its_score(world: MemoryGraph) -> None:
    items = [
        _ev("Dark River (novel)", "x", 0.80, "semantic", pagerank=0.01),
        _ev("War film", "x", 0.79, "semantic", pagerank=0.30),
    ]
    weights = RerankWeights(retrieval=1.0, global_pagerank=2.0, personalized_pagerank=0.0)
    stages = [GraphRerank(GraphReranker(world, weights=weights)), TierOrder()]
    out = run_stages(QUESTION, RetrievalResult(Q, items), stages)
    assert out.trace[-1] == {"stage": "tier_order", "tiered": False}
    scores = [e.score for e in out.evidence]
    assert scores == sorted(scores, reverse=True)
    # War film's PageRank (the graph's largest), weighted 2:1, lifts it over a near-equal
    # similarity (normalised: 0 against 1)
    assert out.evidence[0].title == "War film"


def test_run_stages_in_order_and_top_k() -> None:
    items = [_ev(f"T{i}", DIRECTOR, 1 - i / 10, "semantic") for i in range(5)]
    out = run_stages(QUESTION, RetrievalResult(Q, items), [QualityFilter(), TopK(2)])
    assert [e.title for e in out.evidence] == ["T0", "T1"]
    assert [t["stage"] for t in out.trace] == ["quality_filter"]


def test_leads_are_added_after_the_evidence_for_a_comparison_of_countries() -> None:
    graph = MemoryGraph(
        [
            MemoryArticle(
                "Ana Ruiz",
                [("", "Ana Ruiz (born 1950) is a Chilean poet."), ("Life", "She lived in Lima.")],
            ),
            MemoryArticle(
                "Tom Hale",
                [("", "Tom Hale (born 1948) is an American poet."), ("Life", "He taught.")],
            ),
            MemoryArticle("Ben Orr", [("", "Ben Orr is an American painter.")]),
        ]
    )
    found = [
        _ev("Ana Ruiz", "She lived in Lima.", 0.9, "entity"),
        _ev("Tom Hale", "Tom Hale (born 1948) is an American poet.", 0.8, "entity"),
    ]
    found[0] = dataclasses.replace(found[0], section_id="Ana Ruiz::0001")
    result = RetrievalResult("", found)
    stage = Leads(graph.lead_sections)
    q = Question("Are Ana Ruiz, Tom Hale and Ben Orr from the same country?")
    out = stage.apply(q, result)
    # the ranking is kept; only the lead of a found article is added, once
    assert [e.section_id for e in out.evidence] == [
        "Ana Ruiz::0001",
        "Tom Hale::0000",
        "Ana Ruiz::0000",
    ]
    assert out.trace[-1] == {"stage": "leads", "added": ["Ana Ruiz::0000"]}
    # a choice between them: their leads too (what each is, and its date)
    choice = stage.apply(Question("who was born first ana ruiz or tom hale"), result)
    assert choice.trace[-1] == {"stage": "leads", "added": ["Ana Ruiz::0000"]}
    # with a top k, a lead takes the place of the last evidence of an article the
    # question does not name, never of the other option's
    noise = _ev("Lima", "Lima is a city.", 0.5, "semantic")
    crowded = RetrievalResult("", [*found, noise])
    capped = Leads(graph.lead_sections, 3).apply(q, crowded)
    assert [e.section_id for e in capped.evidence] == [
        "Ana Ruiz::0001",
        "Tom Hale::0000",
        "Ana Ruiz::0000",
    ]
    assert capped.trace[-1] == {
        "stage": "leads",
        "added": ["Ana Ruiz::0000"],
        "dropped": ["Lima::0000"],
    }
    # a top k of one and two leads wanted: the one it has room for, and the trace says so
    others = [found[0], dataclasses.replace(found[1], section_id="Tom Hale::0001")]
    tight = Leads(graph.lead_sections, 1).apply(q, RetrievalResult("", others))
    assert len(tight.evidence) == 1 and tight.evidence[0].section_id.endswith("::0000")
    assert tight.trace[-1]["added"] == [tight.evidence[0].section_id]
    # another question is passed on as it came
    other = Question("Are Ana Ruiz and Tom Hale in the same family?")
    assert stage.apply(other, result) is result

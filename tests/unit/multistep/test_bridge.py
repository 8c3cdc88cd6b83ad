"""The gated bridge round with hand-written callables (and the fake server for Claude).

No graph here: ``neighbours``, ``score_titles``, ``search`` and ``resolve`` are small
tables, and every call to them is recorded, so a test can say both what the round
produced and what it asked for.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from kg_agent.llm.client import AnthropicClient, UsageMeter
from kg_agent.multistep.bridge import BRIDGE_OFFSET, BridgeOutcome, bridge_round, claim_tokens
from kg_agent.multistep.bridge_llm import BRIDGE_MODEL
from kg_agent.multistep.config import MultiStepConfig
from kg_agent.retrieval.base import Evidence
from tests.support.fake_anthropic import DEFAULT_KEY, FakeAnthropic, overloaded, text

pytestmark = pytest.mark.usefixtures("no_leftover_threads")

QUESTION = "Where was the director of Jaws born?"
GATE = 0.55
LOW = 0.3  # round-1 quality below the gate
CONFIG = MultiStepConfig(
    bridge_quality_gate=GATE,
    bridge_max_queries=2,
    bridge_top_evidence=2,
    bridge_entity_boost=0.4,
    bridge_linked_boost=0.5,
    top_k_each_step=7,
)


def _ev(section_id: str, title: str, content: str, similarity: float = 0.5) -> Evidence:
    return Evidence(
        section_id=section_id,
        title=title,
        heading=title,
        heading_path=title,
        content=content,
        similarity=similarity,
        score=similarity,
        source="semantic",
    )


ROUND1 = [
    _ev(
        "jaws#0",
        "Jaws (film)",
        "Jaws is a 1975 American thriller film directed by Steven Spielberg and based on "
        "the novel by Peter Benchley. It was produced by Universal Pictures.",
        0.7,
    ),
    _ev("benchley#0", "Peter Benchley", "Peter Benchley was an American author.", 0.6),
    _ev("shark#0", "Great white shark", "The great white shark is a large shark.", 0.4),
]

#: Graph neighbours of the round-1 top titles, in the graph's order (not by similarity).
NEIGHBOURS = ["Universal Pictures", "Peter Benchley", "Steven Spielberg", "Roy Scheider"]
#: Similarity of each title's best section to the question.
SIMILARITY = {"Universal Pictures": 0.2, "Steven Spielberg": 0.8, "Roy Scheider": 0.5}

SPIELBERG = _ev(
    "spielberg#0",
    "Steven Spielberg",
    "Steven Spielberg is an American film director born in Cincinnati, Ohio.",
    0.6,
)
SPIELBERG_JAWS = _ev(
    "spielberg#1",
    "Steven Spielberg",
    "Spielberg's breakthrough came with Jaws in 1975.",
    0.5,
)
DUEL = _ev("duel#0", "Duel (1971 film)", "Duel is a TV film directed by Steven Spielberg.", 0.45)
CLOSE_ENCOUNTERS = _ev(
    "ce#0",
    "Close Encounters of the Third Kind",
    "After Jaws, Steven Spielberg wrote and directed Close Encounters.",
    0.35,
)
SHARK_FILMS = _ev("sharkfilm#0", "Shark films", "Jaws started a wave of shark films.", 0.3)
CINCINNATI = _ev("cin#0", "Cincinnati", "Cincinnati is a city in Ohio.", 0.25)
SCHEIDER = _ev("scheider#0", "Roy Scheider", "Roy Scheider was an American actor.", 0.55)

SEARCH_RESULTS: dict[str, list[Evidence]] = {
    "Steven Spielberg": [
        SPIELBERG,
        SPIELBERG_JAWS,
        DUEL,
        CLOSE_ENCOUNTERS,
        SHARK_FILMS,
        ROUND1[0],  # already collected in round 1: skipped
    ],
    "Roy Scheider": [SCHEIDER, DUEL],  # DUEL again: kept once
    "Universal Pictures": [CINCINNATI],
}


@dataclass
class Graph:
    """The callables bridge_round takes, over the tables above, recording every call."""

    neighbour_calls: list[list[str]] = field(default_factory=list)
    scored: list[list[str]] = field(default_factory=list)
    searches: list[tuple[str, int]] = field(default_factory=list)
    resolved: list[str] = field(default_factory=list)
    resolve_table: dict[str, list[str]] = field(default_factory=dict)
    fail_search: bool = False

    def neighbours(self, titles: Sequence[str]) -> list[str]:
        self.neighbour_calls.append(list(titles))
        return list(NEIGHBOURS)

    def score_titles(self, titles: Sequence[str]) -> dict[str, Evidence]:
        self.scored.append(list(titles))
        return {t: _ev(f"{t}#best", t, t, SIMILARITY[t]) for t in titles if t in SIMILARITY}

    def search(self, query: str, k: int) -> list[Evidence]:
        self.searches.append((query, k))
        if self.fail_search:
            raise RuntimeError("index unavailable")
        entity = next((e for e in SEARCH_RESULTS if query.startswith(e)), None)
        return list(SEARCH_RESULTS.get(entity or "", []))

    def resolve(self, name: str) -> list[str]:
        self.resolved.append(name)
        return list(self.resolve_table.get(name, []))


def run(
    graph: Graph,
    *,
    quality: float = LOW,
    config: MultiStepConfig = CONFIG,
    round1: Sequence[Evidence] = ROUND1,
    exclude: set[str] | None = None,
    gap_terms: Sequence[str] = ("birthplace",),
    warnings: list[str] | None = None,
    **kwargs: Any,
) -> BridgeOutcome:
    return bridge_round(
        QUESTION,
        round1,
        config=config,
        quality=quality,
        neighbours=graph.neighbours,
        score_titles=graph.score_titles,
        search=graph.search,
        resolve=graph.resolve,
        exclude={"Jaws (film)", "Peter Benchley"} if exclude is None else exclude,
        gap_terms=gap_terms,
        warnings=warnings,
        **kwargs,
    )


def by_id(out: BridgeOutcome) -> dict[str, Evidence]:
    return {e.section_id: e for e in out.evidence}


# --------------------------------------------------------------------------- the gate


@pytest.mark.parametrize("quality", [GATE, 0.9, 1.0])
def test_gate_off_at_or_above_the_gate(quality: float) -> None:
    graph = Graph()
    out = run(graph, quality=quality)
    assert out.triggered is False
    assert out.gate_reason == f"round-1 quality {quality:.2f} >= gate {GATE}"
    assert out.evidence == [] and out.entities == [] and out.queries == []
    assert graph.searches == [] and graph.neighbour_calls == [] and graph.scored == []
    assert out.stats()["triggered"] is False and out.stats()["queries_generated"] == 0


def test_zero_max_queries_turns_the_round_off() -> None:
    graph = Graph()
    out = run(graph, config=CONFIG.with_overrides(bridge_max_queries=0))
    assert (out.triggered, out.gate_reason) == (False, "off")
    assert graph.searches == []


def test_no_round1_evidence_is_not_triggered() -> None:
    graph = Graph()
    out = run(graph, round1=[])
    assert (out.triggered, out.gate_reason) == (False, "no round-1 evidence")
    assert graph.searches == [] and graph.neighbour_calls == []


# --------------------------------------------------------------------------- offline entities


def test_triggered_below_gate_searches_ranked_neighbours_plus_gap() -> None:
    graph = Graph()
    out = run(graph, gap_terms=("birthplace", "born", "city", "ignored"))
    assert out.triggered is True
    assert out.gate_reason == f"round-1 quality {LOW:.2f} < gate {GATE}"
    assert out.source == "offline"
    # neighbours of the top ``bridge_top_evidence`` round-1 titles, in rank order
    assert graph.neighbour_calls == [["Jaws (film)", "Peter Benchley"]]
    # excluded titles never reach the similarity scorer
    assert graph.scored == [["Universal Pictures", "Steven Spielberg", "Roy Scheider"]]
    # ranked by similarity (0.8, 0.5, 0.2), cut to bridge_max_queries = 2
    assert out.entities == ["Steven Spielberg", "Roy Scheider"]
    # "entity + gap": the first three gap terms
    assert out.queries == [
        "Steven Spielberg birthplace born city",
        "Roy Scheider birthplace born city",
    ]
    assert graph.searches == [(q, CONFIG.top_k_each_step) for q in out.queries]
    stats = out.stats()
    assert stats["entities_extracted"] == 2 and stats["queries_generated"] == 2
    assert stats["docs_added"] == len(out.evidence)


def test_query_is_the_entity_alone_without_gap_terms() -> None:
    graph = Graph()
    out = run(graph, gap_terms=())
    assert out.queries == ["Steven Spielberg", "Roy Scheider"]


def test_at_most_bridge_max_queries() -> None:
    graph = Graph()
    out = run(graph, config=CONFIG.with_overrides(bridge_max_queries=1))
    assert out.entities == ["Steven Spielberg"] and len(graph.searches) == 1
    out = run(Graph(), config=CONFIG.with_overrides(bridge_max_queries=10))
    assert out.entities == ["Steven Spielberg", "Roy Scheider", "Universal Pictures"]


def test_excluded_titles_are_skipped() -> None:
    graph = Graph()
    out = run(graph, exclude={"Jaws (film)", "Peter Benchley", "Steven Spielberg"})
    assert "Steven Spielberg" not in out.entities
    assert out.entities == ["Roy Scheider", "Universal Pictures"]


def test_seen_sections_are_skipped_and_each_kept_once() -> None:
    out = run(Graph())
    ids = [e.section_id for e in out.evidence]
    assert "jaws#0" not in ids  # already a round-1 section
    assert ids.count("duel#0") == 1  # found by both queries
    assert ids == [
        "spielberg#0",
        "spielberg#1",
        "duel#0",
        "ce#0",
        "sharkfilm#0",
        "scheider#0",
    ]


# --------------------------------------------------------------------------- boosts


def test_claim_tokens_are_title_content_words() -> None:
    assert claim_tokens(ROUND1[:2]) == {"jaws", "peter", "benchley"}


def test_entity_boost_goes_to_the_entity_article() -> None:
    out = by_id(run(Graph()))
    spielberg = out["spielberg#0"]
    assert spielberg.score == pytest.approx(BRIDGE_OFFSET + 0.6 + CONFIG.bridge_entity_boost)
    assert spielberg.scores["bridge_boost"] == pytest.approx(CONFIG.bridge_entity_boost)
    assert spielberg.source == "bridge"  # names the entity, but no round-1 claim token
    scheider = out["scheider#0"]
    assert scheider.score == pytest.approx(0.55 + CONFIG.bridge_entity_boost)
    # a record whose article is not an entity gets no entity boost
    assert out["duel#0"].scores["bridge_boost"] == 0.0


def test_bridge_linked_needs_both_an_entity_and_a_claim_token() -> None:
    outcome = run(Graph())
    out = by_id(outcome)
    # entity article that also names "Jaws": both boosts
    both = out["spielberg#1"]
    assert both.source == "bridge_linked"
    assert both.score == pytest.approx(
        0.5 + CONFIG.bridge_entity_boost + CONFIG.bridge_linked_boost
    )
    # names the entity and "Jaws": linked boost only
    ce = out["ce#0"]
    assert ce.source == "bridge_linked"
    assert ce.score == pytest.approx(0.35 + CONFIG.bridge_linked_boost)
    assert ce.scores["bridge_boost"] == pytest.approx(CONFIG.bridge_linked_boost)
    # names the entity only
    assert out["duel#0"].source == "bridge" and out["duel#0"].score == pytest.approx(0.45)
    # names the claim token only
    shark = out["sharkfilm#0"]
    assert shark.source == "bridge" and shark.score == pytest.approx(0.3)
    # the chain's antecedent is the round-1 article that names the entity
    assert outcome.antecedents == {"spielberg#1": "Jaws (film)", "ce#0": "Jaws (film)"}
    assert ce.reached_from == "Jaws (film)" and out["duel#0"].reached_from is None


def test_each_link_is_paired_with_the_round1_article_that_named_its_entity() -> None:
    benchley = _ev(
        "benchley#0",
        "Peter Benchley",
        "Peter Benchley wrote Jaws; Roy Scheider played Brody in the American film.",
        0.6,
    )
    scheider = _ev("scheider#0", "Roy Scheider", "Roy Scheider starred in Jaws (1975).", 0.55)
    SEARCH_RESULTS["Roy Scheider"].insert(0, scheider)
    try:
        outcome = run(Graph(), round1=[ROUND1[0], benchley, ROUND1[2]])
    finally:
        SEARCH_RESULTS["Roy Scheider"].remove(scheider)
    assert outcome.entities == ["Steven Spielberg", "Roy Scheider"]
    assert outcome.antecedents["spielberg#1"] == "Jaws (film)"
    assert outcome.antecedents["scheider#0"] == "Peter Benchley"
    assert by_id(outcome)["scheider#0"].reached_from == "Peter Benchley"


def test_inputs_are_not_modified() -> None:
    run(Graph())
    assert (SPIELBERG.score, SPIELBERG.source, SPIELBERG.scores) == (0.6, "semantic", {})


# --------------------------------------------------------------------------- failures


def test_search_failure_is_a_warning_not_an_exception(caplog: pytest.LogCaptureFixture) -> None:
    graph = Graph(fail_search=True)
    warnings: list[str] = []
    with caplog.at_level(logging.WARNING, logger="kg_agent.multistep.bridge"):
        out = run(graph, warnings=warnings)
    assert out.triggered is True
    assert out.evidence == []
    assert len(warnings) == 1
    assert warnings[0].startswith("bridge round failed (RuntimeError: index unavailable)")
    assert any("bridge round failed" in r.getMessage() for r in caplog.records)


def test_failure_without_a_warnings_list_still_does_not_raise() -> None:
    out = run(Graph(fail_search=True), warnings=None)
    assert out.evidence == []


# --------------------------------------------------------------------------- Claude path


@pytest.fixture
def client(fake_anthropic: FakeAnthropic) -> Iterator[AnthropicClient]:
    with AnthropicClient(DEFAULT_KEY, base_url=fake_anthropic.base_url, timeout=5.0) as c:
        yield c


def test_claude_entities_resolved_and_hallucination_dropped(
    fake_anthropic: FakeAnthropic, client: AnthropicClient
) -> None:
    fake_anthropic.enqueue(
        text(
            "entities: Steven Spielberg; Bruce the Shark; Universal Pictures\n"
            "gaps: Steven Spielberg's birthplace"
        )
    )
    graph = Graph(
        resolve_table={
            "Steven Spielberg": ["Steven Spielberg"],
            "Universal Pictures": ["Universal Pictures", "Steven Spielberg"],
        }
    )
    warnings: list[str] = []
    meter = UsageMeter()
    out = run(graph, llm=client, meter=meter, timeout=5.0, warnings=warnings)
    assert out.source == "claude"
    # "Bruce the Shark" is not in the evidence: dropped, never resolved or searched
    assert out.dropped_entities == ["Bruce the Shark"]
    assert graph.resolved == ["Steven Spielberg", "Universal Pictures"]
    assert out.entities == ["Steven Spielberg", "Universal Pictures"]
    # Claude's first gap replaces the caller's gap terms
    assert out.gaps == ["Steven Spielberg's birthplace"]
    assert out.queries == [
        "Steven Spielberg Steven Spielberg's birthplace",
        "Universal Pictures Steven Spielberg's birthplace",
    ]
    # the graph is not asked when Claude named usable entities
    assert graph.neighbour_calls == []
    assert warnings == []
    assert meter.calls == 1 and meter.failures == 0
    (req,) = fake_anthropic.message_requests
    assert req.body is not None and req.body["model"] == BRIDGE_MODEL
    assert QUESTION in req.user_text and "[1] Jaws (film)" in req.user_text
    stats = out.stats()
    assert stats["source"] == "claude" and stats["dropped_entities"] == ["Bruce the Shark"]
    assert by_id(out)["spielberg#0"].scores["bridge_boost"] == pytest.approx(
        CONFIG.bridge_entity_boost
    )


def test_claude_entities_that_resolve_to_nothing_fall_back_to_the_graph(
    fake_anthropic: FakeAnthropic, client: AnthropicClient
) -> None:
    fake_anthropic.enqueue(text("entities: Peter Benchley\ngaps: none"))
    graph = Graph()  # resolves nothing
    out = run(graph, llm=client)
    assert out.source == "offline"
    assert out.entities == ["Steven Spielberg", "Roy Scheider"]
    assert graph.neighbour_calls == [["Jaws (film)", "Peter Benchley"]]


def test_claude_overloaded_falls_back_to_graph_neighbours(
    fake_anthropic: FakeAnthropic, client: AnthropicClient
) -> None:
    fake_anthropic.enqueue(overloaded(), overloaded())
    graph = Graph()
    warnings: list[str] = []
    meter = UsageMeter()
    out = run(graph, llm=client, meter=meter, warnings=warnings)
    assert len(fake_anthropic.message_requests) == 2  # one retry
    assert meter.failures == 1
    source = f"the anthropic API at {fake_anthropic.base_url}"
    assert warnings == [
        f"bridge extraction failed (overloaded from {source}): using graph neighbours"
    ]
    assert out.source == "offline" and out.triggered is True
    assert out.entities == ["Steven Spielberg", "Roy Scheider"]
    assert out.queries == ["Steven Spielberg birthplace", "Roy Scheider birthplace"]
    assert out.evidence  # round 2 still ran

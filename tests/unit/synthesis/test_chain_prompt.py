"""The chain-linked evidence section of the Claude prompt (bridge round → synthesis)."""

from __future__ import annotations

from kg_agent.retrieval.base import Evidence
from kg_agent.synthesis.claude import CHAIN_HEADING, build_prompt, chain_text


def _ev(title: str, source: str, via: str | None = None) -> Evidence:
    return Evidence(
        f"{title}::0000", title, "", "", f"text of {title}", 0.5, source=source, reached_from=via
    )


def test_bridge_linked_sources_are_paired_with_the_first_round_antecedent() -> None:
    items = [
        (1, _ev("Polish-Russian War (film)", "entity")),
        (2, _ev("Some other film", "graph")),
        (3, _ev("Xawery Żuławski", "bridge_linked", via="Polish-Russian War (film)")),
    ]
    assert chain_text(items) == "[3] Xawery Żuławski ← reached from [1] Polish-Russian War (film)"
    prompt = build_prompt("Who is the mother of the director?", "[1] ...", "", chain_text(items))
    evidence_at = prompt.index("Evidence:")
    chain_at = prompt.index(CHAIN_HEADING)
    question_at = prompt.index("Question:")
    assert evidence_at < chain_at < question_at
    assert "explicit reasoning chain" in prompt


def test_each_link_is_paired_with_its_own_antecedent() -> None:
    items = [
        (1, _ev("Jaws (film)", "entity")),
        (2, _ev("Close Encounters of the Third Kind", "entity")),
        (3, _ev("Steven Spielberg", "bridge_linked", via="Jaws (film)")),
        (4, _ev("François Truffaut", "bridge_linked", via="Close Encounters of the Third Kind")),
        (5, _ev("Peter Benchley", "bridge_linked", via="Jaws (novel)")),
    ]
    assert chain_text(items).splitlines() == [
        "[3] Steven Spielberg ← reached from [1] Jaws (film)",
        "[4] François Truffaut ← reached from [2] Close Encounters of the Third Kind",
        "[5] Peter Benchley ← reached from Jaws (novel) (not among the sources)",
    ]


def test_no_bridge_evidence_means_no_chain_section() -> None:
    items = [(1, _ev("A", "entity")), (2, _ev("B", "semantic"))]
    assert chain_text(items) == ""
    assert CHAIN_HEADING not in build_prompt("q?", "[1] ...", "", chain_text(items))

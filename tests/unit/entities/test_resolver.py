"""Names to titles (the packs' parameters, multi-query's titles), on the in-memory graph."""

from __future__ import annotations

from kg_agent.entities import EntityResolver
from kg_agent.language.intent import structural_intent
from kg_agent.retrieval.structural import bind_intent, resolve_entities
from tests.support.memory_graph import MemoryGraph


def test_exact_redirect_case_and_a_leading_article(world_no_vectors: MemoryGraph) -> None:
    r = EntityResolver(world_no_vectors)
    assert r.resolve("War film") == "War film"
    assert r.resolve("war film") == "War film"  # MediaWiki capitalises the first letter
    assert r.resolve("Braunek") == "Małgorzata Braunek"  # a redirect
    assert r.resolve("the  PRW") == "Polish-Russian War (film)"
    assert r.resolve('"Anne_Law"') == "Anne Law"


def test_a_partial_name_resolves_only_when_every_word_is_in_the_title(
    world_no_vectors: MemoryGraph,
) -> None:
    r = EntityResolver(world_no_vectors)
    assert r.resolve("Masłowska") == "Dorota Masłowska"
    assert r.resolve("Masłowska's") == "Dorota Masłowska"
    assert r.resolve("Masłowska trilogy") is None  # not guessed
    assert r.resolve("the") is None and r.resolve("  ") is None


def test_categories_and_the_packs_share_the_resolver(world_no_vectors: MemoryGraph) -> None:
    r = EntityResolver(world_no_vectors)
    assert r.resolve("category:film genres", kind="category") == "Film genres"
    assert resolve_entities(world_no_vectors, ["Braunek", "Nobody Atall"]) == [
        "Małgorzata Braunek",
        None,
    ]
    intent = structural_intent("How is Braunek connected to Masłowska?")
    assert intent is not None and intent.entities == ("Braunek", "Masłowska")
    assert bind_intent(world_no_vectors, intent, resolver=r) == intent.bind(
        ["Małgorzata Braunek", "Dorota Masłowska"]
    )


def test_link_and_similar_titles(world_no_vectors: MemoryGraph) -> None:
    r = EntityResolver(world_no_vectors)
    assert r.link("Where did Braunek teach?") == ["Małgorzata Braunek"]
    assert r.similar_titles("Dark River", k=2) == ["Dark River (film)", "Dark River (novel)"]

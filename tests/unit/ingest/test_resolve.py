"""Redirect rows as a load resolves them, and as an update resolves only those that
changed (``kg_agent.ingest.resolve``)."""

from __future__ import annotations

from collections.abc import Sequence

from kg_agent.ingest.resolve import LinkResolver, TitleTable

GRAPH_ARTICLES = {"Albedo", "Old stub"}
GRAPH_REDIRECTS = {"Reflectivity index": "Albedo"}


def _lookup(titles: Sequence[str]) -> tuple[set[str], dict[str, str]]:
    """The graph the load is added to: two articles (one a stub) and a redirect."""
    asked = set(titles)
    return asked & GRAPH_ARTICLES, {t: a for t, a in GRAPH_REDIRECTS.items() if t in asked}


def _table() -> TitleTable:
    table = TitleTable()
    table.titles = {"Anarchism": 0, "Autism": 1, "Same title": 2}
    table.redirects = {
        "Anarchist": "Anarchism",
        "Anarchists": "Anarchist",  # a chain: followed to the article
        "Same title": "Autism",  # an article of the same title wins
        "Solar reflectivity": "Albedo",  # the graph's article
        "Stubby": "Old stub",  # the graph's stub
        "Via graph redirect": "Reflectivity index",  # the graph's redirect
        "Nowhere": "Missing page",  # found nowhere: a stub
        "Self": "Self",
    }
    return table


def test_redirect_rows_resolve_as_a_load_does() -> None:
    resolver = LinkResolver(_table(), _lookup)
    assert resolver.redirect_rows() == [
        ("Anarchist", "Anarchism"),
        ("Anarchists", "Anarchism"),
        ("Solar reflectivity", "Albedo"),
        ("Stubby", "Old stub"),
        ("Via graph redirect", "Albedo"),
        ("Nowhere", "Missing page"),
    ]
    assert resolver.stubs == {"Missing page", "Self"}


def test_an_update_resolves_only_the_redirects_it_writes() -> None:
    """The same rows as the whole resolve, filtered, in the dump's order; stubs only for
    those (an unchanged redirect's target is in the graph already)."""
    full = LinkResolver(_table(), _lookup).redirect_rows()
    for only in (
        ["Nowhere", "Anarchists"],
        ["Stubby", "Same title", "Not a redirect"],
        [],
    ):
        resolver = LinkResolver(_table(), _lookup)
        rows = resolver.redirect_rows(only)
        assert rows == [r for r in full if r[0] in only], only
        assert resolver.stubs == ({"Missing page"} if "Nowhere" in only else set())

"""The shipped Cypher pack, and the Cypher in docs/schema.md, on the real sample graph.

The expected rows come from the sample wiki (``kg_agent/data/sample``): e.g.
the Analytical Engine article links to Charles Babbage, and ``Ada Byron``
redirects to Ada Lovelace.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kg_agent.cypher_packs import CypherPack, default_pack, run_query
from kg_agent.embedding import Embedder
from kg_agent.ingest.pipeline import LoadReport
from kg_agent.language.intent import structural_intent
from kg_agent.retrieval.structural import bind_intent, resolve_entities
from kg_agent.store import GraphStore

ROOT = Path(__file__).resolve().parents[2]

# One call per shipped query; a query added to the pack without a line here fails.
CALLS: dict[str, dict[str, Any]] = {
    "article_neighbours": {"title": "Charles Babbage"},
    "articles_linking_to": {"title": "Charles Babbage"},
    "shortest_link_path": {"source": "Ada Lovelace", "target": "IBM"},
    "connection_path": {"source": "IBM", "target": "Ada Lovelace"},
    "category_members": {"category": "Computer pioneers"},
    "categories_of": {"title": "Alan Turing"},
    "sections_mentioning": {"title": "Charles Babbage"},
    "bridge_articles": {"title": "Charles Babbage"},
    "common_neighbours": {"title_a": "Charles Babbage", "title_b": "Ada Lovelace"},
    "resolve_alias": {"alias": "Ada Byron"},
    "top_pagerank": {"limit": 5},
}


@pytest.fixture(scope="module")
def pack() -> CypherPack:
    return default_pack()


@pytest.fixture
def store(
    sample_graph: tuple[Path, LoadReport], open_store: Callable[[Path], GraphStore]
) -> Iterator[GraphStore]:
    yield open_store(sample_graph[0])


def titles(rows: list[dict[str, Any]]) -> list[str]:
    return [str(r["title"]) for r in rows]


def test_every_query_has_a_call_here(pack: CypherPack) -> None:
    assert set(pack.names()) == set(CALLS)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_every_query_runs_and_returns_its_declared_columns(
    store: GraphStore, pack: CypherPack, name: str
) -> None:
    rows = run_query(store, pack, name, **CALLS[name])
    assert rows, f"{name} returned no rows on the sample graph"
    assert tuple(rows[0]) == pack.get(name).returns


def test_articles_linking_to_babbage(store: GraphStore, pack: CypherPack) -> None:
    rows = run_query(store, pack, "articles_linking_to", title="Charles Babbage")
    assert {"Analytical Engine", "Difference Engine", "Ada Lovelace"} <= set(titles(rows))
    assert rows[0]["title"] == "Ada Lovelace" and rows[0]["count"] == 2  # links twice
    assert [r["count"] for r in rows] == sorted((r["count"] for r in rows), reverse=True)
    limited = run_query(store, pack, "articles_linking_to", title="Charles Babbage", limit=2)
    assert len(limited) == 2


def test_article_neighbours_counts_both_directions(store: GraphStore, pack: CypherPack) -> None:
    rows = {
        r["title"]: r
        for r in run_query(store, pack, "article_neighbours", title="Charles Babbage", limit=100)
    }
    outgoing = dict(store.outgoing_links("Charles Babbage"))
    incoming = dict(store.incoming_links("Charles Babbage"))
    assert set(rows) == set(outgoing) | set(incoming)
    for title, row in rows.items():
        assert row["out_count"] == outgoing.get(title, 0)
        assert row["in_count"] == incoming.get(title, 0)


def test_shortest_link_path_follows_real_links(store: GraphStore, pack: CypherPack) -> None:
    rows = run_query(store, pack, "shortest_link_path", source="Ada Lovelace", target="IBM")
    assert len(rows) == 1
    path, hops = rows[0]["path"], rows[0]["hops"]
    assert path[0] == "Ada Lovelace" and path[-1] == "IBM"
    assert hops == len(path) - 1 == 3
    for a, b in itertools.pairwise(path):
        assert b in dict(store.outgoing_links(a)), f"{a} does not link to {b}"
    assert (
        run_query(
            store, pack, "shortest_link_path", source="Ada Lovelace", target="IBM", max_hops=2
        )
        == []
    )


def test_connection_path_ignores_direction(store: GraphStore, pack: CypherPack) -> None:
    rows = run_query(store, pack, "connection_path", source="IBM", target="Ada Lovelace")
    path = rows[0]["path"]
    assert path[0] == "IBM" and path[-1] == "Ada Lovelace"
    for a, b in itertools.pairwise(path):
        assert b in dict(store.outgoing_links(a)) or a in dict(store.outgoing_links(b))


def test_category_members_and_categories_of(store: GraphStore, pack: CypherPack) -> None:
    rows = run_query(store, pack, "category_members", category="Computer pioneers")
    assert {"Charles Babbage", "Ada Lovelace", "Alan Turing", "Grace Hopper"} <= set(titles(rows))
    ranks = [r["pagerank"] for r in rows]
    assert ranks == sorted(ranks, reverse=True)
    cats = {
        r["category"]: r["members"]
        for r in run_query(store, pack, "categories_of", title="Alan Turing")
    }
    assert cats["Computer pioneers"] == len(rows)
    assert set(cats) == set(store.categories_of("Alan Turing"))


def test_sections_mentioning_and_bridges(store: GraphStore, pack: CypherPack) -> None:
    rows = run_query(store, pack, "sections_mentioning", title="Charles Babbage", limit=50)
    assert ("Ada Lovelace", "Work with Babbage") in {(r["title"], r["heading_path"]) for r in rows}
    assert all(r["text"] for r in rows)
    bridges = titles(run_query(store, pack, "bridge_articles", title="Charles Babbage"))
    assert "Analytical Engine" in bridges and "Charles Babbage" not in bridges


def test_common_neighbours(store: GraphStore, pack: CypherPack) -> None:
    rows = run_query(
        store, pack, "common_neighbours", title_a="Charles Babbage", title_b="Ada Lovelace"
    )
    assert "Analytical Engine" in titles(rows)
    both = set(dict(store.outgoing_links("Charles Babbage"))) & set(
        dict(store.outgoing_links("Ada Lovelace"))
    )
    assert set(titles(rows)) == both


def test_resolve_alias(store: GraphStore, pack: CypherPack) -> None:
    assert titles(run_query(store, pack, "resolve_alias", alias="Ada Byron")) == ["Ada Lovelace"]
    assert titles(run_query(store, pack, "resolve_alias", alias="Babbage")) == ["Charles Babbage"]
    assert run_query(store, pack, "resolve_alias", alias="Nobody at all") == []


def test_top_pagerank_skips_stubs(store: GraphStore, pack: CypherPack) -> None:
    rows = run_query(store, pack, "top_pagerank", limit=5)
    assert len(rows) == 5
    assert [r["pagerank"] for r in rows] == sorted((r["pagerank"] for r in rows), reverse=True)
    for r in rows:
        info = store.article(r["title"])
        assert info is not None and not info["is_stub"]


# ---------------------------------------------------------------------------- entities


def test_search_article_titles(store: GraphStore) -> None:
    hits = store.search_article_titles("von neumann", k=5)
    assert {"John von Neumann", "Von Neumann architecture"} <= {t for t, _ in hits}
    assert store.search_article_titles("*") == []  # a wildcard would match every title
    assert store.search_article_titles("   ") == []


def test_resolve_category(store: GraphStore) -> None:
    assert store.resolve_category("Computer pioneers") == "Computer pioneers"
    assert store.resolve_category("computer PIONEERS") == "Computer pioneers"
    assert store.resolve_category("Category:Computer pioneers") == "Computer pioneers"
    assert store.resolve_category("Knitting") is None


def test_resolve_entities(store: GraphStore) -> None:
    names = [
        "von Neumann",
        "Babbage engine",
        "turing",
        "the ENIAC",
        "charles_babbage",
        "Lovelace",
        "Ada Byron",
        "Enigma machine",
    ]
    assert resolve_entities(store, names) == [
        "John von Neumann",  # title index, every word present
        None,  # only partly in any title: not guessed
        "Alan Turing",  # redirect "Turing", after upper-casing the first letter
        "ENIAC",
        "Charles Babbage",
        "Ada Lovelace",
        "Ada Lovelace",
        "Enigma machine",  # a stub is still a graph node
    ]
    assert resolve_entities(store, ["early computers"], kind="category") == ["Early computers"]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What links to babbage?", "Analytical Engine"),
        ("What is in category computer pioneers?", "Grace Hopper"),
        ("How is Ada Lovelace connected to IBM?", None),
    ],
)
def test_structural_question_end_to_end(
    store: GraphStore, pack: CypherPack, question: str, expected: str | None
) -> None:
    intent = structural_intent(question)
    assert intent is not None
    params = bind_intent(store, intent)
    assert params is not None
    rows = run_query(store, pack, intent.query, **params)
    assert rows
    if expected is not None:
        assert expected in titles(rows)
    else:
        assert rows[0]["path"][0] == "Ada Lovelace" and rows[0]["path"][-1] == "IBM"


def test_unresolvable_entities_give_no_params(store: GraphStore) -> None:
    intent = structural_intent("How is Ada Lovelace connected to Paris Hilton?")
    assert intent is not None
    assert bind_intent(store, intent) is None


# ---------------------------------------------------------------------------- docs


def schema_doc_statements() -> list[str]:
    """Every statement of the ```cypher blocks in docs/schema.md (comments dropped)."""
    text = (ROOT / "docs" / "schema.md").read_text(encoding="utf-8")
    out: list[str] = []
    for block in re.findall(r"```cypher\n(.*?)```", text, re.S):
        current: list[str] = []
        for line in block.splitlines():
            if line.strip().startswith("//") or not line.strip():
                continue
            current.append(line)
            if line.rstrip().endswith(";"):
                out.append("\n".join(current).rstrip().rstrip(";"))
                current = []
        assert not current, f"statement without a closing ';' in docs/schema.md: {current}"
    return out


DOC_STATEMENTS = schema_doc_statements()


@pytest.mark.parametrize(
    "cypher", DOC_STATEMENTS, ids=[s.split("\n")[0][:60] for s in DOC_STATEMENTS]
)
def test_schema_doc_cypher_runs_on_the_sample(
    store: GraphStore, embedder: Embedder, cypher: str
) -> None:
    values: dict[str, Any] = {
        "title": "Charles Babbage",
        "from": "Ada Lovelace",
        "to": "IBM",
        "alias": "Ada Byron",
        "category": "Computer pioneers",
        "text": "punched cards",
        "key": "knownfor",
        "target": "Analytical Engine",
    }
    names = set(re.findall(r"\$(\w+)", cypher))
    if "vector" in names:
        values["vector"] = [float(x) for x in embedder.embed_query("punched cards for looms")]
    unknown = names - set(values)
    assert not unknown, f"docs/schema.md uses ${', $'.join(sorted(unknown))}: add a value here"
    rows = store.query(cypher, {n: values[n] for n in names})
    assert rows, f"no rows on the sample graph for:\n{cypher}"


def test_the_docs_have_the_statements_we_expect() -> None:
    assert len(DOC_STATEMENTS) >= 11
    assert any("SHORTEST" in s for s in DOC_STATEMENTS)
    assert any("array_cosine_similarity" in s for s in DOC_STATEMENTS)

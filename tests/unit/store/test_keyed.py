"""``GraphStore._keyed``: an update's statements by primary-key lookups or by one scan.

A few titles against a large graph are looked up one by one (a prepared ``{title: $key}``
is a primary-key lookup), many in one ``UNWIND`` (a scan of the table). Both forms of
every statement of an update and a delete must say and do the same: shown here on a
real graph (the shipped sample) with each form forced, against answers read from
whole tables.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kg_agent.cli import SAMPLE_DUMP
from kg_agent.embedding import Embedder
from kg_agent.ingest import update as update_module
from kg_agent.ingest.pipeline import LoadOptions, load_source
from kg_agent.ingest.update import UpdateOptions, update_graph
from kg_agent.ingest.write import WriteJob, write_graph
from kg_agent.store import GraphStore
from kg_agent.store import graph as graph_module
from kg_agent.store.edits import GraphEdits
from tests.support.graph_compare import QUERIES, assert_same_graph, graph_content
from tests.support.newer_sample import write_newer_sample

MISSING = "No such article, ever"
NO_VECTORS = LoadOptions(progress=False, embeddings="none")


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("keyed") / "sample.kuzu"
    load_source(SAMPLE_DUMP, db, embedder=Embedder(), options=NO_VECTORS)
    return db


def _force(monkeypatch: pytest.MonkeyPatch, form: str) -> None:
    """``point``: every list is looked up key by key; ``scan``: always one UNWIND."""
    monkeypatch.setattr(graph_module, "_POINT_PER_ROWS", 0 if form == "point" else 10**12)


def _column(store: GraphStore, cypher: str) -> list[Any]:
    return [r[0] for r in store._run(cypher)]


@pytest.fixture(scope="module")
def keys(sample: Path) -> dict[str, list[str]]:
    """Titles of each kind, with a duplicate and one that is in no table."""
    with GraphStore.open(sample, read_only=True) as store:
        articles = sorted(_column(store, "MATCH (a:Article) WHERE NOT a.is_stub RETURN a.title"))
        stubs = sorted(_column(store, "MATCH (a:Article) WHERE a.is_stub RETURN a.title"))
        redirects = sorted(_column(store, "MATCH (r:Redirect) RETURN r.title"))
        categories = sorted(_column(store, "MATCH (c:Category) RETURN c.name"))
    assert len(articles) >= 30 and len(stubs) >= 10 and len(redirects) >= 3
    titles = [*articles[::2], *stubs[::3], articles[0], MISSING]
    return {
        "titles": titles,
        "redirects": [*redirects, MISSING],
        "categories": [*categories[::4], MISSING],
    }


READS: dict[str, Callable[[GraphStore, dict[str, list[str]]], Any]] = {
    "existing_articles": lambda s, k: s.existing_articles(k["titles"]),
    "existing_redirects": lambda s, k: s.existing_redirects(k["redirects"]),
    "existing_categories": lambda s, k: s.existing_categories(k["categories"]),
    "existing": lambda s, k: GraphEdits(s).existing(k["titles"]),
    "linking_articles": lambda s, k: GraphEdits(s).linking_articles(k["titles"]),
    "stubs_linked_from": lambda s, k: GraphEdits(s).stubs_linked_from(k["titles"]),
    "stubs_redirected_from": lambda s, k: GraphEdits(s).stubs_redirected_from(k["redirects"]),
    "categories_of": lambda s, k: GraphEdits(s).categories_of(k["titles"]),
    "redirects_into": lambda s, k: GraphEdits(s).redirects_into(k["titles"]),
    "still_linked": lambda s, k: GraphEdits(s).still_linked(k["titles"]),
    "unlinked_stubs": lambda s, k: GraphEdits(s).unlinked_stubs(k["titles"]),
}
# ``section_vectors`` needs vectors, which this graph has none of: both of its forms are
# checked on an updated graph in tests/e2e/test_update.py


@pytest.mark.parametrize("name", sorted(READS))
def test_both_forms_read_the_same(
    sample: Path, keys: dict[str, list[str]], monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    got = {}
    for form in ("point", "scan"):
        _force(monkeypatch, form)
        with GraphStore.open(sample, read_only=True) as store:
            got[form] = READS[name](store, keys)
    assert got["point"] == got["scan"]


def test_reads_match_whole_tables(sample: Path, keys: dict[str, list[str]]) -> None:
    """What the lookups say, checked against every row of the tables they look in."""
    titles = set(keys["titles"])
    with GraphStore.open(sample, read_only=True) as store:
        rows = store.query("MATCH (a:Article) RETURN a.title AS t, a.is_stub AS s")
        links = store.query(
            "MATCH (a:Article)-[r:LINKS_TO]->(b:Article) RETURN a.title AS a, b.title AS b, "
            "r.inferred AS inferred"
        )
        mentions = store.query(
            "MATCH (:Section)-[m:MENTIONS]->(b:Article) RETURN b.title AS b, m.inferred AS i"
        )
        into = {
            r["b"]
            for r in store.query("MATCH (:Redirect)-[:REDIRECTS_TO]->(b) RETURN b.title AS b")
        }
        for form in ("point", "scan"):
            with pytest.MonkeyPatch.context() as mp:
                _force(mp, form)
                edits = GraphEdits(store)
                assert store.existing_articles(keys["titles"]) == {
                    r["t"]: r["s"] for r in rows if r["t"] in titles
                }
                linking = edits.linking_articles(keys["titles"])
                assert linking == {r["a"] for r in links if r["b"] in titles}
                written = {r["b"] for r in links if not r["inferred"]}
                written |= {r["b"] for r in mentions if not r["i"]} | into
                assert edits.still_linked(keys["titles"]) == titles & written
                assert linking and titles & written  # the checks compared something


def _edit(store: GraphStore, keys: dict[str, list[str]]) -> None:
    """An update's and a delete's writes, in one transaction."""
    titles = [t for t in keys["titles"] if t != MISSING]
    edits = GraphEdits(store)
    found = store.existing_articles(titles)
    articles = sorted(t for t, stub in found.items() if not stub)
    stubs = sorted(t for t, stub in found.items() if stub)
    store.begin()
    store.delete_redirects(keys["redirects"][:2])
    store.clear_article_content(articles[:6])
    store.update_articles(
        [
            {
                "title": t,
                "page_id": 900_000 + i,
                "is_stub": False,
                "is_disambiguation": False,
                "n_sections": 0,
                "word_count": i,
                "load_id": "test",
                "revision": 7 if i else None,
                "digest": f"d{i}" if i else None,
                "pagerank": 0.5,  # a column the statement does not set
            }
            for i, t in enumerate(articles[:6])
        ]
    )
    kept = edits.still_linked(articles[6:10])
    edits.make_stubs(sorted(kept))
    store.clear_article_content([t for t in articles[6:10] if t not in kept])
    edits.delete_articles([t for t in articles[6:10] if t not in kept])
    edits.delete_articles(sorted(edits.unlinked_stubs(stubs)))
    edits.delete_unused_categories(keys["categories"])
    store.commit()


@pytest.fixture
def copies(sample: Path, tmp_path: Path) -> Iterator[dict[str, Path]]:
    out = {}
    for form in ("point", "scan"):
        out[form] = tmp_path / f"{form}.kuzu"
        shutil.copy2(sample, out[form])
    yield out


def test_both_forms_write_the_same(
    copies: dict[str, Path], keys: dict[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    before = graph_content(copies["point"])
    for form, db in copies.items():
        _force(monkeypatch, form)
        with GraphStore.open(db, read_only=False) as store:
            _edit(store, keys)
    point, scan = graph_content(copies["point"]), graph_content(copies["scan"])
    for name in QUERIES:
        assert point[name] == scan[name], name
    assert point["articles"] != before["articles"]  # the edits did something
    assert len(point["sections"]) < len(before["sections"])
    assert len(point["redirects"]) == len(before["redirects"]) - 2
    rewritten = {r[0]: r for r in point["articles"]}
    first = sorted(t for t, stub in _stubs(before).items() if not stub and t in keys["titles"])[0]
    assert rewritten[first][1] == 900_000 and rewritten[first][6] is None
    second = sorted(t for t, stub in _stubs(before).items() if not stub and t in keys["titles"])[1]
    assert rewritten[second][6] == 7


def test_an_update_by_point_lookups_equals_a_fresh_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole update with every lookup a point lookup (as on a large graph), its
    write in this process (the child process would not see the forced form)."""
    newer = write_newer_sample(tmp_path / "sample-v2-pages-articles.xml")
    fresh, db = tmp_path / "fresh.kuzu", tmp_path / "updated.kuzu"
    load_source(newer, fresh, embedder=Embedder(), options=NO_VECTORS)
    load_source(SAMPLE_DUMP, db, embedder=Embedder(), options=NO_VECTORS)
    _force(monkeypatch, "point")
    calls: list[int] = []

    def in_process(job: WriteJob, steps: dict[str, float] | None = None) -> dict[str, int]:
        calls.append(1)
        return write_graph(job)

    monkeypatch.setattr(update_module, "write_in_child", in_process)
    report = update_graph(newer, db, embedder=Embedder(), options=UpdateOptions(progress=False))
    assert calls and (report.added, report.changed, report.deleted) == (2, 2, 3)
    assert report.stubbed == 1
    assert_same_graph(db, fresh)


def _stubs(content: dict[str, Any]) -> dict[str, bool]:
    return {r[0]: r[2] for r in content["articles"]}


def test_article_content_by_offset_equals_by_title(
    sample: Path, keys: dict[str, list[str]]
) -> None:
    """What an update compares a rewritten article with: read with neighbours named from
    the article table, or by Kùzu; a table that names an offset otherwise than the graph
    (not this graph's) is not used. Checked against whole tables too."""
    titles = keys["titles"]
    with GraphStore.open(sample, read_only=True) as store:
        edits = GraphEdits(store)
        table = store.article_table()
        assert table is not None
        by_title = edits.article_content(titles)
        with pytest.MonkeyPatch.context() as mp:  # the table is this graph's: no fallback

            def no_fallback(*_: object) -> None:
                raise AssertionError("read by title")

            mp.setattr(GraphEdits, "_content_by_title", no_fallback)
            by_offset = edits.article_content(titles, table.titles)
        assert by_offset == by_title
        wrong = edits.article_content(titles, lambda offsets: ["Elsewhere"] * len(offsets))
        assert wrong == by_title
        links = store.query(
            "MATCH (a:Article)-[r:LINKS_TO]->(b:Article) RETURN a.title AS a, b.title AS b, "
            "r.count AS n, r.inferred AS i"
        )
        mentions = store.query(
            "MATCH (s:Section)-[m:MENTIONS]->(b:Article) RETURN s.id AS s, s.article AS a, "
            "b.title AS b"
        )
    assert by_title.links == {
        (r["a"], r["b"]): (r["n"], r["i"]) for r in links if r["a"] in set(titles)
    }
    assert len(by_title.links) > 50 and by_title.categories
    got = {(s, m[0]) for s, ms in by_title.mentions.items() for m in ms}
    assert got == {(r["s"], r["b"]) for r in mentions if r["a"] in set(titles)}
    assert set(by_title.sections) == set(by_title.mentions) and len(by_title.sections) > 20

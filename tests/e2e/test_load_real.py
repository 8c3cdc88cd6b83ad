"""Real dumps and corpora loaded into a real Kùzu graph with the real model.

Each assertion is something a person can check by reading the source file.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

from kg_agent.embedding import Embedder
from kg_agent.ingest.pipeline import LoadReport
from kg_agent.store import GraphStore
from kg_agent.store.section_ids import is_lead, lead_id, section_id
from tests.e2e.conftest import LATGALIAN

Graph = tuple[Path, LoadReport]
Opener = Callable[[Path], GraphStore]


# ---------------------------------------------------------------- the shipped sample
def test_sample_counts_and_redirects(sample_graph: Graph, open_store: Opener) -> None:
    db, report = sample_graph
    assert (report.articles, report.redirects, report.disambiguation_pages) == (34, 4, 1)
    store = open_store(db)
    st = store.stats()
    assert st.articles == 34 and st.redirects == 4
    # Namespace 10/14 pages are not articles.
    assert store.article("Template:Infobox person") is None
    assert store.article("Category:Computer pioneers") is None
    # Redirects are aliases, and links written to a redirect title land on the target.
    assert store.resolve_title("Ada Byron") == "Ada Lovelace"
    assert store.resolve_title("Babbage") == "Charles Babbage"
    for alias in ("Ada Byron", "Babbage", "Turing", "ENIAC computer"):
        assert store.article(alias) is None, f"{alias} became an article or stub"


def test_sample_links_sections_and_categories(sample_graph: Graph, open_store: Opener) -> None:
    store = open_store(sample_graph[0])
    assert "Charles Babbage" in dict(store.outgoing_links("Analytical Engine"))
    # [[turing machine]] (lower case) and [[Bletchley_Park|...]] (underscore) resolve.
    assert "Turing machine" in dict(store.outgoing_links("Alan Turing"))
    linking_to_bp = dict(store.incoming_links("Bletchley Park"))
    assert "Alan Turing" in linking_to_bp or "Colossus computer" in linking_to_bp
    assert "Computer pioneers" in store.categories_of("Alan Turing")
    sections = store.article_sections("Alan Turing")
    assert sections[0]["heading_path"] == "" and sections[0]["level"] == 1
    # the loader names sections as the readers look them up: the lead is TITLE::0000
    leads = store.lead_sections(["Alan Turing", "Charles Babbage", "No such article"])
    assert sorted(leads) == ["Alan Turing", "Charles Babbage"]
    assert leads["Alan Turing"].section_id == lead_id("Alan Turing")
    assert is_lead(leads["Alan Turing"].section_id)
    assert leads["Alan Turing"].text == sections[0]["text"]
    ids = [h.section_id for h, _ in store.sections_of_articles(["Alan Turing"])]
    assert ids == [section_id("Alan Turing", i) for i in range(len(sections))]
    assert [is_lead(i) for i in ids] == [True] + [False] * (len(ids) - 1)
    texts = " ".join(s["text"] for s in sections)
    for markup in ("[[", "{{", "<ref", "'''", "{|"):
        assert markup not in texts
    disamb = store.article("Mark I")
    assert disamb is not None and disamb["is_disambiguation"]


def test_sample_pagerank_is_sane(sample_graph: Graph, open_store: Opener) -> None:
    store = open_store(sample_graph[0])
    top = [t for t, _ in store.stats(top=5).top_pagerank]
    assert "Alan Turing" in top and "Charles Babbage" in top
    # Much-linked pages outrank pages nothing links to; stubs get no rank.
    assert store.article("Alan Turing")["pagerank"] > store.article("Mark I")["pagerank"]  # type: ignore[index]
    stub = store.query("MATCH (a:Article) WHERE a.is_stub RETURN a.pagerank AS pr LIMIT 1")
    assert stub and stub[0]["pr"] == 0.0


def test_sample_search(sample_graph: Graph, open_store: Opener, embedder: Embedder) -> None:
    store = open_store(sample_graph[0])
    hits = store.vector_search(embedder.embed_query("a machine with a mill and a store"), 3)
    assert hits[0].title == "Analytical Engine"
    assert hits == sorted(hits, key=lambda h: -h.score)
    assert store.fts_search("Lucasian professor", 3)[0].title == "Charles Babbage"


# ---------------------------------------------------------------- English Wikipedia sample
def test_enwiki_counts(enwiki_graph: Graph, open_store: Opener) -> None:
    db, report = enwiki_graph
    # 106 articles; 99 of the 100 redirects are in namespace 0 (one is a Wikipedia: page).
    assert (report.articles, report.redirects, report.disambiguation_pages) == (106, 99, 8)
    st = open_store(db).stats()
    assert st.articles == 106 and st.redirects == 99
    assert st.links > 20000 and st.mentions > st.links * 0.9
    assert st.stub_articles > 10000  # the sample's link graph is open: most targets lie outside


def test_enwiki_article_sections_and_links(enwiki_graph: Graph, open_store: Opener) -> None:
    store = open_store(enwiki_graph[0])
    paths = {s["heading_path"] for s in store.article_sections("Anarchism")}
    assert {"Etymology and terminology", "History > Origins"} <= paths
    # No section survives for References / External links.
    assert not any(p.split(" > ")[0] in {"References", "External links"} for p in paths)
    out = dict(store.outgoing_links("Anarchism"))
    assert out["Pierre-Joseph Proudhon"] >= 5  # linked in several sections
    # The evidence edge starts in the section that names the target.
    mentions = store.query(
        "MATCH (:Article {title: 'Anarchism'})-[:HAS_SECTION]->(s:Section)"
        "-[:MENTIONS]->(:Article {title: 'Taoism'}) RETURN s.heading_path AS h"
    )
    assert [m["h"] for m in mentions] == ["History > Origins"]
    assert {"1879 births", "1955 deaths"} <= set(store.categories_of("Albert Einstein"))


def test_enwiki_redirects_resolved(enwiki_graph: Graph, open_store: Opener) -> None:
    store = open_store(enwiki_graph[0])
    assert store.resolve_title("AynRand") == "Ayn Rand"
    assert store.resolve_title("ANOVA") == "Analysis of variance"
    # Target outside the sample: the redirect points at a stub, filled in by a later load.
    assert store.resolve_title("AccessibleComputing") == "Computer accessibility"
    assert store.article("Computer accessibility")["is_stub"]  # type: ignore[index]
    redirect_titles = [r["t"] for r in store.query("MATCH (r:Redirect) RETURN r.title AS t")]
    leaked = store.query(
        "MATCH (a:Article) WHERE a.title IN $t RETURN count(a) AS n", {"t": redirect_titles}
    )
    assert leaked[0]["n"] == 0, "a redirect title became an article instead of an alias"


def test_enwiki_pagerank_and_search(enwiki_graph: Graph, open_store: Opener) -> None:
    store = open_store(enwiki_graph[0])
    pr = {t: store.article(t)["pagerank"] for t in ("Aristotle", "Actrius")}  # type: ignore[index]
    # 8 sample articles link to Aristotle, none to Actrius.
    assert pr["Aristotle"] > 5 * pr["Actrius"]
    q = "fraction of solar radiation reflected by a surface"
    assert store.fts_search(q, 3)[0].title == "Albedo"
    assert store.fts_search("Apollo 11 landed the first humans on the Moon", 1)[0].title == (
        "Apollo 11"
    )
    assert not store.stats().indexes.vector  # loaded graph only (tests/e2e/conftest.py)


# ---------------------------------------------------------------- Latgalian Wikipedia (closed)
def test_latgalian_complete_wiki(
    latgalian_graph: Graph, open_store: Opener, shared_data_dir: Path
) -> None:
    db, report = latgalian_graph
    # 1,050 namespace-0 pages: 903 articles and 147 redirects (48 more are in other namespaces).
    assert report.articles == 903 and report.redirects == 147
    store = open_store(db)
    st = store.stats(top=10)
    assert st.indexes.text and st.indexes.pagerank and not st.indexes.vector  # graph only
    # The dump is the whole wiki, so a stub is a red link: no page of that title exists.
    raw = (shared_data_dir / LATGALIAN).read_text(encoding="utf-8")
    red = store.query(
        "MATCH (:Article)-[r:LINKS_TO]->(a:Article) WHERE a.is_stub "
        "RETURN a.title AS t, count(r) AS n ORDER BY n DESC, t LIMIT 5"
    )
    assert red[0]["t"] == "Laika zona" and red[0]["n"] >= 80
    for row in red:
        assert f"<title>{row['t']}</title>" not in raw
    to_real = store.query(
        "MATCH (:Article)-[r:LINKS_TO]->(b:Article) WHERE NOT b.is_stub RETURN count(r) AS n"
    )[0]["n"]
    assert to_real > 2500
    top = st.top_pagerank
    assert top[0][1] > 5.0 / st.articles  # a hub: several times the mean rank
    assert all(p >= q for (_, p), (_, q) in itertools.pairwise(top))


# ---------------------------------------------------------------- 2WikiMultihopQA passages
def test_2wiki_corpus_graph(twowiki_graph: Graph, open_store: Opener, embedder: Embedder) -> None:
    db, report = twowiki_graph
    # the tests' pool: 1,408 of the shared 6,119 passages (tests/support/twowiki_pool.py)
    assert report.articles == 1408 and report.format == "passages"
    store = open_store(db)
    st = store.stats()
    assert st.articles == 1408 and st.stub_articles == 0
    assert st.mentions > 300 and st.inferred_links == st.links
    # The passage on Henriette of France names her mother, whose passage is in the pool.
    henriette = "Henriette of France (1727–1752)"
    assert "Marie Leszczyńska" in dict(store.outgoing_links(henriette))
    # A phrase from a passage finds that passage, among other princesses named Henriette.
    text = store.article_sections(henriette)[0]["text"]
    hits = store.vector_search(embedder.embed_query(text[:200]), 5)
    assert hits[0].title == henriette
    assert "Princess Henriette of Belgium" in {h.title for h in hits}
    # BM25 on words only this passage has.
    assert store.fts_search("Henriette princess twin Leszczyńska", 3)[0].title == henriette

"""A graph of schema 1 (earlier kg-agent: vectors on Section, Kùzu's full-text indexes)
is upgraded in place by ``kg-agent reindex``, keeping its vectors."""

from __future__ import annotations

from pathlib import Path

import kuzu
import numpy as np
from click.testing import CliRunner

from kg_agent.cli import SAMPLE_DUMP, main
from kg_agent.embedding import Embedder
from kg_agent.ingest.pipeline import LoadOptions, load_source
from kg_agent.store import GraphStore

# The schema-1 DDL, as kg-agent 0.1 (commit d44af2b) created it.
V1_DDL = [
    "CREATE NODE TABLE Meta(key STRING PRIMARY KEY, value STRING)",
    "CREATE NODE TABLE Load(id STRING PRIMARY KEY, source STRING, format STRING, "
    "fingerprint STRING, started_at STRING, finished_at STRING, articles INT64, "
    "redirects INT64, sections INT64, model STRING)",
    "CREATE NODE TABLE Article(title STRING PRIMARY KEY, page_id INT64, is_stub BOOLEAN, "
    "is_disambiguation BOOLEAN, pagerank DOUBLE, n_sections INT64, word_count INT64, "
    "load_id STRING)",
    "CREATE NODE TABLE Section(id STRING PRIMARY KEY, article STRING, heading STRING, "
    "heading_path STRING, level INT64, ordinal INT64, part INT64, text STRING, "
    "word_count INT64, embedding FLOAT[384])",
    "CREATE NODE TABLE Category(name STRING PRIMARY KEY)",
    "CREATE NODE TABLE Redirect(title STRING PRIMARY KEY, load_id STRING)",
    "CREATE REL TABLE HAS_SECTION(FROM Article TO Section)",
    "CREATE REL TABLE LINKS_TO(FROM Article TO Article, count INT64, inferred BOOLEAN)",
    "CREATE REL TABLE MENTIONS(FROM Section TO Article, count INT64, inferred BOOLEAN)",
    "CREATE REL TABLE IN_CATEGORY(FROM Article TO Category)",
    "CREATE REL TABLE REDIRECTS_TO(FROM Redirect TO Article)",
]
TEXTS = {
    "Albedo": "Albedo is the fraction of sunlight that a surface reflects.",
    "Moon": "The Moon is Earth's only natural satellite; its albedo is low.",
    "Anarchism": "Anarchism is a political philosophy that rejects the state.",
}


def make_v1_graph(db: Path, embedder: Embedder) -> None:
    conn = kuzu.Connection(kuzu.Database(str(db)))
    for stmt in V1_DDL:
        conn.execute(stmt)
    vectors = embedder.embed([f"{t}: {x}" for t, x in TEXTS.items()])
    for (title, text), vec in zip(TEXTS.items(), vectors, strict=True):
        conn.execute(
            "CREATE (:Article {title: $t, page_id: 1, is_stub: false, is_disambiguation: false, "
            "pagerank: 0.0, n_sections: 1, word_count: 9, load_id: 'l1'})",
            {"t": title},
        )
        conn.execute(
            "CREATE (:Section {id: $i, article: $t, heading: '', heading_path: '', level: 1, "
            "ordinal: 0, part: 0, text: $x, word_count: 9, embedding: $v})",
            {"i": f"{title}::0000", "t": title, "x": text, "v": np.asarray(vec).tolist()},
        )
        conn.execute(
            "MATCH (a:Article {title: $t}), (s:Section {id: $i}) CREATE (a)-[:HAS_SECTION]->(s)",
            {"t": title, "i": f"{title}::0000"},
        )
    conn.execute(
        "MATCH (a:Article {title: 'Moon'}), (b:Article {title: 'Albedo'}) "
        "CREATE (a)-[:LINKS_TO {count: 1, inferred: false}]->(b)"
    )
    conn.execute(
        "CREATE (:Load {id: 'l1', source: 'x', format: 'mediawiki', fingerprint: 'f', "
        "started_at: '', finished_at: '', articles: 3, redirects: 0, sections: 3, "
        "model: $m})",
        {"m": embedder.name},
    )
    for k, v in {
        "schema_version": "1",
        "model": embedder.name,
        "dimension": "384",
        "indexes_stale": "0",
        "pagerank_done": "1",
    }.items():
        conn.execute("CREATE (:Meta {key: $k, value: $v})", {"k": k, "v": v})
    conn.execute(
        "CALL CREATE_VECTOR_INDEX('Section', 'section_embedding_idx', 'embedding', "
        "metric := 'cosine')"
    )
    conn.execute(
        "CALL CREATE_FTS_INDEX('Section', 'section_text_fts', ['heading', 'text'], "
        "stemmer := 'english')"
    )
    conn.execute(
        "CALL CREATE_FTS_INDEX('Article', 'article_title_fts', ['title'], stemmer := 'english')"
    )
    conn.close()


def test_reindex_upgrades_a_schema_1_graph(tmp_path: Path, embedder: Embedder) -> None:
    db = tmp_path / "old.kuzu"
    make_v1_graph(db, embedder)
    runner = CliRunner()
    refused = runner.invoke(main, ["stats", "--db", str(db)])
    assert refused.exit_code == 1 and "kg-agent reindex" in refused.output
    done = runner.invoke(main, ["reindex", "--db", str(db), "-q"])
    assert done.exit_code == 0, done.output
    assert "upgraded to the current schema" in done.output
    with GraphStore.open(db, read_only=True) as store:
        st = store.stats()
        assert (st.articles, st.sections, st.links, st.loads) == (3, 3, 1, 1)
        assert st.indexes.embeddings == "complete" and st.indexes.vector and st.indexes.text
        assert [r["status"] for r in store.loads()] == ["complete"]
        hits = store.vector_search(embedder.embed_query("What does a surface reflect?"), 2)
        assert hits[0].title == "Albedo"
        assert store.fts_search("political philosophy", 1)[0].title == "Anarchism"
    again = runner.invoke(main, ["reindex", "--db", str(db), "-q"])
    assert again.exit_code == 0 and "upgraded" not in again.output


def test_an_upgraded_graph_takes_new_loads(tmp_path: Path, embedder: Embedder) -> None:
    """Kùzu cannot drop a vector index alone (the table then refuses inserts), so the
    upgrade must leave a Section table that later loads can write to."""
    db = tmp_path / "old.kuzu"
    make_v1_graph(db, embedder)
    assert CliRunner().invoke(main, ["reindex", "--db", str(db), "-q"]).exit_code == 0
    report = load_source(SAMPLE_DUMP, db, options=LoadOptions(progress=False))
    assert report.sections == 145
    with GraphStore.open(db, read_only=True) as store:
        st = store.stats()
        assert st.sections == 148 and st.indexes.embeddings == "complete" and st.indexes.vector
        assert (
            store.vector_search(embedder.embed_query("What does a surface reflect?"), 1)[0].title
            == "Albedo"
        )
        (h,) = store.query("MATCH (s:Section) WHERE s.text_hash IS NULL RETURN count(s) AS n")
        assert h["n"] == 0, "upgraded sections carry the hash that `kg-agent embed` compares"

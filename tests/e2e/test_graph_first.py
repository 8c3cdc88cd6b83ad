"""A graph loaded without embeddings answers from BM25 and the graph, and says so."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from kg_agent.agent import KnowledgeGraphAgent
from kg_agent.cli import SAMPLE_DUMP, main
from kg_agent.ingest.pipeline import LoadOptions, load_source
from kg_agent.retrieval.semantic import SEMANTIC_OFF
from kg_agent.store import GraphStore


@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("gf") / "g.kuzu"
    report = load_source(
        SAMPLE_DUMP, db, options=LoadOptions(progress=False, embeddings="later", workers=1)
    )
    assert report.embeddings == "later" and "embed" not in report.timings
    return db


def test_stats_says_semantic_search_is_off(graph: Path) -> None:
    with GraphStore.open(graph) as store:
        st = store.stats()
        assert st.indexes.embeddings == "none" and not st.indexes.vector
        assert st.indexes.text and st.indexes.pagerank and st.sections == 145
        (n,) = store.query("MATCH (v:SectionVector) RETURN count(v) AS n")
        assert n["n"] == 0
        (h,) = store.query("MATCH (s:Section) WHERE s.text_hash IS NULL RETURN count(s) AS n")
        assert h["n"] == 0  # what `kg-agent embed` will compare vectors against
    out = CliRunner().invoke(main, ["stats", "--db", str(graph)]).output
    assert "semantic search off until 'kg-agent embed'" in out


def test_ask_answers_from_bm25_and_the_graph(graph: Path) -> None:
    with KnowledgeGraphAgent(str(graph), offline=True) as agent:
        result = agent.query(
            "Which professorship at Cambridge was held by the designer of the Analytical Engine?"
        )
    titles = [e.title for e in result.evidence]
    assert "Charles Babbage" in titles[:3] and "Analytical Engine" in titles[:3]
    # the offline answer reads the chain (the designer, then what the designer held): it
    # quotes the designer's sentence and the one that leads to him; the professorship is
    # in the evidence BM25 and the graph found
    assert "designed by the English mathematician Charles Babbage" in result.answer
    assert any("Lucasian Professor" in e.content for e in result.evidence)
    assert result.warnings == [SEMANTIC_OFF]
    sources = {e.source for e in result.evidence}
    assert "entity" in sources or "graph" in sources


def test_cli_ask_prints_the_warning_once(graph: Path) -> None:
    res = CliRunner().invoke(
        main, ["ask", "How is Ada Lovelace connected to IBM?", "--db", str(graph), "--json"]
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["warnings"] == [SEMANTIC_OFF] and data["evidence"]


def test_neighbours_are_ranked_by_bm25_without_vectors(graph: Path) -> None:
    with KnowledgeGraphAgent(str(graph), offline=True) as agent:
        scored = agent.components.entity_graph(agent.config.candidates).score_titles(
            "mathematical analysis of the engine", ["Analytical Engine", "IBM", "No such article"]
        )
    assert set(scored) == {"Analytical Engine", "IBM"}
    assert scored["Analytical Engine"].similarity == 1.0  # the best BM25 hit
    assert scored["IBM"].content  # no matching word: its lead section, read


def test_ask_without_a_text_index_says_reindex_fixes_it(tmp_path: Path) -> None:
    """Index files lost (or a load cut short before them): ask answers from what is
    left and says what is missing and which command rebuilds it."""
    db = tmp_path / "g.kuzu"
    load_source(SAMPLE_DUMP, db, options=LoadOptions(progress=False, embeddings="none"))
    with GraphStore.open(db) as store:
        gen = store.generation_path()
    assert gen is not None
    for part in ("sections", "titles"):
        shutil.rmtree(gen / part)
    result = CliRunner().invoke(main, ["ask", "Who built the Harvard Mark I?", "--db", str(db)])
    assert result.exit_code == 0, result.output
    warned = [ln for ln in result.stderr.splitlines() if "full-text index" in ln]
    assert len(warned) == 1 and f"kg-agent reindex --db {db}" in warned[0], result.stderr
    assert "Binder exception" not in result.output and "Traceback" not in result.output

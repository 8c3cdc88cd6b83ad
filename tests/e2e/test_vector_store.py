"""A graph whose vector index stores its vectors (``--vector-store index``, store/vectors.py).

The graph keeps each section's key and text hash, its ``embedding`` column NULL; the
index beside it is the only copy. Such a graph must answer as one that keeps the
vectors, take updates and the embed stage as that one does, and ``compact`` must move
the vectors between the two. Real CLI, real model, real Kùzu.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kg_agent.agent import KnowledgeGraphAgent
from kg_agent.cli import SAMPLE_DUMP
from kg_agent.embedding import Embedder
from kg_agent.exceptions import DatabaseError
from kg_agent.ingest import embed_graph as embed_module
from kg_agent.ingest.pipeline import LoadOptions, LoadReport, load_source, reindex
from kg_agent.ingest.update import UpdateOptions, update_graph
from kg_agent.store import GraphStore
from tests.support.cli import kg_agent_exe
from tests.support.graph_compare import assert_same_graph, copy_graph, graph_content
from tests.support.newer_sample import write_newer_sample

ENV = dict(os.environ, HF_HUB_OFFLINE="1")
QUESTIONS = (
    "How is Ada Lovelace connected to IBM?",
    "Who designed the Analytical Engine?",
    "Where did Alan Turing work during the war?",
)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*kg_agent_exe(), *args], capture_output=True, text=True, timeout=600, env=ENV
    )


def _load(source: Path, db: Path, embedder: Embedder | None, **options: Any) -> Path:
    load_source(
        source,
        db,
        embedder=embedder,
        options=LoadOptions(progress=False, cache=False, vector_store="index", **options),
    )
    return db


def _graph_vectors(db: Path) -> int:
    """Vectors the graph's own column holds (the index's are not counted)."""
    with GraphStore.open(db) as store:
        rows = store.query("MATCH (v:SectionVector) WHERE v.embedding IS NOT NULL RETURN count(v)")
        return int(next(iter(rows[0].values())))


def _answers(db: Path, mode: str, embedder: Embedder) -> list[tuple[str, list[str]]]:
    """Each question's answer and cited sections (offline), through the Python API."""
    with KnowledgeGraphAgent(str(db), embedder=embedder, retrieval=mode) as agent:
        results = [agent.query(q) for q in QUESTIONS]
    return [(r.answer, [c.section_id for c in r.citations]) for r in results]


@pytest.fixture(scope="module")
def in_index(embedder: Embedder, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _load(SAMPLE_DUMP, tmp_path_factory.mktemp("in-index") / "g.kuzu", embedder)


def test_a_graph_whose_index_stores_its_vectors_answers_as_one_that_keeps_them(
    in_index: Path, sample_graph: tuple[Path, LoadReport], embedder: Embedder, no_key: None
) -> None:
    kept, _ = sample_graph
    with GraphStore.open(in_index) as store:
        assert store.meta()["vector_store"] == "index" and store.vectors_in_index()
        sections = store.table_counts()["Section"]
        assert store.check_vector_index() == sections
    assert _graph_vectors(in_index) == 0 and _graph_vectors(kept) == sections
    # the same vectors (the index's exact segment holds them as float32), the same answers
    a, b = graph_content(in_index), graph_content(kept)
    assert a["vectors"].keys() == b["vectors"].keys()
    for sid, vec in a["vectors"].items():
        np.testing.assert_allclose(vec, b["vectors"][sid], atol=1e-6)
    assert a["answers"] == b["answers"]
    # an article's sections with their vectors (what scores a seed's sections), by id
    titles = ["Ada Lovelace", "Analytical Engine"]
    with GraphStore.open(in_index) as one, GraphStore.open(kept) as other:
        mine, theirs = one.sections_of_articles(titles), other.sections_of_articles(titles)
    assert [h for h, _ in mine] == [h for h, _ in theirs] and len(mine) > 2
    for (_, vec), (_, want) in zip(mine, theirs, strict=True):
        np.testing.assert_allclose(vec, want, atol=1e-6)
    for mode in ("dense", "graph"):  # the graph mode scores its seeds' sections by id
        assert _answers(in_index, mode, embedder) == _answers(kept, mode, embedder), mode
    stats = json.loads(_cli("stats", "--db", str(in_index), "--json").stdout)
    assert stats["vector_store"] == "index"


def test_an_update_of_it_equals_a_fresh_load_of_the_newer_dump(
    embedder: Embedder, tmp_path: Path
) -> None:
    """The update reads the vectors it reuses from the index, adds a segment for the new
    ones and deletes the replaced rows, leaving the graph's column NULL (the CLI's update
    is the default graph's, in test_update.py)."""
    newer = write_newer_sample(tmp_path / "sample-v2-pages-articles.xml")
    db = _load(SAMPLE_DUMP, tmp_path / "updated" / "g.kuzu", embedder)
    report = update_graph(
        newer, db, embedder=embedder, options=UpdateOptions(progress=False, cache=False)
    )
    assert report.sections_reused > 0 and report.vectors_added > 0
    fresh = _load(newer, tmp_path / "fresh" / "g.kuzu", embedder)
    assert_same_graph(db, fresh)
    assert _graph_vectors(db) == 0


def test_compact_moves_the_vectors_into_the_index_and_back(
    sample_graph: tuple[Path, LoadReport], tmp_path: Path
) -> None:
    kept, _ = sample_graph
    db = copy_graph(kept, tmp_path / "g.kuzu")
    before = graph_content(db)
    done = _cli("compact", "--db", str(db), "--vector-store", "index", "--json", "-q")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["vector_store"] == "index" and report["bytes_after"] < report["bytes_before"]
    assert report["vector_bytes_after"] > 0 and _graph_vectors(db) == 0
    moved = graph_content(db)
    for sid, vec in before["vectors"].items():
        np.testing.assert_allclose(moved["vectors"][sid], vec, atol=1e-6)
    assert moved["answers"] == before["answers"]
    assert _cli("check", "--db", str(db)).returncode == 0
    back = _cli("compact", "--db", str(db), "--vector-store", "graph", "--json", "-q")
    assert back.returncode == 0 and json.loads(back.stdout)["vector_store"] == "graph"
    assert _graph_vectors(db) == len(before["vectors"])
    assert_same_graph(db, kept, atol=1e-6)


def test_embed_puts_the_vectors_in_the_index_once_even_when_cut_short(
    sample_graph: tuple[Path, LoadReport], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The embed stage builds the index from its batches first, then copies their keys:
    a run stopped between the two (the index named, no key copied) and run again leaves
    each vector in the index once."""
    kept, _ = sample_graph
    db = _load(SAMPLE_DUMP, tmp_path / "g.kuzu", None, embeddings="later")
    real_copy = GraphStore.copy_parquet

    def stop_at_the_keys(self: GraphStore, table: str, *args: Any, **kw: Any) -> None:
        if table == "SectionVector":
            raise KeyboardInterrupt
        real_copy(self, table, *args, **kw)

    monkeypatch.setattr(GraphStore, "copy_parquet", stop_at_the_keys)
    with pytest.raises(BaseException):  # noqa: B017 - the interruption, however reported
        embed_module.embed_graph(str(db), cache=False, progress=False)
    monkeypatch.setattr(GraphStore, "copy_parquet", real_copy)
    with GraphStore.open(db) as store:
        index = store.vector_index()
        assert index is not None and store.table_counts().get("SectionVector", 0) == 0
        held = len(index)
    done = _cli("embed", "--db", str(db), "--no-cache")
    assert done.returncode == 0, done.stderr
    with GraphStore.open(db) as store:
        sections = store.table_counts()["Section"]
        assert held == sections == store.check_vector_index()
        assert store.index_status().embeddings == "complete"
    assert _graph_vectors(db) == 0
    a, b = graph_content(db), graph_content(kept)
    for sid, vec in b["vectors"].items():
        np.testing.assert_allclose(a["vectors"][sid], vec, atol=1e-5)


def _one_error(done: subprocess.CompletedProcess[str]) -> str:
    errors = [ln for ln in done.stderr.splitlines() if ln.startswith("Error")]
    assert done.returncode != 0 and len(errors) == 1, done.stderr
    return errors[0]


def test_a_lost_index_is_named_and_embedding_again_mends_it(
    in_index: Path, tmp_path: Path, embedder: Embedder
) -> None:
    """The index is the vectors' only copy: ``check`` and ``reindex`` say to embed again
    (a rebuild from nothing would forget them), and ``embed --force`` does."""
    db = copy_graph(in_index, tmp_path / "g.kuzu")
    shutil.rmtree(Path(f"{db}.indexes") / "vectors")
    error = _one_error(_cli("check", "--db", str(db)))
    assert "kg-agent embed" in error and "--force" in error, error
    with pytest.raises(DatabaseError, match=r"embed --db .* --force"):
        reindex(str(db), progress=False)
    report = embed_module.embed_graph(str(db), embedder, cache=False, progress=False, force=True)
    assert report.replaced == report.embedded > 0
    assert _cli("check", "--db", str(db)).returncode == 0
    with GraphStore.open(db) as store:
        assert store.check_vector_index() == store.table_counts()["Section"]

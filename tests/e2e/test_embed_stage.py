"""``kg-agent embed``: a graph loaded without vectors gets the ones a one-command load gives.

Real CLI in a subprocess, the real model (``--no-cache``: the vectors are computed),
a real Kùzu graph; killed with ``SIGKILL`` mid-run and resumed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from kg_agent.agent import KnowledgeGraphAgent
from kg_agent.cli import SAMPLE_DUMP
from kg_agent.embedding import Embedder
from kg_agent.exceptions import SchemaMismatchError
from kg_agent.ingest.embed_graph import work_dir
from kg_agent.ingest.pipeline import LoadOptions, load_source
from kg_agent.retrieval.semantic import SEMANTIC_OFF
from kg_agent.store import GraphStore
from tests.support.cli import assert_no_process_holds, kg_agent_exe

ENV = dict(os.environ, HF_HUB_OFFLINE="1")


def vectors(db: Path) -> dict[str, np.ndarray]:
    with GraphStore.open(db) as store:  # the graph's column, or its index's copy
        ids, matrix = store.section_embeddings()
    return dict(zip(ids, np.asarray(matrix, dtype=np.float32), strict=True))


def graph_first(db: Path) -> Path:
    load_source(SAMPLE_DUMP, db, options=LoadOptions(progress=False, embeddings="later"))
    return db


def embed(db: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*kg_agent_exe(), "embed", "--db", str(db), "--no-cache", *extra],
        capture_output=True,
        text=True,
        timeout=600,
        env=ENV,
    )


@pytest.fixture(scope="module")
def one_command(tmp_path_factory: pytest.TempPathFactory) -> dict[str, np.ndarray]:
    """The vectors of a default load (embedding while loading)."""
    db = tmp_path_factory.mktemp("now") / "g.kuzu"
    load_source(SAMPLE_DUMP, db, options=LoadOptions(progress=False, cache=False))
    return vectors(db)


def assert_same_vectors(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> None:
    """Each section's vector is its own, up to float noise.

    Noise, not equality: how sections are grouped into batches changes the padding and
    so torch's kernels, which moves components by up to ~1e-3 (seen at ``--chunk 10``
    against a load's batches); a wrong or stale vector is far below this cosine.
    """
    assert got.keys() == want.keys()
    worst = min(float(np.dot(got[k], want[k])) for k in want)  # unit vectors: cosine
    assert worst > 0.9999, f"a vector moved: cosine {worst}"


def test_embed_gives_a_graph_first_load_the_one_command_vectors(
    tmp_path: Path, one_command: dict[str, np.ndarray]
) -> None:
    db = graph_first(tmp_path / "g.kuzu")
    with KnowledgeGraphAgent(db_path=str(db)) as agent:
        assert any(SEMANTIC_OFF in w for w in agent.query("Who built the Harvard Mark I?").warnings)
    done = embed(db)
    assert done.returncode == 0, done.stderr
    assert "Embedded 145 of 145 sections" in done.stdout and "vector index built" in done.stdout
    assert_same_vectors(vectors(db), one_command)
    with GraphStore.open(db) as store:
        status = store.index_status()
        assert status.embeddings == "complete" and status.vector
    with KnowledgeGraphAgent(db_path=str(db)) as agent:
        result = agent.query("Who built the Harvard Mark I?")
        assert not any(SEMANTIC_OFF in w for w in result.warnings)
        assert result.evidence
    assert not work_dir(str(db)).exists(), "the work folder goes once the vectors are in"
    check = subprocess.run(
        [*kg_agent_exe(), "check", "--db", str(db)], capture_output=True, text=True, env=ENV
    )
    assert check.returncode == 0, check.stdout + check.stderr  # checksums rewritten
    again = embed(db)
    assert again.returncode == 0 and "Embedded 0 of 145" in again.stdout


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["kill-9", "sigterm"])
def test_a_stopped_embed_loses_at_most_a_batch_and_resumes(
    sig: int, tmp_path: Path, one_command: dict[str, np.ndarray]
) -> None:
    db = graph_first(tmp_path / "g.kuzu")
    batches = work_dir(str(db)) / "batches"
    proc = subprocess.Popen(
        [*kg_agent_exe(), "embed", "--db", str(db), "--no-cache", "--chunk", "10"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    deadline = time.time() + 300
    while len(list(batches.glob("b*.parquet"))) < 2:
        assert proc.poll() is None, f"embed ended before the kill point: {proc.communicate()}"
        assert time.time() < deadline, "kill point never reached"
        time.sleep(0.02)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    if sig == signal.SIGKILL:
        assert proc.returncode == -signal.SIGKILL
    else:  # like Ctrl-C: one line, status 1
        errors = [ln for ln in err.splitlines() if ln.startswith("Error:")]
        assert proc.returncode == 1 and len(errors) == 1 and "resume" in errors[0], err
        assert "Traceback" not in err
    assert_no_process_holds(db)
    with GraphStore.open(db) as store:
        assert store.table_counts().get("SectionVector", 0) == 0, "nothing half-written"
        assert store.index_status().embeddings == "none"
    kept = len(list(batches.glob("b*.parquet")))
    done = embed(db, "--chunk", "10")
    assert done.returncode == 0, done.stderr
    assert f"resuming: {kept} of 15 batches done" in done.stderr
    assert_same_vectors(vectors(db), one_command)


def test_embed_fills_in_what_a_graph_first_addition_left_out(tmp_path: Path) -> None:
    """A graph with vectors plus a load without them is ``partial``; embed completes it."""
    corpus = tmp_path / "more.json"
    corpus.write_text(
        '[{"title": "Difference engine replica", "text": "A working difference engine was '
        "built by the Science Museum in London in 1991 from Babbage's plans.\"}]"
    )
    db = tmp_path / "g.kuzu"
    load_source(SAMPLE_DUMP, db, options=LoadOptions(progress=False))
    load_source(corpus, db, options=LoadOptions(progress=False, embeddings="later"))
    with GraphStore.open(db) as store:
        assert store.index_status().embeddings == "partial"
        before = store.table_counts()
    done = embed(db, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["embedded"] == before["Section"] - before["SectionVector"] == 1
    with GraphStore.open(db) as store:
        status, after = store.index_status(), store.table_counts()
    assert status.embeddings == "complete" and status.vector
    assert after["SectionVector"] == after["Section"]
    # The index was rebuilt by recreating the table (Kùzu cannot drop an index alone):
    # the graph still takes a load with vectors, and searches them.
    later = tmp_path / "later.json"
    later.write_text(
        '[{"title": "Velvet teapot", "text": "A velvet teapot is a knitted cosy '
        'shaped like a teapot, sold at the Lyon silk market."}]'
    )
    load_source(later, db, options=LoadOptions(progress=False))
    question = Embedder().embed_query("What is a velvet teapot, knitted and sold in Lyon?")
    with GraphStore.open(db) as store:
        assert store.index_status().vector
        assert store.vector_search(question, 1)[0].title == "Velvet teapot"


def state(db: Path) -> tuple[dict[str, int], dict[str, str]]:
    with GraphStore.open(db) as store:
        return store.table_counts(), store.meta()


def test_another_model_is_refused_then_forced(tmp_path: Path, tiny_model: Path) -> None:
    """A graph records its model: another is refused in one line (graph unchanged) and
    ``--force`` re-embeds every section with it; the agent then follows the graph."""
    db = tmp_path / "g.kuzu"
    load_source(SAMPLE_DUMP, db, options=LoadOptions(progress=False))
    before = state(db)
    refused = embed(db, "--model", str(tiny_model))
    errors = [ln for ln in refused.stderr.splitlines() if ln.startswith("Error:")]
    assert refused.returncode == 1 and len(errors) == 1, refused.stderr
    assert "all-MiniLM-L6-v2" in errors[0] and "--force" in errors[0]
    assert state(db) == before
    forced = embed(db, "--model", str(tiny_model), "--force", "--json")
    assert forced.returncode == 0, forced.stderr
    report = json.loads(forced.stdout)
    assert report["embedded"] == report["computed"] == report["replaced"] == 145
    counts, meta = state(db)
    assert counts["SectionVector"] == 145
    assert (meta["model"], meta["dimension"], meta["embeddings"]) == (
        str(tiny_model),
        "32",
        "complete",
    )
    assert {len(v) for v in vectors(db).values()} == {32}
    with GraphStore.open(db) as store:
        assert store.index_status().vector
    with KnowledgeGraphAgent(db_path=str(db), offline=True) as agent:
        assert agent.embedder.name == str(tiny_model)  # the graph's model, by default
        assert agent.query("Who built the Harvard Mark I?").evidence
    with pytest.raises(SchemaMismatchError, match="--force"):
        KnowledgeGraphAgent(db_path=str(db), embedder=Embedder(), offline=True)


def test_a_changed_section_is_the_only_one_computed(tmp_path: Path) -> None:
    """A re-load with one passage edited: the next embed runs the model on that one
    section (the others' vectors come back from the embedding cache)."""
    env = dict(ENV, KG_AGENT_CACHE_DIR=str(tmp_path / "cache"))
    passages = [
        {
            "title": "Tide mill",
            "text": "A tide mill is a water mill driven by the tides.",
        },
        {"title": "Windpump", "text": "A windpump is a windmill that pumps water from a well."},
        {"title": "Noria", "text": "A noria is a wheel that lifts water into a small aqueduct."},
    ]
    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps(passages))
    db = tmp_path / "g.kuzu"
    load_source(corpus, db, options=LoadOptions(progress=False, embeddings="later"))
    args = [*kg_agent_exe(), "embed", "--db", str(db), "--json"]
    first = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["computed"] == 3
    before = vectors(db)
    passages[1]["text"] = "A windpump is a windmill used to pump water, often on farms."
    corpus.write_text(json.dumps(passages))
    load_source(corpus, db, options=LoadOptions(progress=False, embeddings="later", force=True))
    again = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert (report["computed"], report["cached"]) == (1, 2)
    after = vectors(db)
    moved = [k for k in after if float(np.dot(after[k], before[k])) < 0.9999]
    assert moved == ["Windpump::0000"]

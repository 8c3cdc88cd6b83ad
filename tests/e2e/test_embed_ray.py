"""``kg-agent embed --ray``: the embedding stage on a local Ray (``ray.init()`` on this
machine), through the real CLI, the real model and a real Kùzu graph.

The vectors must be those of the in-process path, a killed run must resume without
losing or repeating a section, and every way it can fail is one line and a graph
left as it was.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from kg_agent.cli import SAMPLE_DUMP
from kg_agent.ingest.embed_graph import embed_graph, work_dir
from kg_agent.ingest.pipeline import LoadOptions, load_source
from kg_agent.store import GraphStore
from tests.support.cli import assert_no_process_holds, kg_agent_exe

pytest.importorskip("ray", reason="Ray is the optional extra kg-agent[ray] (scripts/setup.sh)")

ENV = dict(os.environ, HF_HUB_OFFLINE="1")
SECTIONS = 145  # of the shipped sample


def graph_first(db: Path) -> Path:
    load_source(SAMPLE_DUMP, db, options=LoadOptions(progress=False, embeddings="later"))
    return db


def vectors(db: Path) -> dict[str, np.ndarray]:
    with GraphStore.open(db) as store:
        rows = store.query("MATCH (v:SectionVector) RETURN v.id AS id, v.embedding AS e")
    return {r["id"]: np.asarray(r["e"], dtype=np.float32) for r in rows}


def state(db: Path) -> tuple[dict[str, int], dict[str, str]]:
    with GraphStore.open(db) as store:
        return store.table_counts(), store.meta()


def embed(
    db: Path, *extra: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*kg_agent_exe(), "embed", "--db", str(db), "--no-cache", *extra],
        capture_output=True,
        text=True,
        timeout=600,
        env=ENV,
    )


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("Error:")]
    assert proc.returncode == 1 and len(errors) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    return errors[0]


def ray_processes() -> list[str]:
    """Ray's own daemons still running (a local Ray must end with its driver)."""
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [ln for ln in out.splitlines() if "gcs_server" in ln or "raylet" in ln]


@pytest.fixture(scope="module")
def in_process(tmp_path_factory: pytest.TempPathFactory) -> dict[str, np.ndarray]:
    """The vectors the in-process ``embed`` writes, with the same shards (chunk 50)."""
    db = graph_first(tmp_path_factory.mktemp("inproc") / "g.kuzu")
    embed_graph(str(db), chunk=50, cache=False, progress=False)
    return vectors(db)


def assert_same(got: dict[str, np.ndarray], want: dict[str, np.ndarray], tol: float) -> None:
    assert got.keys() == want.keys()
    worst = max(float(np.abs(got[k] - want[k]).max()) for k in want)
    assert worst <= tol, f"a vector moved by {worst}"


def test_ray_gives_the_in_process_vectors(
    tmp_path: Path, in_process: dict[str, np.ndarray]
) -> None:
    db = graph_first(tmp_path / "g.kuzu")
    done = embed(db, "--ray", "--ray-workers", "2", "--chunk", "50", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["embedded"] == report["sections"] == SECTIONS
    assert report["batches"] == 3 and report["vector_index"] is True
    assert "Ray: 2 model worker(s), 1 CPU and 0 GPU each, 3 shards" in done.stderr
    # same shards, same model, same settings: the same vectors (threads only reorder sums)
    assert_same(vectors(db), in_process, 1e-5)
    counts, meta = state(db)
    assert counts["SectionVector"] == SECTIONS and meta["embeddings"] == "complete"
    assert not work_dir(str(db)).exists()
    assert not ray_processes(), "the local Ray stopped with the command"


def test_a_killed_ray_embed_resumes_without_losing_or_repeating(
    tmp_path: Path, in_process: dict[str, np.ndarray]
) -> None:
    db = graph_first(tmp_path / "g.kuzu")
    batches = work_dir(str(db)) / "batches"
    args = [*kg_agent_exe(), "embed", "--db", str(db), "--no-cache", "--chunk", "10"]
    proc = subprocess.Popen(
        [*args, "--ray", "--ray-workers", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    deadline = time.time() + 300
    while len(list(batches.glob("b*.parquet"))) < 2:
        assert proc.poll() is None, f"embed ended before the kill point: {proc.communicate()}"
        assert time.time() < deadline, "kill point never reached"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert_no_process_holds(db)
    deadline = time.time() + 30
    while ray_processes() and time.time() < deadline:
        time.sleep(0.5)
    assert not ray_processes(), "kill -9 of kg-agent left Ray running"
    with GraphStore.open(db) as store:
        assert store.table_counts().get("SectionVector", 0) == 0, "nothing half-written"
    kept = len(list(batches.glob("b*.parquet")))
    assert 2 <= kept < 15
    again = embed(db, "--chunk", "10", "--ray", "--ray-workers", "2", "--json")
    assert again.returncode == 0, again.stderr
    assert f"resuming: {kept} of 15 batches done" in again.stderr
    report = json.loads(again.stdout)
    assert report["resumed_batches"] == kept
    got = vectors(db)
    assert len(got) == SECTIONS  # none missing; ids are keys, so none twice
    # chunk 10 against chunk 50: other batch neighbours, same vectors up to float noise
    assert_same(got, in_process, 1e-5)


def test_ray_not_installed_is_one_line(tmp_path: Path) -> None:
    db = graph_first(tmp_path / "g.kuzu")
    before = state(db)
    # what a Python without the extra sees: 'import ray' fails
    code = "import sys; sys.modules['ray'] = None; from kg_agent.cli import main; main()"
    proc = subprocess.run(
        [sys.executable, "-c", code, "embed", "--db", str(db), "--ray"],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=300,
    )
    assert "pip install 'kg-agent[ray]'" in one_error_line(proc)
    assert state(db) == before


def test_a_cluster_that_does_not_answer_is_one_line(tmp_path: Path) -> None:
    db = graph_first(tmp_path / "g.kuzu")
    before = state(db)
    t0 = time.perf_counter()
    proc = embed(db, "--ray", "127.0.0.1:9")
    line = one_error_line(proc)
    assert "127.0.0.1:9" in line and "Ray" in line
    assert time.perf_counter() - t0 < 120
    assert state(db) == before
    assert not ray_processes()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--device", "tpu"], "unknown device 'tpu'"),
        (["--device", "cuda"], "sees no CUDA GPU"),
        (["--ray-workers", "2", "--ray-gpus-per-worker", "1", "--ray"], "GPUs"),
    ],
    ids=["unknown-device", "no-gpu-here", "no-gpu-in-cluster"],
)
def test_device_errors_are_one_line(tmp_path: Path, args: list[str], says: str) -> None:
    import torch

    if "sees no CUDA GPU" in says and torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU")
    db = graph_first(tmp_path / "g.kuzu")
    before = state(db)
    proc = embed(db, *args)
    assert says in one_error_line(proc)
    assert state(db) == before

"""A damaged database gives one line that says so, never a silent wrong answer or a bare crash.

Kùzu 0.11.3 does not checksum its pages: bytes overwritten in the middle of the file are
read back silently, or make Kùzu die with SIGSEGV. kg-agent records a checksum of every
block when a write ends; ``kg-agent check`` compares them and reads every table, and the
``kg-agent`` executable reports a crash of its worker process as a damaged database.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from kg_agent.cli import SAMPLE_DUMP
from kg_agent.store.integrity import BLOCK, verify_checksums
from tests.support.cli import kg_agent_exe


def kg(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*kg_agent_exe(), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env or dict(os.environ),
    )


@pytest.fixture
def graph(tmp_path: Path) -> Path:
    db = tmp_path / "g.kuzu"
    done = kg("load", str(SAMPLE_DUMP), "--db", str(db), "--embeddings", "none", "-q")
    assert done.returncode == 0, done.stderr
    return db


def test_a_load_records_checksums_and_check_passes(graph: Path) -> None:
    report = verify_checksums(graph)
    assert report.recorded and report.ok
    done = kg("check", "--db", str(graph))
    assert done.returncode == 0, done.stderr
    assert "OK, every table read" in done.stdout and "checksums match" in done.stdout


def test_bytes_overwritten_in_the_middle_are_found(graph: Path) -> None:
    size = graph.stat().st_size
    offset = (size // 2) // 4096 * 4096
    with open(graph, "r+b") as fh:
        fh.seek(offset)
        old = fh.read(4096)
        fh.seek(offset)
        fh.write(bytes(255 - b for b in old))  # every byte changed
    done = kg("check", "--db", str(graph))
    assert done.returncode == 1
    (line,) = [ln for ln in done.stderr.splitlines() if ln.startswith("Error:")]
    assert "is damaged" in line and f"byte {offset // BLOCK * BLOCK:,}" in line
    assert "Traceback" not in done.stderr


def test_a_crash_of_the_worker_process_is_one_line(graph: Path, tmp_path: Path) -> None:
    """A real SIGSEGV in the process that runs the command (made here by a sitecustomize
    module that dereferences NULL, as a damaged page makes Kùzu do)."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "import ctypes, os\n"
        "if os.environ.get('KG_AGENT_SUPERVISED'):  # the worker process, not the parent\n"
        "    ctypes.string_at(0)\n",
        "utf-8",
    )
    env = dict(os.environ, PYTHONPATH=f"{hook}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    done = kg("stats", "--db", str(graph), env=env)
    assert done.returncode == 1
    (line,) = [ln for ln in done.stderr.splitlines() if ln.startswith("Error:")]
    assert "crashed (SIGSEGV)" in line and str(graph) in line and "kg-agent check" in line
    assert "Traceback" not in done.stderr


def test_reindex_rebuilds_and_check_still_passes(graph: Path) -> None:
    done = kg("reindex", "--db", str(graph), "-q")
    assert done.returncode == 0, done.stderr
    assert verify_checksums(graph).ok
    stats = kg("stats", "--db", str(graph))
    assert "full-text ready" in stats.stdout and "pagerank ready" in stats.stdout

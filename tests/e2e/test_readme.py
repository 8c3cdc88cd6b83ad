"""Every Python block of the README runs, in order, on the bundled sample."""

from __future__ import annotations

import bz2
import contextlib
import io
import os
import re
import shutil
from pathlib import Path

import pytest

from kg_agent.cli import SAMPLE_DUMP
from kg_agent.ingest.pipeline import LoadReport
from tests.support.newer_sample import write_newer_sample

README = Path(__file__).resolve().parents[2] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)


def test_the_readme_has_python_blocks() -> None:
    assert len(BLOCKS) >= 3


@pytest.fixture
def workdir(tmp_path: Path, sample_graph: tuple[Path, LoadReport]) -> Path:
    """A folder holding what the README's blocks name: demo.kuzu and a dump."""
    db, _ = sample_graph
    shutil.copy(db, tmp_path / "demo.kuzu")
    indexes = db.with_name(db.name + ".indexes")
    if indexes.exists():
        shutil.copytree(indexes, tmp_path / "demo.kuzu.indexes")
    (tmp_path / "pages-articles.xml.bz2").write_bytes(bz2.compress(SAMPLE_DUMP.read_bytes()))
    write_newer_sample(tmp_path / "newer-pages-articles.xml")
    return tmp_path


def test_every_python_block_runs(workdir: Path) -> None:
    outputs = []
    before = Path.cwd()
    os.chdir(workdir)
    try:
        for block in BLOCKS:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(block, "README.md", "exec"), {"__name__": "readme"})
            outputs.append(out.getvalue())
    finally:
        os.chdir(before)
    agent, graph, loading, current = outputs[:4]
    assert "Charles Babbage" in agent and "offline" in agent
    assert "'entity'" in graph and "Analytical Engine" in graph
    loaded = re.search(r"'articles': (\d+)", loading)
    assert loaded is not None and int(loaded.group(1)) >= 30
    assert "Analytical Engine" in loading.split("\n")[-2]  # the vector search's hits
    # the newer sample: 2 added, 2 changed, 3 deleted, 4 relinked; then one deletion
    assert current.splitlines()[0].split()[:4] == ["2", "2", "3", "4"]
    assert "'stubbed': 1" in current.splitlines()[1]  # Hollerith: still linked to

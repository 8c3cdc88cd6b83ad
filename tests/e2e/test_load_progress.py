"""Progress lines are right: counts never pass the total, and the rate is this run's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kg_agent.cli import SAMPLE_DUMP
from kg_agent.embedding import Embedder
from kg_agent.ingest.pipeline import LoadOptions, load_source

LINE = re.compile(r"^(\w[\w ]*): ([\d,]+)(?:/([\d,]+) \((\d+)%\))?")


def test_embed_progress_counts_each_section_once(
    tmp_path: Path, embedder: Embedder, capsys: pytest.CaptureFixture[str]
) -> None:
    """The embedder reports a running total per batch; it used to be added up again,
    so the line ran past 100% ("embed: 865/145 (597%)") and the ETA was meaningless."""
    embedder.batch_size = 8  # several batches in the sample's 145 sections
    try:
        report = load_source(
            SAMPLE_DUMP,
            tmp_path / "g.kuzu",
            embedder=embedder,
            options=LoadOptions(progress=True, cache=False, workers=1),
        )
    finally:
        embedder.batch_size = 16
    err = capsys.readouterr().err
    lines = [m for m in (LINE.match(ln.split("\r")[-1]) for ln in err.splitlines()) if m]
    embeds = [m for m in lines if m.group(1) == "embed"]
    assert embeds, err
    for m in embeds:
        done, total = int(m.group(2).replace(",", "")), int(m.group(3).replace(",", ""))
        assert done <= total == report.sections == 145
        assert int(m.group(4)) <= 100
    last = embeds[-1]
    assert int(last.group(2).replace(",", "")) == 145

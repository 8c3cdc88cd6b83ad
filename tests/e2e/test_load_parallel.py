"""The graph a load builds does not depend on how the dump is stored or read.

Worker count, plain XML against a multistream ``.bz2`` (stream starts from its index file,
or found by scanning), a single-stream ``.bz2`` decompressed by Python or by ``lbzip2``:
every way gives the same graph. Real loads of a synthetic dump made from the real English
sample, and of the real sample itself repacked into the multistream layout.
"""

from __future__ import annotations

import bz2
import shutil
from pathlib import Path
from typing import Any

import pytest

from kg_agent.ingest.pipeline import LoadOptions, LoadReport, load_source
from kg_agent.ingest.units import parallel_decompressor, plan_dump
from tests.e2e.conftest import ENWIKI
from tests.e2e.test_load_resume import digest
from tests.support.synth import generate, make_dump


def _load(src: Path, db: Path, **kw: Any) -> LoadReport:
    opts = LoadOptions(progress=False, embeddings="none", **kw)
    return load_source(src, db, options=opts)


@pytest.fixture(scope="module")
def dumps(tmp_path_factory: pytest.TempPathFactory, shared_data_dir: Path) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("synth")
    summary = generate(1200, out, seed=11, formats="xml,multistream")
    scan = out / "scan"
    scan.mkdir()
    shutil.copy(summary["multistream"], scan)  # no index beside it: stream starts are scanned
    single = out / "single.xml.bz2"
    single.write_bytes(bz2.compress(Path(summary["xml"]).read_bytes()))
    return {
        "xml": Path(summary["xml"]),
        "multistream": Path(summary["multistream"]),
        "index": Path(summary["multistream_index"]),
        "scan": scan / Path(summary["multistream"]).name,
        "single": single,
    }


@pytest.fixture(scope="module")
def reference(dumps: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    db = tmp_path_factory.mktemp("ref") / "g.kuzu"
    report = _load(dumps["xml"], db, workers=1, chunk_bytes=1 << 20)
    assert report.layout == "plain" and report.shards > 3
    return digest(db)


def test_two_workers_build_the_graph_one_builds(
    dumps: dict[str, Path], reference: dict[str, Any], tmp_path: Path
) -> None:
    report = _load(dumps["xml"], tmp_path / "g.kuzu", workers=2, chunk_bytes=1 << 20)
    assert report.workers == 2
    assert digest(tmp_path / "g.kuzu") == reference


def test_unit_size_does_not_change_the_graph(
    dumps: dict[str, Path], reference: dict[str, Any], tmp_path: Path
) -> None:
    report = _load(dumps["xml"], tmp_path / "g.kuzu", workers=2, chunk_bytes=3 << 20)
    assert report.shards < 10
    assert digest(tmp_path / "g.kuzu") == reference


def test_multistream_from_its_index_and_from_a_scan(
    dumps: dict[str, Path], reference: dict[str, Any], tmp_path: Path
) -> None:
    by_index = plan_dump(dumps["multistream"], chunk_bytes=256 << 10)
    by_scan = plan_dump(dumps["scan"], chunk_bytes=256 << 10)
    assert by_index.layout == by_scan.layout == "multistream"
    assert by_index.index_path == str(dumps["index"]) and by_scan.index_path is None
    assert [(u.start, u.end) for u in by_index.units] == [(u.start, u.end) for u in by_scan.units]
    assert len(by_index.units) > 3
    for name in ("multistream", "scan"):
        db = tmp_path / f"{name}.kuzu"
        report = _load(dumps[name], db, workers=2, chunk_bytes=256 << 10)
        assert report.layout == "multistream"
        assert digest(db) == reference, name


def test_an_index_that_does_not_fit_the_dump_is_refused(
    dumps: dict[str, Path], tmp_path: Path
) -> None:
    from kg_agent.exceptions import SourceError

    bad = tmp_path / "bad-index.txt.bz2"
    bad.write_bytes(bz2.compress(b"999999999999:1:Nowhere\n"))
    with pytest.raises(SourceError, match="offsets do not fit"):
        plan_dump(dumps["multistream"], index=bad)
    junk = tmp_path / "junk-index.txt"
    junk.write_text("not an index\n")
    with pytest.raises(SourceError, match="not a multistream index"):
        plan_dump(dumps["multistream"], index=junk)
    with pytest.raises(SourceError, match="not one"):
        plan_dump(dumps["xml"], index=dumps["index"])


@pytest.mark.parametrize("tool", ["python", "lbzip2"])
def test_single_stream_bz2_by_python_and_by_lbzip2(
    tool: str,
    dumps: dict[str, Path],
    reference: dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if tool == "python":
        monkeypatch.setenv("KG_AGENT_NO_PARALLEL_BZ2", "1")
        assert parallel_decompressor() is None
    elif parallel_decompressor() is None:
        pytest.skip("lbzip2/pbzip2 not installed (Debian package lbzip2; .ci/run installs it)")
    report = _load(dumps["single"], tmp_path / "g.kuzu", workers=2, chunk_bytes=1 << 20)
    assert report.layout == "stream" and report.shards > 3
    assert digest(tmp_path / "g.kuzu") == reference


def test_real_sample_repacked_as_multistream_loads_the_same(
    shared_data_dir: Path, tmp_path: Path
) -> None:
    src = shared_data_dir / ENWIKI
    out = tmp_path / "enwiki-multistream.xml.bz2"
    index = tmp_path / "enwiki-multistream-index.txt.bz2"
    make_dump().repack_multistream(src, out, index, pages_per_stream=20, workers=1)
    plan = plan_dump(out, chunk_bytes=64 << 10)
    assert plan.layout == "multistream" and plan.index_path == str(index)
    assert len(plan.units) > 3
    a = _load(src, tmp_path / "a.kuzu", workers=1)
    b = _load(out, tmp_path / "b.kuzu", workers=2, chunk_bytes=64 << 10)
    assert (
        (a.articles, a.redirects, a.sections)
        == (b.articles, b.redirects, b.sections)
        == (
            106,
            99,
            4188,
        )
    )
    assert digest(tmp_path / "a.kuzu") == digest(tmp_path / "b.kuzu")

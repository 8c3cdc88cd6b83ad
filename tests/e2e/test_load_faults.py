"""Bad input and interruptions: one-line errors, non-zero exits, nothing already loaded lost."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from kg_agent.cli import SAMPLE_DUMP, main
from kg_agent.embedding import Embedder
from kg_agent.exceptions import LoadAborted
from kg_agent.ingest import pipeline
from kg_agent.ingest.pipeline import LoadOptions, load_source
from kg_agent.store import GraphStore
from tests.e2e.conftest import ENWIKI


def _counts(db: Path) -> dict[str, object]:
    with GraphStore.open(db, read_only=True) as store:
        st = store.stats()
        return {
            "articles": st.articles,
            "stubs": st.stub_articles,
            "sections": st.sections,
            "links": st.links,
            "mentions": st.mentions,
            "redirects": st.redirects,
            "categories": st.categories,
            "loads": st.loads,
            "top": st.top_pagerank,
        }


@pytest.fixture
def loaded_db(tmp_path: Path, embedder: Embedder) -> Path:
    db = tmp_path / "g.kuzu"
    load_source(SAMPLE_DUMP, db, embedder=embedder, options=LoadOptions(progress=False))
    return db


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def _one_line_error(output: str) -> str:
    lines = [ln for ln in output.strip().splitlines() if ln.startswith("Error:")]
    assert len(lines) == 1, output
    assert "Traceback" not in output
    return lines[0]


def test_truncated_bz2_fails_and_keeps_loaded_graph(
    loaded_db: Path, tmp_path: Path, shared_data_dir: Path
) -> None:
    before = _counts(loaded_db)
    raw = (shared_data_dir / ENWIKI).read_bytes()
    truncated = tmp_path / "enwiki-truncated.xml.bz2"
    truncated.write_bytes(raw[: int(len(raw) * 0.6)])
    code, out = _cli("load", str(truncated), "--db", str(loaded_db), "-q")
    assert code == 1
    line = _one_line_error(out)
    assert "enwiki-truncated.xml.bz2" in line
    assert _counts(loaded_db) == before
    assert not list(loaded_db.parent.glob(".kg-stage-*")), "staging folder left behind"


def test_malformed_xml_names_file_and_place(loaded_db: Path, tmp_path: Path) -> None:
    before = _counts(loaded_db)
    text = SAMPLE_DUMP.read_text(encoding="utf-8")
    cut = text.index("</page>", len(text) // 2)
    broken = tmp_path / "broken.xml"
    broken.write_text(text[:cut] + "<page><title>Oops</titel></page>" + text[cut:], "utf-8")
    code, out = _cli("load", str(broken), "--db", str(loaded_db), "-q")
    assert code == 1
    line = _one_line_error(out)
    assert "broken.xml" in line and "line" in line
    assert _counts(loaded_db) == before


def test_unknown_format_does_not_create_a_database(tmp_path: Path) -> None:
    junk = tmp_path / "notes.txt"
    junk.write_text("just some notes, not a dump\n", "utf-8")
    db = tmp_path / "new.kuzu"
    code, out = _cli("load", str(junk), "--db", str(db), "-q")
    assert code == 1
    assert "notes.txt" in _one_line_error(out)
    assert not db.exists()


def test_missing_source_and_missing_database(tmp_path: Path) -> None:
    code, out = _cli("load", str(tmp_path / "nope.xml"), "--db", str(tmp_path / "g.kuzu"))
    assert code == 1 and "nope.xml" in _one_line_error(out)
    code, out = _cli("stats", "--db", str(tmp_path / "absent.kuzu"))
    assert code == 1 and "not found" in _one_line_error(out)
    assert not (tmp_path / "absent.kuzu").exists()


@pytest.mark.parametrize(
    ("device", "says"),
    [("tpu", "unknown device 'tpu'"), ("cuda", "sees no CUDA GPU")],
    ids=["unknown-device", "no-gpu-here"],
)
def test_a_device_that_is_not_there_is_one_line_and_changes_nothing(
    loaded_db: Path, tmp_path: Path, device: str, says: str
) -> None:
    import torch

    if device == "cuda" and torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU")
    db = tmp_path / "new.kuzu"
    code, out = _cli("load", str(SAMPLE_DUMP), "--db", str(db), "--device", device, "-q")
    assert code == 1 and says in _one_line_error(out)
    assert not db.exists()
    before = _counts(loaded_db)
    code, out = _cli("update", str(SAMPLE_DUMP), "--db", str(loaded_db), "--device", device)
    assert code == 1 and says in _one_line_error(out)
    assert _counts(loaded_db) == before


def test_failed_new_load_removes_the_half_written_database(
    tmp_path: Path, embedder: Embedder, shared_data_dir: Path
) -> None:
    raw = (shared_data_dir / ENWIKI).read_bytes()
    truncated = tmp_path / "t.xml.bz2"
    truncated.write_bytes(raw[: len(raw) // 3])
    db = tmp_path / "fresh.kuzu"
    with pytest.raises(Exception, match=r"t\.xml\.bz2"):
        load_source(truncated, db, embedder=embedder, options=LoadOptions(progress=False))
    assert not db.exists()


def test_reload_is_skipped_and_force_replaces_without_duplicates(loaded_db: Path) -> None:
    before = _counts(loaded_db)
    code, out = _cli("load", str(SAMPLE_DUMP), "--db", str(loaded_db), "-q")
    assert code == 0 and "already loaded" in out
    assert _counts(loaded_db) == before
    code, out = _cli("load", str(SAMPLE_DUMP), "--db", str(loaded_db), "-q", "--force")
    assert code == 0, out
    # the graph's only source, loaded again: a new graph built beside it and renamed over
    # it, holding that load alone
    after = _counts(loaded_db)
    assert after.pop("loads") == 1 and before.pop("loads") == 1
    assert after == before


def test_staged_edges_kuzu_would_reject_are_refused_before_writing(
    loaded_db: Path, embedder: Embedder, shared_data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A staged edge to no article: Kùzu's COPY would fail late in the transaction, and
    Kùzu 0.11.3's abort of a transaction that already copied into a relationship table
    deletes that table's older rows. So the write checks first and writes nothing."""
    before = _counts(loaded_db)
    real_prepare = pipeline.prepare

    def broken(stage: Any, parsed: Any, graph: Any, **kw: Any) -> dict[str, Any]:
        counts = real_prepare(stage, parsed, graph, **kw)
        path = stage.resolved.path(parsed.units[-1], "links_to")
        table = pq.read_table(path)
        bad = pa.table(
            {
                "from": [table["from"][0].as_py()],
                "to": ["No such article"],
                "count": [1],
                "inferred": [False],
            },
            schema=table.schema,
        )
        pq.write_table(pa.concat_tables([table, bad]), path)  # LINKS_TO is copied late
        return counts

    monkeypatch.setattr(pipeline, "prepare", broken)
    with pytest.raises(LoadAborted, match="inconsistent") as err:
        load_source(
            shared_data_dir / ENWIKI,
            loaded_db,
            embedder=embedder,
            options=LoadOptions(progress=False, limit=5),
        )
    assert "'No such article'" in str(err.value) and "nothing was written" in str(err.value)
    assert _counts(loaded_db) == before


def _kg_agent() -> list[str]:
    exe = Path(sys.executable).with_name("kg-agent")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "kg_agent.cli"]


def test_locked_database_gives_a_clear_error(loaded_db: Path) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import kuzu, sys, time; db = kuzu.Database(sys.argv[1]); "
            "print('ready', flush=True); time.sleep(60)",
            str(loaded_db),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        code, out = _cli("load", str(SAMPLE_DUMP), "--db", str(loaded_db), "-q", "--force")
        assert code == 1
        assert "in use by another process" in _one_line_error(out)
        code, out = _cli("stats", "--db", str(loaded_db))
        assert code == 1 and "in use" in _one_line_error(out)
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.parametrize("background", [False, True], ids=["foreground", "background"])
def test_ctrl_c_during_a_real_load_keeps_the_graph(
    loaded_db: Path, shared_data_dir: Path, background: bool
) -> None:
    """Ctrl-C as soon as the embedding phase starts (before the model has loaded); also
    for a load started in the background of a shell script (``kg-agent load … &``),
    which inherits SIGINT ignored: the forwarded SIGINT must still stop it."""
    before = _counts(loaded_db)
    env = dict(os.environ, HF_HUB_OFFLINE="1")

    def as_background_job() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    proc = subprocess.Popen(
        [*_kg_agent(), "load", str(shared_data_dir / ENWIKI), "--db", str(loaded_db)],
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=as_background_job if background else None,
    )
    assert proc.stderr is not None
    deadline = time.time() + 120
    for line in proc.stderr:  # the progress display, one line per update when not a tty
        if line.startswith("embed:") or time.time() > deadline:
            break
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    assert "interrupted" in err and "left as it was" in err
    assert _counts(loaded_db) == before
    assert not list(loaded_db.parent.glob(".kg-stage-*"))


def test_database_directory_copy_is_still_loadable(loaded_db: Path, tmp_path: Path) -> None:
    """A graph is one file plus its WAL: copying it gives a working database."""
    copy = tmp_path / "copy.kuzu"
    shutil.copy(loaded_db, copy)
    assert _counts(copy)["articles"] == _counts(loaded_db)["articles"]

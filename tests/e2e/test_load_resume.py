"""A load killed at any moment (``kill -9``, SIGTERM) leaves the previous graph or none,
and running it again resumes to exactly the graph an uninterrupted load builds.

Real subprocesses of the ``kg-agent`` executable on a synthetic dump made from the real
English sample (``scripts/make_dump.py``), loaded without embeddings so that what is timed
and killed is the loader itself. "Exactly" means the same counts, the same section ids, the
same links and the same PageRank to 6 decimals.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kg_agent.cli import SAMPLE_DUMP
from kg_agent.ingest.stage import Stage
from kg_agent.store import GraphStore
from tests.support.cli import assert_no_process_holds, kg_agent_exe
from tests.support.synth import generate

OPTS = ["--embeddings", "none", "--workers", "2", "--shard-mb", "1", "-q"]


def digest(db: Path) -> dict[str, Any]:
    """What must be equal between an interrupted-and-resumed load and an uninterrupted one."""
    with GraphStore.open(db, read_only=True) as store:
        st = store.stats()
        ranks = store.query(
            "MATCH (a:Article) RETURN a.title AS t, a.pagerank AS p, a.is_stub AS s "
            "ORDER BY a.title"
        )
        sections = store.query("MATCH (s:Section) RETURN s.id AS id ORDER BY s.id")
        links = store.query(
            "MATCH (a:Article)-[r:LINKS_TO]->(b:Article) "
            "RETURN a.title AS a, b.title AS b, r.count AS n ORDER BY a.title, b.title"
        )
        statuses = sorted(str(r.get("status")) for r in store.loads())
        text_ok = store.index_status().text
    h = hashlib.sha256()
    for row in links:
        h.update(f"{row['a']}\0{row['b']}\0{row['n']}\n".encode())
    return {
        "counts": (
            st.articles,
            st.stub_articles,
            st.sections,
            st.links,
            st.mentions,
            st.redirects,
            st.categories,
            st.category_edges,
            st.loads,
        ),
        "pagerank": [(r["t"], round(float(r["p"]), 6), r["s"]) for r in ranks],
        "sections": hashlib.sha256("\n".join(r["id"] for r in sections).encode()).hexdigest(),
        "links": h.hexdigest(),
        "statuses": statuses,
        "text_index": text_ok,
    }


def run_load(src: Path, db: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*kg_agent_exe(), "load", str(src), "--db", str(db), *OPTS, *extra],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, HF_HUB_OFFLINE="1"),
    )


def kill_when(
    src: Path, db: Path, ready: Callable[[], bool], sig: int = signal.SIGKILL
) -> subprocess.CompletedProcess[str]:
    """Start a load, send ``sig`` to the ``kg-agent`` process once ``ready()``, wait."""
    proc = subprocess.Popen(
        [*kg_agent_exe(), "load", str(src), "--db", str(db), *OPTS],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, HF_HUB_OFFLINE="1"),
    )
    deadline = time.time() + 300
    while not ready():
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"the load ended (status {proc.returncode}) before the kill point: {err}")
        assert time.time() < deadline, "kill point never reached"
        time.sleep(0.02)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def stage_of(db: Path, src: Path) -> Path:
    """The load's staging folder (its name holds the source's fingerprint)."""
    found = sorted(db.parent.glob(f".{db.name}.kg-load-*"))
    return found[0] if found else db.parent / f".{db.name}.kg-load-none"


@pytest.fixture(scope="module")
def dump(tmp_path_factory: pytest.TempPathFactory, shared_data_dir: Path) -> Path:
    summary = generate(1500, tmp_path_factory.mktemp("synth"), seed=7)
    return Path(summary["xml"])


@pytest.fixture(scope="module")
def reference(dump: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    db = tmp_path_factory.mktemp("ref") / "g.kuzu"
    done = run_load(dump, db)
    assert done.returncode == 0, done.stderr
    return digest(db)


def _units(db: Path) -> int:
    st = next(iter(db.parent.glob(f".{db.name}.kg-load-*")), None)
    return len(list((st / "units").glob("u*.json"))) if st else 0


KILL_POINTS: dict[str, Callable[[Path], bool]] = {
    "parse": lambda db: _units(db) >= 2,
    "resolve": lambda db: any(db.parent.glob(f".{db.name}.kg-load-*/parse.json")),
    "write": lambda db: (db.parent / f".{db.name}.kg-new").exists(),
    "index": lambda db: any((db.parent / f"{db.name}.indexes").glob("gen-*")),
}


@pytest.mark.parametrize("point", list(KILL_POINTS))
def test_kill_9_then_resume_builds_the_same_graph(
    point: str, dump: Path, reference: dict[str, Any], tmp_path: Path
) -> None:
    db = tmp_path / "g.kuzu"
    killed = kill_when(dump, db, lambda: KILL_POINTS[point](db))
    assert killed.returncode == -signal.SIGKILL
    assert not db.exists(), "a new graph appears whole or not at all"
    stage = stage_of(db, dump)
    assert stage.exists(), "the staged work survives the kill"
    done = run_load(dump, db)
    assert done.returncode == 0, done.stderr
    assert digest(db) == reference
    assert not stage.exists(), "the stage is removed once the load completes"
    assert not (db.parent / f".{db.name}.kg-new").exists()


def test_resumed_parse_says_how_far_it_got(dump: Path, tmp_path: Path) -> None:
    db = tmp_path / "g.kuzu"
    kill_when(dump, db, lambda: _units(db) >= 2)
    done = subprocess.run(
        [*kg_agent_exe(), "load", str(dump), "--db", str(db), *OPTS[:-1]],  # progress on
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    line = next(ln for ln in done.stderr.splitlines() if ln.startswith("resuming:"))
    n, _, total = line.removeprefix("resuming: ").split()[:3]
    assert int(n) >= 2 and int(total.replace(",", "")) > int(n)  # "resuming: 3 of 9 shards done"


def test_sigterm_stops_a_load_like_ctrl_c(
    dump: Path, reference: dict[str, Any], tmp_path: Path
) -> None:
    db = tmp_path / "g.kuzu"
    stopped = kill_when(dump, db, lambda: _units(db) >= 1, sig=signal.SIGTERM)
    assert stopped.returncode == 1, stopped.stderr
    errors = [ln for ln in stopped.stderr.splitlines() if ln.startswith("Error:")]
    assert len(errors) == 1 and "interrupted" in errors[0] and "resume" in errors[0]
    assert "Traceback" not in stopped.stderr
    assert not db.exists()
    done = run_load(dump, db)
    assert done.returncode == 0, done.stderr
    assert digest(db) == reference


def test_kill_9_while_adding_to_a_graph_keeps_it_then_resumes(
    dump: Path, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The issue's data loss: kill -9 during the write phase of a load into a graph that
    holds data. The graph stays exactly as it was; the rerun completes the load."""
    both = tmp_path_factory.mktemp("both") / "g.kuzu"
    for src in (SAMPLE_DUMP, dump):
        assert run_load(Path(src), both).returncode == 0
    expected = digest(both)

    db = tmp_path / "g.kuzu"
    assert run_load(Path(SAMPLE_DUMP), db).returncode == 0
    before = digest(db)
    killed = kill_when(dump, db, lambda: any(db.parent.glob(f".{db.name}.kg-load-*/copy-*")))
    assert killed.returncode == -signal.SIGKILL
    assert_no_process_holds(db)
    assert digest(db) == before
    done = run_load(dump, db)
    assert done.returncode == 0, done.stderr
    assert digest(db) == expected


def test_second_load_of_the_same_graph_is_refused_while_one_runs(
    dump: Path, tmp_path: Path
) -> None:
    db = tmp_path / "g.kuzu"
    first = subprocess.Popen(
        [*kg_agent_exe(), "load", str(dump), "--db", str(db), *OPTS],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.time() + 120
        while _units(db) < 1:
            assert time.time() < deadline and first.poll() is None
            time.sleep(0.02)
        second = run_load(Path(SAMPLE_DUMP), db)
        assert second.returncode == 1
        assert "in use by another kg-agent load" in second.stderr
    finally:
        first.kill()
        first.wait()


def test_stage_path_is_per_database_and_source(tmp_path: Path) -> None:
    a = Stage.path_for(str(tmp_path / "a.kuzu"), "f" * 32, None)
    b = Stage.path_for(str(tmp_path / "b.kuzu"), "f" * 32, None)
    c = Stage.path_for(str(tmp_path / "a.kuzu"), "e" * 32, None)
    assert len({a, b, c}) == 3 and a.parent == tmp_path
    assert Stage.path_for(str(tmp_path / "a.kuzu"), "f" * 32, str(tmp_path / "s")).parent == (
        tmp_path / "s"
    )


def test_indexes_cut_short_after_the_commit_are_finished_by_the_next_run(
    dump: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The data of a load into a graph committed, its indexes did not: ``stats`` lists the
    load as incomplete, and the next run of the same load (or ``reindex``) finishes it."""
    from click.testing import CliRunner

    from kg_agent.cli import main
    from kg_agent.exceptions import LoadAborted
    from kg_agent.ingest import finish
    from kg_agent.ingest.pipeline import LoadOptions, load_source

    db = tmp_path / "g.kuzu"
    opts = LoadOptions(progress=False, embeddings="none", workers=1)
    load_source(SAMPLE_DUMP, db, options=opts)

    def cut(*args: Any, **kwargs: Any) -> dict[str, float]:
        raise KeyboardInterrupt

    monkeypatch.setattr(finish, "finalize_indexes", cut)  # what every write's finish runs
    with pytest.raises(LoadAborted, match="building its indexes failed") as err:
        load_source(dump, db, options=opts)
    assert "run the same 'kg-agent load' again" in str(err.value)
    monkeypatch.undo()
    with GraphStore.open(db, read_only=True) as store:
        st = store.stats()
        assert st.indexes.stale and len(st.incomplete_loads) == 1 and st.articles > 1500
    out = CliRunner().invoke(main, ["stats", "--db", str(db)]).output
    assert "INCOMPLETE" in out and "STALE" in out
    again = load_source(dump, db, options=opts)
    assert again.resumed
    with GraphStore.open(db, read_only=True) as store:
        st = store.stats()
        assert not st.indexes.stale and not st.incomplete_loads and st.indexes.text
        assert store.fts_search(
            store.article_sections(
                store.query(
                    "MATCH (a:Article) WHERE a.load_id = $l RETURN a.title AS t LIMIT 1",
                    {"l": again.load_id},
                )[0]["t"]
            )[0]["text"][:60],
            5,
        )


def test_reindex_repairs_a_graph_whose_text_index_is_gone(tmp_path: Path) -> None:
    """stats says MISSING; reindex rebuilds it and says what it built; stats agrees."""
    import shutil as _shutil

    db = tmp_path / "g.kuzu"
    assert run_load(Path(SAMPLE_DUMP), db).returncode == 0
    _shutil.rmtree(Path(f"{db}.indexes"))
    stats = subprocess.run(
        [*kg_agent_exe(), "stats", "--db", str(db)], capture_output=True, text=True
    )
    assert "full-text MISSING" in stats.stdout
    done = subprocess.run(
        [*kg_agent_exe(), "reindex", "--db", str(db), "-q"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "Rebuilt the indexes" in done.stdout and "text_index" in done.stdout
    stats = subprocess.run(
        [*kg_agent_exe(), "stats", "--db", str(db)], capture_output=True, text=True
    )
    assert "full-text ready" in stats.stdout and "MISSING" not in stats.stdout
    assert "vector off (no embeddings)" in stats.stdout

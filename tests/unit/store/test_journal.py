"""The copy journal: which state a crash left, and what recovery does about it.

The decision (:func:`recovery_plan`) is tested on its own; the whole protocol on a real
Kùzu graph, killed by ``kill -9`` at each of the commit's crash points in a process of its
own, then opened by a writer: the graph must hold exactly what a clean commit gives.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kg_agent.exceptions import DatabaseError
from kg_agent.store import GraphStore
from kg_agent.store.journal import Copy, Journal, recovery_plan
from kg_agent.store.layout import index_dir

ROOT = Path(__file__).resolve().parents[3]


def _journal(tmp_path: Path) -> Journal:
    files = []
    for name, rows in (("a", 3), ("b", 2)):
        path = tmp_path / f"{name}.parquet"
        pq.write_table(pa.table({"name": [f"{name}{i}" for i in range(rows)]}), path)
        files.append(str(path))
    return Journal(
        token="t1",
        copies=[Copy("Category", (files[0],), None, 3), Copy("Category", (files[1],), None, 2)],
        expected={"Category": 10},
    )


def test_a_commit_that_never_happened_leaves_nothing_to_do(tmp_path: Path) -> None:
    journal = _journal(tmp_path)
    assert recovery_plan(journal, "another token", {"Category": 5}, "g") == []
    assert recovery_plan(journal, None, {"Category": 5}, "g") == []


def test_a_checkpointed_commit_leaves_nothing_to_do(tmp_path: Path) -> None:
    assert recovery_plan(_journal(tmp_path), "t1", {"Category": 10}, "g") == []


def test_copies_a_crash_lost_are_run_again_in_their_order(tmp_path: Path) -> None:
    journal = _journal(tmp_path)
    assert recovery_plan(journal, "t1", {"Category": 5}, "g") == journal.copies


def test_any_other_count_is_damage(tmp_path: Path) -> None:
    with pytest.raises(DatabaseError, match=r"damaged: its table Category holds 6 rows"):
        recovery_plan(_journal(tmp_path), "t1", {"Category": 6}, "g")


def test_lost_copies_whose_files_are_gone_say_so(tmp_path: Path) -> None:
    journal = _journal(tmp_path)
    Path(journal.copies[1].files[0]).unlink()
    with pytest.raises(DatabaseError, match=r"files to copy them again are gone"):
        recovery_plan(journal, "t1", {"Category": 5}, "g")


def test_the_journal_is_written_whole_and_read_back(tmp_path: Path) -> None:
    journal = _journal(tmp_path)
    journal.write(tmp_path / "root")
    assert Journal.read(tmp_path / "root") == journal
    Journal.remove(tmp_path / "root")
    assert Journal.read(tmp_path / "root") is None


def test_a_damaged_journal_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "commit.json").write_text("{not json")
    with pytest.raises(DatabaseError, match="damaged outside kg-agent"):
        Journal.read(tmp_path)


# ---------------------------------------------------------------------- on real Kùzu
_WRITE = textwrap.dedent(
    """
    import sys
    from kg_agent.store import GraphStore
    db, new = sys.argv[1], sys.argv[2]
    with GraphStore.open(db, read_only=False) as store:
        store.begin()
        store.query("MATCH (c:Category) WHERE c.name STARTS WITH 'old1' DELETE c")
        store.set_meta(note="written")
        store.copy_parquet("Category", [new])
        store.commit()
    """
)


def _graph(tmp_path: Path) -> tuple[Path, Path]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    db = tmp_path / "g.kuzu"
    old, new = tmp_path / "old.parquet", tmp_path / "new.parquet"
    pq.write_table(pa.table({"name": [f"old{i}" for i in range(300)]}), old)
    pq.write_table(pa.table({"name": [f"new{i}" for i in range(500)]}), new)
    with GraphStore.open(db, read_only=False, create=True) as store:
        store.ensure_schema(dimension=4, model="m")
        store.copy_parquet("Category", [old])
    return db, new


def _state(db: Path) -> tuple[int, int, str | None]:
    with GraphStore.open(db, read_only=True) as store:
        rows = store.query("MATCH (c:Category) RETURN c.name AS n")
        names = {r["n"] for r in rows}
        return len(names), sum(n.startswith("new") for n in names), store.meta().get("note")


def _write(db: Path, new: Path, crash: str | None) -> int:
    env = dict(os.environ, KG_AGENT_SUPERVISED="1", PYTHONPATH=str(ROOT))
    if crash:
        env["KG_AGENT_CRASH_AT"] = crash
    proc = subprocess.run(
        [sys.executable, "-c", _WRITE, str(db), str(new)],
        env=env,
        start_new_session=True,  # the crash point kills this process group alone
        capture_output=True,
        timeout=120,
    )
    return proc.returncode


@pytest.mark.parametrize(
    ("point", "lost"),
    [
        ("commit.journaled", False),  # before the first COMMIT: the graph as before
        ("commit.after_commit", True),  # logged changes in, copies not run: run again
        ("commit.copied", True),  # copies run, not committed: run again
        ("commit.after_checkpoint", False),  # all in, the journal not yet removed
    ],
)
def test_a_kill_at_each_point_of_a_commit_recovers_to_before_or_after(
    tmp_path: Path, point: str, lost: bool
) -> None:
    db, new = _graph(tmp_path)
    before = _state(db)
    assert _write(db, new, point) == -signal.SIGKILL
    journal = Journal.path(index_dir(db))
    assert journal.exists()
    if lost:  # a reader sees the logged half: the write's own mark must make it refuse
        with GraphStore.open(db, read_only=True) as store:
            assert _state(db)[1] == 0 and store.meta()["note"] == "written"
    GraphStore.open(db, read_only=False).close()  # a writer's open finishes the commit
    assert not journal.exists()
    after = _state(db)
    clean_db, _ = _graph(tmp_path / "clean")
    assert _write(clean_db, new, None) == 0
    assert after in (before, _state(clean_db))
    assert after == (before if point == "commit.journaled" else _state(clean_db))

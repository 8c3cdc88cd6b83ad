"""Where a graph's last write stands, as readers see it: the intent file a write leaves,
the pending mark it commits with its data, the copy journal of its commit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

from kg_agent.store.journal import Journal
from kg_agent.store.layout import index_dir
from kg_agent.store.write_state import (
    PENDING_KEY,
    WriteIntent,
    clear_intent,
    read_intent,
    record_intent,
    set_phase,
    write_status,
)

RESUME = "kg-agent load dump.xml --db g.kuzu"


def _dead_intent() -> WriteIntent:
    """An intent whose process has exited (and was reaped)."""
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return replace(WriteIntent.begin("load", RESUME), pid=int(proc.stdout))


def test_a_finished_write_leaves_no_status(tmp_path: Path) -> None:
    assert write_status(tmp_path / "g.kuzu", {}) is None
    assert write_status(tmp_path / "g.kuzu", {PENDING_KEY: ""}) is None


def test_an_intent_of_a_dead_process_is_an_interrupted_write_the_graph_answers_through(
    tmp_path: Path,
) -> None:
    db = tmp_path / "g.kuzu"
    record_intent(db, _dead_intent())
    set_phase(db, "parse")
    status = write_status(db, {})
    assert status is not None and not status.running and not status.committed
    assert not status.refuses_queries
    message = status.message()
    assert "interrupted in its parse phase" in message and "whole" in message
    assert f"run '{RESUME}' again" in message and "\n" not in message


def test_a_pending_mark_makes_readers_refuse_with_the_command(tmp_path: Path) -> None:
    db = tmp_path / "g.kuzu"
    intent = _dead_intent()
    record_intent(db, replace(intent, phase="index"))
    status = write_status(db, {PENDING_KEY: intent.to_json()})
    assert status is not None and status.committed and status.refuses_queries
    assert "interrupted in its index phase" in status.message()
    assert "after it changed the graph" in status.message() and RESUME in status.message()
    assert status.to_dict()["state"] == "interrupted"


def test_the_mark_alone_still_names_the_command(tmp_path: Path) -> None:
    db = tmp_path / "g.kuzu"
    status = write_status(db, {PENDING_KEY: replace(_dead_intent(), phase="write").to_json()})
    assert status is not None and status.refuses_queries and RESUME in status.message()


def test_a_journal_of_a_committed_token_refuses_too(tmp_path: Path) -> None:
    db = tmp_path / "g.kuzu"
    Journal(token="tok").write(index_dir(db))
    assert write_status(db, {"commit_token": "other"}) is None
    status = write_status(db, {"commit_token": "tok"})
    assert status is not None and status.refuses_queries and "reindex" in status.message()


def test_a_running_write_is_named_as_running(tmp_path: Path) -> None:
    db = tmp_path / "g.kuzu"
    record_intent(db, WriteIntent.begin("update", "kg-agent update x --db g"))  # this process
    status = write_status(db, {PENDING_KEY: "x"})
    assert status is not None and status.running and not status.refuses_queries
    assert "is running" in status.message() and str(os.getpid()) in status.message()


def test_a_killed_process_not_yet_reaped_is_not_running(tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        intent = replace(WriteIntent.begin("load", RESUME), pid=child.pid)
        intent = WriteIntent(**{**json.loads(intent.to_json()), "pid_start": ""})
        assert intent.alive()
        child.kill()
        for _ in range(200):  # a zombie until waited for
            if not intent.alive():
                break
            time.sleep(0.01)
        assert not intent.alive()
    finally:
        child.wait()


def test_the_intent_is_written_whole_and_removed(tmp_path: Path) -> None:
    db = tmp_path / "g.kuzu"
    assert read_intent(db) is None
    intent = WriteIntent.begin("compact", "kg-agent compact --db g")
    record_intent(db, intent)
    assert read_intent(db) == intent
    (index_dir(db) / "write.json").write_text("{broken")
    assert read_intent(db) is None  # a torn file reads as no intent, never as an error
    clear_intent(db)
    clear_intent(db)
    assert read_intent(db) is None

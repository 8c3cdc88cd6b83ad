"""Every write survives ``kill -9`` whole: the real CLI, real Kùzu, a real SIGKILL.

Each write command runs on the English sample with embeddings (its first articles: the
whole sample is ``scripts/crash_test.py``'s, with hundreds of kills), is killed at a moment
where the graph's state changes (``scripts/_crash.py``), and is then run again, as the
documented recovery says. The graph must then equal the graph before the command or the
graph a clean run gives, table for table and index for index; right after the kill,
readers see one of those two or refuse with the line that names the command to run.

Then what a person sees of an interrupted graph, through the CLI, the Python API, HTTP and
MCP, and a write that runs out of disk space mid-copy.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from kg_agent.exceptions import DatabaseError
from kg_agent.store.write_state import InterruptedWriteError
from scripts._crash import (
    Prepared,
    clean_run,
    copy_graph,
    digest,
    kill_once,
    prepare,
    run,
)
from tests.support.cli import kg_agent_exe
from tests.support.server import running_server, wait_until

#: The English sample's first articles: every kind of change an update meets, and a load
#: with embeddings that takes seconds.
ARTICLES = 12
#: (command, kind of moment, moment): each command killed where its state changes.
KILLS = [
    ("load", "point", "fresh.after_install"),
    ("load --force", "point", "fresh.before_install"),
    ("load into", "point", "commit.after_commit"),
    ("load into", "event", "shadow"),
    ("update", "point", "commit.copied"),
    ("update", "point", "finish.indexes_done"),
    ("delete", "point", "write.before_commit"),
    # all done but the checksums: the rerun finds nothing to delete (the long run found it)
    ("delete", "point", "finish.before_checksums"),
    ("compact", "point", "fresh.after_install"),
    ("embed", "point", "commit.after_commit"),
    ("reindex", "point", "finish.before_clear"),
]


@pytest.fixture(scope="module")
def prepared(shared_data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Prepared:
    work = tmp_path_factory.mktemp("crash")
    env = dict(os.environ, HF_HUB_OFFLINE="1", KG_AGENT_CACHE_DIR=str(work / "cache"))
    env.pop("KG_AGENT_VECTOR_STORE", None)
    return prepare(shared_data_dir.parent, work, articles=ARTICLES, env=env)


@pytest.fixture(scope="module")
def clean_digests(prepared: Prepared) -> dict[str, tuple[dict[str, str], dict[str, str]]]:
    """Each command's graph before it and after a clean run."""
    db = prepared.work / "clean" / "g.kuzu"
    db.parent.mkdir(exist_ok=True)
    out = {}
    for name in dict.fromkeys(k[0] for k in KILLS):
        before, clean, _ = clean_run(prepared.scenarios[name], db, prepared.env)
        if name in ("load", "load into", "update", "delete", "embed"):
            assert before != clean, f"{name} changed nothing"  # else the test proves little
        out[name] = (before, clean)
    return out


@pytest.mark.parametrize(("command", "kind", "at"), KILLS, ids=[f"{c}@{a}" for c, _, a in KILLS])
def test_a_write_killed_then_run_again_equals_before_or_a_clean_run(
    prepared: Prepared,
    clean_digests: dict[str, tuple[dict[str, str], dict[str, str]]],
    tmp_path: Path,
    command: str,
    kind: str,
    at: str,
) -> None:
    before, clean = clean_digests[command]
    scenario = prepared.scenarios[command]
    out = kill_once(
        scenario,
        tmp_path / "g.kuzu",
        kind=kind,
        at=at,
        before=before,
        clean=clean,
        env=prepared.env,
    )
    assert out.killed, f"{command} finished before {at}"
    assert out.ok, out
    assert out.after_recovery == "clean", out  # the rerun finishes what was interrupted
    if at in ("commit.after_commit", "commit.copied", "finish.indexes_done"):
        assert out.readers == "refused", out  # the data changed, the indexes not yet


# ---------------------------------------------------------------------- what readers see
@pytest.fixture(scope="module")
def interrupted(prepared: Prepared, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The base graph with an update killed after it changed the graph, before its
    indexes: readers must refuse it."""
    db = tmp_path_factory.mktemp("interrupted") / "g.kuzu"
    copy_graph(prepared.scenarios["update"].before, db)
    env = dict(prepared.env, KG_AGENT_CRASH_AT="finish.indexes_done")
    done = run(prepared.scenarios["update"].argv, db, env)
    assert done.returncode == 128 + 9, done.stderr
    return db


def _one_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in text, text
    return lines[0]


def test_the_cli_names_the_interrupted_write_and_the_command_that_finishes_it(
    interrupted: Path, prepared: Prepared
) -> None:
    resume = " ".join(prepared.scenarios["update"].argv)
    asked = run(["ask", "What is Algeria?"], interrupted, prepared.env)
    assert asked.returncode == 1
    line = _one_line(asked.stderr)
    assert "an update of" in line and "interrupted in its index phase" in line
    assert resume in line
    stats = run(["stats"], interrupted, prepared.env)
    assert stats.returncode == 1 and "articles" in stats.stdout
    assert _one_line(stats.stderr) == line
    as_json = run(["stats", "--json"], interrupted, prepared.env)
    assert json.loads(as_json.stdout)["last_write"]["committed"] is True
    check = run(["check"], interrupted, prepared.env)
    assert check.returncode == 1 and _one_line(check.stderr) == line
    assert "damaged" not in check.stderr


def test_the_api_refuses_an_interrupted_graph(interrupted: Path) -> None:
    from kg_agent import KnowledgeGraphAgent

    with pytest.raises(InterruptedWriteError, match="again") as err:
        KnowledgeGraphAgent(db_path=str(interrupted))
    assert isinstance(err.value, DatabaseError)


def test_http_answers_503_then_serves_once_the_write_is_finished(
    interrupted: Path, prepared: Prepared, tmp_path: Path
) -> None:
    db = tmp_path / "g.kuzu"
    copy_graph(interrupted, db)
    with running_server(db, "--offline", env=prepared.env) as server:
        # printed just after the URL line the server is found by: wait for it
        assert wait_until(lambda: "not answering yet (503)" in server.stderr), server.stderr
        refused = httpx2.post(
            f"{server.url}/v1/ask", json={"question": "What is Algeria?"}, timeout=60
        )
        assert refused.status_code == 503
        assert "interrupted" in refused.json()["error"] and "again" in refused.json()["error"]
        assert httpx2.get(f"{server.url}/healthz", timeout=60).status_code == 503
        # the server holds no open of the graph meanwhile: the write can be finished
        finished = run(prepared.scenarios["update"].argv, db, prepared.env)
        assert finished.returncode == 0, finished.stderr
        answered = _poll_ok(f"{server.url}/v1/ask", {"question": "What is Algeria?"})
        assert answered["answer"]


def _poll_ok(url: str, body: dict[str, Any]) -> dict[str, Any]:
    for _ in range(30):
        response = httpx2.post(url, json=body, timeout=120)
        if response.status_code == 200:
            return dict(response.json())
        time.sleep(1.0)
    raise AssertionError(f"still {response.status_code}: {response.text}")


def test_mcp_tools_answer_with_the_line(interrupted: Path, prepared: Prepared) -> None:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp_types import TextContent

    async def ask() -> tuple[bool, str]:
        cmd = [*kg_agent_exe(), "mcp", "--db", str(interrupted), "--offline"]
        params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=prepared.env)
        with anyio.fail_after(300):
            async with Client(stdio_client(params)) as client:
                result = await client.call_tool("ask", {"question": "What is Algeria?"})
        text = "\n".join(c.text for c in result.content if isinstance(c, TextContent))
        return result.is_error, text

    is_error, text = anyio.run(ask, backend="asyncio")
    assert is_error and "interrupted" in text and "again" in text


def test_a_write_interrupted_before_it_changed_the_graph_answers_from_it(
    prepared: Prepared, tmp_path: Path
) -> None:
    db = tmp_path / "g.kuzu"
    scenario = prepared.scenarios["update"]
    copy_graph(scenario.before, db)
    env = dict(prepared.env, KG_AGENT_CRASH_AT="write.before_commit")
    assert run(scenario.argv, db, env).returncode == 128 + 9
    asked = run(["ask", "What is Algeria?"], db, prepared.env)
    assert asked.returncode == 0 and asked.stdout.strip()
    stats = run(["stats"], db, prepared.env)
    assert stats.returncode == 0 and "last write" in stats.stdout
    assert "the graph is whole" in stats.stdout
    check = run(["check"], db, prepared.env)
    if check.returncode == 0:  # the file is as its checksums say: verified, with a note
        assert "OK" in check.stdout and "note: an update" in check.stdout
    else:  # the file changed: the checksums cannot vouch for it, and that is no damage
        assert "interrupted" in check.stderr and "damaged" not in check.stderr


# ---------------------------------------------------------------------- a full disk
@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A tmpfs of its own (root only: skipped where mounting is not allowed)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    tried = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(mount)], capture_output=True
    )
    if tried.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here for the full-disk case: {tried.stderr!r}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _resize(mount: Path, megabytes: int) -> None:
    subprocess.run(["mount", "-o", f"remount,size={megabytes}m", str(mount)], check=True)


@pytest.mark.parametrize("command", ["load into", "update"])
def test_a_write_that_runs_out_of_disk_mid_copy_keeps_the_graph(
    prepared: Prepared,
    clean_digests: dict[str, tuple[dict[str, str], dict[str, str]]],
    small_disk: Path,
    tmp_path: Path,
    command: str,
) -> None:
    before, clean = clean_digests[command]
    scenario = prepared.scenarios[command]
    db = small_disk / "g.kuzu"
    copy_graph(scenario.before, db)
    used = shutil.disk_usage(small_disk).used >> 20
    _resize(small_disk, used + 2)  # room for the write's first pages, not its copies
    staging = tmp_path / "stage"  # the stage elsewhere: it is the graph's disk that fills
    failed = run([*scenario.argv, "--staging-dir", str(staging)], db, prepared.env)
    assert failed.returncode == 1, failed.stderr
    line = _one_line(failed.stderr)
    assert "space" in line.lower() or "disk" in line.lower(), line
    stats = run(["stats"], db, prepared.env)
    if stats.returncode == 0:  # the write's commit never happened: the graph as it was
        assert digest(db) == before
    else:
        assert "again" in stats.stderr
    _resize(small_disk, used + 256)
    again = run([*scenario.argv, "--staging-dir", str(staging)], db, prepared.env)
    assert again.returncode == 0, again.stderr
    assert digest(db) == clean
    assert run(["check"], db, prepared.env).returncode == 0

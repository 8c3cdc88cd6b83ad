"""Running the real ``kg-agent`` executable in a subprocess, as a user would."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from kg_agent.store import GraphStore


def kg_agent_exe() -> list[str]:
    """The installed console script (its supervisor included), else the module."""
    exe = Path(sys.executable).with_name("kg-agent")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "kg_agent._entry"]


def assert_no_process_holds(db: Path) -> None:
    """A killed command's workers and writer died with it: a read-write open succeeds."""
    deadline = time.time() + 30
    while True:
        try:
            GraphStore.open(db, read_only=False).close()
            return
        except Exception:
            assert time.time() < deadline, "a process of the killed command still holds the graph"
            time.sleep(0.2)

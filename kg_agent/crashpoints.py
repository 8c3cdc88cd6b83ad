"""Named points where a crash test may kill a write, as ``kill -9`` would.

A crash test (``tests/e2e/test_crash.py``, ``scripts/crash_test.py``) kills a write at
random moments, and also exactly at the boundaries where the graph's state changes:
between a ``COMMIT`` and the checkpoint after it, before a new graph is renamed into
place, before a write's last marks are cleared. Timers cannot hit those windows
reliably (some last microseconds), so each is named here and the test asks for one by
name: ``KG_AGENT_CRASH_AT=commit.after_commit`` (a shell pattern; ``NAME@K`` kills at
the K-th time the point is reached, counting from 1).

Only the command-line process acts on it (``KG_AGENT_SUPERVISED``, set by
:mod:`kg_agent._entry` for the child it runs in a process group of its own): the kill
takes that whole group, the command and the processes it started (parse workers, the
writer), and never the program of someone who imported kg-agent.
"""

from __future__ import annotations

import fnmatch
import os
import signal

__all__ = ["CRASH_ENV", "POINTS", "crash_point"]

CRASH_ENV = "KG_AGENT_CRASH_AT"

#: Every point, for the crash tests to choose from (each names where it is).
POINTS = (
    "session.intent_recorded",  # a write's intent file is on disk, nothing else changed
    "write.before_commit",  # the write transaction is complete, not committed
    "commit.journaled",  # the copy journal is on disk, COMMIT not run
    "commit.after_commit",  # COMMIT returned, the checkpoint not run: copies at risk
    "commit.after_checkpoint",  # checkpointed, the journal not yet removed
    "fresh.before_install",  # a new graph is closed beside its place, not renamed
    "fresh.after_install",  # renamed into place, its last marks not cleared
    "finish.indexes_done",  # indexes built and the load marked complete
    "finish.before_clear",  # everything written; the graph still says a write is pending
    "finish.before_checksums",  # the pending mark cleared, checksums not written
    "embed.index_before_copy",  # embed: the vector index holds the batches, the graph not
)

_seen: dict[str, int] = {}


def crash_point(name: str) -> None:
    """Kill this command's process group here when ``KG_AGENT_CRASH_AT`` names ``name``."""
    want = os.environ.get(CRASH_ENV)
    if not want or not os.environ.get("KG_AGENT_SUPERVISED"):
        return
    pattern, _, nth = want.partition("@")
    if not fnmatch.fnmatchcase(name, pattern):
        return
    _seen[name] = _seen.get(name, 0) + 1
    if nth and _seen[name] != int(nth):
        return
    os.killpg(os.getpgrp(), signal.SIGKILL)

"""Whether a graph's last write finished, and what a reader makes of it.

Two records say where a write stands:

* **the intent**, ``PATH.indexes/write.json``: written by every write command before it
  does anything (:class:`WriteIntent`: the command, the command line that finishes it,
  its phase, its process), removed once the write is whole, checksums included. Left
  behind by a dead process, it says a write was interrupted, and since when the file
  may differ from its checksums (``kg-agent check`` tells that apart from damage).
* **the pending mark**, ``Meta.write_pending``: set in the first commit that changes
  what the graph holds (the data transaction of a load into a graph, an update, a
  delete; the start of ``embed`` and ``reindex``) and cleared in the write's last
  commit, once its indexes follow the data. Committed with the data, it tells a
  reader that the graph is not whole: its indexes lag behind its rows, or rows a
  crash lost are still to be copied again (:mod:`.journal`).

A write interrupted before its first commit left the graph as it was: readers answer
from it. One interrupted after it left a graph that is not whole: readers refuse, with
the line that names the command to run (:func:`write_status`).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from kg_agent.exceptions import DatabaseError
from kg_agent.store.journal import Journal
from kg_agent.store.layout import fsync_path, index_dir

__all__ = [
    "INTENT_FILE",
    "PENDING_KEY",
    "InterruptedWriteError",
    "WriteIntent",
    "WriteStatus",
    "clear_intent",
    "read_intent",
    "record_intent",
    "set_phase",
    "write_status",
]

INTENT_FILE = "write.json"
PENDING_KEY = "write_pending"


class InterruptedWriteError(DatabaseError):
    """The graph's last write was interrupted after it changed the graph: it is not
    whole until that write is run again (the message names the command)."""


def _proc_stat(pid: int) -> list[str]:
    """The fields of ``/proc/PID/stat`` after the command name (empty: none there)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return []


def _process_start(pid: int) -> str:
    """When ``pid`` started (clock ticks since boot), so a reused pid is not taken for
    the writer; "" where /proc has no answer."""
    fields = _proc_stat(pid)
    return fields[19] if len(fields) > 19 else ""


@dataclass(frozen=True, slots=True)
class WriteIntent:
    """A write command as it runs: what it is, how to finish it, how far it got."""

    command: str  # load, update, delete, compact, embed, reindex
    resume: str  # the command line that finishes it
    started_at: str
    phase: str = "start"
    pid: int = 0
    pid_start: str = ""

    @classmethod
    def begin(cls, command: str, resume: str) -> WriteIntent:
        pid = os.getpid()
        now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        return cls(command, resume, now, "start", pid, _process_start(pid))

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> WriteIntent | None:
        try:
            data = json.loads(text)
            return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})
        except (ValueError, TypeError, KeyError):
            return None

    def alive(self) -> bool:
        """Whether the process that wrote this intent still runs."""
        if self.pid <= 0:
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        fields = _proc_stat(self.pid)
        if fields and fields[0] in ("Z", "X"):  # killed, not yet reaped by its parent
            return False
        return not self.pid_start or (len(fields) > 19 and fields[19] == self.pid_start)


def _intent_path(db_path: str | os.PathLike[str]) -> Path:
    return index_dir(db_path) / INTENT_FILE


def record_intent(db_path: str | os.PathLike[str], intent: WriteIntent) -> None:
    """Write the intent atomically, flushed to the disk before the write goes on."""
    target = _intent_path(db_path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(intent.to_json())
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, target)
    fsync_path(target.parent)


def read_intent(db_path: str | os.PathLike[str]) -> WriteIntent | None:
    try:
        return WriteIntent.from_json(_intent_path(db_path).read_text(encoding="utf-8"))
    except OSError:
        return None


def set_phase(db_path: str | os.PathLike[str], phase: str) -> None:
    """Record how far the running write got (a crash's message names it)."""
    intent = read_intent(db_path)
    if intent is not None and intent.phase != phase:
        record_intent(db_path, replace(intent, phase=phase))


def clear_intent(db_path: str | os.PathLike[str]) -> None:
    with contextlib.suppress(FileNotFoundError):
        _intent_path(db_path).unlink()


@dataclass(frozen=True, slots=True)
class WriteStatus:
    """Where the graph's last write stands, when it did not finish (see the module doc).

    ``committed``: it changed the graph, which is not whole until it finishes;
    ``running``: its process is still at work."""

    db: str
    intent: WriteIntent
    committed: bool
    running: bool

    @property
    def refuses_queries(self) -> bool:
        return self.committed and not self.running

    def message(self) -> str:
        i = self.intent
        a = "an" if i.command[:1] in "aeiou" else "a"
        when = i.started_at.replace("T", " ").replace("+00:00", " UTC")
        if self.running:
            return (
                f"{a} {i.command} of {self.db} is running (process {i.pid}, {i.phase} phase, "
                f"since {when}): wait for it to finish"
            )
        if self.committed:
            return (
                f"{a} {i.command} of {self.db} was interrupted in its {i.phase} phase (started "
                f"{when}) after it changed the graph, which is not whole until it finishes: "
                f"run '{i.resume}' again"
            )
        return (
            f"{a} {i.command} of {self.db} was interrupted in its {i.phase} phase (started "
            f"{when}); the graph is whole and answers as it is: run '{i.resume}' again to "
            "finish it"
        )

    def to_dict(self) -> dict[str, Any]:
        state = "running" if self.running else "interrupted"
        return {
            "state": state,
            "committed": self.committed,
            "message": self.message(),
            **asdict(self.intent),
        }


def write_status(db_path: str | os.PathLike[str], meta: Mapping[str, str]) -> WriteStatus | None:
    """Where the last write of the graph at ``db_path`` stands (``meta``: its ``Meta``);
    None when it finished."""
    intent = read_intent(db_path)
    pending = WriteIntent.from_json(meta.get(PENDING_KEY, "") or "null") if meta else None
    journal = None
    with contextlib.suppress(DatabaseError):
        journal = Journal.read(index_dir(db_path))
    committed = pending is not None or (
        journal is not None and journal.token == meta.get("commit_token")
    )
    if intent is None and not committed:
        return None
    if intent is None:  # the mark without its file: the intent was lost, the mark says it
        fallback = WriteIntent("write", f"kg-agent reindex --db {db_path}", "", "commit")
        intent = pending or fallback
    running = intent.alive()
    return WriteStatus(str(db_path), intent, committed, running)

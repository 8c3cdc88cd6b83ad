"""One write command's life: its lock, its intent, its phases, and how it ends.

Every command that writes a graph (``load``, ``update``, ``delete``, ``compact``,
``embed``, ``reindex``) runs inside a :class:`WriteSession`, which

1. takes the graph's load lock (one writer of kg-agent at a time, across processes) and
   turns SIGTERM into Ctrl-C;
2. finishes a commit that a crash cut short (a writer's open replays the copy journal:
   :mod:`kg_agent.store.journal`), and refuses, with the line that names it, to start
   over a graph that another interrupted write left unfinished (``reindex`` finishes any);
3. records its intent (:mod:`kg_agent.store.write_state`) before anything else, and its
   phase as it goes, so that a crash anywhere is told apart from damage and named with
   the command that finishes it;
4. removes the intent once the write is whole (:meth:`WriteSession.done`), or when it
   stops on an error that left the file as its checksums say.

What the command itself guarantees: the graph changes in commits that are whole under
``kill -9`` (a new graph is built beside its place and renamed; a change to a graph is
one transaction), its first commit carries the pending mark (:meth:`pending`), and its
last clears it once the indexes follow the data.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from types import TracebackType

from kg_agent.crashpoints import crash_point
from kg_agent.exceptions import DatabaseError, KGAgentError
from kg_agent.ingest.finish import sigterm_as_interrupt
from kg_agent.ingest.stage import LoadLock
from kg_agent.store import GraphStore
from kg_agent.store.integrity import write_checksums
from kg_agent.store.journal import Journal
from kg_agent.store.layout import index_dir
from kg_agent.store.write_state import (
    PENDING_KEY,
    InterruptedWriteError,
    WriteIntent,
    clear_intent,
    read_intent,
    record_intent,
    set_phase,
    write_status,
)

__all__ = ["KEY_KEY", "WriteSession"]

#: The command line as the user typed it, set by the CLI (``resume`` otherwise)
COMMAND_LINE_ENV = "KG_AGENT_COMMAND_LINE"
#: ``Meta`` key of the pending write's key (beside its mark, :data:`PENDING_KEY`)
KEY_KEY = "write_key"


class WriteSession:
    """See the module docstring. ``key`` says which write this is (a load's or an
    update's fingerprint, or the command's name): a pending mark of the same key is this
    write's own, interrupted, which the command finishes; another one is refused."""

    def __init__(self, db_path: str | os.PathLike[str], command: str, resume: str, key: str):
        self.db_path = str(db_path)
        typed = os.environ.get(COMMAND_LINE_ENV, "").strip()
        self.intent = WriteIntent.begin(command, typed or resume)
        self.key = key
        #: the intent a dead process of an earlier run left (None: none)
        self.previous: WriteIntent | None = None
        self._lock = LoadLock(self.db_path)
        self._signals = sigterm_as_interrupt()
        self._checked: tuple[int, int] | None = None

    def __enter__(self) -> WriteSession:
        self._lock.__enter__()
        try:
            self._signals.__enter__()
            self._start()
        except BaseException:
            self._signals.__exit__(None, None, None)
            self._lock.__exit__(None, None, None)
            raise
        return self

    def _start(self) -> None:
        self.previous = read_intent(self.db_path)
        db = Path(self.db_path)
        if db.exists() and Journal.path(index_dir(db)).exists():
            GraphStore.open(db, read_only=False).close()  # copies a crash lost, again
        if db.exists():
            self._refuse_another_pending()
        self._checked = self._file_state()
        record_intent(self.db_path, self.intent)
        crash_point("session.intent_recorded")

    def _refuse_another_pending(self) -> None:
        try:
            with GraphStore.open(self.db_path, read_only=True) as store:
                meta = store.meta()
        except Exception:  # an older or foreign file: the command says what it is
            return
        status = write_status(self.db_path, meta)
        if status is None or not status.committed or self.intent.command == "reindex":
            return
        if meta.get(KEY_KEY, "") == self.key:  # this write's own: the command finishes it
            return
        raise InterruptedWriteError(
            f"{status.message()} (or 'kg-agent reindex --db {self.db_path}') before this "
            f"{self.intent.command}"
        )

    def _file_state(self) -> tuple[int, int] | None:
        try:
            st = os.stat(self.db_path)
        except OSError:
            return None
        return (st.st_size, st.st_mtime_ns)

    def pending(self) -> str:
        """The mark the write's first commit sets in ``Meta`` (:data:`PENDING_KEY`): the
        intent, at the phase that commits."""
        return replace(self.intent, phase="write").to_json()

    def pending_meta(self) -> dict[str, str]:
        """``Meta`` values of that mark: the intent and this write's key."""
        return {PENDING_KEY: self.pending(), KEY_KEY: self.key}

    def phase(self, name: str) -> None:
        set_phase(self.db_path, name)

    def done(self) -> None:
        """The write is whole (its checksums written): no intent remains. After a run
        killed between its last commit and its checksums, a rerun may find nothing left
        to do (a delete of articles gone): the checksums are written here then."""
        if self.previous is not None and Path(self.db_path).exists():
            write_checksums(self.db_path)
        clear_intent(self.db_path)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            if kind is not None and self._stopped_whole(exc):
                clear_intent(self.db_path)
        finally:
            self._signals.__exit__(kind, exc, tb)
            self._lock.__exit__(kind, exc, tb)

    def _stopped_whole(self, exc: BaseException | None) -> bool:
        """After a write stopped on an error or Ctrl-C: whether the graph is whole (no
        commit of this write or an earlier one is pending), with checksums written if
        the file changed. An error of the database itself, or a bug, leaves the intent:
        ``check`` then says a write was interrupted rather than trusting the file."""
        if isinstance(exc, DatabaseError) or not isinstance(exc, KGAgentError | KeyboardInterrupt):
            return False
        unchanged = self._file_state() == self._checked
        if unchanged and self.previous is None:
            return True
        if not Path(self.db_path).exists():
            return True
        try:
            with GraphStore.open(self.db_path, read_only=True) as store:
                status = write_status(self.db_path, store.meta())
        except Exception:  # unreadable now: not for this exit to judge
            return False
        if status is not None and status.committed:
            return False
        # the file changed in commits that are whole (this run's, or an earlier run's
        # killed before its first commit)
        write_checksums(self.db_path)
        return True

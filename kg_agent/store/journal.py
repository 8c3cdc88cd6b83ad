"""The copy journal: what keeps a commit that ran ``COPY`` whole under ``kill -9``.

Kùzu 0.11.3 writes the rows of a ``COPY`` into a table that holds data to the database
file, not to its write-ahead log. A process killed after ``COMMIT`` and before the
checkpoint that follows leaves a graph whose recovery replays the transaction's logged
statements (deletes, ``SET``, ``MERGE``) but not its copies: neither the graph before
nor the one after (measured: 300k rows copied and 100 deleted in one transaction, killed
0–0.35 s into its commit, came back with the 100 deleted and none of the 300k).

So :class:`~kg_agent.store.GraphStore` journals every commit that copied rows into a
graph at its home (a new graph built beside its place needs none of this: it is renamed
into place only after a clean close, :func:`~kg_agent.store.layout.install`):

1. before ``COMMIT``: ``Meta.commit_token`` is set to a new token, in the transaction (a
   logged statement), the rows of every table it copied into are counted, and
   ``PATH.indexes/commit.json`` records the token, the copies (table, files, columns,
   rows) and the counts, flushed to the disk;
2. ``COMMIT``, then ``CHECKPOINT``;
3. the journal is removed.

The next read-write open reads a journal left behind (:func:`recovery_plan`): a token
the graph does not hold means the commit never happened; counts that match mean the
checkpoint did; a table short by exactly the rows copied into it gets those copies
again, in their order, in one journaled transaction. Anything else is damage.

**The rule for writers**: in such a transaction no statement after a ``COPY`` may change
or delete a row that ``COPY`` wrote. Kùzu cannot replay such a statement when the copy
is lost: it crashes when the graph is opened (measured). The writes of :mod:`kg_agent.
ingest.write` follow it: what they change after copying are rows the graph held before.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from kg_agent.exceptions import DatabaseError
from kg_agent.store.layout import fsync_path

__all__ = ["JOURNAL_FILE", "Copy", "Journal", "count_copied_rows", "recovery_plan"]

JOURNAL_FILE = "commit.json"


@dataclass(frozen=True, slots=True)
class Copy:
    """One ``COPY`` of a transaction: what :meth:`GraphStore.copy_parquet` was given."""

    table: str
    files: tuple[str, ...]
    columns: tuple[str, ...] | None
    rows: int


@dataclass(slots=True)
class Journal:
    """What a commit recorded before it ran (see the module docstring)."""

    token: str
    copies: list[Copy] = field(default_factory=list)
    #: rows of each table copied into, as the transaction left them
    expected: dict[str, int] = field(default_factory=dict)

    @staticmethod
    def path(root: Path) -> Path:
        return root / JOURNAL_FILE

    def write(self, root: Path) -> None:
        """Write the journal atomically and flush it (file and folder) to the disk."""
        root.mkdir(parents=True, exist_ok=True)
        target = self.path(root)
        tmp = target.with_name(target.name + ".tmp")
        data = {
            "token": self.token,
            "copies": [asdict(c) for c in self.copies],
            "expected": self.expected,
        }
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
        fsync_path(root)

    @classmethod
    def read(cls, root: Path) -> Journal | None:
        try:
            data = json.loads(cls.path(root).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise DatabaseError(
                f"the commit journal {cls.path(root)} cannot be read ({exc}): it was damaged "
                "outside kg-agent"
            ) from None
        copies = [
            Copy(
                table=str(c["table"]),
                files=tuple(str(f) for f in c["files"]),
                columns=None if c.get("columns") is None else tuple(c["columns"]),
                rows=int(c["rows"]),
            )
            for c in data.get("copies", [])
        ]
        expected = {str(k): int(v) for k, v in dict(data.get("expected", {})).items()}
        return cls(token=str(data["token"]), copies=copies, expected=expected)

    @classmethod
    def remove(cls, root: Path) -> None:
        with contextlib.suppress(FileNotFoundError):
            cls.path(root).unlink()
        fsync_path(root)


def recovery_plan(
    journal: Journal, token: str | None, counts: Mapping[str, int], where: str
) -> list[Copy]:
    """The copies to run again after a crash (none: the journal can go).

    ``token``: ``Meta.commit_token`` of the graph as it opened; ``counts``: the rows of
    each table the journal expects. Raises :class:`DatabaseError` when the graph is
    neither the committed state nor that state less its copies, or when the files of a
    copy to run again are gone.
    """
    if token != journal.token:
        return []  # the commit never happened: the graph is as it was before it
    short = [t for t, n in journal.expected.items() if int(counts.get(t, 0)) != n]
    if not short:
        return []  # the checkpoint ran: every copied row is there
    for table in short:
        mine = [c for c in journal.copies if c.table == table]
        copied = sum(c.rows for c in mine)
        have, want = int(counts.get(table, 0)), journal.expected[table]
        if have != want - copied:
            raise DatabaseError(
                f"database {where} is damaged: its table {table} holds {have:,} rows, its "
                f"last commit left {want:,} ({copied:,} of them copied): restore a copy or "
                "load its sources again into a new --db"
            )
    lost = set(short)
    redo = [c for c in journal.copies if c.table in lost]
    gone = sorted({f for c in redo for f in c.files if not Path(f).exists()})
    if gone:
        raise DatabaseError(
            f"database {where} lost the rows its last write copied (killed between its "
            f"commit and Kùzu's checkpoint), and the files to copy them again are gone "
            f"({gone[0]}): load its sources again into a new --db"
        )
    return redo


def count_copied_rows(files: Sequence[str | os.PathLike[str]]) -> int:
    """Rows of parquet files, from their footers."""
    import pyarrow.parquet as pq

    return sum(pq.read_metadata(str(f)).num_rows for f in files)

"""What every write into a graph shares: SIGTERM handled as Ctrl-C, the upgrade of
an older graph before it, and after it the indexes, the checksums and the entity linker
brought up to date, and the write's pending mark cleared.

The load (:mod:`.pipeline`), the update (:mod:`.update`), the delete (:mod:`.maintain`)
and the compaction (:mod:`.compact`) each run a write; what they share lives here,
below them all, so that none imports another. (How a write stays whole under
``kill -9``: :mod:`.session`, :mod:`kg_agent.store.journal`.)
"""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Iterator
from pathlib import Path

from kg_agent.crashpoints import crash_point
from kg_agent.entities.saved import carry_linker_over, save_linker_changes_apart
from kg_agent.exceptions import DatabaseNotFoundError
from kg_agent.ingest.upgrade import upgrade_graph
from kg_agent.store import SCHEMA_VERSION, GraphStore
from kg_agent.store.indexes import (
    LinkChanges,
    TextSource,
    finalize_indexes,
    sync_text_index,
)
from kg_agent.store.integrity import write_checksums
from kg_agent.store.layout import collect_garbage, live_indexes

__all__ = ["finish_indexes", "prepare_graph", "sigterm_as_interrupt"]


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM stops a load the way Ctrl-C does (clean, resumable), not at once."""

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def prepare_graph(db_path: str) -> dict[str, str]:
    """The graph's ``Meta``, after upgrading an older graph."""
    if not Path(db_path).exists():
        raise DatabaseNotFoundError(f"database {db_path} does not exist")
    with GraphStore.open(db_path, read_only=False) as store:
        version = store.schema_version()
    if version != SCHEMA_VERSION:
        upgrade_graph(db_path)
    with GraphStore.open(db_path, read_only=True) as store:
        return store.meta()


def finish_indexes(
    db_path: str,
    load_id: str,
    text: TextSource | None,
    *,
    pool_mb: int | None,
    progress: bool,
    links: LinkChanges | None = None,
    linker_was: str | None = None,
) -> dict[str, float]:
    """After a write into a graph: its indexes brought up to date (``text``: the text
    index's changes, else it is rebuilt when stale; ``links``: the load's changes to
    the links, else the link table is rebuilt), the load marked complete, the
    checksums and the entity linker written (``linker_was``: the saved linker's key
    before a write that changed no title or redirect, so it is carried over rather than
    rebuilt when it matches). Returns seconds per step."""
    with GraphStore.open(db_path, read_only=False, buffer_pool_mb=pool_mb) as store:
        sync = None
        if text is not None:

            def sync() -> None:
                sync_text_index(store, text, progress=progress)

        steps = finalize_indexes(store, text=sync, links=links, progress=progress)
        crash_point("finish.indexes_done")
        store.begin()  # the load complete and the graph whole, in one commit
        store.set_load_status(load_id, "complete")
        store.clear_write_pending()
        crash_point("finish.before_clear")
        store.commit()
        live = live_indexes(store.meta())
    crash_point("finish.before_checksums")
    write_checksums(db_path)
    collect_garbage(db_path, live)  # the vector index's files the write replaced
    # as for a new graph: the linker is built once the writer's pool is gone
    t0 = time.perf_counter()
    step = "entity_linker"
    if linker_was is not None and carry_linker_over(db_path, linker_was):
        step = "entity_linker_carried_over"
    elif save_linker_changes_apart(db_path):
        step = "entity_linker_overlaid"
    steps[step] = round(time.perf_counter() - t0, 3)
    return steps

"""The entity linker saved beside a graph's indexes: built, overlaid, carried over.

A query process loads the saved linker (1M titles: ~3 s) rather than building it
(~25 s); every write brings it up to date after the writer's buffer pool is gone, so
the two are never both in memory (see :mod:`kg_agent.entities.linker`).
"""

from __future__ import annotations

from kg_agent.entities.linker import QuestionEntityLinker, carry_over
from kg_agent.store import GraphStore

__all__ = [
    "carry_linker_over",
    "linker_key",
    "save_linker",
    "save_linker_apart",
    "save_linker_changes_apart",
]

_LINKER_POOL_MB = 512


def save_linker(store: GraphStore) -> bool:
    """Build the question entity linker and save it with the generation, so a query
    process loads it (1M titles: ~3 s) rather than building it (~25 s). Skipped above
    the size where the linker uses the full-text fallback; returns whether it saved."""
    path = store.linker_path()
    linker = QuestionEntityLinker(store)
    if path is None or not linker.uses_automaton():
        return False
    linker.save(path)
    return True


def save_linker_apart(db_path: str) -> bool:
    """:func:`save_linker` from a read-only open with a small buffer pool: after a bulk
    write, so that the writer's pool and the linker's build are never both in memory."""
    with GraphStore.open(db_path, read_only=True, buffer_pool_mb=_LINKER_POOL_MB) as store:
        return save_linker(store)


def save_linker_changes_apart(db_path: str) -> bool:
    """After a write that changed names: the saved linker brought up to the graph by an
    overlay of what changed when it can take one, else built again (as
    :func:`save_linker_apart`). Returns whether an overlay was saved."""
    with GraphStore.open(db_path, read_only=True, buffer_pool_mb=_LINKER_POOL_MB) as store:
        path = store.linker_path()
        linker = QuestionEntityLinker(store)
        if path is None or not linker.uses_automaton():
            return False
        return linker.save_changes(path)


def linker_key(store: GraphStore) -> str | None:
    """The key a saved linker of the graph must have now (None: a graph too large for
    the automaton, whose questions use the full-text fallback)."""
    linker = QuestionEntityLinker(store)
    n = store.count_articles()  # counted once, for both questions
    return linker.key(n) if n <= linker.max_titles else None


def carry_linker_over(db_path: str, was: str) -> bool:
    """After a write that changed no name (title or redirect): the saved linker, if it
    was built for the key ``was``, re-labelled for the graph as it is now, not rebuilt."""
    with GraphStore.open(db_path, read_only=True, buffer_pool_mb=_LINKER_POOL_MB) as store:
        path = store.linker_path()
        now = linker_key(store)
    return path is not None and now is not None and carry_over(path, was, now)

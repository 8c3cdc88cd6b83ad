"""How a graph lies on disk, and the file operations that keep it whole.

A graph at ``PATH`` is:

* ``PATH``: the Kùzu database file (and ``PATH.wal`` while it is open for writing);
* ``PATH.indexes/``: derived indexes kg-agent keeps beside it, in a generation
  folder ``gen-<time>/`` that the graph's ``Meta.indexes`` names: the full-text
  index (tantivy, ``sections/`` and ``titles/``), the article table
  (``articles.arrow``) and the link table (``links.bin``). A generation is written
  whole before the graph points at it, so a graph and its indexes are switched
  together by one atomic change (a rename of the database file, or a one-row
  update of ``Meta``).

A new graph is built at ``.NAME.kg-new`` beside ``PATH`` and renamed over it when
complete (:func:`install`): ``kill -9`` at any moment leaves either no graph (or
the empty one that was there) or the whole new one, and never costs a copy of a
graph. What a killed build leaves (``.NAME.kg-new``, unreferenced generations) is
removed by the next writer (:func:`collect_garbage`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path

__all__ = [
    "collect_garbage",
    "default_buffer_pool_mb",
    "drop_index_generations",
    "fsync_path",
    "index_dir",
    "install",
    "live_indexes",
    "new_database_path",
    "remove_database",
    "total_memory_bytes",
]

_MB = 1 << 20


def index_dir(db_path: str | os.PathLike[str]) -> Path:
    return Path(str(db_path) + ".indexes")


def new_database_path(db_path: str | os.PathLike[str]) -> Path:
    p = Path(db_path)
    return p.with_name(f".{p.name}.kg-new")


def _wal(p: Path) -> Path:
    return p.with_name(p.name + ".wal")


def _remove_db_files(p: Path) -> None:
    if p.is_dir():
        shutil.rmtree(p)
    elif p.exists() or p.is_symlink():
        p.unlink()
    for extra in (_wal(p), p.with_name(p.name + ".shadow")):
        if extra.exists():
            extra.unlink()


def remove_database(path: str | os.PathLike[str]) -> None:
    """Delete a graph: the database (file or directory form), its WAL and its indexes."""
    p = Path(path)
    _remove_db_files(p)
    shutil.rmtree(index_dir(p), ignore_errors=True)


def fsync_path(path: Path) -> None:
    """Flush a file or a folder's entries to the disk (best effort)."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def install(new: Path, target: Path) -> None:
    """Put the closed database ``new`` in place of ``target`` (absent or an empty graph).

    ``new`` was closed cleanly (checkpointed: no WAL). A stale WAL of ``target``
    is removed *before* the rename, so it can never be replayed onto the new file.
    """
    if _wal(new).exists():
        raise RuntimeError(f"{new} still has a write-ahead log: it was not closed cleanly")
    with contextlib.suppress(FileNotFoundError):
        fd = os.open(new, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    if _wal(target).exists():
        _wal(target).unlink()
    if target.is_dir():
        shutil.rmtree(target)
    os.replace(new, target)
    fsync_path(target.parent)


def live_indexes(meta: Mapping[str, str]) -> list[str]:
    """What a graph's ``Meta`` names beside it: its index generation and the manifest of
    its vector index (what :func:`collect_garbage` keeps)."""
    return [name for name in (meta.get("indexes"), meta.get("vector_manifest")) if name]


def collect_garbage(db_path: str | os.PathLike[str], live: Iterable[str]) -> None:
    """Remove a killed build's ``.NAME.kg-new``, and the index generations and vector
    index files no graph uses (``live``: :func:`live_indexes` of the graph)."""
    from kg_agent.store.vector_index import collect_vector_garbage

    keep = list(live)
    _remove_db_files(new_database_path(Path(db_path)))
    drop_index_generations(db_path, keep)
    collect_vector_garbage(index_dir(db_path), [n for n in keep if n.startswith("manifest-")])


def drop_index_generations(db_path: str | os.PathLike[str], live: Iterable[str]) -> None:
    """Remove the index generations of ``db_path`` other than ``live``."""
    keep = set(live)
    root = index_dir(Path(db_path))
    if root.is_dir():
        for child in root.iterdir():
            if child.name.startswith("gen-") and child.name not in keep:
                shutil.rmtree(child, ignore_errors=True)


def total_memory_bytes() -> int:
    """Physical memory, or the cgroup's limit when the process runs in a smaller one."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        total = 8 << 30
    for limit_file in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        with contextlib.suppress(OSError, ValueError):
            value = Path(limit_file).read_text().strip()
            if value.isdigit() and 0 < int(value) < total:
                total = int(value)
    return int(total)


#: A writer's pool when its work needs no more: a new graph is copied in groups the
#: pool bounds (``ingest/write.py``), and the indexes without vectors stream.
WRITER_POOL_MB = 2048


def default_buffer_pool_mb(read_only: bool, *, need_mb: int = 0) -> int:
    """Kùzu's buffer pool, sized from the work and the machine
    (``KG_AGENT_BUFFER_POOL_MB`` overrides).

    Kùzu keeps the pages it read or wrote until the pool is full, so the pool is what
    a long job's memory grows to, not only a cap. A reader gets 25% of memory (several
    may share the machine, and queries touch few pages). A writer gets
    :data:`WRITER_POOL_MB`, or ``need_mb`` when its work must hold more at once (a
    transaction that adds to a graph keeps its pages until it commits), and never more
    than 60% of memory.
    """
    env = os.environ.get("KG_AGENT_BUFFER_POOL_MB", "").strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    total = total_memory_bytes() // _MB
    if read_only:
        return max(512, total // 4)
    return max(512, min(max(WRITER_POOL_MB, int(need_mb)), int(total * 0.6)))

"""Is a graph's database file the one kg-agent last wrote? Checksums and a full read.

Kùzu 0.11.3 does not checksum its pages: bytes overwritten in the middle of the
file make it return wrong text silently, or die with a segmentation fault
(measured in ``tests/e2e/test_damaged_db.py``). So every writer of kg-agent ends
by recording a checksum of each 16 MiB block of the closed file
(``PATH.indexes/checksums.json``), and ``kg-agent check`` compares them and then
reads every column of every table. A block that differs names the damage; a
crash during the read is reported by the ``kg-agent`` parent process
(:mod:`kg_agent._entry`).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kg_agent.store.layout import index_dir

__all__ = ["IntegrityReport", "verify_checksums", "write_checksums"]

BLOCK = 16 << 20
_FILE = "checksums.json"
_MAX_THREADS = 8


def _digests(path: Path, block: int = BLOCK) -> list[str]:
    """The digest of each ``block`` bytes of ``path``, a thread a core (hashlib and the
    reads let go of the GIL; a writer pays this after every commit, so at English
    Wikipedia's ~100 GB one thread would be minutes). A thread holds one block at a time."""
    blocks = -(-path.stat().st_size // block)
    fd = os.open(path, os.O_RDONLY)
    try:

        def digest(i: int) -> str:
            data = os.pread(fd, block, i * block)
            return hashlib.blake2b(data, digest_size=16).hexdigest()

        workers = min(blocks, os.cpu_count() or 1, _MAX_THREADS)
        if workers <= 1:
            return [digest(i) for i in range(blocks)]
        with ThreadPoolExecutor(workers) as pool:
            return list(pool.map(digest, range(blocks)))
    finally:
        os.close(fd)


def write_checksums(db_path: str | os.PathLike[str]) -> Path:
    """Record the checksums of the (closed) database file; returns the record's path."""
    db = Path(db_path)
    target = index_dir(db) / _FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    st = db.stat()
    record = {
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "block": BLOCK,
        "written_at": _dt.datetime.now(_dt.timezone.utc).isoformat(),
        "blocks": _digests(db),
    }
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(json.dumps(record), encoding="utf-8")
    os.replace(tmp, target)
    return target


@dataclass(slots=True)
class IntegrityReport:
    """What :func:`verify_checksums` found. ``recorded`` False: no checksums to compare."""

    recorded: bool
    size_matches: bool = True
    damaged_blocks: list[int] = field(default_factory=list)  # byte offsets
    written_at: str = ""

    @property
    def ok(self) -> bool:
        return self.recorded and self.size_matches and not self.damaged_blocks

    def to_dict(self) -> dict[str, Any]:
        return {
            "recorded": self.recorded,
            "size_matches": self.size_matches,
            "damaged_blocks": self.damaged_blocks,
            "written_at": self.written_at,
            "ok": self.ok,
        }


def verify_checksums(db_path: str | os.PathLike[str]) -> IntegrityReport:
    db = Path(db_path)
    try:
        record = json.loads((index_dir(db) / _FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return IntegrityReport(recorded=False)
    report = IntegrityReport(recorded=True, written_at=str(record.get("written_at", "")))
    if db.stat().st_size != record["size"]:
        report.size_matches = False
    block = int(record["block"])
    for i, (now, then) in enumerate(zip(_digests(db, block), record["blocks"], strict=False)):
        if now != then:
            report.damaged_blocks.append(i * block)
    return report

"""Block checksums of a database file (the damage checks run in tests/e2e/test_damaged_db.py)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from kg_agent.store.integrity import _digests


def test_the_threads_digest_each_block_as_one_reader_does(tmp_path: Path) -> None:
    data = os.urandom(10_500)  # 10 whole blocks of 1,000 and a short one
    path = tmp_path / "g.kuzu"
    path.write_bytes(data)
    one_by_one = [
        hashlib.blake2b(data[i : i + 1000], digest_size=16).hexdigest()
        for i in range(0, len(data), 1000)
    ]
    assert _digests(path, 1000) == one_by_one
    damaged = bytearray(data)
    damaged[7_321] ^= 0xFF
    path.write_bytes(bytes(damaged))
    now = _digests(path, 1000)
    changed = [i for i, (a, b) in enumerate(zip(now, one_by_one, strict=True)) if a != b]
    assert changed == [7]
    path.write_bytes(b"")
    assert _digests(path, 1000) == []

"""A persistent cache of section embeddings, keyed by model and text.

Embedding is by far the slowest phase of a load on a CPU (tens of sections per
second). Re-loading a source (``--force``), loading the same corpus into a
second database, or re-running an evaluation should not pay it again, so
vectors are kept in one SQLite file per embedding configuration under
``$KG_AGENT_CACHE_DIR`` (default ``~/.cache/kg-agent``). ``--no-cache`` skips it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float32]


def default_cache_dir() -> Path:
    env = os.environ.get("KG_AGENT_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kg-agent"


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


class EmbeddingCache:
    """``text → vector`` for one embedder identity (model + settings that change vectors)."""

    def __init__(self, identity: str, dimension: int, directory: Path | None = None) -> None:
        self.dimension = dimension
        root = directory or default_cache_dir()
        root.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha1(f"{identity}|{dimension}".encode()).hexdigest()[:16]
        self.path = root / f"embeddings-{name}.sqlite"
        self._db = sqlite3.connect(self.path, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS emb (k BLOB PRIMARY KEY, v BLOB NOT NULL)")
        self._db.execute("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT)")
        self._db.execute(
            "INSERT OR IGNORE INTO meta VALUES ('identity', ?), ('dimension', ?)",
            (identity, str(dimension)),
        )
        self._db.commit()
        self.hits = 0
        self.misses = 0

    def get_many(self, texts: Sequence[str]) -> list[FloatArray | None]:
        keys = [_digest(t) for t in texts]
        found: dict[bytes, bytes] = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i : i + 500]
            marks = ",".join("?" * len(chunk))
            found.update(self._db.execute(f"SELECT k, v FROM emb WHERE k IN ({marks})", chunk))
        out: list[FloatArray | None] = []
        for k in keys:
            blob = found.get(k)
            if blob is not None and len(blob) == 4 * self.dimension:
                out.append(np.frombuffer(blob, dtype=np.float32))
                self.hits += 1
            else:
                out.append(None)
                self.misses += 1
        return out

    def put_many(self, texts: Sequence[str], vectors: FloatArray) -> None:
        rows = [
            (_digest(t), np.ascontiguousarray(v, dtype=np.float32).tobytes())
            for t, v in zip(texts, vectors, strict=True)
        ]
        self._db.executemany("INSERT OR REPLACE INTO emb VALUES (?, ?)", rows)
        self._db.commit()

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self._db.close()

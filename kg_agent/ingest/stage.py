"""The staging folder of one load: what makes a load resumable.

One folder per (database, source fingerprint), beside the database unless
``--staging-dir`` says otherwise: ``.<db name>.kg-load-<fingerprint>/``. It holds
the parsed shards (``units/``), the resolved, copy-ready tables (``resolved/``),
the embedded sections (``embedded/``) and small JSON markers saying which phases
and shards are complete. A killed load leaves it behind; running the same
``kg-agent load`` again finds it and carries on from the last complete shard.
It is removed when the load completes, and by ``--restart``.

Also here: the load lock (one load per database at a time, across processes)
and the clean-up of what killed loads of older versions left (``.kg-stage-*``).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import json
import os
import shutil
from pathlib import Path
from typing import Any

from kg_agent.exceptions import DatabaseLockedError
from kg_agent.ingest.shards import ShardSet
from kg_agent.store.layout import index_dir

__all__ = ["LoadLock", "Stage", "clean_stale_stages"]

#: 2: fact ids are numbers in the shards
STAGE_VERSION = 2


class Stage:
    """The staging folder of one load (see the module docstring)."""

    def __init__(self, root: Path, info: dict[str, Any], *, resumed: bool) -> None:
        self.root = root
        self.info = info
        self.resumed = resumed
        self.units = ShardSet(root / "units")
        self.resolved = ShardSet(root / "resolved")
        self.embedded = ShardSet(root / "embedded")

    @staticmethod
    def path_for(db_path: str, fingerprint: str, staging_dir: str | None) -> Path:
        db = Path(db_path).resolve()
        base = Path(staging_dir).resolve() if staging_dir else db.parent
        return base / f".{db.name}.kg-load-{fingerprint[:16]}"

    @classmethod
    def open(
        cls,
        db_path: str,
        fingerprint: str,
        *,
        staging_dir: str | None,
        restart: bool,
        describe: dict[str, Any],
    ) -> Stage:
        """The stage of this load: resumed when a matching one exists, else new."""
        root = cls.path_for(db_path, fingerprint, staging_dir)
        info_path = root / "stage.json"
        if restart:
            shutil.rmtree(root, ignore_errors=True)
        info: dict[str, Any] | None = None
        with contextlib.suppress(OSError, ValueError):
            info = json.loads(info_path.read_text(encoding="utf-8"))
        if info is not None and (
            info.get("version") != STAGE_VERSION or info.get("fingerprint") != fingerprint
        ):
            info = None
        if info is None:
            shutil.rmtree(root, ignore_errors=True)
            root.mkdir(parents=True)
            started = _dt.datetime.now(_dt.timezone.utc)
            info = {
                "version": STAGE_VERSION,
                "fingerprint": fingerprint,
                "started_at": started.isoformat(),
                # µs: two loads in one second stay two
                "load_id": f"load-{started:%Y%m%dT%H%M%S.%f}-{fingerprint[:8]}",
                **describe,
            }
            _write_json(info_path, info)
            return cls(root, info, resumed=False)
        return cls(root, info, resumed=True)

    @property
    def load_id(self) -> str:
        return str(self.info["load_id"])

    def done(self, phase: str) -> dict[str, Any] | None:
        with contextlib.suppress(OSError, ValueError):
            data: dict[str, Any] = json.loads((self.root / f"{phase}.json").read_text("utf-8"))
            return data
        return None

    def mark(self, phase: str, data: dict[str, Any]) -> None:
        _write_json(self.root / f"{phase}.json", data)

    def forget(self, *phases: str) -> None:
        for phase in phases:
            with contextlib.suppress(FileNotFoundError):
                (self.root / f"{phase}.json").unlink()

    def file(self, name: str) -> Path:
        return self.root / name

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _write_json(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, default=str), encoding="utf-8")
    os.replace(tmp, path)


def clean_stale_stages(db_path: str) -> None:
    """Remove ``.kg-stage-*`` folders that loads of earlier versions left when killed."""
    parent = Path(db_path).resolve().parent
    for old in parent.glob(".kg-stage-*"):
        if old.is_dir():
            shutil.rmtree(old, ignore_errors=True)


class LoadLock:
    """One load (or other writer of kg-agent) per database at a time, across processes.

    Kùzu's own lock covers one open database; a load opens and closes it several
    times (read-only to resolve links, read-write to write), so this advisory
    ``flock`` on ``<db>.indexes/load.lock`` spans the whole load. The kernel drops
    it when the process dies, ``kill -9`` included, so it can never be left stale.
    """

    def __init__(self, db_path: str) -> None:
        self.db = str(db_path)
        self.path = index_dir(Path(db_path).resolve()) / "load.lock"
        self._fh: Any = None

    def __enter__(self) -> LoadLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(self.path, "a+")
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.close()
            raise DatabaseLockedError(
                f"database {self.db} is in use by another kg-agent load or update: "
                "wait for it to finish and retry"
            ) from None
        self._fh = fh
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fh is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._fh.fileno(), fcntl.LOCK_UN)
            self._fh.close()
            self._fh = None

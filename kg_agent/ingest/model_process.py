"""The embedding model in a process of its own, started beside an update's CPU phases.

Why a process and not a thread: the model's start (torch's imports, the weights, on a GPU
CUDA's set-up) holds Python's lock most of its 3-11 s, so a thread starting it shared the
main thread's time more than it ran beside it. Measured on an H100 machine at 100k
articles, a thread took 8 s off the embed and added 7.4 s to the diff, reparse and resolve
before it (docs/notes/updates.md). A spawned process has its own lock and its own core; the
vectors come back over a pipe (1,500 sections are ~2.3 MB).

Only the package's own :class:`Embedder` runs there, rebuilt from its settings; a subclass
(a caller's own model) cannot be rebuilt in another process and keeps the thread.
Anything wrong with the process (its start failed, it died, an embed raised there) makes
:class:`ChildEmbedder` embed in this process instead, where the error, if it is the
model's, is raised as it always was. The child ignores Ctrl-C (the parent decides), dies
with its parent, and exits when its pipe closes.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from kg_agent.embedding import Embedder, EmbeddingConfig, FloatArray
from kg_agent.exceptions import one_line

__all__ = ["ChildEmbedder", "ModelProcess"]

log = logging.getLogger(__name__)


class ChildGone(Exception):
    """The model process cannot embed (start failed, died, or an embed raised there)."""


def _serve(conn: Connection, settings: dict[str, Any]) -> None:
    """The child: load the model, embed one text, say so; then embed what it is sent."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    from kg_agent.ingest.parse import set_parent_death_signal

    set_parent_death_signal()
    if os.getppid() != settings["parent"]:  # the parent died before the signal was set
        return
    t0 = time.perf_counter()
    try:
        try:
            embedder = EmbeddingConfig(**settings["config"]).build(settings["device"])
            embedder._plain = settings["plain"]
            embedder._sort_by = settings["sort_by"]
            embedder.load()
            embedder.embed(["warm-up"])  # CUDA's kernels and the tokenizer's buffers, set up
        except Exception as exc:
            conn.send(("failed", one_line(exc)))
            return
        conn.send(("ready", (time.perf_counter() - t0, embedder.device)))
        while True:
            message = conn.recv()
            if message[0] != "embed":
                return
            try:
                vectors = embedder.embed(message[1], progress=lambda n: conn.send(("progress", n)))
            except (EOFError, OSError):
                raise
            except Exception as exc:
                conn.send(("error", one_line(exc)))
                continue
            conn.send(("vectors", vectors))
    except (EOFError, OSError):  # the parent closed the pipe or is gone: nothing to do
        return


class ModelProcess:
    """A spawned process holding ``embedder``'s model; see the module doc."""

    def __init__(self, embedder: Embedder) -> None:
        if type(embedder) is not Embedder:
            raise TypeError("only kg_agent's own Embedder can be rebuilt in a child process")
        settings = {
            "config": asdict(embedder.config),
            "device": embedder.device_setting,  # "auto" is resolved there, not here
            "plain": embedder._plain,
            "sort_by": embedder._sort_by,
            "parent": os.getpid(),
        }
        ctx = multiprocessing.get_context("spawn")
        self._conn, theirs = ctx.Pipe()
        self._proc = ctx.Process(
            target=_serve, args=(theirs, settings), name="kg-agent-model", daemon=True
        )
        self._proc.start()
        theirs.close()  # so that the child's death reads as EOF here
        self.seconds: float | None = None  # the child's start, once it reported
        self.device: str | None = None  # where its model runs, once it reported
        self.waited = 0.0  # seconds this process spent waiting for the child's start
        self._broken: str | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid

    def _receive(self) -> tuple[str, Any]:
        try:
            kind, value = self._conn.recv()
        except (EOFError, OSError) as exc:
            self._proc.join(1)  # reaped, so that its exit status is known
            self._broken = f"the model process ended (exit status {self._proc.exitcode})"
            raise ChildGone(self._broken) from exc
        return str(kind), value

    def _abandon(self, why: str) -> None:
        """Never use the child again: its pipe may hold replies to a request left unread
        (which the next request would take for its own), or it failed."""
        self._broken = why
        self.close()

    def wait_ready(self) -> None:
        """Block until the child has its model; :class:`ChildGone` if it never will."""
        if self._broken is not None:
            raise ChildGone(self._broken)
        if self.seconds is not None:
            return
        t0 = time.perf_counter()
        try:
            kind, value = self._receive()
        finally:
            self.waited += time.perf_counter() - t0
        if kind != "ready":
            self._broken = str(value)
            raise ChildGone(self._broken)
        seconds, self.device = value
        self.seconds = float(seconds)

    def embed(self, texts: list[str], progress: Callable[[int], None] | None = None) -> FloatArray:
        """The child's vectors of ``texts``; :class:`ChildGone` if it could not, and then
        the child is stopped (so is it when anything else interrupts the exchange)."""
        try:
            self.wait_ready()
            try:
                self._conn.send(("embed", texts))
            except (OSError, ValueError) as exc:
                raise ChildGone(f"the model process ended ({exc})") from exc
            while True:
                kind, value = self._receive()
                if kind == "progress":
                    if progress is not None:
                        progress(int(value))
                elif kind == "vectors":
                    return np.asarray(value, dtype=np.float32)
                else:  # "error": the embed raised there; the caller tries here
                    raise ChildGone(str(value))
        except ChildGone as exc:
            self._abandon(str(exc))
            raise
        except BaseException:  # Ctrl-C, the progress callback, memory: mid-exchange
            self._abandon("an embed was interrupted")
            raise

    def close(self) -> None:
        """Stop the child at once (it holds nothing to save, and an update's write waits
        for this) and reap it."""
        if self._proc.is_alive():
            self._proc.kill()
        self._proc.join()
        self._conn.close()


class ChildEmbedder(Embedder):
    """``local``'s settings, its texts embedded by ``child``, or by ``local`` itself when
    the child cannot (the same vectors either way; an error raised as ``local`` raises it)."""

    def __init__(self, local: Embedder, child: ModelProcess) -> None:
        settings = asdict(local.config)
        super().__init__(settings.pop("model"), device=local.device_setting, **settings)
        self._plain = local._plain
        self._sort_by = local._sort_by
        self.local = local
        self.child = child
        self._warned = False

    @property
    def is_loaded(self) -> bool:
        return self.local.is_loaded

    @property
    def device(self) -> str:
        """The child's device once it reported it. ``auto`` not yet resolved here is not
        resolved here (torch's import) but waited for from the child, whose model the
        embed waits for anyway; the local one only if the child cannot embed."""
        if self.child.device is None and self.local.device_setting == "auto":
            with contextlib.suppress(ChildGone):
                self.child.wait_ready()
        return self.child.device or self.local.device

    @property
    def dimension(self) -> int:
        return self.local.dimension

    def load(self) -> Any:
        return self.local.load()

    def embed(
        self, texts: Sequence[str], progress: Callable[[int], None] | None = None
    ) -> FloatArray:
        items = texts if isinstance(texts, str) else list(texts)
        checked = not isinstance(items, str) and all(isinstance(t, str) for t in items)
        done = 0  # what the child reported: a fallback's progress does not go back

        def reported(n: int) -> None:
            nonlocal done
            done = max(done, n)
            if progress is not None:
                progress(done)

        if checked and items and not self.local.is_loaded:
            try:
                return self.child.embed(list(items), reported)
            except ChildGone as exc:
                if self._warned or self.child.seconds is None:  # its start failed: as here
                    log.debug("the model process did not start (%s); embedding here", exc)
                else:
                    log.warning("the model process could not embed (%s); embedding here", exc)
                self._warned = True
        return self.local.embed(items, reported if progress is not None else None)

"""Start the embedding model beside an update's CPU phases, so its embed does not wait for it.

An update embeds a few sections, but the model's start is paid whole whatever their number:
torch, the weights, on a GPU CUDA's context and a first batch (3-4 s on a CPU, 8-11 s on an
H100 machine; docs/notes/updates.md). The phases before the embed need no model, so the model
starts beside them: the package's own :class:`Embedder` in a process of its own
(:mod:`kg_agent.ingest.model_process`, which says why not a thread), started before the parse
and stopped at once if the parse finds nothing to write; any other embedder on a thread, once
the parse found articles to write (a thread cannot be stopped). The embed phase embeds with
:attr:`ModelWarmup.model`, which finds it loaded, or waits for the rest of its start.

A failed start is not reported here: the embed phase loads the model in this process and
raises as it always did. The thread is joined and the process stopped when the ``with``
block ends (or :meth:`ModelWarmup.stop`), so nothing is left running after it.
"""

from __future__ import annotations

import logging
import threading
import time
from types import TracebackType

from kg_agent.embedding import Embedder
from kg_agent.ingest.model_process import ChildEmbedder, ModelProcess

__all__ = ["ModelWarmup"]

log = logging.getLogger(__name__)


class ModelWarmup:
    """Loads ``embedder``'s model and runs one text through it, once started: in a child
    process for the package's own :class:`Embedder`, on a thread for any other."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self._seconds: float | None = None
        self._thread: threading.Thread | None = None
        self._child: ModelProcess | None = None
        self._model: Embedder = embedder

    @property
    def seconds(self) -> float | None:
        """How long the start took, once done (for a process: once the embed asked it)."""
        return self._child.seconds if self._child is not None else self._seconds

    @property
    def model(self) -> Embedder:
        """What the embed phase embeds with: the started model, or ``embedder`` itself."""
        return self._model

    def start(self, *, early: bool = False) -> None:
        """Start it unless started or the model is loaded already. ``early`` (before it is
        known whether the model will be needed) starts only a process, which
        :meth:`stop` can end at once; a thread cannot be stopped, so it waits for a
        call without ``early``."""
        if self._thread is not None or self._child is not None or self.embedder.is_loaded:
            return
        if early and type(self.embedder) is not Embedder:
            return
        if type(self.embedder) is Embedder:
            try:
                self._child = ModelProcess(self.embedder)
            except OSError as exc:  # no process to be had (limits): the thread will do
                log.debug("model process not started: %s", exc)
                if early:  # but a thread cannot be stopped: it waits for the parse
                    return
            else:
                self._model = ChildEmbedder(self.embedder, self._child)
                return
        self._thread = threading.Thread(target=self._run, name="model-warmup", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        t0 = time.perf_counter()
        try:
            self.embedder.load()
            # the first batch sets up what the first call of each kind costs (CUDA's
            # kernels and handles, the tokenizer's buffers); its vector is not kept
            self.embedder.embed(["warm-up"])
        except Exception as exc:  # the embed phase loads again and raises it there
            log.debug("model warm-up failed: %s", exc)
            return
        self._seconds = time.perf_counter() - t0

    def stop(self) -> None:
        """Join the thread (its start is over then, done or failed) or stop the process;
        at once if never started. The model is not used through :attr:`model` after."""
        if self._thread is not None:
            self._thread.join()
        if self._child is not None:
            self._child.close()
            self._model = self.embedder

    def __enter__(self) -> ModelWarmup:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

"""Start the embedding model beside an update's CPU phases, so its embed does not wait for it.

An update embeds a few sections, but the model's start is paid whole whatever their number:
torch, the weights, on a GPU CUDA's context and a first batch (3-4 s on a CPU, 8-11 s on an
H100 machine; docs/BENCHMARKS.md). The diff, the reparse and the resolve before the embed need
no model, so a thread starts it there. The embed phase then finds it loaded, or waits for the
rest of its start under the model's own lock (:meth:`Embedder.load`).

A failed start is not reported here: the embed phase loads the model again and raises as it
always did. The thread is joined when the ``with`` block ends, so no import or CUDA call is
left running while the interpreter exits.
"""

from __future__ import annotations

import logging
import threading
import time
from types import TracebackType

from kg_agent.embedding import Embedder

__all__ = ["ModelWarmup"]

log = logging.getLogger(__name__)


class ModelWarmup:
    """A thread that loads ``embedder``'s model and runs one text through it, once started."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.seconds: float | None = None  # how long the start took, once done
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start it unless started or the model is loaded already."""
        if self._thread is not None or self.embedder.is_loaded:
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
        self.seconds = time.perf_counter() - t0

    def wait(self) -> None:
        """Block until the start is over (done, or failed); at once if never started."""
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> ModelWarmup:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.wait()

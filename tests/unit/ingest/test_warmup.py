"""The model started beside an update's CPU phases (``ingest.warmup``), on the real model."""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kg_agent.embedding import Embedder
from kg_agent.exceptions import InvalidArgumentError
from kg_agent.ingest.model_process import ChildEmbedder
from kg_agent.ingest.warmup import ModelWarmup

TEXT = "Ada Lovelace :: Early life :: Ada was the daughter of Lord Byron."


class _OwnEmbedder(Embedder):
    """A caller's own embedder (here the real model under another class): not rebuildable
    in a child process, so it starts on a thread."""

    def load(self) -> Any:
        return super().load()


def test_the_package_embedder_starts_in_a_process_and_the_vectors_do_not_change(
    embedder: Embedder,
) -> None:
    fresh = Embedder()
    with ModelWarmup(fresh) as warmup:
        warmup.start()
        warmup.start()  # a second start is the same start
        model = warmup.model
        assert isinstance(model, ChildEmbedder)
        np.testing.assert_allclose(model.embed([TEXT]), embedder.embed([TEXT]), atol=1e-6)
        child = model.child
        assert warmup.seconds is not None and warmup.seconds > 0
    assert not fresh.is_loaded  # the model ran in the child, never here
    assert child._proc.exitcode == -signal.SIGKILL  # stopped and reaped with the block
    assert warmup.model is fresh


def test_another_embedder_starts_on_a_thread(embedder: Embedder) -> None:
    own = _OwnEmbedder()
    with ModelWarmup(own) as warmup:
        warmup.start()
    assert own.is_loaded and warmup.model is own
    assert warmup.seconds is not None and warmup.seconds > 0
    assert not any(t.name == "model-warmup" for t in threading.enumerate())
    np.testing.assert_allclose(own.embed([TEXT]), embedder.embed([TEXT]), atol=1e-6)


def test_one_never_started_loads_nothing() -> None:
    idle = Embedder()
    with ModelWarmup(idle) as warmup:
        pass
    assert not idle.is_loaded and warmup.seconds is None and warmup.model is idle


def test_a_model_already_loaded_is_not_started_again(embedder: Embedder) -> None:
    embedder.load()
    with ModelWarmup(embedder) as warmup:
        warmup.start()
        assert warmup.model is embedder
    assert warmup.seconds is None  # nothing ran


@pytest.mark.parametrize("kind", [Embedder, _OwnEmbedder])
def test_a_failed_start_is_raised_where_the_model_is_used(
    kind: type[Embedder], tmp_path: Path
) -> None:
    broken = kind(f"{tmp_path}/no-such-model")
    with ModelWarmup(broken) as warmup:
        warmup.start()
        with pytest.raises(InvalidArgumentError, match="cannot load embedding model"):
            warmup.model.embed([TEXT])
    assert warmup.seconds is None and not broken.is_loaded


def test_an_early_start_starts_only_a_process(embedder: Embedder) -> None:
    """Before it is known whether the model is needed, only what can be stopped starts."""
    own = _OwnEmbedder()
    with ModelWarmup(own) as warmup:
        warmup.start(early=True)
        assert warmup.model is own and warmup._thread is None  # a thread waits
        warmup.start()
        assert warmup._thread is not None
    assert own.is_loaded


def test_an_early_start_not_needed_is_stopped_at_once() -> None:
    fresh = Embedder()
    warmup = ModelWarmup(fresh)
    warmup.start(early=True)
    model = warmup.model
    assert isinstance(model, ChildEmbedder)
    warmup.stop()  # the parse found nothing to write
    assert model.child._proc.exitcode == -signal.SIGKILL  # not left to finish its start
    assert warmup.model is fresh and not fresh.is_loaded

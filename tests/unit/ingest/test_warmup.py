"""The model started beside an update's CPU phases (``ingest.warmup``), on the real model."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from kg_agent.embedding import Embedder
from kg_agent.exceptions import InvalidArgumentError
from kg_agent.ingest.warmup import ModelWarmup

TEXT = "Ada Lovelace :: Early life :: Ada was the daughter of Lord Byron."


def test_a_started_warmup_loads_the_model_and_the_vectors_do_not_change(
    embedder: Embedder,
) -> None:
    fresh = Embedder()
    with ModelWarmup(fresh) as warmup:
        warmup.start()
        warmup.start()  # a second start is the same start
    assert fresh.is_loaded
    assert warmup.seconds is not None and warmup.seconds > 0
    assert not any(t.name == "model-warmup" for t in threading.enumerate())
    np.testing.assert_allclose(fresh.embed([TEXT]), embedder.embed([TEXT]), atol=1e-6)


def test_one_never_started_loads_nothing() -> None:
    idle = Embedder()
    with ModelWarmup(idle) as warmup:
        pass
    assert not idle.is_loaded and warmup.seconds is None


def test_a_model_already_loaded_is_not_started_again(embedder: Embedder) -> None:
    embedder.load()
    with ModelWarmup(embedder) as warmup:
        warmup.start()
    assert warmup.seconds is None  # no thread ran


def test_a_failed_start_is_raised_where_the_model_is_used(tmp_path: Path) -> None:
    broken = Embedder(f"{tmp_path}/no-such-model")
    with ModelWarmup(broken) as warmup:
        warmup.start()
    assert warmup.seconds is None and not broken.is_loaded
    with pytest.raises(InvalidArgumentError, match="cannot load embedding model"):
        broken.embed([TEXT])

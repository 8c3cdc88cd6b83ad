"""The embedding model in a process of its own (``ingest.model_process``), on the real model."""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from kg_agent.embedding import Embedder
from kg_agent.exceptions import InvalidArgumentError
from kg_agent.ingest.model_process import ChildEmbedder, ChildGone, ModelProcess

TEXTS = [f"Article {i} :: History :: Event number {i} happened in {1900 + i}." for i in range(40)]


@pytest.fixture
def child() -> Iterator[ModelProcess]:
    proc = ModelProcess(Embedder(batch_size=8))
    yield proc
    proc.close()


def test_the_child_embeds_as_this_process_does_and_reports_each_batch(
    child: ModelProcess, embedder: Embedder
) -> None:
    seen: list[int] = []
    vectors = child.embed(TEXTS, progress=seen.append)
    np.testing.assert_allclose(vectors, embedder.embed(TEXTS), atol=1e-5)
    assert vectors.dtype == np.float32 and vectors.shape == (40, embedder.dimension)
    assert seen == [8, 16, 24, 32, 40]  # a running total after each batch of 8
    assert child.seconds is not None and child.seconds > 0


def test_an_auto_device_is_resolved_by_the_child_and_read_from_it() -> None:
    """``auto`` crosses to the child unresolved; the child says where its model runs,
    and the embedder in this process takes the device from it, never resolving it here
    (which imports torch on a machine with a GPU driver)."""
    local = Embedder(device="auto", batch_size=8)
    proc = ModelProcess(local)
    try:
        model = ChildEmbedder(local, proc)
        assert proc.device is None and model.device_setting == "auto"
        assert model.device == proc.device == ("cuda" if torch_sees_a_gpu() else "cpu")
        assert local.device_setting == "auto"  # never resolved in this process
        assert proc.seconds is not None and proc.waited > 0  # it waited for the start
        waited = proc.waited
        model.embed(TEXTS[:3])
        assert proc.waited == waited  # ready once: embeds do not wait again
    finally:
        proc.close()


def torch_sees_a_gpu() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def test_ctrl_c_reaches_the_parent_only(child: ModelProcess) -> None:
    child.wait_ready()
    assert child.pid is not None
    os.kill(child.pid, signal.SIGINT)  # a terminal's Ctrl-C reaches the whole group
    assert child.embed(TEXTS[:2]).shape[0] == 2  # it ignored it, and still embeds


def test_an_embed_interrupted_midway_is_never_answered_by_its_leftovers(
    child: ModelProcess,
) -> None:
    """Replies left unread in the pipe would answer the next request: the child goes."""

    def interrupt(_done: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        child.embed(TEXTS, progress=interrupt)
    with pytest.raises(ChildGone):
        child.embed(TEXTS[:2])
    assert child._proc.exitcode == -signal.SIGKILL


def test_a_child_killed_leaves_the_embed_to_this_process_with_one_warning(
    embedder: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    local = Embedder(batch_size=8)
    proc = ModelProcess(local)
    model = ChildEmbedder(local, proc)
    try:
        proc.wait_ready()
        assert proc.pid is not None
        os.kill(proc.pid, signal.SIGKILL)
        with caplog.at_level(logging.WARNING, logger="kg_agent.ingest.model_process"):
            first = model.embed(TEXTS[:3])
            second = model.embed(TEXTS[3:6])
    finally:
        proc.close()
    np.testing.assert_allclose(first, embedder.embed(TEXTS[:3]), atol=1e-5)
    assert second.shape == (3, embedder.dimension) and local.is_loaded
    assert proc._proc.exitcode == -signal.SIGKILL  # reaped, not left behind
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1 and "embedding here" in warnings[0], warnings


def test_what_this_process_rejects_is_rejected_the_same(child: ModelProcess) -> None:
    local = Embedder()
    model = ChildEmbedder(local, child)
    with pytest.raises(InvalidArgumentError, match="use embed_query"):
        model.embed("one string")
    with pytest.raises(InvalidArgumentError, match="not str"):
        model.embed(["a", 3])  # type: ignore[list-item]
    assert model.embed([]).shape == (0, local.dimension)
    assert not local.is_loaded  # none of these needed the model


def test_only_the_package_embedder_is_rebuilt_there() -> None:
    class Own(Embedder):
        pass

    with pytest.raises(TypeError):
        ModelProcess(Own())


def test_a_model_that_cannot_load_fails_the_child_and_raises_here(tmp_path: Path) -> None:
    local = Embedder(f"{tmp_path}/no-such-model")
    proc = ModelProcess(local)
    try:
        with pytest.raises(InvalidArgumentError, match="cannot load embedding model"):
            ChildEmbedder(local, proc).embed(["x"])
        assert proc.seconds is None
    finally:
        proc.close()

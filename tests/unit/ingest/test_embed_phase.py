"""The embed phase's caches (``ingest.embed_phase``), on real SQLite caches."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kg_agent.ingest.embed_cache import EmbeddingCache
from kg_agent.ingest.embed_phase import _Layered


def test_the_embedding_cache_is_opened_only_for_what_the_graphs_vectors_lack(
    tmp_path: Path,
) -> None:
    """An update reads the graph's vectors first; the embedding cache, whose key holds
    the device's precision (which an update's model process says only once its model
    started), is opened only when a text is not among them."""
    graph = EmbeddingCache("graph|m", 3, directory=tmp_path / "reuse")
    graph.put_many(["a", "b"], np.eye(3, dtype=np.float32)[:2])
    opened: list[EmbeddingCache] = []

    def own() -> EmbeddingCache:
        opened.append(EmbeddingCache("m|fp16=True", 3, directory=tmp_path / "own"))
        return opened[-1]

    layered = _Layered(graph, own)
    found = layered.get_many(["b", "a"])
    assert not opened  # every text was the graph's: no device was needed
    assert [v.tolist() for v in found if v is not None] == [[0, 1, 0], [1, 0, 0]]
    assert layered.get_many(["a", "c"])[1] is None and len(opened) == 1
    layered.put_many(["c"], np.array([[0, 0, 1]], dtype=np.float32))
    assert opened[-1].get_many(["c"])[0].tolist() == [0, 0, 1]
    assert graph.get_many(["c"]) == [None]  # the graph's vectors stay read only
    for cache in (graph, *opened):
        cache.close()

"""The vector index on real all-MiniLM vectors of a loaded graph, asked real questions.

The graph's own index (exact at this size) must rank as exact float32 search does; the
IVF-PQ index that graphs past ``EXACT_MAX`` sections get, built here from the same
vectors, must hold its recall floor against it (docs/BENCHMARKS.md measures it at
200k-5M sections).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa

from kg_agent.embedding import Embedder
from kg_agent.ingest.pipeline import LoadReport
from kg_agent.store import GraphStore
from kg_agent.store import vector_index as vi


def _questions(shared_data_dir: Path, embedder: Embedder) -> np.ndarray:
    rows = json.loads(
        (shared_data_dir / "multihop/2wikimultihopqa/questions.dev.json").read_text("utf-8")
    )
    texts = [q["question"] for q in rows[:120]]
    return np.asarray([embedder.embed_query(t) for t in texts], np.float32)


def test_the_index_holds_its_recall_floor_on_real_questions(
    twowiki_graph: tuple[Path, LoadReport],
    shared_data_dir: Path,
    embedder: Embedder,
    tmp_path: Path,
) -> None:
    db, _ = twowiki_graph
    queries = _questions(shared_data_dir, embedder)
    with GraphStore.open(db, read_only=True) as store:
        ids, matrix = store.section_embeddings()
        exact = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
        truth = [[ids[i] for i in np.argsort(-(exact @ q))[:10]] for q in queries]
        own = [[h.section_id for h in store.vector_search(q.tolist(), 10)] for q in queries]
        index = store.vector_index()
        assert index is not None and index.describe()["exact_segments"] == 1
    # the graph's own index is exact: the same ten, save ties of equal text
    same = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(own, truth, strict=True)])
    assert same >= 0.99
    parts = [(pa.array(ids[a : a + 500]), matrix[a : a + 500]) for a in range(0, len(ids), 500)]
    name = vi.build_vector_index(tmp_path, lambda: parts, matrix.shape[1], exact_max=0)
    ivf = vi.VectorIndex(tmp_path / vi.FOLDER, name)
    assert ivf.describe()["exact_segments"] == 0 and len(ivf) == len(ids)
    found = [
        len(set(t) & {sid for sid, _ in ivf.search(q, 10)}) / 10
        for q, t in zip(queries, truth, strict=True)
    ]
    assert np.mean(found) >= 0.95

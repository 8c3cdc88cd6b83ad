"""Semantic search over section embeddings: exact scan on small graphs, the vector index
beside the graph on large ones.

Below :data:`EXACT_SCAN_MAX_SECTIONS` sections, one matrix product over all
embeddings (held in memory, 1.5 KB per section) is both exact and faster than
an index probe; above it, the graph's vector index (``store/vector_index.py``:
IVF-PQ with SQ8 rescoring) answers with bounded memory.
``scripts/bench_query.py --index-recall`` measures the index's recall against
the exact scan.

Two things keep a warm query fast on a small, busy CPU (docs/notes/retrieval.md):
the query is embedded on one torch thread (see :func:`_query_threads`) and the
scan is a numpy ``einsum`` rather than a BLAS product, whose worker threads must
be woken for every call. Either wake-up costs milliseconds to hundreds of
milliseconds when other processes hold the cores.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from kg_agent.embedding import Embedder, FloatArray
from kg_agent.exceptions import InvalidArgumentError, SchemaMismatchError
from kg_agent.language.question import query_text
from kg_agent.retrieval.base import Evidence, Query, RetrievalResult, Retriever
from kg_agent.store import GraphReader

EXACT_SCAN_MAX_SECTIONS = 200_000
#: Overrides :data:`EXACT_SCAN_MAX_SECTIONS` (0: always the vector index; what the eval
#: uses to measure the index on graphs small enough to scan).
EXACT_SCAN_ENV = "KG_AGENT_EXACT_SCAN_MAX_SECTIONS"


def exact_scan_max_sections() -> int:
    value = os.environ.get(EXACT_SCAN_ENV, "").strip()
    return int(value) if value.isdigit() else EXACT_SCAN_MAX_SECTIONS


SEMANTIC_OFF = (
    "semantic search is off: this graph has no embeddings (loaded with --embeddings "
    "none or later); answers come from BM25 and the graph until 'kg-agent embed' runs"
)

QUERY_EMBED_THREADS = 1
"""torch intra-op threads while one query is embedded (restored afterwards)."""


@contextlib.contextmanager
def _query_threads(embedder: Embedder) -> Iterator[None]:
    """Embed one query on :data:`QUERY_EMBED_THREADS` torch thread(s).

    A query is a dozen word pieces, so its matrix products are small and a second
    thread can save only a few milliseconds even on an idle CPU. When other
    processes hold the cores, every parallel region of the forward pass waits
    for a worker thread that is not running. Measured on 2 busy cores: p50 of
    195 ms on 2 threads, 17 ms on one, and 31 ms against 17 ms with a single
    other process running.
    Leaves torch alone when the embedder's ``threads`` was set explicitly, for
    other embedders, and off the CPU.
    """
    if (
        not isinstance(embedder, Embedder)
        or embedder.threads is not None
        or not embedder.device.startswith("cpu")
    ):
        yield
        return
    import torch  # the model's own import: free once it has loaded

    before = torch.get_num_threads()
    if before <= QUERY_EMBED_THREADS:
        yield
        return
    torch.set_num_threads(QUERY_EMBED_THREADS)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def embed_few(embedder: Embedder) -> Callable[[list[str]], FloatArray]:
    """``embedder.embed`` for a few short texts a call (key names, a question), on the
    query's torch threads (:func:`_query_threads`): faster on busy cores, and the same
    numbers in whichever thread of the process calls it (the fact search runs in one of
    its own: a thread's torch threads are its own, and two teams sum in another order)."""

    def embed(texts: list[str]) -> FloatArray:
        with _query_threads(embedder):
            return embedder.embed(texts)

    return embed


class SemanticRetriever(Retriever):
    """Cosine similarity between the query and section embeddings."""

    def __init__(
        self,
        store: GraphReader,
        embedder: Embedder,
        *,
        mode: str = "auto",
        exact_max_sections: int | None = None,
    ) -> None:
        if mode not in ("auto", "exact", "index"):
            raise InvalidArgumentError(f"mode must be auto, exact or index, not {mode!r}")
        meta = store.meta()
        model = meta.get("model")
        if model and model != embedder.name:
            raise SchemaMismatchError(
                f"the graph {store.path} was embedded with {model}, but the query embedder "
                f"is {embedder.name}: query with {model}, or re-embed the graph with "
                f"'kg-agent embed --db {store.path} --model {embedder.name} --force'"
            )
        self.store = store
        self.embedder = embedder
        # A graph loaded with --embeddings none|later has no vectors to search
        # (or only some of them): semantic search is off until `kg-agent embed`.
        self.enabled = meta.get("embeddings", "complete") == "complete"
        if not self.enabled:
            mode = "off"
        elif mode == "auto":
            n = store.count_sections()
            limit = exact_scan_max_sections() if exact_max_sections is None else exact_max_sections
            mode = "exact" if n <= limit else "index"
        self.mode = mode
        self._ids: list[str] | None = None
        self._matrix: Any = None
        self._rows_of: dict[str, list[int]] | None = None
        self._last: tuple[str, Any] | None = None

    def _load_matrix(self) -> None:
        if self._ids is None:
            ids, matrix = self.store.section_embeddings()
            # the matrix first: a concurrent reader tests _ids (serve's threads)
            self._matrix = matrix
            self._ids = ids

    def query_vector(self, query: str) -> Any:
        """The query's embedding; the last one is kept, since the hybrid and graph
        retrievers ask for the same question's vector several times."""
        last = self._last  # read once: another thread may replace it
        if last is not None and last[0] == query:
            return last[1]
        with _query_threads(self.embedder):
            vec = self.embedder.embed_query(query)
        self._last = (query, vec)
        return vec

    def search(self, query: Query, top_k: int = 10) -> RetrievalResult:
        query = query_text(query)
        if not self.enabled:
            return RetrievalResult(query=query, evidence=[], notes=[SEMANTIC_OFF])
        t0 = time.perf_counter()
        vec = self.query_vector(query)
        t1 = time.perf_counter()
        evidence = self.search_vector(vec, top_k)
        t2 = time.perf_counter()
        return RetrievalResult(
            query=query, evidence=evidence, timings={"embed": t1 - t0, "search": t2 - t1}
        )

    def search_vector(self, vec: Any, top_k: int) -> list[Evidence]:
        """Top sections for an already-embedded query."""
        if top_k < 1:
            return []
        if self.mode == "index":
            hits = self.store.vector_search(vec, top_k)
            return [Evidence.from_hit(h, h.score, source="semantic") for h in hits]
        self._load_matrix()
        assert self._ids is not None
        if not self._ids:
            return []
        # einsum, not ``@``: numpy's single-threaded loop scans 10 MB in under a
        # millisecond; BLAS wakes its threads for a product this size, which costs
        # 5-10 ms right after the query was embedded (measured, 2 busy cores).
        sims = np.einsum("ij,j->i", self._matrix, np.asarray(vec, dtype=np.float32))
        k = min(top_k, len(self._ids))
        top = np.argpartition(-sims, k - 1)[:k]
        top = top[np.argsort(-sims[top], kind="stable")]
        ids = [self._ids[i] for i in top]
        rows = self.store.sections_by_ids(ids)
        return [
            Evidence.from_hit(rows[sid], float(sims[i]), source="semantic")
            for sid, i in zip(ids, top, strict=True)
            if sid in rows
        ]

    def score_articles(self, vec: Any, titles: Sequence[str]) -> dict[str, Evidence]:
        """Each given article's best-matching section for ``vec`` (title → evidence).

        Exact mode reads the in-memory matrix; index mode fetches the articles'
        sections with their embeddings (one query). Unknown titles are left out.
        """
        wanted = list(dict.fromkeys(titles))
        if not wanted:
            return {}
        q = np.asarray(vec, dtype=np.float32)
        best: dict[str, tuple[float, str]] = {}
        if self.mode == "exact":
            self._load_matrix()
            assert self._ids is not None
            if self._rows_of is None:
                rows_of: dict[str, list[int]] = {}
                for i, sid in enumerate(self._ids):
                    rows_of.setdefault(sid.rsplit("::", 1)[0], []).append(i)
                self._rows_of = rows_of
            for t in wanted:
                rows = self._rows_of.get(t)
                if not rows:
                    continue
                sims = self._matrix[rows] @ q
                j = int(np.argmax(sims))
                best[t] = (float(sims[j]), self._ids[rows[j]])
            hits = self.store.sections_by_ids([sid for _, sid in best.values()])
            return {
                t: Evidence.from_hit(hits[sid], sim, source="semantic")
                for t, (sim, sid) in best.items()
                if sid in hits
            }
        out: dict[str, Evidence] = {}
        for hit, emb in self.store.sections_of_articles(wanted):
            sim = float(np.asarray(emb, dtype=np.float32) @ q)
            if hit.title not in out or sim > out[hit.title].similarity:
                out[hit.title] = Evidence.from_hit(hit, sim, source="semantic")
        return out

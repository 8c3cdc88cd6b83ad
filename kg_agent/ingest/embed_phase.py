"""The embed phase of a load: each shard's sections with their vectors, resumably.

A shard's vectors are written with a marker once complete, so a resumed load
embeds only the shards that were not finished. Vectors already in the embedding
cache (:mod:`kg_agent.ingest.embed_cache`) are reused, not recomputed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.parquet as pq

from kg_agent.embedding import Embedder
from kg_agent.ingest.chunking import embedding_input
from kg_agent.ingest.embed_cache import EmbeddingCache, FloatArray
from kg_agent.ingest.stage import Stage
from kg_agent.progress import Progress

__all__ = [
    "embed_shards",
    "embedder_identity",
    "section_texts",
    "vector_rows",
    "vectors_for",
]


def embedder_identity(embedder: Embedder) -> str:
    """What makes two embedders' vectors interchangeable (the cache key's scope):
    the model and every setting that moves a vector past float noise."""
    parts = [
        embedder.name,
        f"seq={getattr(embedder, 'max_seq_length', None)}",
        f"int8={getattr(embedder, 'quantize', False)}",
        f"bf16={getattr(embedder, 'uses_bf16', False)}",
    ]
    if getattr(embedder, "uses_fp16", False):  # added only when on: older keys stay valid
        parts.append("fp16=True")
    return "|".join(parts)


def vector_rows(
    ids: pa.Array | pa.ChunkedArray,
    text_hashes: pa.Array | pa.ChunkedArray,
    vectors: npt.NDArray[np.float32],
    dimension: int,
) -> pa.Table:
    """The rows of ``SectionVector`` (id, text_hash, embedding) as a batch file holds them."""
    flat = pa.array(np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1))
    emb = pa.FixedSizeListArray.from_arrays(flat, dimension)
    return pa.table([ids, text_hashes, emb], names=["id", "text_hash", "embedding"])


def section_texts(table: pa.Table | pa.RecordBatch) -> list[str]:
    """What the model reads for each section row (article, heading path, text)."""
    return [
        embedding_input(a, h, t)
        for a, h, t in zip(
            table.column("article").to_pylist(),
            table.column("heading_path").to_pylist(),
            table.column("text").to_pylist(),
            strict=True,
        )
    ]


def embed_shards(
    stage: Stage,
    units: Sequence[int],
    embedder: Embedder,
    *,
    total_sections: int,
    cache: bool = True,
    progress: bool = True,
    reuse: EmbeddingCache | None = None,
) -> int:
    """Embed every shard not yet embedded; returns how many vectors came from a cache.

    ``reuse`` is looked up first: an update's vectors of the sections it replaces, so a
    section whose text did not change is never embedded again."""
    done = stage.embedded.markers()
    already = sum(int(done[u]["sections"]) for u in units if u in done)
    prog = Progress("embed", total=total_sections, unit="sections", enabled=progress)
    prog.set(already)
    prog.start_rate_at(already)
    own: EmbeddingCache | None = None

    def open_own() -> EmbeddingCache | None:
        """The embedding cache, opened when first needed: its key holds the device's
        precision, which an update's model process says only once its model started."""
        nonlocal own
        if own is None and cache:
            own = EmbeddingCache(embedder_identity(embedder), embedder.dimension)
        return own

    store: EmbeddingCache | _Layered | None
    store = _Layered(reuse, open_own) if reuse is not None else open_own()
    hits = 0
    try:
        for unit in units:
            if unit in done:
                continue
            path = stage.resolved.path(unit, "sections")
            if not path.exists():
                stage.embedded.mark(unit, {"unit": unit, "sections": 0})
                continue
            table = pq.read_table(path)
            vectors, cached = vectors_for(section_texts(table), embedder, store, prog)
            hits += cached
            out = stage.embedded.path(unit, "vectors")
            tmp = out.with_name(out.name + ".tmp")
            rows = vector_rows(
                table.column("id"), table.column("text_hash"), vectors, embedder.dimension
            )
            pq.write_table(rows, tmp)
            tmp.replace(out)
            stage.embedded.mark(unit, {"unit": unit, "sections": table.num_rows, "cached": cached})
    finally:
        prog.close()
        if own is not None:
            own.close()
    return hits


class _Layered:
    """Two caches as one: ``first`` (read only), then the one ``second`` opens, if any,
    when ``first`` lacks a text (it keeps the new vectors)."""

    def __init__(self, first: EmbeddingCache, second: Callable[[], EmbeddingCache | None]) -> None:
        self.first = first
        self.second = second

    def get_many(self, texts: Sequence[str]) -> list[FloatArray | None]:
        out = self.first.get_many(texts)
        missing = [i for i, v in enumerate(out) if v is None]
        second = self.second() if missing else None
        if second is not None:
            for i, v in zip(missing, second.get_many([texts[i] for i in missing]), strict=True):
                out[i] = v
        return out

    def put_many(self, texts: Sequence[str], vectors: FloatArray) -> None:
        second = self.second()
        if second is not None:
            second.put_many(texts, vectors)


def vectors_for(
    texts: list[str], embedder: Embedder, cache: EmbeddingCache | _Layered | None, prog: Progress
) -> tuple[npt.NDArray[np.float32], int]:
    """Vectors of ``texts`` (cache first); progress counts each text once."""
    reported = 0

    def on_done(so_far: int) -> None:  # the embedder reports a running total
        nonlocal reported
        prog.update(so_far - reported)
        reported = so_far

    if cache is None:
        return embedder.embed(texts, progress=on_done), 0
    found = cache.get_many(texts)
    missing = [i for i, v in enumerate(found) if v is None]
    out = np.zeros((len(texts), embedder.dimension), dtype=np.float32)
    for i, v in enumerate(found):
        if v is not None:
            out[i] = v
    prog.update(len(texts) - len(missing))
    if missing:
        todo = [texts[i] for i in missing]
        fresh = embedder.embed(todo, progress=on_done)
        out[missing] = fresh
        cache.put_many(todo, fresh)
    return out, len(texts) - len(missing)

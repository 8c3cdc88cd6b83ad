"""``kg-agent embed``: vectors for a graph's sections, as a stage of its own.

Why a stage: on a CPU, embedding is nearly the whole cost of a load (~95 sections/s
on two cores), so a maintainer loads the graph first (``load --embeddings later``:
BM25 + graph search work at once) and embeds when, and where, compute is there.

Like a load it is resumable and never leaves a mixture. The work folder
(``.NAME.kg-embed/`` beside the database) holds:

1. **plan**: ``todo.parquet``, the sections that need a vector (none yet, or one of an
   older text: ``Section.text_hash`` differs from ``SectionVector.text_hash``),
   exported by Kùzu as a stream, and ``plan.json`` (model, graph fingerprint);
2. **batches**: ``batches/b000000.parquet``…, one per ``chunk`` sections, each
   written atomically, so Ctrl-C or ``kill -9`` loses at most the batch in flight;
3. **write**: every batch copied in one ``COPY`` (atomic: Kùzu's log has all of it
   or none), then the vector index built anew over all the graph's vectors
   (``Meta.vectors_stale`` says it is owed, so a kill in between is finished by the
   rerun, or by ``reindex``) and the checksums rewritten. A graph whose index stores
   its vectors (``Meta.vector_store``) gets the index first, from the batches and the
   index's own vectors, then the ``COPY`` of their keys.

A rerun finds the plan and the finished batches and says so; a graph that changed
in between (another load) is planned again.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from kg_agent.crashpoints import crash_point
from kg_agent.embedding import Embedder
from kg_agent.exceptions import LoadAborted
from kg_agent.ingest.embed_cache import EmbeddingCache
from kg_agent.ingest.embed_phase import (
    embedder_identity,
    section_texts,
    vector_rows,
    vectors_for,
)
from kg_agent.ingest.embed_ray import RayOptions, embed_on_ray, split_shards
from kg_agent.progress import Progress
from kg_agent.store import GraphStore, vector_count
from kg_agent.store.integrity import write_checksums
from kg_agent.store.layout import default_buffer_pool_mb

if TYPE_CHECKING:
    from kg_agent.ingest.session import WriteSession

__all__ = ["EmbedReport", "embed_graph", "work_dir"]

#: Sections per resumable batch: ~100 s of CPU embedding, well under a second on a GPU.
DEFAULT_CHUNK = 10_000
#: On Ray a batch is also the unit the actor pool shares out: smaller, so that every
#: worker has many (one batch of 10,000 kept a 2-worker pool to one worker on a 5k-section
#: graph; measured in docs/notes/embedding.md). Still seconds of work on a GPU per batch.
RAY_CHUNK = 1_000

_SECTIONS = (
    "MATCH (s:Section) RETURN s.id AS id, s.text_hash AS text_hash, s.article AS article, "
    "s.heading_path AS heading_path, s.text AS text"
)
_SECTION_KEYS = "MATCH (s:Section) RETURN s.id AS id, s.text_hash AS text_hash"
_VECTOR_KEYS = "MATCH (v:SectionVector) RETURN v.id AS id, v.text_hash AS text_hash"


@dataclass(slots=True)
class EmbedReport:
    """What ``embed_graph`` did (``kg-agent embed --json`` prints it)."""

    db_path: str
    model: str
    sections: int = 0  # sections in the graph
    embedded: int = 0  # vectors computed or taken from the cache by this run
    cached: int = 0
    computed: int = 0  # of those, run through the model (embedded less cached)
    replaced: int = 0  # older vectors of changed text
    resumed_batches: int = 0
    batches: int = 0
    vector_index: bool = False
    seconds: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__}  # type: ignore[attr-defined]


def work_dir(db_path: str) -> Path:
    db = Path(db_path).resolve()
    return db.parent / f".{db.name}.kg-embed"


def embed_graph(
    db_path: str,
    embedder: Embedder | None = None,
    *,
    chunk: int | None = None,
    cache: bool = True,
    restart: bool = False,
    progress: bool = True,
    say: Callable[[str], None] | None = None,
    force: bool = False,
    ray: RayOptions | None = None,
) -> EmbedReport:
    """Embed every section of the graph at ``db_path`` that lacks a current vector.

    ``embedder`` defaults to the model the graph records. A graph with no vectors
    yet may switch model (its vector table is recreated at the new dimension); one
    with vectors refuses another model, as a load does, unless ``force``: then every
    section is embedded again and the new vectors replace the old ones at the end
    (until then the graph answers with the old ones). ``ray`` runs the model on a
    Ray cluster (:mod:`kg_agent.ingest.embed_ray`) instead of in this process.
    ``chunk`` (sections per resumable batch) defaults to :data:`DEFAULT_CHUNK`, or
    :data:`RAY_CHUNK` on Ray.
    """
    if chunk is None:
        chunk = RAY_CHUNK if ray is not None else DEFAULT_CHUNK
    if chunk < 1:
        raise ValueError(f"chunk must be positive, got {chunk}")
    from kg_agent.ingest.session import WriteSession

    job = _Embedding(db_path, embedder, chunk, cache, restart, progress)
    job.force = force
    job.ray = ray
    job.say = say or (lambda msg: None)
    resume = f"kg-agent embed --db {shlex.quote(db_path)}"
    if embedder is not None:
        resume += f" --model {shlex.quote(embedder.name)}"
    if force:
        resume += " --force"
    with WriteSession(db_path, "embed", resume, key="embed") as session:
        job.session = session
        try:
            report = job.run()
            session.done()
            return report
        except KeyboardInterrupt:
            raise LoadAborted(
                f"embedding {db_path} was interrupted; the graph is as it was and the "
                "finished batches are kept: run the same command to resume"
            ) from None


class _Embedding:
    def __init__(
        self,
        db_path: str,
        embedder: Embedder | None,
        chunk: int,
        cache: bool,
        restart: bool,
        progress: bool,
    ) -> None:
        self.db_path = db_path
        self.embedder = embedder
        self.chunk = chunk
        self.cache = cache
        self.restart = restart
        self.progress = progress
        self.root = work_dir(db_path)
        self.say: Callable[[str], None] = lambda msg: None
        self.force = False
        self.ray: RayOptions | None = None
        self.session: WriteSession | None = None

    def run(self) -> EmbedReport:
        t0 = time.perf_counter()
        with GraphStore.open(self.db_path, read_only=False) as store:
            embedder = self._embedder(store)
            report = EmbedReport(self.db_path, embedder.name)
            report.sections = int(store.table_counts().get("Section", 0))
            plan = self._plan(store, embedder)
        report.seconds["plan"] = round(time.perf_counter() - t0, 3)
        todo = self.root / "todo.parquet"
        rows = int(plan["rows"])
        report.batches = -(-rows // self.chunk)
        t1 = time.perf_counter()
        self._phase("embed")
        if self.ray is not None:
            shards = split_shards(todo, self.root, self.chunk)
            report.resumed_batches = embed_on_ray(
                self.root,
                shards,
                embedder.config,
                embedder.device,
                self.ray,
                total_rows=rows,
                progress=self.progress,
                say=self.say,
            )
        else:
            report.resumed_batches, report.cached = self._embed(todo, rows, embedder)
        report.embedded = rows
        report.computed = rows - report.cached
        report.seconds["embed"] = round(time.perf_counter() - t1, 3)
        t2 = time.perf_counter()
        pool = default_buffer_pool_mb(read_only=False)
        with GraphStore.open(self.db_path, read_only=False, buffer_pool_mb=pool) as store:
            self._phase("write")
            if self.session is not None:  # readers refuse the graph until the index follows
                store.set_meta(**self.session.pending_meta())
            report.replaced = self._write(store, plan, embedder)
            report.seconds["write"] = round(time.perf_counter() - t2, 3)
            t3 = time.perf_counter()
            self._phase("vector_index")
            report.vector_index = store.build_vector_index()
            report.seconds["vector_index"] = round(time.perf_counter() - t3, 3)
            crash_point("finish.before_clear")
            store.clear_write_pending()
        crash_point("finish.before_checksums")
        write_checksums(self.db_path)
        shutil.rmtree(self.root, ignore_errors=True)
        report.seconds["total"] = round(time.perf_counter() - t0, 3)
        return report

    def _phase(self, name: str) -> None:
        if self.session is not None:
            self.session.phase(name)

    # ------------------------------------------------------------------ model
    def _embedder(self, store: GraphStore) -> Embedder:
        meta = store.meta()
        recorded = meta.get("model")
        embedder = self.embedder or Embedder(recorded)
        if embedder.name == recorded and int(meta.get("dimension", 0)) == embedder.dimension:
            return embedder
        if self.force:  # the old vectors serve queries until the new ones replace them
            return embedder
        if vector_count(store.table_counts()):
            store.check_model(dimension=embedder.dimension, model=embedder.name)  # raises
        store.reset_vectors(dimension=embedder.dimension, model=embedder.name)
        return embedder

    # ------------------------------------------------------------------ plan
    def _fingerprint(self, store: GraphStore, embedder: Embedder) -> str:
        loads = sorted(str(load["id"]) for load in store.loads())
        counts = store.table_counts()
        key = [embedder_identity(embedder), loads, counts.get("Section"), self.chunk]
        if self.force:
            key.append("force")
        return hashlib.sha256(json.dumps(key).encode()).hexdigest()[:16]

    def _plan(self, store: GraphStore, embedder: Embedder) -> dict[str, Any]:
        fingerprint = self._fingerprint(store, embedder)
        plan_file = self.root / "plan.json"
        if not self.restart and plan_file.exists():
            plan: dict[str, Any] = json.loads(plan_file.read_text())
            if plan.get("fingerprint") == fingerprint:
                return plan
        shutil.rmtree(self.root, ignore_errors=True)
        (self.root / "batches").mkdir(parents=True)
        have = 0
        if not self.force and vector_count(store.table_counts()):
            have_file = self.root / "have.parquet"
            store.export_parquet(store.over_vector_tables(_VECTOR_KEYS), have_file)
            have = pq.read_metadata(have_file).num_rows
        stale: list[str] = []
        todo = self.root / "todo.parquet"
        if have:
            stale = self._plan_against(store, todo)
        else:
            store.export_parquet(_SECTIONS, todo)
        rows = pq.read_metadata(todo).num_rows if todo.exists() else 0
        plan = {
            "fingerprint": fingerprint,
            "rows": rows,
            "stale": stale,
            "model": embedder.name,
            "force": self.force,
        }
        tmp = plan_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(plan))
        tmp.replace(plan_file)
        return plan

    def _plan_against(self, store: GraphStore, todo: Path) -> list[str]:
        """The sections without a current vector, when some have one; returns the ids
        whose vector is stale. Memory: the (id, hash) keys of the graph, not its text."""
        keys_file = self.root / "keys.parquet"
        store.export_parquet(_SECTION_KEYS, keys_file)
        keys = pq.read_table(keys_file)
        have = pq.read_table(self.root / "have.parquet")
        need = keys.join(have, keys=["id", "text_hash"], join_type="left anti")
        stale_ids = pc.is_in(have.column("id"), value_set=need.column("id"))
        stale = have.filter(stale_ids).column("id").to_pylist()
        tmp = todo.with_suffix(".tmp")
        full = self.root / "sections.parquet"
        store.export_parquet(_SECTIONS, full)
        wanted = need.column("id").combine_chunks()
        with pq.ParquetFile(full) as src:
            writer = pq.ParquetWriter(tmp, src.schema_arrow)
            try:
                for batch in src.iter_batches(batch_size=200_000):
                    mask = pc.is_in(batch.column("id"), value_set=wanted)
                    writer.write_table(pa.Table.from_batches([batch]).filter(mask))
            finally:
                writer.close()
        tmp.replace(todo)
        for f in (full, keys_file):
            f.unlink()
        return [str(s) for s in stale]

    # ------------------------------------------------------------------ embed
    def _batch_path(self, i: int) -> Path:
        return self.root / "batches" / f"b{i:06d}.parquet"

    def _embed(self, todo: Path, rows: int, embedder: Embedder) -> tuple[int, int]:
        """Embed each batch not yet on disk; returns (batches found done, cache hits)."""
        n_batches = -(-rows // self.chunk)
        done = [i for i in range(n_batches) if self._batch_path(i).exists()]
        already = sum(pq.read_metadata(self._batch_path(i)).num_rows for i in done)
        if done:
            self.say(f"resuming: {len(done):,} of {n_batches:,} batches done")
        prog = Progress("embed", total=rows, unit="sections", enabled=self.progress)
        prog.set(already)
        prog.start_rate_at(already)
        store = (
            EmbeddingCache(embedder_identity(embedder), embedder.dimension) if self.cache else None
        )
        hits = 0
        try:
            if rows == 0:
                return 0, 0
            with pq.ParquetFile(todo) as src:
                for i, batch in enumerate(src.iter_batches(batch_size=self.chunk)):
                    out = self._batch_path(i)
                    if out.exists():
                        continue
                    vectors, cached = vectors_for(section_texts(batch), embedder, store, prog)
                    hits += cached
                    table = vector_rows(
                        batch.column("id"), batch.column("text_hash"), vectors, embedder.dimension
                    )
                    tmp = out.with_name(out.name + ".tmp")
                    pq.write_table(table, tmp)
                    tmp.replace(out)
        finally:
            prog.close()
            if store is not None:
                store.close()
        return len(done), hits

    # ------------------------------------------------------------------ write
    def _write(self, store: GraphStore, plan: dict[str, Any], embedder: Embedder) -> int:
        files = sorted((self.root / "batches").glob("b*.parquet"))
        stale = [str(s) for s in plan.get("stale", [])]
        in_index = store.vectors_in_index()
        if plan.get("force"):
            # every vector replaced, perhaps by another model: a new table, the model
            # recorded with it, then one COPY; a rerun after a kill does the same again
            replaced = int(vector_count(store.table_counts()))
            store.reset_vectors(dimension=embedder.dimension, model=embedder.name)
            store.set_meta(embeddings="partial")
            if in_index:  # the index first: it is the vectors' only copy
                store.rebuild_vector_index(files)
            store.copy_parquet("SectionVector", files)
            store.set_meta(embeddings="complete")
            return replaced
        if not files and not stale:
            return 0
        if files and not self._copied(store, files[0]):
            if in_index:
                # the index holds the only copy, so it takes the batches first (named in
                # Meta once whole); a rerun after a kill before the COPY below finds them
                # in it and replaces them, never adding them twice
                store.rebuild_vector_index(files, drop=stale)
                crash_point("embed.index_before_copy")
            else:
                store.set_meta(vectors_stale="1")  # the vector index is built anew after
            store.delete_vectors(stale)
            store.copy_parquet("SectionVector", files)
        counts = store.table_counts()
        complete = vector_count(counts) >= counts.get("Section", 0)
        store.set_meta(embeddings="complete" if complete else "partial")
        return len(stale)

    @staticmethod
    def _copied(store: GraphStore, first: Path) -> bool:
        """Whether an earlier run's ``COPY`` of the batches committed (then all of it did)."""
        row = pq.ParquetFile(first).read_row_group(0, columns=["id", "text_hash"]).slice(0, 1)
        sid, h = row.column("id")[0].as_py(), row.column("text_hash")[0].as_py()
        return bool(store.vector_hash(sid) == h)

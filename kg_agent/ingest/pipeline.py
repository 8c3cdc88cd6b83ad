"""The load pipeline: source → shards → resolved tables → (vectors) → graph → indexes.

Each phase reads files the previous one wrote into the load's staging folder
(:mod:`kg_agent.ingest.stage`), so memory stays flat whatever the dump's size and
a killed load resumes where it stopped:

1. **parse** (:mod:`.parse`): the source cut into units, parsed by worker processes
   into parquet shards (skipped for shards already complete);
2. **resolve** (:mod:`.prepare`): link targets resolved, edges aggregated, rows of
   duplicate titles dropped, everything written in the graph's column order;
3. **embed** (:mod:`.embed_phase`): section vectors, shard by shard (``--embeddings
   none|later`` skips it: the graph is then searched by BM25 and the graph);
4. **write** (:mod:`.write`): ``COPY FROM`` the files, into a new graph built beside
   the target and renamed over it, or in one transaction of a child process when
   adding to a graph (never a copy of the graph, never a mixture);
5. **index** (:mod:`kg_agent.store.indexes`): vector index, text index, PageRank.

A load of a source already in the graph is skipped by fingerprint (``--force``
re-loads it); one whose data committed but whose indexes did not finish is
finished by the next run.
"""

from __future__ import annotations

import contextlib
import errno
import os
import resource
import shlex
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kg_agent.crashpoints import crash_point
from kg_agent.embedding import DEFAULT_MODEL_NAME, Embedder
from kg_agent.entities.saved import save_linker_apart
from kg_agent.exceptions import (
    DatabaseError,
    InvalidArgumentError,
    KGAgentError,
    LoadAborted,
    SchemaMismatchError,
    SourceError,
    one_line,
)
from kg_agent.ingest.compact import compact_locked
from kg_agent.ingest.embed_phase import embed_shards, embedder_identity
from kg_agent.ingest.finish import finish_indexes
from kg_agent.ingest.options import SourceOptions
from kg_agent.ingest.parse import ParseOptions, ParseResult, parse_source
from kg_agent.ingest.prepare import GraphLookups, prepare
from kg_agent.ingest.session import WriteSession
from kg_agent.ingest.sources import detect_format, fingerprint
from kg_agent.ingest.stage import Stage, clean_stale_stages
from kg_agent.ingest.upgrade import upgrade_graph
from kg_agent.ingest.write import WriteJob, now, write_graph, write_in_child
from kg_agent.store import SCHEMA_VERSION, GraphStore
from kg_agent.store.indexes import (
    TextSource,
    build_text_index,
    finalize_indexes,
)
from kg_agent.store.integrity import write_checksums
from kg_agent.store.layout import (
    collect_garbage,
    default_buffer_pool_mb,
    install,
    live_indexes,
    new_database_path,
)
from kg_agent.store.vectors import VECTOR_STORES, default_vector_store

__all__ = [
    "EMBEDDING_MODES",
    "LoadOptions",
    "LoadReport",
    "Loader",
    "embedder_identity",
    "load_fingerprint",
    "load_source",
]

#: ``now``: embed while loading (the default); ``none``/``later``: load the graph
#: without vectors (BM25 + graph search), embed later with ``kg-agent embed``.
EMBEDDING_MODES = ("now", "none", "later")


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadOptions(SourceOptions):
    """How a load runs (the options it shares with an update: :class:`SourceOptions`).
    ``limit``: at most this many articles; ``force``: re-load a source already loaded;
    ``embeddings``: one of :data:`EMBEDDING_MODES`; ``vector_store``: where a new graph
    stores its vectors (:data:`~kg_agent.store.vectors.VECTOR_STORES`; default
    ``KG_AGENT_VECTOR_STORE`` or ``graph``; a graph keeps its own)."""

    limit: int | None = None
    batch_pages: int = 2000
    force: bool = False
    embeddings: str = "now"
    vector_store: str | None = None

    def __post_init__(self) -> None:
        SourceOptions.__post_init__(self)
        if self.embeddings not in EMBEDDING_MODES:
            raise InvalidArgumentError(
                f"embeddings must be one of {', '.join(EMBEDDING_MODES)}, not {self.embeddings!r}"
            )
        if self.vector_store is not None and self.vector_store not in VECTOR_STORES:
            raise InvalidArgumentError(
                f"vector_store must be one of {', '.join(VECTOR_STORES)}, not {self.vector_store!r}"
            )


@dataclass(slots=True)
class LoadReport:
    """What a load did, with per-phase timings; ``to_dict()`` is the ``--json`` output."""

    source: str
    format: str
    db_path: str
    load_id: str = ""
    skipped: bool = False
    resumed: bool = False
    articles: int = 0
    new_articles: int = 0
    replaced_articles: int = 0
    redirects: int = 0
    duplicate_pages: int = 0
    disambiguation_pages: int = 0
    sections: int = 0
    links: int = 0
    mentions: int = 0
    inferred_mentions: int = 0
    facts: int = 0  # infobox facts (box parameters: one Fact node each, docs/schema.md)
    categories: int = 0
    stubs: int = 0
    rows_written: int = 0
    cached_embeddings: int = 0
    embed_device: str = ""  # where the model ran ("": not asked to)
    shards: int = 0
    resumed_shards: int = 0
    workers: int = 1
    layout: str = ""
    embeddings: str = "now"
    timings: dict[str, float] = field(default_factory=dict)
    #: Peak resident memory so far (MiB) after each phase: this process, and its
    #: largest child (a parse worker, the writer). Says which phase sets the peak.
    peak_rss_mib: dict[str, dict[str, int]] = field(default_factory=dict)
    model: str = ""
    #: adding to a graph with a vector index: the vectors the load added to it (a
    #: segment of their own, no rebuild) and the rows it deleted from it
    vectors_added: int = 0
    vectors_deleted: int = 0
    compacted: bool = False

    @property
    def pages_per_s(self) -> float:
        t = self.timings.get("parse", 0.0)
        return (self.articles + self.redirects) / t if t else 0.0

    @property
    def sections_per_s(self) -> float:
        t = self.timings.get("embed", 0.0)
        return self.sections / t if t else 0.0

    @property
    def rows_per_s(self) -> float:
        t = self.timings.get("write", 0.0)
        return self.rows_written / t if t else 0.0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.update(
            pages_per_s=round(self.pages_per_s, 1),
            sections_per_s=round(self.sections_per_s, 1),
            rows_per_s=round(self.rows_per_s, 1),
        )
        return d


def _peak_rss_mib() -> dict[str, int]:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10  # KiB on Linux
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss >> 10
    out = {"loader": int(own), "largest_child": int(child)}
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                out["loader_now"] = int(line.split()[1]) >> 10
    return out


def _trim_heap() -> None:
    """Hand freed heap back to the OS after a phase (glibc keeps it otherwise): the
    resolve phase's per-title sets would stay in the loader's memory through the write
    and the indexes, where Kùzu's buffer pool needs the room."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            import ctypes
            import gc

            gc.collect()
            ctypes.CDLL("libc.so.6").malloc_trim(0)


class Loader:
    """Loads one source into the graph at ``db_path``; see the module docstring."""

    def __init__(
        self,
        db_path: str | os.PathLike[str],
        *,
        embedder: Embedder | None = None,
        options: LoadOptions | None = None,
        on_phase: Callable[[str], None] | None = None,
        say: Callable[[str], None] | None = None,
    ) -> None:
        self.db_path = str(db_path)
        self.embedder = embedder or Embedder()
        self.options = options or LoadOptions()
        self._on_phase = on_phase
        self._say = say or (lambda msg: None)
        self._pool_mb: int | None = None  # the writer's buffer pool, once sized
        self._live: list[str] = []  # what the graph's Meta names beside it: never collected
        self._held_store: str | None = None  # where the graph's vectors are (a rebuild keeps it)
        self._session: WriteSession | None = None

    # ------------------------------------------------------------------ entry point
    def load(self, source: str | os.PathLike[str]) -> LoadReport:
        src = str(source)
        opts = self.options
        fmt = opts.fmt or detect_format(src)
        fp = load_fingerprint(src, self.embedder.name, opts, fmt=fmt)
        report = LoadReport(
            source=src,
            format=fmt,
            db_path=self.db_path,
            model=self.embedder.name,
            embeddings=opts.embeddings,
        )
        with WriteSession(self.db_path, "load", self.resume_line(src, fmt), key=fp) as session:
            self._session = session
            clean_stale_stages(self.db_path)
            previous, fresh, self._live, only_this = self._inspect(fp)
            collect_garbage(self.db_path, live=self._live)
            if previous and previous.get("status") != "complete":
                out = self._finish_committed(src, fp, previous, report)
                session.done()
                return out
            if previous and not opts.force:
                report.skipped = True
                report.load_id = str(previous["id"])
                if session.previous is not None:  # killed after its install: the last steps
                    self._finish_install(Path(self.db_path))
                session.done()
                return report
            stage = Stage.open(
                self.db_path,
                fp,
                staging_dir=opts.staging_dir,
                restart=opts.restart,
                describe={"source": os.path.abspath(src), "format": fmt},
            )
            report.load_id = stage.load_id
            report.resumed = stage.resumed
            try:
                # a forced load of the graph's only source is built anew beside it, as a
                # first load is, and renamed over it: the old graph serves until then
                self._run(src, fmt, fp, stage, fresh or (opts.force and only_this), report)
            except SourceError:
                stage.remove()  # a bad source is not resumed: fix it (a new fingerprint)
                raise
            except KeyboardInterrupt:
                raise LoadAborted(
                    f"load of {src} interrupted; database {self.db_path} left as it was "
                    "(run the same command to resume)"
                ) from None
            except OSError as exc:
                if exc.errno == errno.ENOSPC:
                    raise LoadAborted(
                        f"load of {src} stopped: no space left on the disk of {stage.root} "
                        "or the database; free some and run the same command to resume"
                    ) from None
                raise
            stage.remove()
            self._index_if_waiting(report)
            session.done()
            return report

    def resume_line(self, src: str, fmt: str) -> str:
        """The command line that runs this load again (what a crash's message names):
        the options that make its fingerprint, and the database."""
        opts = self.options
        parts = ["kg-agent", "load", shlex.quote(os.path.abspath(src))]
        parts += ["--db", shlex.quote(self.db_path)]
        if opts.fmt:
            parts += ["--format", fmt]
        if opts.limit is not None:
            parts += ["--limit", str(opts.limit)]
        if self.embedder.name != DEFAULT_MODEL_NAME:
            parts += ["--model", shlex.quote(self.embedder.name)]
        if opts.max_section_words != LoadOptions().max_section_words:
            parts += ["--max-section-words", str(opts.max_section_words)]
        if opts.embeddings != "now":
            parts += ["--embeddings", opts.embeddings]
        return " ".join(parts)

    def _index_if_waiting(self, report: LoadReport) -> None:
        """A load into a graph whose vector index now holds more than a quarter in
        updates' segments and deletions compacts it (one index built anew)."""
        with GraphStore.open(self.db_path, read_only=True) as store:
            index = store.vector_index()
            if index is None or not index.rebuild_due():
                return
            meta = store.meta()
        self._say(f"compacting {self.db_path} (loads outgrew its vector index)")
        t0 = time.perf_counter()
        compact_locked(Path(self.db_path), meta)
        report.compacted = True
        report.timings["compact"] = round(time.perf_counter() - t0, 3)

    def _inspect(self, fp: str) -> tuple[dict[str, Any] | None, bool, list[str], bool]:
        """(this source's previous load, whether the graph is new or empty, what its
        ``Meta`` names beside it, whether this source is all it holds). Read-only: a load
        that has nothing to do writes nothing."""
        if not Path(self.db_path).exists():
            return None, True, [], False
        try:
            store = GraphStore.open(self.db_path, read_only=True)
        except SchemaMismatchError:  # an older graph: upgraded by the writer that uses it
            upgrade_graph(self.db_path)
            store = GraphStore.open(self.db_path, read_only=True)
        except DatabaseError as exc:
            if "no Meta table" in str(exc):
                return None, True, [], False  # a Kùzu file without a kg-agent graph yet
            raise
        if store.schema_version() != SCHEMA_VERSION:  # readable, but written as it is now
            store.close()
            upgrade_graph(self.db_path)
            store = GraphStore.open(self.db_path, read_only=True)
        with store:
            store.check_model(dimension=self.embedder.dimension, model=self.embedder.name)
            meta, empty = store.meta(), store.is_empty()
            held = meta.get("vector_store", "graph")
            if not empty and self.options.vector_store not in (None, held):
                self._say(
                    f"{self.db_path} stores its vectors in the {held}: --vector-store is for a "
                    f"new graph ('kg-agent compact --vector-store "
                    f"{self.options.vector_store}' moves them)"
                )
            self._held_store = held
            loads = store.loads()
            only_this = bool(loads) and all(r.get("fingerprint") == fp for r in loads)
            return store.find_load(fp), empty, live_indexes(meta), only_this

    def _timed(self, phase: str, report: LoadReport, fn: Callable[[], Any]) -> Any:
        if self._on_phase is not None:
            self._on_phase(phase)
        if self._session is not None:
            self._session.phase(phase)
        t0 = time.perf_counter()
        out = fn()
        report.timings[phase] = round(time.perf_counter() - t0, 3)
        _trim_heap()
        report.peak_rss_mib[phase] = _peak_rss_mib()
        return out

    # ------------------------------------------------------------------ phases
    def _run(
        self, src: str, fmt: str, fp: str, stage: Stage, fresh: bool, report: LoadReport
    ) -> None:
        opts = self.options
        report.workers = opts.parse_workers
        parsed = self._timed(
            "parse",
            report,
            lambda: parse_source(
                src,
                fmt,
                stage,
                ParseOptions(
                    workers=opts.parse_workers,
                    limit=opts.limit,
                    max_section_words=opts.max_section_words,
                    batch_pages=opts.batch_pages,
                    chunk_bytes=opts.chunk_bytes,
                    index=opts.index,
                    progress=opts.progress,
                ),
                say=self._say,
            ),
        )
        report.shards = len(parsed.units)
        report.resumed_shards = parsed.resumed_units
        report.layout = parsed.layout
        report.redirects = parsed.counts.get("redirects", 0)
        report.disambiguation_pages = parsed.counts.get("disambiguation_pages", 0)
        counts = self._timed("resolve", report, lambda: self._prepare(stage, parsed, fresh))
        for key in (
            "articles",
            "sections",
            "links",
            "mentions",
            "inferred_mentions",
            "facts",
            "stubs",
            "categories",
            "duplicate_pages",
        ):
            setattr(report, key, int(counts.get(key, 0)))
        if opts.embeddings == "now":
            report.embed_device = self.embedder.device
            report.cached_embeddings = self._timed(
                "embed",
                report,
                lambda: embed_shards(
                    stage,
                    parsed.units,
                    self.embedder,
                    total_sections=report.sections,
                    cache=opts.cache,
                    progress=opts.progress,
                ),
            )
        job = WriteJob(
            db_path=str(new_database_path(self.db_path)) if fresh else self.db_path,
            home=self.db_path,
            stage_root=str(stage.root),
            units=list(parsed.units),
            load={
                "id": stage.load_id,
                "source": os.path.abspath(src),
                "format": report.format,
                "fingerprint": fp,
                "started_at": str(stage.info["started_at"]),
                "finished_at": "",
                "articles": report.articles,
                "redirects": counts.get("redirect_rows", 0),
                "sections": report.sections,
                "model": self.embedder.name,
            },
            model=self.embedder.name,
            dimension=self.embedder.dimension,
            embeddings=opts.embeddings,
            fresh=fresh,
            buffer_pool_mb=self._writer_pool_mb(stage, fresh, report.sections),
            progress=opts.progress,
            max_section_words=opts.max_section_words,
            vector_store=self._held_store or opts.vector_store or default_vector_store(),
            pending=None if fresh or self._session is None else self._session.pending_meta(),
            next_fact_id=int(counts.get("next_fact_id", 0)),
        )
        text = TextSource(
            section_files=[stage.resolved.path(u, "sections") for u in parsed.units],
            title_files=[
                *(stage.resolved.path(u, "articles") for u in parsed.units),
                stage.file("stubs.parquet"),
            ],
        )
        if fresh:
            self._write_new(job, text, report)
        else:
            self._write_into(job, text, report)
        report.new_articles = report.articles - report.replaced_articles

    def _writer_pool_mb(self, stage: Stage, fresh: bool, sections: int) -> int:
        """The write's buffer pool: what ``--buffer-pool-mb`` says, else what the work
        holds at once (see :func:`~kg_agent.store.layout.default_buffer_pool_mb`): when
        adding to a graph, its one transaction (the vector index is built outside Kùzu,
        in memory of its own)."""
        if self.options.buffer_pool_mb:
            return self.options.buffer_pool_mb
        need = 0
        if not fresh:  # a transaction's pages stay in the pool until it commits
            staged = sum(f.stat().st_size for f in stage.root.rglob("*.parquet"))
            need = max(need, 3 * staged // 2**20 + 512)
        self._pool_mb = default_buffer_pool_mb(read_only=False, need_mb=need)
        return self._pool_mb

    def _prepare(self, stage: Stage, parsed: ParseResult, fresh: bool) -> dict[str, Any]:
        if fresh:
            return prepare(stage, parsed, GraphLookups(), progress=self.options.progress)
        with GraphStore.open(self.db_path, read_only=True) as store:
            loads = store.loads()

            def lookup(titles: Any) -> tuple[set[str], dict[str, str]]:
                return set(store.existing_articles(titles)), store.existing_redirects(titles)

            graph = GraphLookups(
                lookup=lookup,
                article_titles=store.all_article_titles,
                categories=store.existing_categories,
                state="|".join(str(r["id"]) for r in loads),
                fact_base=store.next_fact_id(),
            )
            return prepare(stage, parsed, graph, progress=self.options.progress)

    def _write_new(self, job: WriteJob, text: TextSource, report: LoadReport) -> None:
        """A new graph: built beside its place, indexed, then renamed over it."""
        new = Path(job.db_path)
        target = Path(self.db_path)
        with contextlib.suppress(FileNotFoundError):
            new.unlink()
        store = GraphStore.open(
            new, read_only=False, create=True, buffer_pool_mb=job.buffer_pool_mb, home=target
        )
        try:
            out = self._timed("write", report, lambda: write_graph(job, store))
            report.rows_written = out["rows_written"]
            # reopened: the pool the write filled is emptied before the indexes need room
            store.close()
            store = GraphStore.open(
                new, read_only=False, buffer_pool_mb=job.buffer_pool_mb, home=target
            )
            steps = self._timed(
                "index",
                report,
                lambda: finalize_indexes(
                    store,
                    text=lambda: build_text_index(store, text, progress=self.options.progress),
                    progress=self.options.progress,
                ),
            )
            report.timings.update({f"index.{k}": v for k, v in steps.items()})
            store.record_load({**job.load, "finished_at": now(), "status": "complete"})
        except BaseException:
            store.close()
            collect_garbage(self.db_path, live=self._live)  # the half-built graph goes
            raise
        store.close()
        # what building beside the graph costs (scripts/bench_scale.py reports it)
        self._timed("install", report, lambda: self._install(new, target))
        crash_point("fresh.after_install")
        # The linker (1M titles: ~1.3 GB while it builds) is built once the writer's
        # buffer pool, which holds much of the graph by now, is gone.
        self._timed("linker", report, lambda: self._finish_install(target))
        took = report.timings.pop("linker")
        report.timings["index.entity_linker"] = took
        report.timings["index"] = round(report.timings.get("index", 0.0) + took, 3)

    @staticmethod
    def _install(new: Path, target: Path) -> None:
        crash_point("fresh.before_install")
        if target.exists():  # a forced load of the graph's only source: refused while in use
            with GraphStore.open(target, read_only=False):
                pass
        install(new, target)

    def _finish_install(self, target: Path) -> None:
        """After a new graph is renamed into place: what the graph it replaced left goes,
        the linker is saved and the checksums written."""
        with GraphStore.open(target, read_only=True) as store:
            live = live_indexes(store.meta())
        collect_garbage(target, live=live)
        save_linker_apart(str(target))
        write_checksums(target)

    def _write_into(self, job: WriteJob, text: TextSource, report: LoadReport) -> None:
        """Adding to a graph: one transaction in a child process, then the indexes."""
        steps: dict[str, float] = {}
        out = self._timed("write", report, lambda: write_in_child(job, steps))
        report.timings.update({f"write.{k}": v for k, v in steps.items()})
        report.rows_written = out["rows_written"]
        report.replaced_articles = out["replaced_articles"]
        report.vectors_added = int(out.get("vectors_added", 0))
        report.vectors_deleted = int(out.get("vectors_deleted", 0))
        try:
            self._index(job.load, text, report)
        except (KeyboardInterrupt, KGAgentError, OSError, RuntimeError) as exc:
            why = "interrupted" if isinstance(exc, KeyboardInterrupt) else one_line(exc)
            raise LoadAborted(
                f"load of {job.load['source']} is in {self.db_path}, but building its indexes "
                f"failed ({why}): run the same 'kg-agent load' again, or "
                f"'kg-agent reindex --db {self.db_path}', to finish them"
            ) from None

    def _index(self, load: dict[str, Any], text: TextSource | None, report: LoadReport) -> None:
        if self._on_phase is not None:
            self._on_phase("index")
        if self._session is not None:
            self._session.phase("index")
        steps = finish_indexes(
            self.db_path,
            str(load["id"]),
            text,
            pool_mb=self.options.buffer_pool_mb or self._pool_mb,
            progress=self.options.progress,
        )
        report.timings.update({f"index.{k}": v for k, v in steps.items()})
        report.timings["index"] = round(sum(steps.values()), 3)
        _trim_heap()
        report.peak_rss_mib["index"] = _peak_rss_mib()

    def _finish_committed(
        self, src: str, fp: str, previous: dict[str, Any], report: LoadReport
    ) -> LoadReport:
        """A load whose data committed but whose indexes were cut short: finish them."""
        self._say(f"resuming: {src} is in the graph; finishing its indexes")
        report.load_id = str(previous["id"])
        report.resumed = True
        report.articles = int(previous.get("articles") or 0)
        report.sections = int(previous.get("sections") or 0)
        report.redirects = int(previous.get("redirects") or 0)
        stage_root = Stage.path_for(self.db_path, fp, self.options.staging_dir)
        text = None
        done = (stage_root / "parse.json").exists() and (stage_root / "resolve.json").exists()
        if done:
            stage = Stage(stage_root, {}, resumed=True)
            units = [int(u) for u in (stage.done("parse") or {}).get("units", [])]
            text = TextSource(
                section_files=[stage.resolved.path(u, "sections") for u in units],
                title_files=[
                    *(stage.resolved.path(u, "articles") for u in units),
                    stage.file("stubs.parquet"),
                ],
            )
        try:
            self._index(previous, text, report)
        except KeyboardInterrupt:
            raise LoadAborted(
                f"indexing of {src} interrupted; its data is in {self.db_path} "
                "(run the same command to finish)"
            ) from None
        shutil.rmtree(stage_root, ignore_errors=True)
        return report


def load_fingerprint(
    source: str | os.PathLike[str], model: str, options: LoadOptions, *, fmt: str | None = None
) -> str:
    """The identity of a load: same file content, format, limit, model and chunking."""
    src = str(source)
    fmt = fmt or options.fmt or detect_format(src)
    return fingerprint(src, fmt, str(options.limit), model, str(options.max_section_words))


def load_source(
    source: str | os.PathLike[str],
    db_path: str | os.PathLike[str],
    *,
    embedder: Embedder | None = None,
    options: LoadOptions | None = None,
    say: Callable[[str], None] | None = None,
) -> LoadReport:
    """Load ``source`` into the graph at ``db_path`` (created if missing)."""
    return Loader(db_path, embedder=embedder, options=options, say=say).load(source)


def reindex(db_path: str, *, progress: bool = True) -> dict[str, Any]:
    """Rebuild every derived index of a graph (upgrading an older graph first).

    Returns what was built; raises when an index could not be built, so that no
    command reports success over a graph that still lacks one. It finishes whatever
    write was interrupted (each step switches to what it built in one change, so a
    reindex killed anywhere leaves the graph as it found it).
    """
    resume = f"kg-agent reindex --db {shlex.quote(db_path)}"
    with WriteSession(db_path, "reindex", resume, key="reindex") as session:
        session.phase("index")
        upgraded = upgrade_graph(db_path)
        out = _reindex(db_path, upgraded, progress=progress)
        session.done()
        return out


def _reindex_pool_mb(db_path: str) -> int:
    """A reindex's writer pool (the vector index is built outside Kùzu)."""
    return default_buffer_pool_mb(read_only=False)


def _reindex(db_path: str, upgraded: bool, *, progress: bool) -> dict[str, Any]:
    with GraphStore.open(
        db_path, read_only=False, buffer_pool_mb=_reindex_pool_mb(db_path)
    ) as store:
        store.set_meta(text_stale="1", indexes_stale="1", vectors_stale="1")
        steps = finalize_indexes(store, progress=progress)
        status = store.index_status()
        missing = [
            name
            for name, ok in (
                ("text", status.text),
                ("pagerank", status.pagerank),
                ("vector", status.vector or status.embeddings != "complete"),
            )
            if not ok
        ]
        for load in store.loads():
            if load.get("status") != "complete":
                store.set_load_status(str(load["id"]), "complete")
        crash_point("finish.before_clear")
        if not missing:
            store.clear_write_pending()
    crash_point("finish.before_checksums")
    write_checksums(db_path)
    t0 = time.perf_counter()
    save_linker_apart(db_path)  # once the writer's pool is gone (see _write_new)
    steps["entity_linker"] = round(time.perf_counter() - t0, 3)
    if missing:
        raise KGAgentError(f"reindex of {db_path} could not build: {', '.join(missing)}")
    return {"upgraded": upgraded, "timings": steps, "embeddings": status.embeddings}

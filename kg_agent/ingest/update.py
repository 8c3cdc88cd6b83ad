"""``kg-agent update``: bring a loaded graph to a newer dump, touching only what changed.

An update is a load that writes a difference:

1. **parse** the newer dump into shards, as a load does (parallel, resumable), except
   that a page the graph already has (same title, page id, revision and digest) is
   *kept*: its article row is written without its wikitext being parsed
   (:mod:`~kg_agent.ingest.known`; reading the XML is a tenth of the parse's cost).
   Reading every article's keys for that is linear in the graph, so a partial export
   too small to hold a tenth of the graph's articles is parsed whole instead
   (:attr:`UpdateOptions.skip_known`);
2. **diff** (:func:`_plan`): its articles against the graph's by title, page id and
   digest (the dump's ``<sha1>``, else a hash of the text): *added*, *changed*,
   *unchanged*; and, from a full dump, *deleted* (articles the dump no longer has; a
   partial export deletes only what it shows moved or turned into a redirect, and the
   titles :attr:`UpdateOptions.deletions` names). A full dump's diff reads every
   article and redirect of the graph; a partial export's, by key, only the rows of the
   titles and page ids it names (:func:`_named_articles`). Its redirects, resolved as
   a fresh load would resolve them, against the graph's: a redirect added, removed or
   pointing elsewhere changes what links to its title mean, so unchanged articles that
   link to such a title are *relinked* (rewritten with their links resolved again). In a
   passage corpus, whose mention edges are inferred from titles, unchanged passages
   that name an added title, or mentioned a deleted one, are relinked. Kept pages
   whose text is needed (those that may link through a changed redirect: the graph's
   edges say which, see :func:`_link_candidates`; and any the graph changed under since
   the parse) are read again alone (``units.read_pages_at``) and parsed;
3. **resolve** only the added, changed and relinked articles, against every title of
   the newer dump (:class:`~kg_agent.ingest.prepare.GraphLookups` ``only``);
4. **embed** their sections, reusing the graph's vector of every section whose text
   did not change (only changed text reaches the model);
5. **write** it all in one transaction (:mod:`.write`, :mod:`kg_agent.store.edits`):
   replaced articles, deleted ones (kept as stubs while something links to them),
   redirects, orphaned stubs and categories. A rewritten article keeps the rows that
   did not change (:mod:`.replace`: sections with their mentions, links, category edges;
   each deleted edge makes Kùzu's commit rewrite storage), and a section whose id and
   text did not change keeps its row in the vector table and the vector index: only
   vectors of changed text are written again (a segment of the index, at the commit);
6. **index**: the text index changed in place, PageRank, article and link tables and
   the linker rebuilt (the vector index changed with the commit: ``store/vectors.py``);
   after edits alone, which change no title and no redirect, the saved linker is
   carried over (:func:`~kg_agent.entities.linker.carry_over`), not rebuilt.

The result is the graph a fresh load of the newer dump would give (the e2e tests
compare the two). What it costs grows with the number of changes, except reading the
dump's XML and the diff (linear in the dump: a change can only be found by reading it),
Kùzu's checkpoint at the commit, PageRank, the derived tables and the entity linker
(linear in the graph); ``docs/BENCHMARKS.md`` measures both.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shlex
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from kg_agent.embedding import Embedder
from kg_agent.entities.saved import linker_key
from kg_agent.exceptions import (
    DatabaseNotFoundError,
    InvalidArgumentError,
    KGAgentError,
    LoadAborted,
    SourceError,
    one_line,
)
from kg_agent.ingest.chunking import DEFAULT_MAX_WORDS, embedding_input
from kg_agent.ingest.compact import compact_locked, needs_compaction
from kg_agent.ingest.embed_cache import EmbeddingCache
from kg_agent.ingest.embed_phase import embed_shards
from kg_agent.ingest.finish import finish_indexes
from kg_agent.ingest.known import READ_EVERY_PAGE, PageFilter, page_key, title_key, write_keys
from kg_agent.ingest.model_process import ChildEmbedder
from kg_agent.ingest.options import SourceOptions
from kg_agent.ingest.parse import (
    REPARSE_BASE,
    ParseOptions,
    ParseResult,
    parse_source,
    reparse_pages,
)
from kg_agent.ingest.prepare import GraphLookups, prepare
from kg_agent.ingest.resolve import LinkResolver, TitleTable
from kg_agent.ingest.session import WriteSession
from kg_agent.ingest.sources import MEDIAWIKI, detect_format, fingerprint
from kg_agent.ingest.stage import Stage
from kg_agent.ingest.upgrade import upgrade_graph
from kg_agent.ingest.warmup import ModelWarmup
from kg_agent.ingest.write import VECTOR_KEYS, WriteJob, write_in_child
from kg_agent.store import SCHEMA_VERSION, GraphStore
from kg_agent.store.edits import GraphEdits
from kg_agent.store.indexes import LinkChanges, TextSource
from kg_agent.store.integrity import write_checksums
from kg_agent.store.layout import default_buffer_pool_mb

__all__ = ["UpdateOptions", "UpdateReport", "is_full_dump", "update_graph"]

#: Wikimedia's names of whole-wiki dumps (``enwiki-20261101-pages-articles.xml.bz2``,
#: ``…-pages-articles-multistream.xml.bz2``, ``…-pages-meta-current.xml.bz2``): what an
#: update may delete from. A numbered part (``…-pages-articles1.xml-p1p41242.bz2``) holds
#: a range of pages only, so it is partial.
_FULL_DUMP = re.compile(r"pages-(articles|meta-current)(-multistream)?(\.|-sample)", re.IGNORECASE)


def is_full_dump(source: str, fmt: str) -> bool:
    """Whether ``source`` holds the whole wiki (so pages it lacks were deleted): a
    Wikimedia dump by its name, or a passage corpus (a corpus file is always whole).
    A ``Special:Export`` of some pages is partial."""
    return fmt != MEDIAWIKI or bool(_FULL_DUMP.search(Path(source).name))


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateOptions(SourceOptions):
    """How an update runs. ``delete`` None: delete what a full dump lacks (see
    :func:`is_full_dump`); False keeps such articles; True deletes them from any dump.
    The options an update shares with a load are :class:`SourceOptions`."""

    delete: bool | None = None
    #: None: compact the graph when updates have doubled its file (see
    #: :data:`~kg_agent.ingest.compact.AUTO_COMPACT_GROWTH`), or when the vectors they
    #: added to its vector index or deleted from it pass a quarter of it
    #: (:meth:`~kg_agent.store.vector_index.VectorIndex.rebuild_due`); False never; True
    #: always.
    compact: bool | None = None
    #: Titles deleted from the wiki since (a deletion log beside a partial export):
    #: deleted in this update's transaction as ``kg-agent delete`` deletes them, so the
    #: graph-wide work (commit, PageRank, linker) is paid once. A title the source holds
    #: is not deleted: the source is the newer word on it.
    deletions: tuple[str, ...] = ()
    #: Whether the parse skips the pages the graph has unchanged, after reading every
    #: article's keys (:mod:`~kg_agent.ingest.known`). None: for a full dump, and for a
    #: partial one that may hold a tenth of the graph's articles (a small export is
    #: parsed whole sooner than the graph's keys are read); True or False: always, never.
    skip_known: bool | None = None


@dataclass(slots=True)
class UpdateReport:
    """What an update did; ``to_dict()`` is the ``--json`` output."""

    source: str
    db_path: str
    load_id: str = ""
    skipped: bool = False
    resumed: bool = False
    deletes: bool = False  # whether articles the dump lacks were deleted
    added: int = 0
    changed: int = 0
    unchanged: int = 0
    deleted: int = 0
    renamed: int = 0
    relinked: int = 0
    kept_unparsed: int = 0  # unchanged pages whose wikitext was not parsed
    reparsed: int = 0  # kept pages read again (relinked, or changed in the graph since)
    stubbed: int = 0  # deleted articles kept as stubs (still linked to)
    deletions_requested: int = 0  # titles named by ``deletions`` (deleted: in ``deleted``)
    deletions_missing: list[str] = field(default_factory=list)  # not articles of the graph
    deletions_superseded: list[str] = field(default_factory=list)  # held by the source
    redirects_added: int = 0
    redirects_changed: int = 0
    redirects_removed: int = 0
    sections_written: int = 0
    sections_embedded: int = 0  # by the model: text that changed
    sections_reused: int = 0  # vectors kept from the graph or the embedding cache
    vectors_kept: int = 0  # of those, left in place in the graph's vector index
    #: vectors this update added to the graph's vector index (a segment of their own,
    #: no rebuild), and rows it deleted from it (store/vector_index.py)
    vectors_added: int = 0
    vectors_deleted: int = 0
    embed_device: str = ""  # where the model ran ("": not asked to)
    #: rows of rewritten articles that were already in the graph as written (sections with
    #: their mentions, links, category edges) and stayed there (``ingest.replace``)
    rows_kept: int = 0
    removed_stubs: int = 0
    removed_categories: int = 0
    db_bytes_before: int = 0
    db_bytes_after: int = 0
    compacted: bool = False
    timings: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _db_bytes(db_path: str) -> int:
    p = Path(db_path)
    return sum(f.stat().st_size for f in (p, p.with_name(p.name + ".wal")) if f.exists())


class Updater:
    """Applies a newer dump to the graph at ``db_path``; see the module docstring."""

    def __init__(
        self,
        db_path: str | os.PathLike[str],
        *,
        embedder: Embedder | None = None,
        options: UpdateOptions | None = None,
        say: Callable[[str], None] | None = None,
    ) -> None:
        self.db_path = str(db_path)
        self.embedder = embedder or Embedder()
        self.options = options or UpdateOptions()
        self._say = say or (lambda msg: None)
        self._session: WriteSession | None = None

    def update(self, source: str | os.PathLike[str]) -> UpdateReport:
        src = str(source)
        opts = self.options
        if not Path(self.db_path).exists():
            raise DatabaseNotFoundError(
                f"database {self.db_path} does not exist: 'kg-agent load' it first"
            )
        fmt = opts.fmt or detect_format(src)
        deletes = opts.delete if opts.delete is not None else is_full_dump(src, fmt)
        named = sorted({t.strip() for t in opts.deletions if t.strip()})
        fp = "update-" + fingerprint(
            src, fmt, self.embedder.name, str(opts.max_section_words), str(deletes)
        )
        if named:  # another list is another update
            fp += "-" + hashlib.sha256("\n".join(named).encode()).hexdigest()[:16]
        report = UpdateReport(source=src, db_path=self.db_path, deletes=deletes)
        report.deletions_requested = len(named)
        resume = self.resume_line(src)
        with WriteSession(self.db_path, "update", resume, key=fp) as session:
            self._session = session
            state, embeddings, latest, previous, sources, words = self._inspect(fp)
            if deletes and opts.delete is None and len(sources) > 1:
                raise InvalidArgumentError(
                    f"{self.db_path} holds articles of {len(sources)} sources "
                    f"({', '.join(Path(s).name for s in sources[:3])}): say --delete to delete "
                    f"every article {Path(src).name} lacks, or --no-delete to keep them"
                )
            report.db_bytes_before = _db_bytes(self.db_path)
            if previous is not None and previous.get("status") == "committed":
                out = self._finish_committed(src, fp, previous, report)
                session.done()
                return out
            if latest == fp:
                report.skipped = True
                session.done()  # (killed once whole: its checksums)
                report.db_bytes_after = _db_bytes(self.db_path)
                return report
            stage = Stage.open(
                self.db_path,
                fp,
                staging_dir=opts.staging_dir,
                restart=opts.restart,
                describe={"source": os.path.abspath(src), "format": fmt, "update": True},
            )
            report.load_id = stage.load_id
            report.resumed = stage.resumed
            try:
                rechunk = words is not None and words != str(opts.max_section_words)
                with ModelWarmup(self.embedder) as warmup:  # joined on the way out
                    self._run(
                        src, fmt, fp, stage, state, embeddings, rechunk, named, report, warmup
                    )
            except SourceError:
                stage.remove()
                raise
            except KeyboardInterrupt:
                raise LoadAborted(
                    f"update of {self.db_path} from {src} interrupted; the graph was left "
                    "as it was (run the same command to resume)"
                ) from None
            except OSError as exc:
                if exc.errno == errno.ENOSPC:
                    raise LoadAborted(
                        f"update from {src} stopped: no space left on the disk of "
                        f"{stage.root} or the database; free some and run it again"
                    ) from None
                raise
            stage.remove()
            self._compact_if_due(report)
            session.done()
        report.db_bytes_after = _db_bytes(self.db_path)
        return report

    def resume_line(self, src: str) -> str:
        """The command line that runs this update again (what a crash's message names)."""
        opts = self.options
        parts = ["kg-agent", "update", shlex.quote(os.path.abspath(src))]
        parts += ["--db", shlex.quote(self.db_path)]
        if opts.delete is not None:
            parts.append("--delete" if opts.delete else "--no-delete")
        if opts.deletions:
            parts += ["--deletions", "FILE"]
        if opts.max_section_words != DEFAULT_MAX_WORDS:
            parts += ["--max-section-words", str(opts.max_section_words)]
        return " ".join(parts)

    def _compact_if_due(self, report: UpdateReport) -> None:
        """Keep the file and the vector index bounded: compact when updates doubled the
        file, or their segments and deletions outgrew a quarter of the vector index
        (or when told to)."""
        with GraphStore.open(self.db_path, read_only=True) as store:
            meta = store.meta()
            index = store.vector_index()
            outgrown = index is not None and index.rebuild_due()
        if "compacted_bytes" not in meta:  # the size to measure growth from
            with GraphStore.open(self.db_path, read_only=False) as store:
                store.set_meta(compacted_bytes=str(report.db_bytes_before))
            write_checksums(self.db_path)  # else 'kg-agent check' finds the file changed
            meta["compacted_bytes"] = str(report.db_bytes_before)
        grown = needs_compaction(self.db_path, meta)
        if not (self.options.compact or (self.options.compact is None and (grown or outgrown))):
            return
        why = "updates have grown its file" if grown else "updates outgrew its vector index"
        self._say(f"compacting {self.db_path} ({why})")
        t0 = time.perf_counter()
        compact_locked(Path(self.db_path), meta)
        report.compacted = True
        report.timings["compact"] = round(time.perf_counter() - t0, 3)

    def _inspect(
        self, fp: str
    ) -> tuple[str, str, str, dict[str, Any] | None, list[str], str | None]:
        """(the graph's state, its embeddings, the latest load's fingerprint, this
        update's earlier run, the sources loaded into it other than by updates and
        deletes, the section size it was split at), upgrading an older graph first.
        Read-only (it replays a killed writer's log first, see ``GraphStore.open``): a
        writer's open changes the file on its way out, and an update with nothing to do
        must leave it, and its checksums, as it was."""
        with GraphStore.open(self.db_path, read_only=True) as store:
            version = store.schema_version()
        if version != SCHEMA_VERSION:
            upgrade_graph(self.db_path)
        with GraphStore.open(self.db_path, read_only=True) as store:
            store.check_model(dimension=self.embedder.dimension, model=self.embedder.name)
            loads = store.loads()
            meta = store.meta()
            embeddings = meta.get("embeddings", "complete")
            words = meta.get("max_section_words")
            previous = store.find_load(fp)
        state = "|".join(str(r["id"]) for r in loads)
        latest = str(loads[-1]["fingerprint"]) if loads else ""
        sources = sorted(
            {
                str(r["source"])
                for r in loads
                if not str(r["fingerprint"]).startswith(("update-", "delete-"))
            }
        )
        return state, embeddings, latest, previous, sources, words

    def _timed(self, phase: str, report: UpdateReport, fn: Callable[[], Any]) -> Any:
        if self._session is not None:
            self._session.phase(phase)
        t0 = time.perf_counter()
        out = fn()
        report.timings[phase] = round(time.perf_counter() - t0, 3)
        return out

    def _run(
        self,
        src: str,
        fmt: str,
        fp: str,
        stage: Stage,
        state: str,
        embeddings: str,
        rechunk: bool,
        named: list[str],
        report: UpdateReport,
        warmup: ModelWarmup,
    ) -> None:
        opts = self.options
        known = None
        read_all = _reads_every_page(self.db_path)
        if read_all and stage.done("known") is not None:  # kept pages would be missed
            stage.forget("known", "parse", "diff")
            stage.units.drop_from(0)
        skip = opts.skip_known
        if skip is None:
            skip = report.deletes or _holds_much_of(src, self.db_path)
        if fmt == MEDIAWIKI and not rechunk and not read_all and skip:
            # a new split re-reads every article; so does a graph a delete took
            # redirects from (see _reads_every_page)
            known = self._timed("known", report, lambda: _known_pages(self.db_path, stage, state))
        parse_opts = ParseOptions(
            workers=opts.parse_workers,
            max_section_words=opts.max_section_words,
            chunk_bytes=opts.chunk_bytes,
            index=opts.index,
            progress=opts.progress,
            known=known,
        )
        if embeddings == "complete":
            warmup.start(early=True)  # most updates write articles; stopped below if not
        parsed: ParseResult = self._timed(
            "parse",
            report,
            lambda: parse_source(src, fmt, stage, parse_opts, say=self._say),
        )

        if embeddings == "complete" and parsed.counts.get("articles", 0) > parsed.counts.get(
            "kept", 0
        ):
            warmup.start()  # articles parsed to write: the embed will want the model
        else:
            warmup.stop()  # nothing to embed: an early start ends here

        def reparse(units: dict[int, list[int] | None], which: PageFilter) -> list[int]:
            out: list[int] = self._timed(
                "reparse", report, lambda: reparse_pages(src, stage, parse_opts, units, which)
            )
            return out

        plan, extra, table = self._timed(
            "diff",
            report,
            lambda: _plan(
                self.db_path, stage, parsed, report.deletes, state, rechunk, reparse, named
            ),
        )
        if "reparse" in report.timings:  # the diff's time without the reparse in it
            report.timings["diff"] = round(report.timings["diff"] - report.timings["reparse"], 3)
        parsed.units = [*parsed.units, *extra]
        _report_counts(report, plan)
        by_name = stage.file("deleted-by-name.parquet")
        takes_redirects = by_name.exists() and _takes_redirects(self.db_path, by_name)
        linker_was = _linker_key(self.db_path) if _same_names(report) else None
        only = pq.read_table(stage.file("rewrite.parquet")).column("title").combine_chunks()
        counts = self._timed(
            "resolve",
            report,
            lambda: self._prepare(stage, parsed, state, only, report.deletes, table),
        )
        table = None  # every title of the dump: not held while the writer process runs
        _keep_changed_redirects(stage)
        report.sections_written = int(counts.get("sections", 0))
        embed = "now" if embeddings == "complete" else "none"
        if embed == "now" and report.sections_written:
            self._timed(
                "embed", report, lambda: self._embed(stage, parsed.units, report, warmup.model)
            )
        warmup.stop()  # the model's process, if any, is not kept beside the writer
        result = stage.file("edits-result.json")
        job = WriteJob(
            db_path=self.db_path,
            home=self.db_path,
            stage_root=str(stage.root),
            units=list(parsed.units),
            load={
                "id": stage.load_id,
                "source": os.path.abspath(src),
                "format": fmt,
                "fingerprint": fp,
                "started_at": str(stage.info["started_at"]),
                "finished_at": "",
                "articles": report.added + report.changed + report.relinked,
                "redirects": report.redirects_added + report.redirects_changed,
                "sections": report.sections_written,
                "model": self.embedder.name,
            },
            model=self.embedder.name,
            dimension=self.embedder.dimension,
            embeddings=embed,
            fresh=False,
            buffer_pool_mb=self._pool_mb(stage),
            progress=opts.progress,
            max_section_words=opts.max_section_words,
            pending=None if self._session is None else self._session.pending_meta(),
            next_fact_id=int(counts.get("next_fact_id", 0)) or None,
            edits={
                "graph_vectors": str(stage.file("graph-vectors.parquet")),
                "deleted": str(stage.file("deleted.parquet")),
                "removed_redirects": str(stage.file("removed-redirects.parquet")),
                "result": str(result),
                **({"redirects_into": str(by_name)} if by_name.exists() else {}),
            },
        )
        steps: dict[str, float] = {}
        out = self._timed("write", report, lambda: write_in_child(job, steps))
        report.timings.update({f"write.{k}": v for k, v in steps.items()})
        if read_all and not takes_redirects:
            _every_page_read(self.db_path)
        report.redirects_removed = int(out.get("removed_redirects", report.redirects_removed))
        report.vectors_kept = int(out.get("vectors_kept", 0))
        report.vectors_added = int(out.get("vectors_added", 0))
        report.vectors_deleted = int(out.get("vectors_deleted", 0))
        report.rows_kept = int(out.get("rows_kept", 0))
        report.stubbed = int(out.get("stubbed_articles", 0))
        report.removed_stubs = int(out.get("removed_stubs", 0))
        report.removed_categories = int(out.get("removed_categories", 0))
        self._index(src, job.load, stage, parsed.units, report, linker_was)

    def _prepare(
        self,
        stage: Stage,
        parsed: ParseResult,
        state: str,
        only: pa.Array,
        deletes: bool,
        table: TitleTable | None,
    ) -> dict[str, Any]:
        with GraphStore.open(self.db_path, read_only=True) as store:
            lookup = _lookup(store, deletes)
            graph = GraphLookups(
                lookup=lookup,
                article_titles=None if deletes else store.all_article_titles,
                categories=store.existing_categories,
                state=state,
                only=only,
                redirects=_read_titles(stage.file("resolve-redirects.parquet")),
                fact_base=store.next_fact_id(),
            )
            return prepare(stage, parsed, graph, progress=self.options.progress, table=table)

    def _embed(
        self, stage: Stage, units: Sequence[int], report: UpdateReport, model: Embedder
    ) -> None:
        """Embed the written sections with ``model`` (the updater's embedder, or its model
        started beside the diff), the graph's vectors of unchanged text first."""
        t0 = time.perf_counter()
        reuse = _reuse_cache(self.db_path, stage, model)  # while the model may still start
        report.timings["embed.reuse"] = round(time.perf_counter() - t0, 3)
        try:
            embed_shards(
                stage,
                units,
                model,
                total_sections=report.sections_written,
                cache=self.options.cache,
                progress=self.options.progress,
                reuse=reuse,
            )
        finally:
            reuse.close()
        child = model.child if isinstance(model, ChildEmbedder) else None
        if child is not None and child.waited:  # the part of the model's start not hidden
            report.timings["embed.model_wait"] = round(child.waited, 3)
        markers = stage.embedded.markers()
        cached = sum(int(markers[u].get("cached", 0)) for u in units if u in markers)
        report.sections_reused = cached
        report.sections_embedded = report.sections_written - cached
        if report.sections_embedded:  # else no model ran (nor need one start to say where)
            report.embed_device = model.device

    def _pool_mb(self, stage: Stage) -> int:
        if self.options.buffer_pool_mb:
            return self.options.buffer_pool_mb
        staged = sum(f.stat().st_size for f in stage.root.rglob("*.parquet"))
        return default_buffer_pool_mb(read_only=False, need_mb=3 * staged // 2**20 + 512)

    def _index(
        self,
        src: str,
        load: dict[str, Any],
        stage: Stage,
        units: Sequence[int],
        report: UpdateReport,
        linker_was: str | None = None,
    ) -> None:
        result_path = stage.file("edits-result.json")
        edits = json.loads(result_path.read_text(encoding="utf-8"))
        text = TextSource(
            section_files=[stage.resolved.path(u, "sections") for u in units],
            title_files=[
                *(stage.resolved.path(u, "articles") for u in units),
                stage.file("stubs.parquet"),
            ],
            removed_titles=edits["removed"],
            stubbed_titles=edits["stubbed"],
        )
        links = LinkChanges(
            load_id=str(load["id"]),
            article_files=[stage.resolved.path(u, "articles") for u in units],
            link_files=[stage.resolved.path(u, "links_to") for u in units],
            removed_titles=edits["removed"],
            stubbed_titles=edits["stubbed"],
            unlinked=edits.get("unlinked"),
        )
        t0 = time.perf_counter()
        steps = self._finish(src, str(load["id"]), text, links, linker_was)
        report.timings.update({f"index.{k}": v for k, v in steps.items()})
        report.timings["index"] = round(time.perf_counter() - t0, 3)

    def _finish(
        self,
        src: str,
        load_id: str,
        text: TextSource | None,
        links: LinkChanges | None = None,
        linker_was: str | None = None,
    ) -> dict[str, float]:
        """The indexes brought up to date after the commit (text None: rebuilt whole)."""
        if self._session is not None:
            self._session.phase("index")
        try:
            if text is None:
                with GraphStore.open(self.db_path, read_only=False) as store:
                    store.set_meta(text_stale="1")
            return finish_indexes(
                self.db_path,
                load_id,
                text,
                pool_mb=self.options.buffer_pool_mb,
                progress=self.options.progress,
                links=links,
                linker_was=linker_was,
            )
        except (KeyboardInterrupt, KGAgentError, OSError, RuntimeError) as exc:
            why = "interrupted" if isinstance(exc, KeyboardInterrupt) else one_line(exc)
            raise LoadAborted(
                f"the update from {src} is in {self.db_path}, but refreshing its indexes "
                f"failed ({why}): run the same 'kg-agent update' again to finish them"
            ) from None

    def _finish_committed(
        self, src: str, fp: str, previous: dict[str, Any], report: UpdateReport
    ) -> UpdateReport:
        """An update whose data committed but whose indexes were cut short."""
        self._say(f"resuming: the update from {src} is in the graph; finishing its indexes")
        report.load_id = str(previous["id"])
        report.resumed = True
        root = Stage.path_for(self.db_path, fp, self.options.staging_dir)
        stage = Stage(root, {}, resumed=True)
        units = [int(u) for u in (stage.done("parse") or {}).get("units", [])]
        diff = stage.done("diff")
        if diff is not None:
            _report_counts(report, diff["counts"])
            units += [int(u) for u in diff.get("extra_units", [])]
        if stage.done("known") is None and not stage.file("deleted-by-name.parquet").exists():
            _every_page_read(self.db_path)
        if stage.file("edits-result.json").exists():
            self._index(src, previous, stage, units, report)
        else:  # no record of what changed: the text index is rebuilt whole
            self._finish(src, str(previous["id"]), None)
        stage.remove()
        self._compact_if_due(report)
        report.db_bytes_after = _db_bytes(self.db_path)
        return report


def _report_counts(report: UpdateReport, counts: dict[str, Any]) -> None:
    for key in (
        "added",
        "changed",
        "unchanged",
        "deleted",
        "renamed",
        "relinked",
        "kept_unparsed",
        "reparsed",
        "redirects_added",
        "redirects_changed",
        "redirects_removed",
    ):
        setattr(report, key, int(counts.get(key, 0)))
    report.deletions_missing = list(counts.get("deletions_missing", []))
    report.deletions_superseded = list(counts.get("deletions_superseded", []))


def _lookup(store: GraphStore, deletes: bool) -> Callable[[Sequence[str]], Any]:
    """Titles → (articles, redirects) the graph holds. From a full dump the graph's
    redirects do not count: the dump's own are all there are (one it dropped is gone)."""

    def lookup(titles: Sequence[str]) -> tuple[set[str], dict[str, str]]:
        articles = set(store.existing_articles(titles))
        return articles, ({} if deletes else store.existing_redirects(titles))

    return lookup


def _equal(a: pa.ChunkedArray, b: pa.ChunkedArray) -> pa.ChunkedArray:
    """Element-wise equality where two nulls are equal."""
    both_null = pc.and_(pc.is_null(a), pc.is_null(b))
    return pc.or_(pc.fill_null(pc.equal(a, b), False), both_null)


def _titles(*parts: pa.ChunkedArray | pa.Array) -> pa.Array:
    """Distinct titles of several columns, as one array."""
    arrays = [p.combine_chunks() if isinstance(p, pa.ChunkedArray) else p for p in parts]
    arrays = [a.cast(pa.string()) for a in arrays if len(a)]
    if not arrays:
        return pa.array([], pa.string())
    return pc.unique(pa.concat_arrays(arrays))


def _reset_after_resolve(stage: Stage) -> None:
    """A redone diff rewrites other articles: what was embedded for the old set goes."""
    import shutil

    stage.forget("diff", "resolve", "reuse")
    stage.units.drop_from(REPARSE_BASE)  # read for the old set of articles
    for name in ("embedded", "reuse"):
        shutil.rmtree(stage.root / name, ignore_errors=True)
    stage.file("graph-vectors.parquet").unlink(missing_ok=True)  # the old set's vectors
    stage.embedded.dir.mkdir(parents=True, exist_ok=True)


#: ``reparse({unit: offsets or None}, pages) -> units written``: read kept pages again.
Reparse = Callable[[dict[int, list[int] | None], PageFilter], list[int]]


def _plan(
    db_path: str,
    stage: Stage,
    parsed: ParseResult,
    deletes: bool,
    state: str,
    rechunk: bool,
    reparse: Reparse,
    named: Sequence[str] = (),
) -> tuple[dict[str, Any], list[int], TitleTable | None]:
    """Compare the parsed dump with the graph; writes the titles to rewrite, delete and
    unredirect into the stage and returns the counts (kept in ``diff.json``), the
    units that pages kept by the parse were read again into, and the title table of
    all those units, for the resolve (None when the diff was done by an earlier run).

    Everything per article stays in Arrow columns (a whole Wikipedia is ~7M titles).
    ``rechunk``: the graph was split into sections differently, so every article it
    holds is rewritten (the vectors of unchanged text are still reused). ``named``:
    titles to delete as well (:attr:`UpdateOptions.deletions`), unless the dump holds
    them.
    """
    done = stage.done("diff")
    if done is not None and done.get("state") == state:
        return dict(done["counts"]), [int(u) for u in done.get("extra_units", [])], None
    _reset_after_resolve(stage)
    table = TitleTable.from_shards(stage.units, parsed.units, parsed.cut)
    new = _dump_articles(stage, table, parsed.units)
    new_titles = new.column("title")
    redirect_titles = pa.array(list(table.redirects), pa.string())
    asked = pa.array(list(named), pa.string())
    with GraphStore.open(db_path, read_only=True) as store:
        edits = GraphEdits(store)
        known = stage.done("known")
        exported = (  # the export the keys were made from, when the graph is still the same
            known is not None
            and known.get("state") == state
            and stage.file("graph-articles.parquet").exists()
        )
        # a partial export reads, by key, the rows of what it names; a full dump all
        scoped = not deletes and not exported
        if scoped:
            graph = _named_articles(edits, new, _titles(redirect_titles, asked))
        else:
            if not exported:
                edits.export_articles(stage.file("graph-articles.parquet"))
            edits.export_redirects(stage.file("graph-redirects.parquet"))
            graph = pq.read_table(stage.file("graph-articles.parquet"))
        graph = graph.filter(pc.invert(pc.fill_null(graph.column("is_stub"), False)))
        graph = graph.append_column("in_graph", pa.array([True] * graph.num_rows, pa.bool_()))
        joined = new.select(["title", "page_id", "revision", "digest"]).join(
            graph.select(["title", "page_id", "revision", "digest", "in_graph"]),
            "title",
            join_type="left outer",
            right_suffix="_g",
        )
        in_graph = pc.fill_null(joined.column("in_graph"), False)
        same = pc.and_(
            pc.and_(
                _equal(joined.column("digest"), joined.column("digest_g")),
                _equal(joined.column("page_id"), joined.column("page_id_g")),
            ),
            _equal(joined.column("revision"), joined.column("revision_g")),
        )
        if rechunk:
            same = pa.chunked_array([pa.array([False] * joined.num_rows, pa.bool_())])
        added = joined.filter(pc.invert(in_graph))
        changed = joined.filter(pc.and_(in_graph, pc.invert(same)))
        unchanged = joined.filter(pc.and_(in_graph, same)).column("title")
        if deletes:  # what the dump lacks
            gone = pc.invert(pc.is_in(graph.column("title"), value_set=new_titles))
        else:  # a partial export still says which pages became redirects, or moved
            moved_ids = pc.drop_null(
                new.filter(pc.invert(pc.is_in(new_titles, value_set=graph.column("title"))))
                .column("page_id")
                .combine_chunks()
            )
            gone = pc.and_(
                pc.invert(pc.is_in(graph.column("title"), value_set=new_titles)),
                pc.or_(
                    pc.is_in(graph.column("title"), value_set=redirect_titles),
                    pc.fill_null(pc.is_in(graph.column("page_id"), value_set=moved_ids), False),
                ),
            )
        held = pc.or_(
            pc.is_in(asked, value_set=new_titles), pc.is_in(asked, value_set=redirect_titles)
        )
        in_graph_named = pc.is_in(asked, value_set=graph.column("title"))
        by_name = pc.filter(asked, pc.and_(in_graph_named, pc.invert(held)))
        gone = pc.or_(gone, pc.is_in(graph.column("title"), value_set=by_name))
        deleted = graph.filter(gone)
        ids = pc.drop_null(added.column("page_id").combine_chunks())
        renamed = int(
            pc.sum(pc.is_in(pc.drop_null(deleted.column("page_id")), value_set=ids)).as_py() or 0
        )
        # redirects as a fresh load of the dump resolves them, against the graph's
        resolver = LinkResolver(table, _lookup(store, deletes))
        rows = resolver.redirect_rows()
        now_red = pa.table(
            {
                "title": pa.array([r for r, _ in rows], pa.string()),
                "target": pa.array([t for _, t in rows], pa.string()),
            }
        )
        del rows
        if scoped:  # the graph's redirects of the titles a partial export's diff reads
            old_red = _named_redirects(edits, _titles(now_red.column("title"), new_titles))
        else:
            old_red = pq.read_table(stage.file("graph-redirects.parquet"))
        red = now_red.join(old_red, "title", join_type="left outer", right_suffix="_g")
        is_new = pc.is_null(red.column("target_g"))
        moved = pc.and_(
            pc.invert(is_new), pc.not_equal(red.column("target"), red.column("target_g"))
        )
        red_added = red.filter(is_new).column("title")
        red_changed = red.filter(pc.fill_null(moved, False)).column("title")
        if deletes:  # every redirect the dump dropped
            keep = pc.is_in(old_red.column("title"), value_set=now_red.column("title"))
        else:  # a partial export drops only the redirects its articles now stand on
            keep = pc.invert(pc.is_in(old_red.column("title"), value_set=new_titles))
        red_removed = old_red.filter(pc.invert(keep)).column("title")
        affected = _titles(red_added, red_changed, red_removed)
        rewrite = _titles(added.column("title"), changed.column("title"))
        # pages the parse kept but whose text is needed: those to rewrite (the graph
        # changed since the parse), and those that link through a changed redirect,
        # among the pages the graph's edges say may
        kept = new.filter(new.column("kept"))
        must = kept.filter(pc.is_in(kept.column("title"), value_set=rewrite))
        check = kept.slice(0, 0)
        if len(affected) and not parsed.counts.get("infer_mentions"):
            maybe = _link_candidates(edits, affected, old_red)
            check = kept.filter(
                pc.and_(
                    pc.is_in(kept.column("title"), value_set=maybe),
                    pc.invert(pc.is_in(kept.column("title"), value_set=rewrite)),
                )
            )
        extra = _reparse_kept(stage, must, check, affected, reparse)
        if extra:
            table.add_units(stage.units, extra)
        units = [*parsed.units, *extra]
        relinked = _relinked(
            stage, units, parsed, table, affected, unchanged, added, deleted, edits
        )
        relinked = pc.filter(relinked, pc.invert(pc.is_in(relinked, value_set=rewrite)))
    markers = stage.units.markers()
    reparsed = sum(int(markers[u].get("articles", 0)) for u in extra)
    _write_titles(stage.file("rewrite.parquet"), _titles(rewrite, relinked))
    _write_titles(stage.file("deleted.parquet"), deleted.column("title"))
    stage.file("deleted-by-name.parquet").unlink(missing_ok=True)
    if len(by_name):  # their redirects go with them, as a delete takes them
        _write_titles(stage.file("deleted-by-name.parquet"), by_name)
    _write_titles(stage.file("removed-redirects.parquet"), red_removed)
    _write_titles(stage.file("changed-redirects.parquet"), _titles(red_added, red_changed))
    # what the resolve phase reads of the dump's redirects: those that changed, and those
    # that resolve to no row (to themselves, in a loop), which may still make a stub
    rowless = pc.filter(
        redirect_titles, pc.invert(pc.is_in(redirect_titles, value_set=now_red.column("title")))
    )
    _write_titles(stage.file("resolve-redirects.parquet"), _titles(red_added, red_changed, rowless))
    for name in ("graph-articles.parquet", "graph-redirects.parquet"):
        stage.file(name).unlink(missing_ok=True)
    counts = {
        "added": added.num_rows,
        "changed": changed.num_rows,
        "unchanged": len(unchanged) - len(relinked),
        "deleted": deleted.num_rows,
        "renamed": renamed,
        "relinked": len(relinked),
        "kept_unparsed": kept.num_rows - reparsed,
        "reparsed": reparsed,
        "redirects_added": len(red_added),
        "redirects_changed": len(red_changed),
        "redirects_removed": len(red_removed),
        "deletions_missing": pc.filter(
            asked, pc.and_(pc.invert(in_graph_named), pc.invert(held))
        ).to_pylist(),
        "deletions_superseded": pc.filter(asked, held).to_pylist(),
    }
    stage.mark("diff", {"state": state, "counts": counts, "extra_units": extra})
    return counts, extra, table


_GRAPH_ARTICLES = pa.schema(
    [
        ("title", pa.string()),
        ("page_id", pa.int64()),
        ("revision", pa.int64()),
        ("digest", pa.string()),
        ("is_stub", pa.bool_()),
    ]
)


def _named_articles(edits: GraphEdits, new: pa.Table, others: pa.Array) -> pa.Table:
    """The graph's article rows that a partial export's diff reads: those of its
    titles and of ``others`` (its redirects' titles, titles named for deletion), and
    of its pages' ids under another title (a move). Every other row of the graph
    would compare with nothing, so the diff equals one over the whole export."""
    rows = edits.articles_named(_titles(new.column("title"), others).to_pylist())
    have = {str(r[0]) for r in rows}
    pages = {str(r[0]) for r in rows if not r[4]}  # as the diff filters out stubs
    ids = [
        int(pid)
        for title, pid in zip(
            new.column("title").to_pylist(), new.column("page_id").to_pylist(), strict=True
        )
        if title not in pages and pid is not None
    ]
    rows += [r for r in edits.articles_with_ids(sorted(set(ids))) if str(r[0]) not in have]
    columns: list[Sequence[Any]] = (
        list(zip(*rows, strict=True)) if rows else [[] for _ in _GRAPH_ARTICLES]
    )
    return pa.table(
        [pa.array(list(c), f.type) for c, f in zip(columns, _GRAPH_ARTICLES, strict=True)],
        schema=_GRAPH_ARTICLES,
    )


def _named_redirects(edits: GraphEdits, titles: pa.Array) -> pa.Table:
    """:meth:`GraphEdits.export_redirects`' rows of ``titles`` only."""
    found = edits.store.existing_redirects(titles.to_pylist())
    return pa.table(
        {
            "title": pa.array(list(found), pa.string()),
            "target": pa.array(list(found.values()), pa.string()),
        }
    )


def _dump_articles(stage: Stage, table: TitleTable, units: Sequence[int]) -> pa.Table:
    """The dump's current article rows: title, page id, revision, digest, whether the
    parse kept the page unparsed, and the unit it is in."""
    parts = []
    for u in units:
        rows = table.current(stage.units.read(u, "articles"), "title")
        kept = rows.column("kept") if "kept" in rows.column_names else None
        nulls = pa.nulls(rows.num_rows, pa.int64())
        parts.append(
            pa.table(
                {
                    "title": rows.column("title"),
                    "page_id": rows.column("page_id"),
                    "revision": rows.column("revision"),
                    "digest": rows.column("digest"),
                    "kept": pc.fill_null(kept, False)
                    if kept is not None
                    else pa.array([False] * rows.num_rows, pa.bool_()),
                    "unit": pa.array([u] * rows.num_rows, pa.int64()),
                    "offset": rows.column("offset") if "offset" in rows.column_names else nulls,
                }
            )
        )
    if not parts:
        empty = {"title": pa.string(), "page_id": pa.int64(), "revision": pa.int64()}
        empty |= {"digest": pa.string(), "kept": pa.bool_(), "unit": pa.int64()}
        empty |= {"offset": pa.int64()}
        return pa.schema(list(empty.items())).empty_table()
    return pa.concat_tables(parts)


def _link_candidates(edits: GraphEdits, affected: pa.Array, old_red: pa.Table) -> pa.Array:
    """Articles that may link to a redirect title whose meaning changed: each such link
    is an edge in the graph to what the title meant before (the title itself, or the
    old redirect's target), so every article with an edge there, and that article
    itself (its link to its own redirect was a self-link, dropped)."""
    was = old_red.filter(pc.is_in(old_red.column("title"), value_set=affected))
    ends = _titles(affected, was.column("target"))
    return _titles(ends, pa.array(sorted(edits.linking_articles(ends.to_pylist())), pa.string()))


def _reparse_kept(
    stage: Stage, must: pa.Table, check: pa.Table, affected: pa.Array, reparse: Reparse
) -> list[int]:
    """Read again, whole, the kept pages of ``must``, and those of ``check`` whose text
    may link to a title of ``affected`` (:func:`~kg_agent.ingest.known.link_targets`)."""
    if must.num_rows == 0 and check.num_rows == 0:
        return []
    files = {"only": stage.file("reparse-only.npy"), "check": stage.file("reparse-check.npy")}
    write_keys(files["only"], _row_keys(must))
    write_keys(files["check"], _row_keys(check))
    titles = stage.file("reparse-titles.npy")
    write_keys(titles, (title_key(t) for t in affected.to_pylist()))
    which = PageFilter(only=str(files["only"]), check=str(files["check"]), titles=str(titles))
    units: dict[int, list[int] | None] = {}
    for rows in (must, check):  # a page without an offset: its whole unit is read
        for unit, offset in zip(
            rows.column("unit").to_pylist(), rows.column("offset").to_pylist(), strict=True
        ):
            have = units.setdefault(unit, [])
            if have is not None:
                units[unit] = None if offset is None else [*have, offset]
    return reparse(units, which)


def _row_keys(rows: pa.Table) -> Iterator[int]:
    return (
        page_key(t, p, r, d)
        for t, p, r, d in zip(
            rows.column("title").to_pylist(),
            rows.column("page_id").to_pylist(),
            rows.column("revision").to_pylist(),
            rows.column("digest").to_pylist(),
            strict=True,
        )
    )


def _reads_every_page(db_path: str) -> bool:
    with GraphStore.open(db_path, read_only=True) as store:
        return store.meta().get(READ_EVERY_PAGE, "") == "1"


#: A low estimate of a page's bytes in a dump's XML (English Wikipedia: ~6 KB a page,
#: redirects included), so that a source's pages are over-counted; a compressed file
#: holds ~5 times its size.
_PAGE_BYTES = 4096
_COMPRESSED = (".bz2", ".gz", ".xz", ".zst", ".7z")


def _holds_much_of(source: str, db_path: str) -> bool:
    """Whether ``source`` may hold a tenth of the graph's articles or more (by its size):
    then skipping its unchanged pages repays reading every article's keys (~1.2 s at
    100k articles, linear in the graph); a smaller one is parsed whole."""
    size = Path(source).stat().st_size * (5 if source.lower().endswith(_COMPRESSED) else 1)
    with GraphStore.open(db_path, read_only=True) as store:
        articles = store.count_articles()
    return size // _PAGE_BYTES * 10 >= articles


def _same_names(report: UpdateReport) -> bool:
    """Whether the diff leaves every name the entity linker matches (the titles of
    articles with text, the redirects) as it was: edits only."""
    return not (
        report.added
        or report.deleted
        or report.renamed
        or report.redirects_added
        or report.redirects_changed
        or report.redirects_removed
    )


def _linker_key(db_path: str) -> str | None:
    """The saved linker's key before the write (see :func:`_same_names`)."""
    with GraphStore.open(db_path, read_only=True) as store:
        return linker_key(store)


def _takes_redirects(db_path: str, by_name: Path) -> bool:
    """Whether deleting the titles named in ``by_name`` takes redirects with them, as
    ``kg-agent delete`` does: if so, the next update reads every page (it is marked
    before the write, so that a write cut short still leaves the mark)."""
    titles = _read_titles(by_name)
    with GraphStore.open(db_path, read_only=False) as store:
        if titles is None or not GraphEdits(store).redirects_into(titles.to_pylist()):
            return False
        store.set_meta(**{READ_EVERY_PAGE: "1"})
    return True


def _every_page_read(db_path: str) -> None:
    with GraphStore.open(db_path, read_only=False) as store:
        store.set_meta(**{READ_EVERY_PAGE: ""})


def _known_pages(db_path: str, stage: Stage, state: str) -> str:
    """The keys of the graph's articles (``known.npy`` in the stage; see
    :mod:`kg_agent.ingest.known`): the pages the parse need not read. The export they
    are made from stays for the diff (:func:`_plan`), marked with the graph's state."""
    path = stage.file("known.npy")
    if stage.done("known") is not None and path.exists():
        return str(path)
    export = stage.file("graph-articles.parquet")
    with GraphStore.open(db_path, read_only=True) as store:
        GraphEdits(store).export_articles(export)
    import numpy as np

    with pq.ParquetFile(export) as arts:
        parts = []  # 8 bytes a page: flat at 7M pages
        for batch in arts.iter_batches(batch_size=100_000):
            rows = pa.Table.from_batches([batch])
            rows = rows.filter(pc.invert(pc.fill_null(rows.column("is_stub"), False)))
            parts.append(np.fromiter(_row_keys(rows), dtype=np.uint64, count=rows.num_rows))
        n = write_keys(path, np.concatenate(parts) if parts else np.empty(0, np.uint64))
    stage.mark("known", {"pages": n, "state": state})
    return str(path)


def _relinked(
    stage: Stage,
    units: Sequence[int],
    parsed: ParseResult,
    table: TitleTable,
    affected: pa.Array,
    unchanged: pa.ChunkedArray,
    added: pa.Table,
    deleted: pa.Table,
    edits: GraphEdits,
) -> pa.Array:
    """Unchanged articles whose links a fresh load would resolve differently now."""
    found: list[pa.Array] = []
    if parsed.counts.get("infer_mentions"):
        # inferred mentions: a new title may be named in unchanged text, and a deleted
        # one's mentions may have hidden a shorter title's
        from kg_agent.entities.matcher import MentionMatcher

        names = added.column("title").to_pylist()
        if names:
            matcher = MentionMatcher(names)
            for unit in units:
                secs = table.current(stage.units.read(unit, "sections"), "article")
                secs = secs.filter(pc.is_in(secs.column("article"), value_set=unchanged))
                hits = [
                    art
                    for art, text in zip(
                        secs.column("article").to_pylist(),
                        secs.column("text").to_pylist(),
                        strict=True,
                    )
                    if matcher.find(text, source_title=art)
                ]
                found.append(pa.array(hits, pa.string()))
        gone = deleted.column("title").to_pylist()
        found.append(pa.array(sorted(edits.mentioning_articles(gone)), pa.string()))
    elif len(affected):
        for unit in units:
            raw = table.current(
                stage.units.read(unit, "links", ["article", "target", "_ord"]), "article"
            )
            hit = raw.filter(pc.is_in(raw.column("target"), value_set=affected))
            found.append(pc.unique(hit.column("article")))
    out = _titles(*found)
    return pc.filter(out, pc.is_in(out, value_set=unchanged))


def _read_titles(path: Path) -> pa.Array | None:
    """The titles :func:`_write_titles` wrote, or None without the file (a stage an
    earlier version diffed)."""
    if not path.exists():
        return None
    return pq.read_table(path).column("title").combine_chunks()


def _write_titles(path: Path, titles: pa.Array | pa.ChunkedArray) -> None:
    tmp = path.with_name(path.name + ".tmp")
    pq.write_table(pa.table({"title": titles}), tmp)
    tmp.replace(path)


def _keep_changed_redirects(stage: Stage) -> None:
    """Keep the redirects that changed, of those the resolve phase wrote (only those,
    since it was told which; a stage resolved by an earlier version holds them all)."""
    changed = pq.read_table(stage.file("changed-redirects.parquet")).column("title")
    for name, column in (("redirects.parquet", "title"), ("redirects_to.parquet", "from")):
        path = stage.file(name)
        if path.exists():
            rows = pq.read_table(path)
            rows = rows.filter(pc.is_in(rows.column(column), value_set=changed))
            tmp = path.with_name(path.name + ".tmp")
            pq.write_table(rows, tmp)
            tmp.replace(path)


def _reuse_cache(db_path: str, stage: Stage, embedder: Embedder) -> EmbeddingCache:
    """The graph's vectors of the sections an update replaces, keyed as the embedding
    cache keys text (a stage-local cache: it goes with the stage)."""
    # keyed by the model's name alone: what it holds is the graph's vectors, whatever
    # device computes the rest, and the device of an 'auto' model process is known only
    # once the model started (this read runs while it starts)
    cache = EmbeddingCache(
        f"graph|{embedder.name}", embedder.dimension, directory=stage.root / "reuse"
    )
    if stage.done("reuse") is None:
        with (
            GraphStore.open(db_path, read_only=True) as store,
            pq.ParquetFile(stage.file("rewrite.parquet")) as rewrite,
        ):
            graph = GraphEdits(store)
            keys = pq.ParquetWriter(stage.file("graph-vectors.parquet.tmp"), VECTOR_KEYS)
            for batch in rewrite.iter_batches(batch_size=5000, columns=["title"]):
                titles = batch.column("title").to_pylist()
                texts: list[str] = []
                vectors: list[Any] = []
                ids: list[str] = []
                hashes: list[str] = []
                for article, path, text, vector, sid, h in graph.section_vectors(titles):
                    texts.append(embedding_input(article, path, text))
                    vectors.append(vector)
                    ids.append(sid)
                    hashes.append(h)
                if texts:
                    cache.put_many(texts, _matrix(vectors))
                    keys.write_table(pa.table([ids, hashes], schema=VECTOR_KEYS))
            keys.close()
            stage.file("graph-vectors.parquet.tmp").replace(stage.file("graph-vectors.parquet"))
        stage.mark("reuse", {"done": True})
    return cache


def _matrix(rows: list[Any]) -> Any:
    import numpy as np

    return np.asarray(rows, dtype=np.float32)


def update_graph(
    source: str | os.PathLike[str],
    db_path: str | os.PathLike[str],
    *,
    embedder: Embedder | None = None,
    options: UpdateOptions | None = None,
    say: Callable[[str], None] | None = None,
) -> UpdateReport:
    """Apply the newer dump ``source`` to the graph at ``db_path``; see the module doc."""
    return Updater(db_path, embedder=embedder, options=options, say=say).update(source)

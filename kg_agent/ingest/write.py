"""The write phase: copy-ready shards into the graph, all or nothing, never a copy of it.

Two cases, both safe against ``kill -9`` at any moment:

* **A new graph** (no database, or an empty one) is built beside its place
  (``.NAME.kg-new``), indexed, closed, and renamed over it
  (:func:`kg_agent.store.layout.install`). Until the rename there is nothing to
  undo; after it, the whole new graph is there.
* **Adding to a graph** runs as one Kùzu transaction in a child process. Kùzu
  0.11.3 has a bug: rolling back a transaction that ran ``COPY`` into a
  relationship table deletes rows that table already had (reproduced in
  ``tests/e2e/test_load_faults.py``). A process that dies instead never rolls
  back: Kùzu's write-ahead log simply has no commit for it, and the next open
  discards it, leaving the graph as it was. So on any failure, Ctrl-C or SIGTERM
  the child exits at once without a rollback, and the parent reopens the graph
  once to let Kùzu recover. No snapshot of the graph is ever taken.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import multiprocessing
import os
import signal
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from kg_agent.crashpoints import crash_point
from kg_agent.exceptions import DatabaseError, LoadAborted, one_line
from kg_agent.ingest.prepare import count_rows
from kg_agent.ingest.replace import MAX_ARTICLES, StagedRows, Unchanged
from kg_agent.ingest.stage import Stage
from kg_agent.progress import Progress
from kg_agent.store import GraphStore
from kg_agent.store.article_table import ArticleTable
from kg_agent.store.layout import default_buffer_pool_mb

__all__ = ["VECTOR_KEYS", "StepClock", "WriteJob", "write_graph", "write_in_child"]

#: An update's record of the graph's vectors of the articles it rewrites: a staged vector
#: with the same section id and text hash is already in the graph and stays there.
VECTOR_KEYS = pa.schema([("id", pa.string()), ("text_hash", pa.string())])

_LOOKUP = 5000
#: A group of staged parquet files copied into a new graph in one statement takes at
#: most 1/_POOL_PER_GROUP_BYTE of the buffer pool in compressed bytes (Kùzu's pages of
#: a parquet byte measured at up to ~2.5 bytes; the rest is headroom for the indexes
#: and rel lists Kùzu builds as it copies).
_POOL_PER_GROUP_BYTE = 8
_MIN_GROUP_BYTES = 16 * 2**20


#: Articles merged into a graph per round of lookups: each round's statements scan the
#: Article table (Kùzu 0.11.3 plans ``UNWIND … MATCH {title: …}`` as a join), so an update
#: of 100 articles spread over 28 shards took 29 s one shard at a time and takes 1 s in one.
_MERGE_ROWS = 200_000


def _batches_of_rows(files: list[Path], rows: int) -> Iterator[tuple[pa.Table, list[Path]]]:
    """The files' rows in tables of about ``rows`` rows (a larger file alone), each with
    the files it was read from."""
    parts: list[pa.Table] = []
    read: list[Path] = []
    held = 0
    for f in files:
        t = pq.read_table(f)
        parts.append(t)
        read.append(f)
        held += t.num_rows
        if held >= rows:
            yield pa.concat_tables(parts), read
            parts, read, held = [], [], 0
    if parts:
        yield pa.concat_tables(parts), read


def _groups(files: list[Path], budget: int) -> list[list[Path]]:
    """``files`` in order, cut into groups of at most ``budget`` bytes (a larger file
    alone)."""
    out: list[list[Path]] = []
    size = 0
    for f in files:
        n = f.stat().st_size
        if out and size + n <= budget:
            out[-1].append(f)
            size += n
        else:
            out.append([f])
            size = n
    return out


@dataclass(slots=True)
class WriteJob:
    """Everything the write needs, as plain data (it may run in another process)."""

    db_path: str  # the database written: the target, or the new file beside it
    home: str  # where the graph lives
    stage_root: str
    units: list[int]
    load: dict[str, Any]  # the Load record
    model: str
    dimension: int
    embeddings: str  # "now" (sections carry vectors) or "none"
    fresh: bool
    buffer_pool_mb: int | None = None
    progress: bool = True
    #: An update's or a delete's edits around the copy (see :class:`_Edits`): stage
    #: files of titles to delete and redirects to remove.
    edits: dict[str, Any] | None = None
    #: What sections were split at (kept in ``Meta``: an update that splits otherwise
    #: rewrites every article).
    max_section_words: int | None = None
    #: Where a new graph stores its vectors (store/vectors.py); a graph keeps its own.
    vector_store: str = "graph"
    #: ``Meta`` values the write's transaction sets: the pending mark of its command
    #: (:class:`~kg_agent.ingest.session.WriteSession`), cleared when the write is whole
    pending: dict[str, str] | None = None
    #: ``Meta.next_fact_id`` once the write's facts are in (None: it writes no facts)
    next_fact_id: int | None = None


def _files(stage: Stage, units: list[int], where: str, kind: str) -> list[Path]:
    shards = getattr(stage, where)
    return [p for p in (shards.path(u, kind) for u in units) if p.exists()]


def combined_embeddings(existing: str | None, new: str) -> str:
    """What ``Meta.embeddings`` says after a load: a graph with and without vectors is
    ``partial`` (semantic search stays off until ``kg-agent embed``)."""
    state = "complete" if new == "now" else "none"
    if existing is None or existing == state:
        return state
    return "partial"


class StepClock:
    """Seconds spent in each named step of the write (``write.*`` in a report's timings):
    what a write of a few changes into a large graph spends its time on, for the
    benchmarks. A step entered again adds up; one inside another is counted in both."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextlib.contextmanager
    def __call__(self, step: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            took = time.perf_counter() - t0
            self.seconds[step] = round(self.seconds.get(step, 0.0) + took, 3)


def write_graph(
    job: WriteJob, store: GraphStore | None = None, clock: StepClock | None = None
) -> dict[str, int]:
    """Copy the stage into the graph; returns rows written and articles replaced.
    ``clock`` is given the seconds of each step."""
    stage = Stage(Path(job.stage_root), {}, resumed=True)
    step = clock or StepClock()
    own = store is None
    if store is None:
        with step("open"):
            store = GraphStore.open(
                job.db_path,
                read_only=False,
                create=True,
                buffer_pool_mb=job.buffer_pool_mb,
                home=job.home,
            )
    try:
        with step("schema"):
            store.ensure_schema(
                dimension=job.dimension, model=job.model, vector_store=job.vector_store
            )
            existing = None if job.fresh else store.meta().get("embeddings", "complete")
        with step("kept_vectors"):  # the staged vectors the graph holds already
            copier = _Copier(store, stage, job, progress=job.progress, clock=step)
        if not job.fresh:
            with step("validate"):
                copier.validate()  # a COPY must not fail inside the transaction (docstring)
            store.begin()
        edits = _Edits(store, stage, job, copier.table_before()) if job.edits else None
        if edits is not None:
            with step("edits_before"):
                edits.before()
        with step("meta"):
            store.set_meta(
                indexes_stale="1",
                text_stale="1",
                pagerank_done="0",
                embeddings=combined_embeddings(existing, job.embeddings),
            )
            if job.max_section_words:
                store.set_meta(max_section_words=str(job.max_section_words))
            if job.next_fact_id is not None:
                store.set_meta(next_fact_id=str(job.next_fact_id))
        # Every logged change comes before the first COPY: Kùzu 0.11.3 replays a change
        # made after a COPY wrongly when a crash loses that COPY (store/journal.py)
        copier.plan()
        done: dict[str, int] = {}
        if edits is not None:
            with step("edits_after"):
                done = edits.after()
        with step("meta"):
            store.record_load({**job.load, "status": "committed"})
            if job.pending and not job.fresh:
                store.set_meta(**job.pending)
        out = copier.run()
        out.update(done)
        if not job.fresh:
            crash_point("write.before_commit")
            with step("commit"):  # Kùzu's checkpoint: the regions of deleted edges rewritten
                store.commit()
            step.seconds["commit.journal"] = store.last_journal_s  # (a part of "commit")
            out["vectors_added"], out["vectors_deleted"] = store.last_vector_change
        return out
    finally:
        if own:
            with step("close"):
                store.close()


class _Copier:
    def __init__(
        self,
        store: GraphStore,
        stage: Stage,
        job: WriteJob,
        *,
        progress: bool,
        clock: StepClock | None = None,
    ) -> None:
        self.store = store
        self.clock = clock or StepClock()
        self.stage = stage
        self.job = job
        self.rows = 0
        self.replaced = 0
        self.kept_vectors = self._vectors_in_graph()
        #: rows of rewritten articles that stay in the graph (:mod:`~kg_agent.ingest.replace`)
        self.unchanged: Unchanged | None = None
        #: the article table of the graph before this write (False: none in step with it)
        self._before: ArticleTable | Literal[False] | None = None
        #: files of the articles the write adds (:meth:`plan`)
        self._new_articles: list[Path] = []
        self.tmp = Path(tempfile.mkdtemp(prefix="copy-", dir=stage.root))
        self.prog = Progress("write", unit="rows", enabled=progress)
        pool = job.buffer_pool_mb or default_buffer_pool_mb(read_only=False)
        self.group_bytes = max(_MIN_GROUP_BYTES, pool * 2**20 // _POOL_PER_GROUP_BYTE)

    def copy(self, table: str, files: list[Path], columns: list[str] | None = None) -> None:
        """``COPY`` the files into ``table``: in one statement when adding to a graph
        (one transaction), in groups of bounded size into a new graph.

        Why groups: a Kùzu transaction keeps every page it writes in the buffer pool
        until it commits, so one ``COPY`` of a whole Wikipedia's sections needs a pool
        as large as that table (measured: a 256 MB pool cannot take one ``COPY`` of
        300 MB of vectors). A new graph commits each group (it is only renamed into
        place when whole), so its pool is bounded by a group, not by the dump.
        """
        if not files:
            return
        n = count_rows(files)
        self.prog.update(0, extra=f"{table} ({n:,} rows)")
        groups = _groups(files, self.group_bytes) if self.job.fresh else [files]
        for group in groups:
            with self.clock("copy"):
                self.store.copy_parquet(table, group, columns=columns)
            done = count_rows(group) if len(groups) > 1 else n
            self.rows += done
            self.prog.update(done)

    def table_before(self) -> ArticleTable | None:
        """The article table of the graph as it was before this write, if one is in step
        with it: which titles it holds, and at which node offsets."""
        if self._before is None:
            table = None
            if not self.job.fresh:
                table = self.store.article_table_before(str(self.job.load["id"]))
            self._before = table if table is not None else False
        return self._before or None

    def validate(self) -> None:
        """Check that every edge ends at an article this load or the graph holds.

        Kùzu aborts a transaction whose ``COPY`` fails, and aborting one that already
        copied into a relationship table destroys that table's older rows (Kùzu
        0.11.3), so what a ``COPY`` would reject is refused here, before anything is
        written.
        """
        st, units = self.stage, self.job.units
        known: set[str] = set()
        for path in [*_files(st, units, "resolved", "articles"), st.file("stubs.parquet")]:
            if path.exists():
                known.update(pq.read_table(path, columns=["title"]).column("title").to_pylist())
        targets: set[str] = set()
        for kind in ("mentions", "links_to", "refers_to"):
            for path in _files(st, units, "resolved", kind):
                targets.update(
                    pc.unique(pq.read_table(path, columns=["to"]).column("to")).to_pylist()
                )
        if st.file("redirects_to.parquet").exists():
            table = pq.read_table(st.file("redirects_to.parquet"), columns=["to"])
            targets.update(table.column("to").to_pylist())
        outside = sorted(targets - known)
        before = self.table_before()
        found = existing_titles(self.store, outside, before)
        missing = [t for t in outside if t not in found]
        if missing and before is not None:  # what the table lacks is asked of Kùzu too
            found = existing_titles(self.store, missing)
            missing = [t for t in missing if t not in found]
        if missing:
            raise LoadAborted(
                f"staged load in {st.root} is inconsistent: an edge leads to "
                f"{missing[0]!r}, which is no article of the load or the graph; "
                "nothing was written (rerun with --restart)"
            )

    def plan(self) -> None:
        """What a write into a graph changes before it copies (a new graph: nothing):
        the articles it rewrites updated in place and what they held deleted, and the
        redirects it writes again deleted. Its new articles wait for :meth:`run`."""
        st, units = self.stage, self.job.units
        articles = _files(st, units, "resolved", "articles")
        if self.job.fresh:
            self._new_articles = articles
            return
        if count_rows(articles) <= MAX_ARTICLES:
            self.unchanged = Unchanged()
        unit_of = {
            p: u
            for u, p in zip(units, (st.resolved.path(u, "articles") for u in units), strict=True)
        }
        for i, (batch, read) in enumerate(_batches_of_rows(articles, _MERGE_ROWS)):
            new = self._merge_articles(
                batch, f"articles-{i:05d}.parquet", [unit_of[p] for p in read]
            )
            if new is not None:
                self._new_articles.append(new)
        redirects = st.file("redirects.parquet")
        if redirects.exists():
            titles = pq.read_table(redirects, columns=["title"]).column("title").to_pylist()
            for i in range(0, len(titles), _LOOKUP):
                self.store.delete_redirects(titles[i : i + _LOOKUP])

    def run(self) -> dict[str, int]:
        """Copy what the stage writes (after :meth:`plan`): copies alone, so that a crash
        that loses them loses nothing else (:mod:`kg_agent.store.journal`)."""
        st, units = self.stage, self.job.units
        self.copy("Article", self._new_articles)
        self.copy("Article", [p for p in [st.file("stubs.parquet")] if p.exists()])
        self.copy("Category", [p for p in [st.file("categories.parquet")] if p.exists()])
        self.copy("Section", self._new_rows("sections"))
        # A new graph's vector index is built after the write (in it, when the index
        # stores the vectors: the graph keeps none); a graph that has one gets a
        # segment of these vectors at the commit (store/vectors.py)
        if self.job.embeddings == "now":
            vectors = self._vectors_to_copy()
            self.copy("SectionVector", vectors)
            if not self.job.fresh:
                self.store.note_added_vectors(vectors)
            elif self.store.vectors_in_index():
                with self.clock("vector_index"):
                    self.store.rebuild_vector_index(vectors)
        self.copy("HAS_SECTION", self._new_rows("has_section"))
        self.copy("IN_CATEGORY", self._new_rows("in_category"))
        self.copy("MENTIONS", self._new_rows("mentions"))
        self.copy("LINKS_TO", self._new_rows("links_to"))
        # the infobox facts of the written articles: every one written anew (a rewritten
        # article's were deleted with its content; they are few beside its sections)
        self.copy("Fact", _files(st, units, "resolved", "facts"))
        self.copy("HAS_FACT", _files(st, units, "resolved", "has_fact"))
        self.copy("REFERS_TO", _files(st, units, "resolved", "refers_to"))
        redirects = st.file("redirects.parquet")
        if redirects.exists():
            self.copy("Redirect", [redirects])
            self.copy("REDIRECTS_TO", [st.file("redirects_to.parquet")])
        self.prog.close()
        return {
            "rows_written": self.rows,
            "rows_kept": self.unchanged.rows if self.unchanged is not None else 0,
            "replaced_articles": self.replaced,
            "vectors_kept": len(self.kept_vectors),
        }

    def _new_rows(self, kind: str) -> list[Path]:
        """The stage's files of ``kind``, less the rows that stay in the graph."""
        files = _files(self.stage, self.job.units, "resolved", kind)
        if self.unchanged is None:
            return files
        with self.clock("unchanged_rows"):
            out = (self.unchanged.new_rows(kind, path, self.tmp) for path in files)
            return [p for p in out if p is not None]

    def _vectors_in_graph(self) -> set[str]:
        """Ids of the staged vectors the graph already holds, same id and same text
        (an update's unchanged sections of rewritten articles). Left in place, they are
        not deleted and copied again, nor written to the vector index again, so a
        rewritten article pays for the sections that changed, not for every one. Held in
        memory: as many as the sections the update rewrites."""
        spec = self.job.edits or {}
        graph = Path(spec["graph_vectors"]) if spec.get("graph_vectors") else None
        if self.job.fresh or self.job.embeddings != "now" or graph is None or not graph.exists():
            return set()
        have = pq.read_table(graph, schema=VECTOR_KEYS)
        if not have.num_rows:
            return set()
        kept: set[str] = set()
        for path in _files(self.stage, self.job.units, "embedded", "vectors"):
            staged = pq.read_table(path, columns=["id", "text_hash"])
            both = staged.join(have, keys=["id", "text_hash"], join_type="inner")
            kept.update(both.column("id").to_pylist())
        return kept

    def _vectors_to_copy(self) -> list[Path]:
        """The staged vector files, less the vectors the graph keeps."""
        files = _files(self.stage, self.job.units, "embedded", "vectors")
        if not self.kept_vectors:
            return files
        with self.clock("kept_vectors"):
            return self._less_kept(files)

    def _less_kept(self, files: list[Path]) -> list[Path]:
        keep = pa.array(sorted(self.kept_vectors), pa.string())
        out: list[Path] = []
        for path in files:
            table = pq.read_table(path)
            rest = table.filter(pc.invert(pc.is_in(table.column("id"), value_set=keep)))
            if rest.num_rows == table.num_rows:
                out.append(path)
            elif rest.num_rows:
                out.append(self.tmp / f"kept-{path.name}")
                pq.write_table(rest, out[-1])
        return out

    def _merge_articles(self, table: pa.Table, name: str, units: list[int]) -> Path | None:
        """Articles of a load into a graph that may hold them (a re-load, or stubs
        that this load fills in): those are updated in place and their old
        sections, links and categories removed (only those that changed, see
        :mod:`~kg_agent.ingest.replace`); the rest are returned as a file to copy.
        ``units``: the shards ``table`` was read from."""
        titles = table.column("title").to_pylist()
        with self.clock("lookups"):
            found = existing_titles(self.store, titles, self.table_before())
            for i in range(0, len(titles), _LOOKUP):
                chunk = titles[i : i + _LOOKUP]
                self.store.delete_redirects(list(self.store.existing_redirects(chunk)))
        self.replaced += len(found)
        if found:
            mask = pc.is_in(table.column("title"), value_set=pa.array(sorted(found)))
            old = table.filter(mask)
            names = old.column("title").to_pylist()
            staged = None
            if self.unchanged is not None:
                kinds = ("sections", "mentions", "links_to", "in_category")
                files = {k: _files(self.stage, units, "resolved", k) for k in kinds}
                staged = StagedRows(files, names)
            for i in range(0, len(names), _LOOKUP):
                chunk = names[i : i + _LOOKUP]
                with self.clock("replace"):  # what the rewritten articles held, deleted
                    if staged is None or self.unchanged is None:
                        self.store.clear_article_content(chunk, keep_vectors=self.kept_vectors)
                    else:
                        self._replace(chunk, staged, self.unchanged)
            with self.clock("update_articles"):
                self.store.update_articles(old.to_pylist())
            table = table.filter(pc.invert(mask))
        if not table.num_rows:
            return None
        tmp = self.tmp / name
        pq.write_table(table, tmp)
        return tmp

    def _replace(self, titles: list[str], staged: StagedRows, unchanged: Unchanged) -> None:
        """Delete what ``titles`` hold in the graph that the stage does not repeat."""
        from kg_agent.store.edits import GraphEdits

        edits = GraphEdits(self.store)
        before = self.table_before()
        now = edits.article_content(titles, before.titles if before is not None else None)
        gone = unchanged.add(now, staged.content(titles))
        self.store.delete_vectors([s for s in now.sections if s not in self.kept_vectors])
        edits.delete_content(sorted(gone.sections), sorted(gone.links), sorted(gone.categories))
        self.store.delete_facts(titles)


def existing_titles(
    store: GraphStore, titles: list[str], table: ArticleTable | None = None
) -> set[str]:
    """Those of ``titles`` that are articles or stubs of the graph: from ``table``, the
    article table of the graph as it is (its titles scanned against a hash of those
    asked, in memory), else from Kùzu (a scan of the Article table per chunk, or a
    lookup per title)."""
    if table is not None:
        return table.present(titles)
    found: set[str] = set()
    for i in range(0, len(titles), _LOOKUP):
        found.update(store.existing_articles(titles[i : i + _LOOKUP]))
    return found


def read_titles(path: Path, column: str = "title") -> list[str]:
    """A stage file's titles (none when the file is absent)."""
    if not path.exists():
        return []
    return [str(t) for t in pq.read_table(path, columns=[column]).column(column).to_pylist()]


class _Edits:
    """What an update or a delete does besides the copy, in the same transaction and
    before it (every logged change precedes the copies: store/journal.py).

    Before the articles are merged: the stubs and categories the replaced and deleted
    articles pointed at are noted (they may be left with no edge), removed redirects
    go, and the deleted articles' content is cleared. Then, with what the copy will add
    read from the stage (its new links may point at a deleted article): each deleted
    article becomes a stub if something written links to it, else it goes; then noted
    stubs and categories with no edge left go. See :mod:`kg_agent.store.edits` for why
    this equals a fresh load.
    """

    def __init__(
        self, store: GraphStore, stage: Stage, job: WriteJob, before: ArticleTable | None
    ) -> None:
        from kg_agent.store.edits import GraphEdits

        assert job.edits is not None
        self.graph = GraphEdits(store)
        self.store = store
        self.table = before  # the article table of the graph before the write, if any
        self.spec = job.edits
        self.deleted = read_titles(Path(self.spec["deleted"]))
        self.stubs: set[str] = set()
        self.categories: set[str] = set()
        self.articles = _files(stage, job.units, "resolved", "articles")
        self.redirects = stage.file("redirects.parquet")
        self.edges = [
            *_files(stage, job.units, "resolved", "links_to"),
            *_files(stage, job.units, "resolved", "mentions"),
        ]
        self.refers = _files(stage, job.units, "resolved", "refers_to")
        self.in_category = _files(stage, job.units, "resolved", "in_category")
        self.redirects_to = stage.file("redirects_to.parquet")

    def before(self) -> None:
        replaced: list[str] = []
        for path in self.articles:
            titles = read_titles(path)
            replaced.extend(sorted(existing_titles(self.store, titles, self.table)))
        touched = [*replaced, *self.deleted]
        self.stubs = self.graph.stubs_linked_from(touched, self.table)
        self.stubs |= self.graph.stubs_referred_from(touched)
        self.categories = self.graph.categories_of(touched)
        removed = read_titles(Path(self.spec["removed_redirects"]))
        if self.spec.get("drop_redirects_into"):  # a delete: every deleted title's
            removed.extend(sorted(self.graph.redirects_into(self.deleted)))
        elif self.spec.get("redirects_into"):  # an update: those deleted by name
            named = read_titles(Path(self.spec["redirects_into"]))
            removed = list(dict.fromkeys([*removed, *sorted(self.graph.redirects_into(named))]))
        self.stubs |= self.graph.stubs_redirected_from([*removed, *read_titles(self.redirects)])
        for i in range(0, len(removed), _LOOKUP):
            self.store.delete_redirects(removed[i : i + _LOOKUP])
        self.removed_redirects = len(set(removed))
        for i in range(0, len(self.deleted), _LOOKUP):
            self.store.clear_article_content(self.deleted[i : i + _LOOKUP])

    def _written_targets(self) -> tuple[set[str], set[str]]:
        """What the copied edges point at: (any edge, an edge not inferred). Those are
        linked now, whatever the graph holds: its lookups (~10 ms a title, each a
        scan of the neighbours' chunks in Kùzu 0.11.3) are left for the rest."""
        every: set[str] = set()
        written: set[str] = set()
        for path in self.edges:
            edges = pq.read_table(path, columns=["to", "inferred"])
            every.update(pc.unique(edges.column("to")).to_pylist())
            mine = edges.filter(pc.invert(pc.fill_null(edges.column("inferred"), False)))
            written.update(pc.unique(mine.column("to")).to_pylist())
        if self.redirects_to.exists():
            into = read_titles(self.redirects_to, "to")
            every.update(into)
            written.update(into)
        for path in self.refers:  # an infobox fact's link is written, never inferred
            named = pc.unique(pq.read_table(path, columns=["to"]).column("to")).to_pylist()
            every.update(named)
            written.update(named)
        return every, written

    def after(self) -> dict[str, int]:
        """The edits that depend on what the write adds, made before it copies anything
        (store/journal.py): what the copies will add is read from the stage."""
        self._drop_inferred_into_deleted()
        every, written = self._written_targets()
        rest = [t for t in self.deleted if t not in written]
        kept = {t for t in self.deleted if t in written} | self.graph.still_linked(rest)
        gone = [t for t in self.deleted if t not in kept]
        unlinked = self.graph.make_stubs(sorted(kept))
        self.graph.delete_articles(gone)
        maybe = self.stubs - set(self.deleted) - every
        orphans = sorted(self.graph.unlinked_stubs(sorted(maybe)))
        self.graph.delete_articles(orphans)
        staged = self._staged_categories()
        categories = self.graph.delete_unused_categories(sorted(self.categories - staged))
        result = {"removed": [*gone, *orphans], "stubbed": sorted(kept), "unlinked": unlinked}
        tmp = Path(self.spec["result"] + ".tmp")
        tmp.write_text(json.dumps(result), encoding="utf-8")
        os.replace(tmp, self.spec["result"])
        return {
            "deleted_articles": len(gone),
            "stubbed_articles": len(kept),
            "removed_stubs": len(orphans),
            "removed_categories": categories,
            "removed_redirects": self.removed_redirects,
        }

    def _drop_inferred_into_deleted(self) -> None:
        """Inferred edges are only drawn to articles with text, and a deleted article has
        none (it goes, or stays as a stub): the stage's inferred edges into one are left
        out of the files the write copies (rewritten in place; a rerun finds them so)."""
        if not self.deleted:
            return
        doomed = pa.array(sorted(set(self.deleted)), pa.string())
        for path in self.edges:
            edges = pq.read_table(path)
            into = pc.is_in(edges.column("to"), value_set=doomed)
            drop = pc.and_(pc.fill_null(edges.column("inferred"), False), into)
            if pc.any(drop).as_py():
                tmp = path.with_name(path.name + ".tmp")
                pq.write_table(edges.filter(pc.invert(drop)), tmp)
                os.replace(tmp, path)

    def _staged_categories(self) -> set[str]:
        """The categories the write's category edges lead to."""
        out: set[str] = set()
        for path in self.in_category:
            out.update(pc.unique(pq.read_table(path, columns=["to"]).column("to")).to_pylist())
        return out


# ---------------------------------------------------------------------- child process
def _child(job: dict[str, Any], result_path: str) -> None:
    """Run the write; on any failure die without a rollback (see the module docstring)."""
    from kg_agent.ingest.parse import set_parent_death_signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    set_parent_death_signal()
    t0 = time.perf_counter()
    try:
        clock = StepClock()
        out = write_graph(WriteJob(**job), clock=clock)
        clock.seconds["child"] = round(time.perf_counter() - t0, 3)
        result = {"ok": out, "steps": clock.seconds}
        Path(result_path).write_text(json.dumps(result), encoding="utf-8")
    except BaseException as exc:  # reported to the parent, then a hard exit
        Path(result_path).write_text(
            json.dumps({"error": one_line(exc, limit=1000), "type": type(exc).__name__}),
            encoding="utf-8",
        )
        os._exit(3)


def write_in_child(job: WriteJob, steps: dict[str, float] | None = None) -> dict[str, int]:
    """:func:`write_graph` in a child process that never rolls back; see the module doc.
    ``steps`` is given the seconds of the write's steps (:class:`StepClock`), with
    ``counts`` (the tables counted before, to tell a loss after a failure) and ``start``
    (the child's start: its interpreter and imports)."""
    t0 = time.perf_counter()
    before = _table_counts(job.db_path)
    counted = time.perf_counter()
    ctx = multiprocessing.get_context("spawn")
    result_path = Path(job.stage_root) / "write-result.json"
    result_path.unlink(missing_ok=True)
    proc = ctx.Process(target=_child, args=(asdict(job), str(result_path)), daemon=False)
    proc.start()
    try:
        proc.join()
    except BaseException:
        proc.kill()
        proc.join()
        _recover(job.db_path)
        raise
    result: dict[str, Any] = {}
    if result_path.exists():
        result = json.loads(result_path.read_text(encoding="utf-8"))
    if proc.exitcode == 0 and "ok" in result:
        if steps is not None:
            child = dict(result.get("steps", {}))
            steps["counts"] = round(counted - t0, 3)
            steps["start"] = round(time.perf_counter() - counted - child.pop("child", 0.0), 3)
            steps.update(child)
        return dict(result["ok"])
    _recover(job.db_path)
    if result.get("type") == "LoadAborted":  # refused before writing: its own words
        raise LoadAborted(str(result["error"]))
    why = result.get("error") or f"the writer process died (exit status {proc.exitcode})"
    after = _table_counts(job.db_path)
    lost = [t for t, n in before.items() if after.get(t, 0) < n]
    if lost:
        raise DatabaseError(
            f"writing to {job.home} failed ({why}), and Kùzu's abort of the failed "
            f"transaction lost rows of {', '.join(lost)} (a Kùzu 0.11.3 bug): restore "
            "the graph from a backup or load it again"
        )
    raise LoadAborted(f"writing to {job.home} failed ({why}); the graph was left as it was")


def _table_counts(db_path: str) -> dict[str, int]:
    """Rows of every table, to tell after a failed write whether Kùzu lost any."""
    try:
        with GraphStore.open(db_path, read_only=True) as store:
            return store.table_counts()
    except Exception:  # a graph that cannot be read now will not be compared
        return {}


def _recover(db_path: str) -> None:
    """Open the graph read-write once, so Kùzu discards the dead transaction now."""
    try:
        GraphStore.open(db_path, read_only=False).close()
    except Exception:  # the next open recovers anyway
        return


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat()

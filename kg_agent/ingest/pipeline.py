"""The load pipeline: source → staged parquet parts → embeddings → one Kùzu transaction.

Why staged: parsing a dump can fail at any byte (a truncated ``.bz2``), and the
database must then be exactly as it was. So pages are parsed into bounded
parquet parts in a staging folder first (flat memory, whatever the dump size),
link targets are resolved and sections embedded part by part, and only then is
everything written with ``COPY FROM`` inside a single transaction, which a
failure or Ctrl-C rolls back. Indexes and PageRank are rebuilt after commit.

Memory held for the whole load is per *title*, not per text: the set of loaded
titles, the redirect map and the stub set.
"""

from __future__ import annotations

import datetime as _dt
import os
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from kg_agent.embedding import Embedder
from kg_agent.exceptions import LoadAborted, one_line
from kg_agent.ingest.chunking import DEFAULT_MAX_WORDS, chunk_text, embedding_input
from kg_agent.ingest.embed_cache import EmbeddingCache
from kg_agent.ingest.records import ParsedPage
from kg_agent.ingest.sources import detect_format, fingerprint, iter_pages
from kg_agent.progress import Progress
from kg_agent.store import GraphStore, remove_database

_LOOKUP_BATCH = 5000

_ARTICLE_SCHEMA = pa.schema(
    [
        ("title", pa.string()),
        ("page_id", pa.int64()),
        ("is_stub", pa.bool_()),
        ("is_disambiguation", pa.bool_()),
        ("pagerank", pa.float64()),
        ("n_sections", pa.int64()),
        ("word_count", pa.int64()),
        ("load_id", pa.string()),
    ]
)
# Staged tables carry the page's generation: a title seen twice in one dump keeps
# its last version (a later revision), and rows of earlier ones are filtered out.
_GEN = ("_gen", pa.int64())
_STAGED_ARTICLE_SCHEMA = _ARTICLE_SCHEMA.append(pa.field(*_GEN))
_SECTION_FIELDS = [
    ("id", pa.string()),
    ("article", pa.string()),
    ("heading", pa.string()),
    ("heading_path", pa.string()),
    ("level", pa.int64()),
    ("ordinal", pa.int64()),
    ("part", pa.int64()),
    ("text", pa.string()),
    ("word_count", pa.int64()),
]
_RAW_LINK_SCHEMA = pa.schema(
    [
        ("section_id", pa.string()),
        ("article", pa.string()),
        ("target", pa.string()),
        ("count", pa.int64()),
        ("inferred", pa.bool_()),
        _GEN,
    ]
)
_EDGE_SCHEMA = pa.schema(
    [("from", pa.string()), ("to", pa.string()), ("count", pa.int64()), ("inferred", pa.bool_())]
)
_PAIR_SCHEMA = pa.schema([("from", pa.string()), ("to", pa.string())])
_STAGED_PAIR_SCHEMA = _PAIR_SCHEMA.append(pa.field(*_GEN))


@dataclass(frozen=True, slots=True)
class LoadOptions:
    """How a load runs. ``fmt`` None means detect from content."""

    fmt: str | None = None
    limit: int | None = None
    batch_pages: int = 2000
    max_section_words: int = DEFAULT_MAX_WORDS
    force: bool = False
    progress: bool = True
    staging_dir: str | None = None
    cache: bool = True  # reuse embeddings of texts embedded before (see embed_cache)


@dataclass(slots=True)
class LoadReport:
    """What a load did, with per-phase timings; ``to_dict()`` is the ``--json`` output."""

    source: str
    format: str
    db_path: str
    load_id: str = ""
    skipped: bool = False
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
    categories: int = 0
    stubs: int = 0
    rows_written: int = 0
    cached_embeddings: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    model: str = ""

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


class _Parts:
    """Numbered parquet parts of one kind in the staging folder."""

    def __init__(self, root: Path, kind: str) -> None:
        self.root = root
        self.kind = kind
        self.paths: list[Path] = []

    def write(self, table: pa.Table, index: int | None = None) -> Path | None:
        if table.num_rows == 0:
            return None
        i = len(self.paths) if index is None else index
        path = self.root / f"{self.kind}-{i:05d}.parquet"
        pq.write_table(table, path)
        self.paths.append(path)
        return path


@dataclass(slots=True)
class _Batch:
    articles: list[dict[str, Any]] = field(default_factory=list)
    sections: list[dict[str, Any]] = field(default_factory=list)
    links: list[dict[str, Any]] = field(default_factory=list)
    categories: list[dict[str, Any]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.articles)


def _assign_links(parts: Sequence[str], links: Iterable[str]) -> list[Counter[str]]:
    """Attribute a section's links to the part whose text names the target.

    Readers report links per section; after chunking, the evidence edge should
    start at the part that actually talks about the target. A target whose
    name is not in any part (a piped label) stays with the first part.
    """
    out: list[Counter[str]] = [Counter() for _ in parts]
    if len(parts) == 1:
        out[0].update(links)
        return out
    lowered = [p.lower() for p in parts]
    for target in links:
        key = target.lower()
        idx = next((i for i, p in enumerate(lowered) if key in p), 0)
        out[idx][target] += 1
    return out


class Loader:
    """Loads one source into the graph at ``db_path``; see the module docstring."""

    def __init__(
        self,
        db_path: str | os.PathLike[str],
        *,
        embedder: Embedder | None = None,
        options: LoadOptions | None = None,
        on_phase: Callable[[str], None] | None = None,
    ) -> None:
        self.db_path = str(db_path)
        self.embedder = embedder or Embedder()
        self.options = options or LoadOptions()
        self._on_phase = on_phase

    # ------------------------------------------------------------------ entry point
    def load(self, source: str | os.PathLike[str]) -> LoadReport:
        src = str(source)
        fmt = self.options.fmt or detect_format(src)
        opts = self.options
        fp = load_fingerprint(src, self.embedder.name, opts, fmt=fmt)
        report = LoadReport(source=src, format=fmt, db_path=self.db_path, model=self.embedder.name)
        existed = Path(self.db_path).exists()
        store = GraphStore.open(self.db_path, read_only=False, create=True)
        stage: Path | None = None
        try:
            store.ensure_schema(dimension=self.embedder.dimension, model=self.embedder.name)
            previous = store.find_load(fp)
            if previous and not opts.force:
                report.skipped = True
                report.load_id = str(previous["id"])
                return report
            started = _dt.datetime.now(_dt.timezone.utc)
            report.load_id = (
                f"load-{started:%Y%m%dT%H%M%S.%f}-{fp[:8]}"  # µs: two loads in one second stay two
            )
            stage_root = opts.staging_dir or str(Path(self.db_path).resolve().parent)
            Path(stage_root).mkdir(parents=True, exist_ok=True)
            stage = Path(tempfile.mkdtemp(prefix=".kg-stage-", dir=stage_root))
            state = _LoadState(stage, report)
            self._timed("parse", report, lambda: self._stage(src, fmt, state))
            if state.infer_mentions:
                self._timed("mentions", report, lambda: self._infer_mentions(store, state))
            self._timed("resolve", report, lambda: self._resolve(store, state))
            self._timed("embed", report, lambda: self._embed(state))
            self._timed(
                "write", report, lambda: self._commit(store, state, fp, started.isoformat())
            )
            self._timed("index", report, lambda: finalize_indexes(store, progress=opts.progress))
            return report
        except BaseException as exc:
            store.rollback()
            store.close()
            committed = "write" in report.timings
            if not existed and not committed:
                remove_database(self.db_path)
            if committed:
                # Only index building or PageRank was cut short: the data is in.
                raise LoadAborted(
                    f"load of {src} committed, but building its indexes failed "
                    f"({one_line(exc)}): run 'kg-agent reindex --db {self.db_path}'"
                ) from None
            if isinstance(exc, KeyboardInterrupt):
                raise LoadAborted(
                    f"load of {src} interrupted; database {self.db_path} left as it was"
                ) from None
            raise
        finally:
            store.close()
            if stage is not None:
                shutil.rmtree(stage, ignore_errors=True)

    def _timed(self, phase: str, report: LoadReport, fn: Callable[[], object]) -> None:
        if self._on_phase is not None:
            self._on_phase(phase)
        t0 = time.perf_counter()
        fn()
        report.timings[phase] = round(time.perf_counter() - t0, 3)

    # ------------------------------------------------------------------ phase 1: parse
    def _stage(self, src: str, fmt: str, st: _LoadState) -> None:
        opts = self.options
        prog = Progress("parse", unit="pages", enabled=opts.progress)

        def on_bytes(done: int, total: int) -> None:
            if total:
                prog.fraction = done / total

        batch = _Batch()
        for page in iter_pages(src, fmt, limit=opts.limit, progress=on_bytes):
            if page.is_redirect:
                if page.title not in st.redirects and page.redirect_to:
                    st.redirects[page.title] = page.redirect_to
                st.report.redirects += 1
                prog.update(1)
                continue
            if page.title in st.titles:
                st.report.duplicate_pages += 1
            self._stage_page(page, st, batch)
            prog.update(1, extra=f"{st.report.sections:,} sections")
            if len(batch) >= opts.batch_pages:
                st.flush(batch)
                batch = _Batch()
        st.flush(batch)
        prog.close()
        st.report.articles = len(st.titles)

    def _stage_page(self, page: ParsedPage, st: _LoadState, batch: _Batch) -> None:
        gen = st.titles[page.title] + 1 if page.title in st.titles else 0
        st.titles[page.title] = gen
        if gen:
            st.dupes[page.title] = gen
        prefix = f"{page.title}::" if gen == 0 else f"{page.title}::v{gen}."
        if page.infer_mentions:
            st.infer_mentions = True
        if page.is_disambiguation:
            st.report.disambiguation_pages += 1
        ordinal = 0
        words = 0
        for sec in page.sections:
            heading_path = " > ".join(sec.heading_path)
            parts = chunk_text(sec.text, max_words=self.options.max_section_words)
            if not parts:
                # A link-only section (a table-only list): its links are real
                # article-level links, with no section to start a mention edge.
                for target, n in Counter(sec.links).items():
                    batch.links.append(
                        {
                            "section_id": "",
                            "article": page.title,
                            "target": target,
                            "count": n,
                            "inferred": False,
                            "_gen": gen,
                        }
                    )
                continue
            link_counts = _assign_links(parts, sec.links)
            for part_no, text in enumerate(parts):
                sid = f"{prefix}{ordinal:04d}"
                wc = len(text.split())
                words += wc
                batch.sections.append(
                    {
                        "id": sid,
                        "article": page.title,
                        "heading": sec.heading,
                        "heading_path": heading_path,
                        "level": sec.level,
                        "ordinal": ordinal,
                        "part": part_no,
                        "text": text,
                        "word_count": wc,
                        "_gen": gen,
                    }
                )
                for target, n in link_counts[part_no].items():
                    batch.links.append(
                        {
                            "section_id": sid,
                            "article": page.title,
                            "target": target,
                            "count": n,
                            "inferred": False,
                            "_gen": gen,
                        }
                    )
                ordinal += 1
        st.report.sections += ordinal
        for cat in dict.fromkeys(page.categories):
            batch.categories.append({"from": page.title, "to": cat, "_gen": gen})
        batch.articles.append(
            {
                "title": page.title,
                "page_id": page.page_id,
                "is_stub": False,
                "is_disambiguation": page.is_disambiguation,
                "pagerank": 0.0,
                "n_sections": ordinal,
                "word_count": words,
                "load_id": st.report.load_id,
                "_gen": gen,
            }
        )

    # ------------------------------------------------------------------ phase 2: mentions
    def _infer_mentions(self, store: GraphStore, st: _LoadState) -> None:
        """Passage corpora have no hyperlinks: link sections to the articles they name."""
        from kg_agent.ingest.mentions import MentionMatcher

        known = list(st.titles)
        known.extend(store.all_article_titles(exclude=st.titles))
        aliases = dict(st.redirects)
        matcher = MentionMatcher(known, aliases=aliases)
        prog = Progress(
            "mentions", total=st.report.sections, unit="sections", enabled=self.options.progress
        )
        for i, path in enumerate(st.sections.paths):
            table = st.current(pq.read_table(path, columns=["id", "article", "text", "_gen"]))
            rows: list[dict[str, Any]] = []
            for sid, art, text in zip(
                table.column("id").to_pylist(),
                table.column("article").to_pylist(),
                table.column("text").to_pylist(),
                strict=True,
            ):
                for target, n in matcher.find(text, source_title=art).items():
                    rows.append(
                        {
                            "section_id": sid,
                            "article": art,
                            "target": target,
                            "count": n,
                            "inferred": True,
                            "_gen": st.titles[art],
                        }
                    )
                prog.update(1)
            st.report.inferred_mentions += len(rows)
            st.raw_links.write(pa.Table.from_pylist(rows, schema=_RAW_LINK_SCHEMA), 100000 + i)
        prog.close()

    # ------------------------------------------------------------------ phase 3: resolve
    def _resolve(self, store: GraphStore, st: _LoadState) -> None:
        """Map every link target to a canonical article title (or a new stub)."""
        resolver = _TitleResolver(store, st)
        for path in st.raw_links.paths:
            raw = st.current(pq.read_table(path))
            targets = raw.column("target").to_pylist()
            resolver.prefetch(targets)
            resolved = [resolver.resolve(t) for t in targets]
            arts = raw.column("article").to_pylist()
            mention_agg: dict[tuple[str, str], list[Any]] = {}
            link_agg: dict[tuple[str, str], list[Any]] = {}
            for sid, art, tgt, n, inf in zip(
                raw.column("section_id").to_pylist(),
                arts,
                resolved,
                raw.column("count").to_pylist(),
                raw.column("inferred").to_pylist(),
                strict=True,
            ):
                if not tgt or tgt == art:
                    continue
                if sid:  # "" marks an article-level link (link-only section)
                    m = mention_agg.setdefault((sid, tgt), [0, True])
                    m[0] += n
                    m[1] = m[1] and inf
                link = link_agg.setdefault((art, tgt), [0, True])
                link[0] += n
                link[1] = link[1] and inf
            st.mentions.write(_edge_table(mention_agg))
            st.links_to.write(_edge_table(link_agg))
            st.report.mentions += len(mention_agg)
            st.report.links += len(link_agg)
        # Redirects: an article of the same title wins; targets resolve like links.
        red_rows: list[tuple[str, str]] = []
        for title in list(st.redirects):
            if title in st.titles:
                continue
            resolver.prefetch([st.redirects[title]])
            target = resolver.resolve(title)
            if target and target != title:
                red_rows.append((title, target))
        st.redirect_rows = red_rows
        st.stubs = resolver.stubs
        st.report.stubs = len(resolver.stubs)

    # ------------------------------------------------------------------ phase 4: embed
    def _embed(self, st: _LoadState) -> None:
        prog = Progress(
            "embed", total=st.report.sections, unit="sections", enabled=self.options.progress
        )
        dim = self.embedder.dimension
        cache = (
            EmbeddingCache(embedder_identity(self.embedder), dim) if self.options.cache else None
        )
        st.report.sections = 0
        for i, path in enumerate(st.sections.paths):
            table = st.current(pq.read_table(path))
            st.report.sections += table.num_rows
            texts = [
                embedding_input(a, h, t)
                for a, h, t in zip(
                    table.column("article").to_pylist(),
                    table.column("heading_path").to_pylist(),
                    table.column("text").to_pylist(),
                    strict=True,
                )
            ]
            vectors = self._embed_texts(texts, cache, prog)
            flat = pa.array(np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1))
            emb = pa.FixedSizeListArray.from_arrays(flat, dim)
            st.embedded.write(table.append_column("embedding", emb), i)
            path.unlink()
        prog.close()
        if cache is not None:
            st.report.cached_embeddings = cache.hits
            cache.close()

    def _embed_texts(
        self, texts: list[str], cache: EmbeddingCache | None, prog: Progress
    ) -> np.ndarray:
        if cache is None:
            return self.embedder.embed(texts, progress=lambda n: prog.update(n))
        found = cache.get_many(texts)
        missing = [i for i, v in enumerate(found) if v is None]
        out = np.zeros((len(texts), self.embedder.dimension), dtype=np.float32)
        for i, v in enumerate(found):
            if v is not None:
                out[i] = v
        prog.update(len(texts) - len(missing))
        if missing:
            todo = [texts[i] for i in missing]
            fresh = self.embedder.embed(todo, progress=lambda n: prog.update(n))
            out[missing] = fresh
            cache.put_many(todo, fresh)
        return out

    # ------------------------------------------------------------------ phase 5: write
    def _commit(self, store: GraphStore, st: _LoadState, fp: str, started_at: str) -> None:
        opts = self.options
        report = st.report
        prog = Progress("write", unit="rows", enabled=opts.progress)
        # Kùzu maintains the HNSW and BM25 indexes under COPY, so an incremental
        # load never drops them (dropping a vector index and writing the table in
        # the same session trips a Kùzu 0.11 catalog bug).
        backup = store.snapshot() if store.count("MATCH (a:Article) RETURN count(a)") else None
        store.begin()
        try:
            store.set_meta(indexes_stale="1", pagerank_done="0")
            existing_titles: set[str] = set()
            for path in st.articles.paths:
                table = st.current(pq.read_table(path))
                titles = table.column("title").to_pylist()
                found = store.existing_articles(titles)
                store.delete_redirects(list(store.existing_redirects(titles)))
                if found:
                    existing_titles.update(found)
                    store.clear_article_content(list(found))
                    store.update_articles([r for r in table.to_pylist() if r["title"] in found])
                    mask = pa.array([t not in found for t in titles])
                    table = table.filter(mask)
                report.rows_written += self._copy(store, "Article", table, st)
                prog.update(table.num_rows)
            report.replaced_articles = len(existing_titles)
            report.new_articles = report.articles - len(existing_titles)
            if st.stubs:
                stub_rows = [
                    {
                        "title": t,
                        "page_id": None,
                        "is_stub": True,
                        "is_disambiguation": False,
                        "pagerank": 0.0,
                        "n_sections": 0,
                        "word_count": 0,
                        "load_id": report.load_id,
                    }
                    for t in sorted(st.stubs)
                ]
                stub_table = pa.Table.from_pylist(stub_rows, schema=_ARTICLE_SCHEMA)
                report.rows_written += self._copy(store, "Article", stub_table, st)
            cats = sorted(
                {
                    c
                    for p in st.categories.paths
                    for c in st.current(pq.read_table(p)).column("to").to_pylist()
                }
            )
            known_cats: set[str] = set()
            for i in range(0, len(cats), _LOOKUP_BATCH):
                known_cats |= store.existing_categories(cats[i : i + _LOOKUP_BATCH])
            new_cats = [c for c in cats if c not in known_cats]
            report.categories = len(cats)
            cat_table = pa.table({"name": pa.array(new_cats, pa.string())})
            report.rows_written += self._copy(store, "Category", cat_table, st)
            for path in st.embedded.paths:
                table = pq.read_table(path)
                report.rows_written += self._copy(store, "Section", table, st)
                has = pa.table({"from": table.column("article"), "to": table.column("id")})
                report.rows_written += self._copy(store, "HAS_SECTION", has, st)
                prog.update(table.num_rows * 2)
            for path in st.categories.paths:
                table = st.current(pq.read_table(path))
                report.rows_written += self._copy(store, "IN_CATEGORY", table, st)
            for kind, parts in (("MENTIONS", st.mentions), ("LINKS_TO", st.links_to)):
                for path in parts.paths:
                    store.copy_parquet(kind, path)
                    n = pq.read_metadata(path).num_rows
                    report.rows_written += n
                    prog.update(n)
            if st.redirect_rows:
                titles = [r for r, _ in st.redirect_rows]
                store.delete_redirects(titles)
                red = pa.table(
                    {"title": titles, "load_id": [report.load_id] * len(titles)},
                    schema=pa.schema([("title", pa.string()), ("load_id", pa.string())]),
                )
                report.rows_written += self._copy(store, "Redirect", red, st)
                rel = pa.Table.from_pylist(
                    [{"from": a, "to": b} for a, b in st.redirect_rows], schema=_PAIR_SCHEMA
                )
                report.rows_written += self._copy(store, "REDIRECTS_TO", rel, st)
            store.record_load(
                {
                    "id": report.load_id,
                    "source": os.path.abspath(report.source),
                    "format": report.format,
                    "fingerprint": fp,
                    "started_at": started_at,
                    "finished_at": _dt.datetime.now(_dt.timezone.utc).isoformat(),
                    "articles": report.articles,
                    "redirects": len(st.redirect_rows),
                    "sections": report.sections,
                    "model": self.embedder.name,
                }
            )
            store.commit()
        except BaseException:
            store.rollback()
            if backup is not None:
                store.restore_snapshot(backup)
            raise
        finally:
            if backup is not None:
                remove_database(backup)
        prog.close()

    def _copy(self, store: GraphStore, table_name: str, table: pa.Table, st: _LoadState) -> int:
        if table.num_rows == 0:
            return 0
        st.copy_seq += 1
        path = st.root / f"copy-{st.copy_seq:06d}.parquet"
        pq.write_table(table, path)
        try:
            store.copy_parquet(table_name, path)
        finally:
            path.unlink(missing_ok=True)
        return int(table.num_rows)


def finalize_indexes(store: GraphStore, *, progress: bool = True) -> None:
    """Build what a load leaves stale: HNSW and BM25 indexes, global PageRank."""
    steps: list[tuple[str, Callable[[], object]]] = [
        ("vector index", store.build_vector_index),
        ("full-text index", store.build_fts_indexes),
        ("pagerank", store.compute_pagerank),
    ]
    prog = Progress("index", total=len(steps), unit="steps", enabled=progress)
    for name, fn in steps:
        prog.update(0, extra=name)
        fn()
        prog.update(1)
    store.set_meta(indexes_stale="0", pagerank_done="1")
    prog.close()


class _LoadState:
    """Everything one load accumulates between phases."""

    def __init__(self, root: Path, report: LoadReport) -> None:
        self.root = root
        self.report = report
        self.titles: dict[str, int] = {}  # title -> generation of its latest version
        self.dupes: dict[str, int] = {}
        self.redirects: dict[str, str] = {}
        self.redirect_rows: list[tuple[str, str]] = []
        self.stubs: set[str] = set()
        self.infer_mentions = False
        self.copy_seq = 0
        self.articles = _Parts(root, "articles")
        self.sections = _Parts(root, "sections")
        self.embedded = _Parts(root, "embedded")
        self.raw_links = _Parts(root, "rawlinks")
        self.categories = _Parts(root, "incategory")
        self.mentions = _Parts(root, "mentions")
        self.links_to = _Parts(root, "linksto")

    def flush(self, batch: _Batch) -> None:
        if not batch.articles:
            return
        self.articles.write(pa.Table.from_pylist(batch.articles, schema=_STAGED_ARTICLE_SCHEMA))
        self.sections.write(
            pa.Table.from_pylist(batch.sections, schema=pa.schema([*_SECTION_FIELDS, _GEN]))
        )
        self.raw_links.write(pa.Table.from_pylist(batch.links, schema=_RAW_LINK_SCHEMA))
        self.categories.write(pa.Table.from_pylist(batch.categories, schema=_STAGED_PAIR_SCHEMA))

    def current(self, table: pa.Table) -> pa.Table:
        """Rows of each title's latest version, without the staging-only column."""
        if self.dupes and table.num_rows:
            title_col = (
                "article"
                if "article" in table.column_names
                else ("title" if "title" in table.column_names else "from")
            )
            keep = [
                self.dupes.get(t, 0) == g
                for t, g in zip(
                    table.column(title_col).to_pylist(),
                    table.column("_gen").to_pylist(),
                    strict=True,
                )
            ]
            table = table.filter(pa.array(keep))
        return table.drop_columns(["_gen"])


class _TitleResolver:
    """Resolve link targets: this load's titles, then its redirects, then the database.

    Targets found nowhere become stub articles, so the link graph keeps edges to
    pages outside the loaded sample (and a later load fills the stub in).
    """

    def __init__(self, store: GraphStore, st: _LoadState) -> None:
        self.store = store
        self.st = st
        self.db_articles: set[str] = set()
        self.db_redirects: dict[str, str] = {}
        self.looked_up: set[str] = set()
        self.stubs: set[str] = set()

    def _follow(self, title: str) -> str:
        seen = 0
        while title not in self.st.titles and title in self.st.redirects and seen < 5:
            title = self.st.redirects[title]
            seen += 1
        return title

    def prefetch(self, targets: Iterable[str]) -> None:
        todo = sorted(
            {
                t
                for t in (self._follow(x) for x in targets if x)
                if t not in self.st.titles and t not in self.looked_up
            }
        )
        for i in range(0, len(todo), _LOOKUP_BATCH):
            chunk = todo[i : i + _LOOKUP_BATCH]
            self.looked_up.update(chunk)
            # Stubs count as existing: they get the new edges, not a duplicate node.
            self.db_articles.update(self.store.existing_articles(chunk))
            self.db_redirects.update(self.store.existing_redirects(chunk))

    def resolve(self, target: str) -> str:
        if not target:
            return ""
        t = self._follow(target)
        if t in self.st.titles or t in self.db_articles:
            return t
        if t in self.db_redirects:
            return self.db_redirects[t]
        self.stubs.add(t)
        return t


def embedder_identity(embedder: Embedder) -> str:
    """What makes two embedders' vectors interchangeable (the cache key's scope)."""
    parts = [
        embedder.name,
        f"seq={getattr(embedder, 'max_seq_length', None)}",
        f"int8={getattr(embedder, 'quantize', False)}",
        f"bf16={getattr(embedder, 'uses_bf16', False)}",
    ]
    return "|".join(parts)


def _edge_table(agg: dict[tuple[str, str], list[Any]]) -> pa.Table:
    return pa.Table.from_pylist(
        [{"from": a, "to": b, "count": v[0], "inferred": v[1]} for (a, b), v in agg.items()],
        schema=_EDGE_SCHEMA,
    )


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
) -> LoadReport:
    """Load ``source`` into the graph at ``db_path`` (created if missing)."""
    return Loader(db_path, embedder=embedder, options=options).load(source)

"""``kg-agent load``, ``embed``, ``reindex``, ``stats``, ``check`` and ``sample``: building a
graph and looking at it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, cast

import click

if TYPE_CHECKING:
    from kg_agent.store.write_state import WriteStatus

from kg_agent.cli.common import (
    db_option,
    dump_options,
    echo_json,
    library_errors,
    run_with_embedder,
    tokenizer_threads,
    vectors_line,
)

SAMPLE_DUMP = Path(__file__).resolve().parent.parent / "data" / "sample" / "pages-articles.xml"


@click.command()
@click.argument("source", type=click.Path(path_type=str))
@db_option
@dump_options
@click.option("--limit", type=click.IntRange(min=1), help="Load at most N articles.")
@click.option("--force", is_flag=True, help="Re-load a source that was already loaded.")
@click.option(
    "--embeddings",
    type=click.Choice(["now", "none", "later"]),
    default="now",
    show_default=True,
    help="Embed sections while loading, or load the graph without vectors "
    "(BM25 + graph search; embed later).",
)
@click.option(
    "--vector-store",
    type=click.Choice(["graph", "index"]),
    default=None,
    envvar="KG_AGENT_VECTOR_STORE",
    help="Where a new graph stores its section vectors: in the graph and its index "
    "(default), or in the index alone (~14 GiB for English, not ~75; read back SQ8-decoded "
    "in a large index). A graph keeps its own; 'compact --vector-store' changes it.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the load report as JSON.")
@click.option("--quiet", "-q", is_flag=True, help="No progress display.")
@library_errors
def load(
    source: str,
    db_path: str,
    fmt: str,
    limit: int | None,
    model: str | None,
    batch_size: int | None,
    device: str,
    max_section_words: int,
    force: bool,
    no_cache: bool,
    workers: int | None,
    embeddings: str,
    vector_store: str | None,
    index_file: str | None,
    restart: bool,
    staging_dir: str | None,
    shard_mb: int | None,
    buffer_pool_mb: int | None,
    as_json: bool,
    quiet: bool,
) -> None:
    """Load a Wikipedia dump or a passage corpus into the graph at --db.

    SOURCE is a MediaWiki pages-articles export (.xml, .xml.bz2 (also multistream),
    .gz, .xz), a JSON/JSONL list of {"title", "text"} passages (HippoRAG corpus), or a
    HotpotQA / MuSiQue file whose paragraphs are pooled. A failed or interrupted
    load leaves the database as it was; running it again resumes it.
    """
    from kg_agent.ingest.pipeline import LoadOptions, load_source

    options = LoadOptions(
        fmt=None if fmt == "auto" else fmt,
        limit=limit,
        max_section_words=max_section_words,
        force=force,
        progress=not quiet,
        cache=not no_cache,
        workers=workers,
        embeddings=embeddings,
        vector_store=vector_store,
        index=index_file,
        restart=restart,
        staging_dir=staging_dir,
        buffer_pool_mb=buffer_pool_mb,
        chunk_bytes=shard_mb << 20 if shard_mb else None,
    )
    report = run_with_embedder(
        load_source, source, db_path, options, model, batch_size, device, quiet
    )
    if as_json:
        echo_json(report.to_dict())
        return
    if report.skipped:
        click.echo(
            f"{source} is already loaded in {db_path} ({report.load_id}); nothing to do. "
            "Use --force to load it again."
        )
        return
    t = {k: v for k, v in report.timings.items() if "." not in k}
    resumed = f", resumed ({report.resumed_shards:,} shards reused)" if report.resumed else ""
    click.echo(
        f"Loaded {source} ({report.format}) into {db_path}{resumed}\n"
        f"  articles   {report.articles:>10,}  ({report.new_articles:,} new, "
        f"{report.replaced_articles:,} replaced, {report.duplicate_pages:,} duplicates skipped)\n"
        f"  redirects  {report.redirects:>10,}\n"
        f"  sections   {report.sections:>10,}"
        + (
            "  (no embeddings: run 'kg-agent embed' for semantic search)"
            if report.embeddings != "now"
            else ""
        )
        + f"\n  links      {report.links:>10,}  article→article\n"
        f"  mentions   {report.mentions:>10,}  section→article"
        f" ({report.inferred_mentions:,} inferred)\n"
        f"  facts      {report.facts:>10,}  infobox facts (box parameters)\n"
        f"  categories {report.categories:>10,}\n"
        f"  stubs      {report.stubs:>10,}  (link targets outside the source)\n"
        f"  cached     {report.cached_embeddings:>10,}  embeddings reused from the cache\n"
        f"  shards     {report.shards:>10,}  ({report.layout}, {report.workers} parse workers)\n"
        + vectors_line(report.vectors_added, report.vectors_deleted, width=10)
        + f"  time       {sum(t.values()):>10.1f}s  "
        + "  ".join(f"{k} {v:.1f}s" for k, v in t.items())
        + f"\n  speed      {report.pages_per_s:,.0f} pages/s parsed, "
        f"{report.sections_per_s:,.1f} sections/s embedded, {report.rows_per_s:,.0f} rows/s written"
    )


@click.command()
@db_option
@click.option(
    "--top",
    type=click.IntRange(min=0),
    default=10,
    show_default=True,
    help="How many top-PageRank articles to list.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the statistics as JSON.")
@library_errors
def stats(db_path: str, top: int, as_json: bool) -> None:
    """Counts, top PageRank articles, index status and load history of a graph."""
    from kg_agent.store import GraphStore

    with GraphStore.open(db_path, read_only=True) as store:
        st = store.stats(top=top)
        loads = store.loads()
        write = store.write_status()
    if as_json:
        data = st.to_dict()
        data["load_history"] = loads
        data["last_write"] = None if write is None else write.to_dict()
        echo_json(data)
        _exit_if_refused(write)
        return
    ix = st.indexes

    def flag(ok: bool) -> str:
        return "ready" if ok else "MISSING"

    click.echo(
        f"Graph {db_path}  (model {st.model}, dimension {st.dimension})\n"
        f"  articles        {st.articles:>10,}  (+{st.stub_articles:,} stubs, "
        f"{st.disambiguation_pages:,} disambiguation pages)\n"
        f"  sections        {st.sections:>10,}\n"
        f"  categories      {st.categories:>10,}  ({st.category_edges:,} memberships)\n"
        f"  redirects       {st.redirects:>10,}\n"
        f"  links           {st.links:>10,}  article→article ({st.inferred_links:,} inferred)\n"
        f"  mentions        {st.mentions:>10,}  section→article\n"
        f"  facts           {st.facts:>10,}  infobox facts, of {st.articles_with_facts:,} "
        "articles\n"
        f"  kinds           "
        + (", ".join(f"{k or 'unknown'} {n:,}" for k, n in st.kinds.items()) or "unknown")
        + "\n"
        f"  loads           {st.loads:>10,}\n"
        f"  embeddings      {ix.embeddings}"
        + ("" if ix.embeddings == "complete" else "  (semantic search off until 'kg-agent embed')")
        + ("  (stored in the vector index alone)" if st.vector_store == "index" else "")
        + "\n  indexes         vector "
        + (flag(ix.vector) if ix.embeddings == "complete" else "off (no embeddings)")
        + f", full-text {flag(ix.text)}, "
        f"pagerank {flag(ix.pagerank)}"
        + ("  (STALE: run 'kg-agent load' again or 'kg-agent reindex')" if ix.stale else "")
    )
    if st.vector_segments > 1 or st.deleted_vectors:
        click.echo(
            f"  vector index    {st.vector_segments:>10,}  segments ({st.deleted_vectors:,} "
            "vectors deleted since it was built; 'kg-agent compact' builds it anew)"
        )
    if loads:
        click.echo("  load history:")
        for ld in loads:
            status = ld.get("status") or "complete"
            mark = "" if status == "complete" else "  (INCOMPLETE: indexes not finished)"
            click.echo(
                f"    {ld['id']}  {status:<9} {int(ld.get('articles') or 0):>10,} articles  "
                f"{os.path.basename(str(ld.get('source') or ''))}{mark}"
            )
    if st.top_pagerank:
        click.echo("  top PageRank:")
        for i, (title, pr) in enumerate(st.top_pagerank, 1):
            click.echo(f"    {i:>3}. {pr:.5f}  {title}")
    if write is not None:
        click.echo(f"  last write      {write.message()}")
    _exit_if_refused(write)


def _exit_if_refused(write: WriteStatus | None) -> None:
    """Exit status 1, the line on stderr, for a graph that queries refuse (an interrupted
    write changed it); the counts above it are what the graph holds now."""
    if write is not None and write.refuses_queries:
        click.echo(f"Error: {write.message()}", err=True)
        raise SystemExit(1)


@click.command()
@db_option
@click.option("--quiet", "-q", is_flag=True, help="No progress display.")
@library_errors
def reindex(db_path: str, quiet: bool) -> None:
    """Rebuild the text index, the vector index and PageRank; upgrade an older graph.

    Repairs a graph whose load committed but whose indexes were not built (``stats``
    says STALE or MISSING). Fails, with the index named, if one cannot be built.
    """
    from kg_agent.ingest.pipeline import reindex as rebuild

    out = rebuild(db_path, progress=not quiet)
    done = ", ".join(f"{k} {v:.1f}s" for k, v in out["timings"].items())
    up = " (upgraded to the current schema)" if out["upgraded"] else ""
    click.echo(f"Rebuilt the indexes of {db_path}{up}: {done}")


@click.command()
@db_option
@click.option(
    "--model",
    help="sentence-transformers model name or path (default: the one the graph records). "
    "A graph without vectors may take another model; one with vectors refuses it.",
)
@click.option(
    "--device",
    default="auto",
    show_default=True,
    metavar="auto|cpu|cuda[:N]|mps",
    help="Where the model runs; auto takes a GPU when torch sees one.",
)
@click.option(
    "--batch-size",
    type=click.IntRange(min=1),
    help="Texts per model batch (default 16 on a CPU, 256 on a GPU).",
)
@click.option(
    "--threads",
    type=click.IntRange(min=1),
    help="torch threads of the in-process model (default: torch's, one per core).",
)
@click.option(
    "--precision",
    type=click.Choice(["auto", "float32", "bfloat16", "float16"]),
    default="auto",
    show_default=True,
    help="auto: fp16 on CUDA, bf16 on CPUs that have it natively, else fp32.",
)
@click.option(
    "--chunk",
    type=click.IntRange(min=1),
    default=None,
    help="Sections per resumable batch written to disk (an interruption loses at most one; "
    "on Ray, the unit shared among the workers). Default 10,000, or 1,000 with --ray.",
)
@click.option(
    "--force",
    is_flag=True,
    help="Embed every section again (e.g. with a new --model); the old vectors serve "
    "queries until the new ones replace them.",
)
@click.option(
    "--ray",
    "ray_address",
    is_flag=False,
    flag_value="local",
    default=None,
    metavar="[ADDRESS]",
    help="Run the model on Ray: a local Ray on this machine (no ADDRESS), 'auto' (the "
    "cluster this machine belongs to) or ray://HEAD:10001. Needs kg-agent[ray].",
)
@click.option(
    "--ray-workers", type=click.IntRange(min=1), help="Model actors (default: per GPU or CPU)."
)
@click.option(
    "--ray-cpus-per-worker",
    type=click.FloatRange(min=0, min_open=True),
    default=1.0,
    show_default=True,
    help="CPUs each model actor takes (its torch threads).",
)
@click.option(
    "--ray-gpus-per-worker",
    type=click.FloatRange(min=0),
    help="GPUs each model actor takes (default 1 when the cluster has GPUs).",
)
@click.option(
    "--ray-storage",
    help="Where shards live for a cluster: a path every node mounts, or a URI "
    "(s3://bucket/prefix). Default: the work folder beside the database.",
)
@click.option("--no-cache", is_flag=True, help="Do not reuse or store cached embeddings.")
@click.option("--restart", is_flag=True, help="Discard an interrupted run's batches.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--quiet", "-q", is_flag=True, help="No progress display.")
@library_errors
def embed(
    db_path: str,
    model: str | None,
    device: str,
    batch_size: int | None,
    threads: int | None,
    precision: str,
    chunk: int | None,
    force: bool,
    ray_address: str | None,
    ray_workers: int | None,
    ray_cpus_per_worker: float,
    ray_gpus_per_worker: float | None,
    ray_storage: str | None,
    no_cache: bool,
    restart: bool,
    as_json: bool,
    quiet: bool,
) -> None:
    """Embed the sections that have no vector (or one of older text), then index them.

    For a graph loaded with --embeddings later/none, or one that an incremental load
    left partly embedded; with --force, all of them (to switch model). Resumable: run
    it again after Ctrl-C or a crash. --ray spreads the model over a Ray cluster.
    """
    from kg_agent.embedding import Embedder, Precision, check_device_name, pick_device
    from kg_agent.ingest.embed_graph import embed_graph
    from kg_agent.ingest.embed_ray import RayOptions
    from kg_agent.store import GraphStore

    if model is None:
        with GraphStore.open(db_path) as store:
            model = store.meta().get("model")
    ray = None
    if ray_address is not None:
        ray = RayOptions(
            address=None if ray_address == "local" else ray_address,
            workers=ray_workers,
            cpus_per_worker=ray_cpus_per_worker,
            gpus_per_worker=ray_gpus_per_worker,
            storage=ray_storage,
        )
    # with Ray the driver only plans and writes: its device is the actors' choice
    where = check_device_name(device) if ray is not None else pick_device(device)
    embedder = Embedder(
        model,
        device=where,
        batch_size=batch_size,
        threads=threads,
        precision=cast(Precision, precision),
    )
    # with Ray the driver tokenises nothing, and each actor decides by its device
    with tokenizer_threads("true" if ray is None else None):
        report = embed_graph(
            db_path,
            embedder,
            chunk=chunk,
            cache=not no_cache,
            restart=restart,
            progress=not quiet,
            say=None if quiet else (lambda msg: click.echo(msg, err=True)),
            force=force,
            ray=ray,
        )
    if as_json:
        echo_json(report.as_dict())
        return
    secs = report.seconds
    rate = report.embedded / secs["embed"] if secs.get("embed") else 0.0
    click.echo(
        f"Embedded {report.embedded:,} of {report.sections:,} sections of {db_path} "
        f"with {report.model} ({report.cached:,} from the cache, {report.replaced:,} "
        f"replaced, {rate:,.1f} sections/s); vector index "
        f"{'built' if report.vector_index else 'not built'}; {secs['total']:.1f}s"
    )


@click.command()
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
@library_errors
def check(db_path: str, as_json: bool) -> None:
    """Verify a graph: its file against the checksums of its last write, then a full read.

    Exit status 1 with one line: naming the damage when a block of the file changed
    outside kg-agent or a table cannot be read (a crash inside Kùzu is reported the same
    way); or naming a write that was interrupted, with the command that finishes it (a
    write that changed the graph and did not finish is not damage, and the file differs
    from its checksums until it finishes).
    """
    from kg_agent.exceptions import DatabaseError
    from kg_agent.store import GraphStore
    from kg_agent.store.integrity import verify_checksums
    from kg_agent.store.write_state import InterruptedWriteError, WriteStatus, read_intent

    if not os.path.exists(db_path):
        raise DatabaseError(f"database {db_path} not found")
    intent = read_intent(db_path)
    if intent is not None and intent.alive():
        raise DatabaseError(WriteStatus(db_path, intent, False, True).message())
    sums = verify_checksums(db_path)
    if sums.recorded and not sums.ok and intent is None:
        where = (
            f"{len(sums.damaged_blocks)} block(s) of 16 MiB differ, the first at byte "
            f"{sums.damaged_blocks[0]:,}"
            if sums.damaged_blocks
            else "its size changed"
        )
        raise DatabaseError(
            f"database {db_path} is damaged: {where} since its last write "
            f"({sums.written_at}), by something other than kg-agent; restore a copy or load "
            "its sources again into a new --db"
        )
    with GraphStore.open(db_path, read_only=True) as store:
        write = store.write_status()
        if write is not None and write.committed:
            raise InterruptedWriteError(write.message())
        rows = store.read_everything()
        status = store.index_status()
        vectors = store.check_vector_index()
    if write is not None and not sums.ok:  # whole, but its checksums no longer vouch for it
        raise InterruptedWriteError(write.message())
    out = {
        "database": db_path,
        "checksums": sums.to_dict(),
        "last_write": None if write is None else write.to_dict(),
        "rows": rows,
        "indexes": {
            "vector": status.vector,
            "vector_index_vectors": vectors,
            "text": status.text,
            "pagerank": status.pagerank,
            "stale": status.stale,
        },
    }
    if as_json:
        echo_json(out)
        return
    note = "checksums match" if sums.recorded else "no checksums recorded (an older graph)"
    total = sum(rows.values())
    index = f", vector index read ({vectors:,} vectors)" if vectors is not None else ""
    click.echo(f"{db_path}: OK, every table read ({total:,} rows){index}, {note}")
    if write is not None:
        click.echo(f"note: {write.message()}")


@click.command()
def sample() -> None:
    """Print the path of the bundled sample dump (30 articles on early computing)."""
    if not SAMPLE_DUMP.exists():  # pragma: no cover - broken install
        raise click.ClickException(f"sample dump missing from the install: {SAMPLE_DUMP}")
    click.echo(str(SAMPLE_DUMP))

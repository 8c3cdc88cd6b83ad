"""``kg-agent update``, ``delete`` and ``compact``: keeping a loaded graph current."""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

import click

from kg_agent.cli.common import (
    db_option,
    dump_options,
    echo_json,
    library_errors,
    run_with_embedder,
    vectors_line,
)

if TYPE_CHECKING:
    from kg_agent.ingest.update import UpdateReport


@click.command()
@click.argument("source", type=click.Path(path_type=str))
@db_option
@dump_options
@click.option(
    "--delete/--no-delete",
    "delete",
    default=None,
    help="Delete articles the dump lacks. Default: only from a full dump (a Wikimedia "
    "'…pages-articles…' file, or a passage corpus); never from a partial export.",
)
@click.option(
    "--deletions",
    type=click.File("r", encoding="utf-8"),
    help="Also delete the titles in this file, one a line ('-' for stdin), in the same "
    "transaction, as 'kg-agent delete' deletes them: a deletion log beside a partial "
    "export. A title the source holds is left to it (the newer word on that page).",
)
@click.option(
    "--compact/--no-compact",
    "compact",
    default=None,
    help="Compact the graph after the update. Default: when updates have doubled its file, "
    "or when the recent vector index would hold over a quarter of the main one's vectors.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the update report as JSON.")
@click.option("--quiet", "-q", is_flag=True, help="No progress display.")
@library_errors
def update(
    source: str,
    db_path: str,
    fmt: str,
    model: str | None,
    batch_size: int | None,
    device: str,
    max_section_words: int,
    no_cache: bool,
    workers: int | None,
    index_file: str | None,
    restart: bool,
    staging_dir: str | None,
    shard_mb: int | None,
    buffer_pool_mb: int | None,
    delete: bool | None,
    deletions: TextIO | None,
    compact: bool | None,
    as_json: bool,
    quiet: bool,
) -> None:
    """Bring the graph at --db up to a newer dump, touching only what changed.

    Articles are compared by title, page id and revision digest: new ones are added,
    changed ones re-parsed (only sections whose text changed are embedded again),
    unchanged ones left alone, and those a full dump lacks deleted (kept as stubs
    while other articles link to them). Renames and redirect changes are followed.
    All or nothing; an interrupted update resumes when run again.
    """
    from kg_agent.ingest.update import UpdateOptions, update_graph

    options = UpdateOptions(
        fmt=None if fmt == "auto" else fmt,
        delete=delete,
        workers=workers,
        progress=not quiet,
        staging_dir=staging_dir,
        cache=not no_cache,
        restart=restart,
        buffer_pool_mb=buffer_pool_mb,
        max_section_words=max_section_words,
        chunk_bytes=shard_mb << 20 if shard_mb else None,
        index=index_file,
        compact=compact,
        deletions=tuple(deletions.read().splitlines()) if deletions else (),
    )
    report = run_with_embedder(
        update_graph, source, db_path, options, model, batch_size, device, quiet
    )
    if as_json:
        echo_json(report.to_dict())
        return
    if report.skipped:
        click.echo(f"{db_path} is already up to date with {source}; nothing to do.")
        return
    t = {k: v for k, v in report.timings.items() if "." not in k}
    deletes = (
        ""
        if report.deletes
        else "  (a partial export: only those --deletions names)"
        if report.deletions_requested
        else "  (not deleting: a partial export; --delete to)"
    )
    resumed = ", resumed" if report.resumed else ""
    click.echo(
        f"Updated {db_path} from {source}{resumed}\n"
        f"  added      {report.added:>8,}\n"
        f"  changed    {report.changed:>8,}\n"
        f"  unchanged  {report.unchanged:>8,}\n"
        f"  relinked   {report.relinked:>8,}  (unchanged text, links resolved again)\n"
        f"  parsed     {report.kept_unparsed:>8,} unchanged pages skipped, "
        f"{report.reparsed:,} read again\n"
        f"  deleted    {report.deleted:>8,}  ({report.stubbed:,} kept as stubs, "
        f"{report.renamed:,} renamed){deletes}\n"
        + _deletions_line(report)
        + f"  redirects  {report.redirects_added:>8,} added, {report.redirects_changed:,} "
        f"changed, {report.redirects_removed:,} removed\n"
        f"  sections   {report.sections_written:>8,} written, {report.sections_embedded:,} "
        f"embedded, {report.sections_reused:,} vectors reused "
        f"({report.vectors_kept:,} left in place)"
        + (f", model on {report.embed_device}" if report.sections_embedded else "")
        + "\n"
        + vectors_line(report.vectors_added, report.vectors_deleted, width=8)
        + f"  rows       {report.rows_kept:>8,} of rewritten articles left in place "
        "(sections, links, categories that did not change)\n"
        f"  database   {report.db_bytes_after / 2**20:>8,.1f} MiB "
        f"(was {report.db_bytes_before / 2**20:,.1f}"
        + ("; compacted" if report.compacted else "")
        + ")\n"
        f"  time       {sum(t.values()):>8.1f}s  "
        + "  ".join(f"{k} {v:.1f}s" for k, v in t.items())
    )


def _deletions_line(report: UpdateReport) -> str:
    """What became of ``--deletions`` (empty without it)."""
    if not report.deletions_requested:
        return ""
    line = f"             {report.deletions_requested:,} named by --deletions"
    if report.deletions_missing:
        line += f"; not in the graph: {_some(report.deletions_missing)}"
    if report.deletions_superseded:
        line += f"; left to the source, which holds them: {_some(report.deletions_superseded)}"
    return line + "\n"


def _some(titles: list[str]) -> str:
    shown = ", ".join(repr(t) for t in titles[:5])
    return shown + (f" and {len(titles) - 5:,} more" if len(titles) > 5 else "")


@click.command()
@click.argument("titles", nargs=-1)
@db_option
@click.option(
    "--from-file",
    type=click.File("r", encoding="utf-8"),
    help="Also delete the titles in this file, one a line ('-' for stdin).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--quiet", "-q", is_flag=True, help="No progress display.")
@library_errors
def delete(
    titles: tuple[str, ...], db_path: str, from_file: TextIO | None, as_json: bool, quiet: bool
) -> None:
    """Delete articles by title from the graph at --db.

    Each article's sections, vectors, links, categories and the redirects to it go.
    One that other articles still link to stays as a stub (a title without text),
    as a red link would. Titles that are not articles of the graph are reported.
    """
    from kg_agent.ingest.maintain import delete_articles

    names = list(titles)
    if from_file:
        names += from_file.read().splitlines()
    if not any(n.strip() for n in names):
        raise click.UsageError("name at least one title, or --from-file")
    report = delete_articles(db_path, names, progress=not quiet)
    if as_json:
        echo_json(report.to_dict())
        return
    click.echo(
        f"Deleted {report.deleted:,} articles from {db_path}; {report.stubbed:,} kept as "
        f"stubs (still linked to); {report.removed_redirects:,} redirects, "
        f"{report.removed_stubs:,} stubs and {report.removed_categories:,} categories "
        "removed with them"
        + ("; compacted (most of its vector index was deleted)" if report.compacted else "")
    )
    if report.missing:
        click.echo(f"Not in the graph: {_some(report.missing)}")


@click.command()
@db_option
@click.option(
    "--vector-store",
    type=click.Choice(["graph", "index"]),
    default=None,
    help="Also move the section vectors: into the index alone (the graph drops its "
    "float32 copy), or back into the graph. Default: where they are.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--quiet", "-q", is_flag=True, help="No progress display.")
@library_errors
def compact(db_path: str, vector_store: str | None, as_json: bool, quiet: bool) -> None:
    """Reclaim the space that updates, deletes and re-loads left in the graph at --db.

    Rewrites the graph into a new file beside it and renames that over it (needs room
    for a second copy while it runs); an interrupted compaction leaves the graph as it was.
    """
    from kg_agent.ingest.compact import compact_graph

    report = compact_graph(db_path, progress=not quiet, vector_store=vector_store)
    if as_json:
        echo_json(report.to_dict())
        return
    click.echo(
        f"Compacted {db_path}: {report.bytes_before / 2**20:,.1f} MiB -> "
        f"{report.bytes_after / 2**20:,.1f} MiB in {report.seconds:.1f}s; vectors: "
        f"{report.vector_bytes_before / 2**20:,.1f} MiB -> "
        f"{report.vector_bytes_after / 2**20:,.1f} MiB in the index "
        f"(stored in the {report.vector_store})"
    )

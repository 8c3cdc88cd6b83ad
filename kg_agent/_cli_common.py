"""What the ``kg-agent`` commands share: error handling, common options, JSON output."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any, TypeVar

import click

from kg_agent.exceptions import KGAgentError

F = TypeVar("F", bound=Callable[..., Any])


def _library_errors(fn: F) -> F:
    """Turn library errors into click errors: one line, non-zero exit, no traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except KGAgentError as exc:
            raise click.ClickException(str(exc)) from None

    return wrapper  # type: ignore[return-value]


def _db_option(fn: F) -> F:
    return click.option(
        "--db",
        "db_path",
        required=True,
        envvar="KG_AGENT_DB",
        type=click.Path(dir_okay=True, file_okay=True, path_type=str),
        help="Path of the Kùzu database (env: KG_AGENT_DB).",
    )(fn)


def _echo_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


_DUMP_OPTIONS = [
    click.option(
        "--format",
        "fmt",
        type=click.Choice(["auto", "mediawiki", "passages", "hotpotqa", "musique"]),
        default="auto",
        show_default=True,
        help="Source format; auto detects it from the file's content.",
    ),
    click.option(
        "--model",
        help="sentence-transformers model name or path (default: the bundled all-MiniLM-L6-v2).",
    ),
    click.option(
        "--batch-size",
        type=click.IntRange(min=1),
        help="Embedding batch size (default: the embedder's own, tuned for CPUs).",
    ),
    click.option(
        "--max-section-words",
        type=click.IntRange(min=20),
        default=160,
        show_default=True,
        help="Split sections longer than this into parts (one embedding each).",
    ),
    click.option(
        "--no-cache",
        is_flag=True,
        help="Do not reuse or store embeddings in the cache ($KG_AGENT_CACHE_DIR).",
    ),
    click.option(
        "--workers",
        type=click.IntRange(min=1),
        help="Parse worker processes (default: one per CPU core).",
    ),
    click.option(
        "--index",
        "index_file",
        type=click.Path(exists=True, dir_okay=False, path_type=str),
        help="The multistream dump's index (…-multistream-index.txt.bz2); found beside the "
        "dump when not given.",
    ),
    click.option(
        "--restart",
        is_flag=True,
        help="Discard what an interrupted earlier run of this load staged, and start over.",
    ),
    click.option(
        "--staging-dir",
        type=click.Path(file_okay=False, path_type=str),
        help="Where to stage parsed shards (default: beside the database).",
    ),
    click.option(
        "--shard-mb",
        type=click.IntRange(min=1),
        help="Size of a parse unit and shard, in MB of XML (default 32; for a multistream "
        ".bz2, 8 MB compressed). Smaller: finer resume and progress; larger: fewer files.",
    ),
    click.option(
        "--buffer-pool-mb",
        type=click.IntRange(min=64),
        envvar="KG_AGENT_BUFFER_POOL_MB",
        help="Kùzu buffer pool for the write (default: 60% of memory).",
    ),
]


def _dump_options(fn: F) -> F:
    """Options of every command that reads a dump (``load``, ``update``)."""
    for option in reversed(_DUMP_OPTIONS):
        fn = option(fn)
    return fn


def make_embedder(model: str | None, batch_size: int | None) -> Any:
    """The embedder a command that loads text uses (``--model``, ``--batch-size``)."""
    from kg_agent.embedding import Embedder

    return Embedder(model, batch_size=batch_size) if batch_size else Embedder(model)

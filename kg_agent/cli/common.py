"""What the ``kg-agent`` commands share: error handling, common options, JSON output."""

from __future__ import annotations

import contextlib
import functools
import json
import os
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import click

from kg_agent.exceptions import KGAgentError

F = TypeVar("F", bound=Callable[..., Any])


def library_errors(fn: F) -> F:
    """Turn library errors into click errors: one line, non-zero exit, no traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except KGAgentError as exc:
            raise click.ClickException(str(exc)) from None

    return wrapper  # type: ignore[return-value]


def db_option(fn: F) -> F:
    return click.option(
        "--db",
        "db_path",
        required=True,
        envvar="KG_AGENT_DB",
        type=click.Path(dir_okay=True, file_okay=True, path_type=str),
        help="Path of the Kùzu database (env: KG_AGENT_DB).",
    )(fn)


def echo_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


DUMP_OPTIONS = [
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
        "--device",
        default="auto",
        show_default=True,
        metavar="auto|cpu|cuda[:N]|mps",
        help="Where the model embeds; auto takes a GPU when torch sees one.",
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


def dump_options(fn: F) -> F:
    """Options of every command that reads a dump (``load``, ``update``)."""
    for option in reversed(DUMP_OPTIONS):
        fn = option(fn)
    return fn


def make_embedder(model: str | None, batch_size: int | None, device: str = "auto") -> Any:
    """The embedder a command that loads text uses (``--model``, ``--batch-size``,
    ``--device``: ``auto`` is the CPU on a machine without a GPU driver, found without
    importing torch; with one, it is resolved where the model loads)."""
    from kg_agent.embedding import Embedder, may_have_gpu, pick_device

    if device == "auto" and not may_have_gpu():
        device = "cpu"
    # on a machine with a GPU driver, "auto" is left for the process that runs the model
    # to resolve: an update's parent never imports torch (~4-5 s on an H100 machine)
    where = device if device == "auto" else pick_device(device)
    return Embedder(model, batch_size=batch_size, device=where)


_TOKENIZER_THREADS_CHOSEN = False
"""Whether TOKENIZERS_PARALLELISM came from the user (then no command changes it)."""


def remember_tokenizer_choice() -> None:
    """Note whether the user set TOKENIZERS_PARALLELISM, then default it to off: the
    tokenizer's threads are for the commands that embed (:func:`tokenizer_threads`)."""
    global _TOKENIZER_THREADS_CHOSEN
    _TOKENIZER_THREADS_CHOSEN = "TOKENIZERS_PARALLELISM" in os.environ
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@contextlib.contextmanager
def tokenizer_threads(value: str | None) -> Iterator[None]:
    """TOKENIZERS_PARALLELISM set to ``value`` while a command embeds ("true": the fast
    tokenizer on every core; None: unset, so that each Ray actor decides by its own
    device), then put back; left alone when the user set it.

    Each section is tokenised twice (to batch by length, then to encode): on one thread
    that bounds a GPU (an H100 ran the model at 5,730 sections/s with the threads, the
    stage at ~890 without them) and costs ~1% on a CPU. What forks meanwhile
    (nothing: parse workers and the writer are spawned) would warn and run it on one.
    """
    if _TOKENIZER_THREADS_CHOSEN:
        yield
        return
    before = os.environ.get("TOKENIZERS_PARALLELISM")
    if value is None:
        os.environ.pop("TOKENIZERS_PARALLELISM", None)
    else:
        os.environ["TOKENIZERS_PARALLELISM"] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("TOKENIZERS_PARALLELISM", None)
        else:
            os.environ["TOKENIZERS_PARALLELISM"] = before


R = TypeVar("R")


def run_with_embedder(
    run: Callable[..., R],
    source: str,
    db_path: str,
    options: Any,
    model: str | None,
    batch_size: int | None,
    device: str,
    quiet: bool,
) -> R:
    """``load_source`` or ``update_graph`` with the command's embedder; on a GPU, with the
    tokenizer's threads, its bound (:func:`tokenizer_threads`)."""
    embedder = make_embedder(model, batch_size, device)
    with tokenizer_threads(str(embedder.device_setting != "cpu").lower()):
        return run(
            source,
            db_path,
            embedder=embedder,
            options=options,
            say=None if quiet else (lambda msg: click.echo(msg, err=True)),
        )


def vectors_line(added: int, deleted: int, *, width: int) -> str:
    """What a load into a graph, or an update, changed in its vector index (nothing
    when the index was built whole, or not changed)."""
    if not (added or deleted):
        return ""
    return (
        f"  vectors    {added:>{width},} added to the vector index, {deleted:,} removed "
        "(no rebuild)\n"
    )

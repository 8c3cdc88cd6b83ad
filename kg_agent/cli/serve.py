"""``kg-agent serve`` (HTTP API and web page) and ``kg-agent mcp`` (MCP over stdio).

Both open the graph read-only
once (a load or update of the same graph is refused while they run) and need the
``serve`` extra.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import click

from kg_agent.cli.common import db_option, library_errors
from kg_agent.cli.llm_options import LLM_OPTION_NAMES, export_key, llm_config, llm_options
from kg_agent.exceptions import KGAgentError

F = TypeVar("F", bound=Callable[..., Any])


def _service_options(fn: F) -> F:
    """Options ``serve`` and ``mcp`` share: the graph, the model and the limits."""
    options = [
        db_option,
        click.option(
            "--workers",
            type=click.IntRange(1, 64),
            default=4,
            show_default=True,
            help="Questions answered at once (threads sharing the graph).",
        ),
        click.option(
            "--queue",
            type=click.IntRange(0, 10_000),
            default=64,
            show_default=True,
            help="Requests that may wait for a worker; beyond, 503 busy.",
        ),
        click.option(
            "--timeout",
            "timeout_s",
            type=click.FloatRange(0.1, 3600),
            default=60.0,
            show_default=True,
            help="Seconds a request may take (504 after).",
        ),
        click.option(
            "--max-question",
            "max_question_chars",
            type=click.IntRange(1, 4000),
            default=1000,
            show_default=True,
            help="Longest question accepted, in characters.",
        ),
        llm_options(),
        click.option(
            "--offline", is_flag=True, help="Never call a model, even with a key configured."
        ),
        click.option(
            "--cypher-packs",
            "cypher_pack_path",
            type=click.Path(exists=True),
            help="Folder or YAML file of Cypher packs (default: the bundled packs).",
        ),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def _needs_serve_extra(fn: F) -> F:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            import fastapi  # noqa: F401
            import mcp  # noqa: F401
            import uvicorn  # noqa: F401
        except ImportError as exc:
            raise click.ClickException(
                f"{exc.name} is not installed: pip install 'kg-agent[serve]'"
            ) from None
        return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def _open_service(
    db_path: str,
    *,
    host: str = "127.0.0.1",
    port: int = 8080,
    workers: int,
    queue: int,
    timeout_s: float,
    max_question_chars: int,
    api_key: str | None,
    offline: bool,
    cypher_pack_path: str | None,
    max_body_bytes: int = 64 * 1024,
    cors_origins: tuple[str, ...] = (),
    **llm: Any,
) -> Any:
    from kg_agent.config import AgentConfig
    from kg_agent.serve.service import GraphService, ServeOptions

    options = ServeOptions(
        host=host,
        port=port,
        workers=workers,
        queue=queue,
        timeout_s=timeout_s,
        max_body_bytes=max_body_bytes,
        max_question_chars=max_question_chars,
        cors_origins=cors_origins,
    )
    config = AgentConfig(offline=offline, cypher_pack_path=cypher_pack_path, **llm_config(llm))
    return GraphService.open(
        db_path,
        options,
        config=config,
        anthropic_api_key=api_key,
        cypher_pack_path=cypher_pack_path,
    )


@click.command()
@_service_options
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8080,
    show_default=True,
    help="Port to listen on (0: any free port, printed at start).",
)
@click.option(
    "--processes",
    type=click.IntRange(1, 64),
    default=1,
    show_default=True,
    help="Server processes sharing the port, each with its own read-only open of the graph "
    "and its own model (memory x N): what scales past one core, which Python's GIL "
    "holds one process to.",
)
@click.option(
    "--max-body",
    "max_body_kb",
    type=click.IntRange(1, 16 * 1024),
    default=64,
    show_default=True,
    help="Largest request body accepted, in KiB (413 beyond).",
)
@click.option(
    "--cors-origin",
    "cors_origins",
    multiple=True,
    metavar="ORIGIN",
    help="Let a web page from ORIGIN call the API (repeatable; default: CORS off).",
)
@click.option(
    "--log-level",
    type=click.Choice(["critical", "error", "warning", "info", "debug"]),
    default="warning",
    show_default=True,
    help="Server log level (info: one line per request).",
)
@_needs_serve_extra
@library_errors
def serve(
    db_path: str,
    host: str,
    port: int,
    processes: int,
    max_body_kb: int,
    cors_origins: tuple[str, ...],
    log_level: str,
    **service_options: Any,
) -> None:
    """Serve the graph at --db over HTTP: the JSON API under /v1, its description at
    /openapi.json, and a web page at / that shows the answer and its evidence path."""
    from kg_agent.serve.runner import bind, run_http

    sock = bind(host, port)  # before the graph and the model load: a clash fails fast
    if processes > 1:
        _serve_processes(
            db_path,
            sock,
            processes=processes,
            host=host,
            port=port,
            max_body_bytes=max_body_kb * 1024,
            cors_origins=cors_origins,
            log_level=log_level,
            **service_options,
        )
        return
    try:
        service = _open_service(
            db_path,
            host=host,
            port=port,
            max_body_bytes=max_body_kb * 1024,
            cors_origins=cors_origins,
            **service_options,
        )
    except BaseException:
        sock.close()
        raise
    try:
        run_http(
            service, sock=sock, log_level=log_level, announce=lambda m: click.echo(m, err=True)
        )
    finally:
        service.close()


def _serve_processes(
    db_path: str,
    sock: Any,
    *,
    processes: int,
    log_level: str,
    api_key: str | None,
    offline: bool,
    cypher_pack_path: str | None,
    **limits: Any,
) -> None:
    from kg_agent.config import AgentConfig
    from kg_agent.serve.runner import run_processes
    from kg_agent.serve.service import ServeOptions
    from kg_agent.store import GraphStore

    llm = {name: limits.pop(name) for name in LLM_OPTION_NAMES if name in limits}
    fields = llm_config({**llm, "api_key": api_key})
    try:
        options = ServeOptions(processes=processes, **limits)
        AgentConfig(offline=offline, **fields)  # checked here, once
        GraphStore.open(db_path, read_only=True).close()  # a missing graph: one line, now
    except BaseException:
        sock.close()
        raise
    export_key(fields["llm_api"], api_key)  # the workers read it from their environment
    spec = {
        "db_path": db_path,
        "config": {"offline": offline, "cypher_pack_path": cypher_pack_path, **fields},
        "cypher_pack_path": cypher_pack_path,
    }
    run_processes(
        spec, options, sock=sock, log_level=log_level, announce=lambda m: click.echo(m, err=True)
    )


@click.command()
@_service_options
@_needs_serve_extra
@library_errors
def mcp(db_path: str, **service_options: Any) -> None:
    """Serve the graph at --db to agents over MCP (stdio): the tools ask, search,
    article and cypher."""
    from kg_agent.serve.mcp_server import run_stdio

    service = _open_service(db_path, **service_options)
    try:
        run_stdio(service)
    except KGAgentError:
        raise
    finally:
        service.close()

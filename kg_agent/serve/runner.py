"""Run the HTTP API under uvicorn until Ctrl-C or SIGTERM (a graceful shutdown: requests
in progress finish, then the graph is closed)."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

from kg_agent.exceptions import InvalidArgumentError
from kg_agent.serve.service import GraphService, ServeOptions

__all__ = ["app_from_environment", "bind", "run_http", "run_processes"]


def bind(host: str, port: int) -> socket.socket:
    """The listening socket (``port`` 0: a free one, read back from the socket)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit this on Linux. Without it a keep-alive client waited
    # ~40 ms per request: the response goes out in two writes, Nagle holds the second
    # until the client's delayed ACK of the first (measured: /healthz 44 ms -> ~1 ms).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise InvalidArgumentError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def _server_class() -> type:
    import uvicorn

    class GracefulServer(uvicorn.Server):  # type: ignore[misc]
        """uvicorn's server, but a Ctrl-C or SIGTERM that stopped it gracefully ends the
        command with status 0: uvicorn re-raises the signal after its shutdown, which the
        CLI would report as "Aborted!" (status 1) or a death by SIGTERM."""

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            stops = (signal.SIGINT, signal.SIGTERM)
            previous = {sig: signal.signal(sig, self.handle_exit) for sig in stops}
            try:
                yield
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)

    return GracefulServer


def run_http(
    service: GraphService,
    *,
    sock: socket.socket | None = None,
    log_level: str = "warning",
    announce: Callable[[str], None] | None = None,
) -> None:
    """Serve ``service`` on ``sock`` (default: bound to its options' host and port);
    returns after shutdown."""
    import uvicorn

    from kg_agent.serve.app import create_app

    _Server = _server_class()

    opts = service.options
    sock = sock or bind(opts.host, opts.port)
    logging.basicConfig(level=getattr(logging, log_level.upper(), logging.WARNING))
    config = uvicorn.Config(
        create_app(service),
        log_level=log_level,
        access_log=log_level in ("info", "debug"),
        timeout_graceful_shutdown=10,
        # the service bounds work; this bounds open connections
        limit_concurrency=max(64, 4 * (opts.workers + opts.queue)),
        server_header=False,
    )
    server = _Server(config)
    _announce(announce, service.db_path, sock, opts, service.describe_llm())
    if service.unavailable:
        (announce or (lambda m: print(m, file=sys.stderr, flush=True)))(
            f"not answering yet (503): {service.unavailable}"
        )
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()


# --------------------------------------------------------------------------- processes

#: The environment variable that carries the service's settings to worker processes.
_SPEC_ENV = "KG_AGENT_SERVE_SPEC"


def run_processes(
    spec: dict[str, Any],
    options: ServeOptions,
    *,
    sock: socket.socket,
    log_level: str = "warning",
    announce: Callable[[str], None] | None = None,
) -> None:
    """Serve with ``options.processes`` processes accepting on ``sock`` (uvicorn's
    supervisor): each opens the graph read-only itself (``spec``: the arguments of
    :meth:`GraphService.open`) and builds the app in :func:`app_from_environment`.

    Why processes: a query holds the GIL for most of its ~55 ms, so one process's
    threads add ~15% on 2 cores, where two processes double the throughput (measured
    in ``scripts/bench_serve.py``). Each costs its own model and caches (~0.8 GiB on
    the 2Wiki graph). Ctrl-C or SIGTERM stops them all.
    """
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    os.environ[_SPEC_ENV] = json.dumps({"spec": spec, "options": dataclasses.asdict(options)})
    logging.basicConfig(level=getattr(logging, log_level.upper(), logging.WARNING))
    config = uvicorn.Config(
        f"{__name__}:app_from_environment",
        factory=True,
        workers=options.processes,
        log_level=log_level,
        access_log=log_level in ("info", "debug"),
        timeout_graceful_shutdown=10,
        # a worker loads the model and indexes before it answers the supervisor's pings
        timeout_worker_healthcheck=600,
        server_header=False,
    )
    _announce(announce, spec["db_path"], sock, options)
    try:
        Multiprocess(config, sockets=[sock]).run()
    finally:
        sock.close()


def app_from_environment() -> Any:
    """In a worker process: the service from :data:`_SPEC_ENV`, and its app (closed at
    shutdown). The worker dies with its parent (Linux), so a ``kill -9`` of the server
    leaves no process holding the graph."""
    from kg_agent.config import AgentConfig
    from kg_agent.serve.app import create_app

    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    data = json.loads(os.environ[_SPEC_ENV])
    opts = data["options"]
    opts["cors_origins"] = tuple(opts.get("cors_origins") or ())
    spec = data["spec"]
    service = GraphService.open(
        spec["db_path"],
        ServeOptions(**opts),
        config=AgentConfig(**spec["config"]),
        cypher_pack_path=spec.get("cypher_pack_path"),
    )
    app = create_app(service)
    app.router.on_shutdown.append(service.close)
    return app


def _announce(
    announce: Callable[[str], None] | None,
    db_path: str,
    sock: socket.socket,
    options: ServeOptions,
    llm: str | None = None,
) -> None:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    procs = f"{options.processes} processes x " if options.processes > 1 else ""
    mode = "" if llm is None else f", {llm}"
    (announce or (lambda m: print(m, file=sys.stderr, flush=True)))(
        f"kg-agent serving {db_path} at http://{shown}:{port}/ "
        f"({procs}{options.workers} workers{mode}); Ctrl-C stops"
    )

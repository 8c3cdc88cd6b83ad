"""Run the HTTP API under uvicorn until Ctrl-C or SIGTERM (a graceful shutdown: requests
in progress finish, then the graph is closed)."""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterator

from kg_agent.exceptions import InvalidArgumentError
from kg_agent.serve.service import GraphService

__all__ = ["bind", "run_http"]


def bind(host: str, port: int) -> socket.socket:
    """The listening socket (``port`` 0: a free one, read back from the socket)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
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
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}/"
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
    (announce or (lambda m: print(m, file=sys.stderr, flush=True)))(
        f"kg-agent serving {service.agent.store.path} at {url} "
        f"({opts.workers} workers, {'offline' if service.agent.llm is None else 'Claude'}); "
        "Ctrl-C stops"
    )
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()

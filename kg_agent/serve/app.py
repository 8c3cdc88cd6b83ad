"""The HTTP API (``kg-agent serve``): FastAPI on uvicorn, over a :class:`GraphService`.

Why FastAPI: the request models are validated by pydantic (already a dependency
through ``anthropic``) and the same models generate ``/openapi.json``, so the
description cannot drift from the code; it runs on Starlette (streaming responses
for Server-Sent Events, a body-size limit) and uvicorn, the reference ASGI server.
Handlers are ``async`` and hand the graph work to the service's bounded thread pool,
so the event loop only parses, streams and refuses.

Every error is JSON ``{"error": "..."}`` with its status: 400 malformed JSON, 404
unknown route/article/pack, 413 body too large, 422 invalid request, 503 busy, 504
timeout, 500 for a fault (logged; never a traceback in the response).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
from collections.abc import AsyncIterator
from importlib import resources
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kg_agent import __version__
from kg_agent.exceptions import InvalidArgumentError, KGAgentError, one_line
from kg_agent.serve.schemas import AskRequest, CypherRequest, SearchRequest
from kg_agent.serve.service import (
    GraphService,
    GraphUnavailable,
    NotFound,
    ServiceBusy,
    ServiceTimeout,
)

__all__ = ["create_app"]

log = logging.getLogger(__name__)

_STATUS: tuple[tuple[type[KGAgentError], int], ...] = (
    (NotFound, 404),
    (InvalidArgumentError, 422),
    (ServiceBusy, 503),
    (GraphUnavailable, 503),
    (ServiceTimeout, 504),
)


def _status_of(exc: KGAgentError) -> int:
    return next((code for cls, code in _STATUS if isinstance(exc, cls)), 500)


def error_response(
    status: int, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


_LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})
_LOOPBACK_HOST_HEADERS = frozenset({b"127.0.0.1", b"localhost", b"[::1]"})


class LoopbackHosts:
    """On a loopback address, answer only requests addressed to a loopback name.

    A web page elsewhere can point a DNS name of its own at 127.0.0.1 (DNS rebinding)
    and then call the API from the user's browser, spending the operator's Claude key;
    its requests carry that name in ``Host``, so they are refused (400).
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            host = dict(scope.get("headers") or []).get(b"host", b"")
            name = host.rsplit(b":", 1)[0] if not host.endswith(b"]") else host
            if name.lower() not in _LOOPBACK_HOST_HEADERS:
                shown = host.decode("latin-1")[:100]
                await error_response(400, f"host {shown!r} is not served here")(
                    scope, receive, send
                )
                return
        await self.app(scope, receive, send)


#: Bytes of an oversized body read and dropped before the 413 (beyond, the connection
#: is answered and closed at once).
_DRAIN_LIMIT = 32 * 1024 * 1024


class BodyLimit:
    """Refuse a request body over ``limit`` bytes with a JSON 413, before any handler.

    The body is read here whole (it is small by construction) and handed on, so a
    chunked upload without a Content-Length is bounded as well as a declared one.
    """

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self._too_large(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                await self._too_large(scope, receive, send, more=message.get("more_body", False))
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _too_large(
        self, scope: Scope, receive: Receive, send: Send, *, more: bool = True
    ) -> None:
        # Read (and drop) what the client is still sending, up to a bound, before
        # answering: a reply while the client writes resets the connection, and the
        # client sees "connection reset" instead of the 413.
        drained = 0
        while more and drained <= _DRAIN_LIMIT:
            message = await receive()
            if message["type"] != "http.request":
                return
            drained += len(message.get("body", b""))
            more = message.get("more_body", False)
        response = error_response(413, f"the request body is larger than {self.limit:,} bytes")
        response.headers["connection"] = "close"
        await response(scope, receive, send)


def _static(name: str) -> bytes:
    return resources.files("kg_agent.serve").joinpath("static", name).read_bytes()


def create_app(service: GraphService) -> FastAPI:
    """The ASGI application over ``service`` (which the caller opens and closes)."""
    opts = service.options
    app = FastAPI(
        title="kg-agent",
        version=__version__,
        description="Question answering over a Wikipedia knowledge graph (embedded Kùzu), "
        'with cited evidence. Errors are JSON objects {"error": message}.',
        # Swagger UI and ReDoc load their scripts from a CDN: off, the spec is at
        # /openapi.json for any local viewer.
        docs_url=None,
        redoc_url=None,
    )
    app.state.service = service
    app.add_middleware(BodyLimit, limit=opts.max_body_bytes)
    if opts.host in _LOOPBACK:
        app.add_middleware(LoopbackHosts)
    if opts.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(opts.cors_origins),
            allow_methods=["GET", "POST"],
            allow_headers=["content-type"],
        )

    # ------------------------------------------------------------------ errors
    @app.exception_handler(KGAgentError)
    async def _library_error(_: Request, exc: KGAgentError) -> JSONResponse:
        status = _status_of(exc)
        if status >= 500 and not isinstance(exc, ServiceBusy | ServiceTimeout):
            log.error("request failed: %s", one_line(exc))
        headers = {"retry-after": "1"} if isinstance(exc, ServiceBusy) else None
        return error_response(status, one_line(exc, 500), headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        if any(e.get("type") == "json_invalid" for e in errors):
            return error_response(400, "the request body is not valid JSON")
        parts = []
        for e in errors[:5]:
            where = ".".join(str(x) for x in e.get("loc", ()) if x != "body") or "body"
            parts.append(f"{where}: {e.get('msg', 'invalid')}")
        return error_response(422, "; ".join(parts))

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        message = str(exc.detail) if exc.detail else "error"
        if exc.status_code == 404 and message == "Not Found":
            message = "not found"
        return error_response(exc.status_code, message, getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def _fault(_: Request, exc: Exception) -> JSONResponse:
        log.exception("internal error")
        return error_response(500, f"internal error ({type(exc).__name__}); see the server log")

    # ------------------------------------------------------------------ API
    @app.get("/healthz", summary="Liveness: the graph is open (503 while it is unavailable).")
    async def healthz() -> dict[str, Any]:
        service.agent  # noqa: B018 - GraphUnavailable (503) while a write is unfinished
        return {"status": "ok", "in_flight": service.in_flight}

    @app.get("/v1/stats", summary="The graph's counts, indexes and loads; the server's counters.")
    async def stats() -> dict[str, Any]:
        return await service.run(service.stats)

    @app.post(
        "/v1/ask",
        summary="Answer a question with cited evidence (the QueryResult as JSON).",
        responses={200: {"content": {"text/event-stream": {}}}},
    )
    async def ask(body: AskRequest, request: Request) -> Any:
        kwargs: dict[str, Any] = {
            "top_k": body.top_k,
            "retrieval": body.retrieval,
            "answer_words": body.answer_words,
            "multi_query": body.multi_query,
            "reranker": body.reranker,
            "multidoc": body.multidoc,
            "fewshot": body.fewshot,
            "multistep": body.multistep,
            "route": None if body.route == "auto" else body.route,
        }
        if body.offline:
            kwargs["offline"] = True
        service.check(body.question)  # a 422 before any work, also when streaming
        wants_stream = body.stream or "text/event-stream" in request.headers.get("accept", "")
        if not wants_stream:
            return await service.run(lambda: service.ask(body.question, **kwargs))
        service.check_capacity()
        return StreamingResponse(
            _event_stream(service, body.question, kwargs),
            media_type="text/event-stream",
            headers={"cache-control": "no-cache", "x-accel-buffering": "no"},
        )

    @app.post("/v1/search", summary="Ranked evidence only, in any retrieval mode.")
    async def search(body: SearchRequest) -> dict[str, Any]:
        return await service.run(
            lambda: service.search(
                body.question,
                top_k=body.top_k,
                retrieval=body.retrieval,
                multistep=body.multistep,
            )
        )

    @app.get(
        "/v1/articles/{title:path}",
        summary="An article (a redirect is followed): sections, categories, link neighbours.",
    )
    async def article(title: str) -> dict[str, Any]:
        return await service.run(lambda: service.article(title))

    @app.get("/v1/cypher", summary="The read-only Cypher pack queries and their parameters.")
    async def cypher_list() -> dict[str, Any]:
        return {"queries": service.packs_listing()}

    @app.post(
        "/v1/cypher/{pack}/{query}",
        summary="Run a read-only pack query; parameters are typed by the pack.",
    )
    async def cypher(pack: str, query: str, body: CypherRequest | None = None) -> dict[str, Any]:
        params = body.params if body is not None else {}
        return await service.run(lambda: service.cypher(pack, query, params))

    # ------------------------------------------------------------------ the page
    @app.get("/", include_in_schema=False)
    async def index() -> HTMLResponse:
        return HTMLResponse(_static("index.html"))

    @app.get("/static/{name}", include_in_schema=False)
    async def static(name: str) -> Response:
        kinds = {".js": "text/javascript", ".css": "text/css", ".html": "text/html"}
        kind = next((v for k, v in kinds.items() if name.endswith(k)), None)
        if kind is None or "/" in name or name.startswith("."):
            raise NotFound(f"no static file {name!r}")
        try:
            data = _static(name)
        except (FileNotFoundError, IsADirectoryError):
            raise NotFound(f"no static file {name!r}") from None
        return Response(data, media_type=kind, headers={"cache-control": "max-age=3600"})

    return app


class _ClientGone(Exception):
    """Raised in the worker when the streaming client has disconnected."""


def _sse(event: str, data: Any) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n".encode()


async def _event_stream(
    service: GraphService, question: str, kwargs: dict[str, Any]
) -> AsyncIterator[bytes]:
    """The answer as Server-Sent Events: the query runs on the pool and posts what it
    does onto a queue this generator drains (``retrieved``, ``evidence``, ``text``…,
    then ``result`` or ``error``)."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    gone = threading.Event()

    def post(kind: str, data: dict[str, Any]) -> None:
        if gone.is_set():  # the client left: stop the query (and Claude's stream) here
            raise _ClientGone
        loop.call_soon_threadsafe(queue.put_nowait, (kind, data))

    async def run() -> None:
        try:
            result = await service.run(lambda: service.ask(question, on_event=post, **kwargs))
            await queue.put(("result", result))
        except KGAgentError as exc:
            await queue.put(("error", {"error": one_line(exc, 500), "status": _status_of(exc)}))
        except _ClientGone:
            pass
        except Exception as exc:
            log.exception("internal error while streaming")
            await queue.put(
                ("error", {"error": f"internal error ({type(exc).__name__})", "status": 500})
            )

    task = asyncio.create_task(run())
    try:
        while True:
            kind, data = await queue.get()
            yield _sse(kind, data)
            if kind in ("result", "error"):
                break
    finally:
        gone.set()
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

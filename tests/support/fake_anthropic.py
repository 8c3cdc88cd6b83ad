"""A small model server on 127.0.0.1, so the real ``anthropic`` and ``openai`` SDKs can
be tested offline: Anthropic's Messages API (``POST /v1/messages``) and OpenAI's chat
completions (``POST /v1/chat/completions``, base URL :attr:`FakeAnthropic.openai_base_url`),
the same scripted behaviours answered in either API's shape.

The SDK is never patched: tests point it at :attr:`FakeAnthropic.base_url`. The server
accepts ``x-api-key: <key>`` or ``Authorization: Bearer <key>`` (401 otherwise),
records every request, and answers ``POST /v1/messages`` from a scripted queue of
behaviours (:func:`text`, :func:`rate_limited`, :func:`overloaded`, :func:`server_error`,
:func:`error`, :func:`delay`, :func:`raw`), falling back to a responder callable
when the queue is empty.

Every response closes its connection, and :meth:`FakeAnthropic.close` wakes any
handler that is sleeping in a :func:`delay`, so closing joins every server thread.

Usage::

    with fake_anthropic_server() as fake:
        fake.enqueue(text('{"answer": "Paris"}'), rate_limited())
        client = AnthropicClient("test-key", base_url=fake.base_url)
        ...
        assert fake.requests[0].body["model"] == "claude-test"
"""

from __future__ import annotations

import itertools
import json
import math
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "DEFAULT_KEY",
    "MAX_DELAY_S",
    "OPENAI_ROUTE",
    "Behaviour",
    "Delay",
    "ErrorReply",
    "FakeAnthropic",
    "RawReply",
    "RecordedRequest",
    "Responder",
    "TextReply",
    "delay",
    "error",
    "fake_anthropic_server",
    "overloaded",
    "rate_limited",
    "raw",
    "server_error",
    "text",
]

DEFAULT_KEY = "test-key"
#: Upper bound on a scripted delay, so a forgotten long delay cannot stall the suite.
MAX_DELAY_S = 5.0


# --------------------------------------------------------------------------- behaviours


@dataclass(frozen=True)
class TextReply:
    """A 200 Messages-API reply. ``content`` overrides the blocks (e.g. ``[]`` or tool_use).

    Token counts default to a deterministic estimate (characters / 4).
    """

    text: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    model: str | None = None
    stop_reason: str = "end_turn"
    content: list[dict[str, Any]] | None = None


@dataclass(frozen=True)
class ErrorReply:
    """An HTTP error with the Anthropic error body: ``{"type": "error", "error": {...}}``."""

    status: int
    error_type: str
    message: str
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Delay:
    """Sleep (at most :data:`MAX_DELAY_S`) before answering with ``then``; for timeouts."""

    seconds: float
    then: TextReply | ErrorReply | None = None


@dataclass(frozen=True)
class RawReply:
    """Any status, body bytes and content type, for malformed-response cases."""

    status: int
    body: bytes
    content_type: str = "application/json"


Behaviour = TextReply | ErrorReply | Delay | RawReply
Responder = Callable[[dict[str, Any]], "str | Behaviour"]


def text(
    reply: str,
    *,
    input_tokens: int | None = None,
    output_tokens: int | None = None,
    model: str | None = None,
) -> TextReply:
    """A normal text reply (also the way to script malformed JSON: it is just text)."""
    return TextReply(reply, input_tokens=input_tokens, output_tokens=output_tokens, model=model)


def error(status: int, error_type: str, message: str = "scripted error") -> ErrorReply:
    """Any API error status with the standard error body."""
    return ErrorReply(status, error_type, message)


def rate_limited(retry_after: float = 1.0) -> ErrorReply:
    """429 rate_limit_error with a ``retry-after`` header."""
    return ErrorReply(
        429,
        "rate_limit_error",
        "Number of request tokens has exceeded your per-minute rate limit",
        headers={"retry-after": f"{retry_after:g}"},
    )


def overloaded() -> ErrorReply:
    """529 overloaded_error."""
    return ErrorReply(529, "overloaded_error", "Overloaded")


def server_error() -> ErrorReply:
    """500 api_error."""
    return ErrorReply(500, "api_error", "Internal server error")


def delay(seconds: float, then: TextReply | ErrorReply | None = None) -> Delay:
    """Answer late: longer than the client's timeout makes the SDK raise a timeout."""
    return Delay(seconds, then)


def raw(status: int, body: bytes | str, content_type: str = "application/json") -> RawReply:
    """A verbatim response body (e.g. truncated JSON)."""
    return RawReply(status, body.encode() if isinstance(body, str) else body, content_type)


def default_responder(body: dict[str, Any]) -> str:
    """Echo the last user turn, so a test that scripts nothing still gets a reply."""
    messages = body.get("messages") or [{}]
    content = messages[-1].get("content", "") if isinstance(messages[-1], dict) else ""
    if isinstance(content, list):
        content = " ".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return f"echo: {content}"


# --------------------------------------------------------------------------- recording


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server saw it (header names lower-cased)."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None
    raw_body: bytes
    authorized: bool

    @property
    def credential(self) -> str | None:
        """The key sent, from ``x-api-key`` or ``Authorization: Bearer``."""
        if "x-api-key" in self.headers:
            return self.headers["x-api-key"]
        auth = self.headers.get("authorization", "")
        return auth[len("Bearer ") :] if auth.startswith("Bearer ") else None

    @property
    def system(self) -> Any:
        """The system prompt (Anthropic's field, or OpenAI's first ``system`` turn)."""
        body = self.body or {}
        if "system" in body:
            return body["system"]
        turns = body.get("messages") or []
        first = turns[0] if turns and isinstance(turns[0], dict) else {}
        return first.get("content") if first.get("role") == "system" else None

    @property
    def user_text(self) -> str:
        """Text of the last user turn (string or text blocks)."""
        messages = (self.body or {}).get("messages") or []
        if not messages:
            return ""
        content = messages[-1].get("content", "")
        if isinstance(content, list):
            return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
        return str(content)


# --------------------------------------------------------------------------- server


def _estimate_tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / 4))


#: OpenAI's chat-completions route, answered beside Anthropic's ``/v1/messages``.
OPENAI_ROUTE = "/v1/chat/completions"
#: Anthropic's stop reasons as OpenAI's finish reasons.
FINISH_REASONS = {"end_turn": "stop", "max_tokens": "length", "stop_sequence": "stop"}


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    openai = False  # set per request: answer in OpenAI's chat-completions shape
    timeout = 10  # a stuck client cannot pin a handler thread forever

    def log_message(self, format: str, *args: Any) -> None:  # keep pytest output clean
        pass

    def do_GET(self) -> None:
        self._drain()
        self._record(None, b"")
        self._send_error(ErrorReply(404, "not_found_error", f"no route {self.path}"))

    def do_POST(self) -> None:
        raw_body = self._drain()
        try:
            parsed = json.loads(raw_body) if raw_body else None
        except ValueError:
            parsed = None
        body = parsed if isinstance(parsed, dict) else None
        fake = self.server.fake
        authorized = fake.is_authorized(
            self.headers.get("x-api-key"), self.headers.get("authorization")
        )
        self._record(body, raw_body, authorized)
        if not authorized:
            self._send_error(ErrorReply(401, "authentication_error", "invalid x-api-key"))
            return
        route = self.path.split("?", 1)[0]
        if route not in ("/v1/messages", OPENAI_ROUTE):
            self._send_error(ErrorReply(404, "not_found_error", f"no route {self.path}"))
            return
        self.openai = route == OPENAI_ROUTE
        required = {"model", "messages"} if self.openai else {"model", "max_tokens", "messages"}
        if body is None or not required <= body.keys():
            self._send_error(
                ErrorReply(400, "invalid_request_error", f"{', '.join(sorted(required))} required")
            )
            return
        try:
            behaviour = fake.next_behaviour(body)
        except Exception as exc:  # a broken test responder: answer 500, keep it for asserts
            fake.responder_errors.append(exc)
            behaviour = ErrorReply(500, "api_error", f"fake responder raised {exc!r}")
        self._behave(behaviour, body)

    # -- helpers

    def _drain(self) -> bytes:
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length else b""

    def _record(
        self, body: dict[str, Any] | None, raw_body: bytes, authorized: bool = True
    ) -> None:
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.server.fake.record(
            RecordedRequest(self.command, self.path, headers, body, raw_body, authorized)
        )

    def _behave(self, behaviour: Behaviour, body: dict[str, Any]) -> None:
        if isinstance(behaviour, Delay):
            woken = self.server.fake.stopping.wait(min(behaviour.seconds, MAX_DELAY_S))
            if woken:  # server closing: drop the connection without answering
                self.close_connection = True
                return
            behaviour_then = behaviour.then or TextReply(default_responder(body))
            self._behave(behaviour_then, body)
        elif isinstance(behaviour, ErrorReply):
            self._send_error(behaviour)
        elif isinstance(behaviour, RawReply):
            self._send(behaviour.status, behaviour.body, behaviour.content_type)
        else:
            self._send_message(behaviour, body)

    def _send_message(self, reply: TextReply, body: dict[str, Any]) -> None:
        if self.openai:
            self._send_completion(reply, body)
            return
        prompt_chars = json.dumps(body.get("system", "")) + json.dumps(body.get("messages", []))
        content = (
            reply.content if reply.content is not None else [{"type": "text", "text": reply.text}]
        )
        message = {
            "id": f"msg_fake{self.server.fake.next_id():06d}",
            "type": "message",
            "role": "assistant",
            "model": reply.model or body.get("model", "claude-fake"),
            "content": content,
            "stop_reason": reply.stop_reason,
            "stop_sequence": None,
            "usage": {
                "input_tokens": reply.input_tokens
                if reply.input_tokens is not None
                else _estimate_tokens(prompt_chars),
                "output_tokens": reply.output_tokens
                if reply.output_tokens is not None
                else _estimate_tokens(reply.text),
            },
        }
        if body.get("stream"):
            self._send_stream(message, reply)
            return
        self._send(200, json.dumps(message).encode())

    def _send_stream(self, message: dict[str, Any], reply: TextReply) -> None:
        """The reply as the Messages API streams it (``"stream": true``): server-sent
        events, the text in a few ``text_delta`` pieces."""
        start = dict(message, content=[], stop_reason=None)
        start["usage"] = dict(message["usage"], output_tokens=1)
        events: list[tuple[str, dict[str, Any]]] = [
            ("message_start", {"type": "message_start", "message": start}),
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
            ),
        ]
        words = reply.text.split(" ")
        pieces = [" ".join(words[i : i + 3]) for i in range(0, len(words), 3)]
        for i, piece in enumerate(pieces):
            delta = piece if i == len(pieces) - 1 else piece + " "
            events.append(
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": delta},
                    },
                )
            )
        events += [
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
                    "usage": {"output_tokens": message["usage"]["output_tokens"]},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
        payload = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)
        self._send(200, payload.encode(), content_type="text/event-stream")

    def _send_completion(self, reply: TextReply, body: dict[str, Any]) -> None:
        """The reply as OpenAI's chat completions give it (streamed as chunks when
        ``"stream": true``, the usage in a last chunk when asked for)."""
        prompt_chars = json.dumps(body.get("messages", []))
        finish = FINISH_REASONS.get(reply.stop_reason, reply.stop_reason)
        usage = {
            "prompt_tokens": reply.input_tokens
            if reply.input_tokens is not None
            else _estimate_tokens(prompt_chars),
            "completion_tokens": reply.output_tokens
            if reply.output_tokens is not None
            else _estimate_tokens(reply.text),
        }
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        head = {
            "id": f"chatcmpl-fake{self.server.fake.next_id():06d}",
            "created": 1_700_000_000,
            "model": reply.model or body.get("model", "local-fake"),
        }
        if not body.get("stream"):
            content = None if reply.content == [] else reply.text
            completion = dict(
                head,
                object="chat.completion",
                choices=[
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": finish,
                    }
                ],
                usage=usage,
            )
            self._send(200, json.dumps(completion).encode())
            return
        chunk = dict(head, object="chat.completion.chunk")
        words = reply.text.split(" ") if reply.content != [] else []
        pieces = [" ".join(words[i : i + 3]) for i in range(0, len(words), 3)]
        events = [
            dict(
                chunk,
                choices=[{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}],
            )
        ]
        for i, piece in enumerate(pieces):
            delta = piece if i == len(pieces) - 1 else piece + " "
            events.append(
                dict(
                    chunk,
                    choices=[{"index": 0, "delta": {"content": delta}, "finish_reason": None}],
                )
            )
        events.append(dict(chunk, choices=[{"index": 0, "delta": {}, "finish_reason": finish}]))
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append(dict(chunk, choices=[], usage=usage))
        payload = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
        self._send(200, payload.encode(), content_type="text/event-stream")

    def _send_error(self, err: ErrorReply) -> None:
        if self.openai:
            inner = {"message": err.message, "type": err.error_type, "code": None}
            self._send(err.status, json.dumps({"error": inner}).encode(), headers=err.headers)
            return
        payload = {"type": "error", "error": {"type": err.error_type, "message": err.message}}
        self._send(err.status, json.dumps(payload).encode(), headers=err.headers)

    def _send(
        self,
        status: int,
        payload: bytes,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        self.close_connection = True
        try:
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(payload)))
            self.send_header("request-id", f"req_fake{self.server.fake.next_id():06d}")
            self.send_header("connection", "close")
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()
        except OSError:  # the client gave up (timeout) and closed its end
            pass


class _Server(ThreadingHTTPServer):
    # Non-daemon on purpose: socketserver only tracks (and server_close() only joins)
    # non-daemon handler threads. Handlers cannot hang: delays are bounded and woken
    # by close(), and reads time out (_Handler.timeout).
    daemon_threads = False
    block_on_close = True

    def __init__(self, fake: FakeAnthropic) -> None:
        self.fake = fake
        super().__init__(("127.0.0.1", 0), _Handler)


class FakeAnthropic:
    """The server: scripted behaviours in, recorded requests out.

    ``responder`` answers when the queue is empty; it gets the request body and returns
    reply text or any behaviour. ``api_keys`` are the accepted credentials.
    """

    def __init__(
        self,
        *,
        api_keys: tuple[str, ...] = (DEFAULT_KEY,),
        responder: Responder | None = None,
    ) -> None:
        self.api_keys = api_keys
        self.responder: Responder = responder or default_responder
        self.requests: list[RecordedRequest] = []
        self.responder_errors: list[Exception] = []
        self.stopping = threading.Event()
        self._queue: deque[Behaviour] = deque()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle

    def start(self) -> FakeAnthropic:
        if self._server is not None:
            raise RuntimeError("FakeAnthropic already started")
        self.stopping.clear()
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.01},  # close() waits up to one poll
            name="fake-anthropic",
            daemon=True,
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving, wake delayed handlers, and join every server thread."""
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is None:
            return
        self.stopping.set()
        server.shutdown()
        server.server_close()
        if thread is not None:
            thread.join(timeout=5)

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("FakeAnthropic is not running")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """Pass this as the SDK's ``base_url`` (no trailing ``/v1``: the SDK adds it)."""
        return f"http://127.0.0.1:{self.port}"

    # -- scripting and assertions

    def enqueue(self, *behaviours: Behaviour | str) -> None:
        """Queue replies, answered in order; a plain ``str`` means :func:`text`."""
        with self._lock:
            self._queue.extend(text(b) if isinstance(b, str) else b for b in behaviours)

    @property
    def pending(self) -> int:
        """How many scripted behaviours are still queued."""
        with self._lock:
            return len(self._queue)

    @property
    def message_requests(self) -> list[RecordedRequest]:
        """Recorded model requests (``POST /v1/messages`` or ``/v1/chat/completions``),
        oldest first."""
        with self._lock:
            return [
                r
                for r in self.requests
                if r.method == "POST" and r.path.split("?", 1)[0] in ("/v1/messages", OPENAI_ROUTE)
            ]

    @property
    def openai_base_url(self) -> str:
        """The OpenAI SDK's ``base_url`` (it adds ``/chat/completions``)."""
        return f"{self.base_url}/v1"

    @property
    def last(self) -> RecordedRequest:
        with self._lock:
            if not self.requests:
                raise AssertionError("the fake Anthropic server received no request")
            return self.requests[-1]

    # -- used by the handler

    def is_authorized(self, x_api_key: str | None, authorization: str | None) -> bool:
        if x_api_key is not None and x_api_key in self.api_keys:
            return True
        return authorization is not None and any(
            authorization == f"Bearer {key}" for key in self.api_keys
        )

    def record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def next_id(self) -> int:
        with self._lock:
            return next(self._ids)

    def next_behaviour(self, body: dict[str, Any]) -> Behaviour:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        answer = self.responder(body)
        return text(answer) if isinstance(answer, str) else answer


@contextmanager
def fake_anthropic_server(
    *,
    api_keys: tuple[str, ...] = (DEFAULT_KEY,),
    responder: Responder | None = None,
) -> Iterator[FakeAnthropic]:
    """A running :class:`FakeAnthropic`, closed (threads joined) on exit."""
    fake = FakeAnthropic(api_keys=api_keys, responder=responder)
    fake.start()
    try:
        yield fake
    finally:
        fake.close()

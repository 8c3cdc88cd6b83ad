"""One narrow seam between the agent and a hosted model: ``LLMClient.complete``.

Every LLM feature has two paths: this module's :class:`AnthropicClient` (the real
``anthropic`` SDK, used when a key is configured) and a deterministic offline path
owned by the caller. Anything that goes wrong on the SDK path (timeout, 429, 529,
connection refused, a reply with no usable text, JSON that does not parse) surfaces
here as one exception type, :class:`LLMError`, whose ``kind`` lets the caller log a
precise warning and fall back to its offline path instead of failing the query.

Data notice: when an Anthropic key is configured (``--api-key`` or
``ANTHROPIC_API_KEY``), the question and the evidence text the agent retrieved from
the graph are sent to Anthropic's Messages API (or to ``ANTHROPIC_BASE_URL``). With
no key nothing leaves the machine.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from kg_agent.exceptions import InvalidArgumentError, KGAgentError

#: The fast model every small LLM step uses (query rewrites, plans, relevance, bridge
#: names): one name, so a model change is one edit.
FAST_MODEL = "claude-haiku-4-5-20251001"

if TYPE_CHECKING:
    import anthropic

__all__ = [
    "DEFAULT_PRICE_PER_MTOK",
    "MODEL_PRICES_PER_MTOK",
    "AnthropicClient",
    "LLMClient",
    "LLMError",
    "LLMErrorKind",
    "LLMReply",
    "UsageMeter",
    "client_from_settings",
    "parse_json_reply",
]

log = logging.getLogger(__name__)

LLMErrorKind = Literal[
    "timeout", "rate_limited", "overloaded", "api_error", "connection", "bad_response", "cut_off"
]


class LLMError(KGAgentError):
    """A model call failed; ``kind`` says how, so callers can degrade to the offline path.

    ``status_code`` is the HTTP status when the API answered with one (429, 529, 500...).
    """

    def __init__(self, kind: LLMErrorKind, message: str, *, status_code: int | None = None) -> None:
        self.kind: LLMErrorKind = kind
        self.status_code = status_code
        super().__init__(f"LLM {kind}: {message}")


@dataclass(frozen=True)
class LLMReply:
    """The text of one model reply, with what it cost (tokens) and took (seconds), and
    why the model stopped (``stop_reason``: the API's own word; ``max_tokens`` means the
    reply was cut off)."""

    text: str
    model: str
    input_tokens: int
    output_tokens: int
    latency_s: float
    stop_reason: str | None = None

    @property
    def cut_off(self) -> bool:
        """Whether the model ran out of tokens before it finished."""
        return self.stop_reason in ("max_tokens", "length")


@runtime_checkable
class LLMClient(Protocol):
    """What the agent needs from a model: one prompt in, one text reply out.

    Implementations raise :class:`LLMError` (never SDK exceptions) on failure.
    """

    def complete(
        self,
        *,
        model: str,
        system: str,
        prompt: str,
        max_tokens: int = 1024,
        timeout: float | None = None,
    ) -> LLMReply: ...


# --------------------------------------------------------------------------- usage / cost

#: USD per million (input, output) tokens, matched by model-name prefix (longest wins).
#: List prices at the time of writing; an estimate for reporting, not a bill.
MODEL_PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    "claude-opus-4-5": (5.0, 25.0),
    "claude-opus-4-6": (5.0, 25.0),
    "claude-opus-4": (15.0, 75.0),
    "claude-3-opus": (15.0, 75.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-3-7-sonnet": (3.0, 15.0),
    "claude-3-5-sonnet": (3.0, 15.0),
    "claude-haiku-4": (1.0, 5.0),
    "claude-3-5-haiku": (0.8, 4.0),
    "claude-3-haiku": (0.25, 1.25),
}

#: Used for a model not in the table: Sonnet-class prices, a middle estimate that
#: neither hides the cost of a large model nor inflates that of a small one much.
DEFAULT_PRICE_PER_MTOK: tuple[float, float] = (3.0, 15.0)


def _price_for(model: str) -> tuple[float, float]:
    best = ""
    for prefix in MODEL_PRICES_PER_MTOK:
        if model.startswith(prefix) and len(prefix) > len(best):
            best = prefix
    return MODEL_PRICES_PER_MTOK[best] if best else DEFAULT_PRICE_PER_MTOK


class UsageMeter:
    """Running totals of model calls, so a run can report tokens and an estimated cost.

    Thread-safe; attach one to a client (``AnthropicClient(meter=...)`` or
    ``client.meter = ...``) or call :meth:`record` yourself.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.calls = 0
        self.failures = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.cost_usd = 0.0
        self.latency_s = 0.0

    def record(self, reply: LLMReply) -> None:
        """Add one successful call."""
        price_in, price_out = _price_for(reply.model)
        cost = (reply.input_tokens * price_in + reply.output_tokens * price_out) / 1_000_000
        with self._lock:
            self.calls += 1
            self.input_tokens += reply.input_tokens
            self.output_tokens += reply.output_tokens
            self.cost_usd += cost
            self.latency_s += reply.latency_s

    def record_failure(self) -> None:
        """Count one call that raised :class:`LLMError`."""
        with self._lock:
            self.failures += 1

    def merge(self, other: UsageMeter | None) -> None:
        """Add ``other``'s totals (a step's own meter into the query's)."""
        if other is None or other is self:
            return
        with other._lock:
            calls, failures = other.calls, other.failures
            tokens = (other.input_tokens, other.output_tokens)
            cost, latency = other.cost_usd, other.latency_s
        with self._lock:
            self.calls += calls
            self.failures += failures
            self.input_tokens += tokens[0]
            self.output_tokens += tokens[1]
            self.cost_usd += cost
            self.latency_s += latency

    def as_dict(self) -> dict[str, float | int]:
        """A snapshot for logs and reports."""
        with self._lock:
            return {
                "calls": self.calls,
                "failures": self.failures,
                "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens,
                "cost_usd": round(self.cost_usd, 6),
                "latency_s": round(self.latency_s, 3),
            }


# --------------------------------------------------------------------------- SDK client


def metered_complete(
    client: LLMClient,
    meter: UsageMeter | None,
    *,
    model: str,
    system: str,
    prompt: str,
    max_tokens: int = 1024,
    timeout: float | None = None,
) -> LLMReply:
    """``client.complete`` with the outcome counted on ``meter``: every feature's call
    records its tokens or its failure the same way. Raises what ``complete`` raises."""
    try:
        reply = client.complete(
            model=model, system=system, prompt=prompt, max_tokens=max_tokens, timeout=timeout
        )
    except LLMError:
        if meter is not None:
            meter.record_failure()
        raise
    if meter is not None:
        meter.record(reply)
    return reply


def metered_stream(
    client: LLMClient,
    meter: UsageMeter | None,
    on_text: Callable[[str], None],
    *,
    model: str,
    system: str,
    prompt: str,
    max_tokens: int = 1024,
    timeout: float | None = None,
) -> LLMReply:
    """:func:`metered_complete`, with the reply's text handed to ``on_text`` as it is
    written when the client can stream (``stream()``); at once, whole, otherwise."""
    stream = getattr(client, "stream", None)
    if not callable(stream):
        reply = metered_complete(
            client,
            meter,
            model=model,
            system=system,
            prompt=prompt,
            max_tokens=max_tokens,
            timeout=timeout,
        )
        on_text(reply.text)
        return reply
    try:
        streamed: LLMReply = stream(
            model=model,
            system=system,
            prompt=prompt,
            max_tokens=max_tokens,
            timeout=timeout,
            on_text=on_text,
        )
    except LLMError:
        if meter is not None:
            meter.record_failure()
        raise
    if meter is not None:
        meter.record(streamed)
    return streamed


def _env(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None


class AnthropicClient:
    """:class:`LLMClient` over the real ``anthropic`` SDK.

    Credentials: ``api_key`` (else ``ANTHROPIC_API_KEY``), or ``auth_token`` sent as
    ``Authorization: Bearer`` (else ``ANTHROPIC_AUTH_TOKEN``). ``max_retries`` defaults
    to 0 because the caller has an offline fallback: a fast failure beats a slow retry.
    The SDK client is built on first use and reused, so its connection pool is shared.
    """

    def __init__(
        self,
        api_key: str | None = None,
        *,
        auth_token: str | None = None,
        base_url: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 0,
        meter: UsageMeter | None = None,
    ) -> None:
        if api_key is None and auth_token is None:
            api_key = _env("ANTHROPIC_API_KEY")
            if api_key is None:
                auth_token = _env("ANTHROPIC_AUTH_TOKEN")
        if not api_key and not auth_token:
            raise InvalidArgumentError(
                "no Anthropic credentials: pass an API key or set ANTHROPIC_API_KEY"
            )
        if timeout <= 0:
            raise InvalidArgumentError(f"timeout must be positive, got {timeout}")
        if max_retries < 0:
            raise InvalidArgumentError(f"max_retries must be >= 0, got {max_retries}")
        self._api_key = api_key or None
        self._auth_token = auth_token or None
        self.base_url = base_url or _env("ANTHROPIC_BASE_URL")
        self.timeout = timeout
        self.max_retries = max_retries
        self.meter = meter
        self._sdk: anthropic.Anthropic | None = None
        self._sdk_lock = threading.Lock()

    def __repr__(self) -> str:  # never show the key
        return f"AnthropicClient(base_url={self.base_url!r}, timeout={self.timeout})"

    def _client(self) -> anthropic.Anthropic:
        with self._sdk_lock:
            if self._sdk is None:
                import anthropic  # deferred: offline runs never pay for the import

                self._sdk = anthropic.Anthropic(
                    api_key=self._api_key,
                    auth_token=self._auth_token,
                    base_url=self.base_url,
                    timeout=self.timeout,
                    max_retries=self.max_retries,
                )
            return self._sdk

    def prepare(self) -> None:
        """Import the SDK and build its client now: the import costs ~2.5 s on a small
        CPU, which a server pays at start-up rather than inside its first request's
        time limit. Sends nothing."""
        self._client()

    @property
    def prepared(self) -> bool:
        return self._sdk is not None

    def close(self) -> None:
        """Close the SDK's HTTP connections (safe to call twice, or before any call)."""
        with self._sdk_lock:
            sdk, self._sdk = self._sdk, None
        if sdk is not None:
            sdk.close()

    def __enter__(self) -> AnthropicClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def complete(
        self,
        *,
        model: str,
        system: str,
        prompt: str,
        max_tokens: int = 1024,
        timeout: float | None = None,
    ) -> LLMReply:
        """Send one user turn; return the reply's text or raise :class:`LLMError`."""
        try:
            reply = self._complete(
                model=model, system=system, prompt=prompt, max_tokens=max_tokens, timeout=timeout
            )
        except LLMError:
            if self.meter is not None:
                self.meter.record_failure()
            raise
        if self.meter is not None:
            self.meter.record(reply)
        return reply

    def stream(
        self,
        *,
        model: str,
        system: str,
        prompt: str,
        on_text: Callable[[str], None],
        max_tokens: int = 1024,
        timeout: float | None = None,
    ) -> LLMReply:
        """:meth:`complete`, streamed: ``on_text`` gets each piece of text as the model
        writes it (the SDK's ``messages.stream``); the whole reply is returned."""
        try:
            reply = self._stream(
                model=model,
                system=system,
                prompt=prompt,
                on_text=on_text,
                max_tokens=max_tokens,
                timeout=timeout,
            )
        except LLMError:
            if self.meter is not None:
                self.meter.record_failure()
            raise
        if self.meter is not None:
            self.meter.record(reply)
        return reply

    def _stream(
        self,
        *,
        model: str,
        system: str,
        prompt: str,
        on_text: Callable[[str], None],
        max_tokens: int,
        timeout: float | None,
    ) -> LLMReply:
        import anthropic
        import httpx2

        optional: dict[str, Any] = {"system": system} if system else {}
        started = time.perf_counter()
        try:
            with self._client().messages.stream(
                model=model,
                max_tokens=max_tokens,
                messages=[{"role": "user", "content": prompt}],
                timeout=timeout if timeout is not None else self.timeout,
                **optional,
            ) as events:
                for piece in events.text_stream:
                    on_text(piece)
                message = events.get_final_message()
        except anthropic.AnthropicError as exc:
            raise _map_sdk_error(exc) from exc
        except ValueError as exc:
            raise LLMError("bad_response", f"unreadable stream: {exc}") from exc
        except (OSError, httpx2.HTTPError) as exc:
            # the SDK wraps errors of the request, not those of reading the stream after
            raise LLMError("connection", f"the stream broke: {exc}") from exc
        return self._reply(message, model, time.perf_counter() - started)

    def _complete(
        self, *, model: str, system: str, prompt: str, max_tokens: int, timeout: float | None
    ) -> LLMReply:
        import anthropic

        # An empty system prompt is left out rather than sent as "".
        optional: dict[str, Any] = {"system": system} if system else {}
        started = time.perf_counter()
        try:
            message = self._client().messages.create(
                model=model,
                max_tokens=max_tokens,
                messages=[{"role": "user", "content": prompt}],
                timeout=timeout if timeout is not None else self.timeout,
                **optional,
            )
        except anthropic.AnthropicError as exc:
            raise _map_sdk_error(exc) from exc
        except ValueError as exc:  # a 200 whose body is not JSON, or not a Message
            raise LLMError("bad_response", f"unreadable response body: {exc}") from exc
        return self._reply(message, model, time.perf_counter() - started)

    @staticmethod
    def _reply(message: Any, model: str, latency: float) -> LLMReply:
        content = getattr(message, "content", None)
        if not isinstance(content, list):
            raise LLMError("bad_response", f"reply has no content list ({type(message).__name__})")
        text = "".join(_block_text(block) for block in content)
        if not text.strip():
            kinds = ", ".join(sorted({str(getattr(b, "type", "?")) for b in content})) or "none"
            raise LLMError("bad_response", f"reply has no text (content blocks: {kinds})")
        usage = getattr(message, "usage", None)
        return LLMReply(
            text=text,
            model=str(getattr(message, "model", None) or model),
            input_tokens=int(getattr(usage, "input_tokens", 0) or 0),
            output_tokens=int(getattr(usage, "output_tokens", 0) or 0),
            latency_s=latency,
            stop_reason=getattr(message, "stop_reason", None),
        )


def _block_text(block: object) -> str:
    """A text block's text; "" for tool_use, thinking and other block types."""
    text = getattr(block, "text", None)
    return text if getattr(block, "type", None) == "text" and isinstance(text, str) else ""


def _map_sdk_error(exc: Exception) -> LLMError:
    """Turn an ``anthropic`` exception into the one kind the caller branches on."""
    import anthropic

    if isinstance(exc, anthropic.APITimeoutError):  # before APIConnectionError: a subclass
        return LLMError("timeout", "request timed out")
    if isinstance(exc, anthropic.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        detail = f": {cause}" if cause else ""
        return LLMError("connection", f"could not reach the API{detail}")
    if isinstance(exc, anthropic.APIStatusError):
        status = exc.status_code
        message = _status_message(exc)
        overloaded_cls = getattr(anthropic, "OverloadedError", None)
        if isinstance(exc, anthropic.RateLimitError) or status == 429:
            retry_after = exc.response.headers.get("retry-after")
            hint = f" (retry-after {retry_after}s)" if retry_after else ""
            return LLMError("rate_limited", f"{message}{hint}", status_code=status)
        if status == 529 or (overloaded_cls is not None and isinstance(exc, overloaded_cls)):
            return LLMError("overloaded", message, status_code=status)
        return LLMError("api_error", message, status_code=status)
    if isinstance(exc, anthropic.APIResponseValidationError):
        return LLMError("bad_response", str(exc), status_code=exc.status_code)
    return LLMError("api_error", f"{type(exc).__name__}: {exc}")


def _status_message(exc: anthropic.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict):
            etype, emsg = error.get("type"), error.get("message")
            if etype or emsg:
                return f"HTTP {exc.status_code} {etype or ''}: {emsg or ''}".strip()
    return f"HTTP {exc.status_code}"


def client_from_settings(
    api_key: str | None, base_url: str | None = None
) -> AnthropicClient | None:
    """A client when a key is given (or ``ANTHROPIC_API_KEY``/``ANTHROPIC_AUTH_TOKEN`` is
    set), else ``None``: the caller then runs its offline path and sends nothing out.

    ``base_url`` (else ``ANTHROPIC_BASE_URL``) points the client at another
    Messages-API endpoint: a local model served behind an Anthropic-compatible API,
    so that no question leaves the machine. Such a server may ignore the key, but the
    SDK needs one to be set.
    """
    if api_key is not None and api_key.strip():
        return AnthropicClient(api_key.strip(), base_url=base_url)
    env_key = _env("ANTHROPIC_API_KEY")
    if env_key is not None:
        return AnthropicClient(env_key, base_url=base_url)
    env_token = _env("ANTHROPIC_AUTH_TOKEN")
    if env_token is not None:
        return AnthropicClient(auth_token=env_token, base_url=base_url)
    return None


# --------------------------------------------------------------------------- JSON replies

_OPENER = re.compile(r"[\[{]")
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\r?\n?(.*?)```", re.DOTALL)


def parse_json_reply(text: str) -> Any:
    """The first JSON object or array in a model reply.

    Models wrap JSON in fences (```json ... ```) or put a sentence before it; both
    are tolerated. Raises ``LLMError(kind="bad_response")`` when nothing parses, so
    the caller's offline fallback handles it like any other model failure.
    """
    stripped = text.strip()
    candidates: list[str] = [stripped]
    candidates += [m.group(2).strip() for m in _FENCE.finditer(text)]
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, (dict, list)):
            return value
    # Scan for embedded JSON; keep the longest value, so a stray "[1]" in the prose
    # before the payload does not win. Skipping past each value keeps this linear.
    decoder = json.JSONDecoder()
    best: Any = None
    best_len = 0
    pos = 0
    while True:
        match = _OPENER.search(text, pos)
        if match is None:
            break
        try:
            value, end = decoder.raw_decode(text, match.start())
        except ValueError:
            pos = match.start() + 1
            continue
        if isinstance(value, (dict, list)) and end - match.start() > best_len:
            best, best_len = value, end - match.start()
        pos = end
    if best_len:
        return best
    preview = stripped[:80] + ("..." if len(stripped) > 80 else "")
    raise LLMError("bad_response", f"no JSON object or array in reply: {preview!r}")

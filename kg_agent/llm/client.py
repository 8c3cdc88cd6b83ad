"""One narrow seam between the agent and a model: ``LLMClient.complete``.

Every LLM feature has two paths: an SDK client (``AnthropicClient`` for Anthropic's
Messages API, ``OpenAIClient`` for the chat-completions API that local model servers
speak), used when one is configured, and
a deterministic offline path owned by the caller. Anything that goes wrong on the SDK
path (timeout, 429, 529, 5xx, connection refused, a reply with no usable text, JSON that
does not parse) surfaces here as one exception type, :class:`LLMError`, whose ``kind``
lets the caller log a precise warning and fall back to its offline path instead of
failing the query. :class:`SDKClient` retries once where a retry can help
(:func:`retry_pause`).

Data notice: when a client is configured (``--api-key``, ``ANTHROPIC_API_KEY``,
``OPENAI_API_KEY`` or an OpenAI-compatible ``--llm-base-url``), the question and the
evidence text the agent retrieved from the graph are sent to that server. With none,
nothing leaves the machine.
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
from typing import Any, ClassVar, Literal, Protocol, TypeVar, runtime_checkable

from kg_agent.exceptions import InvalidArgumentError, KGAgentError

#: The fast model every small LLM step uses (query rewrites, plans, relevance, bridge
#: names): one name, so a model change is one edit.
FAST_MODEL = "claude-haiku-4-5-20251001"

__all__ = [
    "DEFAULT_PRICE_PER_MTOK",
    "LLM_APIS",
    "MODEL_PRICES_PER_MTOK",
    "LLMClient",
    "LLMError",
    "LLMErrorKind",
    "LLMReply",
    "SDKClient",
    "UsageMeter",
    "client_from_settings",
    "parse_json_reply",
]

log = logging.getLogger(__name__)

_Client = TypeVar("_Client", bound="SDKClient")

LLMErrorKind = Literal[
    "timeout", "rate_limited", "overloaded", "api_error", "connection", "bad_response", "cut_off"
]


class LLMError(KGAgentError):
    """A model call failed; ``kind`` says how, so callers can degrade to the offline path.

    ``status_code`` is the HTTP status when the API answered with one (429, 529, 500...).
    """

    def __init__(
        self,
        kind: LLMErrorKind,
        message: str,
        *,
        status_code: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.kind: LLMErrorKind = kind
        self.status_code = status_code
        self.retry_after = retry_after
        #: which API and server failed (set by the client that raised): warnings name them
        self.api: str | None = None
        self.server: str | None = None
        super().__init__(f"LLM {kind}: {message}")

    @property
    def source(self) -> str:
        """``"the anthropic API at https://..."``, or ``"the model"`` when unknown."""
        if self.api is None:
            return "the model"
        return f"the {self.api} API at {self.server}" if self.server else f"the {self.api} API"

    def located(self, api: str, server: str | None) -> LLMError:
        """Name the API and server this error came from (kept when already set)."""
        if self.api is None:
            self.api, self.server = api, server
        return self

    def located_at(self, client: object) -> LLMError:
        """Name ``client``'s API and server (for a reply its caller refused: JSON that
        does not parse, a missing line), when the client has them."""
        api = getattr(client, "api", None)
        if isinstance(api, str) and api:
            server = getattr(client, "server", None)
            self.located(api, server if isinstance(server, str) else None)
        return self

    @property
    def brief(self) -> str:
        """Kind and source, for one warning line: ``overloaded from the openai API at
        http://127.0.0.1:11434/v1`` (the kind alone when the source is unknown)."""
        return self.kind if self.api is None else f"{self.kind} from {self.source}"


@dataclass(frozen=True)
class LLMReply:
    """The text of one model reply, with what it cost (tokens) and took (seconds), and
    why the model stopped (``stop_reason``: the API's own word; ``max_tokens`` or
    ``length`` means the reply was cut off)."""

    text: str
    model: str
    input_tokens: int
    output_tokens: int
    latency_s: float
    stop_reason: str | None = None
    #: a model with no list price (one the user serves): it costs nothing in the meter
    free: bool = False
    #: read from the response cache (no tokens spent)
    cached: bool = False

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
    # OpenAI's own models, for the chat-completions path at api.openai.com
    "gpt-5": (1.25, 10.0),
    "gpt-5-mini": (0.25, 2.0),
    "gpt-5-nano": (0.05, 0.4),
    "gpt-4.1": (2.0, 8.0),
    "gpt-4.1-mini": (0.4, 1.6),
    "gpt-4.1-nano": (0.1, 0.4),
    "gpt-4o": (2.5, 10.0),
    "gpt-4o-mini": (0.15, 0.6),
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
        self.cached = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.cost_usd = 0.0
        self.latency_s = 0.0

    def record(self, reply: LLMReply) -> None:
        """Add one successful call (a cached reply counts apart and costs nothing)."""
        if reply.cached:
            with self._lock:
                self.cached += 1
            return
        price_in, price_out = (0.0, 0.0) if reply.free else _price_for(reply.model)
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
            calls, failures, cached = other.calls, other.failures, other.cached
            tokens = (other.input_tokens, other.output_tokens)
            cost, latency = other.cost_usd, other.latency_s
        with self._lock:
            self.calls += calls
            self.failures += failures
            self.cached += cached
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
                "cached": self.cached,
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


def env_value(name: str) -> str | None:
    """An environment variable's value, ``None`` when unset or blank."""
    value = os.environ.get(name, "").strip()
    return value or None


#: How long a retry waits for a server that said when to come back (``retry-after``):
#: past this, a retry would spend the query's time budget, so the caller falls back.
MAX_RETRY_WAIT_S = 2.0


def retry_pause(exc: LLMError) -> float | None:
    """Seconds to wait before the one retry, or ``None`` where a retry cannot help.

    Retried: 429 with a short ``retry-after``, 5xx and 529 (a busy or restarting
    server), a dropped or refused connection (a server restarting). Not retried: a
    timeout (the time is already spent), 4xx (the same request fails again), a reply
    cut off or malformed (the same prompt gets the same reply)."""
    if exc.kind == "rate_limited":
        wait = exc.retry_after if exc.retry_after is not None else 1.0
        return wait if wait <= MAX_RETRY_WAIT_S else None
    if exc.kind == "overloaded" or (
        exc.kind == "api_error" and exc.status_code is not None and exc.status_code >= 500
    ):
        return 0.5
    if exc.kind == "connection":
        return 0.25
    return None


def has_list_price(model: str) -> bool:
    """Whether ``model`` is in :data:`MODEL_PRICES_PER_MTOK` (by prefix)."""
    return any(model.startswith(prefix) for prefix in MODEL_PRICES_PER_MTOK)


class SDKClient:
    """What both SDK clients share: the meter, one retry where it can help, the
    error's API and server, and the SDK client's life cycle.

    Subclasses set :attr:`api` and :attr:`default_server`, and implement ``_make_sdk``,
    ``_complete`` and ``_stream``, raising :class:`LLMError` only.
    """

    api: ClassVar[str] = ""
    default_server: ClassVar[str] = ""

    def __init__(
        self,
        *,
        base_url: str | None,
        timeout: float,
        retries: int,
        meter: UsageMeter | None,
    ) -> None:
        if timeout <= 0:
            raise InvalidArgumentError(f"timeout must be positive, got {timeout}")
        if retries < 0:
            raise InvalidArgumentError(f"retries must be >= 0, got {retries}")
        self.base_url = base_url
        self.timeout = timeout
        self.retries = retries
        self.meter = meter
        self._sdk: Any = None
        self._sdk_lock = threading.Lock()

    def __repr__(self) -> str:  # never show the key
        return f"{type(self).__name__}(base_url={self.base_url!r}, timeout={self.timeout})"

    @property
    def server(self) -> str:
        """The server calls go to, for warnings."""
        return self.base_url or self.default_server

    def _make_sdk(self) -> Any:
        raise NotImplementedError

    def _client(self) -> Any:
        with self._sdk_lock:
            if self._sdk is None:
                self._sdk = self._make_sdk()
            return self._sdk

    def prepare(self) -> None:
        """Import the SDK and build its client now: the import costs seconds on a small
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

    def __enter__(self: _Client) -> _Client:
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
        return self._attempt(
            lambda: self._complete(
                model=model, system=system, prompt=prompt, max_tokens=max_tokens, timeout=timeout
            ),
            lambda: True,
        )

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
        writes it; the whole reply is returned. A failure after the first piece is not
        retried (the reader has seen part of a reply)."""
        said: list[bool] = []

        def hand_over(piece: str) -> None:
            said.append(True)
            on_text(piece)

        return self._attempt(
            lambda: self._stream(
                model=model,
                system=system,
                prompt=prompt,
                on_text=hand_over,
                max_tokens=max_tokens,
                timeout=timeout,
            ),
            lambda: not said,
        )

    def _attempt(self, call: Callable[[], LLMReply], retry_allowed: Callable[[], bool]) -> LLMReply:
        for attempt in range(self.retries + 1):
            try:
                reply = call()
            except LLMError as exc:
                exc.located(self.api, self.server)
                pause = retry_pause(exc)
                if attempt < self.retries and pause is not None and retry_allowed():
                    log.info("%s; retrying once in %.2f s", exc, pause)
                    time.sleep(pause)
                    continue
                if self.meter is not None:
                    self.meter.record_failure()
                raise
            reply = self._priced(reply)
            if self.meter is not None:
                self.meter.record(reply)
            return reply
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _priced(self, reply: LLMReply) -> LLMReply:
        """The reply as the meter should price it (a subclass marks free models)."""
        return reply

    def _complete(
        self, *, model: str, system: str, prompt: str, max_tokens: int, timeout: float | None
    ) -> LLMReply:
        raise NotImplementedError

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
        raise NotImplementedError


#: The APIs a client can speak: Anthropic's Messages API, and OpenAI's chat completions
#: (what Ollama, vLLM, llama.cpp's server, LM Studio, TGI and LiteLLM serve).
LLM_APIS = ("anthropic", "openai")


def check_api(api: str) -> str:
    if api not in LLM_APIS:
        raise InvalidArgumentError(f"llm_api must be one of {', '.join(LLM_APIS)}, not {api!r}")
    return api


def client_from_settings(
    api_key: str | None,
    base_url: str | None = None,
    *,
    api: str = "anthropic",
    timeout: float = 30.0,
    cache: str | os.PathLike[str] | None = None,
) -> LLMClient | None:
    """A client when one can be made, else ``None``: the caller then runs its offline
    path and sends nothing out.

    ``api="anthropic"``: with a key (else ``ANTHROPIC_API_KEY`` or
    ``ANTHROPIC_AUTH_TOKEN``), at ``base_url`` (else ``ANTHROPIC_BASE_URL``, else
    Anthropic's). ``api="openai"``: with a key (else ``OPENAI_API_KEY``) or a
    ``base_url`` (else ``OPENAI_BASE_URL``) alone, since a server on the user's machine
    needs no key. ``cache``: a file answering repeated prompts (:mod:`kg_agent.llm.cache`).
    """
    check_api(api)
    key = api_key.strip() if api_key is not None and api_key.strip() else None
    client: SDKClient | None
    if api == "openai":
        from kg_agent.llm.openai_client import OpenAIClient

        url = base_url or env_value("OPENAI_BASE_URL")
        key = key or env_value("OPENAI_API_KEY")
        client = OpenAIClient(key, base_url=url, timeout=timeout) if key or url else None
    else:
        from kg_agent.llm.anthropic_client import AnthropicClient

        if key is not None:
            client = AnthropicClient(key, base_url=base_url, timeout=timeout)
        elif (env_key := env_value("ANTHROPIC_API_KEY")) is not None:
            client = AnthropicClient(env_key, base_url=base_url, timeout=timeout)
        elif (env_token := env_value("ANTHROPIC_AUTH_TOKEN")) is not None:
            client = AnthropicClient(auth_token=env_token, base_url=base_url, timeout=timeout)
        else:
            client = None
    if client is None or cache is None:
        return client
    from kg_agent.llm.cache import CachedClient

    return CachedClient(client, cache)


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


def __getattr__(name: str) -> Any:
    # AnthropicClient lived here before the OpenAI path: old imports keep working
    if name == "AnthropicClient":
        from kg_agent.llm.anthropic_client import AnthropicClient

        return AnthropicClient
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

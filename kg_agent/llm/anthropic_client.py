""":class:`AnthropicClient`: the :class:`~kg_agent.llm.client.LLMClient` seam over the
real ``anthropic`` SDK (Anthropic's Messages API, or any server that speaks it).

Data notice: with a key configured, the question and the evidence text are sent to
Anthropic (or to ``ANTHROPIC_BASE_URL``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kg_agent.exceptions import InvalidArgumentError
from kg_agent.llm.client import LLMError, LLMReply, SDKClient, UsageMeter, env_value

if TYPE_CHECKING:
    import anthropic

__all__ = ["AnthropicClient"]


class AnthropicClient(SDKClient):
    """:class:`~kg_agent.llm.client.LLMClient` over the real ``anthropic`` SDK.

    Credentials: ``api_key`` (else ``ANTHROPIC_API_KEY``), or ``auth_token`` sent as
    ``Authorization: Bearer`` (else ``ANTHROPIC_AUTH_TOKEN``). The SDK's own retries
    stay off (``max_retries=0``): the one retry that can help is
    :class:`~kg_agent.llm.client.SDKClient`'s, and the caller has an offline fallback.
    The SDK client is built on first use and reused, so its connection pool is shared.
    """

    api = "anthropic"
    default_server = "https://api.anthropic.com"

    def __init__(
        self,
        api_key: str | None = None,
        *,
        auth_token: str | None = None,
        base_url: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 0,
        retries: int = 1,
        meter: UsageMeter | None = None,
    ) -> None:
        if api_key is None and auth_token is None:
            api_key = env_value("ANTHROPIC_API_KEY")
            if api_key is None:
                auth_token = env_value("ANTHROPIC_AUTH_TOKEN")
        if not api_key and not auth_token:
            raise InvalidArgumentError(
                "no Anthropic credentials: pass an API key or set ANTHROPIC_API_KEY"
            )
        if max_retries < 0:
            raise InvalidArgumentError(f"max_retries must be >= 0, got {max_retries}")
        super().__init__(
            base_url=base_url or env_value("ANTHROPIC_BASE_URL"),
            timeout=timeout,
            retries=retries,
            meter=meter,
        )
        self._api_key = api_key or None
        self._auth_token = auth_token or None
        self.max_retries = max_retries

    def _make_sdk(self) -> anthropic.Anthropic:
        import anthropic  # deferred: offline runs never pay for the import

        return anthropic.Anthropic(
            api_key=self._api_key,
            auth_token=self._auth_token,
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=self.max_retries,
        )

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


def retry_after_seconds(headers: Any) -> float | None:
    """The ``retry-after`` header in seconds, when it is a number."""
    try:
        value = headers.get("retry-after")
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


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
            retry_after = retry_after_seconds(exc.response.headers)
            hint = f" (retry-after {retry_after:g}s)" if retry_after is not None else ""
            return LLMError(
                "rate_limited", f"{message}{hint}", status_code=status, retry_after=retry_after
            )
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

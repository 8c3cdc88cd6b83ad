""":class:`OpenAIClient`: the :class:`~kg_agent.llm.client.LLMClient` seam over the
official ``openai`` SDK's chat completions, the API the servers people run for local
models speak (Ollama, vLLM, llama.cpp's server, LM Studio, text-generation-inference,
LiteLLM), as well as OpenAI's own.

Install with ``pip install 'kg-agent[openai]'``. A server on the user's machine needs no
key: ``base_url`` alone is enough (the SDK is handed a placeholder, which such servers
ignore). Models without a list price in
:data:`~kg_agent.llm.client.MODEL_PRICES_PER_MTOK` (those a user serves) cost nothing in
the meter; tokens are counted all the same. Data notice: the question and the evidence
text go to ``base_url`` (else ``OPENAI_BASE_URL``, else OpenAI's API).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kg_agent.exceptions import InvalidArgumentError
from kg_agent.llm.anthropic_client import retry_after_seconds
from kg_agent.llm.client import (
    LLMError,
    LLMReply,
    SDKClient,
    UsageMeter,
    env_value,
    has_list_price,
)

if TYPE_CHECKING:
    import openai

__all__ = ["OpenAIClient"]

#: Sent as the key to a server that needs none (the SDK refuses to start without one).
NO_KEY = "no-key"


class OpenAIClient(SDKClient):
    """:class:`~kg_agent.llm.client.LLMClient` over ``openai``'s chat completions.

    The system prompt goes as the first message (role ``system``) and the prompt as
    one user turn; ``max_tokens`` is sent as ``max_tokens``, which every local server
    reads. ``finish_reason == "length"`` is a cut-off reply (``LLMReply.cut_off``).
    """

    api = "openai"
    default_server = "https://api.openai.com/v1"

    def __init__(
        self,
        api_key: str | None = None,
        *,
        base_url: str | None = None,
        timeout: float = 30.0,
        retries: int = 1,
        meter: UsageMeter | None = None,
    ) -> None:
        api_key = api_key or env_value("OPENAI_API_KEY")
        base_url = base_url or env_value("OPENAI_BASE_URL")
        if not api_key and not base_url:
            raise InvalidArgumentError(
                "no OpenAI-compatible server: pass a key (or set OPENAI_API_KEY), or the "
                "base URL of your server (--llm-base-url, e.g. http://127.0.0.1:11434/v1)"
            )
        super().__init__(base_url=base_url, timeout=timeout, retries=retries, meter=meter)
        self._api_key = api_key or NO_KEY

    def _make_sdk(self) -> openai.OpenAI:
        try:
            import openai  # deferred: offline runs never pay for the import
        except ImportError as exc:
            raise InvalidArgumentError(
                "the openai package is not installed: pip install 'kg-agent[openai]'"
            ) from exc
        return openai.OpenAI(
            api_key=self._api_key, base_url=self.base_url, timeout=self.timeout, max_retries=0
        )

    def _priced(self, reply: LLMReply) -> LLMReply:
        # Ollama's llama3, vLLM's Qwen...: models the user serves have no list price; a
        # guessed one would let max_cost_usd stop their steps for nothing
        return reply if has_list_price(reply.model) else dataclasses.replace(reply, free=True)

    @staticmethod
    def _messages(system: str, prompt: str) -> list[dict[str, str]]:
        turns = [{"role": "system", "content": system}] if system else []
        return [*turns, {"role": "user", "content": prompt}]

    def _complete(
        self, *, model: str, system: str, prompt: str, max_tokens: int, timeout: float | None
    ) -> LLMReply:
        import openai

        sdk = self._client()
        started = time.perf_counter()
        try:
            completion = sdk.chat.completions.create(
                model=model,
                messages=self._messages(system, prompt),
                max_tokens=max_tokens,
                timeout=timeout if timeout is not None else self.timeout,
            )
        except openai.OpenAIError as exc:
            raise _map_sdk_error(exc) from exc
        except ValueError as exc:  # a 200 whose body is not JSON
            raise LLMError("bad_response", f"unreadable response body: {exc}") from exc
        choices = getattr(completion, "choices", None)
        if not isinstance(choices, list) or not choices:
            raise LLMError("bad_response", "reply has no choices")
        message = getattr(choices[0], "message", None)
        text = getattr(message, "content", None)
        usage = getattr(completion, "usage", None)
        return _reply(
            text if isinstance(text, str) else "",
            model=str(getattr(completion, "model", None) or model),
            usage=usage,
            finish=getattr(choices[0], "finish_reason", None),
            latency=time.perf_counter() - started,
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
        import httpx2
        import openai

        sdk = self._client()
        started = time.perf_counter()
        pieces: list[str] = []
        finish: str | None = None
        usage: Any = None
        served_model = model
        try:
            chunks = sdk.chat.completions.create(
                model=model,
                messages=self._messages(system, prompt),
                max_tokens=max_tokens,
                stream=True,
                # the usage arrives in a last chunk without choices
                stream_options={"include_usage": True},
                timeout=timeout if timeout is not None else self.timeout,
            )
            with chunks:
                for chunk in chunks:
                    served_model = getattr(chunk, "model", None) or served_model
                    usage = getattr(chunk, "usage", None) or usage
                    for choice in getattr(chunk, "choices", None) or []:
                        piece = getattr(getattr(choice, "delta", None), "content", None)
                        if isinstance(piece, str) and piece:
                            pieces.append(piece)
                            on_text(piece)
                        finish = getattr(choice, "finish_reason", None) or finish
        except openai.OpenAIError as exc:
            raise _map_sdk_error(exc) from exc
        except ValueError as exc:
            raise LLMError("bad_response", f"unreadable stream: {exc}") from exc
        except (OSError, httpx2.HTTPError) as exc:
            raise LLMError("connection", f"the stream broke: {exc}") from exc
        return _reply(
            "".join(pieces),
            model=str(served_model),
            usage=usage,
            finish=finish,
            latency=time.perf_counter() - started,
        )


def _reply(text: str, *, model: str, usage: Any, finish: Any, latency: float) -> LLMReply:
    if not text.strip():
        why = f" (finish_reason {finish})" if finish else ""
        raise LLMError("bad_response", f"reply has no text{why}")
    return LLMReply(
        text=text,
        model=model,
        input_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        output_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        latency_s=latency,
        stop_reason=str(finish) if finish else None,
    )


def _map_sdk_error(exc: Exception) -> LLMError:
    """Turn an ``openai`` exception into the one kind the caller branches on."""
    import openai

    if isinstance(exc, openai.APITimeoutError):  # before APIConnectionError: a subclass
        return LLMError("timeout", "request timed out")
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        detail = f": {cause}" if cause else ""
        return LLMError("connection", f"could not reach the server{detail}")
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        message = _status_message(exc)
        if status == 429:
            retry_after = retry_after_seconds(exc.response.headers)
            hint = f" (retry-after {retry_after:g}s)" if retry_after is not None else ""
            return LLMError(
                "rate_limited", f"{message}{hint}", status_code=status, retry_after=retry_after
            )
        if status in (503, 529):
            return LLMError("overloaded", message, status_code=status)
        return LLMError("api_error", message, status_code=status)
    if isinstance(exc, openai.APIResponseValidationError):
        return LLMError("bad_response", str(exc), status_code=exc.status_code)
    if isinstance(exc, openai.APIError):  # an error event inside a stream
        return LLMError("api_error", f"the server reported an error: {exc.message}")
    return LLMError("api_error", f"{type(exc).__name__}: {exc}")


def _status_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, str) and body.strip():  # Ollama and others: {"error": "model not found"}
        return f"HTTP {exc.status_code}: {body.strip()}"
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(body, dict) and error is None and "message" in body:
        error = body  # the SDK hands over the inner object for OpenAI-shaped bodies
    if isinstance(error, dict):
        etype, emsg = error.get("type"), error.get("message")
        if etype or emsg:
            return f"HTTP {exc.status_code} {etype or ''}: {emsg or ''}".strip()
    if isinstance(error, str):
        return f"HTTP {exc.status_code}: {error}"
    return f"HTTP {exc.status_code}"

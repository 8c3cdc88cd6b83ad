"""The model client an :class:`~kg_agent.config.AgentConfig` describes: one place that
reads ``llm_api``, ``llm_base_url``, ``llm_timeout`` and ``llm_cache``, for the agent,
``serve``, ``mcp`` and the eval alike."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kg_agent.exceptions import InvalidArgumentError
from kg_agent.llm.client import LLMClient, client_from_settings

if TYPE_CHECKING:
    from kg_agent.config import AgentConfig

__all__ = ["client_for"]


def client_for(config: AgentConfig, api_key: str | None = None) -> LLMClient | None:
    """The client for ``config`` with ``api_key`` (else the API's environment), or
    ``None`` when no server is configured: every step then runs offline.

    Refuses ``llm_api="openai"`` without a named model: a user's server has no default
    model, and a Claude name sent to it would fail every call."""
    if config.offline:
        return None
    client = client_from_settings(
        api_key,
        config.llm_base_url,
        api=config.llm_api,
        timeout=config.llm_timeout,
        cache=config.llm_cache,
    )
    if client is not None and config.llm_api == "openai" and not config.names_a_model:
        close = getattr(client, "close", None)
        if callable(close):
            close()
        raise InvalidArgumentError(
            "--llm-api openai needs the name of the model your server serves: "
            "--model (synthesis_model), e.g. llama3.1:8b"
        )
    return client

"""Model access for the agent: the SDK clients (Anthropic's Messages API, OpenAI's chat
completions) and their one failure contract.

See :mod:`kg_agent.llm.client` (and its data notice: with a client configured, the
question and evidence text are sent to its server).
"""

from __future__ import annotations

from kg_agent.llm.anthropic_client import AnthropicClient
from kg_agent.llm.cache import CachedClient
from kg_agent.llm.client import (
    DEFAULT_PRICE_PER_MTOK,
    FAST_MODEL,
    LLM_APIS,
    MODEL_PRICES_PER_MTOK,
    LLMClient,
    LLMError,
    LLMErrorKind,
    LLMReply,
    SDKClient,
    UsageMeter,
    client_from_settings,
    parse_json_reply,
)
from kg_agent.llm.openai_client import OpenAIClient

__all__ = [
    "DEFAULT_PRICE_PER_MTOK",
    "FAST_MODEL",
    "LLM_APIS",
    "MODEL_PRICES_PER_MTOK",
    "AnthropicClient",
    "CachedClient",
    "LLMClient",
    "LLMError",
    "LLMErrorKind",
    "LLMReply",
    "OpenAIClient",
    "SDKClient",
    "UsageMeter",
    "client_from_settings",
    "parse_json_reply",
]

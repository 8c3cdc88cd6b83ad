"""Model access for the agent: the Anthropic SDK path and its failure contract.

See :mod:`kg_agent.llm.client` (and its data notice: with a key configured, the
question and evidence text are sent to Anthropic).
"""

from __future__ import annotations

from kg_agent.llm.client import (
    DEFAULT_PRICE_PER_MTOK,
    MODEL_PRICES_PER_MTOK,
    AnthropicClient,
    LLMClient,
    LLMError,
    LLMErrorKind,
    LLMReply,
    UsageMeter,
    client_from_settings,
    parse_json_reply,
)

__all__ = [
    "DEFAULT_PRICE_PER_MTOK",
    "FAST_MODEL",
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

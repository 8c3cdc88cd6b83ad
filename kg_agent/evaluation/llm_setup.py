"""A model server for an eval run: its client, the configuration fields every mode takes
on, and what each mode spent (calls, tokens, cache hits), for the reports.

Without one every mode runs offline, which is what the published comparisons use; with
one (``kg-agent eval --llm-api ... --llm-cache FILE``) a rerun answers its repeated
prompts from the cache and costs no tokens.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kg_agent.config import AgentConfig
from kg_agent.llm.client import LLMClient, UsageMeter
from kg_agent.llm.settings import client_for

__all__ = ["LLMSetup"]


@dataclass
class LLMSetup:
    """``client`` does the model steps of every mode, configured by ``fields``
    (:class:`AgentConfig` fields: ``llm_api``, the models, the server, the cache)."""

    client: LLMClient
    fields: dict[str, Any]
    usage: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def configured(cls, fields: dict[str, Any], api_key: str | None = None) -> LLMSetup | None:
        """The set-up ``fields`` describe, or ``None`` when no server is configured
        (no key, no local server): the run is then offline."""
        client = client_for(AgentConfig(**fields), api_key)
        return None if client is None else cls(client, dict(fields))

    def meter_for(self, mode: str) -> UsageMeter:
        """A fresh meter on the client, counting ``mode``'s calls."""
        meter = UsageMeter()
        self.client.meter = meter  # type: ignore[attr-defined]
        return meter

    def report(self) -> dict[str, Any]:
        """What the reports record: the API and server, the models, the cache, and each
        mode's usage so far (then forgotten: the next dataset starts at zero)."""
        config = AgentConfig(**self.fields)
        out = {
            "api": config.llm_api,
            "server": getattr(self.client, "server", None),
            "synthesis_model": config.synthesis_model,
            "fast_model": config.fast_model_name,
            "cache": config.llm_cache,
            "usage": dict(self.usage),
        }
        self.usage = {}
        return out

    def close(self) -> None:
        close = getattr(self.client, "close", None)
        if callable(close):
            close()

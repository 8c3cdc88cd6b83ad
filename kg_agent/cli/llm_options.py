"""The model-server options every answering command shares (``ask``, ``serve``, ``mcp``,
``eval``): which API, where, which models, the key, and the response cache."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

import click

from kg_agent.llm.client import LLM_APIS

F = TypeVar("F", bound=Callable[..., Any])

#: The option names :func:`llm_options` adds, as the command function receives them.
LLM_OPTION_NAMES = (
    "llm_api",
    "synthesis_model",
    "fast_model",
    "api_key",
    "llm_base_url",
    "llm_cache",
)


def llm_options(*, model_flags: tuple[str, ...] = ("--llm-model", "--model")) -> Callable[[F], F]:
    """``--llm-api``, the model flags, ``--fast-model``, ``--api-key``, ``--llm-base-url``
    and ``--llm-cache``. ``model_flags``: ``eval`` leaves out ``--model``, which names its
    embedding model."""

    def decorate(fn: F) -> F:
        options = [
            click.option(
                "--llm-api",
                type=click.Choice(LLM_APIS),
                default="anthropic",
                show_default=True,
                envvar="KG_AGENT_LLM_API",
                show_envvar=True,
                help="API of the model server: anthropic (the Messages API) or openai (chat "
                "completions: Ollama, vLLM, llama.cpp's server, LM Studio, TGI, LiteLLM; "
                "needs pip install 'kg-agent[openai]').",
            ),
            click.option(
                *model_flags,
                "synthesis_model",
                help="Model that writes the answer (default Claude Sonnet; with --llm-api "
                "openai, required: the name your server serves, e.g. llama3.1:8b).",
            ),
            click.option(
                "--fast-model",
                help="Model of the small steps: plans, rephrasings, relevance, bridge names "
                "(default Claude Haiku; with --llm-api openai, the answer's model).",
            ),
            click.option(
                "--api-key",
                help="Key of the model server (default: ANTHROPIC_API_KEY, or OPENAI_API_KEY "
                "with --llm-api openai). Without a key or a local server, every step runs "
                "offline and nothing leaves the machine.",
            ),
            click.option(
                "--llm-base-url",
                help="Where the model server is (default: ANTHROPIC_BASE_URL, else "
                "Anthropic's; with --llm-api openai, OPENAI_BASE_URL, e.g. "
                "http://127.0.0.1:11434/v1 for Ollama: no key needed, and no question "
                "leaves the machine).",
            ),
            click.option(
                "--llm-cache",
                type=click.Path(dir_okay=False, path_type=str),
                envvar="KG_AGENT_LLM_CACHE",
                show_envvar=True,
                help="SQLite file of model replies: a repeated prompt (an eval rerun, the "
                "same question) is answered from it and costs no tokens.",
            ),
        ]
        for option in reversed(options):
            fn = option(fn)
        return fn

    return decorate


def llm_config(options: dict[str, Any]) -> dict[str, Any]:
    """The :class:`~kg_agent.config.AgentConfig` fields of the options (the key apart:
    it is a secret, never part of a configuration)."""
    fields: dict[str, Any] = {
        "llm_api": options["llm_api"],
        "fast_model": options["fast_model"],
        "llm_base_url": options["llm_base_url"],
        "llm_cache": options["llm_cache"],
    }
    if options["synthesis_model"]:
        fields["synthesis_model"] = options["synthesis_model"]
    return fields


def export_key(api: str, key: str | None) -> None:
    """Put ``key`` where the API's client reads it (worker processes get it from their
    environment, never from their command line)."""
    if key:
        os.environ["OPENAI_API_KEY" if api == "openai" else "ANTHROPIC_API_KEY"] = key

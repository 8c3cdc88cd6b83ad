"""Which embedded graph engine the store drives: Kùzu 0.11.3, or its maintained fork.

kg-agent calls no engine extension (the vector and text indexes live beside the graph,
PageRank is computed over the link table), so any engine that speaks Kùzu's Python API
and Cypher dialect can hold the graph. ``KG_AGENT_ENGINE`` picks it:

* ``kuzu`` (the default): Kùzu 0.11.3, the last release of Kùzu.
* ``real_ladybug``: Ladybug, Kùzu's maintained fork on PyPI (``pip install
  'kg-agent[ladybug]'``). Its files are not Kùzu 0.11.3's: a graph moves to it by a
  new load, and back the same way.

The choice is per process; graphs of the other engine are refused with one line when
opened (the engine's own message).
"""

from __future__ import annotations

import functools
import importlib
import os
from types import ModuleType

from kg_agent.exceptions import InvalidArgumentError

__all__ = ["ENGINES", "ENGINE_ENV", "engine", "engine_name"]

ENGINE_ENV = "KG_AGENT_ENGINE"
#: engine name → (module, what to install)
ENGINES = {
    "kuzu": ("kuzu", "pip install kuzu==0.11.3"),
    "real_ladybug": ("real_ladybug", "pip install 'kg-agent[ladybug]'"),
}


def engine_name() -> str:
    name = os.environ.get(ENGINE_ENV, "").strip() or "kuzu"
    if name not in ENGINES:
        raise InvalidArgumentError(
            f"{ENGINE_ENV}={name!r} names no engine kg-agent knows: one of "
            f"{', '.join(sorted(ENGINES))}"
        )
    return name


@functools.cache
def _load(name: str) -> ModuleType:
    module, how = ENGINES[name]
    try:
        return importlib.import_module(module)
    except ImportError:
        raise InvalidArgumentError(
            f"graph engine {name} is not installed ({how}), or unset {ENGINE_ENV}"
        ) from None


def engine() -> ModuleType:
    """The engine module (``Database``, ``Connection``) this process uses."""
    return _load(engine_name())

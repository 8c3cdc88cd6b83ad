"""Settings of the multi-step retrieval engine, in one validated, immutable object.

Every knob lives here, with its default, so a run is reproducible from one YAML
file (``configs/run_multistep.yaml``; an installed wheel carries a byte-identical
copy in ``kg_agent/data/configs/``). Bad values fail at load time with
:class:`InvalidArgumentError` naming the key, never halfway through a query.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import yaml

from kg_agent.exceptions import InvalidArgumentError, one_line

__all__ = ["DEFAULT_CONFIG_PATH", "MultiStepConfig", "load_config"]

#: The packaged default config (same bytes as ``configs/run_multistep.yaml``).
DEFAULT_CONFIG_PATH = (
    Path(__file__).resolve().parent.parent / "data" / "configs" / ("run_multistep.yaml")
)

#: A YAML file may hold the keys flat, or nested under this top-level key.
SECTION = "multistep"

# name -> (lowest, highest, lowest is inclusive); None means unbounded.
_RANGES: dict[str, tuple[float | None, float | None, bool]] = {
    "max_steps": (1, 20, True),
    "top_k_each_step": (1, 200, True),
    "top_k_final": (1, 200, True),
    "novelty_threshold": (0.0, 1.0, False),  # 0 would call everything a duplicate
    "stop_no_new_steps": (1, 20, True),
    "max_latency_s": (0.0, None, False),
    "max_cost_usd": (0.0, None, True),
    "bridge_quality_gate": (0.0, 1.0, True),
    "bridge_top_evidence": (1, 100, True),
    "bridge_max_queries": (0, 50, True),  # 0 turns the bridge round off
    "bridge_entity_boost": (0.0, 10.0, True),
    "bridge_linked_boost": (0.0, 10.0, True),
    "n_rewrites": (0, 20, True),  # 0 turns query rewriting off
    "rerank_top_k": (1, 200, True),
    "relevance_threshold": (0.0, 1.0, True),
}


@dataclass(frozen=True)
class MultiStepConfig:
    """Budgets and thresholds for one multi-step run (see the YAML for each key's why)."""

    # Step loop.
    max_steps: int = 3
    top_k_each_step: int = 10
    top_k_final: int = 10
    novelty_threshold: float = 0.8
    stop_no_new_steps: int = 1
    max_latency_s: float = 10.0
    max_cost_usd: float = 0.05
    # Bridge round: a second hop from entities named in the best first-round evidence.
    bridge_quality_gate: float = 0.55
    bridge_top_evidence: int = 5
    bridge_max_queries: int = 4
    bridge_entity_boost: float = 0.4
    bridge_linked_boost: float = 0.5
    # Relevance loop: rewrite, rerank, and drop evidence below the threshold.
    n_rewrites: int = 3
    rerank_top_k: int = 10
    relevance_threshold: float = 0.2

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.type in ("int", int):
                if isinstance(value, bool) or not isinstance(value, int):
                    raise InvalidArgumentError(
                        f"multistep.{f.name} must be an integer, got {value!r}"
                    )
            else:
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    raise InvalidArgumentError(
                        f"multistep.{f.name} must be a number, got {value!r}"
                    )
                if not math.isfinite(value):
                    raise InvalidArgumentError(f"multistep.{f.name} must be finite, got {value!r}")
                object.__setattr__(self, f.name, float(value))
            _check_range(f.name, getattr(self, f.name))

    # -- construction

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> MultiStepConfig:
        """A config from ``data`` (flat, or nested under ``multistep:``); missing keys default.

        Unknown keys are refused rather than ignored, so a typo cannot silently
        leave a default in force.
        """
        if not isinstance(data, Mapping):
            raise InvalidArgumentError(
                f"multistep config must be a mapping, got {type(data).__name__}"
            )
        if SECTION in data:
            extra = sorted(str(k) for k in data if k != SECTION)
            if extra:
                raise InvalidArgumentError(
                    f"multistep config: unknown top-level key {extra[0]!r} beside {SECTION!r}"
                )
            section = data[SECTION]
            if section is None:
                section = {}
            if not isinstance(section, Mapping):
                raise InvalidArgumentError(
                    f"multistep config: {SECTION!r} must be a mapping, got {type(section).__name__}"
                )
            data = section
        known = {f.name for f in fields(cls)}
        for key in data:
            if key not in known:
                raise InvalidArgumentError(f"multistep config: unknown key {key!r}")
        return cls(**{str(k): v for k, v in data.items()})

    @classmethod
    def from_yaml(cls, path: str | os.PathLike[str]) -> MultiStepConfig:
        """Read ``path``; an empty file gives the defaults."""
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidArgumentError(f"{p}: cannot read config: {one_line(exc)}") from None
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise InvalidArgumentError(f"{p}: invalid YAML: {one_line(exc)}") from None
        if data is None:
            return cls()
        try:
            return cls.from_mapping(data)
        except InvalidArgumentError as exc:
            raise InvalidArgumentError(f"{p}: {exc}") from None

    def with_overrides(self, **overrides: Any) -> MultiStepConfig:
        """A new config with ``overrides`` applied (validated; unknown names refused)."""
        known = {f.name for f in fields(self)}
        for key in overrides:
            if key not in known:
                raise InvalidArgumentError(f"multistep config: unknown key {key!r}")
        return dataclasses.replace(self, **overrides)

    def to_dict(self) -> dict[str, int | float]:
        """Plain values by key, for logs, reports and round-tripping through YAML."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _check_range(name: str, value: float) -> None:
    low, high, low_inclusive = _RANGES[name]
    if low is not None and (value < low or (value == low and not low_inclusive)):
        op = ">=" if low_inclusive else ">"
        raise InvalidArgumentError(f"multistep.{name} must be {op} {low:g}, got {value!r}")
    if high is not None and value > high:
        raise InvalidArgumentError(f"multistep.{name} must be <= {high:g}, got {value!r}")


def load_config(path: str | os.PathLike[str] | None = None, **overrides: Any) -> MultiStepConfig:
    """The config at ``path`` (else the packaged default), then ``overrides``.

    An override of ``None`` means "not given" and is skipped, so CLI options that
    default to ``None`` can be passed straight through.
    """
    config = MultiStepConfig.from_yaml(DEFAULT_CONFIG_PATH if path is None else path)
    given = {k: v for k, v in overrides.items() if v is not None}
    return config.with_overrides(**given) if given else config

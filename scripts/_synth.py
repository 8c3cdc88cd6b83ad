"""Synthetic dumps for the benchmarks and the tests: ``scripts/make_dump.py``'s generator,
loaded by its path (``scripts/`` is not a package), with one worker.

Used by ``scripts/bench_scale.py`` and ``scripts/bench_embed_stage.py``; the tests reach it
through ``tests/support/synth.py`` (tests may import scripts, never the other way round).
"""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


@cache
def make_dump() -> ModuleType:
    """``scripts/make_dump.py`` as a module (loaded once a process)."""
    spec = importlib.util.spec_from_file_location("make_dump", ROOT / "scripts" / "make_dump.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def generate(n: int, out: Path, *, seed: int = 0, formats: str = "xml") -> dict[str, Any]:
    """An ``n``-article dump in ``out`` (see make_dump.generate); returns its summary."""
    summary: dict[str, Any] = make_dump().generate(n, out, seed=seed, formats=formats, workers=1)
    return summary

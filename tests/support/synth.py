"""Synthetic dumps for tests, made by ``scripts/make_dump.py`` from the real samples."""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


@cache
def make_dump() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_dump", ROOT / "scripts" / "make_dump.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def generate(n: int, out: Path, *, seed: int = 0, formats: str = "xml") -> dict[str, Any]:
    """An ``n``-article dump in ``out`` (see make_dump.generate); returns its summary."""
    summary: dict[str, Any] = make_dump().generate(n, out, seed=seed, formats=formats, workers=1)
    return summary

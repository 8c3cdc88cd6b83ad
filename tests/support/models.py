"""A second, real sentence-transformers model, made offline (``scripts/_tiny_model.py``,
where the benchmarks use it too; re-exported here for the tests)."""

from __future__ import annotations

from scripts._tiny_model import make_tiny_model

__all__ = ["make_tiny_model"]

"""Synthetic dumps for tests, made by ``scripts/make_dump.py`` from the real samples.

The loader and its one-worker ``generate`` live in ``scripts/_synth.py``, where the
benchmarks use them too; this re-exports them for the tests.
"""

from __future__ import annotations

from scripts._synth import generate, make_dump

__all__ = ["generate", "make_dump"]

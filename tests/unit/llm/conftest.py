"""Fixtures for the LLM client tests: a fake Messages-API server per test."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from tests.support.fake_anthropic import FakeAnthropic, fake_anthropic_server


@pytest.fixture
def fake_anthropic(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    """A running fake server; the real credentials/base-URL env is hidden from the SDK."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with fake_anthropic_server() as fake:
        yield fake


@pytest.fixture(autouse=True)
def _no_leftover_threads() -> Iterator[None]:
    """Every test here must join what it starts (server threads, handler threads)."""
    before = set(threading.enumerate())
    yield
    leftover = [t.name for t in threading.enumerate() if t not in before and t.is_alive()]
    assert leftover == [], f"threads left running: {leftover}"

"""Fixtures for the multi-step rule tests: a fake Messages-API server per test.

Nothing here is autouse, so the other test modules in this folder keep their
own fixtures; a module opts into the thread check with
``pytestmark = pytest.mark.usefixtures("no_leftover_threads")``.
"""

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


@pytest.fixture
def no_leftover_threads() -> Iterator[None]:
    """The test must join what it starts (server threads, handler threads)."""
    before = set(threading.enumerate())
    yield
    leftover = [t.name for t in threading.enumerate() if t not in before and t.is_alive()]
    assert leftover == [], f"threads left running: {leftover}"

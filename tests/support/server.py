"""The real ``kg-agent serve`` in a subprocess, for end-to-end tests and benchmarks."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.cli import kg_agent_exe

_URL = re.compile(r" at (http://\S+/) ")


@dataclass
class RunningServer:
    """A started server: its base URL (no trailing slash), process and stderr so far."""

    url: str
    process: subprocess.Popen[str]
    log: list[str] = field(default_factory=list)

    @property
    def stderr(self) -> str:
        return "".join(self.log)


@contextmanager
def running_server(
    db: Path | str,
    *args: str,
    env: dict[str, str] | None = None,
    start_timeout: float = 120.0,
) -> Iterator[RunningServer]:
    """``kg-agent serve --db DB --port 0 ARGS`` until the block ends (then SIGTERM, and
    the exit awaited). The URL is read from the line the server prints once listening."""
    cmd = [*kg_agent_exe(), "serve", "--db", str(db), "--port", "0", *args]
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=full_env
    )
    log: list[str] = []
    found: list[str] = []
    ready = threading.Event()

    def pump() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            log.append(line)
            m = _URL.search(line)
            if m and not found:
                found.append(m.group(1).rstrip("/"))
                ready.set()
        ready.set()

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    ready.wait(start_timeout)
    if not found:
        proc.kill()
        proc.wait()
        raise RuntimeError(f"kg-agent serve did not start: {''.join(log)[-2000:]}")
    server = RunningServer(found[0], proc, log)
    try:
        yield server
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        reader.join(timeout=5)


def wait_until(predicate: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


__all__ = ["RunningServer", "running_server", "wait_until"]

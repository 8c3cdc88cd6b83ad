"""An opt-in response cache, so a repeated prompt costs no tokens.

Why: an eval rerun, a repeated question to ``serve``, or a benchmark of the stages
after the model sends the same prompts again. :class:`CachedClient` wraps any SDK
client; a reply is found by a SHA-256 key over the API, the server, the model, the
system prompt, the prompt and ``max_tokens``, so a change to any of them (a new prompt
template, a bigger budget, another model) misses. Only whole replies are kept (not one
cut off); a failure is never kept.

The cache is one SQLite file (WAL: several processes of ``serve`` may share it). It is
data, not state: deleting the file empties it.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kg_agent.exceptions import InvalidArgumentError
from kg_agent.llm.client import LLMReply, SDKClient

__all__ = ["CachedClient", "cache_key"]

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS replies ("
    "key TEXT PRIMARY KEY, reply TEXT NOT NULL, created REAL NOT NULL)"
)


def cache_key(
    *, api: str, server: str, model: str, system: str, prompt: str, max_tokens: int
) -> str:
    """The key of one request: every field that changes the reply."""
    fields = {
        "api": api,
        "server": server,
        "model": model,
        "system": system,
        "prompt": prompt,
        "max_tokens": max_tokens,
    }
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


class CachedClient:
    """``inner``'s replies, kept in the SQLite file at ``path`` and answered from it.

    A hit is an :class:`LLMReply` with ``cached=True`` (the meter counts it apart, at no
    cost); a streamed hit hands its text over in one piece.
    """

    def __init__(self, inner: SDKClient, path: str | os.PathLike[str]) -> None:
        self.inner = inner
        self.path = Path(path)
        if self.path.is_dir():
            raise InvalidArgumentError(f"LLM cache {self.path} is a folder: name a file")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(_SCHEMA)
            self._db.commit()
        except (OSError, sqlite3.Error) as exc:
            raise InvalidArgumentError(f"LLM cache {self.path}: {exc}") from exc
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def __repr__(self) -> str:
        return f"CachedClient({self.inner!r}, {str(self.path)!r})"

    @property
    def meter(self) -> Any:
        return self.inner.meter

    @meter.setter
    def meter(self, value: Any) -> None:
        self.inner.meter = value

    @property
    def api(self) -> str:
        return self.inner.api

    @property
    def server(self) -> str:
        return self.inner.server

    def prepare(self) -> None:
        self.inner.prepare()

    @property
    def prepared(self) -> bool:
        return self.inner.prepared

    def close(self) -> None:
        self.inner.close()
        with self._lock:
            self._db.close()

    def __enter__(self) -> CachedClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ calls
    def complete(
        self,
        *,
        model: str,
        system: str,
        prompt: str,
        max_tokens: int = 1024,
        timeout: float | None = None,
    ) -> LLMReply:
        key = self._key(model, system, prompt, max_tokens)
        hit = self._get(key)
        if hit is not None:
            return hit
        reply = self.inner.complete(
            model=model, system=system, prompt=prompt, max_tokens=max_tokens, timeout=timeout
        )
        self._put(key, reply)
        return reply

    def stream(
        self,
        *,
        model: str,
        system: str,
        prompt: str,
        on_text: Callable[[str], None],
        max_tokens: int = 1024,
        timeout: float | None = None,
    ) -> LLMReply:
        key = self._key(model, system, prompt, max_tokens)
        hit = self._get(key)
        if hit is not None:
            on_text(hit.text)
            return hit
        reply = self.inner.stream(
            model=model,
            system=system,
            prompt=prompt,
            on_text=on_text,
            max_tokens=max_tokens,
            timeout=timeout,
        )
        self._put(key, reply)
        return reply

    # ------------------------------------------------------------------ storage
    def _key(self, model: str, system: str, prompt: str, max_tokens: int) -> str:
        return cache_key(
            api=self.inner.api,
            server=self.inner.server,
            model=model,
            system=system,
            prompt=prompt,
            max_tokens=max_tokens,
        )

    def _get(self, key: str) -> LLMReply | None:
        started = time.perf_counter()
        with self._lock:
            row = self._db.execute("SELECT reply FROM replies WHERE key = ?", (key,)).fetchone()
            if row is None:
                self.misses += 1
                return None
            self.hits += 1
        saved = json.loads(row[0])
        reply = LLMReply(
            text=saved["text"],
            model=saved["model"],
            input_tokens=0,
            output_tokens=0,
            latency_s=time.perf_counter() - started,
            stop_reason=saved.get("stop_reason"),
            cached=True,
        )
        meter = self.inner.meter
        if meter is not None:
            meter.record(reply)
        return reply

    def _put(self, key: str, reply: LLMReply) -> None:
        if reply.cut_off or reply.cached:
            return
        saved = {"text": reply.text, "model": reply.model, "stop_reason": reply.stop_reason}
        with self._lock:
            try:
                self._db.execute(
                    "INSERT OR REPLACE INTO replies VALUES (?, ?, ?)",
                    (key, json.dumps(saved), time.time()),
                )
                self._db.commit()
            except sqlite3.Error:  # a full disk or a locked file: the reply still stands
                self._db.rollback()

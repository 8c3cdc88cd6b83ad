"""Progress display for long work: rate (items/s) and ETA, on stderr.

On a terminal the line redraws in place; in a log (CI, ``nohup``) it prints a
line every few seconds instead, so logs stay readable.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


def _fmt_eta(seconds: float) -> str:
    if seconds != seconds or seconds < 0 or seconds > 360000:  # NaN or absurd
        return "?"
    m, s = divmod(int(seconds), 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


class Progress:
    """One phase of work: ``update()`` as items complete, ``close()`` at the end."""

    def __init__(
        self,
        label: str,
        *,
        total: float | None = None,
        unit: str = "items",
        stream: TextIO | None = None,
        enabled: bool = True,
        interval: float | None = None,
    ) -> None:
        self.label = label
        self.total = total
        self.unit = unit
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.interval = interval if interval is not None else (0.2 if self.tty else 5.0)
        self.done: float = 0
        self.start = time.perf_counter()
        self._last = 0.0
        self._extra = ""
        self.fraction: float | None = None  # share of the work done, when items are not it
        self._base: float = 0  # items done before this run (a resumed job): not in the rate

    def update(self, n: float = 1, *, extra: str = "", fraction: float | None = None) -> None:
        """Count ``n`` more items; ``fraction`` (0..1) drives the ETA when the total
        is not known in items (pages of a compressed dump: bytes read say how far)."""
        self.done += n
        if fraction is not None:
            self.fraction = fraction
        self._maybe_draw(extra)

    def set(self, done: float, *, total: float | None = None, extra: str = "") -> None:
        self.done = done
        if total is not None:
            self.total = total
        self._maybe_draw(extra)

    def _maybe_draw(self, extra: str) -> None:
        if extra:
            self._extra = extra
        now = time.perf_counter()
        if self.enabled and now - self._last >= self.interval:
            self._last = now
            self._draw(final=False)

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def start_rate_at(self, done: float) -> None:
        """Items already done before this run (a resumed job): counted in the total,
        not in the rate, so the rate and ETA describe this run's speed."""
        self._base = done

    @property
    def rate(self) -> float:
        e = self.elapsed
        return (self.done - self._base) / e if e > 0 else 0.0

    def line(self) -> str:
        rate = self.rate
        parts = [f"{self.label}: {self.done:,.0f}"]
        if self.total:
            pct = 100.0 * self.done / self.total
            parts[0] += f"/{self.total:,.0f} ({pct:.0f}%)"
        parts.append(f"{rate:,.1f} {self.unit}/s")
        if self.total and rate > 0:
            parts.append(f"ETA {_fmt_eta((self.total - self.done) / rate)}")
        elif self.fraction:
            f = min(max(self.fraction, 1e-9), 1.0)
            parts.append(f"{100 * f:.0f}% ETA {_fmt_eta(self.elapsed * (1 - f) / f)}")
        parts.append(f"{self.elapsed:.1f}s")
        if self._extra:
            parts.append(self._extra)
        return " | ".join(parts)

    def _draw(self, *, final: bool) -> None:
        text = self.line()
        if self.tty:
            end = "\n" if final else ""
            self.stream.write("\r\x1b[2K" + text + end)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self._draw(final=True)

"""The parse phase: a source into shards, in parallel worker processes, resumably.

MediaWiki dumps are cut into units (:mod:`kg_agent.ingest.units`) that a pool of
worker processes parses into shards (:mod:`kg_agent.ingest.shards`); units whose
shard is already complete (a resumed load) are skipped. Passage corpora are
small and read in this process, in units of ``batch_pages`` pages.

Workers ignore Ctrl-C and die with their parent (``PR_SET_PDEATHSIG`` on Linux):
the parent decides what an interruption means, and a ``kill -9`` of the parent
never leaves workers behind.
"""

from __future__ import annotations

import collections
import dataclasses
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from kg_agent.ingest.known import PageFilter
from kg_agent.ingest.shards import ShardBuilder, parse_unit
from kg_agent.ingest.sources import MEDIAWIKI, iter_pages
from kg_agent.ingest.stage import Stage
from kg_agent.ingest.units import DumpPlan, plan_dump, stream_units
from kg_agent.progress import Progress

__all__ = [
    "REPARSE_BASE",
    "ParseOptions",
    "ParseResult",
    "parse_source",
    "reparse_pages",
    "set_parent_death_signal",
]

#: A reparse writes unit ``u``'s pages as unit ``REPARSE_BASE + u``: after every unit of
#: a dump, so its rows win over the kept ones (a later page of a title wins).
REPARSE_BASE = 1 << 24
_REPARSE_IN_PROCESS = 2000  # pages: fewer are read again in this process


@dataclass(frozen=True, slots=True)
class ParseOptions:
    workers: int = 1
    limit: int | None = None
    max_section_words: int = 160
    batch_pages: int = 2000
    chunk_bytes: int | None = None
    index: str | None = None
    progress: bool = True
    #: An update's keys of the pages the graph has (:mod:`kg_agent.ingest.known`): such
    #: pages are kept without their wikitext parsed.
    known: str | None = None


@dataclass(slots=True)
class ParseResult:
    units: list[int]  # the units the load is made of, in order
    cut: int | None  # with --limit: position of the last page kept
    counts: dict[str, int]
    layout: str
    resumed_units: int
    parsed_pages: int  # pages parsed by this run (not the resumed ones)


def set_parent_death_signal() -> None:
    """Ask Linux to SIGKILL this process when its parent dies (no-op elsewhere)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return


def _worker_init() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    set_parent_death_signal()


def parse_source(
    src: str, fmt: str, stage: Stage, opts: ParseOptions, *, say: Callable[[str], None]
) -> ParseResult:
    """Parse ``src`` into ``stage.units`` (skipping complete shards); see the module doc."""
    done = {u: m for u, m in stage.units.markers().items() if u < REPARSE_BASE}
    if fmt != MEDIAWIKI:
        return _parse_passages(src, fmt, stage, opts, done, say)
    plan = plan_dump(src, index=opts.index, chunk_bytes=opts.chunk_bytes)
    stage.mark("plan", {**plan.describe(), "size": plan.size})
    total = len(plan.units) if plan.layout != "stream" else None
    if done:
        of = f" of {total:,}" if total is not None else ""
        say(f"resuming: {len(done):,}{of} shards done")
    which = PageFilter(known=opts.known) if opts.known else None
    runner = _Runner(
        plan, stage, opts, Progress("parse", unit="pages", enabled=opts.progress), done, which=which
    )
    markers = _run_all(runner)
    units = runner.order[: runner.needed] if runner.needed is not None else runner.order
    _check_written(units, markers, "parse")
    return _result(stage, units, markers, opts.limit, plan.layout, len(done), runner.parsed)


def _run_all(runner: _Runner) -> dict[int, dict[str, Any]]:
    """Run the runner to its end; the stage's complete shards after it."""
    try:
        runner.run()
    finally:
        runner.close()
        runner.prog.close()
    return runner.stage.units.markers()


def _check_written(units: list[int], markers: dict[int, dict[str, Any]], name: str) -> None:
    missing = [u for u in units if u not in markers]
    if missing:  # a worker died without an exception (OOM killer): never a silent gap
        raise RuntimeError(f"{name}: {len(missing)} shard(s) missing, first unit {missing[0]}")


def reparse_pages(
    src: str,
    stage: Stage,
    opts: ParseOptions,
    units: dict[int, list[int] | None],
    which: PageFilter,
) -> list[int]:
    """Parse again, whole, the pages of ``units`` that ``which`` wants (pages an update
    kept and now needs); returns the units they were written as (see
    :data:`REPARSE_BASE`). ``units`` maps each unit to the offsets of its pages to read
    (``units.read_pages_at``), or to None: the whole unit is read. Resumable as the
    parse is: a written unit is not redone."""
    wanted = sorted(units)
    if not wanted:
        return []
    plan = plan_dump(src, index=opts.index, chunk_bytes=opts.chunk_bytes)
    pages = [len(v) if v is not None else _REPARSE_IN_PROCESS + 1 for v in units.values()]
    if sum(pages) <= _REPARSE_IN_PROCESS:  # a few pages: starting workers costs more
        opts = dataclasses.replace(opts, workers=1)
    select = {u: REPARSE_BASE + u for u in wanted}
    done = {u: m for u, m in stage.units.markers().items() if u >= REPARSE_BASE}
    prog = Progress("reparse", unit="pages", enabled=opts.progress)
    runner = _Runner(plan, stage, opts, prog, done, which=which, select=select, pieces=units)
    markers = _run_all(runner)
    out = [select[u] for u in wanted]
    _check_written(out, markers, "reparse")
    return out


class _Runner:
    """Feeds units to workers in order, with a bounded number in flight."""

    def __init__(
        self,
        plan: DumpPlan,
        stage: Stage,
        opts: ParseOptions,
        prog: Progress,
        done: dict[int, dict[str, Any]],
        *,
        which: PageFilter | None = None,
        select: dict[int, int] | None = None,
        pieces: dict[int, list[int] | None] | None = None,
    ) -> None:
        self.plan = plan
        self.stage = stage
        self.opts = opts
        self.prog = prog
        self.done = dict(done)
        self.which = which
        self.select = select  # unit → the unit it is written as (a reparse of some units)
        self.pieces = pieces or {}  # unit → offsets of the only pages to read
        self.order: list[int] = []
        self.needed: int | None = None  # units needed to reach --limit articles
        self.parsed = 0
        self.pool: Any = None
        chosen = [u for u in plan.units if select is None or u.index in select]
        pending = sum(1 for u in chosen if self._out(u.index) not in done)
        if opts.workers > 1 and (plan.layout == "stream" or pending > 1):
            ctx = multiprocessing.get_context("spawn")
            self.pool = ctx.Pool(opts.workers, initializer=_worker_init)
        self._bytes_total = sum(u.end - u.start for u in chosen) or plan.size or 1
        self._bytes_done = 0

    def _out(self, unit: int) -> int:
        return unit if self.select is None else self.select[unit]

    def _jobs(self) -> Iterator[dict[str, Any]]:
        base = {
            "path": self.plan.path,
            "layout": self.plan.layout,
            "compression": self.plan.compression,
            "size": self.plan.size,
            "namespaces": self.plan.namespaces,
            "out_dir": str(self.stage.units.dir),
            "max_section_words": self.opts.max_section_words,
            **(self.which.to_job() if self.which is not None else {}),
        }
        select = self.select
        if self.plan.layout == "stream":
            for unit, data, last in stream_units(
                self.plan, chunk_bytes=self.opts.chunk_bytes, progress=self._fraction
            ):
                if select is not None and unit.index not in select:
                    continue
                out = self._out(unit.index)
                self.order.append(out)
                if out in self.done:
                    continue
                yield {
                    **base,
                    "unit": (unit.index, unit.start, unit.end),
                    "as_unit": out,
                    "data": data,
                    "last": last,
                }
            return
        n = len(self.plan.units)
        for unit in self.plan.units:
            if select is not None and unit.index not in select:
                continue
            out = self._out(unit.index)
            self.order.append(out)
            if out in self.done:
                self._bytes_done += unit.end - unit.start
                continue
            yield {
                **base,
                "unit": (unit.index, unit.start, unit.end),
                "as_unit": out,
                "last": unit.index == n - 1,
                "pieces": self.pieces.get(unit.index),
            }

    def _fraction(self, f: float) -> None:
        self.prog.fraction = f

    def _limit_reached(self) -> bool:
        if self.opts.limit is None:
            return False
        articles = 0
        for i, unit in enumerate(self.order):
            marker = self.done.get(unit)
            if marker is None:
                return False
            articles += int(marker.get("articles", 0))
            if articles >= self.opts.limit:
                self.needed = i + 1
                return True
        return False

    def _finished(self, marker: dict[str, Any]) -> None:
        self.done[int(marker["unit"])] = marker
        self.parsed += int(marker.get("pages", 0))
        self._bytes_done += int(marker.get("end", 0)) - int(marker.get("start", 0))
        if self.plan.layout != "stream":
            self.prog.fraction = self._bytes_done / self._bytes_total
        self.prog.update(
            int(marker.get("pages", 0)),
            extra=f"{len(self.done):,} shards",
        )

    def run(self) -> None:
        if self._limit_reached():
            return
        if self.pool is None:
            for job in self._jobs():
                self._finished(parse_unit(job))
                if self._limit_reached():
                    return
            return
        pending: collections.deque[Any] = collections.deque()
        for job in self._jobs():
            pending.append(self.pool.apply_async(parse_unit, (job,)))
            while len(pending) >= 2 * self.opts.workers or (pending and pending[0].ready()):
                self._finished(pending.popleft().get())
                if self._limit_reached():
                    return
        while pending:
            self._finished(pending.popleft().get())
            if self._limit_reached():
                return

    def close(self) -> None:
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()
            self.pool = None


def _result(
    stage: Stage,
    units: list[int],
    markers: dict[int, dict[str, Any]],
    limit: int | None,
    layout: str,
    resumed: int,
    parsed: int,
) -> ParseResult:
    counts: collections.Counter[str] = collections.Counter()
    for u in units:
        for key in (
            "pages",
            "articles",
            "kept",  # of those, an update's unchanged pages, kept unparsed
            "redirects",
            "disambiguation_pages",
            "infer_mentions",
        ):
            counts[key] += int(markers[u].get(key, 0))
    cut = None
    if limit is not None and counts["articles"] > limit:
        cut = _cut_position(stage, units, limit)
    result = ParseResult(units, cut, dict(counts), layout, resumed, parsed)
    stage.mark("parse", {"units": units, "cut": cut, "counts": dict(counts), "layout": layout})
    return result


def _cut_position(stage: Stage, units: list[int], limit: int) -> int:
    """Position of the ``limit``-th article: pages after it are not part of the load."""
    seen = 0
    for u in units:
        ords = stage.units.read(u, "articles", ["_ord"]).column("_ord").to_pylist()
        if seen + len(ords) >= limit:
            return int(ords[limit - seen - 1])
        seen += len(ords)
    raise AssertionError("unreachable: fewer articles than counted")


def _parse_passages(
    src: str,
    fmt: str,
    stage: Stage,
    opts: ParseOptions,
    done: dict[int, dict[str, Any]],
    say: Callable[[str], None],
) -> ParseResult:
    if done:
        say(f"resuming: {len(done):,} shards done")
    prog = Progress("parse", unit="pages", enabled=opts.progress)

    def on_bytes(read: int, total: int) -> None:
        if total:
            prog.fraction = read / total

    units: list[int] = []
    builder: ShardBuilder | None = None
    parsed = 0
    for page in iter_pages(src, fmt, limit=opts.limit, progress=on_bytes):
        if builder is None or builder.pages >= opts.batch_pages:
            if builder is not None:
                _flush(builder, stage, done)
            builder = ShardBuilder(len(units), max_section_words=opts.max_section_words)
            units.append(builder.unit)
        if builder.unit in done:
            builder.pages += 1  # a complete shard of a resumed load: count, do not build
            continue
        builder.add(page)
        parsed += 1
        prog.update(1, extra=f"{len(units):,} shards")
    if builder is not None:
        _flush(builder, stage, done)
    prog.close()
    markers = stage.units.markers()
    return _result(stage, units, markers, None, "passages", len(done), parsed)


def _flush(builder: ShardBuilder, stage: Stage, done: dict[int, dict[str, Any]]) -> None:
    if builder.unit not in done:
        builder.write(stage.units.dir, {"start": 0, "end": 0, "pid": os.getpid()})

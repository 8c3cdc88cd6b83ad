"""Cut a MediaWiki dump into work units that worker processes parse in parallel.

A unit is a run of whole ``<page>`` elements. How a dump is cut depends on how it
is stored, and never on the number of workers, so the graph a load builds is the
same whatever ``--workers`` says:

``plain``
    Uncompressed XML: units are byte ranges that start at a ``<page>`` tag, found
    by seeking to every ``chunk_bytes`` and reading forward to the next one. Each
    worker reads its own range. (In XML text a literal ``<page>`` is always a tag:
    ``<`` in content is written ``&lt;``.)
``multistream``
    A ``pages-articles-multistream.xml.bz2``: many bz2 streams of 100 pages each,
    which decompress independently. Stream starts come from the
    ``…-multistream-index.txt.bz2`` when there is one (``OFFSET:PAGE_ID:TITLE``
    lines), else from a scan for the stream magic (``BZh`` + block size + the
    block magic ``1AY&SY``, byte-aligned only at a stream start). Consecutive page
    streams are grouped into units of about ``chunk_bytes`` compressed; workers read
    and decompress their own unit, so decompression is parallel too.
``stream``
    One compressed stream (a single-stream ``.bz2``, ``.gz``, ``.xz``): it can only
    be read front to back, so one process decompresses it (``lbzip2`` or
    ``pbzip2`` when installed, else Python's ``bz2``) and cuts the text into units
    at ``</page>`` boundaries; workers parse them.
``single``
    A ``Special:Export`` fragment whose root is ``<page>``: one unit, parsed whole.
"""

from __future__ import annotations

import bisect
import bz2
import gzip
import html
import lzma
import os
import re
import shutil
import subprocess
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

from kg_agent.exceptions import SourceError
from kg_agent.ingest.mediawiki import check_dump, local_name

__all__ = [
    "DumpPlan",
    "Unit",
    "plan_dump",
    "read_pages_at",
    "read_unit",
    "read_unit_located",
    "stream_units",
]

Layout = Literal["plain", "multistream", "stream", "single"]

#: Target size of a unit: decompressed bytes (plain, stream) ...
CHUNK_BYTES = 32 << 20
#: ... or compressed bytes of a multistream .bz2 (about 4x as much XML).
BZ2_CHUNK_BYTES = 8 << 20

_PAGE_OPEN = b"<page>"
_PAGE_CLOSE = b"</page>"
_STREAM_MAGIC = re.compile(rb"BZh[1-9]1AY&SY")
_NAMESPACE = re.compile(rb'<namespace\b[^>]*\bkey="(-?\d+)"[^>]*?(?:/>|>([^<]*)</namespace>)')
_TAIL_OK = re.compile(rb"\s*(?:</mediawiki>\s*)?\Z")
_SCAN_BLOCK = 64 << 20
_MULTISTREAM_PROBE = 8 << 20  # a second stream within this many bytes: multistream


@dataclass(frozen=True, slots=True)
class Unit:
    """Pages ``[start, end)``: bytes of the stored file, or of the decompressed text
    for the ``stream`` layout."""

    index: int
    start: int
    end: int


@dataclass(slots=True)
class DumpPlan:
    path: str
    layout: Layout
    compression: str | None
    size: int
    namespaces: dict[str, int]
    units: list[Unit] = field(default_factory=list)  # empty for "stream": found while reading
    index_path: str | None = None

    def describe(self) -> dict[str, Any]:
        return {
            "layout": self.layout,
            "compression": self.compression,
            "units": len(self.units) if self.layout != "stream" else None,
            "index": self.index_path,
        }


# ---------------------------------------------------------------------------- planning
def plan_dump(
    path: str | os.PathLike[str],
    *,
    index: str | os.PathLike[str] | None = None,
    chunk_bytes: int | None = None,
) -> DumpPlan:
    """Check the dump (as :func:`iter_dump_pages` does) and cut it into units."""
    name = os.fspath(path)
    kind, size = check_dump(name)
    if kind == "bz2" and _is_multistream(name, size):
        return _plan_multistream(name, size, index, chunk_bytes or BZ2_CHUNK_BYTES)
    if index is not None:
        raise SourceError(
            name, "--index is for multistream .bz2 dumps; this file is not one", where=None
        )
    if kind is not None:
        header = _stream_header(name, kind)
        layout: Layout = "single" if _is_single_page(header) else "stream"
        return DumpPlan(name, layout, kind, size, _namespaces(header))
    with open(name, "rb") as fh:
        head = fh.read(1 << 20)
    if _is_single_page(head):
        return DumpPlan(name, "single", None, size, {}, [Unit(0, 0, size)])
    first = _find_forward(name, 0, _PAGE_OPEN)
    header = _read_range(name, 0, min(first, 4 << 20) if first >= 0 else 4 << 20)
    plan = DumpPlan(name, "plain", None, size, _namespaces(header))
    if first < 0:
        _check_no_pages_tail(name, header)
        return plan
    plan.units = _plain_units(name, size, first, chunk_bytes or CHUNK_BYTES)
    return plan


def _is_single_page(head: bytes) -> bool:
    m = re.search(rb"<(?![?!])([^\s/>]+)", head.lstrip(b"\xef\xbb\xbf \t\r\n"))
    return m is not None and local_name(m.group(1).decode("utf-8", "replace")) == "page"


def _namespaces(header: bytes) -> dict[str, int]:
    out: dict[str, int] = {}
    for key, name in _NAMESPACE.findall(header):
        if name and name.strip():
            out[html.unescape(name.decode("utf-8", "replace")).strip()] = int(key)
    return out


def _read_range(name: str, start: int, end: int) -> bytes:
    with open(name, "rb") as fh:
        fh.seek(start)
        return fh.read(max(0, end - start))


def _find_forward(name: str, offset: int, needle: bytes, block: int = 1 << 20) -> int:
    """Offset of the first ``needle`` at or after ``offset``, or -1."""
    with open(name, "rb") as fh:
        fh.seek(offset)
        carry = b""
        pos = offset
        while True:
            chunk = fh.read(block)
            if not chunk:
                return -1
            buf = carry + chunk
            i = buf.find(needle)
            if i >= 0:
                return pos - len(carry) + i
            carry = buf[-(len(needle) - 1) :]
            pos += len(chunk)


def _plain_units(name: str, size: int, first: int, chunk: int) -> list[Unit]:
    starts = [first]
    target = first + chunk
    while target < size:
        nxt = _find_forward(name, target, _PAGE_OPEN)
        if nxt < 0:
            break
        if nxt > starts[-1]:
            starts.append(nxt)
        target = nxt + chunk
    ends = [*starts[1:], size]
    return [Unit(i, s, e) for i, (s, e) in enumerate(zip(starts, ends, strict=True))]


def _check_no_pages_tail(name: str, header: bytes) -> None:
    if b"</mediawiki>" not in header:
        raise SourceError(name, "truncated: no <page> and no closing </mediawiki>")


# ----------------------------------------------------------------------- multistream
def _is_multistream(name: str, size: int) -> bool:
    with open(name, "rb") as fh:
        head = fh.read(min(size, _MULTISTREAM_PROBE))
    return any(m.start() > 0 for m in _STREAM_MAGIC.finditer(head))


def _scan_stream_starts(name: str, size: int) -> list[int]:
    starts: list[int] = []
    overlap = 9
    with open(name, "rb") as fh:
        pos = 0
        carry = b""
        while pos < size:
            chunk = fh.read(_SCAN_BLOCK)
            if not chunk:
                break
            buf = carry + chunk
            base = pos - len(carry)
            starts.extend(base + m.start() for m in _STREAM_MAGIC.finditer(buf))
            carry = buf[-overlap:]
            pos += len(chunk)
    return sorted(set(starts))


def _index_offsets(index: str) -> list[int]:
    offsets: set[int] = set()
    opener: Any = bz2.open if Path(index).read_bytes()[:3] == b"BZh" else open
    try:
        with opener(index, "rb") as fh:
            for n, line in enumerate(fh, 1):
                head, sep, _rest = line.partition(b":")
                if not sep or not head.strip().isdigit():
                    raise SourceError(
                        index,
                        "not a multistream index (expected OFFSET:PAGE_ID:TITLE)",
                        where=f"line {n}",
                    )
                offsets.add(int(head))
    except (OSError, EOFError) as exc:
        raise SourceError(index, f"cannot read the index: {exc}") from None
    return sorted(offsets)


def default_index_path(dump: str) -> str | None:
    """``X-multistream-index.txt.bz2`` beside ``X-multistream.xml.bz2``, when it exists."""
    p = Path(dump)
    if p.name.endswith(".xml.bz2"):
        sibling = p.with_name(p.name[: -len(".xml.bz2")] + "-index.txt.bz2")
        if sibling.exists():
            return str(sibling)
    return None


def _decompress_streams(data: bytes) -> bytes:
    """Decompress one or more concatenated bz2 streams; a cut-off one is an error."""
    out: list[bytes] = []
    while data:
        dec = bz2.BZ2Decompressor()
        out.append(dec.decompress(data))
        if not dec.eof:
            raise EOFError("the bz2 stream ends before its end marker")
        data = dec.unused_data
    return b"".join(out)


def _plan_multistream(name: str, size: int, index: Any, chunk: int) -> DumpPlan:
    index_path = os.fspath(index) if index is not None else default_index_path(name)
    if index_path is not None:
        page_starts = _index_offsets(index_path)  # the index lists page streams only
        if not page_starts or page_starts[-1] >= size:
            raise SourceError(index_path, f"offsets do not fit {name} ({size:,} bytes)")
        header = _decompress_part(name, 0, page_starts[0])
    else:
        starts = _scan_stream_starts(name, size)
        if not starts:
            raise SourceError(name, "no bz2 stream found")
        # Header and footer streams hold no <page>: they are no unit starts.
        header = _decompress_part(name, 0, starts[1] if len(starts) > 1 else size)
        page_starts = starts if _PAGE_OPEN in header else starts[1:]
        if _PAGE_OPEN in header:
            header = header[: header.find(_PAGE_OPEN)]
        if len(page_starts) > 1 and _PAGE_OPEN not in _decompress_part(name, page_starts[-1], size):
            page_starts.pop()
    plan = DumpPlan(name, "multistream", "bz2", size, _namespaces(header), index_path=index_path)
    groups: list[int] = []
    for s in page_starts:
        if not groups or s - groups[-1] >= chunk:
            groups.append(s)
    ends = [*groups[1:], size]
    plan.units = [Unit(i, s, e) for i, (s, e) in enumerate(zip(groups, ends, strict=True))]
    return plan


def _decompress_part(name: str, start: int, end: int) -> bytes:
    if end <= start:
        return b""
    try:
        return _decompress_streams(_read_range(name, start, end))
    except EOFError:
        raise SourceError(
            name, "truncated: a bz2 stream ends before its end marker", where=f"byte {start:,}"
        ) from None
    except (OSError, ValueError) as exc:
        raise SourceError(
            name, f"corrupt bz2 data: {exc}", where=f"stream at byte {start:,}"
        ) from None


# ---------------------------------------------------------------------------- reading
def read_unit(plan: DumpPlan, unit: Unit) -> bytes:
    """The decompressed text of a planned unit (plain, multistream, single)."""
    return read_unit_located(plan, unit)[0]


def read_unit_located(plan: DumpPlan, unit: Unit) -> tuple[bytes, Callable[[int], int]]:
    """The unit's text, and where a page at a position of it can be read again alone
    (:func:`read_pages_at`): its ``<page>``'s byte in a plain file, the start of its
    bz2 stream in a multistream one."""
    raw = _read_range(plan.path, unit.start, unit.end)
    if plan.layout != "multistream":
        return raw, lambda pos: unit.start + pos
    try:
        text, starts = _decompress_located(raw)
    except EOFError:
        raise SourceError(
            plan.path,
            "truncated: the last bz2 stream ends before its end marker",
            where=f"stream group at compressed byte {unit.start:,}",
        ) from None
    except (OSError, ValueError) as exc:
        raise SourceError(
            plan.path,
            f"corrupt bz2 data: {exc}",
            where=f"stream group at compressed byte {unit.start:,}",
        ) from None
    texts = [t for t, _ in starts]

    def stream_of(pos: int) -> int:
        return unit.start + starts[bisect.bisect_right(texts, pos) - 1][1]

    return text, stream_of


def _decompress_located(data: bytes) -> tuple[bytes, list[tuple[int, int]]]:
    """Concatenated bz2 streams decompressed, with (text offset, compressed offset) of
    each stream's start."""
    out: list[bytes] = []
    starts: list[tuple[int, int]] = []
    text = done = 0
    while data:
        dec = bz2.BZ2Decompressor()
        part = dec.decompress(data)
        if not dec.eof:
            raise EOFError("the bz2 stream ends before its end marker")
        starts.append((text, done))
        out.append(part)
        text += len(part)
        done += len(data) - len(dec.unused_data)
        data = dec.unused_data
    return b"".join(out), starts


def read_pages_at(plan: DumpPlan, offsets: list[int]) -> bytes:
    """The ``<page>`` elements at ``offsets`` (from :func:`read_unit_located`), in
    order: in a plain file each page alone, in a multistream one the whole stream."""
    parts: list[bytes] = []
    with open(plan.path, "rb") as fh:
        for offset in sorted(set(offsets)):
            fh.seek(offset)
            if plan.layout == "multistream":
                dec = bz2.BZ2Decompressor()
                while not dec.eof:
                    block = fh.read(1 << 20)
                    if not block:
                        raise SourceError(
                            plan.path, "truncated: a bz2 stream ends", where=f"byte {offset:,}"
                        )
                    parts.append(dec.decompress(block))
                continue
            buf = b""
            while (end := buf.find(_PAGE_CLOSE)) < 0:
                block = fh.read(1 << 20)
                if not block:
                    raise SourceError(
                        plan.path, "truncated: a page is not closed", where=f"byte {offset:,}"
                    )
                buf += block
            parts.append(buf[: end + len(_PAGE_CLOSE)] + b"\n")
    return b"".join(parts)


def parallel_decompressor() -> list[str] | None:
    """The command of an installed parallel bz2 decompressor (lbzip2 first), or None."""
    if os.environ.get("KG_AGENT_NO_PARALLEL_BZ2"):
        return None
    for exe, args in (("lbzip2", ["-dc"]), ("pbzip2", ["-dc"])):
        found = shutil.which(exe)
        if found:
            return [found, *args]
    return None


def _stream_header(name: str, kind: str) -> bytes:
    """Decompressed bytes up to the first ``<page>`` (at most 4 MiB)."""
    with _Decompressed(name, kind, use_tool=False) as fh:
        buf: bytes = b""
        while len(buf) < (4 << 20):
            chunk = fh.read(1 << 16)
            if not chunk:
                break
            buf += bytes(chunk)
            i = buf.find(_PAGE_OPEN)
            if i >= 0:
                return buf[:i]
    return buf


class _Decompressed:
    """A readable decompressed stream of ``name``; through lbzip2/pbzip2 when allowed."""

    def __init__(self, name: str, kind: str, *, use_tool: bool) -> None:
        self.name = name
        self.kind = kind
        self.proc: subprocess.Popen[bytes] | None = None
        self.raw: IO[bytes] | None = None
        tool = parallel_decompressor() if (use_tool and kind == "bz2") else None
        self.tool = Path(tool[0]).name if tool else None
        if tool:
            self.proc = subprocess.Popen(
                [*tool, name], stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
            assert self.proc.stdout is not None
            self.stream: Any = self.proc.stdout
        else:
            self.raw = open(name, "rb")  # noqa: SIM115 - closed in __exit__
            if kind == "bz2":
                self.stream = bz2.BZ2File(self.raw)
            elif kind == "gzip":
                self.stream = gzip.GzipFile(fileobj=self.raw, mode="rb")
            else:
                self.stream = lzma.LZMAFile(self.raw)  # noqa: SIM115 - closed with raw

    def __enter__(self) -> Any:
        return self.stream

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
        if self.raw is not None:
            self.raw.close()

    def position(self) -> int:
        """Compressed bytes consumed so far (for progress); 0 when a tool reads the file."""
        return self.raw.tell() if self.raw is not None else 0

    def check_tool(self) -> None:
        """Raise if the external decompressor failed (a truncated or corrupt file)."""
        if self.proc is None:
            return
        assert self.proc.stdout is not None
        self.proc.stdout.close()
        code = self.proc.wait()
        if code != 0:
            err = (self.proc.stderr.read() if self.proc.stderr else b"").decode("utf-8", "replace")
            msg = " ".join(err.split())[:200] or f"exit status {code}"
            raise SourceError(self.name, f"truncated or corrupt bz2 data ({self.tool}: {msg})")


def stream_units(
    plan: DumpPlan,
    *,
    chunk_bytes: int | None = None,
    progress: Any = None,
) -> Iterator[tuple[Unit, bytes, bool]]:
    """Decompress a ``stream`` dump front to back: ``(unit, text, is_last)`` in order.

    A unit ends at the first ``</page>`` past ``chunk_bytes``; the last one runs
    to the end of the text (the closing ``</mediawiki>``). ``progress(fraction)``
    is called as compressed bytes are read when Python decompresses (a tool reads
    the file itself and reports nothing).
    """
    chunk = chunk_bytes or CHUNK_BYTES
    assert plan.compression is not None
    dec = _Decompressed(plan.path, plan.compression, use_tool=True)
    index = 0
    offset = 0  # decompressed offset of buf[0]
    started = False
    buf = b""
    try:
        with dec as fh:
            while True:
                data = fh.read(1 << 20)
                eof = not data
                buf += data
                if not started:
                    i = buf.find(_PAGE_OPEN)
                    if i < 0 and not eof:
                        keep = len(_PAGE_OPEN) - 1
                        offset += max(0, len(buf) - keep)
                        buf = buf[-keep:]
                        continue
                    if i >= 0:
                        offset += i
                        buf = buf[i:]
                    started = True
                if eof:
                    dec.check_tool()
                    yield Unit(index, offset, offset + len(buf)), buf, True
                    return
                # a unit ends at the first </page> past chunk_bytes: where depends on the
                # text alone, not on how reads fell, so units are the same every run
                while len(buf) >= chunk:
                    cut = buf.find(_PAGE_CLOSE, chunk - len(_PAGE_CLOSE))
                    if cut < 0:
                        break
                    cut += len(_PAGE_CLOSE)
                    yield Unit(index, offset, offset + cut), buf[:cut], False
                    index += 1
                    offset += cut
                    buf = buf[cut:]
                if progress is not None and plan.size and dec.position():
                    progress(dec.position() / plan.size)
    except EOFError:
        raise SourceError(
            plan.path,
            f"truncated: the {plan.compression} stream ends before its end marker",
            where=f"after {offset:,} decompressed bytes",
        ) from None
    except (OSError, lzma.LZMAError, zlib.error) as exc:
        raise SourceError(
            plan.path,
            f"corrupt or unreadable data: {exc}",
            where=f"after {offset:,} decompressed bytes",
        ) from None

"""Stream ``ParsedPage`` objects out of a MediaWiki ``pages-articles`` XML dump.

A full English dump is tens of GB, so the file is never read whole: the XML is
parsed incrementally (``ElementTree.iterparse``) and each ``<page>`` is dropped from
the tree once handled, keeping memory flat. Compression is detected from magic
bytes (bz2, also multistream; gzip; xz), not from the file name. Any damage —
truncation, corrupt compression, malformed XML — raises :class:`SourceError` after
the pages read so far, never a silent partial success.

Also accepted: a single-page ``Special:Export`` fragment whose root is ``<page>``.
Pages of every namespace but 0 are skipped. Pages are yielded in dump order and
duplicates are not merged (real dumps have none); a consumer that sees a title twice
should let the later page win.
"""

from __future__ import annotations

import bz2
import dataclasses
import gzip
import hashlib
import io
import lzma
import os
import re
import xml.etree.ElementTree as ET
import zlib
from collections.abc import Callable, Iterator
from typing import IO, Protocol, cast

from kg_agent.exceptions import InvalidArgumentError, SourceError, UnknownFormatError
from kg_agent.ingest.kinds import entity_kind
from kg_agent.ingest.known import PageFilter
from kg_agent.ingest.namespaces import DEFAULT_NAMESPACES
from kg_agent.ingest.records import ParsedPage
from kg_agent.ingest.titles import normalize_title
from kg_agent.ingest.wikitext import WikitextParser

__all__ = ["ProgressCallback", "iter_dump_pages", "iter_fragment_pages"]

ProgressCallback = Callable[[int, int], None]
"""``progress(bytes_read, total_bytes)``: bytes of the file as stored (compressed)."""

_ROOT_TAG = re.compile(rb"<(?![?!])([^\s/>]+)")  # first tag that is no <?xml?> or <!...>
_REDIRECT = re.compile(r"\A\s*#\s*REDIRECT\b\s*:?\s*\[\[([^\[\]|\n]*)", re.I)
_PROGRESS_STEP = 1 << 20  # report at most once per MiB read
_SNIFF_BYTES = 64 * 1024
_SNIFF_LIMIT = 8 << 20  # compressed bytes read at most to find the root element
_MAGIC_BZ2 = b"BZh"
_MAGIC_GZIP = b"\x1f\x8b"
_MAGIC_XZ = b"\xfd7zXZ\x00"
_TAIL_OK = re.compile(rb"\s*(?:</mediawiki>\s*)?\Z")


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


class _CountingReader:
    """Wraps the raw file to count the stored bytes consumed, for progress reports."""

    def __init__(self, raw: IO[bytes], total: int, progress: ProgressCallback | None) -> None:
        self._raw = raw
        self.total = total
        self.count = 0
        self._progress = progress
        self._reported = 0

    def read(self, size: int = -1, /) -> bytes:
        data = self._raw.read(size)
        self.count += len(data)
        if self._progress is not None and (
            self.count - self._reported >= _PROGRESS_STEP or not data
        ):
            self._reported = self.count
            self._progress(self.count, self.total)
        return data

    def seekable(self) -> bool:
        return False

    def seek(self, offset: int, whence: int = 0, /) -> int:
        raise OSError("not seekable")

    def close(self) -> None:
        self._raw.close()


def compression_of(head: bytes) -> str | None:
    if head.startswith(_MAGIC_BZ2):
        return "bz2"
    if head.startswith(_MAGIC_GZIP):
        return "gzip"
    if head.startswith(_MAGIC_XZ):
        return "xz"
    return None


def _decompressing(raw: _CountingReader, kind: str | None) -> _Readable:
    if kind == "bz2":
        return bz2.BZ2File(raw)
    if kind == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if kind == "xz":
        return lzma.LZMAFile(cast(IO[bytes], raw))
    return raw


def local_name(tag: str) -> str:
    """Tag name without the export namespace URI, which changes with the dump version."""
    return tag.rpartition("}")[2]


def iter_dump_pages(
    path: str | os.PathLike[str],
    *,
    limit: int | None = None,
    progress: ProgressCallback | None = None,
    keep_link_only_sections: bool = False,
    pages: PageFilter | None = None,
) -> Iterator[ParsedPage]:
    """Yield namespace-0 pages of a MediaWiki XML dump (plain, .bz2, .gz or .xz).

    Articles come with parsed sections; redirects as ``ParsedPage(title, page_id,
    redirect_to=...)``. ``limit`` caps the number of articles (redirects not counted).
    ``progress(bytes_read, total_bytes)`` reports stored bytes consumed, about once
    per MiB and once at the end. The file is checked when this is called (missing,
    not XML, not a MediaWiki export raise at once); damage found later raises
    :class:`SourceError` from the iteration. ``keep_link_only_sections`` keeps
    sections whose text is empty but that hold links (e.g. a table-only list).
    ``pages`` says which pages are parsed, kept or left out (an update's parse).
    """
    name = os.fspath(path)
    if limit is not None and limit < 0:
        raise InvalidArgumentError(f"limit must be >= 0, got {limit}")
    kind, total = check_dump(name)
    return _iter_pages(name, kind, total, limit, progress, keep_link_only_sections, pages)


def check_dump(name: str) -> tuple[str | None, int]:
    """Fail early: the file exists, is (compressed) XML and its root is a MediaWiki export."""
    try:
        total = os.path.getsize(name)
        with open(name, "rb") as fh:
            head = fh.read(_SNIFF_BYTES)
    except FileNotFoundError:
        raise SourceError(name, "no such file") from None
    except IsADirectoryError:
        raise SourceError(name, "is a directory, expected a MediaWiki XML dump") from None
    except OSError as exc:
        raise SourceError(name, f"cannot read: {exc.strerror or exc}") from None
    kind = compression_of(head)
    if kind is not None:
        head = _sniff_decompressed(name, kind)
    if not head.strip():
        raise UnknownFormatError(name, "empty file, expected a MediaWiki XML dump")
    text_start = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not text_start.startswith(b"<"):
        what = f"{kind}-compressed data" if kind else "file"
        raise UnknownFormatError(name, f"{what} is not XML, expected a MediaWiki XML dump")
    root = _ROOT_TAG.search(text_start)
    if root is not None:
        local = local_name(root.group(1).decode("utf-8", "replace")).rpartition(":")[2]
        if local not in ("mediawiki", "page"):
            raise UnknownFormatError(
                name, f"root element is <{local}>, expected <mediawiki> (a MediaWiki XML dump)"
            )
    return kind, total


def _sniff_decompressed(name: str, kind: str) -> bytes:
    """The first decompressed bytes, without raising on a truncated stream.

    A bz2 block is up to 900 kB of output, so up to a few MiB of input may be needed.
    """
    dec: bz2.BZ2Decompressor | lzma.LZMADecompressor | zlib._Decompress
    if kind == "bz2":
        dec = bz2.BZ2Decompressor()
    elif kind == "xz":
        dec = lzma.LZMADecompressor()
    else:
        dec = zlib.decompressobj(wbits=31)
    out = b""
    read = 0
    try:
        with open(name, "rb") as fh:
            while len(out) < 4096 and read < _SNIFF_LIMIT and not getattr(dec, "eof", False):
                chunk = fh.read(_SNIFF_BYTES)
                if not chunk:
                    break
                read += len(chunk)
                out += dec.decompress(chunk)
    except (OSError, EOFError, lzma.LZMAError, zlib.error) as exc:
        raise SourceError(name, f"corrupt {kind} data: {exc}", where="at the start") from None
    if not out:
        raise SourceError(
            name, f"truncated or corrupt {kind} data: no complete block", where="at the start"
        )
    return out


def _iter_pages(
    name: str,
    kind: str | None,
    total: int,
    limit: int | None,
    progress: ProgressCallback | None,
    keep_link_only_sections: bool,
    pages: PageFilter | None = None,
) -> Iterator[ParsedPage]:
    if limit == 0:
        return
    namespaces: dict[str, int] = {}
    parser: WikitextParser | None = None
    pages_seen = 0
    last_title = ""
    articles = 0
    try:
        raw = open(name, "rb")  # noqa: SIM115 - closed in the finally below
    except OSError as exc:
        raise SourceError(name, f"cannot read: {exc.strerror or exc}") from None
    counter = _CountingReader(raw, total, progress)

    def where(position: tuple[int, int] | None = None) -> str:
        parts = []
        if position is not None:
            parts.append(f"line {position[0]}, column {position[1]}")
        if pages_seen:
            parts.append(f"after page {pages_seen} {last_title!r}")
        else:
            parts.append("before the first page")
        stored = "compressed byte" if kind else "byte"
        parts.append(f"{stored} {counter.count:,} of {total:,}")
        return ", ".join(parts)

    try:
        stream = _decompressing(counter, kind)
        root: ET.Element | None = None
        for event, elem in ET.iterparse(stream, events=("start", "end")):
            if event == "start":
                if root is None:
                    root = elem
                    local = local_name(elem.tag)
                    if local not in ("mediawiki", "page"):
                        raise UnknownFormatError(
                            name, f"root element is <{local}>, expected <mediawiki>"
                        )
                continue
            local = local_name(elem.tag)
            if local == "namespace":
                key = elem.get("key")
                if key is not None and elem.text and key.lstrip("-").isdigit():
                    namespaces[elem.text.strip()] = int(key)
                continue
            if local != "page":
                continue
            if parser is None:
                parser = WikitextParser(namespaces, keep_link_only_sections=keep_link_only_sections)
            pages_seen += 1
            page, last_title = page_from_element(elem, parser, namespaces, pages)
            if root is not None and root is not elem:
                del root[:]  # drop handled pages (and siteinfo) so memory stays flat
            if page is None:
                continue
            yield page
            if page.redirect_to is None:
                articles += 1
                if limit is not None and articles >= limit:
                    return
        if progress is not None:
            progress(counter.count, total)
    except ET.ParseError as exc:
        raise SourceError(
            name, f"malformed XML: {parse_error_reason(exc)}", where=where(exc.position)
        ) from None
    except EOFError:
        raise SourceError(
            name,
            f"truncated: the {kind or 'compressed'} stream ends before its end marker",
            where=where(),
        ) from None
    except (OSError, lzma.LZMAError, zlib.error) as exc:
        raise SourceError(name, f"corrupt or unreadable data: {exc}", where=where()) from None
    finally:
        raw.close()


def parse_error_reason(exc: ET.ParseError) -> str:
    """expat's message without its own ``: line X, column Y`` suffix (given in ``where``)."""
    return re.sub(r": line \d+, column \d+$", "", str(exc))


def page_from_element(
    elem: ET.Element,
    parser: WikitextParser,
    namespaces: dict[str, int],
    pages: PageFilter | None = None,
) -> tuple[ParsedPage | None, str]:
    """Turn one ``<page>`` element into a ParsedPage, or None when it is not namespace 0
    (or ``pages`` leaves it out). A page ``pages`` keeps comes without its wikitext
    parsed (``kept``: see :mod:`kg_agent.ingest.known`)."""
    title = ""
    ns: int | None = None
    page_id: int | None = None
    redirect_title: str | None = None
    text = ""
    revision: int | None = None
    sha1 = ""
    for child in elem:
        local = local_name(child.tag)
        if local == "title":
            title = child.text or ""
        elif local == "ns":
            value = (child.text or "").strip()
            ns = int(value) if value.lstrip("-").isdigit() else None
        elif local == "id":
            value = (child.text or "").strip()
            page_id = int(value) if value.isdigit() else None
        elif local == "redirect":
            redirect_title = child.get("title")
        elif local == "revision":
            for part in child:
                name = local_name(part.tag)
                if name == "text":
                    text = part.text or ""
                elif name == "id":
                    value = (part.text or "").strip()
                    revision = int(value) if value.isdigit() else None
                elif name == "sha1":
                    sha1 = (part.text or "").strip()
    elem.clear()
    if ns is None:
        ns = _namespace_of(title, namespaces)
    if ns != 0:
        return None, title
    normalized = normalize_title(title)
    if not normalized:
        return None, title
    if redirect_title is None:
        match = _REDIRECT.match(text)
        redirect_title = match.group(1) if match else None
    if redirect_title is not None:
        target = normalize_title(redirect_title)
        if not target or (pages is not None and not pages.wants_redirects):
            return None, title  # a redirect to nowhere (anchor only): nothing to load
        return ParsedPage(title=normalized, page_id=page_id, redirect_to=target), title
    digest = sha1 or "b2:" + hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()
    if pages is not None:
        decision = pages.decide(normalized, page_id, revision, digest, text)
        if decision == "drop":
            return None, title
        if decision == "keep":
            page = ParsedPage(
                title=normalized, page_id=page_id, revision=revision, digest=digest, kept=True
            )
            return page, title
    result = parser.parse(normalized, text)
    return (
        ParsedPage(
            title=normalized,
            page_id=page_id,
            sections=result.sections,
            categories=result.categories,
            is_disambiguation=result.is_disambiguation,
            revision=revision,
            digest=digest,
            facts=tuple(f for box in result.boxes for f in box.facts),
            kind=entity_kind([box.type for box in result.boxes], result.categories),
        ),
        title,
    )


def _namespace_of(title: str, namespaces: dict[str, int]) -> int:
    """Namespace from a title prefix, for old exports (0.3, lintool's) without ``<ns>``."""
    colon = title.find(":")
    if colon <= 0:
        return 0
    prefix = " ".join(title[:colon].replace("_", " ").split()).lower()
    for name, key in namespaces.items():
        if name.lower() == prefix:
            return key
    return DEFAULT_NAMESPACES.get(prefix, 0)


_PAGE_TAG = b"<page>"
#: A plain dump page's head, up to its first ``<revision>``: what tells a redirect, or a
#: page of another namespace, without reading the rest (see :func:`_skimmed`).
_PAGE_START = re.compile(
    rb"<page>\s*<title>([^<]*)</title>\s*<ns>(-?\d+)</ns>\s*<id>(\d+)</id>\s*"
    rb"(?:<redirect title=\"([^\"<&\t\n\r]*)\"\s*/>\s*)?<revision>"
)
#: :func:`_skimmed`'s answer for a page that yields nothing (another namespace).
_LEFT_OUT = ParsedPage(title="")


def iter_fragment_pages(
    data: bytes,
    namespaces: dict[str, int],
    *,
    source: str,
    where: str,
    last: bool,
    keep_link_only_sections: bool = True,
    pages: PageFilter | None = None,
    locate: Callable[[int], int] | None = None,
) -> Iterator[ParsedPage]:
    """Namespace-0 pages of a run of whole ``<page>`` elements (a work unit), in order.
    ``locate`` turns a page's position in ``data`` into its ``offset``.

    Used by the parallel load (see :mod:`kg_agent.ingest.units`). ``where`` names
    the run in error messages; ``last`` says it ends the dump, so what follows its
    last page must be the closing ``</mediawiki>`` (else the file was cut).
    """
    first = data.find(b"<page>")
    close = data.rfind(b"</page>")
    lead = data[:first] if first >= 0 else data
    if lead.strip():
        raise SourceError(source, "malformed XML: text outside any <page>", where=where)
    if first < 0:
        if last and b"</mediawiki>" not in data:
            raise SourceError(source, "truncated: the dump ends without </mediawiki>", where=where)
        return
    end = close + len(b"</page>") if close >= 0 else len(data)
    tail = data[end:]
    if close < first or not (_TAIL_OK.match(tail) if last else not tail.strip()):
        raise SourceError(
            source, "truncated or malformed XML: the last <page> is not closed", where=where
        )
    if last and b"</mediawiki>" not in tail:
        raise SourceError(source, "truncated: the dump ends without </mediawiki>", where=where)
    parser = WikitextParser(namespaces, keep_link_only_sections=keep_link_only_sections)
    run = _PageRun(data, first, namespaces, parser, pages, locate, source, where)
    if pages is None or not pages.keeps_from_bytes:
        yield from run.parse(first, end)
        return
    # An update's parse: a page the graph has is recognised from its bytes and kept;
    # the pages between kept ones are parsed as a run (see PageFilter.kept_at).
    start = first  # the first page of the run not parsed yet
    at = first
    while 0 <= at < end:
        nxt = data.find(_PAGE_TAG, at + 1, end)
        stop = nxt if nxt >= 0 else end
        page = _skimmed(data, at)
        if page is None:
            kept = pages.kept_at(data, at, stop)
            if kept is not None:
                title, page_id, revision, digest = kept
                offset = locate(at) if locate is not None else None
                page = ParsedPage(
                    title=title,
                    page_id=page_id,
                    revision=revision,
                    digest=digest,
                    kept=True,
                    offset=offset,
                )
        if page is not None:
            if start < at:
                yield from run.parse(start, at)
            if page is not _LEFT_OUT:
                yield page
            start = stop
        at = nxt
    if start < end:
        yield from run.parse(start, end)


def _skimmed(data: bytes, at: int) -> ParsedPage | None:
    """The page at ``data[at:]`` read from its head alone, when that head says all: a
    redirect (its ``<redirect title>``, which :func:`page_from_element` prefers to the
    text) or a page of another namespace (:data:`_LEFT_OUT`); else None.

    Why: an update's parse reads every page of a full dump, and once the pages the graph
    holds are kept from their bytes (:meth:`PageFilter.kept_at`), the redirects (English
    Wikipedia holds more of them than articles) and the other namespaces were most of
    what the XML parser still built trees for. As for a kept page, what is skipped is the XML
    check of a text the graph does not read; a title or target with an entity (``&``)
    goes to the parser."""
    m = _PAGE_START.match(data, at)
    if m is None:
        return None
    if m.group(2) != b"0":
        return _LEFT_OUT
    raw_target = m.group(4)
    if raw_target is None or b"&" in m.group(1):
        return None
    try:
        title = normalize_title(m.group(1).decode("utf-8"))
        target = normalize_title(raw_target.decode("utf-8"))
    except UnicodeDecodeError:  # the XML parser says what is wrong with it
        return None
    if not title or not target:
        return _LEFT_OUT
    return ParsedPage(title=title, page_id=int(m.group(3)), redirect_to=target)


class _PageRun:
    """Pages of one unit parsed with ElementTree, a run of whole pages at a time."""

    def __init__(
        self,
        data: bytes,
        first: int,
        namespaces: dict[str, int],
        parser: WikitextParser,
        pages: PageFilter | None,
        locate: Callable[[int], int] | None,
        source: str,
        where: str,
    ) -> None:
        self.data, self.first, self.namespaces, self.parser = data, first, namespaces, parser
        self.pages, self.locate, self.source, self.where = pages, locate, source, where

    def parse(self, start: int, end: int) -> Iterator[ParsedPage]:
        data = self.data
        wrapped = io.BytesIO(b"<kg-unit>" + data[start:end] + b"</kg-unit>")
        root: ET.Element | None = None
        at = start  # the position of the next <page> (XML text cannot hold a bare one)
        try:
            for event, elem in ET.iterparse(wrapped, events=("start", "end")):
                if event == "start":
                    if root is None:
                        root = elem
                    continue
                if local_name(elem.tag) != "page":
                    continue
                page, _title = page_from_element(elem, self.parser, self.namespaces, self.pages)
                if root is not None:
                    root.clear()
                here, at = at, data.find(_PAGE_TAG, at + 1)
                if page is not None:
                    if self.locate is not None and not page.is_redirect:
                        page = dataclasses.replace(page, offset=self.locate(here))
                    yield page
        except ET.ParseError as exc:
            line, col = exc.position
            line += data.count(b"\n", self.first, start)  # lines of the unit, as one run
            raise SourceError(
                self.source,
                f"malformed XML: {parse_error_reason(exc)}",
                where=f"{self.where}, line {line}, column {col}",
            ) from None

"""Readers for the passage corpora of multi-hop QA benchmarks.

Three layouts are read, each detected from the keys of its first record:

``passages``
    The HippoRAG pooled corpus: a JSON list (or JSON Lines) of ``{"title", "text"}``.
``hotpotqa``
    HotpotQA question records; the corpus is the union of every record's
    ``context`` paragraphs ``[title, [sentences]]`` (the HippoRAG protocol).
``musique``
    MuSiQue question records; the corpus is the union of every record's
    ``paragraphs`` ``{title, paragraph_text}``.

Each distinct title becomes one :class:`ParsedPage` with ``infer_mentions=True``
(passages carry no hyperlinks; the pipeline infers them from title mentions).
The same (title, text) pair is kept once; one title with several different texts
(MuSiQue has them) becomes one page with one section per distinct text, in
first-seen order.

Titles are kept exactly as the source spells them, only stripped of surrounding
whitespace: they are *not* passed through
:func:`~kg_agent.ingest.titles.normalize_title` nor case-normalised, because
benchmark recall is scored on exact title strings.

Both JSON lists and JSON Lines are parsed incrementally (one record at a time,
never the whole document tree). Grouping needs to know which titles recur, so
:func:`iter_passage_pages` reads the file twice: the first pass keeps only a
digest per title, the second yields pages as it goes and buffers only the texts
of titles that recur.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kg_agent.exceptions import SourceError, UnknownFormatError
from kg_agent.ingest.records import ParsedPage, ParsedSection

__all__ = [
    "PASSAGE_FORMATS",
    "detect_passage_format",
    "iter_passage_pages",
    "iter_passages",
]

PASSAGE_FORMATS: tuple[str, ...] = ("passages", "hotpotqa", "musique")

_CHUNK = 1 << 20
# detect_passage_format reads at most this many characters to find the first record.
_DETECT_MAX_CHARS = 16 << 20
_WS = " \t\r\n"
_DECODER = json.JSONDecoder()


# --------------------------------------------------------------------------- records


def _open_text(path: Path) -> Any:
    try:
        return path.open("r", encoding="utf-8-sig")
    except FileNotFoundError:
        raise SourceError(str(path), "no such file") from None
    except IsADirectoryError:
        raise SourceError(str(path), "is a directory, not a file") from None
    except OSError as exc:
        raise SourceError(str(path), f"cannot open: {exc.strerror or exc}") from None


class _JsonRecords:
    """Incremental reader of the top-level records of a JSON list or a JSON Lines file.

    Yields ``(index, where, record)``; ``where`` is a human location ("line 12") for
    error messages. The JSON list is decoded one element at a time with
    ``JSONDecoder.raw_decode`` over a sliding buffer, so memory stays at about one
    chunk plus one record.
    """

    def __init__(self, path: Path, max_chars: int | None = None) -> None:
        self.path = path
        self.max_chars = max_chars

    def _error(self, message: str, where: str | None = None) -> SourceError:
        return SourceError(str(self.path), message, where)

    def __iter__(self) -> Iterator[tuple[int, str, Any]]:
        with _open_text(self.path) as fh:
            try:
                head = fh.read(_CHUNK)
                first = head.lstrip(_WS)[:1]
                if not first:
                    raise self._error("empty file, expected a JSON list or JSON Lines")
                if first == "[":
                    yield from self._iter_list(fh, head)
                elif first == "{":
                    yield from self._iter_lines(fh, head)
                else:
                    raise UnknownFormatError(
                        str(self.path),
                        f"starts with {first!r}, expected a JSON list '[' or JSON Lines '{{'",
                        "line 1",
                    )
            except UnicodeDecodeError as exc:
                raise self._error(f"not UTF-8 text ({exc.reason})") from None

    def _iter_lines(self, fh: Any, head: str) -> Iterator[tuple[int, str, Any]]:
        # Re-join the already read head with the rest of the file, line by line.
        def lines() -> Iterator[str]:
            pending = head
            while True:
                cut = pending.find("\n")
                while cut >= 0:
                    yield pending[: cut + 1]
                    pending = pending[cut + 1 :]
                    cut = pending.find("\n")
                more = fh.read(_CHUNK)
                if not more:
                    if pending:
                        yield pending
                    return
                pending += more

        index = 0
        for lineno, line in enumerate(lines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise self._error(
                    f"invalid JSON: {exc.msg}", f"line {lineno}, column {exc.colno}"
                ) from None
            yield index, f"line {lineno}", record
            index += 1

    def _iter_list(self, fh: Any, head: str) -> Iterator[tuple[int, str, Any]]:
        buf = head
        pos = buf.find("[") + 1
        # Line bookkeeping without rescanning: buf[:mark] holds `lines` newlines more
        # than the part of the file already cut away.
        mark = 0
        lines = 0
        col0 = 1  # column of buf[0]: the cut may fall inside a line
        eof = False

        def where(at: int) -> str:
            nonlocal mark, lines
            if at >= mark:
                lines += buf.count("\n", mark, at)
            else:
                lines -= buf.count("\n", at, mark)
            mark = at
            return f"line {lines + 1}, column {column(at)}"

        def column(at: int) -> int:
            nl = buf.rfind("\n", 0, at)
            return at - nl if nl >= 0 else at + col0

        def refill(need: int = _CHUNK) -> bool:
            nonlocal buf, pos, mark, lines, col0, eof
            if eof:
                return False
            if pos > _CHUNK:
                where(pos)  # move the line mark to pos before cutting
                col0 = column(pos)
                buf = buf[pos:]
                mark = pos = 0
            if self.max_chars is not None and len(buf) > self.max_chars:
                raise self._error(
                    f"first record is larger than {self.max_chars} characters", where(pos)
                )
            more = fh.read(max(need, _CHUNK))
            if not more:
                eof = True
                return False
            buf += more
            return True

        def skip_ws() -> bool:
            """Move to the next non-blank character; False at end of file."""
            nonlocal pos
            while True:
                n = len(buf)
                while pos < n and buf[pos] in _WS:
                    pos += 1
                if pos < n:
                    return True
                if not refill():
                    return False

        index = 0
        if not skip_ws():
            raise self._error("unterminated JSON list", where(pos))
        if buf[pos] == "]":
            return
        while True:
            last_error: tuple[str, int] | None = None
            while True:
                try:
                    record, end = _DECODER.raw_decode(buf, pos)
                    break
                except json.JSONDecodeError as exc:
                    # A record cut by the buffer end fails too: read more (at least
                    # doubling, so a huge record costs O(n)) and try again. The same
                    # error at the same place twice is a real one (an unterminated
                    # string is reported at its start, so only EOF settles that one).
                    error = (exc.msg, exc.pos - pos)
                    real = error == last_error and not exc.msg.startswith("Unterminated")
                    if eof or real:
                        raise self._error(f"invalid JSON: {exc.msg}", where(exc.pos)) from None
                    last_error = error
                    refill(len(buf))
            loc = where(pos)
            pos = end
            yield index, f"record {index}, {loc}", record
            index += 1
            if not skip_ws():
                raise self._error("unterminated JSON list (missing ']')", where(pos))
            sep = buf[pos]
            pos += 1
            if sep == "]":
                if skip_ws():
                    raise self._error("extra data after the JSON list", where(pos))
                return
            if sep != ",":
                raise self._error(f"invalid JSON: expected ',' or ']', got {sep!r}", where(pos - 1))
            if not skip_ws():
                raise self._error("unterminated JSON list", where(pos))


# --------------------------------------------------------------------------- formats


def _keys_format(record: Any) -> str | None:
    if not isinstance(record, dict):
        return None
    if "paragraphs" in record:
        return "musique"
    if "context" in record and ("supporting_facts" in record or "question" in record):
        return "hotpotqa"
    if "title" in record and "text" in record:
        return "passages"
    return None


def detect_passage_format(path: str | os.PathLike[str]) -> str:
    """Name the layout of a passage file: ``"passages"``, ``"hotpotqa"`` or ``"musique"``.

    Reads only the first record (at most 16 MiB of text), so it is cheap on big files.
    """
    p = Path(path)
    records = iter(_JsonRecords(p, max_chars=_DETECT_MAX_CHARS))
    try:
        first = next(records, None)
    finally:
        close = getattr(records, "close", None)
        if close is not None:
            close()
    if first is None:
        raise UnknownFormatError(str(p), "no records, cannot detect the passage format")
    _, where, record = first
    fmt = _keys_format(record)
    if fmt is None:
        keys = sorted(record)[:8] if isinstance(record, dict) else type(record).__name__
        raise UnknownFormatError(
            str(p),
            f"first record does not look like a passage corpus, HotpotQA or MuSiQue (keys: {keys})",
            where,
        )
    return fmt


def _field(path: Path, record: Any, key: str, where: str) -> Any:
    if not isinstance(record, dict):
        raise SourceError(str(path), f"expected a JSON object, got {type(record).__name__}", where)
    try:
        return record[key]
    except KeyError:
        raise SourceError(str(path), f"missing key {key!r}", where) from None


def _string(path: Path, value: Any, what: str, where: str) -> str:
    if not isinstance(value, str):
        raise SourceError(str(path), f"{what} must be a string, got {type(value).__name__}", where)
    return value


def iter_passages(
    path: str | os.PathLike[str], fmt: str | None = None
) -> Iterator[tuple[str, str]]:
    """Yield the raw ``(title, text)`` paragraphs of a file in file order, duplicates kept.

    Titles and texts are stripped; paragraphs whose text is empty are skipped.
    HotpotQA sentences are concatenated as they are: they carry their own leading
    spaces (``"First.", " Second."``), which is also how HippoRAG joins them.
    """
    p = Path(path)
    fmt = detect_passage_format(p) if fmt is None else fmt
    if fmt not in PASSAGE_FORMATS:
        raise UnknownFormatError(
            str(p), f"unknown passage format {fmt!r}; expected one of {', '.join(PASSAGE_FORMATS)}"
        )
    for _, where, record in _JsonRecords(p):
        if fmt == "passages":
            title = _string(p, _field(p, record, "title", where), "title", where)
            text = _string(p, _field(p, record, "text", where), "text", where)
            yield from _checked(p, title, text, where)
        elif fmt == "hotpotqa":
            context = _field(p, record, "context", where)
            if not isinstance(context, list):
                raise SourceError(str(p), "'context' must be a list", where)
            for i, para in enumerate(context):
                at = f"{where}, context[{i}]"
                if not (isinstance(para, list) and len(para) == 2 and isinstance(para[1], list)):
                    raise SourceError(str(p), "expected [title, [sentences]]", at)
                title = _string(p, para[0], "title", at)
                sentences = [_string(p, s, "sentence", at) for s in para[1]]
                yield from _checked(p, title, "".join(sentences), at)
        else:
            paragraphs = _field(p, record, "paragraphs", where)
            if not isinstance(paragraphs, list):
                raise SourceError(str(p), "'paragraphs' must be a list", where)
            for i, para in enumerate(paragraphs):
                at = f"{where}, paragraphs[{i}]"
                title = _string(p, _field(p, para, "title", at), "title", at)
                text = _string(p, _field(p, para, "paragraph_text", at), "paragraph_text", at)
                yield from _checked(p, title, text, at)


def _checked(path: Path, title: str, text: str, where: str) -> Iterator[tuple[str, str]]:
    title = title.strip()
    if not title:
        raise SourceError(str(path), "empty title", where)
    text = text.strip()
    if text:
        yield title, text


# --------------------------------------------------------------------------- pages


@dataclass(slots=True)
class _TitleInfo:
    digest: bytes  # digest of the first text seen
    last: int  # index of the last paragraph with this title
    several: bool = False  # more than one distinct text


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


def _page(title: str, texts: list[str]) -> ParsedPage:
    return ParsedPage(
        title=title,
        sections=tuple(ParsedSection("", (), 1, t) for t in texts),
        infer_mentions=True,
        digest="b2:" + _digest("\x00".join(texts)).hex(),
    )


def iter_passage_pages(
    path: str | os.PathLike[str], fmt: str | None = None, *, limit: int | None = None
) -> Iterator[ParsedPage]:
    """Yield one :class:`ParsedPage` per distinct title of a passage file.

    ``fmt`` is one of :data:`PASSAGE_FORMATS`, detected when ``None``. ``limit`` caps
    the number of pages. A title with one distinct text is yielded where it first
    occurs; a title with several is yielded where it last occurs, its sections in
    first-seen order. Raises :class:`SourceError` (or :class:`UnknownFormatError`)
    naming the file and the record that broke.
    """
    p = Path(path)
    fmt = detect_passage_format(p) if fmt is None else fmt
    if limit is not None and limit <= 0:
        return
    # Pass 1: which titles recur with different texts, and where they last occur.
    info: dict[str, _TitleInfo] = {}
    for i, (title, text) in enumerate(iter_passages(p, fmt)):
        seen = info.get(title)
        if seen is None:
            info[title] = _TitleInfo(_digest(text), i)
        else:
            seen.last = i
            if not seen.several and seen.digest != _digest(text):
                seen.several = True
    # Pass 2: yield single-text titles at once, buffer the texts of the others.
    emitted = 0
    done: set[str] = set()
    pending: dict[str, tuple[list[str], set[bytes]]] = {}
    for i, (title, text) in enumerate(iter_passages(p, fmt)):
        t = info.get(title)
        if t is None:
            raise SourceError(str(p), "file changed while it was being read")
        if not t.several:
            if title in done:
                continue
            done.add(title)
            page = _page(title, [text])
        else:
            texts, digests = pending.setdefault(title, ([], set()))
            d = _digest(text)
            if d not in digests:
                digests.add(d)
                texts.append(text)
            if i != t.last:
                continue
            del pending[title]
            page = _page(title, texts)
        yield page
        emitted += 1
        if limit is not None and emitted >= limit:
            return

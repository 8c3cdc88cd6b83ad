"""Pages an update already has: what lets its parse skip the wikitext of unchanged pages.

Reading a dump's XML costs about a tenth of parsing its wikitext (0.5 against 6 s per
10,000 articles on one core), and in an update almost every page is unchanged. So the
update gives its parse workers the key of every article the graph holds (title, page id,
revision and digest hashed to 64 bits, a sorted array memory-mapped by every worker: 8
bytes a page, 55 MB for the English Wikipedia) and a worker *keeps* a page whose key is
there: it writes the page's article row, marked ``kept``, without its sections, links
and categories. A page of the plain dump shape is recognised from its bytes
(:meth:`PageFilter.kept_at`), without building its XML tree, which is most of what
reading it costs once its wikitext is skipped.

What an update later needs of a kept page is read a second time, alone (its bytes, or
its bz2 stream: :func:`kg_agent.ingest.parse.reparse_pages`): the pages it must rewrite
(the graph changed under them since the parse), and of the pages whose graph edges say
they may link through a redirect that changed (every article linking to the redirect's
old target), those whose text does: :func:`link_targets` finds, without parsing, every
title the parser could read as a link, and more. The digest is the dump's ``<sha1>``,
so a kept page is one whose text the graph was built from. A kept row carries the
page's own title, id, revision and digest, not its key, so the diff still sees a page
kept by mistake (a 64-bit collision, a graph changed since the parse) as changed, and
it is read again.
"""

from __future__ import annotations

import hashlib
import html
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from kg_agent.ingest.titles import normalize_title
from kg_agent.ingest.wikitext import LINK_TEMPLATES

__all__ = [
    "READ_EVERY_PAGE",
    "KnownPages",
    "PageFilter",
    "link_targets",
    "page_key",
    "title_key",
    "write_keys",
]

#: What a worker does with a page: parse its wikitext, keep its article row only, or
#: leave it out (a reparse reads only the pages it was asked for).
Decision = Literal["parse", "keep", "drop"]


def page_key(title: str, page_id: int | None, revision: int | None, digest: str | None) -> int:
    """The page's identity as the diff compares it, in 64 bits (unsigned)."""
    raw = f"{title}\x1f{page_id}\x1f{revision}\x1f{digest or ''}".encode()
    return int.from_bytes(hashlib.blake2b(raw, digest_size=8).digest(), "little")


def title_key(title: str) -> int:
    """A title in 64 bits (unsigned)."""
    return int.from_bytes(hashlib.blake2b(title.encode(), digest_size=8).digest(), "little")


#: The head of a plain dump page: title, namespace, page id, then its revision's id (a
#: ``<redirect>`` between them, or any other shape, does not match).
_PAGE_HEAD = re.compile(
    rb"<page>\s*<title>([^<]*)</title>\s*<ns>(-?\d+)</ns>\s*<id>(\d+)</id>\s*"
    rb"<revision>\s*<id>(\d+)</id>"
)
_WS = re.compile(r"[\s_]+")
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)  # as the parser drops them
_LINK_OPEN = re.compile(r"\[\[([^\[\]{}|\n]*)")
_TEMPLATE_OPEN = re.compile(r"\{\{([^{}|]*)\|")
_PARAM_END = re.compile(r"\||\}\}|\{\{")


def link_targets(text: str) -> set[str]:
    """Every title ``text`` may link to, found without parsing it: a superset of what
    :class:`~kg_agent.ingest.wikitext.WikitextParser` reads as links (``[[X…`` anywhere
    outside comments, and every parameter of the hatnote templates the parser reads,
    ``{{main|X}}`` and the like), normalised as the parser normalises them. A title written any
    other way is not a link to it (``tests/unit/ingest/test_known.py`` checks the
    superset on every page of the shared dumps)."""
    out: set[str] = set()
    if "<!--" in text:
        text = _COMMENT.sub("", text)
    for m in _LINK_OPEN.finditer(text):
        _add(out, m.group(1))
    for m in _TEMPLATE_OPEN.finditer(text):
        name = _WS.sub(" ", m.group(1)).strip().lower()
        if name.startswith("template:"):
            name = name[9:].lstrip()
        if name in LINK_TEMPLATES:
            _add_params(out, text, m.end())
    return out


def _add_params(out: set[str], text: str, pos: int) -> None:
    """The parameters of the template whose first one starts at ``pos``; a nested
    template is part of its parameter (``{{see also|A{{!}}B|C}}``)."""
    start, depth = pos, 0
    for m in _PARAM_END.finditer(text, pos):
        token = m.group()
        if token == "{{":
            depth += 1
        elif depth:
            if token == "}}":
                depth -= 1
        else:
            _add(out, text[start : m.start()])
            if token == "}}":
                return
            start = m.end()
    _add(out, text[start:])


def _add(out: set[str], raw: str) -> None:
    target = raw.strip().lstrip(":").strip()
    if "=" in target:  # a named parameter's value may be a title too
        _add(out, target.split("=", 1)[1])
    if "&" in target:
        target = html.unescape(target)
    if "%" in target:
        from urllib.parse import unquote

        target = unquote(target)
    title = normalize_title(target)
    if title:
        out.add(title)


def write_keys(path: str | os.PathLike[str], keys: Iterable[int] | Any) -> int:
    """Write ``keys`` (ints, or a numpy array of them) sorted and once each (``.npy``,
    by rename); returns how many there are."""
    import numpy as np

    array = np.unique(keys if isinstance(keys, np.ndarray) else np.fromiter(keys, np.uint64))
    target = Path(path)
    tmp = target.with_name(target.name + ".tmp.npy")
    np.save(tmp, array)
    tmp.replace(target)
    return int(array.size)


class KnownPages:
    """A sorted key array on disk, memory-mapped (the page cache shares it between workers)."""

    def __init__(self, path: str) -> None:
        import numpy as np

        self._np = np
        self.keys: Any = np.load(path, mmap_mode="r")

    def __contains__(self, key: int) -> bool:
        keys = self.keys
        if keys.size == 0:
            return False
        k = self._np.uint64(key)
        i = int(self._np.searchsorted(keys, k))
        return bool(i < keys.size and keys[i] == k)


def _load(path: str) -> KnownPages:
    """One mapping per worker process and file (a worker parses many units); a file
    written again (a redone diff's reparse) is mapped again."""
    st = os.stat(path)
    return _mapped(path, st.st_ino, st.st_mtime_ns)


@lru_cache(maxsize=4)
def _mapped(path: str, inode: int, mtime_ns: int) -> KnownPages:
    return KnownPages(path)


@dataclass(frozen=True)
class PageFilter:
    """Which pages of a unit a worker parses (each field the path of a key file).

    ``known``: pages kept, not parsed. A reparse (``only`` set) parses the pages of
    ``only``, and those of ``check`` whose :func:`link_targets` hold a title of
    ``titles``; redirects and every other page are left out."""

    known: str | None = None
    only: str | None = None
    check: str | None = None
    titles: str | None = None

    @property
    def wants_redirects(self) -> bool:
        return self.only is None

    def _keys(self, path: str) -> KnownPages:
        """The key file at ``path``, looked up once per filter (a filter is one unit's)
        rather than at every page: a cache in the instance, not part of its value."""
        maps: dict[str, KnownPages] = self.__dict__.setdefault("_maps", {})
        found = maps.get(path)
        if found is None:
            found = maps[path] = _load(path)
        return found

    def decide(
        self, title: str, page_id: int | None, revision: int | None, digest: str, text: str
    ) -> Decision:
        key = page_key(title, page_id, revision, digest)
        if self.only is not None:
            if key in self._keys(self.only):
                return "parse"
            if self.check is not None and self.titles is not None and key in self._keys(self.check):
                titles = self._keys(self.titles)
                if any(title_key(t) in titles for t in link_targets(text)):
                    return "parse"
            return "drop"
        if self.known is not None and key in self._keys(self.known):
            return "keep"
        return "parse"

    @property
    def keeps_from_bytes(self) -> bool:
        """Whether :meth:`kept_at` may be asked: an update's parse, which keeps pages."""
        return self.known is not None and self.only is None

    def kept_at(self, data: bytes, start: int, stop: int) -> tuple[str, int, int, str] | None:
        """(title, page id, revision, digest) of the page ``data[start:stop]`` when it is
        one this filter keeps, read from its bytes without building its XML tree.

        Why: with the wikitext skipped, building each page's element tree was most of an
        update's parse (ElementTree reads ~150 MB/s a core; these finds, ~800). Only the
        plain shape of a dump page is read here (title, ns 0, id, one revision with its
        id and a ``<sha1>``, no ``<redirect>``, no entity in the title); any other page,
        and any page not kept, returns None and is parsed as before. What is skipped is
        the XML check of a page whose text the graph already holds (same ``<sha1>``)."""
        m = _PAGE_HEAD.match(data, start, stop)
        if m is None or m.group(2) != b"0":
            return None
        title_raw = m.group(1)
        if b"&" in title_raw:
            return None
        rev_end = data.find(b"</revision>", m.end(), stop)
        if rev_end < 0 or data.find(b"<revision", rev_end, stop) >= 0:
            return None
        if not data[rev_end + 11 : stop].strip().startswith(b"</page>"):
            return None
        sha = data.rfind(b"<sha1>", m.end(), rev_end)
        if sha < 0:
            return None
        digest = data[sha + 6 : data.find(b"</sha1>", sha, rev_end)].strip()
        if not digest or not digest.isalnum():
            return None
        try:
            title = normalize_title(title_raw.decode("utf-8"))
        except UnicodeDecodeError:  # the XML parser says what is wrong with it
            return None
        page_id, revision = int(m.group(3)), int(m.group(4))
        sha1 = digest.decode("ascii")
        if not title or page_key(title, page_id, revision, sha1) not in self._keys(str(self.known)):
            return None
        return title, page_id, revision, sha1

    def to_job(self) -> dict[str, str | None]:
        return {"known": self.known, "only": self.only, "check": self.check, "titles": self.titles}

    @classmethod
    def from_job(cls, job: dict[str, Any]) -> PageFilter | None:
        fields = [job.get(k) for k in ("known", "only", "check", "titles")]
        return cls(*fields) if any(fields) else None


#: Meta key set by ``kg-agent delete`` when it removes redirects into an article that
#: stays a stub: the graph's links through them still point at the stub, and no record
#: says through which title, so the next update cannot tell which kept pages to read
#: again. It reads every page instead, and clears the key once its write committed.
READ_EVERY_PAGE = "update_reads_every_page"

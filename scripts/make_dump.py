#!/usr/bin/env python3
"""Generate large, realistic MediaWiki ``pages-articles`` XML dumps from real English text.

Why: the loader must be benchmarked and tested at scales (10^5..10^6 articles, GBs of
XML) that no shared sample reaches, on text whose markup costs what real markup costs.
Each synthetic article is a real lead plus real sections (templates, refs, tables, lists,
files kept verbatim) drawn from different real articles of the English samples in
``../shared/data/wiki`` (read at run time, never copied). Every ``[[link]]`` target is
rewritten to a synthetic title drawn from a Zipf law over a random permutation of article
ranks (about 7% red links, 5% via a redirect), labels keep the real prose; the real
categories are replaced by 2-6 Zipf-drawn ones. About 0.9 redirects per article and 1%
non-article pages (Wikipedia:, Template:, Category:) are interleaved in page-id order.
Output is byte-for-byte deterministic for a given ``--seed`` and ``--articles``.

Formats: ``xml`` (plain ``synthwiki-N-pages-articles.xml``) and ``multistream`` (laid out
like Wikimedia's: a header stream with ``<mediawiki>`` and ``<siteinfo>``, one bz2 stream
per 100 pages, a footer stream, and a bz2 ``OFFSET:PAGE_ID:TITLE`` index whose titles are
written as they appear in the XML, i.e. XML-escaped). ``--from-xml`` repacks an existing
dump (plain, .bz2, .gz, .xz) into that multistream layout, pages copied byte for byte.

    .venv/bin/python scripts/make_dump.py --articles 100000 --out /tmp/synth
    .venv/bin/python scripts/make_dump.py --articles 2000 --out /tmp/synth --formats xml \\
        --seed 1 --avg-bytes 6000 --summary /tmp/synth/summary.json
    .venv/bin/python scripts/make_dump.py --from-xml dump.xml.bz2 --out /tmp/ms

Tests can import it with importlib and call :func:`generate` / :func:`repack_multistream`
(no ``from __future__ import annotations`` on purpose: dataclasses with string annotations
fail when the module is loaded by importlib without being put in ``sys.modules``).
Cost: about 2.5 s per 10,000 articles (95 MB of XML) on one core for ``xml``; ``multistream``
adds bz2 at about 10 MB/s per worker process.
"""

import argparse
import bz2
import gzip
import hashlib
import itertools
import json
import lzma
import math
import multiprocessing
import os
import random
import re
import sys
import time
import unicodedata
import xml.etree.ElementTree as ET
from bisect import bisect_right
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.pool import AsyncResult, Pool
from pathlib import Path
from typing import IO, Any, cast

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = ROOT.parent / "shared" / "data" / "wiki"
MAIN_SAMPLE = "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
SAMPLES = (
    MAIN_SAMPLE,
    "enwiki-table-markup.xml.bz2",
    "enwiki-20120104-id12.xml",
    "enwiki-20120104-id39.xml",
    "enwiki-20120104-id290.xml",
)
FORMATS = ("xml", "multistream")
PAGES_PER_STREAM = 100
FOOTER = b"</mediawiki>\n"  # what MediaWiki's XmlDumpWriter::closeStream() writes

RED_LINK_SHARE = 0.07
REDIRECT_LINK_SHARE = 0.05
REDIRECTS_PER_ARTICLE = 0.9
OTHER_PAGE_SHARE = 0.01
ZIPF_EXPONENT = 0.8  # top article ~1% of links at 1M (1.1 gave 12%: far above real Wikipedia)
DISAMBIGUATION_SHARE = 0.02  # articles that are a real disambiguation page, links rewritten

_H2 = re.compile(r"^==(?!=)[^\n]*?[^=\n]==[ \t]*$", re.M)
_HEADING = re.compile(r"^(={2,6})[^\n=][^\n]*?\1[ \t]*$", re.M)
_CATEGORY = re.compile(r"\[\[\s*[Cc]ategory\s*:([^\[\]|\n]*)(?:\|[^\[\]\n]*)?\]\][ \t]*\n?")
_DEFAULTSORT = re.compile(r"\{\{\s*DEFAULTSORT\s*:[^{}\n]*\}\}[ \t]*\n?")
_LINK = re.compile(r"\[\[([^\[\]|\n]*)(?:\|([^\[\]\n]*))?\]\]")
_BLANK = re.compile(r"\n[ \t]*\n+")
_REF_OPEN = re.compile(r"<ref(?:\s[^>]*)?(?<!/)>", re.I)
_REF_CLOSE = re.compile(r"</ref\s*>", re.I)
_BOLD = re.compile(r"'''([^'\n\[\]{}]{1,120}?)'''")
_TEMPLATE_NAME = re.compile(r"\{\{\s*([^{}|\n#:<>\[\]]{2,60}?)\s*(?=[|}\n])")
_DISAMBIG = re.compile(
    r"\{\{\s*(?:disambiguation|disambig|dab|hndis|geodis|set index)\s*[|}]", re.I
)
_PLACE = re.compile(r"\b(?:in|of|from) ((?:the )?[A-Z][a-z]+(?: [A-Z][a-z]+)?)$")
_PROSE_LINE = re.compile(r"^(?:''|\[\[(?![Ff]ile:|[Ii]mage:)|[^\W_]|[\"(])", re.M)
_PAREN = re.compile(r"\s*\([^()]*\)$")
_TITLE_BAD = re.compile(r"[#<>\[\]|{}\x00-\x1f\x7f]")
_PERSON = re.compile(r"^([A-Z][a-z]{2,12})(?: [A-Z]\.)? ([A-Z][a-z]{2,14}(?:-[A-Z][a-z]{2,12})?)$")
_SIMPLE_BASE = re.compile(r"^[A-Z][A-Za-z'\-]+(?: [A-Z][A-Za-z'\-]+){0,2}$")
_TAIL_KINDS = {
    "see also": "see_also",
    "references": "refs",
    "notes": "refs",
    "footnotes": "refs",
    "citations": "refs",
    "notes and references": "refs",
    "references and notes": "refs",
    "sources": "refs",
    "works cited": "refs",
    "further reading": "further",
    "bibliography": "further",
    "external links": "external",
    "external link": "external",
}


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_TAIL_ORDER = (("see_also", 0.45), ("refs", 0.88), ("further", 0.15), ("external", 0.6))
_INTERWIKI = frozenset(
    _words(
        "wikt wiktionary w wikipedia s wikisource q wikiquote b wikibooks n wikinews v "
        "wikiversity voy wikivoyage species wikispecies d wikidata c commons m meta mw "
        "mediawikiwiki foundation wmf outreach incubator phab doi google imdbname imdbtitle "
        "iarchive arxiv wp wt image project cat special media"
    )
)
_NAMESPACE = re.compile(rb'<namespace key="-?\d+"[^>]*>([^<]+)<')
_LANG_PREFIX = re.compile(r"^[a-z]{2,3}(?:-[a-z0-9]{1,8})*$")
_COMMON_TITLES = _words(
    "The A I It He She We You They In On At Of To And Be Do Go No Up Is As This That Who "
    "What One Two 1 2 3 10 100 Film Album Song Band Music Book Game Art War Love Time "
    "Day Man Life Home World People Water Earth Sun Moon Star Red Gold Iron Rock House "
    "City King New Yes May March US UK TV Paris London Rome Berlin China Turkey Georgia "
    "Jordan Chad Mercury Jaguar Apple Python Amazon Will Can Bill Mark Rose Ford Bush "
    "John Dog Cat"
)
_FIRST_NAME_STOP = frozenset(
    _words(
        "The New North South East West United Saint San Santa Los Las Le La El Al De Du Van "
        "Von World National International American British Royal General Great Old Upper "
        "Lower Greek Roman Latin French German English Spanish Italian Russian Chinese "
        "Japanese Central Western Eastern Northern Southern Early Late Modern Ancient Black "
        "White"
    )
)
_FILM_LIKE = (
    "film",
    "band",
    "album",
    "song",
    "novel",
    "TV series",
    "video game",
    "company",
    "magazine",
    "play",
    "ship",
    "musical",
    "newspaper",
    "manga",
    "opera",
    "poem",
    "painting",
    "horse",
    "river",
    "mountain",
    "surname",
    "given name",
    "mythology",
    "software",
    "programming language",
    "board game",
    "comics",
    "soundtrack",
    "EP",
    "single",
)
_PERSON_LIKE = (
    "footballer",
    "politician",
    "actor",
    "actress",
    "singer",
    "musician",
    "writer",
    "painter",
    "cricketer",
    "baseball",
    "basketball",
    "ice hockey",
    "composer",
    "architect",
    "bishop",
    "journalist",
    "scientist",
    "poet",
    "director",
    "rugby union",
    "athlete",
    "artist",
)
_PLACE_SUFFIX = (
    "River",
    "County",
    "Township",
    "railway station",
    "High School",
    "Airport",
    "Bridge",
    "Castle",
    "Island",
    "Valley",
    "Lake",
    "Park",
    "Creek",
    "Church",
    "Hall",
    "Street",
    "Museum",
    "Dam",
    "Bay",
    "Hills",
    "Square",
    "Tower",
    "Abbey",
    "Glacier",
    "Peninsula",
)
_PLACE_PREFIX = ("Mount", "Lake", "Fort", "Port", "Cape", "St.", "Saint")
_OF_PREFIX = (
    "List of",
    "History of",
    "Geography of",
    "Battle of",
    "University of",
    "Siege of",
    "Treaty of",
    "Economy of",
    "Politics of",
    "Culture of",
    "Timeline of",
    "Outline of",
    "Demographics of",
    "Flag of",
    "Coat of arms of",
    "Music of",
    "Architecture of",
)
_STATES = (
    "Ohio",
    "Texas",
    "Illinois",
    "Ontario",
    "New South Wales",
    "Virginia",
    "Kansas",
    "Oregon",
    "Bavaria",
    "Queensland",
    "Wisconsin",
    "Georgia",
    "Kentucky",
    "Quebec",
    "Victoria",
)
_ROMAN = ("II", "III", "IV", "V", "VI")
_EXTRA_FIRST = _words(
    "James John Robert Michael William David Richard Joseph Thomas Charles Mary Patricia "
    "Jennifer Linda Elizabeth Barbara Susan Jessica Sarah Karen Anna Maria Peter Paul "
    "George Henry Edward Frederick Louis Hans Karl Pierre Jean Giovanni Carlos Juan Ivan "
    "Olga"
)
_RCAT = {
    "lower": "R from other capitalisation",
    "paren": "R from unnecessary disambiguation",
    "acronym": "R from acronym",
    "the": "R from alternative name",
    "nothe": "R from alternative name",
    "surname": "R from surname",
    "sortname": "R from sort name",
    "misspell": "R from misspelling",
    "ascii": "R from title without diacritics",
    "amp": "R from modification",
    "plural": "R from plural",
    "hyphen": "R from modification",
    "short": "R from short name",
    "alt": "R from alternative name",
}


# --------------------------------------------------------------------------- material


@dataclass(frozen=True, slots=True)
class _Block:
    """A top-level paragraph-like chunk; text = head + t0 + tails[0] + t1 + tails[1] ...

    ``head`` ends with ``[[`` and each tail holds ``|label]]`` plus the literal text up to
    the next rewritten link (and that link's ``[[``), so assembly only interleaves targets.
    """

    head: str
    tails: tuple[str, ...]
    size: int
    prose: bool  # has a line of running text (not only templates, tables, files, lists)


@dataclass(frozen=True, slots=True)
class _Unit:
    heading: str  # the heading line as written ("" for the lead / a group's intro)
    blocks: tuple[_Block, ...]


@dataclass(frozen=True, slots=True)
class _Group:
    """A level-2 section with its subsections (or a lead), from one real article."""

    source: int
    units: tuple[_Unit, ...]


@dataclass
class Material:
    """Everything taken from the real samples; small (a few MB)."""

    header: bytes
    leads: list[_Group] = field(default_factory=list)
    body: list[_Group] = field(default_factory=list)
    tails: dict[str, list[_Group]] = field(default_factory=dict)
    blocks: list[_Block] = field(default_factory=list)  # prose blocks, for project pages
    disambiguations: list[list[_Group]] = field(default_factory=list)  # used whole
    places: list[str] = field(default_factory=list)  # "Algeria", "the United States", ...
    real_titles: list[str] = field(default_factory=list)
    link_targets: list[str] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    templates: list[str] = field(default_factory=list)
    users: list[tuple[str, str]] = field(default_factory=list)
    ips: list[str] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)
    article_bytes: int = 0
    articles: int = 0


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


def _open_any(path: str | os.PathLike[str]) -> IO[bytes]:
    """Open plain, bz2 (also multistream), gzip or xz by magic bytes."""
    with open(path, "rb") as fh:
        head = fh.read(6)
    if head.startswith(b"BZh"):
        return bz2.open(path, "rb")
    if head.startswith(b"\x1f\x8b"):
        return cast(IO[bytes], gzip.open(path, "rb"))
    if head.startswith(b"\xfd7zXZ\x00"):
        return lzma.open(path, "rb")
    return open(path, "rb")


def _norm_title(raw: str) -> str:
    """MediaWiki title form: no anchor, underscores as spaces, first letter upper-case."""
    title = " ".join(raw.split("#", 1)[0].replace("_", " ").split())
    if title.startswith(":"):
        title = title[1:].lstrip()
    return title[:1].upper() + title[1:]


def _is_namespaced(target: str, namespaces: frozenset[str]) -> bool:
    """True for File:/Category:/wikt:/de: ... links, which are left as written."""
    colon = target.find(":")
    if colon < 0:
        return False
    if colon == 0:
        return True
    prefix = target[:colon].strip()
    low = " ".join(prefix.replace("_", " ").split()).lower()
    return low in namespaces or low in _INTERWIKI or bool(_LANG_PREFIX.match(prefix))


def _good_title(title: str, namespaces: frozenset[str]) -> bool:
    return (
        0 < len(title) <= 120
        and not _TITLE_BAD.search(title)
        and not title[0].isspace()
        and not _is_namespaced(title, namespaces)
        and title not in (".", "..")
    )


def _split_blocks(text: str) -> list[str]:
    """Split at blank lines where templates, tables, refs and comments are all closed."""
    out: list[str] = []
    pending = ""
    for piece in _BLANK.split(text):
        pending = f"{pending}\n\n{piece}" if pending else piece
        depth = (
            pending.count("{{")
            - pending.count("}}")
            + pending.count("{|")
            - pending.count("|}")
            + pending.count("<!--")
            - pending.count("-->")
            + len(_REF_OPEN.findall(pending))
            - len(_REF_CLOSE.findall(pending))
            + pending.count("<gallery")
            - pending.count("</gallery>")
        )
        if depth <= 0:
            if pending.strip():
                out.append(pending.strip("\n"))
            pending = ""
    if pending.strip():
        out.append(pending.strip("\n"))
    return out


def _tokenize(text: str, namespaces: frozenset[str], targets: dict[str, None]) -> _Block:
    literals: list[str] = []
    links: list[str] = []
    last = 0
    for m in _LINK.finditer(text):
        raw_target, label = m.group(1), m.group(2)
        target = raw_target.strip()
        if (
            not target
            or target.startswith("#")
            or "{" in target
            or "<" in target
            or _is_namespaced(target, namespaces)
        ):
            continue
        page, _, anchor = target.partition("#")
        if label is None:
            label = raw_target
        elif not label.strip():
            label = _PAREN.sub("", page)  # pipe trick: [[Foo (bar)|]] shows "Foo"
        norm = _norm_title(page)
        if norm and _good_title(norm, namespaces):
            targets.setdefault(norm)
        literals.append(text[last : m.start()])
        links.append((f"#{anchor}" if anchor else "") + f"|{label}]]")
        last = m.end()
    literals.append(text[last:])
    if not links:
        return _Block(text, (), len(text), bool(_PROSE_LINE.search(text)))
    head = literals[0] + "[["
    tails = tuple(
        links[j] + literals[j + 1] + ("[[" if j + 1 < len(links) else "") for j in range(len(links))
    )
    size = len(head) + sum(map(len, tails)) + 16 * len(tails)
    return _Block(head, tails, size, bool(_PROSE_LINE.search(text)))


def _mark_bold_title(lead: str) -> str:
    """Replace the lead's first bold title-like span with \\x01, filled in at assembly."""
    for m in _BOLD.finditer(lead):
        line_start = lead.rfind("\n", 0, m.start()) + 1
        if lead[line_start : line_start + 1] in ("|", "{", "!", "*", ":", "#", "="):
            continue
        before = lead[: m.start()]
        if before.count("{{") != before.count("}}") or len(_REF_OPEN.findall(before)) > len(
            _REF_CLOSE.findall(before)
        ):
            continue
        return lead[: m.start()] + "'''\x01'''" + lead[m.end() :]
    return lead


def _units(text: str, namespaces: frozenset[str], targets: dict[str, None]) -> list[_Unit]:
    """A section's text (starting with its heading line, or a lead) split into units."""
    units: list[_Unit] = []
    starts = [m.start() for m in _HEADING.finditer(text)]
    bounds = [0, *starts] if not starts or starts[0] != 0 else starts
    for i, start in enumerate(bounds):
        end = bounds[i + 1] if i + 1 < len(bounds) else len(text)
        chunk = text[start:end]
        heading = ""
        if _HEADING.match(chunk):
            heading, _, chunk = chunk.partition("\n")
            heading = heading.rstrip()
        blocks = tuple(_tokenize(b, namespaces, targets) for b in _split_blocks(chunk))
        if heading or blocks:
            units.append(_Unit(heading, blocks))
    return units


def load_material(data_dir: str | os.PathLike[str] = DATA_DIR) -> Material:
    """Parse the real English samples into reusable leads, sections and name pools."""
    data = Path(data_dir)
    with _open_any(data / MAIN_SAMPLE) as fh:
        head = fh.read(1 << 16)
    first = head.find(b"<page>")
    if first < 0:
        raise SystemExit(f"{data / MAIN_SAMPLE}: no <page> in the first 64 KiB")
    material = Material(header=head[: head.rfind(b"\n", 0, first) + 1])
    ns_names = {m.group(1).decode().lower() for m in _NAMESPACE.finditer(head)}
    namespaces = frozenset(ns_names | {"image", "wp", "project"})
    targets: dict[str, None] = {}
    titles: dict[str, None] = {}
    categories: dict[str, None] = {}
    templates: dict[str, None] = {}
    users: dict[tuple[str, str], None] = {}
    ips: dict[str, None] = {}
    comments: dict[str, None] = {}
    source = 0
    for name in SAMPLES:
        path = data / name
        if not path.exists():
            raise SystemExit(f"missing real sample {path} (see ../shared/data/SOURCES.md)")
        with _open_any(path) as fh:
            for _event, elem in ET.iterparse(fh):
                if _local(elem.tag) != "page":
                    continue
                title, ns, redirect, text = "", None, False, ""
                for child in elem:
                    tag = _local(child.tag)
                    if tag == "title":
                        title = child.text or ""
                    elif tag == "ns":
                        ns = (child.text or "").strip()
                    elif tag == "redirect":
                        redirect = True
                    elif tag == "revision":
                        for part in child.iter():
                            ptag = _local(part.tag)
                            if ptag == "text":
                                text = part.text or ""
                            elif ptag == "comment" and part.text and len(part.text) < 200:
                                comments.setdefault(part.text)
                            elif ptag == "ip" and part.text:
                                ips.setdefault(part.text)
                            elif ptag == "contributor":
                                user = part.find("{*}username")
                                uid = part.find("{*}id")
                                if user is not None and uid is not None and user.text:
                                    users.setdefault((user.text, uid.text or "0"))
                elem.clear()
                if ns is None:
                    ns = "1" if _is_namespaced(title, namespaces) else "0"
                if ns != "0":
                    continue
                norm = _norm_title(title)
                if _good_title(norm, namespaces):
                    titles.setdefault(norm)
                if redirect or text.lstrip()[:9].upper() == "#REDIRECT":
                    continue
                material.articles += 1
                material.article_bytes += len(text.encode("utf-8"))
                _add_article(material, source, text, namespaces, targets, categories, templates)
                source += 1
    material.real_titles = list(titles)
    places: dict[str, None] = {}
    for name in itertools.chain(categories, targets, titles):
        m = _PLACE.search(name)
        if m:
            places.setdefault(m.group(1))
    material.places = list(places)
    material.link_targets = [t for t in targets if t not in titles]
    material.categories = list(categories)
    material.templates = list(templates)
    material.users = list(users)
    material.ips = list(ips)
    material.comments = list(comments)
    return material


def _add_article(
    material: Material,
    source: int,
    text: str,
    namespaces: frozenset[str],
    targets: dict[str, None],
    categories: dict[str, None],
    templates: dict[str, None],
) -> None:
    for m in _CATEGORY.finditer(text):
        cat = _norm_title(m.group(1))
        if cat and not _TITLE_BAD.search(cat):
            categories.setdefault(cat)
    for m in _TEMPLATE_NAME.finditer(text):
        name = _norm_title(m.group(1))
        if name and not name.isupper() and not _TITLE_BAD.search(name):
            templates.setdefault(name)
    text = _DEFAULTSORT.sub("", _CATEGORY.sub("", text)).replace("\x01", "")
    starts = [m.start() for m in _H2.finditer(text)]
    lead = text[: starts[0]] if starts else text
    lead_units = _units(_mark_bold_title(lead), namespaces, targets)
    disambiguation = _DISAMBIG.search(text) is not None
    whole: list[_Group] = []
    if lead_units and lead_units[0].blocks:
        whole.append(_Group(source, (lead_units[0],)))
        if not disambiguation:
            material.leads.append(whole[0])
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(text)
        units = _units(text[start:end], namespaces, targets)
        if not units or not units[0].heading:
            continue
        group = _Group(source, tuple(units))
        if disambiguation:
            whole.append(group)
            continue
        name = units[0].heading.strip("= \t").lower()
        kind = _TAIL_KINDS.get(name)
        if kind is not None:
            material.tails.setdefault(kind, []).append(group)
        elif any(u.blocks for u in units):
            material.body.append(group)
            material.blocks.extend(
                b for u in units for b in u.blocks if not b.tails and 200 < b.size < 3000
            )
    if disambiguation and whole:
        material.disambiguations.append(whole)


# --------------------------------------------------------------------------- titles


def _zipf_cdf(n: int, exponent: float) -> np.ndarray[Any, np.dtype[np.float64]]:
    weights = np.arange(1, n + 1, dtype=np.float64) ** -exponent
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    return cdf


class _TitleMaker:
    """Unique realistic titles: real ones first (mixed in), then deterministic shapes."""

    def __init__(self, material: Material, rng: random.Random) -> None:
        self.rng = rng
        self.seen: set[str] = set()
        real = list(dict.fromkeys(material.real_titles + material.link_targets))
        rng.shuffle(real)
        self.real: Iterator[str] = iter(real)
        self.real_left = len(real)
        simple = [t for t in real if _SIMPLE_BASE.match(t) and len(t) <= 30]
        self.bases = simple or ["Alpha", "Beta"]
        firsts: dict[str, None] = dict.fromkeys(_EXTRA_FIRST)
        lasts: dict[str, None] = {}
        for t in real:
            m = _PERSON.match(t)
            if m and m.group(1) not in _FIRST_NAME_STOP:
                firsts.setdefault(m.group(1))
                lasts.setdefault(m.group(2))
        self.firsts = list(firsts)
        self.lasts = list(lasts) or ["Smith"]
        self.places = material.places or ["England"]
        self.names = list(dict.fromkeys(self.lasts + [b for b in self.bases if " " not in b]))
        self.shapes = (
            (self._person, 25),
            (self._disambiguated, 24),
            (self._place, 18),
            (self._of, 12),
            (self._year, 10),
            (self._person_disambiguated, 6),
            (self._numbered, 3),
            (self._the, 2),
        )
        self.cum_weights = list(itertools.accumulate(w for _, w in self.shapes))

    def claim(self, title: str) -> bool:
        if title in self.seen or not title or _TITLE_BAD.search(title):
            return False
        self.seen.add(title)
        return True

    def _base(self) -> str:
        return self.rng.choice(self.bases)

    def _person(self) -> str:
        r = self.rng
        if r.random() < 0.12:
            return f"{r.choice(self.firsts)} {chr(65 + r.randrange(26))}. {r.choice(self.lasts)}"
        return f"{r.choice(self.firsts)} {r.choice(self.lasts)}"

    def _person_disambiguated(self) -> str:
        r = self.rng
        person = f"{r.choice(self.firsts)} {r.choice(self.lasts)}"
        if r.random() < 0.3:
            return f"{person} (born {r.randrange(1900, 2001)})"
        return f"{person} ({r.choice(_PERSON_LIKE)})"

    def _disambiguated(self) -> str:
        r = self.rng
        what = r.choice(_FILM_LIKE)
        if what in ("film", "album", "song") and r.random() < 0.35:
            what = f"{r.randrange(1920, 2024)} {what}"
        return f"{self._base()} ({what})"

    def _place(self) -> str:
        r = self.rng
        roll = r.random()
        name = r.choice(self.names)
        if roll < 0.6:
            return f"{name} {r.choice(_PLACE_SUFFIX)}"
        if roll < 0.8:
            return f"{r.choice(_PLACE_PREFIX)} {name}"
        return f"{name}, {r.choice(_STATES)}"

    def _of(self) -> str:
        r = self.rng
        subject = r.choice(self.places) if r.random() < 0.6 else self._base()
        return f"{r.choice(_OF_PREFIX)} {subject}"

    def _year(self) -> str:
        r = self.rng
        year = r.randrange(1800, 2025)
        place = r.choice(self.places) if r.random() < 0.7 else self._base()
        return f"{place} in {year}" if r.random() < 0.3 else f"{year} in {place}"

    def _numbered(self) -> str:
        return f"{self._base()} {self.rng.choice(_ROMAN)}"

    def _the(self) -> str:
        base = self._base()
        return base if base.startswith("The ") else f"The {base}"

    def next(self, real_share: float = 0.45) -> str:
        while True:
            if self.real_left and self.rng.random() < real_share:
                self.real_left -= 1
                title = next(self.real)
            else:
                shape = self.rng.choices(self.shapes, cum_weights=self.cum_weights)[0][0]
                title = _norm_title(shape())
            if self.claim(title):
                return title

    def alias(self, title: str, misspell: bool = True) -> tuple[str, str] | None:
        """A free redirect title for ``title`` and its shape, or None when all are taken.

        Misspellings (always available, rare in real wikis) come last, and only when
        ``misspell``."""
        r = self.rng
        cands: list[tuple[str, str]] = []
        low = title[0] + title[1:].lower()
        if low != title:
            cands.append((low, "lower"))
        bare = _PAREN.sub("", title)
        if bare != title and bare:
            cands.append((bare, "paren"))
        words = bare.split()
        if len(words) >= 2:
            caps = "".join(w[0] for w in words if w[:1].isupper())
            if len(caps) >= 2:
                cands.append((caps, "acronym"))
        m = _PERSON.match(bare)
        if title.startswith("The "):
            cands.append((title[4:], "nothe"))
        elif m is None and len(title) >= 4 and not title[:1].isdigit():
            cands.append((f"The {title}", "the"))
        if m:
            cands.append((m.group(2), "surname"))
            cands.append((f"{m.group(2)}, {m.group(1)}", "sortname"))
            if ". " in bare:
                cands.append((f"{m.group(1)} {m.group(2)}", "short"))
        if ", " in bare:
            cands.append((bare.split(", ", 1)[0], "short"))
        ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
        if ascii_title != title and ascii_title:
            cands.append((ascii_title, "ascii"))
        if " and " in title:
            cands.append((title.replace(" and ", " & "), "amp"))
        if "-" in title:
            cands.append((title.replace("-", " "), "hyphen"))
        if title[-1:].islower() and title[-1] not in "sxh" and m is None:
            plural = f"{title[:-1]}ies" if title.endswith("y") else f"{title}s"
            cands.append((plural, "plural"))
        r.shuffle(cands)
        for _ in range(3 if misspell else 0):
            long_words = [i for i, w in enumerate(words) if len(w) >= 5 and w.isalpha()]
            if long_words:
                wi = r.choice(long_words)
                w = words[wi]
                p = r.randrange(1, len(w) - 1)
                swapped = w[:p] + w[p + 1] + w[p] + w[p + 2 :]
                cands.append((" ".join([*words[:wi], swapped, *words[wi + 1 :]]), "misspell"))
        for cand, shape in cands:
            cand = _norm_title(cand)
            if cand != title and self.claim(cand):
                return cand, shape
        return None


@dataclass
class _Titles:
    articles: list[str]  # in dump order
    perm: np.ndarray[Any, np.dtype[np.int64]]  # popularity rank -> article index
    redirects: list[str]  # in dump order
    redirect_targets: list[int]
    redirect_shapes: list[str]
    red: list[str]
    categories: list[str]  # in popularity order


def build_titles(material: Material, n: int, seed: int, exponent: float = ZIPF_EXPONENT) -> _Titles:
    """All article, redirect, red-link and category names for an ``n``-article dump."""
    rng = random.Random(f"titles-{seed}")
    nprng = np.random.default_rng([seed, 1])
    maker = _TitleMaker(material, rng)
    articles: list[str] = []
    specials = list(_COMMON_TITLES[: max(1, n // 20)])
    specials += [str(y) for y in range(1800, 2025)][: n // 50]
    for title in specials[:n]:
        if maker.claim(title):
            articles.append(title)
    while len(articles) < n:
        articles.append(maker.next())
    rng.shuffle(articles)
    perm = nprng.permutation(n)
    cdf = _zipf_cdf(n, exponent)
    n_redirects = round(REDIRECTS_PER_ARTICLE * n)
    redirects: list[str] = []
    targets: list[int] = []
    shapes: list[str] = []
    draws = perm[np.searchsorted(cdf, nprng.random(n_redirects + 64), side="right")].tolist()
    pos = 0
    while len(redirects) < n_redirects:
        found = None
        for attempt in range(6):
            if attempt < 3 and pos < len(draws):
                target = int(draws[pos])
                pos += 1
            else:
                target = rng.randrange(n)
            found = maker.alias(articles[target], misspell=attempt >= 3 or rng.random() < 0.15)
            if found is not None:
                break
        if found is None:
            title = maker.next(real_share=0.0)  # no free alias: an unrelated-looking name
            found = (title, "alt")
            target = rng.randrange(n)
        redirects.append(found[0])
        shapes.append(found[1])
        targets.append(target)
    red = [maker.next() for _ in range(max(50, n // 4))]
    categories = _category_names(material, max(5000, n // 20), rng, maker)
    rng.shuffle(categories)
    return _Titles(articles, perm, redirects, targets, shapes, red, categories)


def _category_names(
    material: Material, count: int, rng: random.Random, maker: _TitleMaker
) -> list[str]:
    names: dict[str, None] = dict.fromkeys(material.categories)
    real = material.categories or ["Living people"]
    shapes = (
        lambda: f"{rng.randrange(1700, 2011)} births",
        lambda: f"{rng.randrange(1750, 2024)} deaths",
        lambda: f"People from {rng.choice(maker.places)}",
        lambda: f"Rivers of {rng.choice(maker.places)}",
        lambda: f"Populated places in {rng.choice(maker.places)}",
        lambda: f"{rng.randrange(1920, 2024)} films",
        lambda: f"{rng.randrange(1950, 2024)} albums",
        lambda: f"{rng.choice(maker.firsts)} {rng.choice(maker.lasts)} albums",
        lambda: f"Companies based in {rng.choice(maker.places)}",
        lambda: f"Buildings and structures in {rng.choice(maker.places)}",
        lambda: f"{rng.randrange(1700, 2024)} establishments in {rng.choice(maker.places)}",
        lambda: f"{rng.choice(real)} by country",
        lambda: f"{rng.choice(real)} in {rng.choice(maker.places)}",
        lambda: f"{rng.choice(maker.places)} stubs",
        lambda: f"Songs written by {rng.choice(maker.firsts)} {rng.choice(maker.lasts)}",
    )
    while len(names) < count:
        name = _norm_title(rng.choice(shapes)())
        if not _TITLE_BAD.search(name):
            names.setdefault(name)
    return list(names)


# --------------------------------------------------------------------------- drawing


class _LinkDrawer:
    """Link targets in bulk: Zipf over articles, some red links, some via redirects."""

    def __init__(self, titles: _Titles, rng: np.random.Generator, exponent: float) -> None:
        self.rng = rng
        self.all = titles.articles + titles.redirects + titles.red
        self.n_art = len(titles.articles)
        self.n_redir = len(titles.redirects)
        self.perm = titles.perm
        self.art_cdf = _zipf_cdf(self.n_art, exponent)
        self.red_cdf = _zipf_cdf(len(titles.red), exponent)
        self.buf: list[str] = []
        self.kinds = np.zeros(0, dtype=np.int8)
        self.pos = 0
        self.counts = np.zeros(3, dtype=np.int64)  # article, redirect, red

    def _refill(self, size: int = 1 << 15) -> None:
        kind_u = self.rng.random(size)
        u = self.rng.random(size)
        art = self.perm[np.searchsorted(self.art_cdf, u, side="right")]
        red = np.searchsorted(self.red_cdf, u, side="right") + self.n_art + self.n_redir
        redir = (u * self.n_redir).astype(np.int64) + self.n_art
        kinds = np.where(kind_u < RED_LINK_SHARE, 2, 0)
        if self.n_redir:
            kinds = np.where(
                (kind_u >= RED_LINK_SHARE) & (kind_u < RED_LINK_SHARE + REDIRECT_LINK_SHARE),
                1,
                kinds,
            )
        idx = np.where(kinds == 2, red, np.where(kinds == 1, redir, art))
        self.buf = [self.all[i] for i in idx.tolist()]
        self.kinds = kinds.astype(np.int8)
        self.counts += np.bincount(self.kinds, minlength=3)
        self.pos = 0

    def take(self, k: int) -> list[str]:
        out: list[str] = []
        while k > 0:
            if self.pos >= len(self.buf):
                self._refill()
            got = self.buf[self.pos : self.pos + k]
            self.pos += len(got)
            k -= len(got)
            if out:
                out.extend(got)
            else:
                out = got
        return out

    def used(self) -> tuple[int, int, int]:
        """(article, redirect, red) links handed out so far."""
        rest = np.bincount(self.kinds[self.pos :], minlength=3)
        art, redir, red = (self.counts - rest).tolist()
        return int(art), int(redir), int(red)


class _CategoryDrawer:
    def __init__(self, names: list[str], rng: random.Random, exponent: float) -> None:
        self.names = names
        self.rng = rng
        self.cdf = _zipf_cdf(len(names), exponent).tolist()
        self.used: set[int] = set()
        self.assigned = 0

    def draw(self) -> list[str]:
        count = self.rng.choices((2, 3, 4, 5, 6), cum_weights=(25, 55, 77, 90, 100))[0]
        picked: dict[int, None] = {}
        for _ in range(count * 4):
            i = min(bisect_right(self.cdf, self.rng.random()), len(self.cdf) - 1)
            picked.setdefault(i)
            if len(picked) >= count:
                break
        self.used.update(picked)
        self.assigned += len(picked)
        return [self.names[i] for i in picked]


# --------------------------------------------------------------------------- assembly


class _Assembler:
    """Builds one article's wikitext from a lead and sections of different real articles."""

    def __init__(
        self,
        material: Material,
        links: _LinkDrawer,
        cats: _CategoryDrawer,
        rng: random.Random,
        avg_bytes: int,
    ) -> None:
        self.m = material
        self.links = links
        self.cats = cats
        self.rng = rng
        self.avg = avg_bytes
        self.sigma = 0.85
        self.mu = math.log(avg_bytes) - self.sigma**2 / 2
        self.deficit = 0.0
        self.tail_pools = [(material.tails.get(k, []), p) for k, p in _TAIL_ORDER]

    def _emit(self, parts: list[str], block: _Block) -> int:
        k = len(block.tails)
        if not k:
            parts.append(block.head)
            return 0
        seg: list[str] = [""] * (2 * k + 1)
        seg[0] = block.head
        seg[1::2] = self.links.take(k)
        seg[2::2] = block.tails
        parts.extend(seg)
        return k

    def _group(self, parts: list[str], group: _Group, budget: float, force: bool) -> int:
        """Emit a group's units while they fit ``budget``.

        With ``force`` the first unit's blocks are emitted regardless of the budget up to
        its first prose block (at most 3), so no lead or section is only an infobox or a
        hatnote."""
        used = 0
        for ui, unit in enumerate(group.units):
            if ui and budget - used < 250:
                break
            emitted = False
            for bi, block in enumerate(unit.blocks):
                forced = force and ui == 0 and bi < 3
                if not forced and used + block.size > budget:
                    break
                if forced and block.prose:
                    force = False
                if not emitted and unit.heading:
                    parts.append(unit.heading + "\n")
                    used += len(unit.heading) + 1
                emitted = True
                self._emit(parts, block)
                parts.append("\n\n")
                used += block.size + 2
            if not emitted and unit.heading and ui == 0:
                parts.append(unit.heading + "\n\n")
                used += len(unit.heading) + 2
        return used

    def article(self, title: str) -> str:
        r = self.rng
        if self.m.disambiguations and r.random() < DISAMBIGUATION_SHARE:
            dab: list[str] = []
            for group in r.choice(self.m.disambiguations):
                self._group(dab, group, math.inf, force=True)
            return self._finish(dab, title)
        target = math.exp(self.mu + self.sigma * r.gauss(0.0, 1.0))
        target = min(
            max(target + max(min(self.deficit, 2 * self.avg), -2 * self.avg), 400.0),
            12.0 * self.avg,
        )
        parts: list[str] = []
        lead = r.choice(self.m.leads)
        used_sources = {lead.source}
        used = self._group(parts, lead, max(0.3 * target, 600.0), force=True)
        tails: list[_Group] = []
        for pool, prob in self.tail_pools:
            if pool and r.random() < prob:
                tails.append(r.choice(pool))
        tail_budget = 0.2 * target
        body_budget = target - used - min(tail_budget, 150.0 * len(tails))
        # Several sections, each cut to its share, rather than one long one.
        sections = min(max(1, round(body_budget / r.uniform(900.0, 2400.0))), 10)
        share = body_budget / sections
        for _ in range(4 * sections + 8):
            if body_budget < 300 or sections <= 0:
                break
            group = r.choice(self.m.body)
            if group.source in used_sources:
                continue
            first = group.units[0].blocks[0].size if group.units[0].blocks else 0
            if first > 1.6 * share + 400 and r.random() < 0.85:
                continue
            used_sources.add(group.source)
            got = self._group(parts, group, min(max(share, 400.0), body_budget), force=True)
            body_budget -= got
            used += got
            sections -= 1
        for group in tails:
            used += self._group(parts, group, max(tail_budget / len(tails), 200.0), force=True)
        return self._finish(parts, title)

    def _finish(self, parts: list[str], title: str) -> str:
        text = "".join(parts).rstrip() + "\n\n"
        text += "\n".join(f"[[Category:{c}]]" for c in self.cats.draw())
        return text.replace("\x01", title)

    def settle(self, target_used: float, actual: int) -> None:
        self.deficit += target_used - actual


# --------------------------------------------------------------------------- XML


def _esc(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


_B36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def _sha1_base36(data: bytes) -> str:
    value = int.from_bytes(hashlib.sha1(data).digest(), "big")
    digits = []
    while value:
        value, rem = divmod(value, 36)
        digits.append(_B36[rem])
    return "".join(reversed(digits)).rjust(31, "0")


class _Revisions:
    """Plausible revision metadata (ids, timestamps, real contributor names, comments)."""

    T0 = 1104537600  # 2005-01-01
    T1 = 1717200000  # 2024-06-01

    def __init__(self, material: Material, rng: random.Random) -> None:
        self.rng = rng
        self.users = material.users or [("Example", "1")]
        self.ips = material.ips or ["127.0.0.1"]
        self.comments = material.comments or ["copyedit"]

    def xml(self) -> str:
        r = self.rng
        rev = r.randrange(100_000_000, 1_200_000_000)
        ts = time.strftime(
            "%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.T1 - int((self.T1 - self.T0) * r.random() ** 2))
        )
        if r.random() < 0.15:
            who = f"        <ip>{_esc(r.choice(self.ips))}</ip>\n"
        else:
            user, uid = r.choice(self.users)
            who = f"        <username>{_esc(user)}</username>\n        <id>{uid}</id>\n"
        extra = "      <minor />\n" if r.random() < 0.3 else ""
        if r.random() < 0.75:
            extra += f"      <comment>{_esc(r.choice(self.comments))}</comment>\n"
        return (
            f"      <id>{rev}</id>\n      <parentid>{rev - r.randrange(1, 9_000_000)}</parentid>\n"
            f"      <timestamp>{ts}</timestamp>\n      <contributor>\n{who}      </contributor>\n"
            f"{extra}      <model>wikitext</model>\n      <format>text/x-wiki</format>\n"
        )


def page_xml(
    title: str, ns: int, page_id: int, text: str, revision: str, redirect: str | None = None
) -> tuple[bytes, int]:
    """One ``<page>`` element as the 0.10 export writes it (indented, ending in a newline),
    and the UTF-8 size of its wikitext."""
    raw = text.encode("utf-8")
    body = raw.replace(b"&", b"&amp;").replace(b"<", b"&lt;").replace(b">", b"&gt;")
    body = body.replace(b'"', b"&quot;")
    redirect_line = f'    <redirect title="{_esc(redirect)}" />\n' if redirect is not None else ""
    data = b"".join(
        (
            f"  <page>\n    <title>{_esc(title)}</title>\n    <ns>{ns}</ns>\n"
            f"    <id>{page_id}</id>\n{redirect_line}    <revision>\n{revision}"
            f'      <text xml:space="preserve" bytes="{len(raw)}">'.encode(),
            body,
            f"</text>\n      <sha1>{_sha1_base36(raw)}</sha1>\n"
            "    </revision>\n  </page>\n".encode(),
        )
    )
    return data, len(raw)


# --------------------------------------------------------------------------- sinks


class _Sink:
    raw = 0  # uncompressed bytes written

    def header(self, data: bytes) -> None:
        raise NotImplementedError

    def page(self, page_id: int, title_xml: str, data: bytes) -> None:
        raise NotImplementedError

    def footer(self, data: bytes) -> dict[str, Any]:
        raise NotImplementedError

    def abort(self) -> None:
        """Release files and processes after a failure."""


class _PlainSink(_Sink):
    def __init__(self, path: Path) -> None:
        self.path = path
        self.fh = open(path, "wb", buffering=1 << 22)  # noqa: SIM115 - closed in footer()
        self.raw = 0

    def abort(self) -> None:
        self.fh.close()

    def header(self, data: bytes) -> None:
        self.fh.write(data)
        self.raw += len(data)

    def page(self, page_id: int, title_xml: str, data: bytes) -> None:
        self.fh.write(data)
        self.raw += len(data)

    def footer(self, data: bytes) -> dict[str, Any]:
        self.fh.write(data)
        self.raw += len(data)
        self.fh.close()
        return {"xml": str(self.path), "xml_bytes": self.raw}


def _compress(data: bytes) -> bytes:
    return bz2.compress(data, 9)


class _MultistreamSink(_Sink):
    """Wikimedia multistream layout; page streams compressed in order-preserving parallel."""

    def __init__(
        self, path: Path, index_path: Path, workers: int | None, pages_per_stream: int = 100
    ) -> None:
        self.path = path
        self.index_path = index_path
        self.fh = open(path, "wb")  # noqa: SIM115 - closed in footer()
        self.ifh = open(index_path, "wb")  # noqa: SIM115 - closed in footer()
        self.icomp = bz2.BZ2Compressor(9)
        self.per_stream = max(1, pages_per_stream)
        self.workers = max(1, workers if workers is not None else (os.cpu_count() or 1))
        self.pool: Pool | None = None
        if self.workers > 1:
            self.pool = multiprocessing.get_context().Pool(self.workers)
        self.pending: deque[tuple[AsyncResult[bytes] | bytes, list[tuple[int, str]]]] = deque()
        self.chunk: list[bytes] = []
        self.meta: list[tuple[int, str]] = []
        self.offset = 0
        self.streams = 0
        self.pages = 0
        self.raw = 0

    def _write(self, compressed: bytes, meta: Iterable[tuple[int, str]]) -> None:
        lines = "".join(f"{self.offset}:{pid}:{title}\n" for pid, title in meta)
        if lines:
            self.ifh.write(self.icomp.compress(lines.encode("utf-8")))
        self.fh.write(compressed)
        self.offset += len(compressed)
        self.streams += 1

    def _drain(self, keep: int) -> None:
        while len(self.pending) > keep:
            result, meta = self.pending.popleft()
            self._write(result if isinstance(result, bytes) else result.get(), meta)

    def header(self, data: bytes) -> None:
        self.raw += len(data)
        if data:  # a bare <page> fragment has none; an empty stream would only confuse readers
            self._write(_compress(data), ())

    def _flush(self) -> None:
        if not self.chunk:
            return
        data = b"".join(self.chunk)
        if self.pool is not None:
            self.pending.append((self.pool.apply_async(bz2.compress, (data, 9)), self.meta))
            self._drain(2 * self.workers + 2)
        else:
            self._write(_compress(data), self.meta)
        self.chunk, self.meta = [], []

    def page(self, page_id: int, title_xml: str, data: bytes) -> None:
        self.chunk.append(data)
        self.meta.append((page_id, title_xml))
        self.pages += 1
        self.raw += len(data)
        if len(self.chunk) >= self.per_stream:
            self._flush()

    def footer(self, data: bytes) -> dict[str, Any]:
        try:
            self._flush()
            self._drain(0)
            self.raw += len(data)
            if data:
                self._write(_compress(data), ())
            self.ifh.write(self.icomp.flush())
        finally:
            if self.pool is not None:
                self.pool.close()
                self.pool.join()
            self.fh.close()
            self.ifh.close()
        return {
            "multistream": str(self.path),
            "multistream_index": str(self.index_path),
            "multistream_bytes": self.offset,
            "streams": self.streams,
            "index_lines": self.pages,
        }

    def abort(self) -> None:
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()
        self.fh.close()
        self.ifh.close()


# --------------------------------------------------------------------------- generate


def _parse_formats(formats: str | Sequence[str]) -> list[str]:
    items = formats.split(",") if isinstance(formats, str) else list(formats)
    out = [f.strip() for f in items if f.strip()]
    bad = [f for f in out if f not in FORMATS]
    if bad or not out:
        raise ValueError(f"unknown format(s) {bad or formats!r}; choose from {', '.join(FORMATS)}")
    return list(dict.fromkeys(out))


def _other_page(
    kind: int, rng: random.Random, titles: _Titles, material: Material, serial: int
) -> tuple[str, int, str]:
    """A Category:, Template: or Wikipedia: page (the loader must skip these)."""
    if kind == 14:
        name = titles.categories[serial % len(titles.categories)]
        parents = "\n".join(
            f"[[Category:{rng.choice(titles.categories)}]]" for _ in range(rng.randrange(1, 3))
        )
        main = rng.choice(titles.articles)
        text = f"{{{{Commons category|{name}}}}}\n{{{{Cat main|{main}}}}}\n\n{parents}"
        return f"Category:{name}", 14, text
    if kind == 10:
        pool = material.templates or ["Navbox"]
        base = pool[serial % len(pool)]
        name = base if serial < len(pool) else f"{base}/doc{serial // len(pool)}"
        items = " • ".join(
            f"[[{rng.choice(titles.articles)}]]" for _ in range(rng.randrange(4, 16))
        )
        text = (
            f"{{{{Navbox\n| name = {name}\n| title = [[{rng.choice(titles.articles)}]]\n"
            f"| list1 = {items}\n}}}}"
            "<noinclude>\n{{Documentation}}\n[[Category:Navigational boxes]]\n</noinclude>"
        )
        return f"Template:{name}", 10, text
    block = rng.choice(material.blocks) if material.blocks else _Block("", (), 0, False)
    subject = titles.articles[serial % len(titles.articles)]
    shortcut = "".join(w[0] for w in subject.split() if w[:1].isalnum()).upper() or "X"
    text = (
        f"{{{{WikiProject status|active}}}}\n{{{{Shortcut|WP:{shortcut}}}}}\n"
        f"This is the project page for articles about [[{subject}]].\n\n{block.head}"
    )
    suffix = "" if serial < len(titles.articles) else f"/{serial}"
    return f"Wikipedia:WikiProject {subject}{suffix}", 4, text


def _slots(rng: np.random.Generator, count: int, n: int) -> list[int]:
    """Sorted article positions before which each of ``count`` extra pages is written."""
    return np.sort(rng.integers(0, n, size=count)).tolist() if count else []


def generate(
    n: int,
    out_dir: str | os.PathLike[str],
    seed: int = 0,
    formats: str | Sequence[str] = FORMATS,
    avg_bytes: int = 8000,
    workers: int | None = None,
    data_dir: str | os.PathLike[str] = DATA_DIR,
    exponent: float = ZIPF_EXPONENT,
) -> dict[str, Any]:
    """Write an ``n``-article synthetic dump into ``out_dir``; returns the summary."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if avg_bytes < 500:
        raise ValueError(f"avg_bytes must be >= 500, got {avg_bytes}")
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    fmts = _parse_formats(formats)
    started = time.perf_counter()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    material = load_material(data_dir)
    titles = build_titles(material, n, seed, exponent)
    t_setup = time.perf_counter() - started
    rng = random.Random(f"pages-{seed}")
    nprng = np.random.default_rng([seed, 2])
    links = _LinkDrawer(titles, nprng, exponent)
    cats = _CategoryDrawer(titles.categories, random.Random(f"cats-{seed}"), exponent)
    assembler = _Assembler(material, links, cats, rng, avg_bytes)
    revisions = _Revisions(material, rng)
    n_other = max(1, round(OTHER_PAGE_SHARE * n))
    redirect_slots = _slots(nprng, len(titles.redirects), n)
    other_slots = _slots(nprng, n_other, n)
    other_kinds = [(14, 10, 4, 14, 10)[i % 5] for i in range(n_other)]

    sinks: list[_Sink] = []
    if "xml" in fmts:
        sinks.append(_PlainSink(out / f"synthwiki-{n}-pages-articles.xml"))
    if "multistream" in fmts:
        sinks.append(
            _MultistreamSink(
                out / f"synthwiki-{n}-pages-articles-multistream.xml.bz2",
                out / f"synthwiki-{n}-pages-articles-multistream-index.txt.bz2",
                workers,
            )
        )
    page_id = 9
    wikitext_bytes = 0
    ri = oi = 0
    counts = {0: 0, 4: 0, 10: 0, 14: 0}

    def emit(title: str, ns: int, text: str, redirect: str | None = None) -> int:
        nonlocal page_id
        page_id += 1 if rng.random() < 0.6 else rng.randrange(2, 40)
        data, size = page_xml(title, ns, page_id, text, revisions.xml(), redirect)
        title_xml = _esc(title)
        for sink in sinks:
            sink.page(page_id, title_xml, data)
        counts[ns] += 1
        return size

    try:
        for sink in sinks:
            sink.header(material.header)
        for i, title in enumerate(titles.articles):
            while ri < len(redirect_slots) and redirect_slots[ri] <= i:
                target = titles.articles[titles.redirect_targets[ri]]
                text = f"#REDIRECT [[{target}]]"
                if rng.random() < 0.6:
                    text += f"\n\n{{{{{_RCAT[titles.redirect_shapes[ri]]}}}}}"
                emit(titles.redirects[ri], 0, text, redirect=target)
                ri += 1
            while oi < len(other_slots) and other_slots[oi] <= i:
                emit(*_other_page(other_kinds[oi], rng, titles, material, oi))
                oi += 1
            size = emit(title, 0, assembler.article(title))
            assembler.settle(float(avg_bytes), size)
            wikitext_bytes += size
        results: dict[str, Any] = {}
        for sink in sinks:
            results.update(sink.footer(FOOTER))
    except BaseException:
        for sink in sinks:
            sink.abort()
        raise
    art_links, redir_links, red_links = links.used()
    total_links = art_links + redir_links + red_links
    elapsed = time.perf_counter() - started
    redirect_total = len(titles.redirects)
    return {
        "articles": n,
        "redirects": redirect_total,
        "other_pages": counts[4] + counts[10] + counts[14],
        "other_pages_by_ns": {"4": counts[4], "10": counts[10], "14": counts[14]},
        "pages": n + redirect_total + counts[4] + counts[10] + counts[14],
        "xml_bytes": results.get("xml_bytes", sinks[-1].raw),
        "avg_wikitext_bytes": round(wikitext_bytes / n, 1),
        "avg_bytes_requested": avg_bytes,
        "source_articles": material.articles,
        "source_avg_wikitext_bytes": round(material.article_bytes / max(1, material.articles), 1),
        "links": total_links,
        "links_per_article": round(total_links / n, 2),
        "red_link_share": round(red_links / max(1, total_links), 4),
        "redirect_link_share": round(redir_links / max(1, total_links), 4),
        "categories_pool": len(titles.categories),
        "categories_used": len(cats.used),
        "categories_assigned": cats.assigned,
        "red_titles_pool": len(titles.red),
        "zipf_exponent": exponent,
        "seed": seed,
        "formats": fmts,
        "setup_seconds": round(t_setup, 2),
        "seconds": round(elapsed, 2),
        **{k: v for k, v in results.items() if k != "xml_bytes"},
    }


# --------------------------------------------------------------------------- repack


_PAGE_ID = re.compile(rb"<id>(\d+)</id>")
_PAGE_TITLE = re.compile(rb"<title>([^<]*)</title>")


def _line_start(buf: bytes, pos: int) -> int:
    return buf.rfind(b"\n", 0, pos) + 1


def repack_multistream(
    src: str | os.PathLike[str],
    out_bz2: str | os.PathLike[str],
    index_path: str | os.PathLike[str],
    pages_per_stream: int = PAGES_PER_STREAM,
    workers: int | None = None,
) -> dict[str, Any]:
    """Repack a dump (plain/.bz2/.gz/.xz) into the multistream layout, pages byte for byte.

    The header is everything before the line of the first ``<page>``; each page runs to
    the end of its ``</page>`` line; the footer is what follows the last one.
    """
    started = time.perf_counter()
    sink = _MultistreamSink(Path(out_bz2), Path(index_path), workers, pages_per_stream)
    buf = b""
    pos = 0
    header_done = False
    eof = False
    try:
        with _open_any(src) as fh:
            while True:
                if not eof:
                    data = fh.read(1 << 22)
                    eof = not data
                    buf = buf[pos:] + data
                    pos = 0
                if not header_done:
                    first = buf.find(b"<page>")
                    if first < 0:
                        if eof:
                            end = buf.rfind(b"</mediawiki>")
                            cut = _line_start(buf, end) if end >= 0 else len(buf)
                            sink.header(buf[:cut])
                            pos = cut
                            break
                        continue
                    cut = _line_start(buf, first)
                    sink.header(buf[:cut])
                    pos = cut
                    header_done = True
                while True:
                    close = buf.find(b"</page>", pos)
                    if close < 0:
                        break
                    nl = buf.find(b"\n", close)
                    if nl < 0:
                        if not eof:
                            break
                        nl = len(buf) - 1
                    page = buf[pos : nl + 1]
                    head = page[:4096]
                    pid = _PAGE_ID.search(head)
                    ttl = _PAGE_TITLE.search(head)
                    sink.page(
                        int(pid.group(1)) if pid else 0,
                        ttl.group(1).decode("utf-8", "replace") if ttl else "",
                        page,
                    )
                    pos = nl + 1
                if eof:
                    break
        summary = sink.footer(buf[pos:])
    except BaseException:
        sink.abort()
        raise
    summary.update(
        {
            "source": str(src),
            "pages": sink.pages,
            "xml_bytes": sink.raw,
            "seconds": round(time.perf_counter() - started, 2),
        }
    )
    return summary


def _repack_names(src: Path, out_dir: Path) -> tuple[Path, Path]:
    name = src.name
    for ext in (".bz2", ".gz", ".xz"):
        name = name.removesuffix(ext)
    name = name.removesuffix(".xml")
    return out_dir / f"{name}-multistream.xml.bz2", out_dir / f"{name}-multistream-index.txt.bz2"


# --------------------------------------------------------------------------- CLI


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--articles", "-n", type=int, help="number of articles to generate")
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--formats", default=",".join(FORMATS), help="xml,multistream")
    parser.add_argument("--avg-bytes", type=int, default=8000, help="mean wikitext bytes")
    parser.add_argument("--workers", type=int, default=None, help="bz2 processes (cpu count)")
    parser.add_argument("--zipf", type=float, default=ZIPF_EXPONENT, help="Zipf exponent")
    parser.add_argument("--data-dir", default=str(DATA_DIR), help="real samples directory")
    parser.add_argument("--from-xml", help="repack this dump into multistream instead")
    parser.add_argument("--summary", help="also write the JSON summary to this file")
    args = parser.parse_args(argv)
    if args.from_xml:
        src = Path(args.from_xml)
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        bz2_path, index_path = _repack_names(src, out)
        summary = repack_multistream(src, bz2_path, index_path, workers=args.workers)
    else:
        if args.articles is None:
            parser.error("--articles is required unless --from-xml is given")
        try:
            summary = generate(
                args.articles,
                args.out,
                seed=args.seed,
                formats=args.formats,
                avg_bytes=args.avg_bytes,
                workers=args.workers,
                data_dir=args.data_dir,
                exponent=args.zipf,
            )
        except ValueError as exc:
            parser.error(str(exc))
    text = json.dumps(summary, indent=2)
    print(text)
    if args.summary:
        Path(args.summary).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

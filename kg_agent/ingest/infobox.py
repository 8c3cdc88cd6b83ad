"""DBpedia-style facts from a page's infoboxes: (box type, key, value, typed items).

Why a scanner of its own rather than :mod:`kg_agent.ingest.wikitext`: that cleaner
renders prose and drops template parameters; facts need each box parameter kept
apart, its value split into items (``<br>``, lists, ``{{hlist}}``) and each item
typed (a link to an article, a date, a year, a number with its unit, or text).

Cost (measured on the English sample: about 8% of :func:`parse_wikitext`'s time over
the same pages): a page without "box"/"Box" costs two substring tests; box openers are
found with ``str.find`` (a case-insensitive regex over every page cost more than the
whole extraction). A page with boxes pays for comment removal, one scan of brace
tokens per box to find its end, and a scan of the box's own text; nothing is
rescanned more than a few times (an opener that never closes is dropped and the text
rescanned, as wikitext.py does), so the work grows linearly with the page.

Decisions the load relies on (tests pin each one):

* A box is a template whose name starts or ends with "infobox" (any case, ``_`` or
  space), or is one of :data:`BOX_TEMPLATES` (taxobox, speciesbox, chembox, ...).
  Every box of the page that is not inside another box is an article-level box;
  a box inside a parameter value (``module = {{Infobox …|embed=yes}}``, Chembox
  sections) is read as a sub-box: its facts carry the article-level ``box`` and
  their own ``sub_box`` type. Only named parameters are facts; parameters of any
  other nested template are not (its rendering is part of the value).
* Keys: see :func:`normalize_key`. Keys in :data:`LAYOUT_KEYS` (or with a layout
  prefix/suffix: image…, logo…, map…, …caption, …alt) are not facts.
* Values: comments, ``<ref>``s, files, coordinates and unknown templates are
  dropped; ``<br>``, bullets, blank lines and list templates separate items. An item
  segment that holds links or typed templates (dates, ``{{convert}}``,
  ``{{marriage}}``) gives those as items; a plain-text segment is typed as a date,
  year, number or text. A value with no item gives no fact.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator, Mapping
from functools import lru_cache
from urllib.parse import unquote

from kg_agent.ingest.facts import (
    MONTHS,
    Box,
    Fact,
    Item,
    Link,
    LiteralValue,
    dates_in,
    era_years_in,
    iso_date,
    literal,
    normalize_key,
    number_of,
    parse_date,
    shown_date,
)
from kg_agent.ingest.markup import BAD_TARGET as _BAD_TARGET
from kg_agent.ingest.markup import BRACKETS as _BRACKETS
from kg_agent.ingest.markup import PIPE_TRICK as _PIPE_TRICK
from kg_agent.ingest.markup import QUOTES as _QUOTES
from kg_agent.ingest.markup import WORD as _WORD
from kg_agent.ingest.markup import interlanguage_args
from kg_agent.ingest.namespaces import DEFAULT_NAMESPACES
from kg_agent.ingest.titles import normalize_title

__all__ = [
    "BOX_TEMPLATES",
    "LAYOUT_KEYS",
    "InfoboxExtractor",
    "box_type",
    "extract_boxes",
    "extract_facts",
]


# Box templates whose names do not contain "infobox" (compared after box_type's
# normalisation). Extend when a dump uses another; names starting with one of
# _BOX_PREFIXES are boxes too (Chembox sections, Starbox parts).
BOX_TEMPLATES: frozenset[str] = frozenset(
    {
        "taxobox",
        "automatic taxobox",
        "speciesbox",
        "subspeciesbox",
        "infraspeciesbox",
        "hybridbox",
        "virusbox",
        "ichnobox",
        "oobox",
        "chembox",
        "drugbox",
        "geobox",
    }
)
_BOX_PREFIXES = ("chembox ", "starbox ", "geobox ")
# Multi-template boxes whose parts are one box.
_BOX_ALIASES = {
    "ship begin": "ship",
    "ship image": "ship",
    "ship career": "ship",
    "ship characteristics": "ship",
    "starbox begin": "star",
}

# Keys (after normalize_key) that lay the box out rather than state a fact.
LAYOUT_KEYS: frozenset[str] = frozenset(
    """alt caption map logo signature coordinates coords coord footnotes embed child
    subbox nocat noicon italictitle dateformat df mf float onlysourced qid
    fetchwikidata suppressfields bodyclass bodystyle abovestyle headerstyle labelstyle
    datastyle titlestyle belowstyle captionstyle namestyle color colour background
    bgcolor bgcolour boxcolor headercolor pixels latd latm lats latns longd longm longs
    longew latdeg latmin latsec latdir londeg lonmin lonsec londir latdegrees latminutes
    latseconds latdirection longdegrees longminutes longseconds longdirection flagsize sealsize
    coatsize insigniasize emblemsize symbolsize upright""".split()  # noqa: SIM905
)
_LAYOUT_PREFIXES = (
    "image",
    "img",
    "pushpin",
    "logo",
    "signature",
    "map",
    "coordinates",
    "footnote",
)
_LAYOUT_SUFFIXES = ("caption", "alt", "ref")  # "gini_ref": a citation holder

_MAX_DEPTH = 16
_MAX_KEYS = 65536  # raw keys remembered per extractor
_KEYWORD = re.compile(r"(?:info|taxo|species|chem|drug|geo|star|virus|ichno|oo|hybrid)box", re.I)
_BOX_OPEN = re.compile(
    r"\{\{[\s_]*(?:template[\s_]*:[\s_]*)?"
    r"([^{}|\n<]*?(?:info|taxo|species|chem|drug|geo|star|virus|ichno|oo|hybrid)box[^{}|\n<]*)",
    re.I,
)
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_BRACE = re.compile(r"\{\{|\}\}")
# An unclosed box (truncated page) ends at a heading or at a paragraph of prose.
_TRUNCATED_END = re.compile(r"\n=|\n\n(?=[^\s|}{<*!])")
# Extension tags whose content is never split on "|" nor shown.
_REF = re.compile(
    r"<ref\b[^>]*/>|<ref\b[^>]*>[^<]*(?:<(?!/?ref\b)[^<]*)*</ref\s*>|"
    r"<(math|chem|ce|gallery|timeline|score|graph|mapframe|templatestyles|references)\b"
    r"(?:[^>]*/>|[^>]*>.*?</\1\s*>)",
    re.I | re.S,
)
_STRAY_REF = re.compile(r"</?(?:ref|references)\b[^>]*>", re.I)
_NOWIKI = re.compile(r"<nowiki\s*>(.*?)</nowiki\s*>|<nowiki\s*/>", re.I | re.S)
# A link or a template with nothing nested in it is one token (most of a box's markup):
# scanning its inside token by token, in Python, was most of the split's time.
_SIMPLE = r"\[\[[^\[\]{}\n]*\]\](?!\])|\{\{[^{}]*\}\}(?!\})"
_SPLIT_TOKEN = re.compile(_SIMPLE + r"|\{\{|\}\}|\[\[|\]\]|\||\n[ \t:]*\{\||\n[ \t]*\|\}")
_RENDER_TOKEN = re.compile(_SIMPLE + r"|\{\{|\}\}|\[\[|\]\]")
_NAMED = re.compile(r"\s*([^=\[\]{}<>|\n]*?)\s*=")
_WS = re.compile(r"[\s_]+")
_BREAK_TAG = re.compile(r"<(?:br|hr|p|li)\b[^<>]*>", re.I)
_HTML_TAG = re.compile(r"</?[a-zA-Z][a-zA-Z0-9]*\b[^<>]*>")
#: A superscript of one to three letters, digits or asterisks: a footnote's mark.
_FOOTNOTE_MARK = re.compile(r"<sup\b[^<>]*>\s*(?!(?:st|nd|rd|th)\s*</)[\w*†‡]{1,3}\s*</sup>", re.I)
_EXT_LINK = re.compile(r"\[(?:https?:|ftp:|//|mailto:)[^\s\]]*(?:[ \t]+([^\]\n]*))?\]", re.I)
_EXT_OPEN = re.compile(r"\[(?:https?:|ftp:|//)[^\s\]]*\s?", re.I)
_STRAY_TEMPLATE = re.compile(r"\{\{[^{}|\[\]\n]*")
_LIST_MARKER = re.compile(r"[ \t]*[*#;:]+")
#: A value without markup: no template, link, tag, quote, entity or line break, and no
#: list marker at its start.
_PLAIN = re.compile(r"[^*#;:\s{}\[\]<>'&\n][^{}\[\]<>'&\n]*")
# A value that is one plain link, "[[Target]]" or "[[Target|label]]": no namespace,
# anchor, entity, escape or markup inside (a quarter of a box's values on the dumps).
_ONE_LINK = re.compile(
    r"\[\[([^\[\]{}|<>\n:#&%']+)(?:\|([^\[\]{}|<>\n'&]*\w[^\[\]{}|<>\n'&]*))?\]\]"
)
_EMPTY_PARENS = re.compile(r"\s*\([\s,;:]*\)")
# A value that is a file name or a size in pixels lays the box out.
_LAYOUT_VALUE = re.compile(
    r"\d+(?:x\d+)?\s*px|"
    r"[^\[\]{}|<>]*\.(?:svg|png|jpe?g|gif|tiff?|bmp|webp|xcf|ogg|oga|ogv|webm|mp3|wav|flac|"
    r"midi?|pdf|djvu)",
    re.I,
)
_INTERWIKI = frozenset(
    """wikt wiktionary s wikisource q wikiquote b wikibooks n wikinews v wikiversity voy
    wikivoyage species wikispecies commons c meta m mw d wikidata w foundation wmf
    incubator phab doi arxiv pmid rfc iarchive google""".split()  # noqa: SIM905
)
_FILE_NS, _CATEGORY_NS, _INTERWIKI_NS = 6, 14, -100


# ------------------------------------------------------------------ public helpers


@lru_cache(maxsize=1 << 12)
def box_type(name: str) -> str | None:
    """The normalised type of a box template name, or None when it is not a box.

    ``Infobox settlement`` → ``settlement``, ``Infobox_Country`` → ``country``,
    ``Template:Infobox U.S. state`` → ``u.s. state``, ``Taxobox`` → ``taxobox``,
    ``Football club infobox`` → ``football club``, bare ``Infobox`` → ``infobox``.
    """
    n = _WS.sub(" ", name).strip().lower()
    if n.startswith("template:"):
        n = n[9:].lstrip()
    if n.startswith("infobox") and n[7:8] in ("", " ", "/", "-", ":"):
        t = n[7:].strip(" -:") or "infobox"
    elif n.endswith(" infobox"):
        t = n[:-8].strip()
    elif n in BOX_TEMPLATES or n.startswith(_BOX_PREFIXES):
        t = n
    else:
        return None
    return _BOX_ALIASES.get(t, t)


@lru_cache(maxsize=1 << 12)  # a few hundred template names make most of a dump's
def _template_name(raw_name: str) -> str:
    """A template's name as the action table spells it (case, spaces, prefix off)."""
    name = _WS.sub(" ", raw_name).strip().lower()
    if name.startswith(("template:", "subst:", "safesubst:")):
        name = name.split(":", 1)[1].lstrip()
    return name


def _is_layout(key: str) -> bool:
    return (
        key in LAYOUT_KEYS
        or key.startswith(_LAYOUT_PREFIXES)
        or (len(key) > 4 and key.endswith(_LAYOUT_SUFFIXES))
    )


# ------------------------------------------------------------------ token scanning


def _box_end(text: str, start: int) -> int:
    """End (after ``}}``) of the template opened at ``start``; -1 when it never closes.

    An inner ``{{`` that never closes would swallow the box's own ``}}``: such openers
    are ignored and the scan repeated (a few times at most, so cost stays linear).
    """
    dead: set[int] = set()
    for _attempt in range(4):
        stack: list[int] = []
        for m in _BRACE.finditer(text, start):
            if m.group() == "{{":
                if m.start() not in dead:
                    stack.append(m.start())
            elif stack:
                stack.pop()
                if not stack:
                    return m.end()
        if len(stack) <= 1:
            break
        dead.update(stack[1:])
    return -1


def _box_words(text: str) -> Iterator[int]:
    """Positions of "box"/"Box" in page order: str.find is ~40x faster than a
    case-insensitive regex over a page, and the word is rare outside box names."""
    nxt = {w: text.find(w) for w in ("box", "Box")}
    while True:
        live = [(at, w) for w, at in nxt.items() if at >= 0]
        if not live:
            return
        at, word = min(live)
        yield at
        nxt[word] = text.find(word, at + 3)


def _split(s: str) -> list[str]:
    """Split template content on its own ``|``: not inside ``{{}}``, ``[[]]`` or a table."""
    dead: set[int] = set()
    parts: list[str] = []
    for _attempt in range(4):
        parts, unclosed = _split_once(s, dead)
        if not unclosed:
            break
        dead.update(unclosed)
    return parts


def _split_once(s: str, dead: set[int]) -> tuple[list[str], list[int]]:
    parts: list[str] = []
    stack: list[tuple[int, int]] = []  # (kind, position): 0 template, 1 link, 2 table
    counts = [0, 0, 0]
    last = i = 0
    search = _SPLIT_TOKEN.search
    while (m := search(s, i)) is not None:
        tok = m.group()
        start = m.start()
        i = m.end()
        if len(tok) > 3 and tok[1] in "[{":  # a simple link or template: no "|" of ours
            continue
        if tok == "|":
            if not stack:
                parts.append(s[last:start])
                last = i
            continue
        if tok == "{{" or tok == "[[" or tok[-1] == "|":
            kind = 0 if tok == "{{" else 1 if tok == "[[" else 2
            if start not in dead:
                stack.append((kind, start))
                counts[kind] += 1
            continue
        kind = 0 if tok == "}}" else 1 if tok == "]]" else 2
        if not counts[kind]:
            if kind == 2:  # "|}" that closes no table: its "|" still separates
                i = m.end() - 2
            continue
        while True:
            kd, _pos = stack.pop()
            counts[kd] -= 1
            if kd == kind:
                break
    parts.append(s[last:])
    return parts, [pos for _, pos in stack]


def _spans(s: str) -> list[tuple[int, int, int]]:
    """Top-level ``{{…}}`` (kind 0) and ``[[…]]`` (kind 1) constructs: (kind, start, end)."""
    dead: set[int] = set()
    spans: list[tuple[int, int, int]] = []
    for _attempt in range(4):
        spans = []
        stack: list[tuple[int, int]] = []
        counts = [0, 0]
        for m in _RENDER_TOKEN.finditer(s):
            tok = m.group()
            if len(tok) > 3:  # a simple link or template, whole
                if not stack:
                    spans.append((0 if tok[0] == "{" else 1, m.start(), m.end()))
                continue
            if tok == "{{" or tok == "[[":
                if m.start() not in dead:
                    kind = 0 if tok == "{{" else 1
                    stack.append((kind, m.start()))
                    counts[kind] += 1
                continue
            kind = 0 if tok == "}}" else 1
            if not counts[kind]:
                continue
            while True:
                kd, opener = stack.pop()
                counts[kd] -= 1
                if kd == kind:
                    break
            if not stack:
                spans.append((kind, opener, m.end()))
        if not stack:
            break
        dead.update(pos for _, pos in stack)
    return spans


def _params(parts: list[str]) -> tuple[list[str], dict[str, str]]:
    """(positional, named) parameters of a split template; named keys lower-cased."""
    positional: list[str] = []
    named: dict[str, str] = {}
    for part in parts[1:]:
        m = _NAMED.match(part)
        if m is None:
            positional.append(part.strip())
            continue
        key = m.group(1).strip()
        value = part[m.end() :].strip()
        if key.isdigit():
            idx = int(key) - 1
            while len(positional) <= idx:
                positional.append("")
            positional[idx] = value
        else:
            named[key.lower()] = value
    return positional, named


def _clean_region(s: str) -> str:
    """Drop refs and other extension tags (their pipes are not parameter separators)."""
    if "<" not in s:
        return s
    if "<nowiki" in s or "<NOWIKI" in s:
        s = _NOWIKI.sub(lambda m: _escape(m.group(1) or ""), s)
    s = _REF.sub("", s)
    return _STRAY_REF.sub("", s)


def _escape(s: str) -> str:
    """Verbatim text as entities, so no later pass sees its brackets or pipes."""
    for ch, ent in (("|", "&#124;"), ("{", "&#123;"), ("}", "&#125;"), ("[", "&#91;")):
        s = s.replace(ch, ent)
    return s.replace("]", "&#93;")


def _tables_to_lines(s: str) -> str:
    """Raw table markup inside a value → one bullet line per cell (items, not rows)."""
    out: list[str] = []
    for line in s.split("\n"):
        stripped = line.strip()
        if stripped.startswith(("{|", "|}", "|-")):
            out.append("")
        elif stripped.startswith("|+"):
            out.append("* " + stripped[2:])
        elif stripped.startswith(("|", "!")):
            for cell in re.split(r"\|\||!!", stripped[1:]):
                bar = cell.find("|")
                if bar > 0 and "=" in cell[:bar] and "[[" not in cell[:bar]:
                    cell = cell[bar + 1 :]  # 'style="…" | text'
                out.append("* " + cell)
        else:
            out.append(line)
    return "\n".join(out)


# ------------------------------------------------------------------ value rendering

# Template (normalised name) → how its rendering enters a value. Unknown templates
# (citations, maintenance tags, pronunciations, coordinates) contribute nothing.
_TEMPLATE_ACTIONS: dict[str, str] = {}
for _names, _action in (
    (
        "hlist, flatlist, flat list, plainlist, plain list, ubl, ublist, unbulleted list, "
        "unbullet, bulleted list, blist, bullet list, ordered list, vunblist, "
        "vunbulleted list, vertical list, collapsible list, hlist-comma, "
        "comma separated entries, cslist, bulleted, unbulleted",
        "list",
    ),
    (
        "nowrap, nobr, nobreak, small, smaller, big, larger, large, nobold, noitalic, "
        "no italic, sup, sub, em, strong, abbr, tooltip, sic, proper name, small caps, "
        "smallcaps, sc, linktext, vanchor, nihongo, nihongo2, unicode, flagathlete, "
        "nowrap begin, center, centre, avoid wrap, plain",
        "first",
    ),
    # the text is the last parameter: the first ones may be styles ("padding-top:0")
    ("longitem, longlink", "last"),
    ("lang, langx, native name, native phrase, script, resize, font, color, colour", "second"),
    ("transl, transliteration", "last"),
    (
        "birth date, birth-date, death date, death-date, birth date and age, "
        "birth-date and age, death date and age, death-date and age, start date, "
        "start-date, end date, end-date, start date and age, end date and age, dob, dts, "
        "date, film date, release date, bda, dda, birth year and age, death year and age, "
        "birth year, death year",
        "date",
    ),
    ("marriage", "marriage"),
    ("convert, cvt", "convert"),
    ("val", "val"),
    ("flag, flagcountry, flag country, flagu, flagcountry2", "flag"),
    ("ill, interlanguage link, interlanguage link multi, illm", "interlanguage"),
    ("sortname", "sortname"),
    ("url, official website, official url", "url"),
    ("circa, c.", "circa"),
    ("·, •, dot, middot, bull, break, br, endplainlist, endflatlist, end plainlist", "break"),
    ("uss, hms, hmas, hmcs, hmnzs, ss, rms, ins, usns, usat, sms", "ship"),
):
    for _n in _names.split(","):
        _TEMPLATE_ACTIONS[_n.strip()] = _action
_CONSTANTS = {
    "!": "|",
    "'": "'",
    "ndash": "–",
    "mdash": "—",
    "snd": " – ",
    "snds": " – ",
    "spnd": " – ",
    "spaced ndash": " – ",
    "spaced en dash": " – ",
    "en dash": "–",
    "em dash": "—",
    "nbsp": " ",
    "=": "=",
}
_RANGE_WORDS = frozenset({"to", "-", "–", "and", "or", "by", "x", "×", "+/-", "±", "to(-)"})


class _Out:
    """Items and shown text of a value, cut into segments at item separators."""

    __slots__ = ("items", "segments", "text")

    def __init__(self) -> None:
        self.segments: list[tuple[str, list[Item]]] = []
        self.text: list[str] = []
        self.items: list[Item] = []

    def brk(self) -> None:
        if self.text or self.items:
            self.segments.append(("".join(self.text), self.items))
            self.text = []
            self.items = []

    def add(self, item: Item, shown: str) -> None:
        self.items.append(item)
        self.text.append(shown)

    def plain(self) -> str:
        """All shown text, segments joined by spaces (for labels)."""
        self.brk()
        return _squash(" ".join(text for text, _ in self.segments))


def _squash(text: str) -> str:
    """Collapse whitespace (``&nbsp;`` included), drop empty parentheses and stray commas."""
    text = " ".join(text.split())
    if "(" in text:
        text = _EMPTY_PARENS.sub("", text)
    return text.strip(" ,;:·•")


class _Ctx:
    """Where sub-box facts go while one article-level box is read."""

    __slots__ = ("box", "facts")

    def __init__(self, box: str) -> None:
        self.box = box
        self.facts: list[Fact] = []


class InfoboxExtractor:
    """Reads a page's boxes; bound to one wiki's namespace names (build once per dump)."""

    def __init__(self, namespace_prefixes: Mapping[str, int] | None = None) -> None:
        names: dict[str, int] = {name: ns for name, ns in DEFAULT_NAMESPACES.items() if ns}
        for name, ns in (namespace_prefixes or {}).items():
            if name.strip() and ns:
                names[_WS.sub(" ", name).strip().lower()] = ns
        for name in _INTERWIKI:
            names.setdefault(name, _INTERWIKI_NS)
        self._prefixes = names
        # raw key → normalised key, or "" when it is no fact (layout): keys repeat
        # across a dump's boxes, and their normalisation was a tenth of the reading
        self._keys: dict[str, str] = {}

    # ------------------------------------------------------------------ page level

    def boxes(self, wikitext: str) -> tuple[Box, ...]:
        """Every article-level box of the page, in page order. Never raises."""
        if "box" not in wikitext and "Box" not in wikitext:
            return ()
        text = _COMMENT.sub("", wikitext) if "<!--" in wikitext else wikitext
        found: list[Box] = []
        pos = 0
        for at in _box_words(text):
            if at < pos:
                continue
            opener = text.rfind("{{", max(pos, at - 100), at)
            m = _BOX_OPEN.match(text, opener) if opener >= 0 else None
            if m is None or m.end(1) < at + 3 or (kind := box_type(m.group(1))) is None:
                continue
            end = _box_end(text, opener)
            if end < 0:
                # Never closes: an inner "{{" took its "}}", or the page is truncated.
                # The box then ends at its last "}}" on a line of its own before the
                # prose, or at the prose.
                cut = _TRUNCATED_END.search(text, m.end())
                stop = cut.start() if cut else len(text)
                close = text.rfind("\n}}", m.end(), stop)
                end = close + 3 if close >= 0 else stop
                inner = text[opener + 2 : close + 1 if close >= 0 else stop]
            else:
                inner = text[opener + 2 : end - 2]
            try:
                ctx = _Ctx(kind)
                name = self._read_box(_clean_region(inner), kind, "", ctx, 0)
                found.append(Box(kind, name, tuple(ctx.facts)))
            except Exception:  # a box we cannot read costs its facts, never the page's load
                pass
            pos = end
        return tuple(found)

    def facts(self, wikitext: str) -> tuple[Fact, ...]:
        """The facts of every box of the page (sub-boxes included), in page order."""
        return tuple(f for box in self.boxes(wikitext) for f in box.facts)

    def _read_box(self, inner: str, kind: str, sub: str, ctx: _Ctx, depth: int) -> str:
        """Add the facts of one box (``inner`` is its text between the braces); its name."""
        parts = _split(inner)
        values: dict[str, str] = {}  # raw key → value; the last of a repeated key wins
        for part in parts[1:]:
            m = _NAMED.match(part)
            if m is not None and m.group(1):
                values[m.group(1)] = part[m.end() :]
        keys = self._keys
        for raw_key, raw in values.items():
            key = keys.get(raw_key)
            if key is None:
                key = normalize_key(raw_key)
                if key and _is_layout(key):
                    key = ""
                if len(keys) >= _MAX_KEYS:
                    keys.clear()
                keys[raw_key] = key
            if not key:
                continue
            fact = self._fact(kind if not sub else ctx.box, key, raw_key, raw, sub, ctx, depth)
            if fact is not None:
                ctx.facts.append(fact)
        return " ".join(parts[0].split())

    def _fact(
        self, box: str, key: str, raw_key: str, raw: str, sub: str, ctx: _Ctx, depth: int
    ) -> Fact | None:
        raw = raw.strip()
        if not raw:
            return None
        if _PLAIN.fullmatch(raw):
            # no markup at all ("1,246,700", "UTC+1", "Euro"): what the renderer would
            # give, without it (most values of a box are plain; the load reads millions)
            text = _squash(raw)
            if not _WORD.search(text) or _LAYOUT_VALUE.fullmatch(text):
                return None
            return Fact(box, key, raw_key, text, (literal(text, key),), sub)
        link = _ONE_LINK.fullmatch(raw)
        if link is not None:
            # what _render and _link give a lone link, without them
            target, label = link.group(1).strip(), link.group(2)
            shown = " ".join((target.replace("_", " ") if label is None else label).split())
            title = normalize_title(target)
            if title:
                text = _squash(shown)
                item = Link(title, shown or title)
                dated = [
                    LiteralValue("date", w, iso) for w, iso in dates_in(text) if w not in item.label
                ]
                return Fact(box, key, raw_key, text, (*dated, item), sub)
        if "{|" in raw:
            raw = _tables_to_lines(raw)
        out = _Out()
        self._render("\n" + raw, out, ctx, depth)
        out.brk()
        texts: list[str] = []
        items: list[Item] = []
        for shown, found in out.segments:
            text = _squash(shown)
            if found:
                # a date written beside the links ("17 August 1945 (Secker and Warburg,
                # London)") is an item too: what a question of when asks,
                linked = " ".join(i.label if isinstance(i, Link) else i.text for i in found)
                items.extend(
                    LiteralValue("date", written, iso)
                    for written, iso in dates_in(text)
                    if written not in linked
                )
                # and a year of an era ("384 BC [[Stagira]], …": when Aristotle was born)
                items.extend(
                    LiteralValue("year", written, year)
                    for written, year in era_years_in(text)
                    if written not in linked
                )
                items.extend(found)
            elif _WORD.search(text) and not _LAYOUT_VALUE.fullmatch(text):
                items.append(literal(text, key))
            else:
                continue
            texts.append(text)
        if not items:
            return None
        return Fact(box, key, raw_key, "; ".join(t for t in texts if t), tuple(items), sub)

    # ------------------------------------------------------------------ rendering

    def _render(self, s: str, out: _Out, ctx: _Ctx, depth: int) -> None:
        """Wikitext of (part of) a value → ``out``: text, separators and items."""
        if "{" not in s and "[" not in s and "}" not in s and "]" not in s:
            _text(s, out)
            return
        last = 0
        for kind, start, end in _spans(s):
            if start > last:
                _text(s[last:start], out)
            inner = s[start + 2 : end - 2]
            if depth >= _MAX_DEPTH:
                pass
            elif kind:
                self._link(inner, out, ctx, depth)
            else:
                self._template(inner, out, ctx, depth)
            last = end
        if last < len(s):
            _text(s[last:], out)

    def _label(self, s: str, ctx: _Ctx, depth: int) -> str:
        if "{" not in s and "[" not in s and "'" not in s and "<" not in s and "&" not in s:
            return " ".join(s.split())
        sub = _Out()
        self._render(s, sub, ctx, depth + 1)
        return sub.plain()

    def _link(self, inner: str, out: _Out, ctx: _Ctx, depth: int) -> None:
        bar = inner.find("|")
        target = (inner if bar < 0 else inner[:bar]).strip()
        colon_link = target.startswith(":")
        if colon_link:
            target = target[1:].lstrip()
        if "&" in target:
            target = html.unescape(target)
        if "%" in target:
            target = unquote(target)
        if bar >= 0:
            label = inner[bar + 1 :]
        else:
            label = (target.split("#", 1)[0] or target.lstrip("#")).replace("_", " ")
        colon = target.find(":")
        if colon > 0:
            ns = self._prefixes.get(_WS.sub(" ", target[:colon]).strip().lower())
            if ns is not None:
                if not colon_link and ns in (_FILE_NS, _CATEGORY_NS, -2):
                    return  # an image or a category: nothing to show
                if bar < 0:
                    label = target[colon + 1 :]
                out.text.append(self._label(label, ctx, depth))
                return
        if bar >= 0 and not label.strip():
            label = _PIPE_TRICK.sub("", target)  # pipe trick: [[Foo (bar)|]] shows "Foo"
        shown = self._label(label, ctx, depth)
        title = normalize_title(target) if target and not _BAD_TARGET.search(target) else ""
        if title:
            out.add(Link(title, shown or title), shown or title)
        else:
            out.text.append(shown)

    def _template(self, inner: str, out: _Out, ctx: _Ctx, depth: int) -> None:
        bar = inner.find("|")
        raw_name = inner if bar < 0 else inner[:bar]
        name = _template_name(raw_name)
        constant = _CONSTANTS.get(name)
        if constant is not None:
            out.text.append(constant)
            return
        action = _TEMPLATE_ACTIONS.get(name)
        if action is None:
            if name.startswith("lang-"):
                action = "first"
            elif _KEYWORD.search(name) and (sub := box_type(raw_name)) is not None:
                self._read_box(inner, ctx.box, sub, ctx, depth + 1)
                return
            else:
                return
        pos, named = _params(_split(inner))
        d = depth + 1
        if action == "first":
            self._render(pos[0] if pos else named.get("text", ""), out, ctx, d)
        elif action == "second":
            self._render(pos[1] if len(pos) > 1 else named.get("text", ""), out, ctx, d)
        elif action == "last":
            self._render(pos[-1] if pos else "", out, ctx, d)
        elif action == "list":
            for p in pos:
                out.brk()
                self._render("\n" + p, out, ctx, d)
                out.brk()
        elif action == "break":
            out.brk()
        elif action == "date":
            self._date(name, pos, out, ctx, d)
        elif action == "marriage":
            self._marriage(pos, named, out, ctx, d)
        elif action in ("convert", "val"):
            _quantity(action, pos, named, out)
        elif action in ("flag", "interlanguage"):
            if action == "interlanguage":
                pos = interlanguage_args(pos)
            if pos and pos[0].strip():
                target = normalize_title(html.unescape(pos[0]))
                label = named.get("name") or named.get("lt") or pos[0]
                if target and not _BAD_TARGET.search(target):
                    shown = self._label(label, ctx, d)
                    out.add(Link(target, shown), shown)
        elif action == "sortname" and len(pos) >= 2:
            shown = f"{pos[0].strip()} {pos[1].strip()}"
            if (len(pos) > 2 and pos[2].strip() == "nolink") or "nolink" in named:
                out.text.append(shown)
            else:
                target = pos[3] if len(pos) > 3 and pos[3].strip() else shown
                out.add(Link(normalize_title(target), shown), shown)
        elif action == "url" and pos:
            out.text.append(re.sub(r"^(?:https?:)?//", "", pos[0].strip()))
        elif action == "circa":
            out.text.append("c. ")
            self._render(pos[0] if pos else "", out, ctx, d)
        elif action == "ship" and pos:
            shown = f"{name.upper()} {pos[0].strip()}"
            extra = pos[1].strip() if len(pos) > 1 else ""
            out.add(Link(f"{shown} ({extra})" if extra else shown, shown), shown)

    def _date(self, name: str, pos: list[str], out: _Out, ctx: _Ctx, depth: int) -> None:
        """``{{birth date|1894|7|26}}``, ``{{start-date|July 16, 1969}}``, ``{{dts|…}}``."""
        fields = [p.strip() for p in pos[:3]]
        iso: str | None = None
        if fields and fields[0].isdigit():
            month: int | None = None
            if len(fields) > 1 and fields[1]:
                month = int(fields[1]) if fields[1].isdigit() else MONTHS.get(fields[1].lower())
                if month is None:
                    month = 0  # not a month: iso_date rejects it
            day = int(fields[2]) if len(fields) > 2 and fields[2].isdigit() else None
            iso = iso_date(int(fields[0]), month, day if month else None)
        elif fields:
            iso = parse_date(self._label(fields[0], ctx, depth))
        if iso is None:
            shown = " ".join(f for f in fields if f)
            if shown:
                out.text.append(self._label(shown, ctx, depth))
            return
        shown = shown_date(iso)
        out.add(LiteralValue("date", shown, iso), shown)

    def _marriage(
        self, pos: list[str], named: dict[str, str], out: _Out, ctx: _Ctx, depth: int
    ) -> None:
        """``{{marriage|[[Spouse]]|1929|1979|end=w.}}`` → the spouse, years as its note."""
        if not pos:
            return
        sub = _Out()
        self._render(pos[0], sub, ctx, depth)
        years = "–".join(p.strip() for p in pos[1:3] if p.strip())
        end = named.get("end", "").strip()
        note = f"m. {years}" + (f", {end}" if end and years else "") if years else ""
        links = [i for _, found in sub.segments for i in found if isinstance(i, Link)]
        links += [i for i in sub.items if isinstance(i, Link)]
        shown = sub.plain()
        if not shown:
            return
        suffix = f" ({note})" if note else ""
        if links:
            for link in links:
                out.add(Link(link.target, link.label, note), link.label + suffix)
        else:
            out.add(LiteralValue("text", shown, shown, note=note), shown + suffix)


def _quantity(action: str, pos: list[str], named: dict[str, str], out: _Out) -> None:
    """``{{convert|135765|km2|sqmi}}`` → number 135765 km2; ``{{val|1.2|u=kg}}`` alike."""
    if not pos:
        return
    if action == "convert":
        if len(pos) >= 4 and pos[1].strip().lower() in _RANGE_WORDS:
            out.text.append(" ".join(p.strip() for p in pos[:4]))
            return
        unit = pos[1].strip() if len(pos) > 1 else ""
    else:
        unit = (named.get("u") or named.get("ul") or named.get("up") or "").strip()
    raw = pos[0].strip()
    num = number_of(raw)
    shown = f"{raw} {unit}".strip()
    if num is None or num[1]:
        out.text.append(shown)
        return
    value = num[0]
    if action == "val" and named.get("e", "").strip().lstrip("-").isdigit():
        value *= 10 ** int(named["e"])
    out.add(LiteralValue("number", shown, value, unit), shown)


def _text(chunk: str, out: _Out) -> None:
    """Plain wikitext between links and templates: markup off, separators cut items."""
    if "<" in chunk:
        chunk = _BREAK_TAG.sub("\n*", chunk)
        chunk = _FOOTNOTE_MARK.sub("", chunk)  # "[[Euro]]<sup>d</sup>": a note's mark
        chunk = _HTML_TAG.sub("", chunk)
    if "''" in chunk:
        chunk = _QUOTES.sub("", chunk)
    if "[" in chunk or "]" in chunk or "{" in chunk or "}" in chunk:
        chunk = _EXT_LINK.sub(lambda m: m.group(1) or "", chunk)
        chunk = _EXT_OPEN.sub("", chunk)
        chunk = _STRAY_TEMPLATE.sub("", chunk)  # "{{nowrap" that never closed: no name
        chunk = _BRACKETS.sub("", chunk)
    if "&" in chunk:
        chunk = html.unescape(chunk)
    if "\n" not in chunk:
        out.text.append(chunk)
        return
    lines = chunk.split("\n")
    out.text.append(lines[0])
    for line in lines[1:]:
        marker = _LIST_MARKER.match(line)
        if marker is not None:
            out.brk()
            out.text.append(line[marker.end() :])
        elif not line.strip():
            out.brk()
        else:
            out.text.append(" " + line)


# ------------------------------------------------------------------ module API


@lru_cache(maxsize=16)
def _extractor(prefixes: tuple[tuple[str, int], ...]) -> InfoboxExtractor:
    return InfoboxExtractor(dict(prefixes))


def extract_boxes(
    wikitext: str, *, namespace_prefixes: Mapping[str, int] | None = None
) -> tuple[Box, ...]:
    """The article-level boxes of one page (see :class:`InfoboxExtractor`)."""
    return _extractor(tuple(sorted((namespace_prefixes or {}).items()))).boxes(wikitext)


def extract_facts(
    wikitext: str, *, namespace_prefixes: Mapping[str, int] | None = None
) -> tuple[Fact, ...]:
    """Every fact of every box of one page, in page order; ``()`` when it has none.

    ``namespace_prefixes`` adds a dump's localised namespace names (from
    ``<siteinfo>``), so ``[[Datei:…]]`` is known as a file; English names are built in.
    """
    return _extractor(tuple(sorted((namespace_prefixes or {}).items()))).facts(wikitext)

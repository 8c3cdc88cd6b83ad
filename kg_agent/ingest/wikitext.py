"""Wikitext to clean per-section text, links, categories, a disambiguation flag and the
infoboxes' facts (read by :mod:`kg_agent.ingest.infobox`).

Why a hand-written scanner rather than mwparserfromhell: building its node tree
costs about 1.7 MB/s (≈60 large pages/s) on the English sample, which makes a full
English dump a day-long job; this scanner makes one regex pass per concern and one
linear pass over the brace/bracket tokens of each section, so cost grows linearly
with page size. It is deliberately lossy: the goal is readable prose for embedding
and the wikilink graph, not a faithful rendering.

Decisions the load pipeline relies on:

* Templates never contribute text except a small set of inline-text templates
  (``{{lang|fr|texte}}`` → ``texte``, ``{{convert|5|km}}`` → ``5 km``, dates,
  quotes, ...). Wikilinks written inside template parameters (infobox values) and
  tables count as links of the section; ``{{main|X}}``/``{{see also|X}}``/
  ``{{further|X}}`` count as links to ``X``.
* Tables, ``<ref>``, ``<math>``/``<chem>``, galleries, code blocks
  (``<syntaxhighlight>``/``<source>``) and comments are dropped. ``<nowiki>`` and
  ``<pre>`` contents are kept verbatim.
* Files/images are dropped with their captions; links in captions are not counted.
* Boilerplate sections (References, External links, Notes, ...; see
  :data:`BOILERPLATE_HEADINGS`) and their subsections are dropped, links included.
  "See also" is an ordinary section: its list becomes lines of text and its links count.
* ``heading_path`` includes the section's own heading (lead: ``()``); sections whose
  cleaned text is empty are dropped, but their headings stay in their children's paths.
"""

from __future__ import annotations

import html
import itertools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import unquote

from kg_agent.ingest.facts import Box
from kg_agent.ingest.infobox import InfoboxExtractor
from kg_agent.ingest.markup import BAD_TARGET as _BAD_TARGET
from kg_agent.ingest.markup import BRACKETS as _BRACKETS
from kg_agent.ingest.markup import PIPE_TRICK as _PIPE_TRICK
from kg_agent.ingest.markup import QUOTES as _QUOTES
from kg_agent.ingest.markup import WORD as _WORD
from kg_agent.ingest.markup import interlanguage_args
from kg_agent.ingest.namespaces import DEFAULT_NAMESPACES
from kg_agent.ingest.records import ParsedSection
from kg_agent.ingest.titles import normalize_title

__all__ = [
    "BOILERPLATE_HEADINGS",
    "LINK_TEMPLATES",
    "WikitextParser",
    "WikitextResult",
    "parse_wikitext",
]


@dataclass(frozen=True, slots=True)
class WikitextResult:
    """What one page's wikitext yields; fields map onto :class:`ParsedPage`."""

    sections: tuple[ParsedSection, ...]
    categories: tuple[str, ...]
    is_disambiguation: bool
    boxes: tuple[Box, ...] = ()  # the page's infoboxes, with their facts (infobox.py)


# Section headings (compared lower-cased) whose sections, with their subsections, are
# dropped: they hold citations and outbound URLs, not prose about the subject.
BOILERPLATE_HEADINGS: frozenset[str] = frozenset(
    {
        "references",
        "external links",
        "external link",
        "notes",
        "further reading",
        "bibliography",
        "sources",
        "citations",
        "footnotes",
        "notes and references",
        "references and notes",
        "works cited",
    }
)

# Interwiki prefixes to sister projects and a few link services: the text shows the
# label, but the target is not an article of this wiki.
_INTERWIKI = frozenset(
    """wikt wiktionary s wikisource q wikiquote b wikibooks n wikinews v wikiversity
    voy wikivoyage species wikispecies commons c meta m metawikimedia mw mediawikiwiki
    d wikidata foundation wmf w incubator outreach phab phabricator wikimedia
    doi arxiv pmid rfc iarchive google""".split()  # noqa: SIM905 - a word list reads better
)

# Wikipedia language editions: ``[[de:X]]`` is an interlanguage link (dropped from
# text); ``[[:de:X|label]]`` shows the label.
_LANGUAGES = frozenset(
    """aa ab ace ady af ak als alt am an ang ar arc ary arz as ast atj av avk awa ay az
    azb ba ban bar bat-smg bcl be be-tarask be-x-old bg bh bi bjn blk bm bn bo bpy br bs
    bug bxr ca cbk-zam cdo ce ceb ch cho chr chy ckb co cr crh cs csb cu cv cy da dag de
    din diq dsb dty dv dz ee el eml en eo es et eu ext fa fat ff fi fiu-vro fj fo fr frp
    frr fur fy ga gag gan gcr gd gl glk gn gom gor got gpe gu guc gur guw gv ha hak haw
    he hi hif ho hr hsb ht hu hy hyw hz ia id ie ig ii ik ilo inh io is it iu ja jam jbo
    jv ka kaa kab kbd kbp kcg kg ki kj kk kl km kn ko koi kr krc ks ksh ku kv kw ky la
    lad lb lbe lez lfn lg li lij lld lmo ln lo lrc lt ltg lv mad mai map-bms mdf mg mh
    mhr mi min mk ml mn mni mnw mo mr mrj ms mt mus mwl my myv mzn na nah nap nds nds-nl
    ne new ng nia nl nn no nov nqo nrm nso nv ny oc olo om or os pa pag pam pap pcd pcm
    pdc pfl pi pih pl pms pnb pnt ps pt pwn qu rm rmy rn ro roa-rup roa-tara ru rue rw
    sa sah sat sc scn sco sd se sg sh shi shn si simple sk skr sl sm smn sn so sq sr srn
    ss st stq su sv sw szl szy ta tay tcy te tet tg th ti tk tl tly tn to tpi tr trv ts
    tt tum tw ty tyv udm ug uk ur uz ve vec vep vi vls vo wa war wo wuu xal xh xmf yi yo
    yue za zea zgh zh zh-classical zh-min-nan zh-yue zu""".split()  # noqa: SIM905
)

# Link-target kinds.
_FILE, _CATEGORY, _OTHER, _LANGUAGE, _INTERWIKI_KIND = range(5)

# Template kinds that are disambiguation or set-index pages.
_DISAMBIG_TEMPLATES = frozenset(
    {
        "disambiguation",
        "disambig",
        "dab",
        "disamb",
        "hndis",
        "geodis",
        "set index",
        "set index article",
        "sia",
    }
)
# Hatnote templates whose positional parameters are article titles (real relations).
LINK_TEMPLATES = frozenset(
    {
        "main",
        "main article",
        "see also",
        "see also2",
        "further",
        "further information",
        "details",
        "more information",
    }
)

# ---------------------------------------------------------------------------- regexes

_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
# Contents kept verbatim: swapped for placeholders so no later pass touches them.
_VERBATIM = re.compile(r"<(nowiki|pre)\b[^>]*?(?:/>|>(.*?)</\1\s*>)", re.S | re.I)
_PLACEHOLDER = re.compile("\ue000(\\d+)\ue001")
# Tag blocks dropped whole, self-closing or not (``<ref name=x/>``). An opening tag
# that never closes is not a block: _STRAY_DROPPED removes just the tag, so one broken
# <ref> cannot erase the rest of the page.
_DROPPED_TAGS = (
    "ref|references|math|chem|ce|gallery|imagemap|timeline|score|graph|mapframe|"
    "templatedata|templatestyles|syntaxhighlight|source|includeonly|inputbox|"
    "categorytree|hiero|maplink|section"
)
_DROPPED = re.compile(rf"<({_DROPPED_TAGS})\b(?:[^>]*?/>|[^>]*>.*?</\1\s*>)", re.S | re.I)
# After the blocks above are gone, a lone closing tag can remain (an unbalanced ref).
_STRAY_DROPPED = re.compile(rf"</?(?:{_DROPPED_TAGS})\b[^>]*>", re.I)
# Every scanner pattern starts each branch with a literal character, so the regex engine
# skips to candidates in C; a "^" branch made it try every position (2.6x slower). A
# line's start is its "\n", and the text's own start is matched apart (the *_AT_START).
_HEADING = re.compile(r"\n(=+)(.+?)(=+)[ \t]*$", re.M)
_HEADING_AT_START = re.compile(r"(=+)(.+?)(=+)[ \t]*$", re.M)
# A link with nothing nested in it is one token (most links): one trip round the
# renderer's loop, not two.
_TOKEN = re.compile(r"\[\[[^\[\]{}\n]*\]\](?!\])|\{\{|\}\}|\[\[|\]\]|\n[ \t:]*\{\||\n[ \t]*\|\}")
_TABLE_AT_START = re.compile(r"[ \t:]*\{\||[ \t]*\|\}")
_PARAM_TOKEN = re.compile(r"\{\{|\}\}|\[\[|\]\]|\|")
_TEMPLATE_NAME = re.compile(r"\{\{\s*([^{}|\n]*?)\s*(?=\||\}\})")
_EXT_LINK = re.compile(
    r"\[(?:https?:|ftp:|ftps:|//|mailto:|news:|irc:|ircs:|gopher:|urn:)[^\s\]]*"
    r"(?:[ \t]+([^\]\n]*))?\]",
    re.I,
)
_HTML_TAGS = (
    "abbr|b|bdi|bdo|big|blockquote|br|caption|center|cite|code|data|dd|del|dfn|div|dl|"
    "dt|em|font|h[1-6]|hr|i|ins|kbd|li|mark|noinclude|nowiki|ol|onlyinclude|p|poem|pre|q|"
    "rb|rp|rt|rtc|ruby|s|samp|small|span|strike|strong|sub|sup|table|td|th|time|tr|tt|"
    "u|ul|var|wbr|indicator"
)
_BREAK_TAG = re.compile(r"<(?:br|wbr|hr)\b[^<>]*>", re.I)
_HTML_TAG = re.compile(rf"</?(?:{_HTML_TAGS})\b[^<>]*>", re.I)
_MAGIC = re.compile(r"__[A-Z]+__")
_SPACE_BEFORE_PUNCT = re.compile(r" +([,.;:!?)\]])")
_SPACE_AFTER_OPEN = re.compile(r"([(\[]) +")
_EMPTY_PARENS = re.compile(r" ?\([\s,;:]*\)")
# "(; born 1879" and "(x, )" are what removed templates (pronunciations) leave behind.
_PAREN_LEAD = re.compile(r"\((?:\s*[,;:])+\s*")
_PAREN_TRAIL = re.compile(r"(?:\s*[,;])+\s*\)")
# What the three patterns above need to match at all, in patterns the engine scans fast
# (theirs start with a repeat, so every position is tried): checked first, they skip
# the substitutions on the many lines that have nothing to clean.
_EMPTY_PARENS_HINT = re.compile(r"\([\s,;:]*\)")
_PAREN_TRAIL_HINT = re.compile(r"[,;]\s*\)")
_SPACE_BEFORE_PUNCT_HINT = re.compile(r"\s[,.;:!?)\]]")
_LIST_MARKER = re.compile(r"^[*#:;]+")
_NAMED_PARAM = re.compile(r"^\s*([^=\[\]{}|]*?)\s*=(?!=)")
_WS_UNDERSCORE = re.compile(r"[\s_]+")

_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_RANGE_WORDS = frozenset({"to", "-", "–", "and", "or", "by", "x", "×", "+/-", "±", "to(-)"})

_MAX_DEPTH = 12


def _kind_of(ns: int) -> int:
    if ns in (6, -2):
        return _FILE
    if ns == 14:
        return _CATEGORY
    return _OTHER


@lru_cache(maxsize=1 << 14)  # a few hundred template and namespace names recur
def _key(name: str) -> str:
    """Compare namespace and template names the way MediaWiki does (case, ``_``)."""
    return _WS_UNDERSCORE.sub(" ", name).strip().lower()


class WikitextParser:
    """Reusable parser bound to one wiki's namespace names (build once per dump)."""

    def __init__(
        self,
        namespace_prefixes: Mapping[str, int] | None = None,
        *,
        keep_link_only_sections: bool = False,
    ) -> None:
        self._keep_link_only = keep_link_only_sections
        names: dict[str, int] = dict(DEFAULT_NAMESPACES)
        for name, ns in (namespace_prefixes or {}).items():
            if name.strip():
                names[_key(name)] = ns
        prefixes: dict[str, int] = {}
        for code in _LANGUAGES:
            prefixes[code] = _LANGUAGE
        for code in _INTERWIKI:
            prefixes[code] = _INTERWIKI_KIND
        for name, ns in names.items():
            if ns != 0:
                prefixes[name] = _kind_of(ns)
        self._prefixes = prefixes
        cat_names = sorted(
            (n for n, k in prefixes.items() if k == _CATEGORY), key=len, reverse=True
        )
        alternation = "|".join(re.escape(n).replace(r"\ ", "[ _]+") for n in cat_names)
        self._category_re = re.compile(
            rf"\[\[[ \t]*(?:{alternation})[ \t]*:([^\[\]{{}}|\n]*)(?:\|[^\[\]\n]*)?\]\]",
            re.I,
        )
        self._templates: dict[str, Callable[[list[str], dict[str, str], str], str]] = (
            _inline_templates()
        )
        self._boxes = InfoboxExtractor(namespace_prefixes)

    # ------------------------------------------------------------------ page level

    def parse(self, title: str, wikitext: str) -> WikitextResult:
        """Clean a page's wikitext into sections, categories and a disambiguation flag,
        and read its infoboxes' facts."""
        text = _COMMENT.sub("", wikitext) if "<!--" in wikitext else wikitext
        boxes = self._boxes.boxes(text)  # (comments out once, for both readers)
        verbatim: list[str] = []
        if "<" in text:
            text = _VERBATIM.sub(lambda m: _stash(verbatim, m.group(2) or ""), text)
            text = _DROPPED.sub("", text)
            text = _STRAY_DROPPED.sub("", text)

        categories = self._categories(text)
        is_disambiguation = title.endswith(" (disambiguation)") or self._is_disambiguation(text)

        sections: list[ParsedSection] = []
        path: list[tuple[int, str]] = []  # (level, heading) of open ancestors
        skip_level = 0  # >0 while inside a boilerplate section and its subsections
        # The section being collected: heading, path, level, body start, heading links.
        current: tuple[str, tuple[str, ...], int, int, list[str]] | None = ("", (), 1, 0, [])
        first = _HEADING_AT_START.match(text)
        for m in itertools.chain((first,) if first else (), _HEADING.finditer(text)):
            if current is not None:
                body = text[current[3] : m.start(1)]
                self._add_section(sections, title, verbatim, current, body)
            current = None
            left, mid, right = m.group(1), m.group(2), m.group(3)
            level = min(len(left), len(right), 6)
            if skip_level and level > skip_level:
                continue
            skip_level = 0
            raw_heading = "=" * (len(left) - level) + mid + "=" * (len(right) - level)
            heading_links: list[str] = []
            heading = _single_line(
                _finish(self._render(raw_heading, heading_links, title), verbatim)
            )
            while path and path[-1][0] >= level:
                path.pop()
            if heading.lower() in BOILERPLATE_HEADINGS:
                skip_level = level
                continue
            path.append((level, heading))
            current = (heading, tuple(h for _, h in path), level, m.end(), heading_links)
        if current is not None:
            self._add_section(sections, title, verbatim, current, text[current[3] :])
        return WikitextResult(tuple(sections), categories, is_disambiguation, boxes)

    def _add_section(
        self,
        sections: list[ParsedSection],
        title: str,
        verbatim: list[str],
        current: tuple[str, tuple[str, ...], int, int, list[str]],
        body: str,
    ) -> None:
        heading, path, level, _start, heading_links = current
        links = list(heading_links)  # links in a heading belong to its section
        text = _finish(self._render(body, links, title), verbatim)
        if text or (links and self._keep_link_only):
            sections.append(ParsedSection(heading, path, level, text, tuple(links)))

    def _categories(self, text: str) -> tuple[str, ...]:
        found: dict[str, None] = {}
        if "[[" in text:
            for m in self._category_re.finditer(text):
                name = normalize_title(html.unescape(m.group(1)))
                if name:
                    found[name] = None
        return tuple(found)

    def _is_disambiguation(self, text: str) -> bool:
        if "__DISAMBIG__" in text:
            return True
        for m in _TEMPLATE_NAME.finditer(text):
            name = _key(m.group(1))
            if name.startswith("template:"):
                name = name[9:].lstrip()
            if name in _DISAMBIG_TEMPLATES or name.endswith("disambiguation"):
                return True
        return False

    # -------------------------------------------------------------- token scanner

    def _render(self, s: str, links: list[str] | None, title: str, depth: int = 0) -> str:
        """Wikitext → text with links/templates/tables resolved (inline markup left).

        Appends article link targets to ``links`` unless it is None. An opener that
        never closes is dropped and the text rescanned without it (MediaWiki would
        print it literally), so one stray ``{{`` cannot swallow a section.
        """
        if "{" not in s and "[" not in s and "}" not in s and "]" not in s:
            return s
        dead: set[int] = set()
        for _attempt in range(4):
            out: list[str] = []
            found: list[str] = []
            unclosed = self._render_once(s, out, found, dead, title, depth)
            if not unclosed:
                break
            dead.update(unclosed)  # after 4 passes, keep what the last one made
        if links is not None:
            links.extend(found)
        return "".join(out)

    def _render_once(
        self,
        s: str,
        out: list[str],
        found: list[str],
        dead: set[int],
        title: str,
        depth: int,
    ) -> list[int]:
        # stack entries: (kind, position of the opener); kinds 0 template, 1 link, 2 table
        stack: list[tuple[int, int]] = []
        open_count = [0, 0, 0]  # per kind, so lookups never walk a deep stack
        text_from = 0
        i = 0
        search = _TOKEN.search
        at_start = _TABLE_AT_START.match(s)
        while True:
            m: re.Match[str] | None
            if at_start is not None:
                m, at_start = at_start, None
            else:
                m = search(s, i)
            if m is None:
                break
            tok = m.group()
            end = m.end()
            if tok[0] == "[" and len(tok) > 2:  # a whole link, nothing nested
                if not open_count[1]:  # links nested in a link are file captions: skip
                    label, target = self._link(tok[2:-2], title, depth, want_label=not stack)
                    if target:
                        found.append(target)
                    if not stack:
                        out.append(s[text_from : end - len(tok)])
                        out.append(label)
                        text_from = end
                i = end
                continue
            if tok == "{{" or tok == "[[" or tok[-2:] == "{|":
                kind = 0 if tok == "{{" else 1 if tok == "[[" else 2
                start = end - 2
                if not stack:
                    out.append(s[text_from:start])
                    text_from = end
                if start not in dead:
                    stack.append((kind, start))
                    open_count[kind] += 1
                i = end
                continue
            kind = 0 if tok == "}}" else 1 if tok == "]]" else 2
            start = end - 2
            if not open_count[kind]:
                if kind == 2:
                    # "|}" not closing a table, e.g. "|}}" ending a template: step over "|".
                    i = start + 1
                    continue
                if not stack:  # stray closer at top level: drop it
                    out.append(s[text_from:start])
                    text_from = end
                i = end
                continue
            # Close the innermost opener of this kind; openers above it never closed.
            while True:
                kd, opener = stack.pop()
                open_count[kd] -= 1
                if kd == kind:
                    break
            inner = s[opener + 2 : start]
            if kind == 1:
                if not open_count[1]:  # links nested in a link are file captions: skip
                    label, target = self._link(inner, title, depth, want_label=not stack)
                    if target:
                        found.append(target)
                    if not stack:
                        out.append(label)
            elif kind == 0 and not stack:
                out.append(self._template(inner, found, title, depth))
            if not stack:
                text_from = end
            i = end
        if stack:
            return [pos for _, pos in stack]
        out.append(s[text_from:])
        return []

    def _link(
        self, inner: str, title: str, depth: int, *, want_label: bool = True
    ) -> tuple[str, str | None]:
        """(text to show, normalised article target or None) for ``[[inner]]``.

        ``want_label`` False (a link inside a template or table) skips rendering the
        label, which nobody reads, so nested markup is not rescanned at every level.
        """
        bar = inner.find("|")
        raw = inner if bar < 0 else inner[:bar]
        target = raw.strip()
        colon_link = target.startswith(":")
        if colon_link:
            target = target[1:].lstrip()
        if "&" in target:
            target = html.unescape(target)
        if "%" in target:
            target = unquote(target)
        if bar >= 0:
            label = inner[bar + 1 :]
        else:  # shown as written, minus the anchor ("#Section" alone shows "Section")
            label = (target.split("#", 1)[0] or target.lstrip("#")).replace("_", " ")
        colon = target.find(":")
        if colon > 0:
            kind = self._prefixes.get(_key(target[:colon]))
            if kind is not None:
                if not colon_link and kind in (_FILE, _CATEGORY, _LANGUAGE):
                    return "", None
                if bar < 0 and kind in (_LANGUAGE, _INTERWIKI_KIND):
                    label = target[colon + 1 :].replace("_", " ")
                return self._label(label, title, depth, want_label), None
        if bar >= 0 and not label.strip():  # pipe trick: [[Foo (bar)|]] shows "Foo"
            label = _PIPE_TRICK.sub("", target)
        if not target or _BAD_TARGET.search(target):
            return self._label(label, title, depth, want_label), None
        return self._label(label, title, depth, want_label), normalize_title(target) or None

    def _label(self, label: str, title: str, depth: int, want: bool = True) -> str:
        if not want:
            return ""
        if "{" in label or "[" in label:
            if depth < _MAX_DEPTH:
                return self._render(label, None, title, depth + 1)
            return _BRACKETS.sub("", label)  # absurdly deep nesting: just unwrap
        return label

    # -------------------------------------------------------------------- templates

    def _template(self, inner: str, found: list[str], title: str, depth: int) -> str:
        """Text of a top-level template: '' except for a few inline-text templates."""
        bar = inner.find("|")
        name = _key(inner if bar < 0 else inner[:bar])
        if name.startswith("template:"):
            name = name[9:].lstrip()
        if name in LINK_TEMPLATES:
            positional, _named = _split_params(inner)
            for p in positional:
                target = p.strip().lstrip(":")
                colon = target.find(":")
                if colon > 0 and _key(target[:colon]) in self._prefixes:
                    continue  # {{see also|Category:X}}, {{main|wikt:x}}: not an article
                target = normalize_title(target)
                if target and not _BAD_TARGET.search(target):
                    found.append(target)
            return ""
        handler = self._templates.get(name)
        if handler is None:
            if name.startswith("lang-"):
                handler = _first
            elif name in ("pagename", "fullpagename"):
                return title
            else:
                return ""
        if depth >= _MAX_DEPTH:
            return ""
        positional, named = _split_params(inner)
        return self._label(handler(positional, named, name), title, depth)


def _stash(store: list[str], content: str) -> str:
    store.append(content)
    return f"\ue000{len(store) - 1}\ue001"


def _split_params(inner: str) -> tuple[list[str], dict[str, str]]:
    """Split template content on top-level ``|``: (positional values, named values)."""
    parts: list[str] = []
    depth = 0
    last = 0
    for m in _PARAM_TOKEN.finditer(inner):
        tok = m.group()
        if tok == "|":
            if depth == 0:
                parts.append(inner[last : m.start()])
                last = m.end()
        elif tok in ("{{", "[["):
            depth += 1
        elif depth:
            depth -= 1
    parts.append(inner[last:])
    positional: list[str] = []
    named: dict[str, str] = {}
    for part in parts[1:]:
        nm = _NAMED_PARAM.match(part)
        if nm:
            key = nm.group(1).strip()
            value = part[nm.end() :].strip()
            if key.isdigit():
                idx = int(key) - 1
                while len(positional) <= idx:
                    positional.append("")
                positional[idx] = value
            else:
                named[key.lower()] = value
        else:
            positional.append(part.strip())
    return positional, named


# Inline-text template handlers: (positional, named, name) -> raw wikitext to show.


def _first(pos: list[str], named: dict[str, str], name: str) -> str:
    return pos[0] if pos else named.get("text", "")


def _interlanguage(pos: list[str], named: dict[str, str], name: str) -> str:
    return _first(interlanguage_args(pos), named, name)


def _second(pos: list[str], named: dict[str, str], name: str) -> str:
    return pos[1] if len(pos) > 1 else named.get("text", "")


def _last(pos: list[str], named: dict[str, str], name: str) -> str:
    return pos[-1] if pos else ""


def _joined(pos: list[str], named: dict[str, str], name: str) -> str:
    return "".join(pos)


def _quote(pos: list[str], named: dict[str, str], name: str) -> str:
    return named.get("text") or named.get("quote") or (pos[0] if pos else "")


def _convert(pos: list[str], named: dict[str, str], name: str) -> str:
    if len(pos) >= 4 and pos[1].lower() in _RANGE_WORDS:
        return f"{pos[0]} {pos[1]} {pos[2]} {pos[3]}"
    return " ".join(pos[:2])


def _frac(pos: list[str], named: dict[str, str], name: str) -> str:
    if len(pos) >= 3:
        return f"{pos[0]} {pos[1]}/{pos[2]}"
    if len(pos) == 2:
        return f"{pos[0]}/{pos[1]}"
    return f"1/{pos[0]}" if pos else ""


def _date(pos: list[str], named: dict[str, str], name: str) -> str:
    parts = [p for p in pos[:3] if p]
    if not parts:
        return ""
    try:
        nums = [int(p) for p in parts]
    except ValueError:
        return " ".join(parts)
    if len(nums) == 1:
        return str(nums[0])
    month = _MONTHS[nums[1] - 1] if 1 <= nums[1] <= 12 else str(nums[1])
    if len(nums) == 2:
        return f"{month} {nums[0]}"
    return f"{nums[2]} {month} {nums[0]}"


def _circa(pos: list[str], named: dict[str, str], name: str) -> str:
    return f"c. {pos[0]}" if pos else "c."


def _as_of(pos: list[str], named: dict[str, str], name: str) -> str:
    return f"As of {_date(pos, named, name)}"


def _val(pos: list[str], named: dict[str, str], name: str) -> str:
    unit = named.get("u") or named.get("ul") or ""
    return f"{pos[0]} {unit}".strip() if pos else ""


def _constant(value: str) -> Callable[[list[str], dict[str, str], str], str]:
    def handler(pos: list[str], named: dict[str, str], name: str) -> str:
        return value

    return handler


@lru_cache(maxsize=1)
def _inline_templates() -> dict[str, Callable[[list[str], dict[str, str], str], str]]:
    table: dict[str, Callable[[list[str], dict[str, str], str], str]] = {}
    for names, handler in (
        (
            "nowrap, nobr, small, smaller, big, larger, sup, sub, em, strong, var, code, mono, "
            "samp, kbd, abbr, tooltip, vanchor, visible anchor, nihongo, nihongo2, unicode, "
            "math, mvar, sic, linktext, not a typo, notatypo, proper name, small caps, "
            "smallcaps, sc, date, flag, ocr",
            _first,
        ),
        ("ill, interlanguage link", _interlanguage),
        ("lang, langx, script", _second),
        ("transl, transliteration", _last),
        ("chem", _joined),
        ("quote, blockquote, cquote, quotation, quote box", _quote),
        ("convert, cvt", _convert),
        ("frac, sfrac", _frac),
        (
            "birth date, death date, birth date and age, death date and age, start date, "
            "end date, dob, start date and age, film date, birth year and age",
            _date,
        ),
        ("circa, c.", _circa),
        ("as of", _as_of),
        ("val", _val),
    ):
        for n in names.split(","):
            table[n.strip()] = handler
    for n, value in (
        ("'", "'"),
        ("'s", "'s"),
        ("ndash", "–"),
        ("mdash", "—"),
        ("snd", " – "),
        ("spaced ndash", " – "),
        ("spaced en dash", " – "),
        ("·", " · "),
        ("dot", " · "),
        ("middot", " · "),
        ("bull", " • "),
        ("nbsp", " "),
        ("-", "–"),
        ("!", "|"),
    ):
        table[n] = _constant(value)
    return table


# ----------------------------------------------------------------- inline clean-up


def _finish(text: str, verbatim: list[str]) -> str:
    """Inline markup → plain text; lists become lines, paragraphs join with a blank line."""
    if not text:
        return ""
    if "[" in text:
        text = _EXT_LINK.sub(lambda m: m.group(1) or "", text)
    if "<" in text:
        text = _BREAK_TAG.sub(" ", text)
        text = _HTML_TAG.sub("", text)
    if "''" in text:
        text = _QUOTES.sub(lambda m: "'" if len(m.group()) == 4 else "", text)
    if "__" in text:
        text = _MAGIC.sub("", text)
    if verbatim and "\ue000" in text:
        text = _PLACEHOLDER.sub(lambda m: verbatim[int(m.group(1))], text)
    if "&" in text:
        text = html.unescape(text)

    # Collapsing a line's spaces makes " ," only where the text has whitespace before
    # the mark, so one search of the whole text tells whether any line needs it.
    spaced_punct = _SPACE_BEFORE_PUNCT_HINT.search(text) is not None
    blocks: list[str] = []
    lines: list[str] = []
    prev_plain = False
    for raw in text.split("\n"):
        marker = _LIST_MARKER.match(raw)
        line = raw[marker.end() :] if marker else raw
        if line.startswith("----"):
            line = line.lstrip("-")
        line = " ".join(line.split())  # also folds &nbsp; and other Unicode spaces
        if not line:
            if lines:
                blocks.append("\n".join(lines))
                lines = []
            prev_plain = False
            continue
        if "(" in line:
            if _EMPTY_PARENS_HINT.search(line):
                line = _EMPTY_PARENS.sub("", line)
            line = _PAREN_LEAD.sub("(", line)
            if _PAREN_TRAIL_HINT.search(line):
                line = _PAREN_TRAIL.sub(")", line)
            if "( " in line or "[ " in line:
                line = _SPACE_AFTER_OPEN.sub(r"\1", line)
            line = _SPACE_BEFORE_PUNCT.sub(r"\1", line).strip()
        elif spaced_punct:  # the paren clean-ups above never make a " ,": checked
            line = _SPACE_BEFORE_PUNCT.sub(r"\1", line).strip()
        if not _WORD.search(line):
            continue
        if prev_plain and not marker:
            lines[-1] = f"{lines[-1]} {line}"
        else:
            lines.append(line)
        prev_plain = not marker
    if lines:
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _single_line(text: str) -> str:
    return " ".join(text.split())


@lru_cache(maxsize=16)
def _parser_for(prefixes: tuple[tuple[str, int], ...], keep_link_only: bool) -> WikitextParser:
    return WikitextParser(dict(prefixes), keep_link_only_sections=keep_link_only)


def parse_wikitext(
    title: str,
    wikitext: str,
    *,
    namespace_prefixes: Mapping[str, int] | None = None,
    keep_link_only_sections: bool = False,
) -> WikitextResult:
    """Parse one page.

    ``namespace_prefixes`` maps extra (localised) namespace names to numbers, as read
    from a dump's ``<siteinfo>``; English names are always known. Sections whose text
    is empty are dropped unless ``keep_link_only_sections`` and they hold links (a
    table-only list section: the table is dropped from the text, its links are not).
    """
    key = tuple(sorted((namespace_prefixes or {}).items()))
    return _parser_for(key, keep_link_only_sections).parse(title, wikitext)

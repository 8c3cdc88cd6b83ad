"""Candidate answer spans in a sentence: dates, numbers and names.

Why regexes and capitals, not a tagger: the spans are proposals that the question's
answer kind and the graph's titles then filter, and an English date, number or proper
name is written in a handful of regular ways; a model would cost more than the whole
rest of an offline query.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Span", "dates", "duration", "lifespan", "names", "numbers", "year_of"]

_MONTHS = (
    "January|February|March|April|May|June|July|August|September|October|November|December"
    "|Jan\\.?|Feb\\.?|Mar\\.?|Apr\\.?|Jun\\.?|Jul\\.?|Aug\\.?|Sept?\\.?|Oct\\.?|Nov\\.?|Dec\\.?"
)
_MONTH_NUMBER = {
    m: i
    for i, m in enumerate(
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], 1
    )
}
_ERA = r"(?: (?:BC|BCE|AD|CE)\b)?"
_DATE = re.compile(
    rf"\b(?:\d{{1,2}} (?:{_MONTHS}),? \d{{3,4}}{_ERA}"  # 14 March 1999
    rf"|(?:{_MONTHS}) \d{{1,2}}(?:st|nd|rd|th)?,? \d{{3,4}}{_ERA}"  # March 14, 1999
    rf"|(?:{_MONTHS}) \d{{3,4}}{_ERA}"  # March 1999
    rf"|\d{{1,2}}(?:st|nd|rd|th) century{_ERA}"  # 16th century, 5th century BC
    r"|\d{1,4} (?:BC|BCE|AD|CE)\b|(?:AD|CE) \d{1,4}(?!\d|[.,]\d)"  # 322 BC, AD 79: a year of an era
    r"|(?:1[0-9]|20)\d{2}s?(?![\d,])"  # 1999, 1990s
    r")"
)
_NUMBER = re.compile(
    r"(?<![\w.])(?:\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?:\s?(?:million|billion|thousand|%))?"
    r"|\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen"
    r"|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|hundred)\b",
    re.IGNORECASE,
)
# A name: capitalised words, joined by the lower-case words names are written with.
_JOIN = r"(?:of|the|de|da|del|der|di|du|la|le|van|von|y|and|for|on|in|upon|al|el|bin|ibn)"
_WORDCAP = r"[A-Z][\w'’.\-]*"
# a number continues a name only directly ("Apollo 11"), never after a joiner or a
# comma ("Kuwait in 1981" is a place and a year)
# and an elided particle glued to the next word continues it ("Ballon d'Or", "Côte d'Ivoire")
_NAME = re.compile(
    rf"\b{_WORDCAP}(?:(?:,? (?:{_JOIN} )*{_WORDCAP})|(?: [dl]['’]{_WORDCAP})"
    rf"|(?: \d+(?:st|nd|rd|th)?\b(?!,? \d)))*"
)
_YEAR = re.compile(r"\b(\d{1,4})\b(?= ?(?:BC|BCE|AD|CE)\b)|\b(?:AD|CE) (\d{1,4})\b|\b(\d{3,4})\b")


_DURATION_PART = re.compile(
    r"(\d+(?:\.\d+)?)\s*(weeks?|days?|hours?|hrs?|minutes?|mins?|seconds?|secs?)\b", re.I
)
_SECONDS = {"w": 604_800.0, "d": 86_400.0, "h": 3_600.0, "m": 60.0, "s": 1.0}
_BETWEEN_PARTS = re.compile(r"(?:[\s,;]|\band\b)*")


def duration(text: str) -> float | None:
    """The seconds of a duration written in parts, as boxes write them ("8 days, 3 hours,
    18 minutes, 35 seconds", "100 minutes"); None when ``text`` is anything else (a plain
    number, or a duration with other words: "2 hours (orbital)" is no comparable value)."""
    parts = list(_DURATION_PART.finditer(text))
    if not parts or not _BETWEEN_PARTS.fullmatch(_DURATION_PART.sub("", text)):
        return None
    return sum(float(m.group(1)) * _SECONDS[m.group(2)[0].lower()] for m in parts)


@dataclass(frozen=True, slots=True)
class Span:
    text: str
    start: int
    end: int


def dates(sentence: str) -> list[Span]:
    return [Span(m.group(0), m.start(), m.end()) for m in _DATE.finditer(sentence)]


def numbers(sentence: str) -> list[Span]:
    """Numbers that are not part of a date."""
    taken = [(d.start, d.end) for d in dates(sentence)]
    out = []
    for m in _NUMBER.finditer(sentence):
        if not any(a <= m.start() < b for a, b in taken):
            out.append(Span(m.group(0), m.start(), m.end()))
    return out


def names(sentence: str) -> list[Span]:
    """Capitalised spans, trailing joiners and commas removed; a name's comma-joined
    tail ("Paris, France") is split off, so each part is a candidate of its own, and a
    name ends where a date begins ("died in Beaufort on June 30, 1816": "Beaufort")."""
    out: list[Span] = []
    starts = [d.start for d in dates(sentence)]
    for m in _NAME.finditer(sentence):
        start = m.start()
        whole = m.group(0)
        cut = min((d for d in starts if m.start() < d < m.end()), default=None)
        if cut is not None:
            whole = whole[: cut - m.start()]
        for part in re.split(r", ", whole):
            text = part.strip(" ,")
            text = re.sub(rf"(?: {_JOIN})+$", "", text)
            text = re.sub(rf"^(?:{_JOIN} )+", "", text)
            if text:
                s = sentence.find(text, start)
                out.append(Span(text, s, s + len(text)))
                start = s + len(text)
    return out


def year_of(text: str) -> tuple[int, int, int] | None:
    """(year, month, day) of a date's text, month and day 0 when not given: a sort key
    (a year before the common era is negative)."""
    before = -1 if re.search(r"\bBCE?\b", text) else 1
    m = _YEAR.search(text)
    if m is None:
        century = re.match(r"(\d{1,2})(?:st|nd|rd|th) century", text)
        return (before * 100 * (int(century.group(1)) - 1), 0, 0) if century else None
    digits = next(g for g in m.groups() if g)
    year = before * int(digits)
    month = 0
    for word in re.findall(r"[A-Za-z]+", text):
        month = _MONTH_NUMBER.get(word[:3].lower(), month)
    day_m = re.search(r"\b(\d{1,2})\b(?!\d)", text.replace(digits, ""))
    day = int(day_m.group(1)) if day_m else 0
    return (year, month, day)


#: A short parenthesis (linear to find: no nested quantifiers over a long text).
_PAREN = re.compile(r"\(([^()]{4,120})\)")
#: What parts a lifespan's two dates: a dash, or "…, died …" ("born 11 November 1933 in
#: Camporosso, died 13 August 2014").
_DASH = re.compile(r"\s*[–—-]\s*|[,;]\s*(?=(?:died|d\.)\s)")
#: Two dates run together where a text lost the dash between them ("10 February
#: 190427 January 1963"): a break after a year that a day and a month follow.
_GLUED = re.compile(rf"(?<=\d{{4}})(?=\d{{1,2}} (?:{_MONTHS}))")


#: A side of a lifespan that is a year alone ("612", "c. 910", "after 890", "399 BC"): a
#: medieval or ancient year has three digits, which :func:`dates` does not take bare.
_BARE_YEAR = re.compile(
    r"^\s*(?:(?:c|ca)\.\s*|(?:circa|after|before|by)\s+)?"
    r"(\d{3,4}(?:\s*(?:BC|BCE|AD|CE))?)\s*$"
)


def _bare_year(side: str) -> list[Span]:
    m = _BARE_YEAR.match(side)
    return [Span(m.group(1), m.start(1), m.end(1))] if m else []


def lifespan(text: str) -> tuple[Span, Span] | None:
    """Birth and death dates of a "(14 March 1920 – 2 April 1990)" parenthesis."""
    for m in _PAREN.finditer(text):
        inside = m.group(1)
        breaks = sorted(
            [(d.start(), d.end()) for d in _DASH.finditer(inside)]
            + [(g.start(), g.start()) for g in _GLUED.finditer(inside)]
        )
        for start, end in breaks:
            first = dates(inside[:start]) or _bare_year(inside[:start])
            second = dates(inside[end:]) or _bare_year(inside[end:])
            if first and second:
                a, b = first[-1], second[0]
                off_a, off_b = m.start(1), m.start(1) + end
                return (
                    Span(a.text, off_a + a.start, off_a + a.end),
                    Span(b.text, off_b + b.start, off_b + b.end),
                )
    return None

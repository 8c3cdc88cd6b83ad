"""What a fact of an infobox is: its value objects, its key, its typed literals.

A fact is one parameter of a box (``capital = [[Montgomery, Alabama|Montgomery]]``):
its key spelt one way whatever the template wrote (:func:`normalize_key`), its value as
clean text, and the value's items, each a link to an article or a typed literal (a date,
a year, a number with its unit, or text). :mod:`kg_agent.ingest.infobox` reads them
from a page's wikitext; the graph stores them (docs/schema.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache

__all__ = [
    "MONTHS",
    "Box",
    "Fact",
    "Item",
    "Link",
    "LiteralValue",
    "dates_in",
    "era_years_in",
    "iso_date",
    "iso_year",
    "literal",
    "normalize_key",
    "number_of",
    "parse_date",
    "shown_date",
]

_KEY_DROP = re.compile(r"[\W_]+")


@dataclass(frozen=True, slots=True)
class Link:
    """An item naming an article: ``target`` is normalised like page titles are."""

    target: str
    label: str
    note: str = ""  # a qualifier, e.g. the years of a ``{{marriage}}``


@dataclass(frozen=True, slots=True)
class LiteralValue:
    """A typed literal item.

    ``kind`` is ``date`` (``value``: ISO ``YYYY-MM-DD``, ``YYYY-MM`` or ``YYYY``),
    ``year`` (int; negative before the common era: "322 BC" is -322), ``number``
    (float, ``unit`` when one is written) or ``text`` (``value`` equals ``text``).
    ``text`` is the item as shown.
    """

    kind: str
    text: str
    value: str | int | float
    unit: str = ""
    note: str = ""


Item = Link | LiteralValue


@dataclass(frozen=True, slots=True)
class Fact:
    """One box parameter: ``value`` is its clean text, items joined with ``"; "``."""

    box: str  # article-level box type, e.g. "settlement"
    key: str  # normalize_key(raw_key)
    raw_key: str
    value: str
    items: tuple[Item, ...]
    sub_box: str = ""  # type of the embedded box the parameter belongs to, if any


@dataclass(frozen=True, slots=True)
class Box:
    """An article-level box: its type, its name as written, its (and sub-boxes') facts."""

    type: str
    name: str
    facts: tuple[Fact, ...]


@lru_cache(maxsize=1 << 12)
def normalize_key(raw_key: str) -> str:
    """One spelling per parameter: lower-case, every non-alphanumeric character removed.

    ``birth_place``, ``Birth place``, ``birthplace`` and ``birth-place`` all become
    ``birthplace``; ``2010Pop`` becomes ``2010pop``. Removing separators (rather than
    unifying them) is what makes ``birthplace`` meet ``birth_place``.
    """
    return _KEY_DROP.sub("", raw_key.lower())


_MONTH_NAMES = """January February March April May June July August September October
    November December""".split()  # noqa: SIM905 - a word list reads better
MONTHS: dict[str, int] = {"sept": 9}
for _i, _name in enumerate(_MONTH_NAMES, start=1):
    MONTHS[_name.lower()] = MONTHS[_name[:3].lower()] = _i

_DATE_REST = (
    r"(?P<rest>(?:,?\s*(?:at\s*)?~?\d{1,2}:\d{2}(?::\d{2})?)?\s*(?:UTC|GMT)?\s*(?:\([^()]*\))?)"
)
_DATE_FORMS = (
    re.compile(r"(?P<y>\d{4})-(?P<m>\d{1,2})(?:-(?P<d>\d{1,2}))?" + _DATE_REST),
    re.compile(
        r"(?P<mn>[A-Za-z]{3,9})\.?\s+(?P<d>\d{1,2})(?:st|nd|rd|th)?,?\s+(?P<y>\d{1,4})" + _DATE_REST
    ),
    re.compile(
        r"(?P<d>\d{1,2})(?:st|nd|rd|th)?\s+(?P<mn>[A-Za-z]{3,9})\.?,?\s+(?P<y>\d{1,4})" + _DATE_REST
    ),
    re.compile(r"(?P<mn>[A-Za-z]{3,9})\.?,?\s+(?P<y>\d{3,4})" + _DATE_REST),
)
_YEAR = re.compile(
    r"(?:(?P<before>AD)\s*)?(?P<y>\d{1,4})(?:\s*(?P<era>AD|CE|BCE|BC))?(?:\s*\([^()]*\))?"
)
_BEFORE = frozenset(["BC", "BCE"])
_ERA_YEAR_IN_TEXT = re.compile(
    r"(?<![\w.,])(?:AD\s*(?P<ad>\d{1,4})|(?P<y>\d{1,4})\s*(?P<era>BCE|BC|AD|CE))(?!\w)"
)
_DIGIT = re.compile(r"\d")
_NUMBER = re.compile(
    r"(?P<cur>US\$|A\$|C\$|NZ\$|HK\$|\$|€|£|¥|₹)?\s*(?P<sign>[-−–+])?"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"(?:\s*(?P<mult>thousand|million|billion|trillion)\b)?"
    r"(?:\s*(?P<unit>%|‰|°[CF]?|[A-Za-zµ°²³/.]{1,12}[23]?(?:[ /][A-Za-z²³]{1,6}[23]?)?))?"
    r"\s*(?:\([^()]*\))?"
)
_MULTIPLIERS = {
    m: Decimal(10) ** e
    for m, e in (("thousand", 3), ("million", 6), ("billion", 9), ("trillion", 12))
}
_ORDINALS = frozenset({"st", "nd", "rd", "th"})
_TEMPORAL_KEY = re.compile(
    r"year|date|founded|established|born|died|since|released|published|opened|formed|"
    r"built|introduced|completed|start|end"
)
_IDENTIFIER_KEY = re.compile(r"id$|db|code|isbn|issn|oclc|omim|mesh|icd|lccn|dewey|no$")
_QUANTITY_KEY = re.compile(
    r"area|pop|elev|height|length|width|depth|size|mass|weight|density|count|number|"
    r"total|capacity|income|gdp|volume|rank|members|employees|seats|votes|speed|diameter|"
    r"distance|orbit|km|mi"
)


def iso_date(year: int, month: int | None, day: int | None) -> str | None:
    if not 0 < year < 10000:
        return None
    if month is None:
        return f"{year:04d}"
    if not 1 <= month <= 12:
        return None
    if day is None:
        return f"{year:04d}-{month:02d}"
    if not 1 <= day <= 31:
        return None
    return f"{year:04d}-{month:02d}-{day:02d}"


#: A day written in words inside longer text ("17 August 1945 (Secker and Warburg…)").
_DAY_IN_TEXT = re.compile(
    r"\b(?:\d{1,2}(?:st|nd|rd|th)?\s+[A-Z][a-z]{2,8}\.?,?\s+\d{3,4}"
    r"|[A-Z][a-z]{2,8}\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{3,4})\b"
)


# What both forms above contain ("August 1945", "July 16"), in a pattern whose first
# character class lets the engine skip ahead in C (a leading \b makes it try every place).
_DAY_HINT = re.compile(r"[A-Z][a-z]{2,8}\.?,?\s+\d")


def dates_in(text: str) -> list[tuple[str, str]]:
    """The full dates (day, month, year) written in running text, as (text, ISO)."""
    if _DAY_HINT.search(text) is None:  # most values have none: skip the slow scan
        return []
    out = []
    for m in _DAY_IN_TEXT.finditer(text):
        iso = parse_date(m.group(0))
        if iso is not None:
            out.append((m.group(0), iso))
    return out


def era_years_in(text: str) -> list[tuple[str, int]]:
    """The years of an era written in running text ("384 BC", "AD 79"), as (text, year),
    negative before the common era: what a box writes before its links
    (``birth_date = 384 BC [[Stagira]], …``)."""
    if "BC" not in text and "AD" not in text and "CE" not in text:
        return []
    out = []
    for m in _ERA_YEAR_IN_TEXT.finditer(text):
        year = int(m.group("ad") or m.group("y"))
        if year > 0:
            out.append((m.group(0), -year if m.group("era") in _BEFORE else year))
    return out


def parse_date(text: str) -> str | None:
    """ISO form of a written date ("July 16, 1969", "16 July 1969, 13:32 UTC", "1969-07-16")."""
    t = text.strip()
    for form in _DATE_FORMS:
        m = form.fullmatch(t)
        if m is None:
            continue
        groups = m.groupdict()
        if groups.get("mn") is not None:
            month = MONTHS.get(groups["mn"].lower())
            if month is None:
                continue
        else:
            month = int(groups["m"])
        day = int(groups["d"]) if groups.get("d") else None
        iso = iso_date(int(groups["y"]), month, day)
        if iso is not None:
            return iso
    return None


def iso_year(year: int) -> str:
    """A year as the ``date`` column writes it: ``1969``; a year before the common era
    negative, as XSD's ``gYear`` and Wikidata write it (322 BC: ``-0322``)."""
    return f"{year:04d}" if year >= 0 else f"-{-year:04d}"


def shown_date(iso: str) -> str:
    parts = [int(p) for p in iso.split("-")]
    if len(parts) == 1:
        return str(parts[0])
    month = _MONTH_NAMES[parts[1] - 1]
    return f"{month} {parts[0]}" if len(parts) == 2 else f"{parts[2]} {month} {parts[0]}"


def number_of(text: str) -> tuple[float, str] | None:
    """(value, unit) of "4,858,979 (2015 est.)", "US$2.6 billion", "178.91 km2"; else None."""
    m = _NUMBER.fullmatch(text.strip())
    if m is None:
        return None
    unit = m.group("unit") or ""
    if unit.lower() in _ORDINALS:
        return None
    digits = m.group("num").replace(",", "")
    if len(digits) > 1 and digits[0] == "0" and digits[1] != ".":
        return None  # "002912": an identifier, not a quantity
    value = float(digits)
    if m.group("mult"):  # Decimal: 17.15 billion is 17150000000, not …999.998
        value = float(Decimal(digits) * _MULTIPLIERS[m.group("mult")])
    if m.group("sign") in ("-", "−", "–"):
        value = -value
    return value, (m.group("cur") or unit).strip()


def literal(text: str, key: str) -> LiteralValue:
    """Type a plain-text item: date, year, number or text (the key breaks year ties)."""
    if not _DIGIT.search(text):
        return LiteralValue("text", text, text)  # every date, year and number has a digit
    iso = parse_date(text)
    if iso is not None:
        return LiteralValue("date", text, iso)
    y = _YEAR.fullmatch(text)
    if y is not None:
        year = int(y.group("y"))
        if year > 0 and (y.group("before") or y.group("era")):  # an era names a year
            # before the common era counted down: "322 BC (aged 62)" is -322, not 322 "BC"
            return LiteralValue("year", text, -year if y.group("era") in _BEFORE else year)
        if _TEMPORAL_KEY.search(key) and year > 0:
            return LiteralValue("year", text, year)
        if (
            len(y.group("y")) == 4
            and 1000 <= year <= 2100
            and not _QUANTITY_KEY.search(key)
            and not _IDENTIFIER_KEY.search(key)
        ):
            return LiteralValue("year", text, year)
    num = number_of(text)
    if num is not None:
        return LiteralValue("number", text, num[0], num[1])
    return LiteralValue("text", text, text)

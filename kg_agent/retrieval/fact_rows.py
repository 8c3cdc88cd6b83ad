"""What a fact's items say: their facts, the rows of a box, their years, the short answer.

A box writes one fact as items (``spouse = [[A]], [[B]]``: two), numbers its rows
(``leader_title2`` names ``leader_name2``), and dates some facts by a companion key
(``population_estimate_year``). These helpers read that structure; the retriever
(:mod:`kg_agent.retrieval.facts`) ranks the facts they describe.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol, TypeVar

from kg_agent.language.relations import key_label
from kg_agent.language.shape import AnswerKind
from kg_agent.language.spans import dates
from kg_agent.language.tokens import content_words, fold
from kg_agent.store import FactRow

__all__ = [
    "NOT_ASKED",
    "Keyed",
    "answer_echo",
    "fact_years",
    "group_facts",
    "names_subject",
    "row_labels",
    "short_value",
]

#: Keys that name the subject or lay out the box, never what a question asks.
NOT_ASKED = frozenset(
    [
        "name",
        "fullname",
        "conventionallongname",
        "commonname",
        "imagecaption",
        "symboltype",
        "type",
        "website",
        "signature",
    ]
)

_MAX_VALUE_ITEMS = 3  # items a short answer lists before "…"

_PAREN = re.compile(r"\s*\([^()]*\)\s*$")

_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")
_NUMBERED = re.compile(r"(\d+)$")
#: The last word of a numbered key that names its row of the box: ``leader_title2 =
#: Prime Minister`` names ``leader_name2``; ``established_event1 = Independence`` names
#: ``established_date1``; ``office1`` names ``term_start1`` (a template convention of
#: Wikipedia's boxes, not of a question).
_ROW_NAMERS = frozenset(["title", "event", "office", "label"])
_MAX_TITLE_WORDS = 8


def _row_number(raw_key: str) -> str | None:
    """The row a numbered key is of (``leader_name2``: "2"); none for a unit
    (``area_km2``) or a key without a number."""
    found = _NUMBERED.search(raw_key)
    if found is None or key_label(raw_key).endswith(found.group(1)):
        return None
    return found.group(1)


def row_labels(groups: Sequence[Sequence[FactRow]]) -> dict[tuple[str, str, str], str]:
    """Each fact's name in words: its key's label, and for a numbered key the value of
    the key that names its row ("leader_name2" beside "leader_title2 = Prime
    Minister": "Prime Minister leader name"). A box lists its leaders, dates and
    offices as such rows; the key alone says "leader name" of every one of them. A
    namer names the keys of its row that share its first words (``leader_title1`` the
    ``leader_name1``, ``established_event1`` the ``established_date1``), or, when it has
    none (``office1``), every key of its row."""
    titles: dict[tuple[str, str, str, str], str] = {}
    for rows in groups:
        first = rows[0]
        row = _row_number(first.raw_key)
        stem, _, last = key_label(first.raw_key).rpartition(" ")
        if row and last in _ROW_NAMERS and first.value:
            title = " ".join(_PAREN.sub("", first.value).split()[:_MAX_TITLE_WORDS])
            titles.setdefault((first.article, first.sub_box, row, stem), title)
    out: dict[tuple[str, str, str], str] = {}
    for rows in groups:
        first = rows[0]
        label = key_label(first.raw_key)
        row = _row_number(first.raw_key)
        stem, _, last = label.rpartition(" ")
        if row and last not in _ROW_NAMERS:
            place = (first.article, first.sub_box, row)
            named = titles.get((*place, stem)) or titles.get((*place, ""))
            if named:
                label = f"{named} {label}"
        out[(first.article, first.sub_box, first.key)] = label
    return out


def answer_echo(value: str, asked: set[str]) -> float:
    """The share of an answer's words the question already writes: an answer seldom
    repeats its question ("albania prime minister": not "Prime Minister")."""
    words = content_words(fold(value))
    return sum(w in asked for w in words) / len(words) if words else 0.0


def names_subject(value: str, rows: Sequence[FactRow]) -> bool:
    """Whether a fact's value is its own article ("Abraham Lincoln — president: Abraham
    Lincoln", a cabinet box naming whose cabinet it is): it restates the subject, and
    answers nothing asked about it."""
    article = rows[0].article
    if all(r.kind == "link" and r.target == article for r in rows):
        return True
    own = fold(_PAREN.sub("", article)).strip()
    return bool(own) and fold(_PAREN.sub("", value)).strip(" ;,") == own


def fact_years(
    rows: Sequence[FactRow], companions_only: bool = False
) -> dict[tuple[str, str, str], int]:
    """The year each fact is of: its ``…_year`` companion ("population_estimate_year =
    2016"), else (unless ``companions_only``) a year its value writes ("9,574,000 (2014)")."""
    values: dict[tuple[str, str, str], str] = {}
    for r in rows:
        values.setdefault((r.article, r.sub_box, r.key), r.value)
    out: dict[tuple[str, str, str], int] = {}
    for (article, box, key), value in values.items():
        companion = values.get((article, box, key + "year")) or values.get(
            (article, box, key + "date")
        )
        found = _YEAR.findall(companion or "")
        if not found and not companions_only:
            found = _YEAR.findall(value)
        if found:
            out[(article, box, key)] = max(int(y) for y in found)
    return out


class Keyed(Protocol):
    """A fact item's place and key (a :class:`FactRow`, or a :class:`FactKey` alone)."""

    @property
    def article(self) -> str: ...
    @property
    def sub_box(self) -> str: ...
    @property
    def key(self) -> str: ...
    @property
    def raw_key(self) -> str: ...


_K = TypeVar("_K", bound=Keyed)


def group_facts(rows: Sequence[_K]) -> dict[tuple[str, str, str], list[_K]]:
    """Fact items grouped into facts: (article, sub-box, key) → items in page order."""
    out: dict[tuple[str, str, str], list[_K]] = {}
    for r in rows:
        if r.key not in NOT_ASKED:
            out.setdefault((r.article, r.sub_box, r.key), []).append(r)
    return out


#: "When did the war end?": of a fact's dates, the last.
_ASKS_END = re.compile(r"\b(?:end|ends|ended|finish|finished|last|latest)\b", re.I)


def _item_asked(items: Sequence[FactRow], question: str) -> str | None:
    """The one item of a list that writes a word of the question its article's title
    does not ("what branch of geometry is Connes known for": "Noncommutative geometry"
    of his ``known_for``); None when none does, or more than one."""
    asked = content_words(fold(question)) - content_words(fold(items[0].article))
    found = {
        _PAREN.sub("", r.item).strip(" ;,")
        for r in items
        if asked & content_words(fold(_PAREN.sub("", r.item)))
    }
    return found.pop() if len(found) == 1 else None


#: "Einstein's first wife", "the latest holder": which of a fact's items is asked.
_ORDINALS = (
    (re.compile(r"\b(?:first|1st|earliest|original)\b", re.I), 0),
    (re.compile(r"\b(?:second|2nd)\b", re.I), 1),
    (re.compile(r"\b(?:last|latest|current|most recent)\b", re.I), -1),
)


def short_value(rows: Sequence[FactRow], kind: AnswerKind, question: str = "") -> str:
    """The short answer a fact gives: a date item for a date question (or a date its
    text writes, "W (1992)"; the last for "when did … end"), a number for a number; the
    item an ordinal of ``question`` picks ("first wife"), or the one item that writes a
    word of the question ("what branch of geometry": "Noncommutative geometry"); for
    "where", the first item that is no date, the most precise place (``birth_date = 384
    BC [[Stagira]], [[Chalkidiki]], …``: Stagira); for "who", the items that are no dates;
    else the value (at most :data:`_MAX_VALUE_ITEMS` items, a trailing parenthesis
    dropped)."""
    named = [r for r in rows if r.item and r.kind not in ("date", "year", "number")]
    if len({r.item for r in named}) >= 2:
        for pattern, at in _ORDINALS:
            if pattern.search(question):
                return _PAREN.sub("", named[at].item).strip(" ;,")
        if (asked := _item_asked(named, question)) is not None:
            return asked
    joined = bool(rows) and " and " in rows[0].value  # "South and Southeast Asia": one place
    if (
        kind is AnswerKind.PLACE
        and named
        and not joined
        and (len(named) < len(rows) or len(named) >= 2)
    ):
        # "Stagira, Chalcidice, Northern Greece": the place itself, then what holds it
        return _PAREN.sub("", named[0].item).strip(" ;,")
    if kind is AnswerKind.PERSON and named and len(named) < len(rows):
        # "published = 17 August 1945 (Secker and Warburg)": who, not when
        people = list(dict.fromkeys(_PAREN.sub("", r.item).strip(" ;,") for r in named))
        return _more(", ".join(people[:_MAX_VALUE_ITEMS]), len(people))
    if kind is AnswerKind.DATE:
        # a date item, else the dates written inside the first item that writes any: a
        # range ("April 19, 1775 – September 3, 1783"), a result's year ("W (1992)"), a
        # rank's day ("No. 1 (April 10, 1995)")
        dated = (
            # a year's note dropped ("322 BC (aged 62)": 322 BC)
            [
                _PAREN.sub("", r.item).strip() if r.kind == "year" else r.item
                for r in rows
                if r.kind in ("date", "year")
            ]
            or next((written for r in rows if (written := [d.text for d in dates(r.item)])), [])
            # the value's own text, where the box wrote a date before its links
            # ("384 BC [[Stagira]], [[Chalkidiki]]": the items are the places)
            or [d.text for d in dates(rows[0].value)]
        )
        if dated:
            return dated[-1] if _ASKS_END.search(question) else dated[0]
    if kind is AnswerKind.NUMBER:
        counted = [r.item for r in rows if r.kind == "number"]
        if counted:
            return _PAREN.sub("", counted[0])
    items = list(dict.fromkeys(r.item for r in rows if r.item))
    value = rows[0].value if rows else ""
    if len(items) > _MAX_VALUE_ITEMS or len(value.split()) > 12:
        shown = _PAREN.sub("", ", ".join(items[:_MAX_VALUE_ITEMS])).strip(" ;,")
        return _more(shown, len(items))
    return _PAREN.sub("", value).strip(" ;,")


def _more(shown: str, items: int) -> str:
    """``shown`` (the first :data:`_MAX_VALUE_ITEMS` of a fact's ``items``), and "…" when
    it has more: three of Angola's six national languages in bold must not read as all of
    them."""
    return f"{shown}, …" if items > _MAX_VALUE_ITEMS and shown else shown

"""A graph's infobox facts read back as items, whichever way the graph stores them.

A reader works with items (:class:`FactRow`: one link or typed literal of a box
parameter). Schema 7 stores a node a fact, its items' fields joined by ``ITEM_SEP``;
schemas 4 to 6 a node an item (``position``: its place in the fact). This module holds
the queries of both and turns what they return into items, in page order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "ITEM_SEP",
    "ITEM_SEP_SHOWN",
    "FactKey",
    "FactRow",
    "fact_query",
    "items_of",
    "naming_count_query",
]

#: What joins the items' fields of one fact: a character no page title may hold, that
#: Cypher can write (Kùzu 0.11.3 reads no escapes in a string), and that a box's items
#: do not hold once read (one that would is written ``ITEM_SEP_SHOWN`` instead).
ITEM_SEP = "|"
ITEM_SEP_SHOWN = "¦"

FactQuery = Literal["of", "naming", "keys"]


@dataclass(frozen=True, slots=True)
class FactRow:
    """One item of an infobox fact, as the graph holds it (docs/schema.md): ``target``
    is the article a link item names (through redirects), ``number`` and ``date`` a
    literal's value (ISO date, or the year). ``id`` is the item's: its fact's id and,
    past the first, its place (``"12"``, ``"12.1"``)."""

    id: str
    article: str
    box: str
    sub_box: str
    key: str
    raw_key: str
    value: str
    position: int
    item: str
    kind: str
    target: str
    number: float | None
    unit: str
    date: str
    note: str


@dataclass(frozen=True, slots=True)
class FactKey:
    """A fact item's place and key without its value: enough to choose among the facts
    naming an article before reading any of them whole (``GraphReads.fact_keys_naming``)."""

    id: str
    article: str
    sub_box: str
    key: str
    raw_key: str


_OWN = "MATCH (a:Article {title: $title})-[:HAS_FACT]->(f:Fact)"
_NAMING = "MATCH (f:Fact)-[:REFERS_TO]->(:Article {title: $title})"
_HEAD = "RETURN f.id, f.article, f.box, f.sub_box, f.key, f.raw_key, f.value"
#: schema 7: a node a fact
_ITEMS = ", f.item, f.kind, f.target, f.number, f.unit, f.date, f.note, f.numbers"
_KEYS = "RETURN f.id, f.article, f.sub_box, f.key, f.raw_key, f.target"
#: schemas 4 to 6: a node an item
_ITEM = ", f.position, f.item, f.kind, f.target, f.number, f.unit, f.date, f.note"
_ITEM_KEYS = "RETURN f.id, f.article, f.sub_box, f.key, f.raw_key"


def fact_query(query: FactQuery, per_item: bool) -> str:
    """The Cypher of ``query`` (the facts of a title, those naming it, or their keys
    alone), for a graph storing a node an item (``per_item``) or a node a fact."""
    match = _OWN if query == "of" else _NAMING
    if query == "keys":
        return f"{match} {_ITEM_KEYS if per_item else _KEYS}"
    return f"{match} {_HEAD}{_ITEM if per_item else _ITEMS}"


def naming_count_query() -> str:
    """How many facts name a title: no property read, so cheap (``GraphReads``)."""
    return f"{_NAMING} RETURN count(*)"


def items_of(
    raw: Sequence[Sequence[Any]], query: FactQuery, per_item: bool, title: str
) -> list[Any]:
    """The rows ``fact_query`` returned as items (:class:`FactRow`, or :class:`FactKey`
    for ``keys``), in page order (by article first, for the facts naming ``title``):
    for the facts naming it, only the items that name it."""
    if per_item:
        rows = [list(r) for r in raw]
        for r in rows:
            r[0] = str(r[0])
        make: Callable[..., Any] = FactKey if query == "keys" else FactRow
        items = [make(*r) for r in rows]
    else:
        items = [item for r in raw for item in (_keys(r) if query == "keys" else _split(r))]
        if query != "of":
            items = [i for i, r in zip(items, _targets(raw, query), strict=True) if r == title]
    if query == "of":
        items.sort(key=lambda i: _order(i.id))
    else:
        items.sort(key=lambda i: (i.article, _order(i.id)))
    return items


def _split(r: Sequence[Any]) -> list[FactRow]:
    """One schema-7 row (``_HEAD`` + ``_ITEMS``) as its items."""
    fid, article, box, sub_box, key, raw_key, value = r[:7]
    item, kind, target, number, unit, date, note, numbers = r[7:]
    if ITEM_SEP not in kind:  # one item: most facts
        return [
            FactRow(
                str(fid), article, box, sub_box, key, raw_key, value, 0,
                item, kind, target, number, unit, date, note,
            )
        ]  # fmt: skip
    kinds = kind.split(ITEM_SEP)
    n = len(kinds)
    nums = numbers.split(ITEM_SEP) if numbers else [""] * n
    fields = zip(
        item.split(ITEM_SEP),
        kinds,
        target.split(ITEM_SEP),
        unit.split(ITEM_SEP),
        date.split(ITEM_SEP),
        note.split(ITEM_SEP),
        nums,
        strict=True,
    )
    out = []
    for k, (i, kd, t, u, d, nt, num) in enumerate(fields):
        value_k = (float(num) if num else None) if numbers else (number if k == 0 else None)
        out.append(
            FactRow(
                _item_id(fid, k), article, box, sub_box, key, raw_key, value, k,
                i, kd, t, value_k, u, d, nt,
            )
        )  # fmt: skip
    return out


def _keys(r: Sequence[Any]) -> list[FactKey]:
    fid, article, sub_box, key, raw_key, target = r
    n = target.count(ITEM_SEP) + 1
    return [FactKey(_item_id(fid, k), article, sub_box, key, raw_key) for k in range(n)]


def _targets(raw: Sequence[Sequence[Any]], query: FactQuery) -> list[str]:
    """The target of each item :func:`items_of` made of ``raw``, in its order."""
    at = 5 if query == "keys" else 9
    return [t for r in raw for t in str(r[at]).split(ITEM_SEP)]


def _item_id(fact_id: Any, k: int) -> str:
    return str(fact_id) if k == 0 else f"{fact_id}.{k}"


def _order(item_id: str) -> tuple[int, int]:
    """An item's place among its article's: ids are numbers given in page order (and
    the item's place past the first: ``12.1``), or ``title::fNNNN`` (schema 5)."""
    head, _, tail = item_id.partition(".")
    if head.isdigit():
        return int(head), int(tail) if tail.isdigit() else 0
    last = item_id.rsplit("::f", 1)[-1]
    return (int(last) if last.isdigit() else 0), 0

"""A box parameter's items grouped into one ``Fact`` row, and read back as the items."""

from __future__ import annotations

from dataclasses import astuple, fields
from typing import Any

import pyarrow as pa
import pytest

from kg_agent.ingest.fact_table import FACT_SCHEMA, group_items
from kg_agent.ingest.facts import Fact, Link, LiteralValue
from kg_agent.ingest.shards import SCHEMAS, fact_rows
from kg_agent.store.fact_items import ITEM_SEP, ITEM_SEP_SHOWN, FactRow, fact_query, items_of

EINSTEIN = (
    Fact("person", "spouse", "spouse", "Mileva Marić; Elsa Löwenthal",
         (Link("Mileva Marić", "Mileva Marić", "1903–1919"),
          Link("Elsa Löwenthal", "Elsa Löwenthal", "1919–1936"))),
    Fact("person", "birthdate", "birth_date", "14 March 1879",
         (LiteralValue("date", "14 March 1879", "1879-03-14"),)),
    Fact("person", "height", "Height", "about 1.75 m; 5 ft 9 in",
         (LiteralValue("text", "about", "about"),
          LiteralValue("number", "1.75 m", 1.75, "m"),
          LiteralValue("number", "0.1 ft", 0.1, "ft"),
          LiteralValue("number", "big", 1.2345678901234567e20))),
)  # fmt: skip
ALGERIA = (
    Fact("country", "capital", "capital", "Algiers", (Link("Algiers", "Algiers"),)),
    Fact("country", "areakm2", "area_km2", "2,381,741",
         (LiteralValue("number", "2,381,741", 2381741.0),)),
    Fact("country", "motto", "motto", f"by{ITEM_SEP}the people", (
        LiteralValue("text", f"by{ITEM_SEP}the", f"by{ITEM_SEP}the"),
        LiteralValue("year", "1962", 1962))),
)  # fmt: skip


#: a FactRow's fields after its id
ITEM_FIELDS = [f.name for f in fields(FactRow)][1:]


def _items(*pages: tuple[str, tuple[Fact, ...]]) -> pa.Table:
    rows: list[dict[str, Any]] = []
    for n, (title, facts) in enumerate(pages):
        rows.extend(fact_rows(title, facts, n))
    return pa.Table.from_pylist(rows, schema=SCHEMAS["facts"]).drop_columns(["_ord"])


def _kuzu_rows(facts: pa.Table, query: str = "of") -> list[list[Any]]:
    """The rows ``fact_query`` would return for ``facts`` (its columns, in its order)."""
    names = [c.split(".", 1)[1] for c in fact_query(query, False).split("RETURN ")[1].split(", ")]
    return [[row[n] for n in names] for row in facts.to_pylist()]


def test_a_fact_of_several_items_is_one_row_and_reads_back_as_its_items() -> None:
    items = _items(("Albert Einstein", EINSTEIN), ("Algeria", ALGERIA))
    facts, fact_of_item = group_items(items, first_id=100)
    assert facts.schema == FACT_SCHEMA
    assert facts.column("id").to_pylist() == [100, 101, 102, 103, 104, 105]
    assert fact_of_item.to_pylist() == [100, 100, 101, 102, 102, 102, 102, 103, 104, 105, 105]
    spouse = facts.to_pylist()[0]
    assert spouse["item"] == f"Mileva Marić{ITEM_SEP}Elsa Löwenthal"
    assert spouse["note"] == f"1903–1919{ITEM_SEP}1919–1936"
    assert spouse["number"] is None and spouse["numbers"] == ""
    height = facts.to_pylist()[2]
    assert height["number"] is None  # the first item's: a text
    assert height["kind"].split(ITEM_SEP) == ["text", "number", "number", "number"]
    # one item: its fields as they are, no separator
    capital = facts.to_pylist()[3]
    assert (capital["item"], capital["kind"], capital["target"]) == ("Algiers", "link", "Algiers")
    assert facts.to_pylist()[4]["number"] == 2381741.0 and facts.to_pylist()[4]["numbers"] == ""
    # read back: the very items the parse wrote, numbers exactly, in page order
    for title in ("Albert Einstein", "Algeria"):
        mine = facts.filter(pa.compute.equal(facts.column("article"), title))
        got = items_of(_kuzu_rows(mine), "of", False, title)
        want = [r for r in items.to_pylist() if r["article"] == title]
        assert [astuple(r)[1:] for r in got] == [
            tuple(w[f] for f in FactRow.__slots__[1:])
            for w in _cleaned(want)  # type: ignore[attr-defined]
        ]
    assert [r.id for r in got] == ["103", "104", "105", "105.1"]


def _cleaned(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Items as the graph keeps them: the separator taken out of their fields."""
    return [
        {k: v.replace(ITEM_SEP, ITEM_SEP_SHOWN) if isinstance(v, str) and k != "value" else v
         for k, v in r.items()}
        for r in rows
    ]  # fmt: skip


def test_numbers_of_several_items_round_trip_exactly() -> None:
    facts, _ = group_items(_items(("Albert Einstein", EINSTEIN)))
    height = facts.to_pylist()[2]
    got = [r.number for r in items_of(_kuzu_rows(facts.slice(2, 1)), "of", False, "x")]
    assert got == [None, 1.75, 0.1, 1.2345678901234567e20]
    assert height["numbers"].count(ITEM_SEP) == 3


def test_the_facts_naming_a_title_give_only_the_items_that_name_it() -> None:
    facts, _ = group_items(_items(("Albert Einstein", EINSTEIN), ("Algeria", ALGERIA)))
    raw = _kuzu_rows(facts.slice(0, 1), "naming")
    named = items_of(raw, "naming", False, "Elsa Löwenthal")
    assert [(r.id, r.item, r.position) for r in named] == [("0.1", "Elsa Löwenthal", 1)]
    keys = items_of(_kuzu_rows(facts.slice(0, 1), "keys"), "keys", False, "Elsa Löwenthal")
    assert [(k.id, k.key) for k in keys] == [("0.1", "spouse")]


def test_a_new_article_starts_a_fact_and_no_items_no_facts() -> None:
    items = _items(("A", ALGERIA[:1]), ("B", ALGERIA[:1]))
    facts, of = group_items(items)
    assert facts.column("article").to_pylist() == ["A", "B"] and of.to_pylist() == [0, 1]
    empty, none = group_items(items.slice(0, 0))
    assert empty.num_rows == 0 and len(none) == 0


@pytest.mark.parametrize("per_item", [True, False])
def test_items_of_orders_by_article_then_page_order(per_item: bool) -> None:
    if per_item:  # schemas 4 to 6: a row an item, with its place
        row = ["0", "B", "b", "", "k", "k", "v", 0, "i", "link", "T", None, "", "", ""]
        raw = [["10", *row[1:]], ["2", *row[1:]], ["3", "A", *row[2:]]]
    else:
        row = ["B", "b", "", "k", "k", "v", "i", "link", "T", None, "", "", "", ""]
        raw = [[10, *row], [2, *row], [3, "A", *row[1:]]]
    got = items_of(raw, "naming", per_item, "T")
    assert [(r.article, r.id) for r in got] == [("A", "3"), ("B", "2"), ("B", "10")]
    assert [r.id for r in items_of(raw, "of", per_item, "T")] == ["2", "3", "10"]

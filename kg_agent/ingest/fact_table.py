"""The ``Fact`` table's rows: the items of one box parameter grouped into one node.

The parse writes a row an item (:func:`kg_agent.ingest.shards.add_fact_columns`: a
link, or a typed literal), which is what a reader works with. The graph keeps a row a
fact (schema 7, docs/schema.md): a node an item cost its primary key's hash index
(~34 bytes) and a ``HAS_FACT`` edge (~15 bytes) each, and a fact holds 1.5 items on
average (docs/notes/scale.md). :func:`group_items` turns the one into the other for
a load (``prepare.py``) and for the compaction that upgrades a graph of schema 6.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kg_agent.ingest.shards import SCHEMAS
from kg_agent.store.fact_items import ITEM_SEP, ITEM_SEP_SHOWN

__all__ = ["FACT_SCHEMA", "ITEM_FIELDS", "ITEM_SCHEMA", "group_items"]

#: The item fields a fact joins, one value an item, by ``ITEM_SEP``.
ITEM_FIELDS = ("item", "kind", "target", "unit", "date", "note")
#: The parse's item columns (``position``: the item's place in its fact), as the Fact
#: table of schemas 4 to 6 held them.
ITEM_SCHEMA = SCHEMAS["facts"].remove(SCHEMAS["facts"].get_field_index("_ord"))
#: The ``Fact`` table's columns, in its order (store/graph.py ``FACT_DDL``): the items'
#: without ``position``, and ``numbers``.
FACT_SCHEMA = ITEM_SCHEMA.remove(ITEM_SCHEMA.get_field_index("position")).append(
    pa.field("numbers", pa.string())
)
_FACT_FIELDS = ("article", "box", "sub_box", "key", "raw_key", "value")


def group_items(items: pa.Table, first_id: int = 0) -> tuple[pa.Table, pa.Array]:
    """The facts of ``items`` (rows of the parse's facts schema, in page order: each
    fact's items together, from ``position`` 0), numbered from ``first_id``, and the id
    of each item's fact.

    A fact starts at an item of position 0 or at a new article. Its own fields are its
    first item's; each item field is its items' values joined by ``ITEM_SEP`` (written
    ``ITEM_SEP_SHOWN`` in a value, so splitting gives back one value an item)."""
    n = items.num_rows
    if n == 0:
        return FACT_SCHEMA.empty_table(), pa.array([], pa.int64())
    article = items.column("article").combine_chunks()
    new_article = pc.not_equal(article.slice(1), article.slice(0, n - 1))
    starts_mask = pc.or_(
        pc.equal(items.column("position").combine_chunks(), 0),
        pa.concat_arrays([pa.array([True]), new_article]),
    )
    starts = pc.indices_nonzero(starts_mask)
    count = len(starts)
    fact_of_item = pc.add(pc.cumulative_sum(starts_mask.cast(pa.int64())), first_id - 1)
    offsets = pa.concat_arrays([starts.cast(pa.int32()), pa.array([n], pa.int32())])
    sizes = pc.subtract(offsets.slice(1), offsets.slice(0, count))
    several = pc.greater(sizes, 1)
    first = items.take(starts)
    columns: dict[str, pa.Array | pa.ChunkedArray] = {
        "id": pa.array(np.arange(first_id, first_id + count, dtype=np.int64)),
        **{name: first.column(name) for name in _FACT_FIELDS},
    }
    for name in ITEM_FIELDS:
        columns[name] = _joined(items.column(name), offsets)
    columns["number"] = first.column("number")
    numbers = items.column("number").combine_chunks()
    if numbers.null_count < n:  # every item's number, where a fact of several has one
        text = pc.fill_null(pc.cast(numbers, pa.string()), "")
        has = pc.greater(_per_fact_count(pc.is_valid(numbers), offsets), 0)
        columns["numbers"] = pc.if_else(pc.and_(several, has), _joined(text, offsets), "")
    else:
        columns["numbers"] = pa.array([""] * count, pa.string())
    facts = pa.table([columns[f.name] for f in FACT_SCHEMA], schema=FACT_SCHEMA)
    return facts, fact_of_item


def _joined(values: pa.Array | pa.ChunkedArray, offsets: pa.Array) -> pa.Array:
    """Each fact's item values joined by ``ITEM_SEP`` (nulls as "")."""
    flat = pc.fill_null(values, "")
    if isinstance(flat, pa.ChunkedArray):
        flat = flat.combine_chunks()
    flat = pc.replace_substring(flat, ITEM_SEP, ITEM_SEP_SHOWN)
    return pc.binary_join(pa.ListArray.from_arrays(offsets, flat), ITEM_SEP)


def _per_fact_count(flags: pa.Array, offsets: pa.Array) -> pa.Array:
    """How many of each fact's items have ``flags`` set (prefix sums at its bounds)."""
    sums = pc.cumulative_sum(flags.cast(pa.int64()))
    prefix = pa.concat_arrays([pa.array([0], pa.int64()), sums])
    return pc.subtract(
        pc.take(prefix, offsets.slice(1)), pc.take(prefix, offsets.slice(0, len(offsets) - 1))
    )

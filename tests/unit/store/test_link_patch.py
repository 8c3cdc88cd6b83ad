"""A patched link table is the table a rebuild writes, array for array."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kg_agent.store import link_patch
from kg_agent.store.link_patch import patch_link_table
from kg_agent.store.link_table import _HEADER, LinkTable, write_link_table

Edge = tuple[int, int, int]


def _built(tmp: Path, name: str, edges: list[Edge], nodes: int, key: str) -> Path:
    s, d, n = zip(*edges, strict=True) if edges else ((), (), ())
    export = tmp / f"{name}.parquet"
    pq.write_table(
        pa.table({k: pa.array(v, pa.int64()) for k, v in (("s", s), ("d", d), ("n", n))}),
        export,
    )
    target = tmp / f"{name}.bin"
    write_link_table(export, nodes, target, key)
    return target


def _random_edges(rng: random.Random, nodes: int, k: int) -> list[Edge]:
    pairs = {(rng.randrange(nodes), rng.randrange(nodes)): rng.randrange(1, 5) for _ in range(k)}
    return [(s, d, n) for (s, d), n in pairs.items()]


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize(
    ("per_node", "pack_bits"),
    [(10**9, 63), (0, 63), (10**9, 0)],
    ids=["list-by-list", "in-blocks", "one-sort"],
)
def test_a_patch_equals_a_rebuild(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, per_node: int, pack_bits: int
) -> None:
    monkeypatch.setattr(link_patch, "_COPY", 5)  # the old table copied in small pieces
    monkeypatch.setattr(link_patch, "_BLOCK", 7)  # and gathered in small blocks
    monkeypatch.setattr(link_patch, "_PER_NODE", per_node)
    monkeypatch.setattr(link_patch, "_PACK_BITS", pack_bits)
    rng = random.Random(seed)
    nodes = rng.randrange(20, 80)
    before = _random_edges(rng, nodes, 4 * nodes)
    # the graph after: some nodes gone from the end, or new ones added
    after_nodes = nodes + rng.choice([-3, 0, 5])
    changed = sorted(rng.sample(range(max(nodes, after_nodes)), rng.randrange(0, 12)))
    # nodes past the new end lose their links (and so do the links into them)
    linkers = {s for s, d, _ in before if d in range(after_nodes, nodes)}
    changed = sorted(set(changed) | linkers | set(range(after_nodes, nodes)))
    kept = [e for e in before if e[0] not in changed and e[1] < after_nodes]
    fresh = [
        (s, d, n)
        for s, d, n in _random_edges(rng, after_nodes, 6 * len(changed) + 1)
        if s in changed and s < after_nodes
    ]
    after = kept + fresh
    old = LinkTable(_built(tmp_path, "old", before, nodes, "k0"))
    expected = LinkTable(_built(tmp_path, "rebuilt", after, after_nodes, "k1"))
    target = tmp_path / "patched.bin"
    edges = tuple(np.array([e[i] for e in fresh], dtype=np.int64) for i in range(3))
    n = patch_link_table(old, after_nodes, np.array(changed), edges, target, "k1")  # type: ignore[arg-type]
    assert n == len(after)
    patched = LinkTable(target)
    assert (patched.made, patched.key, patched.nodes) == ("patch", "k1", after_nodes)
    assert target.read_bytes()[_HEADER:] == expected.path.read_bytes()[_HEADER:]


def test_a_patch_with_nothing_changed_copies_the_table(tmp_path: Path) -> None:
    edges = _random_edges(random.Random(1), 30, 100)
    old = LinkTable(_built(tmp_path, "old", edges, 30, "k1"))
    target = tmp_path / "patched.bin"
    none = np.zeros(0, dtype=np.int64)
    assert patch_link_table(old, 30, none, (none, none, none), target, "k1") == len(edges)
    assert target.read_bytes()[_HEADER:] == old.path.read_bytes()[_HEADER:]


def test_new_links_must_come_from_changed_articles(tmp_path: Path) -> None:
    old = LinkTable(_built(tmp_path, "old", [(0, 1, 1)], 3, "k0"))
    one = np.array([2])
    with pytest.raises(ValueError, match="changed"):
        patch_link_table(old, 3, np.array([1]), (one, one - 2, one), tmp_path / "p.bin", "k1")


def test_changed_links_of_an_update(tmp_path: Path) -> None:
    """A new stub loses only the inferred links the write deleted into it, a removed
    article's links go both ways, and a new article in its freed offset links anew."""
    from kg_agent.store.link_changes import LinkChanges, changed_links

    # before: A→B, C→B (inferred), C→D, D→A; after: B a stub, D removed, E new at 3
    old = LinkTable(_built(tmp_path, "old", [(0, 1, 1), (2, 1, 2), (2, 3, 1), (3, 0, 1)], 4, "k0"))
    articles, links = tmp_path / "articles.parquet", tmp_path / "links.parquet"
    pq.write_table(pa.table({"title": ["E"]}), articles)
    pq.write_table(pa.table({"from": ["E"], "to": ["A"], "count": [3], "inferred": [False]}), links)
    changes = LinkChanges("load-2", [articles], [links], ["D"], ["B"], unlinked=[[2, 1]])
    changed, edges = changed_links(
        old, pa.array(["A", "B", "C", "D"]), pa.array(["A", "B", "C", "E"]), changes
    )
    assert changed.tolist() == [1, 2, 3]  # A keeps its link to the new stub
    assert sorted(zip(*(e.tolist() for e in edges), strict=True)) == [(3, 0, 3)]
    target = tmp_path / "patched.bin"
    patch_link_table(old, 4, changed, edges, target, "k1")
    rebuilt = _built(tmp_path, "rebuilt", [(0, 1, 1), (3, 0, 3)], 4, "k1")
    assert target.read_bytes()[_HEADER:] == rebuilt.read_bytes()[_HEADER:]

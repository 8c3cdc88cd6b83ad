"""The link table brought up to date by patching it, not by exporting every link again.

Why: after an update, :func:`~kg_agent.store.link_table.write_link_table` exported
every link of the graph from Kùzu and sorted them all (2.4 s at 100k articles and
3.9M links on a 2-core AMD EPYC; the export grows with the graph, ~160M links at
English Wikipedia's size), though an update changes the links of a few articles.
Here the new table is the old one with the lists of the changed articles replaced:

* **out-lists**: an article whose links may have changed (``changed``) gets the
  list it has now (``edges``); every other article's list is copied;
* **in-lists**: an article that one of them linked to before, or links to now, keeps
  its old in-list less the entries of changed articles, plus their new links to it.

The result is the table a rebuild writes, array for array (tested on real updates); the
copies are sequential, in bounded pieces, so memory holds the changed lists and the
in-lists of the articles they touch, not the table. Which articles changed, and their
links now, is for the caller to say (:func:`~kg_agent.store.link_changes.changed_links`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO

import numpy as np

from kg_agent.store.link_table import LinkTable, _header, _layout

__all__ = ["patch_link_table"]

_COPY = 1 << 24  # elements copied from the old table at once: 64 MiB of int32
_BLOCK = 1 << 21  # links assembled at once by _write_blocks (~50 MiB of index arrays)
#: a list written by itself costs about as much as this many links gathered in a block
_PER_NODE = 1000
_PACK_BITS = 63  # what one int64 holds of (key, count, neighbour) for _merged


def patch_link_table(
    old: LinkTable,
    n_nodes: int,
    changed: np.ndarray,
    edges: tuple[np.ndarray, np.ndarray, np.ndarray],
    target: Path,
    key: str,
) -> int:
    """Write at ``target`` the table of a graph of ``n_nodes`` offsets whose links are
    ``old``'s, except that each article of ``changed`` now links as ``edges`` say
    (source, target, count; sources all in ``changed``). Returns the number of links."""
    changed = np.unique(np.asarray(changed, dtype=np.int64))
    src, dst, cnt = (np.asarray(a, dtype=np.int64) for a in edges)
    if len(src) and not np.isin(src, changed).all():
        raise ValueError("every new link must come from an article marked changed")
    arrays = old._arrays
    old_out_ptr, old_in_ptr = arrays["out_ptr"], arrays["in_ptr"]

    # out-lists of the changed articles, in (source, count descending, target) order
    order = np.lexsort((dst, -cnt, src))
    out_src, out_dst, out_cnt = src[order], dst[order], cnt[order]

    # in-lists of the articles the changed ones linked to or link to now
    was = changed[changed < old.nodes]
    old_targets = _gather(arrays["out_nbr"], old_out_ptr, was)[0]
    touched = np.unique(np.concatenate([old_targets, dst]))
    touched_old = touched[touched < old.nodes]
    t_nbr, t_cnt, t_key = _gather(arrays["in_nbr"], old_in_ptr, touched_old, arrays["in_cnt"])
    keep = ~_member(t_nbr, changed)
    in_key, in_src, in_cnt = _merged(
        (t_key[keep], t_cnt[keep], t_nbr[keep]), (dst, cnt, src), n_nodes
    )
    out_deg = _degrees(old_out_ptr, n_nodes, changed, out_src)
    in_deg = _degrees(old_in_ptr, n_nodes, touched, in_key)
    n_edges = int(out_deg.sum())
    if int(in_deg.sum()) != n_edges:
        raise ValueError("the patched table's in- and out-lists disagree")
    layout = _layout(n_nodes, n_edges)
    size = max(pos + length * np.dtype(dt).itemsize for pos, length, dt in layout.values())
    header = _header(n_nodes, n_edges, key, "patch")
    tmp = target.with_name(target.name + ".tmp")
    with open(tmp, "wb") as fh:
        fh.write(header)
        fh.truncate(size)
        for side, deg, nodes, keys, nbr, counts in (
            ("out", out_deg, changed, out_src, out_dst, out_cnt),
            ("in", in_deg, touched, in_key, in_src, in_cnt),
        ):
            ptr = np.zeros(n_nodes + 1, dtype=np.int64)
            np.cumsum(deg, out=ptr[1:])
            fh.seek(layout[f"{side}_ptr"][0])
            fh.write(ptr.tobytes())
            old_ptr = arrays[f"{side}_ptr"]
            starts = np.searchsorted(keys, nodes, side="left")
            for name, new in (("nbr", nbr), ("cnt", counts)):
                fh.seek(layout[f"{side}_{name}"][0])
                if len(nodes) * _PER_NODE > n_edges:  # many lists: gathers by blocks
                    _write_blocks(
                        fh, old.nodes, old_ptr, arrays[f"{side}_{name}"], ptr, nodes, starts, new
                    )
                else:
                    _write_side(
                        fh,
                        old.nodes,
                        old_ptr,
                        arrays[f"{side}_{name}"],
                        n_nodes,
                        nodes,
                        starts,
                        new,
                    )
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, target)
    return n_edges


def _merged(
    kept: tuple[np.ndarray, np.ndarray, np.ndarray],
    new: tuple[np.ndarray, np.ndarray, np.ndarray],
    n_nodes: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(key, count, neighbour) rows of ``kept`` (in key, count descending, neighbour
    order: old lists less some rows) and ``new`` (any order), merged in that order.

    Why not one sort of both: the in-lists of the articles an update links to hold the
    hubs' (a few changed articles touch ~1M old rows at 100k articles: a lexsort of
    them was most of the patch). The old rows are in order already, so only the new
    ones are sorted, then inserted where they belong; the three columns are packed in
    one int64 for the search, as :func:`~kg_agent.store.link_table._sorted` does."""
    k_key, k_cnt, k_nbr = kept
    n_key, n_cnt, n_nbr = new
    order = np.lexsort((n_nbr, -n_cnt, n_key))
    n_key, n_cnt, n_nbr = n_key[order], n_cnt[order], n_nbr[order]
    c_max = int(max(k_cnt.max(initial=0), n_cnt.max(initial=0)))
    bits_n = max(int(n_nodes - 1).bit_length(), 1)
    bits_c = max(c_max.bit_length(), 1)
    low = min(int(k_cnt.min(initial=0)), int(n_cnt.min(initial=0)))
    if low < 0 or 2 * bits_n + bits_c > _PACK_BITS:  # numbers that do not pack: one sort
        key = np.concatenate([k_key, n_key])
        nbr = np.concatenate([k_nbr, n_nbr])
        cnt = np.concatenate([k_cnt, n_cnt])
        order = np.lexsort((nbr, -cnt, key))
        return key[order], nbr[order], cnt[order]

    def packed(key: np.ndarray, cnt: np.ndarray, nbr: np.ndarray) -> np.ndarray:
        return np.asarray(
            (key << (bits_c + bits_n)) | ((c_max - cnt) << bits_n) | nbr, dtype=np.int64
        )

    at = np.searchsorted(packed(k_key, k_cnt, k_nbr), packed(n_key, n_cnt, n_nbr))
    return np.insert(k_key, at, n_key), np.insert(k_nbr, at, n_nbr), np.insert(k_cnt, at, n_cnt)


def _member(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    if not len(sorted_set):
        return np.zeros(len(values), dtype=bool)
    at = np.minimum(np.searchsorted(sorted_set, values), len(sorted_set) - 1)
    return np.asarray(sorted_set[at] == values)


def _gather(
    values: np.ndarray, ptr: np.ndarray, nodes: np.ndarray, counts: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The lists of ``nodes`` (sorted), concatenated: values, counts, and whose each is."""
    starts = np.asarray(ptr[nodes], dtype=np.int64)
    lengths = np.asarray(ptr[nodes + 1], dtype=np.int64) - starts
    total = int(lengths.sum())
    if not total:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    owner = np.repeat(np.arange(len(nodes)), lengths)
    first = np.cumsum(lengths) - lengths
    index = starts[owner] + (np.arange(total, dtype=np.int64) - first[owner])
    got = np.asarray(values[index], dtype=np.int64)
    cnt = np.asarray(counts[index], dtype=np.int64) if counts is not None else got
    return got, cnt, nodes[owner]


def _degrees(old_ptr: np.ndarray, n_nodes: int, nodes: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Each offset's list length: the old one, the new one for ``nodes``."""
    deg = np.zeros(n_nodes, dtype=np.int64)
    n_old = min(len(old_ptr) - 1, n_nodes)
    deg[:n_old] = np.diff(np.asarray(old_ptr[: n_old + 1], dtype=np.int64))
    inside = nodes[nodes < n_nodes]
    deg[inside] = 0
    np.add.at(deg, keys, 1)
    return deg


def _write_side(
    fh: BinaryIO,
    old_nodes: int,
    old_ptr: np.ndarray,
    old_values: np.ndarray,
    n_nodes: int,
    nodes: np.ndarray,
    new_ptr: np.ndarray,
    new: np.ndarray,
) -> None:
    """One array of one side, in node order: runs of unchanged nodes copied from the
    old table, the new lists of ``nodes`` (sorted) between them. Sequential writes."""
    nodes = nodes[nodes < n_nodes]
    bounds = np.append(new_ptr[: len(nodes)], len(new)) if len(nodes) else np.zeros(1, np.int64)
    at = 0
    for i, node in enumerate(nodes.tolist()):
        _copy(fh, old_ptr, old_values, at, min(node, old_nodes))
        fh.write(new[bounds[i] : bounds[i + 1]].astype(np.int32).tobytes())
        at = node + 1
    _copy(fh, old_ptr, old_values, at, min(n_nodes, old_nodes))


def _write_blocks(
    fh: BinaryIO,
    old_nodes: int,
    old_ptr: np.ndarray,
    old_values: np.ndarray,
    ptr: np.ndarray,
    nodes: np.ndarray,
    starts: np.ndarray,
    new: np.ndarray,
) -> None:
    """:func:`_write_side` for many changed lists: each block of the new array gathered
    at once, from the old table or from ``new``, by where each node's list comes from
    (a Python step per list costs ~20 µs; at 5% of the articles changed, 160k of them)."""
    n_nodes = len(ptr) - 1
    inside = nodes < n_nodes
    from_new = np.zeros(n_nodes, dtype=bool)
    from_new[nodes[inside]] = True
    first = np.zeros(n_nodes, dtype=np.int64)
    n_old = min(old_nodes, n_nodes)
    first[:n_old] = old_ptr[:n_old]
    first[nodes[inside]] = starts[inside]
    deg = np.diff(ptr)
    lo = 0
    while lo < n_nodes:
        hi = int(np.searchsorted(ptr, ptr[lo] + _BLOCK, side="right")) - 1
        hi = min(max(hi, lo + 1), n_nodes)
        total = int(ptr[hi] - ptr[lo])
        if total:
            owner = np.repeat(np.arange(lo, hi), deg[lo:hi])
            index = first[owner] + (np.arange(total, dtype=np.int64) - (ptr[owner] - ptr[lo]))
            fresh = from_new[owner]
            out = np.empty(total, dtype=np.int32)
            out[~fresh] = old_values[index[~fresh]]
            out[fresh] = new[index[fresh]]
            fh.write(out.tobytes())
        lo = hi


def _copy(fh: BinaryIO, ptr: np.ndarray, values: np.ndarray, lo: int, hi: int) -> None:
    if hi <= lo:
        return
    start, stop = int(ptr[lo]), int(ptr[hi])
    for i in range(start, stop, _COPY):
        fh.write(np.asarray(values[i : min(stop, i + _COPY)]).tobytes())

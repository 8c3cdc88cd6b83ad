"""The article link graph as compressed sparse rows by Kùzu node offset, memory-mapped.

Why: the reranker's walk reads the links of ~100 articles a question. In Kùzu that is
two primary-key lookups per article (out and in), ~0.55 ms each on a 1M-article graph:
over 100 ms a question, the largest part of a warm ``ask``. Read from this table it is
two slices of a memory-mapped array, microseconds, and each article's neighbours come
strongest link first, so a capped read keeps the strongest links (Kùzu's ``LIMIT``
keeps whatever its scan meets first).

A derived index, like :mod:`~kg_agent.store.article_table`: rewritten after every load,
keyed by the graph's loads so that a table older than the graph is never read. The
file is a 4 KiB JSON header, then ``out_ptr``, ``in_ptr`` (int64, one more than the
articles) and ``out_nbr``, ``out_cnt``, ``in_nbr``, ``in_cnt`` (int32, one per link).
It is built from a parquet export of the links in passes over bounded ranges of
articles, so memory stays flat in the graph's size (degrees, then one range sorted).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import pyarrow.parquet as pq

__all__ = ["FILE_NAME", "LinkTable", "write_link_table"]

FILE_NAME = "links.bin"
_MAGIC = "kg-agent link table"
_FORMAT = 1
_HEADER = 4096
_RANGE_EDGES = 4_000_000  # links sorted at once: ~100 MB
_BATCH = 1 << 20


def _layout(n_nodes: int, n_edges: int) -> dict[str, tuple[int, int, Any]]:
    """name → (byte offset, length, dtype) of each array in the file."""
    out: dict[str, tuple[int, int, Any]] = {}
    pos = _HEADER
    for name, length, dtype in (
        ("out_ptr", n_nodes + 1, np.int64),
        ("in_ptr", n_nodes + 1, np.int64),
        ("out_nbr", n_edges, np.int32),
        ("out_cnt", n_edges, np.int32),
        ("in_nbr", n_edges, np.int32),
        ("in_cnt", n_edges, np.int32),
    ):
        out[name] = (pos, length, dtype)
        pos += length * np.dtype(dtype).itemsize
        pos += -pos % 8
    return out


def _header(n_nodes: int, n_edges: int, key: str, made: str) -> bytes:
    """The file's first :data:`_HEADER` bytes (``made``: "export" or "patch")."""
    meta = {
        "magic": _MAGIC,
        "format": _FORMAT,
        "nodes": n_nodes,
        "edges": n_edges,
        "key": key,
        "made": made,
    }
    return json.dumps(meta).encode().ljust(_HEADER, b" ")


def _degrees(exported: Path, n_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    out_deg = np.zeros(n_nodes, dtype=np.int64)
    in_deg = np.zeros(n_nodes, dtype=np.int64)
    for batch in pq.ParquetFile(exported).iter_batches(batch_size=_BATCH, columns=["s", "d"]):
        out_deg += np.bincount(batch.column(0).to_numpy(), minlength=n_nodes)
        in_deg += np.bincount(batch.column(1).to_numpy(), minlength=n_nodes)
    return out_deg, in_deg


def _fill(
    exported: Path,
    out: BinaryIO,
    ptr: np.ndarray,
    nbr_at: int,
    cnt_at: int,
    *,
    key: str,
    other: str,
) -> None:
    """Sort the links by (key article, count descending, neighbour) one range of key
    articles at a time, and write each range's neighbours and counts at their place in
    the file. Plain writes rather than a writable memory map, whose dirty pages would
    count against the process's memory until the kernel writes them back."""
    n_nodes = len(ptr) - 1
    lo = 0
    while lo < n_nodes:
        hi = int(np.searchsorted(ptr, ptr[lo] + _RANGE_EDGES, side="right")) - 1
        hi = min(max(hi, lo + 1), n_nodes)
        keys, others, counts = [], [], []
        for batch in pq.ParquetFile(exported).iter_batches(
            batch_size=_BATCH, columns=[key, other, "n"]
        ):
            k = batch.column(0).to_numpy()
            inside = (k >= lo) & (k < hi)
            if inside.any():
                keys.append(k[inside].astype(np.int32))
                others.append(batch.column(1).to_numpy()[inside].astype(np.int32))
                counts.append(batch.column(2).fill_null(0).to_numpy()[inside].astype(np.int32))
        if keys:
            k, o, c = np.concatenate(keys), np.concatenate(others), np.concatenate(counts)
            del keys, others, counts
            o, c = _sorted(k - lo, o, c, hi - lo, n_nodes)
            start = int(ptr[lo])
            out.seek(nbr_at + 4 * start)
            out.write(o.tobytes())
            out.seek(cnt_at + 4 * start)
            out.write(c.tobytes())
        lo = hi


def _sorted(
    k: np.ndarray, o: np.ndarray, c: np.ndarray, n_keys: int, n_nodes: int
) -> tuple[np.ndarray, np.ndarray]:
    """Neighbours and counts in (key, count descending, neighbour) order.

    Why not ``np.lexsort``: it sorts three columns one after the other, most of a
    table's write. The three fit one int64 (key, count's complement, neighbour in that
    order of bits: 23 + 23 bits at 7M articles), and one sort of it is ~4x faster
    (4M links: 1.3 s against 0.3 s, gathers included). ``lexsort`` stays for a range
    whose numbers do not fit."""
    c_max = int(c.max())
    bits_o = max(int(n_nodes - 1).bit_length(), 1)
    bits_c = max(c_max.bit_length(), 1)
    bits_k = max(int(n_keys - 1).bit_length(), 1)
    if int(c.min()) < 0 or bits_k + bits_c + bits_o > 63:
        order = np.lexsort((o, -c, k))
        return o[order], c[order]
    packed = k.astype(np.int64) << (bits_c + bits_o)
    packed |= (c_max - c.astype(np.int64)) << bits_o
    packed |= o.astype(np.int64)
    packed.sort()
    nbr = (packed & ((1 << bits_o) - 1)).astype(np.int32)
    cnt = (c_max - ((packed >> bits_o) & ((1 << bits_c) - 1))).astype(np.int32)
    return nbr, cnt


def write_link_table(exported: Path, n_nodes: int, target: Path, key: str) -> int:
    """Turn an export of the links (``s``, ``d``, ``n``: source and target node
    offsets, count) into the table at ``target``, for a graph whose loads give ``key``.
    Returns the number of links. Memory: the degree arrays (16 bytes an article) and
    one range of :data:`_RANGE_EDGES` links, whatever the graph's size."""
    out_deg, in_deg = _degrees(exported, n_nodes)
    n_edges = int(out_deg.sum())
    layout = _layout(n_nodes, n_edges)
    size = max(pos + length * np.dtype(dt).itemsize for pos, length, dt in layout.values())
    tmp = target.with_name(target.name + ".tmp")
    header = _header(n_nodes, n_edges, key, "export")
    with open(tmp, "wb") as fh:
        fh.write(header)
        fh.truncate(size)
        for direction, deg, key_col, other_col in (
            ("out", out_deg, "s", "d"),
            ("in", in_deg, "d", "s"),
        ):
            ptr = np.zeros(n_nodes + 1, dtype=np.int64)
            np.cumsum(deg, out=ptr[1:])
            fh.seek(layout[f"{direction}_ptr"][0])
            fh.write(ptr.tobytes())
            _fill(
                exported,
                fh,
                ptr,
                layout[f"{direction}_nbr"][0],
                layout[f"{direction}_cnt"][0],
                key=key_col,
                other=other_col,
            )
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, target)
    return n_edges


class LinkTable:
    """Read side: an article's neighbours by node offset, strongest link first."""

    def __init__(self, path: Path) -> None:
        self.path = path
        with open(path, "rb") as fh:
            meta = json.loads(fh.read(_HEADER).decode())
        if meta.get("magic") != _MAGIC or meta.get("format") != _FORMAT:
            raise ValueError(f"{path} is not a link table of this version")
        self.key = str(meta["key"])
        #: how it was written: "export" (every link of the graph) or "patch" (link_patch)
        self.made = str(meta.get("made", "export"))
        self.nodes = int(meta["nodes"])
        self.edges = int(meta["edges"])
        self._arrays = {
            name: (
                np.memmap(path, dtype=dtype, mode="r", offset=pos, shape=(length,))
                if length
                else np.zeros(0, dtype=dtype)
            )
            for name, (pos, length, dtype) in _layout(self.nodes, self.edges).items()
        }

    def rows(self, *, incoming: bool) -> tuple[np.ndarray, np.ndarray]:
        """The compressed rows of one side, (pointers, neighbours), memory-mapped: the
        neighbours of node ``i`` are ``nbr[ptr[i]:ptr[i + 1]]``."""
        side = "in" if incoming else "out"
        return self._arrays[f"{side}_ptr"], self._arrays[f"{side}_nbr"]

    def out_neighbours(self, offsets: np.ndarray) -> np.ndarray:
        """Every article the articles at ``offsets`` link to (with repeats; offsets the
        table does not hold have none)."""
        ptr, nbr = self._arrays["out_ptr"], self._arrays["out_nbr"]
        inside = offsets[(offsets >= 0) & (offsets < self.nodes)]
        parts = [nbr[int(ptr[o]) : int(ptr[o + 1])] for o in inside.tolist()]
        return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64)

    def neighbours(self, offset: int, *, incoming: bool, k: int) -> list[tuple[int, int]]:
        """Up to ``k`` (neighbour offset, count) of the article at ``offset``, strongest
        first (ties: lower offset first); ``incoming`` for links that point at it."""
        if not 0 <= offset < self.nodes or k <= 0:
            return []
        side = "in" if incoming else "out"
        ptr = self._arrays[f"{side}_ptr"]
        start = int(ptr[offset])
        end = min(int(ptr[offset + 1]), start + k)
        nbr = self._arrays[f"{side}_nbr"][start:end].tolist()
        cnt = self._arrays[f"{side}_cnt"][start:end].tolist()
        return list(zip(nbr, cnt, strict=True))

"""PageRank over the memory-mapped link table, with numpy: no engine extension.

Why: Kùzu's ``page_rank`` lives in its ``algo`` extension, which Kùzu 0.11.3 builds in
but its maintained fork (``real_ladybug``) downloads at run time, so a graph that needs
it cannot be rebuilt offline under the fork. The link table (:mod:`.link_table`) already
holds every link by node offset, incoming side included, so the ranks are a few
gathers and segment sums per iteration, in bounded ranges of links.

The algorithm is the one Kùzu 0.11.3 runs (``extension/algo/src/function/page_rank.cpp``),
so ranks stay what they were to the sixth decimal (a test compares them): the nodes are
the articles with text (stubs are left out, with their links); every rank starts at
``1/N``; an iteration gives each article ``(1 - d)/N`` plus ``d`` times the sum, over
the articles linking to it, of their rank divided by their number of links; the rank
of an article without links is not passed on (no redistribution); it stops when the
ranks moved less than ``tolerance`` in total (L1) or after ``max_iterations - 1``
iterations. A link counts once however often the text repeats it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.parquet as pq

from kg_agent.store.link_table import LinkTable

__all__ = ["DAMPING", "MAX_ITERATIONS", "TOLERANCE", "page_rank", "rank_export"]

DAMPING = 0.85
MAX_ITERATIONS = 20
TOLERANCE = 1e-7
_RANGE = 1 << 22  # links gathered at once: 4M (~50 MB of temporaries)


def _ranges(ptr: npt.NDArray[np.int64]) -> list[tuple[int, int]]:
    """Node ranges whose links number about :data:`_RANGE` (at least one node each)."""
    n = len(ptr) - 1
    out, lo = [], 0
    while lo < n:
        hi = int(np.searchsorted(ptr, ptr[lo] + _RANGE, side="right")) - 1
        hi = min(max(hi, lo + 1), n)
        out.append((lo, hi))
        lo = hi
    return out


def _segments(ptr: npt.NDArray[np.int64], lo: int, hi: int) -> npt.NDArray[np.intp]:
    """For each link of nodes ``lo``..``hi``, its node's place in the range."""
    return np.repeat(
        np.arange(hi - lo),
        np.asarray(ptr[lo + 1 : hi + 1], np.int64) - np.asarray(ptr[lo:hi], np.int64),
    )


def page_rank(
    table: LinkTable,
    ranked: npt.NDArray[np.bool_],
    *,
    damping: float = DAMPING,
    max_iterations: int = MAX_ITERATIONS,
    tolerance: float = TOLERANCE,
) -> npt.NDArray[np.float64]:
    """The rank of every node offset of ``table`` (0.0 where ``ranked`` is False).

    ``ranked``: which node offsets take part (the articles with text), one per node of
    the table. Memory: three float64 arrays per node and one range of links.
    """
    n_nodes = table.nodes
    if ranked.shape != (n_nodes,):
        raise ValueError(f"ranked has {ranked.shape[0]} nodes, the link table {n_nodes}")
    n = int(ranked.sum())
    if not n:
        return np.zeros(n_nodes, np.float64)
    in_ptr, in_nbr = table.rows(incoming=True)
    out_ptr, out_nbr = table.rows(incoming=False)
    # links between ranked articles only: a stub's links are outside the graph ranked
    degree = np.zeros(n_nodes, np.float64)
    for lo, hi in _ranges(out_ptr):
        a, b = int(out_ptr[lo]), int(out_ptr[hi])
        if b > a:
            keep = ranked[out_nbr[a:b]].astype(np.float64)
            degree[lo:hi] = np.bincount(_segments(out_ptr, lo, hi), keep, hi - lo)
    degree[~ranked] = 0.0
    start = 1.0 / n
    current = np.where(ranked, start, 0.0)
    constant = (1.0 - damping) * start
    for _ in range(1, max_iterations):
        share = np.divide(current, degree, out=np.zeros(n_nodes), where=degree > 0)
        nxt = np.zeros(n_nodes, np.float64)
        for lo, hi in _ranges(in_ptr):
            a, b = int(in_ptr[lo]), int(in_ptr[hi])
            if b == a:
                continue
            gathered = share[in_nbr[a:b]]  # 0.0 from stubs: their degree is 0
            nxt[lo:hi] = np.bincount(_segments(in_ptr, lo, hi), gathered, hi - lo)
        nxt = np.where(ranked, nxt * damping + constant, 0.0)
        diff = float(np.abs(nxt - current).sum())
        current = nxt
        if diff < tolerance:
            break
    return current


def rank_export(table: LinkTable, articles: Path, ranks_file: Path) -> int:
    """Rank the articles of an export (``offset``, ``title``, ``is_stub``, ``pagerank``
    rows, rewritten in place with the new ranks, stubs 0.0) and write ``title``,
    ``rank`` of each ranked article to ``ranks_file``; returns how many were ranked."""
    exported = pq.read_table(articles)
    offsets = exported.column("offset").to_numpy()
    stub = exported.column("is_stub").fill_null(False).to_numpy(zero_copy_only=False)
    inside = offsets < table.nodes
    ranked = np.zeros(table.nodes, dtype=bool)
    ranked[offsets[inside & ~stub]] = True
    ranks = page_rank(table, ranked)
    column = np.zeros(len(offsets), dtype=np.float64)
    column[inside] = ranks[offsets[inside]]
    column[stub] = 0.0
    exported = exported.set_column(
        exported.schema.get_field_index("pagerank"), "pagerank", pa.array(column)
    )
    pq.write_table(exported, articles)
    keep = pa.array(~stub)
    pq.write_table(
        pa.table({"title": exported.column("title").filter(keep), "rank": column[~stub]}),
        ranks_file,
    )
    return int((~stub).sum())

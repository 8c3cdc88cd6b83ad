"""Graph reranker: personalised PageRank on graphs small enough to check by hand, weights, order."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from kg_agent.exceptions import InvalidArgumentError
from kg_agent.retrieval.base import Evidence
from kg_agent.retrieval.rerank import (
    DEFAULT_WEIGHTS,
    GraphReranker,
    RerankWeights,
    personalized_pagerank,
)


def _adj(n: int, edges: list[tuple[int, int]], *, undirected: bool = True) -> sp.csr_matrix:
    rows = [a for a, _ in edges] + ([b for _, b in edges] if undirected else [])
    cols = [b for _, b in edges] + ([a for a, _ in edges] if undirected else [])
    return sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))


# ---------------------------------------------------------------- personalised PageRank
def test_chain_rank_falls_with_distance_from_seed() -> None:
    # 0 - 1 - 2 - 3 - 4, restart at the middle node 2: rank falls symmetrically with distance.
    r = personalized_pagerank(_adj(5, [(0, 1), (1, 2), (2, 3), (3, 4)]), [0, 0, 1, 0, 0])
    assert r.sum() == pytest.approx(1.0)
    assert r[2] > r[1] > r[0] > 0
    assert r[1] == pytest.approx(r[3]) and r[0] == pytest.approx(r[4])
    # Restart at the end 0: beyond the first step, the farther the lower.
    r = personalized_pagerank(_adj(5, [(0, 1), (1, 2), (2, 3), (3, 4)]), [1, 0, 0, 0, 0])
    assert r[1] > r[2] > r[3] > r[4] > 0
    assert r[0] > r[2]


def test_star_seeded_at_a_leaf() -> None:
    # Hub 0 with leaves 1..5; seed leaf 1. Every walk passes through the hub, so it ranks
    # first, the seed second, and the other leaves tie last.
    r = personalized_pagerank(_adj(6, [(0, i) for i in range(1, 6)]), [0, 1, 0, 0, 0, 0])
    assert r.sum() == pytest.approx(1.0)
    assert r[0] > r[1] > r[2]
    assert r[2] == pytest.approx(r[3]) == pytest.approx(r[4]) == pytest.approx(r[5])


def test_unreachable_nodes_get_nothing() -> None:
    # Two components: {0, 1} and {2, 3}; seed 0.
    r = personalized_pagerank(_adj(4, [(0, 1), (2, 3)]), [1, 0, 0, 0])
    assert r[2] == 0 and r[3] == 0
    assert r[0] + r[1] == pytest.approx(1.0)


def test_two_node_closed_form() -> None:
    # 0 <-> 1, seed 0, damping d: r0 = 1 / (1 + d), r1 = d / (1 + d).
    d = 0.85
    r = personalized_pagerank(_adj(2, [(0, 1)]), [1, 0], damping=d)
    assert r[0] == pytest.approx(1 / (1 + d), abs=1e-8)
    assert r[1] == pytest.approx(d / (1 + d), abs=1e-8)


def test_dangling_nodes_return_to_the_seeds() -> None:
    # Directed 0 -> 1 -> 2, and 2 has no out-links: its rank jumps back to seed 0.
    r = personalized_pagerank(_adj(3, [(0, 1), (1, 2)], undirected=False), [1, 0, 0])
    assert np.all(np.isfinite(r))
    assert r.sum() == pytest.approx(1.0)
    assert r[0] > r[1] > r[2] > 0


def test_isolated_seed_keeps_everything() -> None:
    r = personalized_pagerank(sp.csr_matrix((3, 3)), [0, 0, 1])
    assert r.tolist() == pytest.approx([0.0, 0.0, 1.0])


def test_matches_networkx_on_a_weighted_directed_graph() -> None:
    rng = np.random.default_rng(7)
    g = nx.gnp_random_graph(40, 0.08, seed=7, directed=True)
    for a, b in g.edges:
        g.edges[a, b]["weight"] = float(rng.integers(1, 5))
    g.add_node(40)  # an isolated, dangling node
    pers = {i: (1.0 if i in (0, 3, 40) else 0.0) for i in g.nodes}
    pers[3] = 2.0
    want = nx.pagerank(g, alpha=0.85, personalization=pers, tol=1e-12, max_iter=1000)
    adj = nx.to_scipy_sparse_array(g, nodelist=sorted(g.nodes), weight="weight")
    got = personalized_pagerank(adj, [pers[i] for i in sorted(g.nodes)], tol=1e-12)
    assert got.tolist() == pytest.approx([want[i] for i in sorted(g.nodes)], abs=1e-8)


def test_zero_personalization_means_uniform_restart() -> None:
    r = personalized_pagerank(_adj(3, [(0, 1), (1, 2), (2, 0)]), [0, 0, 0])
    assert r.tolist() == pytest.approx([1 / 3] * 3)


@pytest.mark.parametrize(
    ("adj", "pers", "kw", "match"),
    [
        (sp.csr_matrix((2, 3)), [1, 0], {}, "square"),
        (sp.csr_matrix((2, 2)), [1, 0, 0], {}, "personalization has 3"),
        (sp.csr_matrix((2, 2)), [1, -1], {}, ">= 0"),
        (sp.csr_matrix((2, 2)), [1, 0], {"damping": 1.0}, "damping"),
    ],
)
def test_ppr_rejects_bad_input(adj: Any, pers: list[int], kw: dict[str, Any], match: str) -> None:
    with pytest.raises(InvalidArgumentError, match=match):
        personalized_pagerank(adj, pers, **kw)


# ---------------------------------------------------------------- weights
def test_default_weights_are_valid() -> None:
    assert DEFAULT_WEIGHTS.total > 0


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"retrieval": -1.0}, "retrieval must be a finite number >= 0"),
        ({"global_pagerank": math.nan}, "global_pagerank must be a finite number"),
        ({"personalized_pagerank": math.inf}, "personalized_pagerank must be a finite"),
        ({"retrieval": "1"}, "retrieval must be a number"),
        ({"retrieval": True}, "retrieval must be a number"),
        (
            {"retrieval": 0, "global_pagerank": 0, "personalized_pagerank": 0},
            "all zero",
        ),
    ],
)
def test_bad_weights_raise(kw: dict[str, Any], match: str) -> None:
    with pytest.raises(InvalidArgumentError, match=match):
        RerankWeights(**kw)


def test_weights_are_frozen() -> None:
    with pytest.raises(AttributeError):
        RerankWeights().retrieval = 2.0  # type: ignore[misc]


# ---------------------------------------------------------------- reranker on a fake store
class FakeStore:
    """The read methods the reranker uses, over an in-memory edge list, as GraphStore does."""

    def __init__(self, edges: list[tuple[str, str, int]], pagerank: dict[str, float]) -> None:
        self.edges = edges
        self.pagerank = pagerank
        self.calls = 0

    def link_neighbourhood(
        self, titles: Sequence[str], *, limit: int, per_title: int | None = None
    ) -> list[tuple[str, str, int]]:
        self.calls += 1
        self.per_title = per_title
        inside = set(titles)
        rows = []
        for t in dict.fromkeys(titles):
            mine = []
            for a, b, n in self.edges:
                if t in (a, b):
                    other = b if a == t else a
                    if not (other in inside and other < t):
                        mine.append((t, other, n))
            rows.extend(mine if per_title is None else mine[: 2 * per_title])
        return sorted(rows[:limit], key=lambda e: (-e[2], e[0], e[1]))

    def article_pageranks(self, titles: Sequence[str]) -> dict[str, float]:
        return {t: self.pagerank.get(t, 0.0) for t in titles}

    def pagerank_bounds(self) -> tuple[float, float]:
        return (min(self.pagerank.values()), max(self.pagerank.values()))


def _ev(title: str, sim: float, n: int = 0) -> Evidence:
    return Evidence(
        section_id=f"{title}::{n}",
        title=title,
        heading="",
        heading_path="",
        content="...",
        similarity=sim,
    )


# A and B are linked through the bridge X (not retrieved); C is isolated; Hub is linked by all
# but the candidates. A -> B directly as well.
EDGES = [("A", "X", 1), ("B", "X", 1), ("A", "B", 1), ("P", "Hub", 5), ("Q", "Hub", 5)]
PAGERANK = {"A": 0.01, "B": 0.01, "C": 0.01, "X": 0.02, "Hub": 0.5, "P": 0.001, "Q": 0.001}


def _reranker(weights: RerankWeights | None = None, **kw: Any) -> GraphReranker:
    return GraphReranker(FakeStore(EDGES, PAGERANK), weights=weights, **kw)  # type: ignore[arg-type]


def test_linked_candidate_overtakes_isolated_one() -> None:
    # B and C tie on retrieval; B is linked to the top hit A (directly and through X), C to
    # nothing. The walk from A reaches B, so B moves ahead of C; A stays first.
    ev = [_ev("A", 0.9), _ev("C", 0.6), _ev("B", 0.6)]
    out = _reranker(RerankWeights(1.0, 0.0, 1.0)).rerank(ev)
    assert [e.title for e in out] == ["A", "B", "C"]
    by = {e.title: e for e in out}
    assert by["B"].scores["ppr"] > by["C"].scores["ppr"]
    # Retrieval alone keeps the input order of the tie.
    out = _reranker(RerankWeights(1.0, 0.0, 0.0)).rerank(ev)
    assert [e.title for e in out] == ["A", "C", "B"]


def test_scores_are_filled_and_inputs_untouched() -> None:
    ev = [_ev("A", 0.9), _ev("B", 0.5), _ev("C", 0.7)]
    out = _reranker().rerank(ev)
    assert [e.score for e in ev] == [0.0, 0.0, 0.0]  # inputs not modified
    for e in out:
        assert set(e.scores) >= {
            "retrieval",
            "retrieval_norm",
            "pagerank",
            "pagerank_norm",
            "ppr",
            "ppr_norm",
        }
        assert 0.0 <= e.score <= 1.0
    by = {e.title: e for e in out}
    assert by["A"].scores["retrieval_norm"] == 1.0 and by["B"].scores["retrieval_norm"] == 0.0
    assert max(e.scores["ppr_norm"] for e in out) == pytest.approx(1.0)
    assert [e.score for e in out] == sorted((e.score for e in out), reverse=True)


def test_retrieval_only_weights_keep_retrieval_order() -> None:
    ev = [_ev("B", 0.5), _ev("A", 0.9), _ev("C", 0.7)]
    out = _reranker(RerankWeights(1.0, 0.0, 0.0)).rerank(ev)
    assert [e.title for e in out] == ["A", "C", "B"]


def test_global_pagerank_log_scaled() -> None:
    r = _reranker()
    assert r.pagerank_scaled(0.5) == 1.0
    assert r.pagerank_scaled(0.001) == 0.0
    assert r.pagerank_scaled(0.0) == 0.0
    mid = math.sqrt(0.5 * 0.001)  # geometric midpoint
    assert r.pagerank_scaled(mid) == pytest.approx(0.5)


def test_ties_keep_input_order_and_top_k() -> None:
    ev = [_ev("C", 0.5, 0), _ev("C", 0.5, 1), _ev("C", 0.5, 2)]
    out = _reranker().rerank(ev, top_k=2)
    assert [e.section_id for e in out] == ["C::0", "C::1"]
    assert _reranker().rerank([]) == []


def test_subgraph_reaches_bridges_and_respects_the_cap() -> None:
    g = _reranker().subgraph(["A", "B"])
    assert set(g.titles) == {"A", "B", "X"}
    assert (g.adjacency != g.adjacency.T).nnz == 0  # undirected
    capped = _reranker(max_nodes=1).subgraph(["P"])
    assert capped.titles == ["P", "Hub"]
    seeds_only = _reranker(hops=0).subgraph(["A", "B"])
    assert seeds_only.titles == ["A", "B"] and seeds_only.adjacency.nnz == 2


def test_two_hops_go_further() -> None:
    one = _reranker(hops=1).subgraph(["P"])
    two = _reranker(hops=2).subgraph(["P"])
    assert set(one.titles) == {"P", "Hub"}
    assert set(two.titles) == {"P", "Hub", "Q"}
    # The P-Hub link is met from both ends over two hops but counted once.
    i = two.index
    assert two.adjacency[i["P"], i["Hub"]] == 5 == two.adjacency[i["Hub"], i["Q"]]


def test_one_query_per_hop() -> None:
    r = _reranker(hops=2)
    r.rerank([_ev("P", 0.5), _ev("A", 0.4)])
    assert r.store.calls == 2  # type: ignore[attr-defined]
    assert "pagerank" in r.rerank([_ev("P", 0.5)])[0].scores


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"hops": -1}, "hops"),
        ({"max_nodes": 0}, "max_nodes"),
        ({"damping": 0.0}, "damping"),
        ({"weights": {"retrieval": 1.0}}, "RerankWeights"),
    ],
)
def test_bad_reranker_settings_raise(kw: dict[str, Any], match: str) -> None:
    with pytest.raises(InvalidArgumentError, match=match):
        _reranker(**kw)


def test_nan_similarity_ranks_as_zero() -> None:
    out = _reranker(RerankWeights(1.0, 0.0, 0.0)).rerank([_ev("C", math.nan), _ev("A", 0.2)])
    assert [e.title for e in out] == ["A", "C"]
    assert all(math.isfinite(e.score) for e in out)


def test_bad_top_k_raises() -> None:
    with pytest.raises(InvalidArgumentError, match="top_k"):
        _reranker().rerank([_ev("A", 0.5)], top_k=-1)

"""Graph reranking: retrieval score + global PageRank + personalised PageRank.

A candidate list from dense or keyword search ranks sections one by one. The
graph knows more: a candidate linked to the other strong candidates (a bridge
of a multi-hop question) is likelier to matter than an isolated one. So
:class:`GraphReranker` mixes three signals, each scaled to [0, 1]:

* ``retrieval``: the candidate's similarity, min-max scaled within the list
  (raw cosines sit in a narrow band that moves with the query, so raw values
  would make the weights mean different things from query to query);
* ``global_pagerank``: the article's PageRank over the whole graph, log-scaled
  between the graph's smallest and largest value (PageRank is heavy-tailed: on
  a linear scale all but a handful of articles would read as 0);
* ``personalized_pagerank`` (PPR): PageRank restarted at the candidates'
  articles, seed weights proportional to their retrieval scores, over their
  ``hops``-neighbourhood in ``LINKS_TO`` taken as undirected, divided by the
  largest candidate value. ``LINKS_TO`` is the sum of the sections'
  ``MENTIONS`` (docs/schema.md), so the mention edges are in it already; reading
  ``MENTIONS`` too would count every link twice. The global rank
  (:mod:`kg_agent.store.pagerank`) cannot be personalised, so the walk runs
  here, in scipy, on a subgraph of at most ``max_nodes`` articles (a few milliseconds for 2k nodes).

Default weights (:data:`DEFAULT_WEIGHTS`: retrieval 1, global PageRank 0,
personalised PageRank 0.5, ``hops=1``) come from a weight sweep
(``scripts/tune_rerank.py``, in git at ``e84b41d``; docs/notes/retrieval.md) on
2WikiMultihopQA (6,119 passages, 2,440 inferred links; 300 dev questions; dense
top-30 candidates, which hold 73% of the gold titles). Recall of gold titles:

    setting                          R@2     R@5
    no rerank                        0.544   0.634
    PPR 0.25                         0.549   0.648
    PPR 0.5 (default)                0.548   0.657
    PPR 1.0                          0.520   0.640
    PPR 0.5 + global 0.1             0.547   0.658
    global 0.25, no PPR              0.542   0.638
    global 0.5, no PPR               0.536   0.635

PPR at 0.5 lifts Recall@5 by 2.3 points (26 questions better, 9 worse; 95%
bootstrap interval +0.4 to +4.1) and leaves Recall@2 level; 0.3 to 0.6 is a
plateau, above 1.0 the graph outvotes retrieval and recall falls. ``hops=2``
was no better (R@5 0.652) and costs a second query. **Global PageRank does not
help here**: 0.1 changes nothing, 0.25 and more lower Recall@2, in every
scaling tried (log, percentile, linear). A QA pool is a bag of unrelated
passages, so being linked from many of them says little about a question; the
weight is 0 by default and left for graphs of real dumps, where PageRank marks
notable articles (try 0.1). Scaling variants measured the same way: PPR
divided by its max, min-max scaled, or counted only beyond a seed's own
restart share all reach R@5 0.650 to 0.657; raw cosines instead of min-max
reach the same only with five to ten times smaller PPR weights and fall off a cliff
above them, so min-max is kept for weights that read the same across queries.

Cost (2 shared cores, noisy): one Cypher query per hop, ~6 ms median on this
graph; PPR ~1 to 2 ms on these 50-node subgraphs and ~0.8 ms on a synthetic
2,000-node, 10,000-edge one; whole rerank of 30 candidates ~9 ms median. The
query filters ``title IN $titles``, which Kùzu runs as a scan of every title:
on a synthetic 1M-article graph it took ~300 ms, so on a graph that size the
fetch, not the walk, is the cost.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from kg_agent.exceptions import InvalidArgumentError
from kg_agent.retrieval.base import Evidence
from kg_agent.store import GraphReader

FloatArray = npt.NDArray[np.float64]

_ROW_GUARD = 20
"""Rows read per hop, as a multiple of ``max_nodes``: bounds the cost of a hub article."""
_ROWS_PER_TITLE = 500
"""Links read per article and direction: a hub of a whole Wikipedia has 10^5 in-links,
and the walk's outcome is set by the strongest few (measured: no change of Recall on
the dev sets, whose largest article has 300 links)."""


@dataclass(frozen=True, slots=True)
class RerankWeights:
    """How much each signal counts; only their ratios matter (scores are divided by the sum)."""

    retrieval: float = 1.0
    global_pagerank: float = 0.0  # measured: no help on 2Wiki (module docstring)
    personalized_pagerank: float = 0.5  # middle of the 0.3-0.6 plateau

    def __post_init__(self) -> None:
        values = dataclasses.asdict(self)
        for name, value in values.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise InvalidArgumentError(f"rerank weight {name} must be a number, got {value!r}")
            if not math.isfinite(value) or value < 0:
                raise InvalidArgumentError(
                    f"rerank weight {name} must be a finite number >= 0, got {value!r}"
                )
        if not any(values.values()):
            raise InvalidArgumentError(
                "rerank weights are all zero: give at least one of retrieval, "
                "global_pagerank, personalized_pagerank a positive weight"
            )

    @property
    def total(self) -> float:
        return float(self.retrieval + self.global_pagerank + self.personalized_pagerank)


DEFAULT_WEIGHTS = RerankWeights()
"""The weights :class:`GraphReranker` uses when given none (see the module docstring)."""


def personalized_pagerank(
    adjacency: sp.spmatrix | sp.sparray | npt.ArrayLike,
    personalization: npt.ArrayLike,
    *,
    damping: float = 0.85,
    tol: float = 1e-9,
    max_iter: int = 200,
) -> FloatArray:
    """PageRank of a walk that restarts at ``personalization``; the result sums to 1.

    ``adjacency[i, j]`` is the weight of the edge i → j (use a symmetric matrix
    for an undirected walk). From a node without out-edges (dangling) the walk
    jumps back to the seeds, as from a restart, so no rank leaks away. Power
    iteration stops when the L1 change drops below ``tol``.
    """
    a = sp.csr_matrix(adjacency, dtype=np.float64)
    n = a.shape[0]
    if a.shape != (n, n):
        raise InvalidArgumentError(f"adjacency must be square, got shape {a.shape}")
    s = np.asarray(personalization, dtype=np.float64).ravel()
    if s.shape != (n,):
        raise InvalidArgumentError(f"personalization has {s.size} entries, the graph has {n} nodes")
    if not 0.0 < damping < 1.0:
        raise InvalidArgumentError(f"damping must be in (0, 1), got {damping!r}")
    if n == 0:
        return np.zeros(0, dtype=np.float64)
    if np.any(s < 0) or not np.all(np.isfinite(s)):
        raise InvalidArgumentError("personalization must be finite and >= 0")
    if a.nnz and (a.data.min() < 0 or not np.all(np.isfinite(a.data))):
        raise InvalidArgumentError("edge weights must be finite and >= 0")
    total = s.sum()
    s = s / total if total > 0 else np.full(n, 1.0 / n)
    out_weight = np.asarray(a.sum(axis=1)).ravel()
    dangling = np.flatnonzero(out_weight <= 0)
    inv = np.divide(1.0, out_weight, out=np.zeros(n), where=out_weight > 0)
    # Row j of the transpose lists j's in-edges; scaling by the source's 1/out-weight
    # makes it column-stochastic, so one step is a single sparse mat-vec.
    step = a.T.tocsr()
    step.data = step.data * inv[step.indices]
    restart = (1.0 - damping) * s
    r = s.copy()
    for _ in range(max_iter):
        nxt = step @ r
        nxt *= damping
        nxt += restart
        if dangling.size:
            nxt += (damping * r[dangling].sum()) * s
        err = float(np.abs(nxt - r).sum())
        r = nxt
        if err < tol:
            break
    result: FloatArray = r / r.sum()
    return result


@dataclass(frozen=True, slots=True)
class LinkSubgraph:
    """Articles around the seeds and their links as a symmetric weight matrix."""

    titles: list[str]
    adjacency: sp.csr_matrix

    @property
    def index(self) -> dict[str, int]:
        return {t: i for i, t in enumerate(self.titles)}


class GraphReranker:
    """Reorders evidence by retrieval score, global PageRank and personalised PageRank.

    ``hops`` is how far from the seeds the walk's subgraph reaches (1 catches
    the A → X ← B bridges between two candidates); ``max_nodes`` caps the
    articles added beyond the seeds, keeping the strongest links, so a hub
    article in a full Wikipedia cannot make one query read the whole graph.
    """

    def __init__(
        self,
        store: GraphReader,
        *,
        weights: RerankWeights | None = None,
        hops: int = 1,
        damping: float = 0.85,
        max_nodes: int = 5000,
    ) -> None:
        if weights is not None and not isinstance(weights, RerankWeights):
            raise InvalidArgumentError(
                f"weights must be a RerankWeights, got {type(weights).__name__}"
            )
        if isinstance(hops, bool) or not isinstance(hops, int) or hops < 0:
            raise InvalidArgumentError(f"hops must be an integer >= 0, got {hops!r}")
        if isinstance(max_nodes, bool) or not isinstance(max_nodes, int) or max_nodes < 1:
            raise InvalidArgumentError(f"max_nodes must be an integer >= 1, got {max_nodes!r}")
        if not isinstance(damping, (int, float)) or not 0.0 < damping < 1.0:
            raise InvalidArgumentError(f"damping must be in (0, 1), got {damping!r}")
        self.store = store
        self.weights = weights or DEFAULT_WEIGHTS
        self.hops = hops
        self.damping = float(damping)
        self.max_nodes = max_nodes
        self._bounds: tuple[float, float] | None = None

    # ------------------------------------------------------------------ graph
    def subgraph(self, seeds: Sequence[str]) -> LinkSubgraph:
        """The seeds, their ``hops``-neighbourhood (capped) and the links among them.

        One query per hop (``hops=0``: one query, keeping only the links between
        seeds). Beyond the seeds, at most ``max_nodes`` articles are added,
        strongest links first.
        """
        titles = list(dict.fromkeys(seeds))
        index = {t: i for i, t in enumerate(titles)}
        edges: dict[tuple[int, int], int] = {}
        done: set[str] = set()  # expanded in an earlier hop: their edges are in already
        frontier = titles
        budget = self.max_nodes
        for _ in range(max(self.hops, 1)):
            if not frontier:
                break
            new: list[str] = []
            rows = self.store.link_neighbourhood(
                frontier, limit=_ROW_GUARD * self.max_nodes, per_title=_ROWS_PER_TITLE
            )
            for a, b, n in rows:
                if b in done:
                    continue
                if b not in index:
                    if budget <= 0 or self.hops == 0:
                        continue
                    index[b] = len(titles)
                    titles.append(b)
                    new.append(b)
                    budget -= 1
                i, j = index[a], index[b]
                key = (i, j) if i < j else (j, i)
                edges[key] = edges.get(key, 0) + max(n, 1)
            done.update(frontier)
            frontier = new
        n_nodes = len(titles)
        if edges:
            rows_i, cols_j = zip(*edges, strict=True)
            w = sp.csr_matrix(
                (np.fromiter(edges.values(), dtype=np.float64), (rows_i, cols_j)),
                shape=(n_nodes, n_nodes),
            )
        else:
            w = sp.csr_matrix((n_nodes, n_nodes), dtype=np.float64)
        return LinkSubgraph(titles=titles, adjacency=sp.csr_matrix(w + w.T))

    def personalized(self, seed_weights: Mapping[str, float]) -> dict[str, float]:
        """PPR of every article in the seeds' subgraph, restarting at the seeds."""
        if not seed_weights:
            return {}
        graph = self.subgraph(list(seed_weights))
        pers = np.zeros(len(graph.titles), dtype=np.float64)
        for i, t in enumerate(graph.titles[: len(seed_weights)]):
            pers[i] = max(float(seed_weights[t]), 0.0)
        if pers.sum() <= 0:
            pers[: len(seed_weights)] = 1.0
        ranks = personalized_pagerank(graph.adjacency, pers, damping=self.damping)
        return {t: float(r) for t, r in zip(graph.titles, ranks, strict=True)}

    def _pagerank_bounds(self) -> tuple[float, float]:
        # Cached: the graph does not change under a read-only store.
        if self._bounds is None:
            self._bounds = self.store.pagerank_bounds()
        return self._bounds

    def pagerank_scaled(self, pagerank: float) -> float:
        """Global PageRank log-scaled to [0, 1] between the graph's min and max."""
        lo, hi = self._pagerank_bounds()
        if pagerank <= 0 or hi <= 0:
            return 0.0
        if hi <= lo:
            return 1.0
        x = (math.log(pagerank) - math.log(lo)) / (math.log(hi) - math.log(lo))
        return min(max(x, 0.0), 1.0)

    # ------------------------------------------------------------------ rerank
    def rerank(self, evidence: list[Evidence], *, top_k: int | None = None) -> list[Evidence]:
        """New evidence objects, best first, with ``score`` and ``scores`` filled.

        Ties keep the input order, so the result is deterministic. The inputs
        are not modified.
        """
        if top_k is not None and (
            isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 0
        ):
            raise InvalidArgumentError(f"top_k must be an integer >= 0 or None, got {top_k!r}")
        if not evidence:
            return []
        sims = np.array([float(e.similarity) for e in evidence], dtype=np.float64)
        sims[~np.isfinite(sims)] = 0.0  # a NaN would make the order arbitrary
        lo, hi = float(sims.min()), float(sims.max())
        sims_norm = (sims - lo) / (hi - lo) if hi - lo > 1e-12 else np.ones_like(sims)

        seed: dict[str, float] = {}
        for e, s in zip(evidence, sims, strict=True):
            seed[e.title] = max(seed.get(e.title, 0.0), float(s))
        ppr = self.personalized(seed)
        ppr_max = max((ppr.get(t, 0.0) for t in seed), default=0.0)
        # Retrievers copy the article's PageRank into the evidence; ask the graph only
        # for what is missing (every article with a section has a positive PageRank).
        pageranks = {e.title: e.pagerank for e in evidence if e.pagerank > 0}
        missing = [t for t in seed if t not in pageranks]
        if missing:
            pageranks.update(self.store.article_pageranks(missing))

        w = self.weights
        scored: list[tuple[float, int, Evidence]] = []
        for i, e in enumerate(evidence):
            pr = pageranks.get(e.title, 0.0)
            p = ppr.get(e.title, 0.0)
            parts: dict[str, float] = {
                "retrieval": float(sims[i]),
                "retrieval_norm": float(sims_norm[i]),
                "pagerank": pr,
                "pagerank_norm": self.pagerank_scaled(pr),
                "ppr": p,
                "ppr_norm": p / ppr_max if ppr_max > 0 else 0.0,
            }
            score = (
                w.retrieval * parts["retrieval_norm"]
                + w.global_pagerank * parts["pagerank_norm"]
                + w.personalized_pagerank * parts["ppr_norm"]
            ) / w.total
            new = dataclasses.replace(
                e, pagerank=pr, score=score, scores={**e.scores, **parts, "rerank": score}
            )
            scored.append((score, i, new))
        scored.sort(key=lambda x: (-x[0], x[1]))
        ranked = [e for _, _, e in scored]
        return ranked if top_k is None else ranked[:top_k]

    def describe(self) -> dict[str, Any]:
        """Settings, for traces and benchmark output."""
        return {
            "weights": dataclasses.asdict(self.weights),
            "hops": self.hops,
            "damping": self.damping,
            "max_nodes": self.max_nodes,
        }

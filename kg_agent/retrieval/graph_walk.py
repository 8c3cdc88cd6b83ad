"""Entity-seeded graph retrieval: the question's entities, then their graph neighbours.

The ranking is in tiers, because on multi-hop questions the second-hop
passage is rarely similar to the question ("the director of film X": the
director's article is about a person, not about X):

1. articles the question names (its topic entities, linked once by the pipeline's
   :class:`~kg_agent.language.Question`), by similarity;
2. articles one link/mention away from those and from the top base hit, plus
   that hit itself, by similarity of their best section to the question;
3. the rest of the base (hybrid) ranking.

Measured on the three dev sets (``docs/notes/retrieval.md``) this tiering beats
mixing neighbours into the base ranking by score: a neighbour's cosine is
low exactly when it is the bridge.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence

from kg_agent.entities.linker import QuestionEntityLinker
from kg_agent.exceptions import InvalidArgumentError
from kg_agent.language.question import Question, query_text
from kg_agent.retrieval.base import (
    Evidence,
    Query,
    RetrievalResult,
    Retriever,
    score_offset,
)
from kg_agent.retrieval.semantic import SemanticRetriever
from kg_agent.store import GraphReader, SectionHit
from kg_agent.store.section_ids import lead_id

__all__ = ["EntityGraphRetriever", "graph_neighbours"]


def _lexical(hit: SectionHit, similarity: float) -> Evidence:
    return Evidence.from_hit(hit, similarity, source="bm25", raw=hit.score)


_UNREAD = "unread"


def _unread(section_id: str, title: str, similarity: float = 0.0, raw: float = 0.0) -> Evidence:
    """A placeholder for a section, read only if it makes the cut."""
    return Evidence(
        section_id=section_id,
        title=title,
        heading="",
        heading_path="",
        content="",
        similarity=similarity,
        score=similarity,
        source="bm25",
        scores={"bm25": raw, _UNREAD: 1.0},
    )


def _unread_best(
    found: Sequence[tuple[str, str, float]], titles: Sequence[str]
) -> dict[str, Evidence]:
    """Each article's best BM25 section (similarity: its score over the best one), or
    its lead at 0 when no section matches, all unread (see :func:`_read_leads`): most
    rank below the cut, and each read is a lookup."""
    top = max((score for _, _, score in found), default=0.0) or 1.0
    out: dict[str, Evidence] = {}
    for sid, title, score in found:  # best first: an article's first hit is its best
        if title not in out:
            out[title] = _unread(sid, title, score / top, score)
    for title in titles:
        if title not in out:
            out[title] = _unread(lead_id(title), title)
    return out


def _read_leads(store: GraphReader, ranked: list[Evidence], top_k: int) -> list[Evidence]:
    """The first ``top_k`` of ``ranked``, unread sections read (those not found are dropped)."""
    out: list[Evidence] = []
    start = 0
    while len(out) < top_k and start < len(ranked):
        chunk = ranked[start : start + top_k - len(out)]
        start += len(chunk)
        unread = [e.section_id for e in chunk if _UNREAD in e.scores]
        hits = store.sections_by_ids(unread) if unread else {}
        for e in chunk:
            if _UNREAD not in e.scores:
                out.append(e)
            elif e.section_id in hits:
                h = hits[e.section_id]
                scores = {k: v for k, v in e.scores.items() if k != _UNREAD}
                out.append(
                    dataclasses.replace(
                        e,
                        heading=h.heading,
                        heading_path=h.heading_path,
                        content=h.text,
                        pagerank=h.pagerank,
                        scores=scores,
                    )
                )
    return out


def graph_neighbours(store: GraphReader, titles: Sequence[str], *, limit: int) -> list[str]:
    """Articles one ``LINKS_TO`` edge (either direction) from ``titles``, strongest first."""
    anchors = set(titles)
    out: dict[str, int] = {}
    for a, b, n in store.link_neighbourhood(list(titles), limit=limit):
        for x, y in ((a, b), (b, a)):
            if x in anchors and y not in anchors:
                out[y] = max(out.get(y, 0), n)
    return sorted(out, key=lambda t: -out[t])


class EntityGraphRetriever(Retriever):
    """Question entities, then their 1-hop neighbourhood, then a base ranking."""

    mode = "entity_graph"

    def __init__(
        self,
        store: GraphReader,
        dense: SemanticRetriever,
        base: Retriever,
        *,
        linker: QuestionEntityLinker | None = None,
        expand_from_top: int = 1,
        depth: int = 30,
        max_edges: int = 2000,
    ) -> None:
        if expand_from_top < 0 or depth < 1 or max_edges < 1:
            raise InvalidArgumentError("expand_from_top >= 0, depth >= 1, max_edges >= 1")
        self.store = store
        self.dense = dense
        self.base = base
        self.linker = linker or QuestionEntityLinker(store, saved=store.linker_path())
        self.expand_from_top = expand_from_top
        self.depth = depth
        self.max_edges = max_edges

    def neighbours(self, titles: Sequence[str]) -> list[str]:
        """Articles one link from ``titles``, strongest first (at most ``max_edges`` read)."""
        return graph_neighbours(self.store, titles, limit=self.max_edges)

    def score_titles(
        self, query: str, titles: Sequence[str], *, lazy: bool = False
    ) -> dict[str, Evidence]:
        """Each article's section that best matches ``query`` (title → evidence).

        By embedding similarity; on a graph without embeddings by BM25 among the
        articles' own sections (similarity = BM25 over the best one), an article
        with no matching word keeping its lead section at similarity 0. With
        ``lazy``, the sections are left unread (:func:`_unread_best`).
        """
        if self.dense.enabled:
            return self.dense.score_articles(self.dense.query_vector(query), titles)
        wanted = list(dict.fromkeys(titles))
        k = 8 * len(wanted) + 10
        if lazy:
            return _unread_best(self.store.text_hits_within(query, wanted, k), wanted)
        hits = self.store.text_search_within(query, wanted, k)
        top = max((h.score for h in hits), default=0.0) or 1.0
        out: dict[str, Evidence] = {}
        for h in hits:  # best first: the first hit of an article is its best section
            if h.title not in out:
                out[h.title] = _lexical(h, h.score / top)
        rest = [t for t in wanted if t not in out]
        for title, h in self.store.lead_sections(rest).items():
            out[title] = _lexical(h, 0.0)
        return out

    def search(self, query: Query, top_k: int = 10) -> RetrievalResult:
        text = query_text(query)
        base = self.base.search(text, max(self.depth, top_k))
        t0 = time.perf_counter()
        # the pipeline's reading has linked the question already (with this linker)
        entities = (
            list(query.entities)
            if isinstance(query, Question) and query.linked
            else self.linker.link(text)
        )
        hits = list(dict.fromkeys(e.title for e in base.evidence))[: self.expand_from_top]
        anchors = list(dict.fromkeys([*entities, *hits]))
        neighbours = self.neighbours(anchors)
        second = [t for t in dict.fromkeys([*hits, *neighbours]) if t not in entities]
        scored = self.score_titles(text, [*entities, *second], lazy=True)
        ranked: list[Evidence] = []
        for titles, source in ((entities, "entity"), (second, "graph")):
            items = sorted((scored[t] for t in titles if t in scored), key=lambda e: -e.similarity)
            ranked += [
                dataclasses.replace(
                    e,
                    score=score_offset(source) + e.similarity,
                    source=source,
                    scores={**e.scores, source: 1.0},
                )
                for e in items
            ]
        seen = {e.section_id for e in ranked}
        top = max((e.score for e in base.evidence), default=1.0) or 1.0
        ranked += [
            dataclasses.replace(e, score=0.99 * e.score / top)
            for e in base.evidence
            if e.section_id not in seen
        ]
        timings = dict(base.timings)
        timings["graph"] = time.perf_counter() - t0
        return RetrievalResult(
            query=text,
            evidence=_read_leads(self.store, ranked, top_k),
            timings=timings,
            notes=[f"entities: {entities}", f"expanded from: {anchors}"],
        )

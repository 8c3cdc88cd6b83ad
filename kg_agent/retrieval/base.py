"""Typed retrieval results and the :class:`Retriever` base class.

Every retriever (semantic, BM25, hybrid, graph, multi-step, multi-query) returns a
:class:`RetrievalResult` of :class:`Evidence`, so the pipeline, the eval harness and
the stages compose them without knowing which produced what. A retriever is asked
with a question's text or its :class:`~kg_agent.language.Question` reading (the
pipeline reads a question once and passes the reading on).
"""

from __future__ import annotations

import abc
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from kg_agent.language.question import Question
from kg_agent.llm.client import UsageMeter
from kg_agent.store.reads import FactRow
from kg_agent.store.section_ids import is_lead

if TYPE_CHECKING:
    from kg_agent.multistep.trace import MultiStepTrace
    from kg_agent.store import SectionHit

#: What a retriever is asked: a question's text, or its reading.
Query = str | Question


@dataclass(frozen=True, slots=True)
class FactStatement:
    """What a fact evidence item states: ``subject``'s infobox ``key`` (``label`` in
    words) is ``value``; ``answer`` is the short answer it gives to the question it was
    found for, with the reader's ``confidence`` in it (0..1); ``rows`` are its items as the
    graph holds them; ``hop`` is 1 for the fact of the question's own entity, 2 for a
    fact of the article a first fact led to."""

    subject: str
    key: str
    label: str
    value: str
    answer: str
    confidence: float
    rows: tuple[FactRow, ...] = ()
    hop: int = 1
    #: the confidence from which the answer is shown in bold (the fact ranker's, set on
    #: held-out questions); None: the reader's own threshold
    show_at: float | None = None
    #: a fact of an article the text search found, which the question does not name:
    #: it answers only where the text shows the graph holds the topic
    searched: bool = False


@dataclass(slots=True)
class Evidence:
    """One retrieved section, with the scores that ranked it.

    ``similarity`` is the retrieval score of the source that found it (cosine
    for semantic search, normalised BM25 for keyword search); ``score`` is the
    final ranking score after reranking; ``scores`` keeps each component. An infobox
    fact is evidence too (``source == "fact"``), its statement in ``fact``.
    """

    section_id: str
    title: str
    heading: str
    heading_path: str
    content: str
    similarity: float
    pagerank: float = 0.0
    score: float = 0.0
    source: str = "semantic"
    scores: dict[str, float] = field(default_factory=dict)
    fact: FactStatement | None = None
    #: for a section the bridge round reached: the first-round article it followed
    reached_from: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def is_lead(self) -> bool:
        """Whether this is an article's lead section (what the article says it is)."""
        return is_lead(self.section_id)

    @property
    def of_the_topic(self) -> bool:
        """False for a fact of an article only the search found: it says nothing of
        whether the graph holds what the question names (the grounding and the
        reader's support leave it out)."""
        return self.fact is None or not self.fact.searched

    @classmethod
    def from_hit(
        cls, hit: SectionHit, similarity: float, *, source: str, raw: float | None = None
    ) -> Evidence:
        """Evidence for a section a search found: ``similarity`` is its score as this
        retriever ranks it; ``scores[source]`` keeps ``raw`` (the source's own score,
        a BM25 score before normalisation) or else the similarity."""
        sim = float(similarity)
        return cls(
            section_id=hit.section_id,
            title=hit.title,
            heading=hit.heading,
            heading_path=hit.heading_path,
            content=hit.text,
            similarity=sim,
            pagerank=hit.pagerank,
            score=sim,
            source=source,
            scores={source: float(raw) if raw is not None else sim},
        )


@dataclass(frozen=True, slots=True)
class GraphAnswer:
    """Rows a Cypher-pack query returned for a structural question."""

    query: str
    params: dict[str, Any]
    rows: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return {"query": self.query, "params": dict(self.params), "rows": list(self.rows)}


@dataclass(slots=True)
class RetrievalResult:
    """Ranked evidence, and what finding it cost and did.

    ``timings`` are seconds per part (``embed`` and ``search`` are summed over every
    search a composite retriever ran); ``notes`` say how the evidence was found (the
    entities linked, semantic search off), for traces; ``warnings`` are what the user
    must be told (an LLM step that fell back); ``trace`` lists the steps taken, for
    ``--trace`` and the JSON result; ``usage`` counts the LLM calls made for this
    result. ``multistep`` is the multi-step retriever's record (its route, plan,
    steps and the whole pool it gathered), ``graph`` a structural question's rows.
    """

    query: str
    evidence: list[Evidence]
    timings: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    trace: list[dict[str, Any]] = field(default_factory=list)
    usage: UsageMeter | None = None
    multistep: MultiStepTrace | None = None
    graph: GraphAnswer | None = None

    def titles(self) -> list[str]:
        """Distinct article titles in rank order (what passage recall is measured on)."""
        return list(dict.fromkeys(e.title for e in self.evidence))

    def add_timings(self, other: RetrievalResult) -> None:
        """Add ``other``'s ``embed`` and ``search`` seconds to this result's."""
        for key in ("embed", "search"):
            spent = other.timings.get(key, 0.0)
            if spent:
                self.timings[key] = self.timings.get(key, 0.0) + float(spent)


class Retriever(abc.ABC):
    """Something that turns a query into ranked evidence."""

    #: The name traces and eval tables use for this way of finding evidence.
    mode: str = "retriever"

    @abc.abstractmethod
    def search(self, query: Query, top_k: int = 10) -> RetrievalResult:
        """Return at most ``top_k`` evidence items, best first."""


#: Rank tier of each source of evidence found through the graph: an infobox fact that
#: answers the question, a named entity of the question, then its neighbours (and
#: bridge-round evidence linked to round one), then the bridge round's own finds;
#: everything found by text or vector search is 0.
#: Rerankers reorder within a tier, never across.
GRAPH_TIERS: dict[str, int] = {
    "fact": 4,
    "entity": 3,
    "graph": 2,
    "bridge_linked": 2,
    "bridge": 1,
}
#: What the graph retriever adds to a similarity in [-1, 1] so that its tiers never
#: interleave when evidence of several searches is pooled and sorted by score (the
#: multi-step pool, where a later step's finds are also scaled down). Bridge-round
#: records carry no offset: they rank below round one's graph tiers by score and are
#: ordered by their tier only by :class:`~kg_agent.retrieval.stages.TierOrder`.
SCORE_OFFSETS: dict[str, float] = {"fact": 6.0, "entity": 4.0, "graph": 2.0}
#: How the CLI and ``/v1/search`` name a tier.
TIER_NAMES: dict[int, str] = {4: "fact", 3: "named", 2: "linked", 1: "bridge", 0: "search"}
#: The lowest tier that counts as *graph-found*: kept by the quality filter and by the
#: multi-step relevance threshold whatever its word overlap with the question (a bridge
#: passage shares few words with the question by nature).
GRAPH_FOUND_TIER = 2


def evidence_tier(ev: Evidence) -> int:
    """Rank tier of ``ev`` (:data:`GRAPH_TIERS`; 0 for text and vector search)."""
    return GRAPH_TIERS.get(ev.source, 0)


def score_offset(source: str) -> float:
    """The offset a graph-tier ``source`` adds to a similarity (:data:`SCORE_OFFSETS`)."""
    return SCORE_OFFSETS.get(source, 0.0)


def is_graph_found(ev: Evidence) -> bool:
    """Whether ``ev`` was found by following the graph (the one definition of it)."""
    return evidence_tier(ev) >= GRAPH_FOUND_TIER

"""What runs between finding evidence and answering: each a :class:`Stage`.

A stage takes the question's reading and a :class:`RetrievalResult` and returns the
result it passes on (``apply``), recording what it did in ``result.trace``; it never
edits the evidence it is given (a stage's scores go into copies). The pipeline runs
them in order; single-step retrieval runs the quality filter, the graph rerank, the
tier order and the top-k cut. The tier order is applied here and only here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from kg_agent.language.nationality import compares_countries
from kg_agent.language.question import Question
from kg_agent.language.shape import AnswerKind
from kg_agent.language.tokens import fold, words
from kg_agent.retrieval.base import Evidence, RetrievalResult, evidence_tier, is_graph_found
from kg_agent.retrieval.quality import CONTENT_QUALITY_THRESHOLD, score_section_quality
from kg_agent.retrieval.rerank import GraphReranker
from kg_agent.store.reads import SectionHit
from kg_agent.store.section_ids import lead_id

__all__ = ["GraphRerank", "Leads", "QualityFilter", "Stage", "TierOrder", "TopK", "run_stages"]


class Stage(Protocol):
    """One step after retrieval."""

    name: str

    def apply(self, question: Question, result: RetrievalResult) -> RetrievalResult: ...


def passed(
    result: RetrievalResult, evidence: list[Evidence], entry: dict[str, Any] | None
) -> RetrievalResult:
    """``result`` with ``evidence`` instead, and ``entry`` added to its trace."""
    trace = [*result.trace, entry] if entry is not None else list(result.trace)
    return dataclasses.replace(result, evidence=evidence, trace=trace)


def with_score(ev: Evidence, **scores: float) -> Evidence:
    """A copy of ``ev`` with ``scores`` added to its score components."""
    return dataclasses.replace(ev, scores={**ev.scores, **scores})


class QualityFilter:
    """Drops sections too short or too far off the question to cite.

    Graph-found evidence (:func:`~kg_agent.retrieval.base.is_graph_found`) stays
    whatever its score: a bridge passage shares few words with the question by nature
    (measured: dropping them cost 10 points of Recall@5 on 2Wiki). When every section
    is dropped, the ranking is kept rather than answering from nothing. Each item's
    score goes into ``scores["quality"]``.
    """

    name = "quality_filter"

    def __init__(self, threshold: float = CONTENT_QUALITY_THRESHOLD) -> None:
        self.threshold = threshold

    def apply(self, question: Question, result: RetrievalResult) -> RetrievalResult:
        scored = [
            with_score(ev, quality=score_section_quality(ev.content, question.text))
            for ev in result.evidence
        ]
        kept = []
        exempt = 0
        for ev in scored:
            if ev.scores["quality"] >= self.threshold:
                kept.append(ev)
            elif is_graph_found(ev):
                kept.append(ev)
                exempt += 1
        entry = {
            "stage": self.name,
            "kept": len(kept),
            "dropped": len(scored) - len(kept),
            "kept_by_graph": exempt,
            "threshold": self.threshold,
        }
        return passed(result, kept or scored, entry)


class GraphRerank:
    """Retrieval score, global and personalised PageRank (:class:`GraphReranker`).
    Put before :class:`TierOrder`, it orders evidence within each tier."""

    name = "rerank"

    def __init__(self, reranker: GraphReranker) -> None:
        self.reranker = reranker

    def apply(self, question: Question, result: RetrievalResult) -> RetrievalResult:
        ranked = self.reranker.rerank(result.evidence)
        entry = {"stage": self.name, "weights": self.reranker.describe()}
        return passed(result, ranked, entry)


class TierOrder:
    """Evidence named in the question first, then its graph neighbours (and linked
    bridge finds), then the bridge round's own finds, then what search found
    (:data:`~kg_agent.retrieval.base.GRAPH_TIERS`). A stable sort: the order within a
    tier is the previous stage's. The product's only ordering by tier."""

    name = "tier_order"

    def apply(self, question: Question, result: RetrievalResult) -> RetrievalResult:
        tiered = any(evidence_tier(e) for e in result.evidence)
        ranked = sorted(result.evidence, key=lambda e: -evidence_tier(e))
        return passed(result, ranked, {"stage": self.name, "tiered": tiered})


class TopK:
    """The first ``k`` items."""

    name = "top_k"

    def __init__(self, k: int) -> None:
        self.k = k

    def apply(self, question: Question, result: RetrievalResult) -> RetrievalResult:
        return passed(result, result.evidence[: self.k], None)


class Leads:
    """For a question that compares named things' countries ("Are A and B from the same
    country?") or chooses between them ("which came first, A or B"): the lead section of
    each named article the evidence holds only other sections of, added after it. Only a
    lead says what a thing is ("an American general", "launched on December 21, 1968");
    the section the search found may name where it was ("his youth in Indiana") or
    another thing's date. After the top-k cut, and only for articles already found: the
    ranking is the same, and with ``k`` the leads take the place of the last evidence of
    the articles the question does not name (the evidence stays ``k`` items)."""

    name = "leads"

    def __init__(
        self,
        lead_sections: Callable[[Sequence[str]], Mapping[str, SectionHit]],
        k: int | None = None,
    ) -> None:
        self.lead_sections = lead_sections
        self.k = k

    def apply(self, question: Question, result: RetrievalResult) -> RetrievalResult:
        if not (compares_countries(question.shape) or question.kind is AnswerKind.CHOICE):
            return result
        found = list(dict.fromkeys(ev.title for ev in result.evidence))
        have = {ev.section_id for ev in result.evidence}
        # the linked entities, and the articles found whose name the question writes in
        # lower case ("is alain connes from the same country as andre agassi")
        asked = f" {' '.join(words(fold(question.text)))} "
        written = [t for t in found if f" {' '.join(words(fold(t.split(' (')[0])))} " in asked]
        named = dict.fromkeys([*question.entities, *written])
        want = [t for t in named if t in found and lead_id(t) not in have]
        if not want:
            return result
        leads = [
            Evidence.from_hit(hit, 0.0, source="entity", raw=hit.score)
            for hit in self.lead_sections(want).values()
        ]
        kept = list(result.evidence)
        if self.k is not None:
            leads = leads[: self.k]
        entry: dict[str, Any] = {"stage": self.name, "added": [ev.section_id for ev in leads]}
        if self.k is not None:
            over = len(kept) + len(leads) - self.k
            if over > 0:  # the last of the articles the question does not name go first
                order = sorted(range(len(kept)), key=lambda i: (kept[i].title in named, -i))
                gone = set(order[:over])
                entry["dropped"] = [kept[i].section_id for i in sorted(gone)]
                kept = [ev for i, ev in enumerate(kept) if i not in gone]
        return passed(result, [*kept, *leads], entry)


def run_stages(question: Question, result: RetrievalResult, stages: list[Stage]) -> RetrievalResult:
    for stage in stages:
        result = stage.apply(question, result)
    return result

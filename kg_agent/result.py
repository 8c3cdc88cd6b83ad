"""What a query returns (:class:`QueryResult`) and what it reports as it runs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from kg_agent.retrieval.base import Evidence
from kg_agent.synthesis.context import Citation

__all__ = ["QueryEventHandler", "QueryResult"]

#: Told what a query has done so far, as it happens (``kg-agent serve`` streams it):
#: ``("retrieved", {...})`` once evidence is ranked, ``("evidence", {"items": [...]})``
#: with the numbering a streamed answer cites, then ``("text", {"text": piece})`` as a
#: model writes the answer (offline answers arrive whole, in the result).
QueryEventHandler = Callable[[str, dict[str, Any]], None]


@dataclass(slots=True)
class QueryResult:
    """What a query returns; ``to_dict()`` is the JSON form.

    ``path`` is ``"claude"`` when Claude wrote the answer, ``"offline"`` otherwise;
    ``mode`` says how (``claude``, ``extractive`` or ``graph`` for Cypher-pack
    answers). ``trace`` lists each stage with what it did.

    ``short_answer`` is the answer in a few words, shown only when the reader is sure
    enough of it (``confidence`` at or above the reader's threshold: shown answers are
    right nine times in ten on the dev sets); ``answer_candidate`` is its best short
    answer, shown or not. ``answerable`` is False when the evidence does not support an
    answer ("not in the graph"), ``support`` the evidence check's score (0..1).
    ``evidence`` runs in citation order: ``[n]`` is ``evidence[n - 1]``, the cited
    sections first, then the rest as ranked; ``ranked`` is the same evidence in rank
    order (what the eval measures recall on; not in the JSON form).
    """

    question: str
    answer: str
    citations: list[Citation]
    evidence: list[Evidence]
    path: str
    mode: str
    trace: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    graph: dict[str, Any] | None = None
    multistep: dict[str, Any] | None = None  # the multi-step trace, when that retriever ran
    short_answer: str | None = None
    answerable: bool = True
    support: float = 0.0
    confidence: float = 0.0
    answer_candidate: str | None = None
    ranked: list[Evidence] = field(default_factory=list, repr=False)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        del d["ranked"]
        d["citations"] = [c.to_dict() for c in self.citations]
        return d

"""Reading a learned model's samples through the agent: while open, an observer takes the
candidates each answerable plain question's reading hands its model (the sentence ranker's
sentences, the span ranker's spans), labels them against the gold and keeps them by
question id (the first reading of a question only)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from kg_agent.evaluation.fact_training import QuestionCandidates
from kg_agent.evaluation.trust import PlainQuestion

if TYPE_CHECKING:
    from kg_agent.agent import KnowledgeGraphAgent

__all__ = ["Observing", "ask_all"]


class Observing:
    """While open, ``ranker.observer`` is :meth:`see` (a subclass's), which keeps what
    :meth:`first` lets through in ``out``."""

    def __init__(
        self, ranker: Any, out: dict[str, QuestionCandidates], questions: Sequence[PlainQuestion]
    ) -> None:
        self.ranker = ranker
        self.out = out
        self.asked: dict[str, PlainQuestion] = {}
        for q in questions:
            if q.answerable:
                self.asked.setdefault(q.question, q)

    def first(self, question: str) -> PlainQuestion | None:
        """The plain question asked, the first time it is read; else None."""
        q = self.asked.get(question)
        return None if q is None or q.qid in self.out else q

    def see(self, question: str, *seen: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def __enter__(self) -> Observing:
        self.ranker.observer = self.see
        return self

    def __exit__(self, *exc: object) -> None:
        self.ranker.observer = None


def ask_all(
    agent: KnowledgeGraphAgent,
    questions: Sequence[PlainQuestion],
    observing: Observing,
    progress: Callable[[int], None] | None = None,
) -> dict[str, QuestionCandidates]:
    """Ask every question once, offline, while ``observing``; what it kept."""
    with observing:
        for i, pq in enumerate(questions):
            agent.query(pq.question)
            if progress is not None:
                progress(i + 1)
    return observing.out

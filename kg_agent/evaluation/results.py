"""Value objects of an evaluation run, and their JSON form.

One :class:`DatasetRun` per dataset holds every question's result under every
mode, so a report can put modes side by side on exactly the same questions.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["DatasetRun", "ModeSummary", "QuestionResult", "RankedItem"]


@dataclass(slots=True)
class RankedItem:
    """One retrieved passage/section as a mode ranked it."""

    title: str
    score: float
    section_id: str = ""


@dataclass(slots=True)
class QuestionResult:
    """What one mode did with one question, and how it scored."""

    qid: str
    mode: str
    ranked: list[RankedItem]
    titles: list[str]  # distinct titles in rank order (what recall is measured on)
    recall_at_2: float
    recall_at_5: float
    all_recall_at_5: float
    answer_in_evidence: float
    latency_ms: float
    answer: str | None = None  # None when the mode does not answer (retrieval only)
    short_answer: str | None = None
    exact_match: float | None = None  # of the short answer (no short answer scores 0)
    f1: float | None = None
    answer_contains: float | None = None  # the answer text holds the gold (or an alias)
    abstained: bool | None = None  # the answer said "not in the graph"
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class ModeSummary:
    """Averages over a dataset's questions for one mode (recalls in percent)."""

    mode: str
    description: str
    n: int
    recall_at_2: float
    recall_at_5: float
    all_recall_at_5: float
    answer_in_evidence: float
    latency_p50_ms: float
    latency_p95_ms: float
    exact_match: float | None = None  # short answers, every question (as published)
    f1: float | None = None
    short_em: float | None = None  # short answers, questions not answered yes/no
    short_f1: float | None = None
    #: answers holding the gold, over the non-yes/no questions whose gold is in the top-5
    answer_contains: float | None = None
    abstained: float | None = None  # share of questions answered "not in the graph"
    errors: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class DatasetRun:
    """A dataset's questions run under each mode."""

    dataset: str  # canonical name: 2wikimultihopqa, hotpotqa, musique
    questions_path: str
    corpus_path: str
    db_path: str
    n_questions: int
    summaries: dict[str, ModeSummary]
    # per question: {"id", "question", "answer", "aliases", "gold_titles", "type",
    #                "results": {mode: QuestionResult.to_dict()}}
    questions: list[dict[str, Any]]
    seconds: float = 0.0
    build_seconds: float = 0.0
    #: this dataset's questions asked of each other dataset's graph, where the answer must
    #: be "not in the graph": [{"graph", "mode", "n", "refused"} (percent)], or None
    out_of_graph: list[dict[str, Any]] | None = None
    #: with a model server: its API, models, and each mode's calls, tokens and cache hits
    llm: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "questions_path": self.questions_path,
            "corpus_path": self.corpus_path,
            "db_path": self.db_path,
            "n_questions": self.n_questions,
            "seconds": round(self.seconds, 2),
            "build_seconds": round(self.build_seconds, 2),
            "summaries": {k: v.to_dict() for k, v in self.summaries.items()},
            "out_of_graph": self.out_of_graph,
            **({"llm": self.llm} if self.llm is not None else {}),
            "questions": self.questions,
        }

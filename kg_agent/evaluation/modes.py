"""Named retrieval configurations the harness runs side by side.

A mode is a name, a one-line description and a factory that, given the
shared :class:`EvalContext`, returns a function from a question to its ranked
evidence (and, for modes that answer, an answer). Adding a mode is one
:func:`register_mode` call; every mode sees the same graph, embedder and
questions, so differences in the table are differences of method.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kg_agent.agent import KnowledgeGraphAgent
from kg_agent.embedding import Embedder
from kg_agent.exceptions import InvalidArgumentError
from kg_agent.retrieval.base import Evidence

__all__ = [
    "DEFAULT_MODES",
    "MODES",
    "EvalContext",
    "EvalMode",
    "ModeOutput",
    "ModeRunner",
    "parse_modes",
    "register_mode",
]

#: How many candidate sections each retrieval mode ranks; recall is read from
#: the top 5 distinct titles, the rest feeds reranking and answer-in-evidence.
CANDIDATES = 30


@dataclass(slots=True)
class ModeOutput:
    evidence: list[Evidence]
    answer: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


ModeRunner = Callable[[str], ModeOutput]


class EvalContext:
    """The graph and models every mode shares, built once per dataset.

    It wraps one offline :class:`KnowledgeGraphAgent` (read-only store,
    embedder, dense retriever, reranker), so the "agent" mode and the
    component modes read the very same objects.
    """

    def __init__(self, db_path: str, *, embedder: Embedder | None = None) -> None:
        self.agent = KnowledgeGraphAgent(
            db_path, embedder=embedder, offline=True, enable_fewshot=False
        )
        self.store = self.agent.store
        self.embedder = self.agent.embedder
        self.dense = self.agent.retriever
        self.keyword = self.agent.keyword
        self.hybrid = self.agent.hybrid
        self.reranker = self.agent.reranker
        self.linker = self.agent.linker
        self.entity_graph = self.agent.entity_graph

    def close(self) -> None:
        self.agent.close()


@dataclass(frozen=True, slots=True)
class EvalMode:
    name: str
    description: str
    build: Callable[[EvalContext], ModeRunner]
    answers: bool = False  # whether EM/F1 are meaningful for this mode


MODES: dict[str, EvalMode] = {}


def register_mode(mode: EvalMode) -> EvalMode:
    if not mode.name or not mode.name.replace("_", "").replace("-", "").isalnum():
        raise InvalidArgumentError(f"mode names are identifiers, not {mode.name!r}")
    MODES[mode.name] = mode
    return mode


def parse_modes(spec: str | None) -> list[str]:
    """``"bm25,dense"`` → names, checked; ``None``/``"all"`` → every registered mode."""
    if spec is None or spec.strip().lower() in ("", "all"):
        return list(MODES)
    if spec.strip().lower() == "default":
        return list(DEFAULT_MODES)
    names = [s.strip() for s in spec.split(",") if s.strip()]
    unknown = [n for n in names if n not in MODES]
    if unknown:
        raise InvalidArgumentError(
            f"unknown mode(s) {', '.join(unknown)}; known: {', '.join(MODES)}"
        )
    return list(dict.fromkeys(names))


# --------------------------------------------------------------------------- the modes


def _bm25(ctx: EvalContext) -> ModeRunner:
    return lambda q: ModeOutput(ctx.keyword.search(q, CANDIDATES).evidence)


def _dense(ctx: EvalContext) -> ModeRunner:
    return lambda q: ModeOutput(ctx.dense.search(q, CANDIDATES).evidence)


def _hybrid(ctx: EvalContext) -> ModeRunner:
    return lambda q: ModeOutput(ctx.hybrid.search(q, CANDIDATES).evidence)


def _hybrid_ppr(ctx: EvalContext) -> ModeRunner:
    def run(q: str) -> ModeOutput:
        return ModeOutput(ctx.reranker.rerank(ctx.hybrid.search(q, CANDIDATES).evidence))

    return run


def _entity_graph(ctx: EvalContext) -> ModeRunner:
    return lambda q: ModeOutput(ctx.entity_graph.search(q, CANDIDATES).evidence)


def _multistep(force: str | None) -> Callable[[EvalContext], ModeRunner]:
    def build(ctx: EvalContext) -> ModeRunner:
        engine = ctx.agent.multistep

        def run(q: str) -> ModeOutput:
            r = engine.run(q, force=force)
            return ModeOutput(
                r.evidence,
                extra={
                    "route": r.route,
                    "steps": len(r.steps),
                    "stop_reason": r.stop_reason,
                    "bridge": r.bridge_round_stats.get("triggered", False),
                },
            )

        return run

    return build


def _agent(multistep: bool) -> Callable[[EvalContext], ModeRunner]:
    def build(ctx: EvalContext) -> ModeRunner:
        def run(q: str) -> ModeOutput:
            result = ctx.agent.query(q, multistep=multistep)
            return ModeOutput(result.evidence, answer=result.answer, extra={"mode": result.mode})

        return run

    return build


register_mode(EvalMode("bm25", "BM25 only (tantivy text index over section text)", _bm25))
register_mode(EvalMode("dense", "dense only (all-MiniLM-L6-v2 cosine, exact scan)", _dense))
register_mode(EvalMode("hybrid", "dense + BM25, reciprocal rank fusion", _hybrid))
register_mode(
    EvalMode(
        "hybrid_ppr",
        "hybrid, reranked with personalised PageRank over the link/mention graph",
        _hybrid_ppr,
    )
)
register_mode(
    EvalMode(
        "entity_graph",
        "question entities, then their link/mention neighbours, then hybrid (single step)",
        _entity_graph,
    )
)
register_mode(
    EvalMode(
        "multistep",
        "multi-step engine, routed by complexity: plan, gaps, refinement, bridge round",
        _multistep(None),
    )
)
register_mode(
    EvalMode(
        "multistep_forced",
        "multi-step engine on every question (routing forced to COMPLEX)",
        _multistep("complex"),
    )
)
register_mode(
    EvalMode(
        "agent",
        "KnowledgeGraphAgent.query() offline: graph retrieval, quality filter, answer",
        _agent(False),
        answers=True,
    )
)
register_mode(
    EvalMode(
        "agent_multistep",
        "KnowledgeGraphAgent.query(multistep=True) offline: multi-step engine, answer",
        _agent(True),
        answers=True,
    )
)

DEFAULT_MODES: tuple[str, ...] = tuple(MODES)

"""Named retrieval configurations the harness runs side by side.

A mode is a name, a one-line description, an :class:`~kg_agent.config.AgentConfig`
and how far its pipeline runs for a question: the retriever alone (``retrieve``),
the retriever and the stages (``rank``), or the whole query with an answer
(``answer``). Every mode of a dataset shares one :class:`GraphComponents` (the graph,
the embedder, the vector matrix, the entity linker), so differences in the table are
differences of method. Adding a mode is one :func:`register_mode` call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from kg_agent.config import AgentConfig
from kg_agent.exceptions import InvalidArgumentError
from kg_agent.pipeline import GraphComponents
from kg_agent.retrieval.base import Evidence, RetrievalResult

__all__ = [
    "CANDIDATES",
    "DEFAULT_MODES",
    "MODES",
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
    short_answer: str | None = None
    answerable: bool = True
    extra: dict[str, Any] = field(default_factory=dict)


ModeRunner = Callable[[str], ModeOutput]

#: Every mode runs offline (no LLM at index or query time) without few-shot examples.
_EVAL = AgentConfig(offline=True, fewshot=False, top_k=8, candidates=CANDIDATES)


@dataclass(frozen=True, slots=True)
class EvalMode:
    """A named pipeline configuration, run up to ``runs``."""

    name: str
    description: str
    config: AgentConfig
    runs: Literal["retrieve", "rank", "answer"] = "retrieve"
    answers: bool = False  # whether EM/F1 are meaningful for this mode

    def build(self, components: GraphComponents, llm: dict[str, Any] | None = None) -> ModeRunner:
        """A function from a question to this mode's ranked evidence (and answer).
        ``llm``: the :class:`AgentConfig` fields of a model server, which then does this
        mode's model steps (``components.llm`` is its client); else the mode runs offline."""
        config = self.config if llm is None else self.config.replace(offline=False, **llm)
        pipeline = components.pipeline(config)
        if self.runs == "answer":

            def answer(q: str) -> ModeOutput:
                result = pipeline.run(q)
                extra: dict[str, Any] = {
                    "mode": result.mode,
                    "shown": result.short_answer is not None,
                    "confidence": result.confidence,
                }
                # recall is read from the ranking; the answer's citation order is its own;
                # EM from the reader's best short answer, shown or not (how sure it was
                # is in ``extra``: what a person reads in bold is the shown one)
                return ModeOutput(
                    result.ranked,
                    answer=result.answer,
                    short_answer=result.answer_candidate,
                    answerable=result.answerable,
                    extra=extra,
                )

            return answer
        rank = self.runs == "rank"

        def run(q: str) -> ModeOutput:
            result = pipeline.search(q) if rank else pipeline.retrieve(q)
            return ModeOutput(result.evidence, extra=_multistep_extra(result))

        return run


def _multistep_extra(result: RetrievalResult) -> dict[str, Any]:
    ms = result.multistep
    if ms is None:
        return {}
    return {
        "route": ms.route,
        "steps": len(ms.steps),
        "stop_reason": ms.stop_reason,
        "bridge": ms.bridge_round_stats.get("triggered", False),
    }


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

for _mode in (
    EvalMode(
        "bm25",
        "BM25 only (tantivy text index over section text)",
        _EVAL.replace(retrieval="bm25"),
    ),
    EvalMode(
        "dense",
        "dense only (all-MiniLM-L6-v2 cosine, exact scan)",
        _EVAL.replace(retrieval="dense"),
    ),
    EvalMode("hybrid", "dense + BM25, reciprocal rank fusion", _EVAL.replace(retrieval="hybrid")),
    EvalMode(
        "hybrid_ppr",
        "hybrid, reranked with personalised PageRank over the link/mention graph",
        _EVAL.replace(retrieval="hybrid", quality_filter=False, top_k=CANDIDATES),
        runs="rank",
    ),
    EvalMode(
        "entity_graph",
        "question entities, then their link/mention neighbours, then hybrid (single step)",
        _EVAL,
    ),
    EvalMode(
        "multistep",
        "multi-step retriever, routed by complexity, and its stages (what agent_multistep "
        "answers from)",
        _EVAL.replace(retrieval="multistep", top_k=CANDIDATES),
        runs="rank",
    ),
    EvalMode(
        "multistep_forced",
        "the same on every question (routing forced to COMPLEX)",
        _EVAL.replace(retrieval="multistep", route="complex", top_k=CANDIDATES),
        runs="rank",
    ),
    EvalMode(
        "agent",
        "KnowledgeGraphAgent.query() offline: graph retrieval, quality filter, answer",
        _EVAL,
        runs="answer",
        answers=True,
    ),
    EvalMode(
        "agent_multistep",
        "KnowledgeGraphAgent.query(multistep=True) offline: multi-step retriever, answer",
        _EVAL.replace(retrieval="multistep"),
        runs="answer",
        answers=True,
    ),
):
    register_mode(_mode)

DEFAULT_MODES: tuple[str, ...] = tuple(MODES)

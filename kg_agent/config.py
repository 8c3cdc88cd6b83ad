"""What a :class:`~kg_agent.agent.KnowledgeGraphAgent` does, as one validated value.

Why a value object: the agent's behaviour (how evidence is found, which stages rank
it, how the answer is written) was spread over twenty constructor arguments; as a
frozen :class:`AgentConfig` it can be checked once, compared, logged, derived
(``config.replace(top_k=5)``) and handed to :meth:`~kg_agent.pipeline.GraphComponents.pipeline`,
which is also how the eval harness names its modes.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from kg_agent.exceptions import InvalidArgumentError
from kg_agent.llm.client import FAST_MODEL, check_api
from kg_agent.multistep.config import MultiStepConfig
from kg_agent.retrieval.rerank import RerankWeights
from kg_agent.synthesis.claude import DEFAULT_SYNTHESIS_MODEL

__all__ = ["RETRIEVAL_MODES", "ROUTES", "AgentConfig"]

#: "graph": the question's entities, their link/mention neighbours, then hybrid
#: (see retrieval/graph_walk.py); "hybrid": dense + BM25 by reciprocal rank;
#: "dense": embeddings only; "bm25": the full-text index only; "multistep": the
#: multi-step retriever (plan, steps, bridge round; see docs/multistep.md).
RETRIEVAL_MODES = ("graph", "hybrid", "dense", "bm25", "multistep")
#: Forced routing of the multi-step retriever (None: the question's complexity decides).
ROUTES = ("simple", "complex")


@dataclass(frozen=True)
class AgentConfig:
    """How a question is answered. Every field has the default a user gets.

    Retrieval: ``retrieval`` (one of :data:`RETRIEVAL_MODES`), ``candidates`` (how
    many sections it ranks), ``multi_query`` (also search two rephrasings with the
    same retriever), ``facts`` (the infobox facts that answer the question, first),
    ``grounding`` ("Not in the graph" when nothing the question names is in it);
    for ``"multistep"``, ``route`` forces its routing and
    ``multistep_config`` holds its settings (default the packaged YAML).
    Stages: the multi-step ones (relevance loop, tier order, fill) when that retriever
    runs, then ``quality_filter``, ``reranker`` (``rerank_weights``), the tier order,
    and the best ``top_k`` go to synthesis. Synthesis: the ``synthesis_model`` when a model
    server is configured and ``offline`` is off. The server speaks ``llm_api``
    (``"anthropic"``: the Messages API; ``"openai"``: chat completions, as Ollama, vLLM,
    llama.cpp and LM Studio do) at ``llm_base_url`` when given; ``fast_model`` does the
    small steps (plans, rewrites, relevance, bridge names; default Claude Haiku on
    Anthropic's API, the synthesis model on OpenAI's); ``llm_cache`` names a file that
    answers repeated prompts (:mod:`kg_agent.llm.cache`). ``multidoc``
    groups evidence by article and ``fewshot`` adds examples (``few_shot_path``).
    ``structural``: Cypher-pack answers for structural questions (``cypher_pack_path``).
    ``answer_words``: the offline answer's budget of quoted words (its first sentence is
    always whole).
    """

    retrieval: str = "graph"
    top_k: int = 8
    candidates: int = 30
    multi_query: bool = False
    facts: bool = True
    grounding: bool = True
    route: str | None = None
    multistep_config: MultiStepConfig | None = None
    quality_filter: bool = True
    reranker: bool = True
    rerank_weights: RerankWeights | None = None
    multidoc: bool = True
    fewshot: bool = True
    few_shot_path: str | None = None
    structural: bool = True
    cypher_pack_path: str | None = None
    synthesis_model: str = DEFAULT_SYNTHESIS_MODEL
    fast_model: str | None = None
    llm_api: str = "anthropic"
    llm_timeout: float = 30.0
    llm_base_url: str | None = None
    llm_cache: str | None = None
    offline: bool = False
    answer_words: int = 40

    def __post_init__(self) -> None:
        if self.retrieval not in RETRIEVAL_MODES:
            raise InvalidArgumentError(
                f"retrieval must be one of {', '.join(RETRIEVAL_MODES)}, not {self.retrieval!r}"
            )
        for name in ("top_k", "candidates"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise InvalidArgumentError(f"{name} must be an integer, not {value!r}")
        if not 1 <= self.top_k <= 50:
            raise InvalidArgumentError(f"top_k must be between 1 and 50, not {self.top_k}")
        if self.candidates < self.top_k:
            raise InvalidArgumentError(
                f"candidates ({self.candidates}) must be >= top_k ({self.top_k})"
            )
        if self.route is not None and self.route not in ROUTES:
            raise InvalidArgumentError(
                f"route must be one of {', '.join(ROUTES)} or None, not {self.route!r}"
            )
        if not (isinstance(self.llm_timeout, int | float) and math.isfinite(self.llm_timeout)):
            raise InvalidArgumentError(f"llm_timeout must be a number, not {self.llm_timeout!r}")
        if self.llm_timeout <= 0:
            raise InvalidArgumentError(f"llm_timeout must be positive, not {self.llm_timeout}")
        if self.multistep_config is not None and not isinstance(
            self.multistep_config, MultiStepConfig
        ):
            raise InvalidArgumentError("multistep_config must be a MultiStepConfig")
        if self.rerank_weights is not None and not isinstance(self.rerank_weights, RerankWeights):
            raise InvalidArgumentError("rerank_weights must be a RerankWeights")
        if isinstance(self.answer_words, bool) or not isinstance(self.answer_words, int):
            raise InvalidArgumentError(
                f"answer_words must be an integer, not {self.answer_words!r}"
            )
        if not 10 <= self.answer_words <= 500:
            raise InvalidArgumentError(
                f"answer_words must be between 10 and 500, not {self.answer_words}"
            )
        if not self.synthesis_model or not isinstance(self.synthesis_model, str):
            raise InvalidArgumentError("synthesis_model must be a model name")
        if self.fast_model is not None and (
            not isinstance(self.fast_model, str) or not self.fast_model.strip()
        ):
            raise InvalidArgumentError("fast_model must be a model name or None")
        check_api(self.llm_api)
        if self.llm_cache is not None and not str(self.llm_cache).strip():
            raise InvalidArgumentError("llm_cache must be a file path or None")

    @property
    def fast_model_name(self) -> str:
        """The model of the small steps: ``fast_model``, else Claude Haiku on Anthropic's
        API, else the synthesis model (a local server serves the one it was given)."""
        if self.fast_model:
            return self.fast_model
        return FAST_MODEL if self.llm_api == "anthropic" else self.synthesis_model

    @property
    def names_a_model(self) -> bool:
        """Whether a synthesis model other than the Claude default was named (what
        ``llm_api="openai"`` needs: there is no default model on a user's server)."""
        return self.synthesis_model != DEFAULT_SYNTHESIS_MODEL

    def replace(self, **changes: Any) -> AgentConfig:
        """A copy with ``changes`` (validated again)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (nested settings as dicts), for logs and eval reports."""
        out = dataclasses.asdict(self)
        return {k: v for k, v in out.items()}

"""One builder that wires an :class:`~kg_agent.config.AgentConfig` into a query pipeline.

The pipeline is what ``KnowledgeGraphAgent.query()`` runs, in this order::

    structural retriever (Cypher packs)   # rows for "How is X connected to Y?"
    retriever.search(question)            # dense | bm25 | hybrid | graph | multi-query | multi-step
    stages: quality filter → graph rerank (tier order) → top k
    synthesizer                           # Claude, or the extractive answer

:class:`GraphComponents` holds what is costly and shared per graph (the store, the
embedder, the vector matrix, the entity linker, the rerankers, the LLM client), built
on first use, so the agent and every eval mode over the same graph share one of each.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kg_agent.config import AgentConfig
from kg_agent.embedding import Embedder
from kg_agent.entities import EntityResolver, QuestionEntityLinker
from kg_agent.llm.client import LLMClient
from kg_agent.multistep.config import MultiStepConfig, load_config
from kg_agent.multistep.engine import MultiStepEngine
from kg_agent.retrieval.base import RetrievalResult, Retriever
from kg_agent.retrieval.graph_walk import EntityGraphRetriever
from kg_agent.retrieval.hybrid import HybridRetriever
from kg_agent.retrieval.keyword import KeywordRetriever, text_off
from kg_agent.retrieval.multi_query import MultiQueryRetriever
from kg_agent.retrieval.rerank import GraphReranker, RerankWeights
from kg_agent.retrieval.semantic import SEMANTIC_OFF, SemanticRetriever
from kg_agent.retrieval.stages import GraphRerank, QualityFilter, Stage, TopK, run_stages
from kg_agent.retrieval.structural import StructuralRetriever
from kg_agent.store import GraphStore
from kg_agent.synthesis.context import MultiDocSynthesizer
from kg_agent.synthesis.fewshot import FewShotManager
from kg_agent.synthesis.synthesizer import ClaudeSynthesizer, ExtractiveSynthesizer, Synthesizer

__all__ = ["GraphComponents", "QueryPipeline", "build_pipeline"]


class GraphComponents:
    """A graph's shared parts, each built once, on first use.

    ``llm`` is the client Claude-backed steps use (None: every step runs offline).
    """

    def __init__(
        self, store: GraphStore, embedder: Embedder, *, llm: LLMClient | None = None
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.llm = llm
        self._cache: dict[tuple[Any, ...], Any] = {}

    def _once(self, key: tuple[Any, ...], build: Any) -> Any:
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]

    @property
    def dense(self) -> SemanticRetriever:
        out: SemanticRetriever = self._once(
            ("dense",), lambda: SemanticRetriever(self.store, self.embedder)
        )
        return out

    @property
    def keyword(self) -> KeywordRetriever:
        out: KeywordRetriever = self._once(("keyword",), lambda: KeywordRetriever(self.store))
        return out

    @property
    def resolver(self) -> EntityResolver:
        out: EntityResolver = self._once(("resolver",), lambda: EntityResolver(self.store))
        return out

    @property
    def linker(self) -> QuestionEntityLinker:
        return self.resolver.linker

    def hybrid(self, depth: int) -> HybridRetriever:
        out: HybridRetriever = self._once(
            ("hybrid", depth), lambda: HybridRetriever(self.dense, self.keyword, depth=depth)
        )
        return out

    def entity_graph(self, depth: int) -> EntityGraphRetriever:
        out: EntityGraphRetriever = self._once(
            ("graph", depth),
            lambda: EntityGraphRetriever(
                self.store, self.dense, self.hybrid(depth), linker=self.linker, depth=depth
            ),
        )
        return out

    def reranker(self, weights: RerankWeights | None) -> GraphReranker:
        out: GraphReranker = self._once(
            ("reranker", weights), lambda: GraphReranker(self.store, weights=weights)
        )
        return out

    def multistep_engine(
        self,
        *,
        depth: int = 30,
        weights: RerankWeights | None = None,
        config: MultiStepConfig | None = None,
        llm: LLMClient | None = None,
        llm_timeout: float = 15.0,
    ) -> MultiStepEngine:
        """A new multi-step engine over this graph's retrievers (``llm``: else the
        components' client)."""
        return MultiStepEngine(
            self.entity_graph(depth),
            base=self.hybrid(depth),
            linker=self.linker,
            reranker=self.reranker(weights),
            config=config,
            llm=llm if llm is not None else self.llm,
            llm_timeout=llm_timeout,
        )

    def multistep(
        self, depth: int, weights: RerankWeights | None, timeout: float
    ) -> MultiStepEngine:
        """The engine a pipeline uses (one per depth, weights and timeout)."""
        out: MultiStepEngine = self._once(
            ("multistep", depth, weights, timeout),
            lambda: self.multistep_engine(
                depth=depth, weights=weights, llm_timeout=min(timeout, 15.0)
            ),
        )
        return out

    def multi_query(self, timeout: float) -> MultiQueryRetriever:
        out: MultiQueryRetriever = self._once(
            ("multi_query", timeout),
            lambda: MultiQueryRetriever(
                self.dense,
                resolve_entities=self.resolver.similar_titles,
                llm=self.llm,
                llm_timeout=timeout,
            ),
        )
        return out

    def structural(self, pack_path: str | None) -> StructuralRetriever:
        out: StructuralRetriever = self._once(
            ("structural", pack_path),
            lambda: StructuralRetriever(self.store, pack_path, resolver=self.resolver),
        )
        return out

    def warnings(self, config: AgentConfig) -> list[str]:
        """What a user must know about this graph before trusting an answer from it."""
        out = []
        if not self.dense.enabled:
            out.append(SEMANTIC_OFF)
        if config.retrieval != "dense" and not self.keyword.enabled:
            out.append(text_off(self.store))
        return out


@dataclass
class QueryPipeline:
    """What one configuration runs for a question; see the module docstring."""

    config: AgentConfig
    components: GraphComponents
    retriever: Retriever
    stages: list[Stage]
    synthesizer: Synthesizer
    structural: StructuralRetriever | None

    def retrieve(
        self,
        question: str,
        *,
        multistep: bool | None = None,
        route: str | None = None,
        multistep_config: MultiStepConfig | None = None,
    ) -> RetrievalResult:
        """The evidence the configured retriever finds (``config.candidates`` of it).

        ``multistep``, ``route`` and ``multistep_config`` override the configuration
        for this question only (the multi-step engine then runs whatever the config).
        """
        cfg = self.config
        use_multistep = cfg.multistep if multistep is None else multistep
        if use_multistep:
            engine = self.components.multistep(cfg.candidates, cfg.rerank_weights, cfg.llm_timeout)
            settings = multistep_config or cfg.multistep_config or _default_multistep()
            return engine.search(
                question, cfg.candidates, force=route or cfg.route, config=settings
            )
        result = self.retriever.search(question, cfg.candidates)
        if not isinstance(self.retriever, MultiQueryRetriever):
            dense = self.components.dense
            result.trace.append(
                {
                    "stage": "semantic_search" if cfg.retrieval == "dense" else "retrieve",
                    "retrieval": cfg.retrieval,
                    "mode": dense.mode,
                    "results": len(result.evidence),
                    "notes": list(result.notes),
                }
            )
        return result

    def rank(self, question: str, result: RetrievalResult) -> RetrievalResult:
        """The stages, in order, over ``result``."""
        return run_stages(question, result, self.stages)


_DEFAULT_MULTISTEP: list[MultiStepConfig] = []


def _default_multistep() -> MultiStepConfig:
    """The packaged multi-step settings, read once."""
    if not _DEFAULT_MULTISTEP:
        _DEFAULT_MULTISTEP.append(load_config())
    return _DEFAULT_MULTISTEP[0]


def _retriever(components: GraphComponents, config: AgentConfig) -> Retriever:
    if config.multi_query:
        return components.multi_query(config.llm_timeout)
    if config.retrieval == "dense":
        return components.dense
    if config.retrieval == "bm25":
        return components.keyword
    if config.retrieval == "hybrid":
        return components.hybrid(config.candidates)
    return components.entity_graph(config.candidates)


def build_pipeline(components: GraphComponents, config: AgentConfig) -> QueryPipeline:
    """The pipeline ``config`` describes, over ``components``' graph."""
    stages: list[Stage] = []
    if config.quality_filter:
        stages.append(QualityFilter())
    if config.reranker:
        stages.append(GraphRerank(components.reranker(config.rerank_weights)))
    stages.append(TopK(config.top_k))
    numbering = MultiDocSynthesizer(group=config.multidoc)
    llm = None if config.offline else components.llm
    synthesizer: Synthesizer
    if llm is None:
        synthesizer = ExtractiveSynthesizer(numbering, max_words=config.answer_words)
    else:
        fewshot = (
            FewShotManager(config.few_shot_path, embedder=components.embedder)
            if config.fewshot
            else None
        )
        synthesizer = ClaudeSynthesizer(
            llm,
            model=config.synthesis_model,
            timeout=config.llm_timeout,
            numbering=numbering,
            fewshot=fewshot,
            answer_words=config.answer_words,
        )
    return QueryPipeline(
        config=config,
        components=components,
        retriever=_retriever(components, config),
        stages=stages,
        synthesizer=synthesizer,
        structural=components.structural(config.cypher_pack_path) if config.structural else None,
    )

"""The query engine: one :class:`QueryPipeline` per configuration owns a query's run.

:meth:`QueryPipeline.run` does, in this order::

    read the question once                 # language.Question: names, entities, kind, intent
    structural retriever (Cypher packs)    # rows for "How is X connected to Y?"
    retriever.search(question)             # dense | bm25 | hybrid | graph | multistep,
                                           #   wrapped by multi-query when asked
    stages                                 # multi-step: relevance loop → tier order → fill;
                                           # then quality filter → graph rerank → tier order
                                           #   → top k
    synthesizer                            # Claude, or the extractive answer

Reordering happens only in stages. :meth:`~QueryPipeline.retrieve` stops after the
retriever and :meth:`~QueryPipeline.search` after the stages (what the eval's
retrieval modes and ``serve``'s ``/search`` run).

:class:`GraphComponents` holds what is costly and shared per graph (the store, the
embedder, the vector matrix, the entity linker, the rerankers, the LLM client), built
on first use, and the pipelines built over them (:meth:`GraphComponents.pipeline`),
so the agent, ``serve`` and every eval mode over one graph share one of each.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kg_agent.answering.reader import evidence_support
from kg_agent.answering.sentence_ranker import SentenceRanker, default_sentence_weights
from kg_agent.answering.span_ranker import SpanRanker, default_span_weights
from kg_agent.config import AgentConfig
from kg_agent.embedding import Embedder
from kg_agent.entities import EntityResolver, QuestionEntityLinker
from kg_agent.language.question import Question, check_question
from kg_agent.llm.client import FAST_MODEL, LLMClient, UsageMeter
from kg_agent.multistep.config import MultiStepConfig, load_config
from kg_agent.multistep.retriever import MultiStepRetriever
from kg_agent.multistep.stages import Fill, RelevanceLoop
from kg_agent.result import QueryEventHandler, QueryResult
from kg_agent.retrieval.base import Evidence, GraphAnswer, RetrievalResult, Retriever
from kg_agent.retrieval.connection import Connection, connect
from kg_agent.retrieval.facts import FactRetriever, WithFacts
from kg_agent.retrieval.graph_walk import EntityGraphRetriever
from kg_agent.retrieval.grounding import Grounder
from kg_agent.retrieval.grounding_model import default_grounding_model
from kg_agent.retrieval.hybrid import HybridRetriever
from kg_agent.retrieval.keyword import KeywordRetriever, text_off
from kg_agent.retrieval.multi_query import MultiQueryRetriever
from kg_agent.retrieval.rerank import GraphReranker, RerankWeights
from kg_agent.retrieval.semantic import SEMANTIC_OFF, SemanticRetriever, embed_few
from kg_agent.retrieval.stages import (
    GraphRerank,
    Leads,
    QualityFilter,
    Stage,
    TierOrder,
    TopK,
    run_stages,
)
from kg_agent.retrieval.structural import StructuralRetriever, format_graph_answer
from kg_agent.store import GraphStore
from kg_agent.synthesis.context import MultiDocSynthesizer
from kg_agent.synthesis.fewshot import FewShotManager
from kg_agent.synthesis.synthesizer import (
    ClaudeSynthesizer,
    ExtractiveSynthesizer,
    Synthesizer,
    strip_citations,
)

__all__ = ["GraphComponents", "QueryPipeline", "build_pipeline"]

#: Pipelines kept per graph (``serve`` builds one per distinct request configuration).
PIPELINE_CACHE = 32


#: Searches of a parallel plan run at once (threads; the embedder and the store's
#: per-thread connections release the GIL for most of a search).
PARALLEL_STEP_SEARCHES = 4


class GraphComponents:
    """A graph's shared parts, each built once, on first use, and its pipelines.

    ``llm`` is the client Claude-backed steps use (None: every step runs offline).
    Safe to share between threads: a part is built under a lock.
    """

    def __init__(
        self, store: GraphStore, embedder: Embedder, *, llm: LLMClient | None = None
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.llm = llm
        self._cache: dict[tuple[Any, ...], Any] = {}
        self._pipelines: OrderedDict[AgentConfig, QueryPipeline] = OrderedDict()
        self._lock = threading.RLock()

    def _once(self, key: tuple[Any, ...], build: Callable[[], Any]) -> Any:
        found = self._cache.get(key)
        if found is None:
            with self._lock:
                found = self._cache.get(key)
                if found is None:
                    found = self._cache[key] = build()
        return found

    # ------------------------------------------------------------------ parts
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

    def multistep(
        self,
        *,
        depth: int = 30,
        config: MultiStepConfig | None = None,
        route: str | None = None,
        llm_timeout: float = 15.0,
        fast_model: str = FAST_MODEL,
    ) -> MultiStepRetriever:
        """The multi-step retriever over this graph's retrievers (``config``: else the
        packaged settings)."""
        settings = config or default_multistep()
        out: MultiStepRetriever = self._once(
            ("multistep", depth, settings, route, llm_timeout, fast_model),
            lambda: MultiStepRetriever(
                self.entity_graph(depth),
                base=self.hybrid(depth),
                linker=self.linker,
                config=settings,
                llm=self.llm,
                llm_timeout=llm_timeout,
                route=route,
                fast_model=fast_model,
                # a read-only store gives each thread its own connection: a parallel
                # plan's searches can run at once; a writer's one connection cannot
                concurrent_steps=PARALLEL_STEP_SEARCHES if self.store.read_only else 1,
            ),
        )
        return out

    @property
    def facts(self) -> FactRetriever:
        """Infobox facts that answer a question; key names matched by the embedder too
        when the graph has vectors (its model is loaded for search anyway)."""
        out: FactRetriever = self._once(
            ("facts",),
            lambda: FactRetriever(
                self.store, embed=embed_few(self.embedder) if self.dense.enabled else None
            ),
        )
        return out

    @property
    def grounder(self) -> Grounder:
        """Whether the graph holds what a question asks about (the committed model)."""
        out: Grounder = self._once(
            ("grounder",),
            lambda: Grounder(self.store, default_grounding_model(), support=evidence_support),
        )
        return out

    @property
    def sentences(self) -> SentenceRanker:
        """The order of the sentences an offline answer shows (the committed model)."""
        out: SentenceRanker = self._once(
            ("sentences",), lambda: SentenceRanker(default_sentence_weights())
        )
        return out

    @property
    def spans(self) -> SpanRanker:
        """The chooser of an offline answer's span (the committed model)."""
        out: SpanRanker = self._once(
            ("spans",),
            lambda: SpanRanker(
                default_span_weights(),
                embed=embed_few(self.embedder) if self.dense.enabled else None,
            ),
        )
        return out

    def multi_query(
        self, inner: Retriever, timeout: float, model: str = FAST_MODEL
    ) -> MultiQueryRetriever:
        out: MultiQueryRetriever = self._once(
            ("multi_query", id(inner), timeout, model),
            lambda: MultiQueryRetriever(
                inner,
                resolve_entities=self.resolver.similar_titles,
                llm=self.llm,
                llm_timeout=timeout,
                model=model,
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

    def read(self, question: str) -> Question:
        """The question checked (empty, too long) and read, with this graph's linker."""
        # retrieval seeds from the linker's entities alone; the looser topic finder
        # (lower-case words, surnames, acronyms) serves facts and grounding: as seeds its
        # finds cost HotpotQA R@2 0.5-3.2 points (docs/BENCHMARKS.md, "Answers from facts")
        return Question(
            check_question(question), self.linker.link, find_topics=self.linker.topics_otherwise
        )

    # ------------------------------------------------------------------ pipelines
    def pipeline(self, config: AgentConfig) -> QueryPipeline:
        """The pipeline ``config`` describes, built once (the last
        :data:`PIPELINE_CACHE` configurations are kept)."""
        with self._lock:
            found = self._pipelines.get(config)
            if found is not None:
                self._pipelines.move_to_end(config)
                return found
            built = build_pipeline(self, config)
            self._pipelines[config] = built
            while len(self._pipelines) > PIPELINE_CACHE:
                self._pipelines.popitem(last=False)
            return built


_DEFAULT_MULTISTEP: list[MultiStepConfig] = []


def default_multistep() -> MultiStepConfig:
    """The packaged multi-step settings, read once."""
    if not _DEFAULT_MULTISTEP:
        _DEFAULT_MULTISTEP.append(load_config())
    return _DEFAULT_MULTISTEP[0]


@dataclass
class QueryPipeline:
    """What one configuration runs for a question; see the module docstring."""

    config: AgentConfig
    components: GraphComponents
    retriever: Retriever
    stages: list[Stage]
    synthesizer: Synthesizer
    structural: StructuralRetriever | None

    def read(self, question: str | Question) -> Question:
        return question if isinstance(question, Question) else self.components.read(question)

    def retrieve(self, question: str | Question) -> RetrievalResult:
        """The evidence the configured retriever finds (``config.candidates`` of it)."""
        q = self.read(question)
        result = self.retriever.search(q, self.config.candidates)
        inner = self.retriever.inner if isinstance(self.retriever, WithFacts) else self.retriever
        if not isinstance(inner, MultiQueryRetriever | MultiStepRetriever):
            result.trace.append(
                {
                    "stage": "semantic_search" if self.config.retrieval == "dense" else "retrieve",
                    "retrieval": self.config.retrieval,
                    "mode": self.components.dense.mode,
                    "results": len(result.evidence),
                    "notes": list(result.notes),
                }
            )
        return result

    def rank(self, question: Question, result: RetrievalResult) -> RetrievalResult:
        """The stages, in order, over ``result``."""
        return run_stages(question, result, self.stages)

    def search(self, question: str | Question) -> RetrievalResult:
        """Retrieval and the stages: the ranked evidence an answer is written from."""
        q = self.read(question)
        return self.rank(q, self.retrieve(q))

    def run(
        self, question: str | Question, on_event: QueryEventHandler | None = None
    ) -> QueryResult:
        """Answer ``question``: structure, retrieval, stages, synthesis (see the module
        docstring); ``on_event`` is told each part as it happens."""
        t_start = time.perf_counter()
        q = self.read(question)
        # embed + search (summed over every search the query ran) are the parts
        # of retrieve spent embedding the query and scanning or probing the index.
        timings: dict[str, float] = {"embed": 0.0, "search": 0.0}
        trace: list[dict[str, Any]] = []
        meter = UsageMeter()
        graph: GraphAnswer | None = None
        if self.structural is not None:
            structure = self.structural.search(q)
            trace += structure.trace
            graph = structure.graph
        warnings = self.components.warnings(self.config)
        t0 = time.perf_counter()
        found = self.retrieve(q)
        timings["retrieve"] = time.perf_counter() - t0
        for key in ("embed", "search"):
            timings[key] += found.timings.get(key, 0.0)
        t0 = time.perf_counter()
        ranked = self.rank(q, found)
        meter.merge(ranked.usage)
        warnings += ranked.warnings
        trace += ranked.trace  # the retriever's steps, then the stages'
        timings["rerank"] = time.perf_counter() - t0
        on_text = None
        if on_event is not None:
            on_event(
                "retrieved",
                {
                    "trace": trace,
                    "evidence": len(ranked.evidence),
                    "graph": graph.to_dict() if graph is not None else None,
                    "timings": {k: round(v, 4) for k, v in timings.items()},
                },
            )
            numbered_now = self.synthesizer.numbering.number(ranked.evidence)
            on_event(
                "evidence",
                {"items": [dict(ev.to_dict(), n=n) for n, ev in numbered_now.items]},
            )

            def on_text(piece: str) -> None:
                on_event("text", {"text": piece})

        t0 = time.perf_counter()
        topic = (
            self.components.grounder(q, _grounding_evidence(ranked))
            if self.config.grounding
            else None
        )
        if topic is not None:
            trace.append({"stage": "grounding", **topic.to_dict()})
        connection = _connection(self.components.store, graph)
        if connection is not None:
            synthesis = self.synthesizer.connect(q, connection, ranked.evidence)
        elif topic is not None and not topic.grounded and topic.looked_up:
            # the look-ups find what it names; the model doubts the graph answers it
            synthesis = self.synthesizer.unsure(q, ranked.evidence)
        elif topic is not None and not topic.grounded:
            synthesis = self.synthesizer.refuse(q, ranked.evidence, topic.refusal_names(q))
        else:
            # the grounding model weighed how much of the question the evidence holds:
            # the reader's own share check would refuse a second time by a hand threshold
            decided = topic is not None and topic.probability is not None
            synthesis = self.synthesizer.synthesize(
                q, ranked.evidence, on_text, support_threshold=0.0 if decided else None
            )
            if topic is not None and topic.must_quote and not topic.answers_about(synthesis.answer):
                # grounded only by mentions, and the answer is about something else
                synthesis = self.synthesizer.refuse(q, ranked.evidence, topic.mentioned)
        meter.merge(synthesis.usage)
        warnings += synthesis.warnings
        texts, numbered = synthesis.numbered.renumbered([synthesis.answer])
        answer, mode = texts[0], synthesis.mode
        short_text = strip_citations(synthesis.short_answer or "") or None
        candidate = strip_citations(synthesis.candidate or "") or None
        # path says whether Claude wrote the prose, also when a graph answer is
        # prepended below and mode becomes "graph".
        path = "claude" if mode == "claude" else "offline"
        if connection is not None:
            mode = "graph"  # the graph states the links (Claude, if asked, wrote after them)
        if graph is not None and connection is None:
            # the graph's rows answer; a span from the prose would not
            answer = format_graph_answer(graph) + "\n\n" + answer
            mode = "graph"
            short_text = candidate = None
        timings["synthesis"] = time.perf_counter() - t0
        timings["total"] = time.perf_counter() - t_start
        trace.append(
            {
                "stage": "synthesis",
                "mode": mode,
                "evidence": len(ranked.evidence),
                "answerable": synthesis.answerable,
                "support": synthesis.support,
                "confidence": synthesis.confidence,
                "found_by": synthesis.found_by,
            }
        )
        return QueryResult(
            question=q.text,
            answer=answer,
            citations=numbered.citations_in(answer),
            evidence=[ev for _, ev in numbered.items],
            path=path,
            mode=mode,
            trace=trace,
            usage=meter.as_dict(),
            timings={k: round(v, 4) for k, v in timings.items()},
            warnings=warnings,
            graph=graph.to_dict() if graph is not None else None,
            multistep=ranked.multistep.to_dict() if ranked.multistep is not None else None,
            short_answer=short_text,
            answerable=synthesis.answerable,
            support=synthesis.support,
            confidence=synthesis.confidence,
            answer_candidate=candidate,
            ranked=list(ranked.evidence),
        )


def _grounding_evidence(ranked: RetrievalResult) -> Sequence[Evidence]:
    """What the grounding model weighs: the question's own search. A multi-step pool
    adds sections found for sub-questions, whose cosines are to those (closer than the
    question is to anything, and the model was fitted on single searches)."""
    if ranked.multistep is not None and ranked.multistep.asked:
        return ranked.multistep.asked
    return ranked.evidence


def _connection(store: GraphStore, graph: GraphAnswer | None) -> Connection | None:
    """A connection question's links in words, when the pack found a path."""
    if graph is None or graph.query != "connection_path" or not graph.rows:
        return None
    chain = [str(t) for t in graph.rows[0].get("path") or ()]
    found = connect(store, str(graph.params["source"]), str(graph.params["target"]), chain)
    return found if found.links else None  # links without a section: the rows say it


def _retriever(components: GraphComponents, config: AgentConfig) -> Retriever:
    """The retriever ``config.retrieval`` names, wrapped by multi-query when asked."""
    inner: Retriever
    if config.retrieval == "dense":
        inner = components.dense
    elif config.retrieval == "bm25":
        inner = components.keyword
    elif config.retrieval == "hybrid":
        inner = components.hybrid(config.candidates)
    elif config.retrieval == "multistep":
        inner = components.multistep(
            depth=config.candidates,
            config=config.multistep_config,
            route=config.route,
            llm_timeout=min(config.llm_timeout, 15.0),
            fast_model=config.fast_model_name,
        )
    else:
        inner = components.entity_graph(config.candidates)
    if config.multi_query:
        inner = components.multi_query(inner, config.llm_timeout, config.fast_model_name)
    return WithFacts(inner, components.facts) if config.facts else inner


def _stages(components: GraphComponents, config: AgentConfig) -> list[Stage]:
    stages: list[Stage] = []
    if config.retrieval == "multistep":
        settings = config.multistep_config or default_multistep()
        reranker = components.reranker(config.rerank_weights)
        stages += [
            RelevanceLoop(
                settings,
                authority=lambda e: reranker.pagerank_scaled(e.pagerank),
                llm=None if config.offline else components.llm,
                llm_timeout=min(config.llm_timeout, 15.0),
                model=config.fast_model_name,
            ),
            TierOrder(),
            Fill(settings, components.hybrid(config.candidates)),
        ]
    if config.quality_filter:
        stages.append(QualityFilter())
    if config.reranker:
        stages.append(GraphRerank(components.reranker(config.rerank_weights)))
    stages += [
        TierOrder(),
        TopK(config.top_k),
        Leads(components.store.lead_sections, config.top_k),
    ]
    return stages


def build_pipeline(components: GraphComponents, config: AgentConfig) -> QueryPipeline:
    """The pipeline ``config`` describes, over ``components``' graph (a new one; the
    agent, ``serve`` and the eval take theirs from :meth:`GraphComponents.pipeline`)."""
    numbering = MultiDocSynthesizer(group=config.multidoc)
    llm = None if config.offline else components.llm
    synthesizer: Synthesizer
    if llm is None:
        synthesizer = ExtractiveSynthesizer(
            numbering,
            max_words=config.answer_words,
            sentences=components.sentences,
            spans=components.spans,
        )
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
            sentences=components.sentences,
            spans=components.spans,
        )
    return QueryPipeline(
        config=config,
        components=components,
        retriever=_retriever(components, config),
        stages=_stages(components, config),
        synthesizer=synthesizer,
        structural=components.structural(config.cypher_pack_path) if config.structural else None,
    )

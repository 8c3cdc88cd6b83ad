"""``KnowledgeGraphAgent``: answer a question from the graph, with cited evidence.

The agent opens a graph, holds its shared parts (:class:`GraphComponents`) and hands
each question to the pipeline its :class:`~kg_agent.config.AgentConfig` describes
(:meth:`~kg_agent.pipeline.QueryPipeline.run`); per-call changes make a derived
configuration, whose pipeline is built once. The names of the original API reference
(class constants and the ``_``-prefixed methods users' code calls) are kept here as
thin delegates.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, ClassVar

from kg_agent.config import RETRIEVAL_MODES, AgentConfig
from kg_agent.embedding import Embedder
from kg_agent.exceptions import InvalidArgumentError
from kg_agent.language.complexity import Complexity
from kg_agent.language.question import MAX_QUESTION_LENGTH, check_question
from kg_agent.language.tokens import STOP_WORDS
from kg_agent.llm.client import LLMClient
from kg_agent.llm.settings import client_for
from kg_agent.multistep.config import MultiStepConfig, load_config
from kg_agent.pipeline import GraphComponents, QueryPipeline
from kg_agent.result import QueryEventHandler, QueryResult
from kg_agent.retrieval.base import Evidence
from kg_agent.retrieval.multi_query import clamp_results
from kg_agent.retrieval.quality import CONTENT_QUALITY_THRESHOLD, score_section_quality
from kg_agent.retrieval.rerank import RerankWeights
from kg_agent.retrieval.semantic import SemanticRetriever
from kg_agent.store import GraphStore
from kg_agent.synthesis.context import MultiDocSynthesizer, NumberedEvidence
from kg_agent.synthesis.fewshot import FewShotManager
from kg_agent.synthesis.synthesizer import ClaudeSynthesizer, claude_prompt

__all__ = [
    "MAX_QUESTION_LENGTH",
    "RETRIEVAL_MODES",
    "KnowledgeGraphAgent",
    "QueryEventHandler",
    "QueryResult",
    "check_question",
]


class KnowledgeGraphAgent:
    """Question answering over a graph built by ``kg-agent load``.

    Configure it with ``config=AgentConfig(...)``, or with the keyword arguments of
    the original design (``use_enhancements``, ``enable_reranker``, ``top_k``,
    ``retrieval``, …), which map onto the same :class:`AgentConfig`; ``config`` wins
    where both are given. ``embedder`` defaults to the model the graph was embedded
    with; ``llm_client`` to a Claude client when a key is configured (``offline``
    never calls one).
    """

    #: Minimum quality score (:meth:`_score_section_quality`) for a section to be cited.
    CONTENT_QUALITY_THRESHOLD: ClassVar[float] = CONTENT_QUALITY_THRESHOLD
    #: Function words left out of the keyword overlap of the quality score.
    STOP_WORDS: ClassVar[frozenset[str]] = STOP_WORDS

    def __init__(
        self,
        db_path: str,
        anthropic_api_key: str | None = None,
        read_only: bool = True,
        use_enhancements: bool = True,
        few_shot_path: str | None = None,
        enable_reranker: bool = True,
        enable_multidoc: bool = True,
        enable_fewshot: bool = True,
        synthesis_model: str | None = None,
        cypher_pack_path: str | None = None,
        enable_multi_query: bool = False,
        *,
        config: AgentConfig | None = None,
        embedder: Embedder | None = None,
        llm_client: LLMClient | None = None,
        top_k: int = 8,
        candidates: int = 30,
        rerank_weights: RerankWeights | None = None,
        llm_timeout: float = 30.0,
        offline: bool = False,
        retrieval: str = "graph",
        enable_multistep: bool = False,
        multistep_config: MultiStepConfig | str | os.PathLike[str] | None = None,
        llm_base_url: str | None = None,
        answer_words: int = 40,
        llm_api: str = "anthropic",
        fast_model: str | None = None,
        llm_cache: str | os.PathLike[str] | None = None,
    ) -> None:
        if not isinstance(db_path, str | os.PathLike) or not str(db_path).strip():
            raise InvalidArgumentError("db_path must be a non-empty path")
        if config is None:
            settings = (
                multistep_config
                if isinstance(multistep_config, MultiStepConfig)
                else load_config(multistep_config)
            )
            config = AgentConfig(
                retrieval="multistep" if enable_multistep else retrieval,
                top_k=top_k,
                candidates=candidates,
                multi_query=enable_multi_query,
                multistep_config=settings,
                reranker=use_enhancements and enable_reranker,
                rerank_weights=rerank_weights,
                multidoc=use_enhancements and enable_multidoc,
                fewshot=use_enhancements and enable_fewshot,
                few_shot_path=few_shot_path,
                cypher_pack_path=cypher_pack_path,
                synthesis_model=synthesis_model or AgentConfig.synthesis_model,
                llm_timeout=llm_timeout,
                llm_base_url=llm_base_url,
                offline=offline,
                answer_words=answer_words,
                llm_api=llm_api,
                fast_model=fast_model,
                llm_cache=None if llm_cache is None else str(llm_cache),
            )
        elif not isinstance(config, AgentConfig):
            raise InvalidArgumentError("config must be an AgentConfig")
        self.config = config
        self.db_path = str(db_path)
        self.store = GraphStore.open(self.db_path, read_only=read_only)
        try:
            # a graph an interrupted write left half-changed is not answered from
            self.store.require_whole()
            # the graph's own model by default (its vectors are only comparable to its
            # own); an embedder of another model is refused by the semantic retriever
            self.embedder = embedder or Embedder(self.store.meta().get("model"))
            # offline=True never calls a model, even with a key in the environment
            # (evaluation runs and reproducible benchmarks)
            self.llm: LLMClient | None = (
                None if config.offline else llm_client or client_for(config, anthropic_api_key)
            )
            self.components = GraphComponents(self.store, self.embedder, llm=self.llm)
            self.pipeline: QueryPipeline = self.components.pipeline(config)
        except BaseException:
            self.store.close()
            raise

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        self.store.close()
        close = getattr(self.llm, "close", None)
        if callable(close):
            close()

    def __enter__(self) -> KnowledgeGraphAgent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ main entry
    def query(
        self,
        question: str,
        *,
        top_k: int | None = None,
        multistep: bool | None = None,
        route: Complexity | str | None = None,
        multistep_config: MultiStepConfig | None = None,
        on_event: QueryEventHandler | None = None,
    ) -> QueryResult:
        """Answer ``question`` from the graph (see :mod:`kg_agent.pipeline`).

        For this question only: ``top_k`` sections go to synthesis; ``multistep``
        switches the multi-step retriever on or off, ``route`` forces its routing
        (``"simple"``/``"complex"``, implies ``multistep``) and ``multistep_config``
        replaces its settings; ``on_event`` is told each part as it happens.
        """
        q = check_question(question)
        config = self.configured(
            top_k=top_k, multistep=multistep, route=route, multistep_config=multistep_config
        )
        return self.components.pipeline(config).run(q, on_event)

    def configured(
        self,
        *,
        top_k: int | None = None,
        multistep: bool | None = None,
        route: Complexity | str | None = None,
        multistep_config: MultiStepConfig | None = None,
        **changes: Any,
    ) -> AgentConfig:
        """The agent's configuration with per-call changes (``changes``: any other
        :class:`AgentConfig` field); a ``top_k`` over the candidates raises them."""
        if top_k is not None:
            changes["top_k"] = top_k
            changes["candidates"] = max(changes.get("candidates", self.config.candidates), top_k)
        if isinstance(route, Complexity):
            route = route.value
        if route is not None and route != "auto":
            changes["route"] = route
            multistep = True
        if multistep is True:
            changes["retrieval"] = "multistep"
        elif multistep is False and self.config.retrieval == "multistep":
            changes["retrieval"] = "graph"
        if multistep_config is not None:
            changes["multistep_config"] = multistep_config
        return self.config.replace(**changes) if changes else self.config

    # ------------------------------------------------------------------ retrieval API
    @property
    def retriever(self) -> SemanticRetriever:
        """The graph's semantic (dense) retriever."""
        return self.components.dense

    @property
    def enable_multi_query(self) -> bool:
        """Whether questions are also searched as two rephrasings (the reference's flag)."""
        return self.config.multi_query

    def semantic_search(self, question: str, top_k: int = 10) -> list[dict[str, Any]]:
        """Sections most similar to ``question``: dicts with title, similarity, content, …"""
        result = self.components.dense.search(check_question(question), top_k)
        return [_as_dict(e) for e in result.evidence]

    def _vector_primary_retrieve(self, question: str, max_results: int = 5) -> list[dict[str, Any]]:
        """Semantic search, or its multi-query fan-out when ``enable_multi_query``."""
        if self.enable_multi_query:
            return self._multi_query_retrieve(question, max_results=max_results)
        return self.semantic_search(question, top_k=max_results)

    def _multi_query_retrieve(self, question: str, max_results: int = 5) -> list[dict[str, Any]]:
        """Search the question and two rephrasings; dedupe by title keeping the highest
        similarity; sorted by similarity; never raises for the rephrasing call."""
        fan_out = self.components.multi_query(self.components.dense, self.config.llm_timeout)
        found = fan_out.fan_out(question, clamp_results(max_results))
        return [_as_dict(e) for e in found.evidence]

    @staticmethod
    def _score_section_quality(content: str, question: str) -> float:
        """Length and keyword overlap of a section, in [0, 1] (below 20 words: 0)."""
        return score_section_quality(content, question)

    def source_texts(
        self, source_titles: Sequence[str], max_articles: int = 5, question: str | None = None
    ) -> dict[str, str]:
        """Text of the given articles, title → text, dropping low-quality sections.

        With a question, sections scoring under :attr:`CONTENT_QUALITY_THRESHOLD` are
        dropped; if that leaves no text at all, one global fallback returns the
        articles' whole content (never a per-article fallback, which would readmit
        the stubs the filter exists to drop).
        """
        titles = list(dict.fromkeys(source_titles))[:max_articles]
        sections = {t: self.store.article_sections(t) for t in titles}
        threshold = self.CONTENT_QUALITY_THRESHOLD
        out: dict[str, str] = {}
        for t, rows in sections.items():
            kept = [
                r["text"]
                for r in rows
                if question is None or self._score_section_quality(r["text"], question) >= threshold
            ]
            if kept:
                out[t] = "\n\n".join(kept)
        if not out and question is not None:
            out = {t: "\n\n".join(r["text"] for r in rows) for t, rows in sections.items() if rows}
        return out

    def _fetch_source_text(
        self, source_titles: Sequence[str], max_articles: int = 5, question: str | None = None
    ) -> str:
        """The articles' text assembled (each headed by its title), quality-filtered
        when ``question`` is given (see :meth:`source_texts`)."""
        texts = self.source_texts(source_titles, max_articles, question)
        return "\n\n".join(f"{title}\n{text}" for title, text in texts.items())

    def _build_synthesis_context(
        self, question: str, evidence: Sequence[Evidence]
    ) -> tuple[NumberedEvidence, str]:
        """The numbered evidence and the full Claude prompt (few-shot examples included),
        also on an offline agent (to see what Claude would be sent)."""
        synthesizer = self.pipeline.synthesizer
        if isinstance(synthesizer, ClaudeSynthesizer):
            return synthesizer.context(question, evidence)
        fewshot = (
            FewShotManager(self.config.few_shot_path, embedder=self.embedder)
            if self.config.fewshot
            else None
        )
        numbering = MultiDocSynthesizer(group=self.config.multidoc)
        return claude_prompt(
            question,
            evidence,
            numbering,
            fewshot,
            sentences=synthesizer.sentences,
            spans=synthesizer.spans,
        )

    # ------------------------------------------------------------------ structure questions
    def run_cypher_pack(
        self, name: str, pack: str | None = None, **params: Any
    ) -> list[dict[str, Any]]:
        """Run a named read-only query of a Cypher pack with parameters."""
        return self.components.structural(self.config.cypher_pack_path).run(name, pack, **params)


def _as_dict(ev: Evidence) -> dict[str, Any]:
    d = ev.to_dict()
    d["id"] = ev.section_id
    return d

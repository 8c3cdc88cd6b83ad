"""``KnowledgeGraphAgent``: answer a question from the graph, with cited evidence.

``query()`` runs the pipeline its :class:`~kg_agent.config.AgentConfig` describes
(:mod:`kg_agent.pipeline`): structural questions go to a Cypher pack; the configured
retriever finds evidence (the question's entities and their graph neighbours by
default); the quality filter, the graph rerank and the top-k cut rank it; the
synthesizer answers: Claude when a key is configured, the extractive answer otherwise
or when the API fails (logged, never raised).
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from kg_agent.config import RETRIEVAL_MODES, AgentConfig
from kg_agent.embedding import Embedder
from kg_agent.exceptions import InvalidArgumentError
from kg_agent.llm.client import LLMClient, UsageMeter, client_from_settings
from kg_agent.multistep.classifier import Complexity
from kg_agent.multistep.config import MultiStepConfig, load_config
from kg_agent.pipeline import GraphComponents, QueryPipeline, build_pipeline
from kg_agent.retrieval.base import Evidence
from kg_agent.retrieval.multi_query import clamp_results
from kg_agent.retrieval.quality import CONTENT_QUALITY_THRESHOLD, score_section_quality
from kg_agent.retrieval.rerank import RerankWeights
from kg_agent.retrieval.semantic import SemanticRetriever
from kg_agent.store import GraphStore
from kg_agent.synthesis.context import Citation, MultiDocSynthesizer, NumberedEvidence
from kg_agent.synthesis.fewshot import FewShotManager
from kg_agent.synthesis.synthesizer import ClaudeSynthesizer, claude_prompt

__all__ = [
    "MAX_QUESTION_LENGTH",
    "RETRIEVAL_MODES",
    "KnowledgeGraphAgent",
    "QueryEventHandler",
    "QueryResult",
    "answer_and_rank",
    "answer_question",
    "check_question",
]

log = logging.getLogger(__name__)

MAX_QUESTION_LENGTH = 4000
_CITE_MARK = re.compile(r"\s*\[\d{1,3}\]")

#: Told what a query has done so far, as it happens (``kg-agent serve`` streams it):
#: ``("retrieved", {...})`` once evidence is ranked, ``("evidence", {"items": [...]})``
#: with the numbering a streamed answer cites, then ``("text", {"text": piece})`` as a
#: model writes the answer (offline answers arrive whole, in the result).
QueryEventHandler = Callable[[str, dict[str, Any]], None]


@dataclass(slots=True)
class QueryResult:
    """What :meth:`KnowledgeGraphAgent.query` returns; ``to_dict()`` is the JSON form.

    ``path`` is ``"claude"`` when Claude wrote the answer, ``"offline"`` otherwise;
    ``mode`` says how (``claude``, ``extractive`` or ``graph`` for Cypher-pack
    answers). ``trace`` lists each stage with what it did.

    ``short_answer`` is the answer in a few words, with its own ``[n]`` (None when no
    span was found); ``answerable`` is False when the evidence does not support an
    answer ("not in the graph"), ``support`` the evidence check's score (0..1).
    ``evidence`` runs in citation order: ``[n]`` is ``evidence[n - 1]``, the cited
    sections first, then the rest as ranked.
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
    multistep: dict[str, Any] | None = None  # the multi-step trace, when that engine ran
    short_answer: str | None = None
    answerable: bool = True
    support: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["citations"] = [c.to_dict() for c in self.citations]
        return d


class KnowledgeGraphAgent:
    """Question answering over a graph built by ``kg-agent load``.

    Configure it with ``config=AgentConfig(...)``, or with the keyword arguments of
    the original design (``use_enhancements``, ``enable_reranker``, ``top_k``,
    ``retrieval``, …), which map onto the same :class:`AgentConfig`; ``config`` wins
    where both are given. ``embedder`` defaults to the model the graph was embedded
    with; ``llm_client`` to a Claude client when a key is configured (``offline``
    never calls one).
    """

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
                retrieval=retrieval,
                top_k=top_k,
                candidates=candidates,
                multi_query=enable_multi_query,
                multistep=enable_multistep,
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
            )
        elif not isinstance(config, AgentConfig):
            raise InvalidArgumentError("config must be an AgentConfig")
        self.config = config
        self.db_path = str(db_path)
        self.store = GraphStore.open(self.db_path, read_only=read_only)
        try:
            # the graph's own model by default (its vectors are only comparable to its
            # own); an embedder of another model is refused by the semantic retriever
            self.embedder = embedder or Embedder(self.store.meta().get("model"))
            # offline=True never calls a model, even with a key in the environment
            # (evaluation runs and reproducible benchmarks)
            self.llm: LLMClient | None = (
                None
                if config.offline
                else llm_client or client_from_settings(anthropic_api_key, config.llm_base_url)
            )
            self.components = GraphComponents(self.store, self.embedder, llm=self.llm)
            self.pipeline: QueryPipeline = build_pipeline(self.components, config)
        except BaseException:
            self.store.close()
            raise

    @property
    def retriever(self) -> SemanticRetriever:
        """The graph's semantic (dense) retriever."""
        return self.components.dense

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

    # ------------------------------------------------------------------ retrieval API
    def semantic_search(self, question: str, top_k: int = 10) -> list[dict[str, Any]]:
        """Sections most similar to ``question``: dicts with title, similarity, content, …"""
        result = self.components.dense.search(check_question(question), top_k)
        return [_as_dict(e) for e in result.evidence]

    def _multi_query_retrieve(self, question: str, max_results: int = 5) -> list[dict[str, Any]]:
        """Search the question and two rephrasings; dedupe by title; never raises."""
        found = self.components.multi_query(self.config.llm_timeout).fan_out(
            question, clamp_results(max_results)
        )
        return [_as_dict(e) for e in found.evidence]

    @staticmethod
    def _score_section_quality(content: str, question: str) -> float:
        return score_section_quality(content, question)

    def _fetch_source_text(
        self, source_titles: Sequence[str], max_articles: int = 5, question: str | None = None
    ) -> dict[str, str]:
        """Text of the given articles, title → text, dropping low-quality sections.

        With a question, sections scoring under the threshold are dropped; if
        that leaves no text at all, one global fallback returns the articles'
        whole content (never a per-article fallback, which would readmit the
        stubs the filter exists to drop).
        """
        titles = list(dict.fromkeys(source_titles))[:max_articles]
        sections = {t: self.store.article_sections(t) for t in titles}
        out: dict[str, str] = {}
        for t, rows in sections.items():
            kept = [
                r["text"]
                for r in rows
                if question is None
                or score_section_quality(r["text"], question) >= CONTENT_QUALITY_THRESHOLD
            ]
            if kept:
                out[t] = "\n\n".join(kept)
        if not out and question is not None:
            out = {t: "\n\n".join(r["text"] for r in rows) for t, rows in sections.items() if rows}
        return out

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
        return claude_prompt(question, evidence, numbering, fewshot)

    # ------------------------------------------------------------------ structure questions
    def run_cypher_pack(
        self, name: str, pack: str | None = None, **params: Any
    ) -> list[dict[str, Any]]:
        """Run a named read-only query of a Cypher pack with parameters."""
        return self.components.structural(self.config.cypher_pack_path).run(name, pack, **params)

    # ------------------------------------------------------------------ main entry
    def query(
        self,
        question: str,
        *,
        top_k: int | None = None,
        multistep: bool | None = None,
        route: Complexity | str | None = None,
        multistep_config: MultiStepConfig | None = None,
    ) -> QueryResult:
        """Answer ``question`` from the graph; see the module docstring for the stages.

        ``multistep`` (default: the configuration's) runs the multi-step engine;
        ``route`` forces it to ``"simple"`` or ``"complex"``; ``top_k`` and
        ``multistep_config`` override the configuration for this question.
        """
        q = check_question(question)
        pipeline = self.pipeline
        if top_k is not None and top_k != self.config.top_k:
            pipeline = build_pipeline(self.components, self.config.replace(top_k=top_k))
        return answer_question(
            pipeline, q, multistep=multistep, route=route, multistep_config=multistep_config
        )


def answer_question(
    pipeline: QueryPipeline,
    q: str,
    *,
    multistep: bool | None = None,
    route: Complexity | str | None = None,
    multistep_config: MultiStepConfig | None = None,
    on_event: QueryEventHandler | None = None,
) -> QueryResult:
    """Run ``pipeline`` on the (checked) question ``q``: what ``query()`` does."""
    return answer_and_rank(
        pipeline,
        q,
        multistep=multistep,
        route=route,
        multistep_config=multistep_config,
        on_event=on_event,
    )[0]


def answer_and_rank(
    pipeline: QueryPipeline,
    q: str,
    *,
    multistep: bool | None = None,
    route: Complexity | str | None = None,
    multistep_config: MultiStepConfig | None = None,
    on_event: QueryEventHandler | None = None,
) -> tuple[QueryResult, list[Evidence]]:
    """The answer, and the evidence in rank order (what the eval measures recall on;
    the result's own evidence runs in citation order)."""
    components = pipeline.components
    t_start = time.perf_counter()
    # embed + search (summed over every search the query ran) are the parts
    # of retrieve spent embedding the query and scanning or probing the index.
    timings: dict[str, float] = {"embed": 0.0, "search": 0.0}
    trace: list[dict[str, Any]] = []
    meter = UsageMeter()

    graph = None
    if pipeline.structural is not None:
        structure = pipeline.structural.search(q)
        trace += structure.trace
        graph = structure.extra.get("graph")
    warnings = components.warnings(pipeline.config)
    t0 = time.perf_counter()
    force = route.value if isinstance(route, Complexity) else route
    found = pipeline.retrieve(
        q, multistep=multistep, route=force, multistep_config=multistep_config
    )
    timings["retrieve"] = time.perf_counter() - t0
    for key in ("embed", "search"):
        timings[key] += found.timings.get(key, 0.0)
    meter.merge(found.usage)
    warnings += found.warnings
    ms = found.extra.get("multistep")
    t0 = time.perf_counter()
    ranked = pipeline.rank(q, found)
    trace += ranked.trace  # the retriever's steps, then the stages'
    timings["rerank"] = time.perf_counter() - t0
    on_text = None
    if on_event is not None:
        on_event(
            "retrieved",
            {
                "trace": trace,
                "evidence": len(ranked.evidence),
                "graph": graph,
                "timings": {k2: round(v, 4) for k2, v in timings.items()},
            },
        )
        numbered_now = pipeline.synthesizer.numbering.number(ranked.evidence)
        on_event(
            "evidence",
            {"items": [dict(ev.to_dict(), n=n) for n, ev in numbered_now.items]},
        )

        def on_text(piece: str) -> None:
            on_event("text", {"text": piece})

    t0 = time.perf_counter()
    synthesis = pipeline.synthesizer.synthesize(q, ranked.evidence, on_text)
    meter.merge(synthesis.usage)
    warnings += synthesis.warnings
    texts, numbered = synthesis.numbered.renumbered([synthesis.answer])
    answer, mode = texts[0], synthesis.mode
    short_text = _CITE_MARK.sub("", synthesis.short_answer or "").strip() or None
    # path says whether Claude wrote the prose, also when a graph answer is
    # prepended below and mode becomes "graph".
    path = "claude" if mode == "claude" else "offline"
    if graph is not None:  # the graph's rows answer; a span from the prose would not
        answer = _format_graph_answer(graph) + "\n\n" + answer
        mode = "graph"
        short_text = None
    timings["synthesis"] = time.perf_counter() - t0
    timings["total"] = time.perf_counter() - t_start
    trace.append(
        {
            "stage": "synthesis",
            "mode": mode,
            "evidence": len(ranked.evidence),
            "answerable": synthesis.answerable,
            "support": synthesis.support,
        }
    )
    ordered = [ev for _, ev in numbered.items]
    result = QueryResult(
        question=q,
        answer=answer,
        citations=numbered.citations_in(answer),
        evidence=ordered,
        path=path,
        mode=mode,
        trace=trace,
        usage=meter.as_dict(),
        timings={k2: round(v, 4) for k2, v in timings.items()},
        warnings=warnings,
        graph=graph,
        multistep=ms.trace() if ms is not None else None,
        short_answer=short_text,
        answerable=synthesis.answerable,
        support=synthesis.support,
    )
    return result, ranked.evidence


def check_question(question: str) -> str:
    """The question, whitespace-normalised; empty or over-long ones are refused."""
    if not isinstance(question, str) or not question.strip():
        raise InvalidArgumentError("the question is empty")
    q = " ".join(question.split())
    if len(q) > MAX_QUESTION_LENGTH:
        raise InvalidArgumentError(
            f"the question is {len(q):,} characters long; the limit is {MAX_QUESTION_LENGTH:,}"
        )
    return q


def _as_dict(ev: Evidence) -> dict[str, Any]:
    d = ev.to_dict()
    d["id"] = ev.section_id
    return d


def _format_graph_answer(graph: dict[str, Any]) -> str:
    rows = graph["rows"]
    name = graph["query"]
    if not rows:
        return f"Graph ({name}): no result in the graph."
    shown = "; ".join(", ".join(f"{k}={v}" for k, v in row.items()) for row in rows[:10])
    more = f" (+{len(rows) - 10} more)" if len(rows) > 10 else ""
    return f"Graph ({name}): {shown}{more}"

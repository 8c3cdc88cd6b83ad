"""``KnowledgeGraphAgent``: answer a question from the graph, with cited evidence.

Pipeline: structural questions go to a Cypher pack; everything else runs
semantic search (optionally multi-query), the section-quality filter, graph
reranking, then synthesis: Claude when a key is configured, an extractive
answer otherwise or when the API fails (logged, never raised).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kg_agent.cypher_packs import (
    CypherPack,
    bind_intent,
    default_pack_dir,
    load_packs,
    run_query,
    structural_intent,
)
from kg_agent.embedding import Embedder
from kg_agent.exceptions import InvalidArgumentError
from kg_agent.llm.client import LLMClient, LLMError, UsageMeter, client_from_settings
from kg_agent.multistep.classifier import Complexity
from kg_agent.multistep.config import MultiStepConfig, load_config
from kg_agent.multistep.engine import MultiStepEngine
from kg_agent.retrieval.base import Evidence, RetrievalResult, Retriever
from kg_agent.retrieval.entities import QuestionEntityLinker
from kg_agent.retrieval.graph_walk import EntityGraphRetriever, evidence_tier
from kg_agent.retrieval.hybrid import HybridRetriever
from kg_agent.retrieval.keyword import KeywordRetriever, text_off
from kg_agent.retrieval.multi_query import (
    EXPANSION_MODEL,
    MAX_QUESTION_CHARS,
    clamp_results,
    llm_variants,
    merge_by_title,
    offline_variants,
)
from kg_agent.retrieval.quality import CONTENT_QUALITY_THRESHOLD, score_section_quality
from kg_agent.retrieval.rerank import GraphReranker, RerankWeights
from kg_agent.retrieval.semantic import SEMANTIC_OFF, SemanticRetriever
from kg_agent.store import GraphStore
from kg_agent.synthesis.claude import (
    DEFAULT_SYNTHESIS_MODEL,
    SYSTEM_PROMPT,
    build_prompt,
    chain_text,
)
from kg_agent.synthesis.context import Citation, MultiDocSynthesizer, NumberedEvidence
from kg_agent.synthesis.extractive import extractive_answer
from kg_agent.synthesis.fewshot import FewShotManager, format_examples

log = logging.getLogger(__name__)

MAX_QUESTION_LENGTH = 4000
#: "graph": question entities and their neighbours first (see graph_walk);
#: "hybrid": dense + BM25; "dense": embeddings only.
RETRIEVAL_MODES = ("graph", "hybrid", "dense")
#: Evidence sources the quality filter keeps whatever their word overlap.
GRAPH_SOURCES = frozenset({"entity", "graph", "bridge_linked"})


@dataclass(slots=True)
class QueryResult:
    """What :meth:`KnowledgeGraphAgent.query` returns; ``to_dict()`` is the JSON form.

    ``path`` is ``"claude"`` when Claude wrote the answer, ``"offline"`` otherwise;
    ``mode`` says how (``claude``, ``extractive`` or ``graph`` for Cypher-pack
    answers). ``trace`` lists each stage with what it did.
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

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["citations"] = [c.to_dict() for c in self.citations]
        return d


class KnowledgeGraphAgent:
    """Question answering over a graph built by ``kg-agent load``."""

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
    ) -> None:
        if not isinstance(db_path, str | os.PathLike) or not str(db_path).strip():
            raise InvalidArgumentError("db_path must be a non-empty path")
        if not 1 <= top_k <= 50:
            raise InvalidArgumentError(f"top_k must be between 1 and 50, not {top_k}")
        if candidates < top_k:
            raise InvalidArgumentError(f"candidates ({candidates}) must be >= top_k ({top_k})")
        if retrieval not in RETRIEVAL_MODES:
            raise InvalidArgumentError(
                f"retrieval must be one of {', '.join(RETRIEVAL_MODES)}, not {retrieval!r}"
            )
        self.db_path = str(db_path)
        self.store = GraphStore.open(self.db_path, read_only=read_only)
        # the graph's own model by default (its vectors are only comparable to its own);
        # an embedder of another model is refused by the semantic retriever
        self.embedder = embedder or Embedder(self.store.meta().get("model"))
        self.retriever = SemanticRetriever(self.store, self.embedder)
        self.retrieval = retrieval
        self.keyword = KeywordRetriever(self.store)
        self.hybrid = HybridRetriever(self.retriever, self.keyword, depth=candidates)
        self.linker = QuestionEntityLinker(self.store, saved=self.store.linker_path())
        self.entity_graph = EntityGraphRetriever(
            self.store, self.retriever, self.hybrid, linker=self.linker, depth=candidates
        )
        self.enable_reranker = use_enhancements and enable_reranker
        self.enable_multidoc = use_enhancements and enable_multidoc
        self.enable_fewshot = use_enhancements and enable_fewshot
        self.enable_multi_query = enable_multi_query
        self.synthesis_model = synthesis_model or DEFAULT_SYNTHESIS_MODEL
        self.top_k = top_k
        self.candidates = candidates
        self.llm_timeout = llm_timeout
        # offline=True never calls a model, even with a key in the environment
        # (evaluation runs and reproducible benchmarks).
        self.llm: LLMClient | None = (
            None if offline else llm_client or client_from_settings(anthropic_api_key)
        )
        self.reranker = GraphReranker(self.store, weights=rerank_weights)
        self.enable_multistep = enable_multistep
        if isinstance(multistep_config, MultiStepConfig):
            self.multistep_config = multistep_config
        else:
            self.multistep_config = load_config(multistep_config)
        self.multistep = MultiStepEngine(
            self.entity_graph,
            config=self.multistep_config,
            llm=self.llm,
            llm_timeout=min(llm_timeout, 15.0),
        )
        self.synthesizer = MultiDocSynthesizer(group=self.enable_multidoc)
        self.fewshot = (
            FewShotManager(few_shot_path, embedder=self.embedder) if (self.enable_fewshot) else None
        )
        pack_dir = Path(cypher_pack_path) if cypher_pack_path else default_pack_dir()
        self.packs: dict[str, CypherPack] = load_packs(pack_dir)

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
        result = self.retriever.search(check_question(question), top_k)
        return [_as_dict(e) for e in result.evidence]

    def _multi_query_retrieve(self, question: str, max_results: int = 5) -> list[dict[str, Any]]:
        """Search the question and two rephrasings; dedupe by title; never raises."""
        evidence, _ = self._multi_query(question, clamp_results(max_results), UsageMeter(), [])
        return [_as_dict(e) for e in evidence]

    def _multi_query(
        self,
        question: str,
        max_results: int,
        meter: UsageMeter,
        warnings: list[str],
        timings: dict[str, float] | None = None,
    ) -> tuple[list[Evidence], dict[str, Any]]:
        q = question[:MAX_QUESTION_CHARS]
        variants: list[str] = []
        path = "offline"
        try:
            if self.llm is not None:
                variants = llm_variants(
                    q, self.llm, model=EXPANSION_MODEL, meter=meter, timeout=self.llm_timeout
                )
                path = "claude"
            else:
                variants = offline_variants(q, self._entity_titles)
        except LLMError as exc:
            msg = f"query expansion failed ({exc.kind}): searching the question alone"
            log.warning(msg)
            warnings.append(msg)
            variants = []
        except Exception as exc:  # never let expansion break a query
            msg = f"query expansion failed ({type(exc).__name__}): searching the question alone"
            log.warning(msg)
            warnings.append(msg)
            variants = []
        lists = [
            _timed_search(self.retriever, v, max_results, timings).evidence for v in [q, *variants]
        ]
        merged = merge_by_title(lists, max_results)
        return merged, {"stage": "multi_query", "path": path, "queries": [q, *variants]}

    def _entity_titles(self, question: str) -> list[str]:
        hits = self.store.search_article_titles(question, k=5)
        return [t for t, _ in hits]

    def _vector_primary_retrieve(
        self,
        question: str,
        top_k: int,
        meter: UsageMeter,
        warnings: list[str],
        trace: list[dict[str, Any]],
        timings: dict[str, float] | None = None,
    ) -> list[Evidence]:
        if self.enable_multi_query:
            # Fan-out keeps one section per article; ask for more to leave the
            # quality filter and reranker something to choose from.
            evidence, info = self._multi_query(question, min(20, top_k), meter, warnings, timings)
            trace.append({**info, "results": len(evidence)})
            extra = _timed_search(self.retriever, question, top_k, timings).evidence
            seen = {e.section_id for e in evidence}
            evidence += [e for e in extra if e.section_id not in seen]
            return evidence
        retriever = {
            "dense": self.retriever,
            "hybrid": self.hybrid,
            "graph": self.entity_graph,
        }[self.retrieval]
        result = _timed_search(retriever, question, top_k, timings)
        trace.append(
            {
                "stage": "semantic_search" if self.retrieval == "dense" else "retrieve",
                "retrieval": self.retrieval,
                "mode": self.retriever.mode,
                "results": len(result.evidence),
                "notes": list(result.notes),
            }
        )
        return result.evidence

    # ------------------------------------------------------------------ quality filter
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

    def _filter_quality(
        self, evidence: list[Evidence], question: str, trace: list[dict[str, Any]]
    ) -> list[Evidence]:
        kept = []
        exempt = 0
        for ev in evidence:
            q = score_section_quality(ev.content, question)
            ev.scores["quality"] = q
            if q >= CONTENT_QUALITY_THRESHOLD:
                kept.append(ev)
            elif ev.source in GRAPH_SOURCES:
                # found through the graph (a named entity or its neighbour): a bridge
                # passage shares few words with the question by nature (measured: the
                # filter cost 10 points of Recall@5 on 2Wiki when it dropped these)
                kept.append(ev)
                exempt += 1
        trace.append(
            {
                "stage": "quality_filter",
                "kept": len(kept),
                "dropped": len(evidence) - len(kept),
                "kept_by_graph": exempt,
                "threshold": CONTENT_QUALITY_THRESHOLD,
            }
        )
        return kept or evidence  # all dropped: keep the ranking rather than answer from nothing

    # ------------------------------------------------------------------ synthesis
    def _build_synthesis_context(
        self, question: str, evidence: Sequence[Evidence]
    ) -> tuple[NumberedEvidence, str]:
        """The numbered evidence and the full Claude prompt (few-shot examples included)."""
        numbered = self.synthesizer.number(evidence)
        examples = ""
        if self.fewshot is not None:
            examples = format_examples(self.fewshot.select(question, k=2))
        chain = chain_text(numbered.items)
        return numbered, build_prompt(question, numbered.text, examples, chain)

    def _synthesize(
        self,
        question: str,
        evidence: list[Evidence],
        meter: UsageMeter,
        warnings: list[str],
    ) -> tuple[str, NumberedEvidence, str]:
        if self.llm is None or not evidence:
            # Offline: no prompt to build, so no few-shot selection either.
            numbered = self.synthesizer.number(evidence)
            return extractive_answer(question, numbered), numbered, "extractive"
        numbered, prompt = self._build_synthesis_context(question, evidence)
        try:
            reply = self.llm.complete(
                model=self.synthesis_model,
                system=SYSTEM_PROMPT,
                prompt=prompt,
                max_tokens=700,
                timeout=self.llm_timeout,
            )
            meter.record(reply)
            if reply.text.strip():
                return reply.text.strip(), numbered, "claude"
            raise LLMError("bad_response", "empty answer")
        except LLMError as exc:
            meter.record_failure()
            msg = f"synthesis with {self.synthesis_model} failed ({exc.kind}): extractive answer"
            log.warning(msg)
            warnings.append(msg)
        return extractive_answer(question, numbered), numbered, "extractive"

    # ------------------------------------------------------------------ structure questions
    def run_cypher_pack(
        self, name: str, pack: str | None = None, **params: Any
    ) -> list[dict[str, Any]]:
        """Run a named read-only query of a Cypher pack with parameters."""
        chosen = self._pack_for(name, pack)
        return run_query(self.store, chosen, name, **params)

    def _pack_for(self, name: str, pack: str | None) -> CypherPack:
        from kg_agent.cypher_packs import CypherPackError

        if pack is not None:
            if pack not in self.packs:
                raise CypherPackError(f"no Cypher pack named {pack!r}")
            return self.packs[pack]
        for p in self.packs.values():
            if name in p:
                return p
        known = sorted(q.name for p in self.packs.values() for q in p)
        raise CypherPackError(f"no pack query named {name!r}; known: {', '.join(known)}")

    def _graph_answer(self, question: str, trace: list[dict[str, Any]]) -> dict[str, Any] | None:
        intent = structural_intent(question)
        if intent is None:
            return None
        params = bind_intent(self.store, intent)
        trace.append(
            {
                "stage": "structure",
                "query": intent.query,
                "entities": list(intent.entities),
                "bound": params,
            }
        )
        if params is None:
            return None
        try:
            rows = self.run_cypher_pack(intent.query, **params)
        except Exception as exc:
            log.warning("cypher pack %s failed: %s", intent.query, exc)
            return None
        return {"query": intent.query, "params": params, "rows": rows}

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

        ``multistep`` (default: the constructor's ``enable_multistep``) runs the
        multi-step engine; ``route`` forces it to ``"simple"`` or ``"complex"``.
        """
        q = check_question(question)
        k = top_k or self.top_k
        t_start = time.perf_counter()
        # embed + search (summed over every search the query ran) are the parts
        # of retrieve spent embedding the query and scanning or probing the index.
        timings: dict[str, float] = {"embed": 0.0, "search": 0.0}
        trace: list[dict[str, Any]] = []
        warnings: list[str] = []
        meter = UsageMeter()

        graph = self._graph_answer(q, trace)
        if not self.retriever.enabled:
            warnings.append(SEMANTIC_OFF)
        if self.retrieval != "dense" and not self.keyword.enabled:
            warnings.append(text_off(self.store))
        use_multistep = self.enable_multistep if multistep is None else multistep
        ms_trace: dict[str, Any] | None = None
        t0 = time.perf_counter()
        if use_multistep:
            cfg = multistep_config or self.multistep_config
            ms = self.multistep.run(q, force=route, config=cfg, meter=meter)
            evidence, ms_trace = ms.evidence, ms.trace()
            warnings += ms.warnings
            trace.append(
                {
                    "stage": "multistep",
                    "route": ms.route,
                    "steps": len(ms.steps),
                    "stop_reason": ms.stop_reason,
                    "results": len(evidence),
                }
            )
        else:
            evidence = self._vector_primary_retrieve(
                q, self.candidates, meter, warnings, trace, timings
            )
        timings["retrieve"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        evidence = self._filter_quality(evidence, q, trace)
        if self.enable_reranker:
            tiered = use_multistep or (self.retrieval == "graph" and not self.enable_multi_query)
            ranked = self.reranker.rerank(evidence)
            if tiered:
                # graph retrieval ranks in tiers (named entities, their neighbours,
                # the rest); PageRank reorders within a tier, never across
                ranked.sort(key=lambda e: -evidence_tier(e))
            evidence = ranked[:k]
            trace.append(
                {"stage": "rerank", "weights": self.reranker.describe(), "within_tiers": tiered}
            )
        else:
            evidence = evidence[:k]
        timings["rerank"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        answer, numbered, mode = self._synthesize(q, evidence, meter, warnings)
        # path says whether Claude wrote the prose, also when a graph answer is
        # prepended below and mode becomes "graph".
        path = "claude" if mode == "claude" else "offline"
        if graph is not None:
            answer = _format_graph_answer(graph) + "\n\n" + answer
            mode = "graph"
        timings["synthesis"] = time.perf_counter() - t0
        timings["total"] = time.perf_counter() - t_start
        trace.append({"stage": "synthesis", "mode": mode, "evidence": len(evidence)})
        ordered = [ev for _, ev in numbered.items]
        return QueryResult(
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
            multistep=ms_trace,
        )


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


def _timed_search(
    retriever: Retriever, query: str, top_k: int, timings: dict[str, float] | None
) -> RetrievalResult:
    """``retriever.search``, adding its embed and search seconds to ``timings``."""
    result = retriever.search(query, top_k)
    if timings is not None:
        for key in ("embed", "search"):
            spent = (getattr(result, "timings", None) or {}).get(key, 0.0)
            timings[key] = timings.get(key, 0.0) + float(spent)
    return result


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

"""Multi-query fan-out: search the question and two rephrasings, keep the best per article.

A question phrased unlike the passage that answers it ("Who fathered X?" vs
"X's father was ...") can miss in embedding space; two rephrasings widen the
net. With Claude, ``claude-haiku-4-5-20251001`` writes them (the question leaves
the machine: see the data notice in :mod:`kg_agent.llm.client`). Offline, the
variants come from the question itself and the graph: its content words alone,
and the question with the canonical titles of the entities it names.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from kg_agent.language.question import query_text
from kg_agent.language.tokens import STOP_WORDS, content_tokens
from kg_agent.llm.client import (
    FAST_MODEL,
    LLMClient,
    LLMError,
    UsageMeter,
    metered_complete,
    parse_json_reply,
)
from kg_agent.retrieval.base import Evidence, Query, RetrievalResult, Retriever
from kg_agent.retrieval.semantic import SemanticRetriever

log = logging.getLogger(__name__)

EXPANSION_MODEL = FAST_MODEL
MAX_QUESTION_CHARS = 500
N_VARIANTS = 2

_COUNTS = {1: "one alternative phrasing", 2: "two alternative phrasings"}
_REPHRASE_SYSTEM = (
    "You rewrite search questions for a Wikipedia retrieval system. Reply with JSON only: "
    "a list of strings holding exactly {count} of the question that keep its meaning and "
    "every name in it; use different words where you can."
)


def clamp_results(max_results: int) -> int:
    return max(1, min(20, int(max_results)))


def rephrase(
    question: str,
    k: int,
    client: LLMClient,
    *,
    model: str = FAST_MODEL,
    meter: UsageMeter | None = None,
    timeout: float = 15.0,
) -> list[str]:
    """Up to ``k`` rephrasings of ``question`` from Claude (multi-query's fan-out and the
    multi-step rewrite share it); raises LLMError on any failure, a reply that is not a
    usable list included (counted as a failure in ``meter``)."""
    count = _COUNTS.get(k, f"{k} alternative phrasings")
    reply = metered_complete(
        client,
        meter,
        model=model,
        system=_REPHRASE_SYSTEM.format(count=count),
        prompt=question[:MAX_QUESTION_CHARS],
        max_tokens=80 * k + 96,
        timeout=timeout,
    )
    try:
        data = parse_json_reply(reply.text)
        if isinstance(data, dict):  # tolerate {"queries": [...]}
            data = data.get("queries") or data.get("rephrasings") or data.get("questions")
        if not isinstance(data, list):
            raise LLMError("bad_response", f"rewrite reply is not a list: {reply.text[:80]!r}")
        out = [q.strip() for q in data if isinstance(q, str) and q.strip()]
        if not out:
            raise LLMError("bad_response", "rewrite reply held no usable query")
    except LLMError:
        if meter is not None:
            meter.record_failure()
        raise
    return out  # possibly more or fewer than asked, or repeats: callers dedupe and cut


def llm_variants(
    question: str,
    client: LLMClient,
    *,
    model: str = EXPANSION_MODEL,
    meter: UsageMeter | None = None,
    timeout: float = 15.0,
) -> list[str]:
    """Two alternative phrasings from Claude; raises LLMError on any failure."""
    out = rephrase(question, N_VARIANTS, client, model=model, meter=meter, timeout=timeout)
    return out[:N_VARIANTS]


def offline_variants(question: str, resolve_entities: Callable[[str], list[str]]) -> list[str]:
    """Deterministic rephrasings: the content words, and the question with entity titles.

    ``resolve_entities`` maps the question to canonical article titles it names
    (title index and redirects), so "Babbage's engine" also searches "Charles
    Babbage".
    """
    words = [w for w in content_tokens(question) if w.lower() not in STOP_WORDS]
    variants = []
    keywords = " ".join(words)
    if keywords and keywords.lower() != question.lower():
        variants.append(keywords)
    titles = [t for t in resolve_entities(question) if t.lower() not in question.lower()]
    if titles:
        variants.append(f"{question} ({'; '.join(titles[:3])})")
    return variants[:N_VARIANTS]


def merge_by_title(
    result_lists: Sequence[Sequence[Evidence]], max_results: int, *, by: str = "similarity"
) -> list[Evidence]:
    """Deduplicate by article title keeping the best item, best first (``by``:
    ``"similarity"``, or ``"score"`` for retrievers whose ranking score is not a
    similarity, such as the graph retriever's tiers)."""
    best: dict[str, Evidence] = {}
    for results in result_lists:
        for ev in results:
            cur = best.get(ev.title)
            if cur is None or getattr(ev, by) > getattr(cur, by):
                best[ev.title] = ev
    ranked = sorted(best.values(), key=lambda e: (-getattr(e, by), e.title))
    return ranked[: clamp_results(max_results)]


class MultiQueryRetriever(Retriever):
    """The question and two rephrasings, each searched by ``inner`` (whichever
    retriever is configured), the best section per article, then ``inner``'s own
    ranking of the question after them (so the stages have more than one section an
    article to choose from).

    Rephrasings come from Claude when ``llm`` is given (``EXPANSION_MODEL``), else from
    :func:`offline_variants` with ``resolve_entities``; an LLM failure searches the
    question alone and says so in the result's warnings (logged once). Articles are
    merged by similarity when ``inner`` ranks by it (dense search, as the original
    design says), else by ``inner``'s ranking score.
    """

    mode = "multi_query"

    def __init__(
        self,
        inner: Retriever,
        *,
        resolve_entities: Callable[[str], list[str]],
        llm: LLMClient | None = None,
        model: str = EXPANSION_MODEL,
        llm_timeout: float = 30.0,
    ) -> None:
        self.inner = inner
        self.resolve_entities = resolve_entities
        self.llm = llm
        self.model = model
        self.llm_timeout = llm_timeout
        self.merge_by = "similarity" if isinstance(inner, SemanticRetriever) else "score"

    def variants(self, question: str) -> tuple[list[str], str, list[str], UsageMeter]:
        """The rephrasings of ``question``, who wrote them, warnings and LLM usage."""
        meter = UsageMeter()
        warnings: list[str] = []
        variants: list[str] = []
        path = "offline"
        try:
            if self.llm is not None:
                variants = llm_variants(
                    question, self.llm, model=self.model, meter=meter, timeout=self.llm_timeout
                )
                path = "claude"
            else:
                variants = offline_variants(question, self.resolve_entities)
        except LLMError as exc:
            reason = exc.located_at(self.llm).brief
            warnings.append(f"query expansion failed ({reason}): searching the question alone")
        except Exception as exc:  # never let expansion break a query
            warnings.append(
                f"query expansion failed ({type(exc).__name__}): searching the question alone"
            )
        for warning in warnings:
            log.warning(warning)
        return variants, path, warnings, meter

    def fan_out(self, question: Query, max_results: int) -> RetrievalResult:
        """The question and its rephrasings, deduplicated by article (``max_results``
        clamped to 1..20); ``trace`` says which path wrote the rephrasings."""
        text = query_text(question)
        q = text[:MAX_QUESTION_CHARS]
        variants, path, warnings, meter = self.variants(q)
        out = RetrievalResult(query=text, evidence=[], warnings=warnings, usage=meter)
        lists = []
        # the question itself keeps its reading (linked once), when it was not cut
        first: Query = question if q == text else q
        for v in [first, *variants]:
            found = self.inner.search(v, clamp_results(max_results))
            out.add_timings(found)
            lists.append(found.evidence)
        out.evidence = merge_by_title(lists, max_results, by=self.merge_by)
        info: dict[str, Any] = {"stage": "multi_query", "path": path, "queries": [q, *variants]}
        out.trace.append({**info, "results": len(out.evidence)})
        return out

    def search(self, query: Query, top_k: int = 10) -> RetrievalResult:
        t0 = time.perf_counter()
        out = self.fan_out(query, min(20, top_k))
        own = self.inner.search(query, top_k)
        out.add_timings(own)
        seen = {e.section_id for e in out.evidence}
        out.evidence = out.evidence + [e for e in own.evidence if e.section_id not in seen]
        out.multistep = own.multistep
        out.timings["total"] = time.perf_counter() - t0
        return out

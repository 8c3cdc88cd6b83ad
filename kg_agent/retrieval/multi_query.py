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

from kg_agent.llm.client import (
    FAST_MODEL,
    LLMClient,
    LLMError,
    UsageMeter,
    metered_complete,
    parse_json_reply,
)
from kg_agent.retrieval.base import Evidence, RetrievalResult, Retriever
from kg_agent.text import STOP_WORDS, content_tokens

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


def merge_by_title(result_lists: Sequence[Sequence[Evidence]], max_results: int) -> list[Evidence]:
    """Deduplicate by article title keeping the highest similarity, best first."""
    best: dict[str, Evidence] = {}
    for results in result_lists:
        for ev in results:
            cur = best.get(ev.title)
            if cur is None or ev.similarity > cur.similarity:
                best[ev.title] = ev
    ranked = sorted(best.values(), key=lambda e: (-e.similarity, e.title))
    return ranked[: clamp_results(max_results)]


class MultiQueryRetriever(Retriever):
    """The question and two rephrasings searched by ``dense``, best section per article,
    then the question's own ranking after them (so the quality filter and the reranker
    have more than one section an article to choose from).

    Rephrasings come from Claude when ``llm`` is given (``EXPANSION_MODEL``), else from
    :func:`offline_variants` with ``resolve_entities``; an LLM failure searches the
    question alone and says so in the result's warnings (logged once).
    """

    mode = "multi_query"

    def __init__(
        self,
        dense: Retriever,
        *,
        resolve_entities: Callable[[str], list[str]],
        llm: LLMClient | None = None,
        model: str = EXPANSION_MODEL,
        llm_timeout: float = 30.0,
    ) -> None:
        self.dense = dense
        self.resolve_entities = resolve_entities
        self.llm = llm
        self.model = model
        self.llm_timeout = llm_timeout

    def fan_out(self, question: str, max_results: int) -> RetrievalResult:
        """The question and its rephrasings, deduplicated by article (``max_results``
        clamped to 1..20); ``trace`` says which path wrote the rephrasings."""
        q = question[:MAX_QUESTION_CHARS]
        meter = UsageMeter()
        warnings: list[str] = []
        variants: list[str] = []
        path = "offline"
        try:
            if self.llm is not None:
                variants = llm_variants(
                    q, self.llm, model=self.model, meter=meter, timeout=self.llm_timeout
                )
                path = "claude"
            else:
                variants = offline_variants(q, self.resolve_entities)
        except LLMError as exc:
            warnings.append(f"query expansion failed ({exc.kind}): searching the question alone")
        except Exception as exc:  # never let expansion break a query
            warnings.append(
                f"query expansion failed ({type(exc).__name__}): searching the question alone"
            )
        for warning in warnings:
            log.warning(warning)
        out = RetrievalResult(query=question, evidence=[], warnings=warnings, usage=meter)
        lists = []
        for v in [q, *variants]:
            found = self.dense.search(v, clamp_results(max_results))
            out.add_timings(found)
            lists.append(found.evidence)
        out.evidence = merge_by_title(lists, max_results)
        info: dict[str, Any] = {"stage": "multi_query", "path": path, "queries": [q, *variants]}
        out.trace.append({**info, "results": len(out.evidence)})
        return out

    def search(self, query: str, top_k: int = 10) -> RetrievalResult:
        t0 = time.perf_counter()
        out = self.fan_out(query, min(20, top_k))
        own = self.dense.search(query, top_k)
        out.add_timings(own)
        seen = {e.section_id for e in out.evidence}
        out.evidence = out.evidence + [e for e in own.evidence if e.section_id not in seen]
        out.timings["total"] = time.perf_counter() - t0
        return out

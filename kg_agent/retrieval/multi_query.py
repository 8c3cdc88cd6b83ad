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
import re
from collections.abc import Callable, Sequence

from kg_agent.llm.client import (
    LLMClient,
    LLMError,
    UsageMeter,
    metered_complete,
    parse_json_reply,
)
from kg_agent.retrieval.base import Evidence
from kg_agent.retrieval.quality import STOP_WORDS

log = logging.getLogger(__name__)

EXPANSION_MODEL = "claude-haiku-4-5-20251001"
MAX_QUESTION_CHARS = 500
N_VARIANTS = 2

_SYSTEM = (
    "You rewrite search questions for a Wikipedia retrieval system. Reply with JSON only: "
    '{"queries": ["...", "..."]} holding exactly two alternative phrasings of the question '
    "that keep its meaning and every name in it; use different words where you can."
)


def clamp_results(max_results: int) -> int:
    return max(1, min(20, int(max_results)))


def llm_variants(
    question: str,
    client: LLMClient,
    *,
    model: str = EXPANSION_MODEL,
    meter: UsageMeter | None = None,
    timeout: float = 15.0,
) -> list[str]:
    """Two alternative phrasings from Claude; raises LLMError on any failure."""
    reply = metered_complete(
        client,
        meter,
        model=model,
        system=_SYSTEM,
        prompt=question,
        max_tokens=256,
        timeout=timeout,
    )
    data = parse_json_reply(reply.text)
    queries = data.get("queries") if isinstance(data, dict) else data
    if not isinstance(queries, list):
        raise LLMError("bad_response", f"expansion reply has no query list: {reply.text[:80]!r}")
    out = [q.strip() for q in queries if isinstance(q, str) and q.strip()]
    if not out:
        raise LLMError("bad_response", "expansion reply held no usable query")
    return out[:N_VARIANTS]


def offline_variants(question: str, resolve_entities: Callable[[str], list[str]]) -> list[str]:
    """Deterministic rephrasings: the content words, and the question with entity titles.

    ``resolve_entities`` maps the question to canonical article titles it names
    (title index and redirects), so "Babbage's engine" also searches "Charles
    Babbage".
    """
    words = [w for w in re.findall(r"[\w'’-]+", question) if w.lower() not in STOP_WORDS]
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

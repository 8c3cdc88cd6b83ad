"""Turn a detected gap into the next search: the query plus the terms it is missing.

Appending (rather than rewriting) keeps every name of the original question in
the search, and is deterministic, so a refinement step costs no model call.
"""

from __future__ import annotations

from kg_agent.exceptions import InvalidArgumentError
from kg_agent.language.tokens import fold, terms
from kg_agent.multistep.gaps import METRIC_SYNONYMS, GapResult, GapType
from kg_agent.multistep.planner import MAX_QUERY_CHARS

__all__ = ["METRIC_SYNONYMS", "refine_query"]


def _words(text: str) -> list[str]:
    return terms(text)


def _clip(query: str) -> str:
    if len(query) <= MAX_QUERY_CHARS:
        return query
    cut = query[:MAX_QUERY_CHARS]
    return cut.rsplit(" ", 1)[0] if " " in cut else cut


def refine_query(query: str, gap: GapResult) -> str:
    """``query`` with the gap's missing terms appended (NONE: ``query`` unchanged).

    Missing years and entities are appended as written; a missing metric brings
    its :data:`METRIC_SYNONYMS`. A word already in the query (or already
    appended) is never added again, and the result is at most
    :data:`~kg_agent.multistep.planner.MAX_QUERY_CHARS` characters: terms that
    do not fit are left off.
    """
    if not isinstance(query, str):
        raise InvalidArgumentError(f"query must be a string, got {type(query).__name__}")
    if not isinstance(gap, GapResult):
        raise InvalidArgumentError(f"gap must be a GapResult, got {type(gap).__name__}")
    if gap.gap_type is GapType.NONE:
        return query
    base = _clip(" ".join(query.split()))
    if gap.gap_type is GapType.MISSING_METRIC:
        terms = [syn for m in gap.missing for syn in METRIC_SYNONYMS.get(fold(m), ())]
    else:
        terms = list(gap.missing)
    have = {fold(w).rstrip(".") for w in _words(base)}
    out = base
    for term in terms:
        for word in _words(term):
            key = fold(word).rstrip(".")
            if key in have:
                continue
            candidate = f"{out} {word}" if out else word
            if len(candidate) > MAX_QUERY_CHARS:
                return out
            have.add(key)
            out = candidate
    return out

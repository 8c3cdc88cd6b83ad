"""What kind of answer a question wants: a comparison, a trend, a fact, or other.

The multi-step planner shapes its first steps by it (one search per compared entity,
one per year of a trend). Surface rules, not a model: the words and patterns below.
"""

from __future__ import annotations

import re
from enum import Enum

from kg_agent.language.tokens import joined_words, wordset

__all__ = ["COMPARE_WORDS", "QueryType", "classify_query_type", "find_years"]

_YEAR = re.compile(r"(?<![\d.,])\b(1\d{3}|20\d{2})\b(?![.,]\d)")
_PERCENT = re.compile(r"\d(?:[\d.,]*\d)?\s*(?:%|percent\b|per cent\b)", re.IGNORECASE)


def find_years(text: str) -> tuple[str, ...]:
    """Distinct 4-digit years 1000-2099 in ``text``, in order of first mention."""
    return tuple(dict.fromkeys(_YEAR.findall(text)))


class QueryType(str, Enum):
    """What kind of answer a question wants; picks the rule plan's shape."""

    COMPARE = "compare"
    TREND = "trend"
    FACT = "fact"
    OTHER = "other"


COMPARE_WORDS = wordset(
    "compare compared compares comparing comparison versus vs both difference "
    "differences differ differs older younger taller shorter larger bigger smaller"
)
_COMPARE_PATTERNS = (
    re.compile(r"\b(?:which|who|whose)\b[^?]*\bor\b"),  # "which came first, X or Y"
    re.compile(r"\b(?!other\b|rather\b)\w+er than\b|\b(?:more|less|fewer) \w+(?: \w+)? than\b"),
    re.compile(r"\bsame (?!time\b)\w+"),  # "the same nationality", "the same director"
)
_TREND_WORDS = wordset(
    "grew grow grows grown growing growth declined decline declines declining increased "
    "increase increases increasing decreased decrease decreases decreasing rose risen "
    "fell fallen trend trends evolution evolved evolve"
)
_TREND_PATTERNS = (
    re.compile(r"\bover (?:time|the (?:years|decades|centuries))\b"),
    re.compile(r"\bchanges? (?:in|of|over)\b|\bhow (?:has|have|did) [^?]* change\b"),
)
_WH_WORDS = wordset("who whom whose what which when where why how")


def classify_query_type(query: str) -> QueryType:
    """COMPARE, then TREND, then FACT (a wh-question), else OTHER.

    COMPARE wins over TREND: "Compare the GDP of France and Germany in 1990 and
    2000" is a comparison across entities that happens to span years. TREND is
    two or more years, a change word (grew, declined, over time...), or a
    percentage next to a year.
    """
    low = query.lower()
    words = set(joined_words(low))
    if words & COMPARE_WORDS or any(p.search(low) for p in _COMPARE_PATTERNS):
        return QueryType.COMPARE
    years = find_years(query)
    if (
        len(years) >= 2
        or words & _TREND_WORDS
        or any(p.search(low) for p in _TREND_PATTERNS)
        or (years and _PERCENT.search(query))
    ):
        return QueryType.TREND
    if words & _WH_WORDS:
        return QueryType.FACT
    return QueryType.OTHER

"""Route a question to single-pass or multi-step retrieval, cheaply and deterministically.

Multi-step retrieval costs extra searches (and, with Claude, extra calls); most
one-hop questions do not need it. This classifier adds up surface signals
(indicator words, multi-hop phrasing, entity and year counts, comparatives) into
a score in [0, 1] and calls the question COMPLEX at or above ``threshold``. Two
signals are decisive on their own: two or more named entities, and two or more
distinct years. A forced routing (the caller's ``force``) always wins, but the
score and reasons are still computed so logs show what the rules would have done.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from kg_agent.exceptions import InvalidArgumentError
from kg_agent.language.query_type import find_years

__all__ = [
    "DEFAULT_THRESHOLD",
    "Complexity",
    "ComplexityDecision",
    "QueryComplexityClassifier",
]

DEFAULT_THRESHOLD = 0.5

# Signal weights. Decisive signals weigh 1.0; the others need company unless
# they reach the default threshold alone (indicator words, multi-hop phrasing).
W_DECISIVE = 1.0
W_INDICATOR = 0.5
W_MULTI_HOP = 0.6
W_RELATION = 0.3
W_COMPARATIVE = 0.3


class Complexity(str, Enum):
    """SIMPLE: one retrieval pass. COMPLEX: the multi-step engine."""

    SIMPLE = "simple"
    COMPLEX = "complex"


@dataclass(frozen=True)
class ComplexityDecision:
    """The route taken, the score behind it, why, and the entities that were counted."""

    complexity: Complexity
    score: float
    reasons: tuple[str, ...]
    entities: tuple[str, ...] = ()


_INDICATORS = re.compile(
    r"\b(compare[sd]?|comparing|comparison|versus|vs|timeline|evolution|evolved?|evolving"
    r"|impacts?|effects?|causes?|caused|relationships?|influenced?|influences"
    r"|differences?|both|trends?|history of|over time)\b"
)
_RELATIONS = (
    r"father|mother|parents?|son|daughter|child(?:ren)?|wife|husband|spouse|brother|sister"
    r"|siblings?|grandfather|grandmother|grandson|granddaughter|uncle|aunt|nephew|niece"
    r"|director|producer|author|writer|composer|founder|creator|performer|publisher|owner"
    r"|president|ceo|capital|successor|predecessor|manufacturer|developer|designer|coach"
)
# "the director of", "father of the", "X's mother": a hop from one entity to another.
_RELATION = re.compile(
    rf"\bthe (?:paternal |maternal )?(?:{_RELATIONS}) of\b"
    rf"|\b(?:{_RELATIONS}) of the\b"
    rf"|\w['’]s? (?:paternal |maternal )?(?:{_RELATIONS})\b"
)
# An attribute asked of the entity a relation leads to ("where was the father of X born").
_ATTRIBUTE = re.compile(
    r"\b(born|died|die|birthplace|place of (?:birth|death)|date of (?:birth|death)"
    r"|nationality|buried|educated|studied|graduated|married)\b"
)
# "Who was born first, X or Y?", "which came out earlier", "the same nationality".
_ORDER = r"(?:first|earlier|later|older|younger)"
_MULTI_HOP = (
    re.compile(rf"\b(?:which|who)\b[^?]*\b{_ORDER}\b[^?]*\bor\b"),
    re.compile(
        rf"\b(?:born|came out|come out|released|founded|formed|established|died|published"
        rf"|opened|started|began) {_ORDER}\b"
    ),
    re.compile(r"\bsame (?!time\b)\w+"),
)
_COMPARATIVES = re.compile(
    r"\b(more|less|fewer|than|older|younger|earlier|later|bigger|larger|smaller|higher"
    r"|lower|greater|longer|shorter|taller|faster|slower|richer|poorer)\b"
)


def _parse_force(force: Complexity | str | None) -> Complexity | None:
    if force is None or isinstance(force, Complexity):
        return force
    if isinstance(force, str):
        key = force.strip().lower()
        if key in ("", "auto"):
            return None
        for member in Complexity:
            if key == member.value:
                return member
    raise InvalidArgumentError(f"force must be 'simple', 'complex', 'auto' or None, got {force!r}")


def _distinct(names: list[str]) -> tuple[str, ...]:
    seen: dict[str, str] = {}
    for name in names:
        key = " ".join(name.lower().split())
        if key and key not in seen:
            seen[key] = name.strip()
    return tuple(seen.values())


class QueryComplexityClassifier:
    """Scores a question's need for multi-step retrieval.

    ``count_entities(question)`` returns the article titles or aliases the
    question names (graph access stays with the caller); without it the entity
    signal is not used.
    """

    def __init__(
        self,
        count_entities: Callable[[str], list[str]] | None = None,
        threshold: float = DEFAULT_THRESHOLD,
    ) -> None:
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
            raise InvalidArgumentError(f"threshold must be a number, got {threshold!r}")
        if not 0.0 < threshold <= 1.0:
            raise InvalidArgumentError(f"threshold must be in (0, 1], got {threshold!r}")
        if count_entities is not None and not callable(count_entities):
            raise InvalidArgumentError("count_entities must be callable")
        self.count_entities = count_entities
        self.threshold = float(threshold)

    def classify(self, question: str, force: Complexity | str | None = None) -> ComplexityDecision:
        """SIMPLE or COMPLEX for ``question``; ``force`` ("simple"/"complex") overrides."""
        if not isinstance(question, str) or not question.strip():
            raise InvalidArgumentError("question must be a non-empty string")
        forced = _parse_force(force)
        low = " ".join(question.lower().replace("’", "'").split())
        score = 0.0
        reasons: list[str] = []

        indicators = list(dict.fromkeys(m.group(1) for m in _INDICATORS.finditer(low)))
        if indicators:
            score += W_INDICATOR
            reasons.append("indicator words: " + ", ".join(indicators))

        relations = len(_RELATION.findall(low))
        hops = relations + (1 if relations and _ATTRIBUTE.search(low) else 0)
        if any(p.search(low) for p in _MULTI_HOP) or hops >= 2:
            score += W_MULTI_HOP
            reasons.append(
                f"multi-hop phrasing ({hops} relational hops)"
                if hops >= 2
                else "multi-hop phrasing (choice or shared attribute)"
            )
        elif relations:
            score += W_RELATION
            reasons.append("one relational phrase")

        entities: tuple[str, ...] = ()
        if self.count_entities is not None:
            entities = _distinct(list(self.count_entities(question)))
            if len(entities) >= 2:
                score += W_DECISIVE
                reasons.append(f"{len(entities)} entities: " + "; ".join(entities))

        years = find_years(question)
        if len(years) >= 2:
            score += W_DECISIVE
            reasons.append(f"{len(years)} years: " + ", ".join(years))

        comparatives = list(dict.fromkeys(_COMPARATIVES.findall(low)))
        if comparatives:
            score += W_COMPARATIVE
            reasons.append("comparatives: " + ", ".join(comparatives))

        score = round(min(score, 1.0), 3)
        if forced is not None:
            reasons.insert(0, f"forced: {forced.value}")
            complexity = forced
        else:
            complexity = Complexity.COMPLEX if score >= self.threshold else Complexity.SIMPLE
        return ComplexityDecision(complexity, score, tuple(reasons), entities)

"""Say what the evidence so far fails to mention, so the next step can search for it.

A gap is checked by plain text matching (case- and accent-insensitive, whole
words), in a fixed order: years, then entities (COMPARE questions only), then
metrics. The first kind with something missing is the gap; ``confidence`` is the
share of that kind's terms that are missing. Cheap and explainable beats clever
here: the result only steers one more search.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum

from kg_agent.exceptions import InvalidArgumentError
from kg_agent.language.names import question_names
from kg_agent.language.query_type import QueryType, find_years
from kg_agent.language.tokens import fold

__all__ = [
    "METRIC_SYNONYMS",
    "NO_GAP",
    "GapResult",
    "GapType",
    "detect_gap",
    "fold",
    "query_entities",
    "query_metrics",
]


class GapType(str, Enum):
    """The kind of term missing from the evidence."""

    NONE = "none"
    MISSING_YEARS = "missing_years"
    MISSING_ENTITIES = "missing_entities"
    MISSING_METRIC = "missing_metric"


@dataclass(frozen=True)
class GapResult:
    """What is missing (as written in the query) and the share of checked terms it is."""

    gap_type: GapType
    missing: tuple[str, ...] = ()
    confidence: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.gap_type, GapType):
            raise InvalidArgumentError(f"gap_type must be a GapType, got {self.gap_type!r}")
        if (self.gap_type is GapType.NONE) != (not self.missing):
            raise InvalidArgumentError("a gap lists what is missing; NONE lists nothing")
        if not 0.0 <= self.confidence <= 1.0:
            raise InvalidArgumentError(f"confidence must be in [0, 1], got {self.confidence!r}")

    @property
    def has_gap(self) -> bool:
        return self.gap_type is not GapType.NONE


NO_GAP = GapResult(GapType.NONE)

#: Metric words a question may ask about, with the other words a passage may use
#: for them. The keys are what :func:`detect_gap` looks for in the query;
#: :func:`kg_agent.multistep.refine.refine_query` appends the values.
METRIC_SYNONYMS: dict[str, tuple[str, ...]] = {
    "population": ("inhabitants", "residents", "census"),
    "gdp": ("gross domestic product", "economy"),
    "revenue": ("sales", "turnover"),
    "income": ("earnings", "wages"),
    "profit": ("net income", "earnings"),
    "budget": ("funding", "spending"),
    "cost": ("price", "expense"),
    "price": ("cost", "value"),
    "salary": ("pay", "wages"),
    "rate": ("ratio", "percentage"),
    "percentage": ("percent", "share", "proportion"),
    "unemployment": ("jobless", "unemployed"),
    "inflation": ("consumer prices", "price index"),
    "life expectancy": ("lifespan", "mortality"),
    "height": ("tall", "elevation", "metres"),
    "elevation": ("altitude", "height"),
    "length": ("long", "kilometres"),
    "area": ("square kilometres", "km2"),
    "density": ("per square kilometre",),
    "number of": ("total", "count"),
    "attendance": ("spectators", "crowd"),
    "capacity": ("seats", "seating"),
    "box office": ("gross", "grossed"),
}


def _mentions(haystack: str, term: str, plural: bool = False) -> bool:
    folded = " ".join(fold(term).split())
    if not folded:
        return True
    suffix = "s?" if plural else ""
    pattern = r"(?<!\w)" + re.escape(folded).replace(r"\ ", r"\s+") + suffix + r"(?!\w)"
    return re.search(pattern, haystack) is not None


def query_entities(query: str) -> tuple[str, ...]:
    """The names :func:`~kg_agent.language.names.question_names` finds in ``query``,
    but for those that are metric words (:data:`METRIC_SYNONYMS`)."""
    return tuple(n for n in question_names(query) if fold(n) not in METRIC_SYNONYMS)


def query_metrics(query: str) -> tuple[str, ...]:
    """The :data:`METRIC_SYNONYMS` keys ``query`` mentions, in table order."""
    folded = fold(query)
    return tuple(m for m in METRIC_SYNONYMS if _mentions(folded, m, plural=True))


def _evidence_text(evidence: Iterable[object]) -> str:
    parts: list[str] = []
    for item in evidence:
        if isinstance(item, str):
            parts.append(item)
            continue
        for attr in ("title", "content"):
            value = getattr(item, attr, None)
            if isinstance(value, str):
                parts.append(value)
    return fold("\n".join(parts))


def _gap(kind: GapType, checked: Sequence[str], missing: list[str]) -> GapResult | None:
    if not missing:
        return None
    return GapResult(kind, tuple(missing), round(len(missing) / len(checked), 3))


def detect_gap(
    query: str,
    query_type: QueryType,
    evidence: Sequence[object],
    *,
    entities: Sequence[str] | None = None,
) -> GapResult:
    """The first kind of query term (years, entities, metrics) missing from ``evidence``.

    ``evidence`` holds strings, or objects with ``content`` and ``title``
    (e.g. :class:`kg_agent.retrieval.base.Evidence`). Years are checked only when
    the query names two or more; entities only for COMPARE queries, taken from
    ``entities`` when given, else from the query's capitalised spans.
    """
    if not isinstance(query, str):
        raise InvalidArgumentError(f"query must be a string, got {type(query).__name__}")
    if isinstance(evidence, str):
        raise InvalidArgumentError("evidence must be a sequence of passages, not one string")
    if isinstance(entities, str):
        raise InvalidArgumentError("entities must be a sequence of names, not one string")
    haystack = _evidence_text(evidence)

    years = find_years(query)
    if len(years) >= 2:
        found = _gap(GapType.MISSING_YEARS, years, [y for y in years if not _mentions(haystack, y)])
        if found:
            return found

    if query_type is QueryType.COMPARE:
        names = tuple(entities) if entities is not None else query_entities(query)
        distinct: dict[str, str] = {}
        for name in names:
            distinct.setdefault(" ".join(fold(name).split()), name.strip())
        names = tuple(v for k, v in distinct.items() if k)
        missing = [n for n in names if not _mentions(haystack, n)]
        found = _gap(GapType.MISSING_ENTITIES, names, missing)
        if found:
            return found

    metrics = query_metrics(query)
    missing = [
        m
        for m in metrics
        if not any(_mentions(haystack, t, plural=True) for t in (m, *METRIC_SYNONYMS[m]))
    ]
    return _gap(GapType.MISSING_METRIC, metrics, missing) or NO_GAP

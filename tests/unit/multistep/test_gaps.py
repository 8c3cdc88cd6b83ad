"""detect_gap: years, then entities (COMPARE), then metrics; case- and accent-insensitive."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from kg_agent.exceptions import InvalidArgumentError
from kg_agent.language.query_type import QueryType
from kg_agent.multistep.gaps import (
    METRIC_SYNONYMS,
    NO_GAP,
    GapResult,
    GapType,
    detect_gap,
    fold,
    query_entities,
    query_metrics,
)

COMPARE_Q = "Compare the GDP of France and Germany in 1990 and 2000"


@dataclass
class Passage:
    title: str
    content: str


def test_missing_year_is_found() -> None:
    evidence = [
        "France's GDP in 1990 was 1.27 trillion dollars.",
        "Germany's GDP in 1990 was 1.77 trillion dollars.",
    ]
    gap = detect_gap(COMPARE_Q, QueryType.COMPARE, evidence)
    assert gap == GapResult(GapType.MISSING_YEARS, ("2000",), 0.5)
    assert gap.has_gap


def test_years_are_checked_only_for_multi_year_queries() -> None:
    gap = detect_gap("Who won the World Cup in 1998?", QueryType.FACT, ["France won."])
    assert gap is NO_GAP


def test_year_inside_a_longer_number_does_not_count() -> None:
    gap = detect_gap("GDP in 1990 and 2000", QueryType.TREND, ["GDP 1990; id 120001; 20001"])
    assert gap.missing == ("2000",)


def test_missing_entity_is_found_for_compare_queries() -> None:
    evidence = [
        Passage("France", "France's GDP was 1.27 trillion in 1990 and 1.36 trillion in 2000."),
    ]
    gap = detect_gap(COMPARE_Q, QueryType.COMPARE, evidence)
    assert gap == GapResult(GapType.MISSING_ENTITIES, ("Germany",), 0.5)


def test_entity_named_only_in_a_title_counts_as_present() -> None:
    evidence = [
        Passage("France", "GDP 1990 and 2000 figures."),
        Passage("Germany", "Its GDP in 1990 and 2000."),
    ]
    assert detect_gap(COMPARE_Q, QueryType.COMPARE, evidence) is NO_GAP


def test_entities_are_checked_only_for_compare_queries() -> None:
    evidence = ["France's GDP in 1990 and 2000."]
    assert detect_gap(COMPARE_Q, QueryType.FACT, evidence) is NO_GAP


def test_explicit_entities_replace_capitalised_spans() -> None:
    evidence = ["Nothing relevant about the GDP"]
    gap = detect_gap(
        "compare gdp of the two countries",
        QueryType.COMPARE,
        evidence,
        entities=["Federal Republic of Germany", "France", "france"],
    )
    assert gap == GapResult(
        GapType.MISSING_ENTITIES, ("Federal Republic of Germany", "France"), 1.0
    )


def test_matching_ignores_case_and_accents() -> None:
    gap = detect_gap(
        "Compare Émile Zola and José Martí",
        QueryType.COMPARE,
        ["EMILE ZOLA was a novelist.", "Jose Marti was a poet."],
    )
    assert gap is NO_GAP


def test_missing_metric_is_found_and_synonyms_count_as_present() -> None:
    q = "What was the population and area of Lima?"
    assert detect_gap(q, QueryType.FACT, ["Lima has 10 million inhabitants."]) == GapResult(
        GapType.MISSING_METRIC, ("area",), 0.5
    )
    assert detect_gap(q, QueryType.FACT, ["Lima: 10 million people, 2,672 km2."]) == GapResult(
        GapType.MISSING_METRIC, ("population",), 0.5
    )
    assert detect_gap(q, QueryType.FACT, ["Populations: 10 million. Area: 2,672 km2."]) is NO_GAP


def test_years_come_before_entities_and_metrics() -> None:
    gap = detect_gap(COMPARE_Q, QueryType.COMPARE, [])
    assert gap == GapResult(GapType.MISSING_YEARS, ("1990", "2000"), 1.0)


def test_query_without_checkable_terms_has_no_gap() -> None:
    assert detect_gap("Who wrote Hamlet?", QueryType.FACT, []) is NO_GAP


def test_query_entities_and_metrics() -> None:
    assert query_entities(COMPARE_Q) == ("France", "Germany")
    assert query_entities("Is Mount Everest taller than K2?") == ("Mount Everest", "K2")
    assert query_entities("Compare Apollo 11 and the U.S. Navy") == ("Apollo 11", "U.S. Navy")
    assert query_entities("Who was born first, Alice Munro or Doris Lessing?") == (
        "Alice Munro",
        "Doris Lessing",
    )
    assert query_metrics("GDP and number of employees, unemployment rate") == (
        "gdp",
        "rate",
        "unemployment",
        "number of",
    )
    assert all(m == fold(m) for m in METRIC_SYNONYMS)


def test_fold() -> None:
    assert fold("Gödel’s ÉCOLE") == "godel's ecole"


def test_gap_result_validation() -> None:
    with pytest.raises(InvalidArgumentError):
        GapResult(GapType.NONE, ("x",), 0.5)
    with pytest.raises(InvalidArgumentError):
        GapResult(GapType.MISSING_YEARS, (), 0.0)
    with pytest.raises(InvalidArgumentError, match="confidence"):
        GapResult(GapType.MISSING_YEARS, ("1990",), 1.5)
    with pytest.raises(InvalidArgumentError, match="evidence"):
        detect_gap("q", QueryType.FACT, "one string")

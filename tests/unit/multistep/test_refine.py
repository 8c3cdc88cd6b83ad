"""refine_query: append what the gap says is missing, never a word twice, at most 500 chars."""

from __future__ import annotations

import pytest

from kg_agent.exceptions import InvalidArgumentError
from kg_agent.language.query_type import QueryType
from kg_agent.multistep.gaps import NO_GAP, GapResult, GapType, detect_gap
from kg_agent.multistep.planner import MAX_QUERY_CHARS
from kg_agent.multistep.refine import refine_query

COMPARE_Q = "Compare the GDP of France and Germany in 1990 and 2000"


def test_no_gap_leaves_the_query_unchanged() -> None:
    assert refine_query("  Who wrote  Hamlet? ", NO_GAP) == "  Who wrote  Hamlet? "


def test_detect_then_refine_appends_the_missing_year() -> None:
    q = "France and Germany GDP 1990"
    gap = detect_gap(COMPARE_Q, QueryType.COMPARE, ["GDP in 1990: France 1.2, Germany 1.7"])
    assert gap.missing == ("2000",)
    assert refine_query(q, gap) == "France and Germany GDP 1990 2000"


def test_missing_entities_are_appended_in_order() -> None:
    gap = GapResult(GapType.MISSING_ENTITIES, ("Germany", "United Kingdom"), 1.0)
    assert refine_query("GDP of France", gap) == "GDP of France Germany United Kingdom"


def test_words_already_in_the_query_are_not_repeated() -> None:
    gap = GapResult(GapType.MISSING_YEARS, ("1990", "2000"), 0.5)
    assert refine_query(COMPARE_Q, gap) == COMPARE_Q
    gap = GapResult(GapType.MISSING_ENTITIES, ("West Germany", "GERMANY"), 1.0)
    assert refine_query("GDP of Germany", gap) == "GDP of Germany West"


def test_missing_metric_brings_its_synonyms() -> None:
    gap = GapResult(GapType.MISSING_METRIC, ("population",), 1.0)
    assert refine_query("population of Lima", gap) == (
        "population of Lima inhabitants residents census"
    )
    gap = GapResult(GapType.MISSING_METRIC, ("gdp", "revenue"), 1.0)
    assert refine_query("GDP and revenue of Peru", gap) == (
        "GDP and revenue of Peru gross domestic product economy sales turnover"
    )


def test_result_is_capped_at_500_chars() -> None:
    long_q = " ".join(["word"] * 120)  # 599 chars
    gap = GapResult(GapType.MISSING_YEARS, ("1990",), 1.0)
    out = refine_query(long_q, gap)
    assert len(out) <= MAX_QUERY_CHARS
    assert refine_query("x" * 495, gap) == "x" * 495 + " 1990"  # exactly 500
    assert refine_query("x" * 496, gap) == "x" * 496  # 501 would not fit


def test_terms_that_do_not_fit_are_left_off() -> None:
    base = "y" * 494
    gap = GapResult(GapType.MISSING_YEARS, ("1990", "2000"), 1.0)
    assert refine_query(base, gap) == base + " 1990"


def test_bad_arguments() -> None:
    with pytest.raises(InvalidArgumentError, match="gap"):
        refine_query("q", "2000")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="query"):
        refine_query(None, NO_GAP)  # type: ignore[arg-type]

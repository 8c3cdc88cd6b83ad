"""jaccard and novelty_filter: near duplicates out, distinct text kept, order preserved."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from kg_agent.exceptions import InvalidArgumentError
from kg_agent.multistep.novelty import jaccard, novelty_filter, word_set

BASE = "Kurt Gödel was an Austrian logician, mathematician and philosopher born in Brno in 1906."
# "an" becomes "a famous": 12 shared words of 15 in all, Jaccard exactly 0.8.
NEAR_DUP = (
    "Kurt Gödel was a famous Austrian logician, mathematician and philosopher born in Brno in 1906."
)
DISTINCT = "Gödel's incompleteness theorems were published in 1931."


@dataclass
class Ev:
    section_id: str
    content: str


def test_word_set_and_jaccard() -> None:
    assert word_set("The cat, the CAT!") == frozenset({"the", "cat"})
    assert jaccard("a b c", "a b c") == 1.0
    assert jaccard("a b", "c d") == 0.0
    assert jaccard("a b c d", "a b c e") == pytest.approx(3 / 5)
    assert jaccard("", "") == 1.0
    assert jaccard("a", "") == 0.0
    assert jaccard("Word order MATTERS not", "not matters order word") == 1.0


def test_threshold_point_eight_drops_near_duplicates_and_keeps_distinct() -> None:
    assert jaccard(BASE, NEAR_DUP) == pytest.approx(0.8)
    assert jaccard(BASE, DISTINCT) == pytest.approx(2 / 19)  # "gödel", "in"
    kept = novelty_filter([Ev("dup", NEAR_DUP), Ev("new", DISTINCT)], seen=[BASE], threshold=0.8)
    assert [e.section_id for e in kept] == ["new"]


def test_candidates_are_checked_against_each_other_in_order() -> None:
    items = [Ev("a", BASE), Ev("b", DISTINCT), Ev("c", NEAR_DUP), Ev("d", BASE)]
    assert [e.section_id for e in novelty_filter(items, [], 0.8)] == ["a", "b"]


def test_threshold_one_drops_only_exact_word_set_duplicates() -> None:
    items = [Ev("a", BASE), Ev("b", NEAR_DUP), Ev("c", BASE.upper())]
    assert [e.section_id for e in novelty_filter(items, [], 1.0)] == ["a", "b"]


def test_boundary_is_inclusive() -> None:
    # 3 shared of 5 distinct words: exactly 0.6.
    assert novelty_filter(["a b c d"], ["a b c e"], 0.6, text=str) == []
    assert novelty_filter(["a b c d"], ["a b c e"], 0.61, text=str) == ["a b c d"]


def test_custom_text_accessor_and_plain_strings() -> None:
    rows = [{"t": BASE}, {"t": DISTINCT}]
    assert novelty_filter(rows, [NEAR_DUP], 0.8, text=lambda r: r["t"]) == [{"t": DISTINCT}]
    assert novelty_filter(iter(["x y", "x y", "z"]), iter([]), 0.8, text=str) == ["x y", "z"]


@pytest.mark.parametrize("threshold", [0, -1, 1.01, True])
def test_bad_threshold(threshold: float) -> None:
    with pytest.raises(InvalidArgumentError, match="threshold"):
        novelty_filter([], [], threshold)


def test_seen_must_not_be_one_string() -> None:
    with pytest.raises(InvalidArgumentError, match="seen"):
        novelty_filter([], "a text", 0.8)

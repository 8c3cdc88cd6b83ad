"""Metrics on hand-made cases whose expected values can be checked on paper."""

from __future__ import annotations

import math

import pytest

from kg_agent.evaluation.metrics import (
    all_recall_at_k,
    answer_in_text,
    best_exact_match,
    best_f1,
    distinct_titles,
    exact_match,
    normalize_answer,
    percentile,
    recall_at_k,
    token_f1,
)

# -- recall ------------------------------------------------------------------------------

# Three sections of article A, then B, C, D, G: the top 5 *distinct* titles are A B C D G,
# while the top 5 raw items would be A A A B C.
RANKED = ["A", "A", "A", "B", "C", "D", "G", "H"]


def test_distinct_titles_keeps_first_seen_order() -> None:
    assert distinct_titles(RANKED) == ["A", "B", "C", "D", "G", "H"]
    assert distinct_titles([]) == []


def test_recall_counts_distinct_titles_not_sections() -> None:
    assert recall_at_k(RANKED, ["D", "G"], 5) == 1.0  # raw top-5 would give 0
    assert recall_at_k(RANKED, ["D", "G"], 4) == 0.5  # A B C D
    assert recall_at_k(RANKED, ["D", "G"], 3) == 0.0
    assert recall_at_k(RANKED, ["A", "H"], 2) == 0.5
    assert recall_at_k(RANKED, ["A", "H"], 6) == 1.0
    assert recall_at_k(RANKED, ["A", "B", "Z"], 5) == pytest.approx(2 / 3)


def test_recall_gold_duplicates_count_once() -> None:
    assert recall_at_k(RANKED, ["B", "B", "Z"], 5) == 0.5


def test_recall_of_nothing_retrieved_is_zero() -> None:
    assert recall_at_k([], ["A"], 5) == 0.0


def test_recall_needs_gold() -> None:
    with pytest.raises(ValueError, match="gold"):
        recall_at_k(RANKED, [], 5)


def test_recall_is_exact_about_titles() -> None:
    # Titles are compared as given: disambiguated titles are other articles.
    assert recall_at_k(["Aida (film)", "Opera"], ["Aida"], 5) == 0.0


def test_all_recall_is_all_or_nothing() -> None:
    assert all_recall_at_k(RANKED, ["B", "D"], 5) == 1.0
    assert all_recall_at_k(RANKED, ["B", "H"], 5) == 0.0  # H is 6th distinct
    assert all_recall_at_k(RANKED, ["B", "H"], 6) == 1.0


# -- answer normalisation ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "normalised"),
    [
        ("The Eiffel Tower", "eiffel tower"),
        ("  an   apple, a pear!  ", "apple pear"),
        ("Hewlett-Packard", "hewlett packard"),
        ("“Mildred Pierce” (1945)", "mildred pierce 1945"),
        ("Jiří Trnka", "jiri trnka"),
        ("Café Müller", "cafe muller"),
        ("Theatre", "theatre"),  # 'the' inside a word stays
        ("A", ""),
        ("", ""),
    ],
)
def test_normalize_answer(text: str, normalised: str) -> None:
    assert normalize_answer(text) == normalised


def test_exact_match_after_normalisation() -> None:
    assert exact_match("the Beatles.", "Beatles") == 1.0
    assert exact_match("Jiri Trnka", "Jiří Trnka") == 1.0
    assert exact_match("Hewlett Packard", "Hewlett-Packard") == 1.0
    assert exact_match("Beatles, The", "The Rolling Stones") == 0.0


def test_best_exact_match_uses_aliases() -> None:
    answers = ("Stanisław Leszczyński", "Stanislas Leszczynski", "")
    assert best_exact_match("Stanislas Leszczynski", answers) == 1.0
    assert best_exact_match("Stanislas", answers) == 0.0
    assert best_exact_match("anything", ()) == 0.0
    assert best_exact_match("", ("",)) == 0.0  # empty gold answers are skipped


def test_token_f1_by_hand() -> None:
    # prediction {cat, sat}; gold {cat, sat, down}: P = 1, R = 2/3, F1 = 0.8
    assert token_f1("The cat sat", "cat sat down") == pytest.approx(0.8)
    # one shared token of 2 and 4: P = 1/2, R = 1/4, F1 = 1/3
    assert token_f1("Paris France", "Paris is a big city") == pytest.approx(1 / 3)
    assert token_f1("London", "Paris") == 0.0
    assert token_f1("", "Paris") == 0.0
    # repeated tokens count as many times as both sides have them
    assert token_f1("new new york", "new york") == pytest.approx(0.8)


def test_yes_no_f1_is_exact() -> None:
    assert token_f1("yes", "Yes.") == 1.0
    assert token_f1("no", "yes") == 0.0
    assert token_f1("yes it is", "yes") == 0.0  # not partial credit
    assert token_f1("yes", "yes it is") == 0.0


def test_best_f1_takes_the_best_alias() -> None:
    assert best_f1("Hewlett Packard company", ("HP", "Hewlett-Packard")) == pytest.approx(0.8)
    assert best_f1("x", ()) == 0.0


# -- answer in evidence ------------------------------------------------------------------


def test_answer_in_text_on_word_boundaries() -> None:
    assert answer_in_text(["Paris"], "He moved to Paris, France, in 1920.") == 1.0
    assert answer_in_text(["Paris"], "Parisian cafés") == 0.0
    assert answer_in_text(["York"], "New Yorker magazine") == 0.0
    assert answer_in_text(["new york"], "born in New York.") == 1.0


def test_answer_in_text_normalises_both_sides() -> None:
    assert answer_in_text(["The Beatles"], "a song by Beatles") == 1.0
    assert answer_in_text(["Jiří Trnka"], "directed by Jiri Trnka") == 1.0
    assert answer_in_text(["Hewlett-Packard"], "merged with Hewlett Packard in 2002") == 1.0


def test_answer_in_text_any_alias_and_never_yes_no() -> None:
    assert answer_in_text(["Leszczyński", "Stanislas"], "King Stanislas of Poland") == 1.0
    assert answer_in_text(["yes"], "yes, both are American") == 0.0
    assert answer_in_text(["no"], "no") == 0.0
    assert answer_in_text([""], "anything") == 0.0
    assert answer_in_text(["Paris"], "") == 0.0


# -- percentile --------------------------------------------------------------------------


def test_percentile_interpolates_linearly() -> None:
    assert percentile([4.0, 1.0, 3.0, 2.0], 50) == 2.5  # sorted 1 2 3 4, halfway 2..3
    assert percentile([1.0, 2.0, 3.0, 4.0], 0) == 1.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 100) == 4.0
    assert percentile([10.0, 20.0], 95) == pytest.approx(19.5)
    assert percentile([7.0], 95) == 7.0
    assert percentile([1.0, 2.0, 3.0, 4.0, 5.0], 50) == 3.0


def test_percentile_of_nothing_is_nan() -> None:
    assert math.isnan(percentile([], 50))

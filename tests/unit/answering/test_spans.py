"""Candidate spans: dates, numbers and names as English writes them."""

from __future__ import annotations

from kg_agent.answering.spans import dates, names, numbers, year_of


def test_dates_in_their_usual_forms() -> None:
    text = "Born 14 March 1879 in Ulm, he moved on March 14, 1880, then in June 1895 and in 1900."
    assert [d.text for d in dates(text)] == ["14 March 1879", "March 14, 1880", "June 1895", "1900"]
    assert [d.text for d in dates("It flourished in the 16th century.")] == ["16th century"]


def test_numbers_leave_dates_alone() -> None:
    text = "In 1946 ENIAC contained 17,468 vacuum tubes and weighed 27 tonnes."
    assert [n.text for n in numbers(text)] == ["17,468", "27"]


def test_names_split_at_commas_and_never_swallow_a_year() -> None:
    found = [
        n.text for n in names("He was born in Kuwait in 1981 and lives in Ramallah, West Bank.")
    ]
    assert found == ["He", "Kuwait", "Ramallah", "West Bank."]
    assert [n.text for n in names("Louis IX of France met the Count of Toulouse.")] == [
        "Louis IX of France",
        "Count of Toulouse.",
    ]
    assert "Apollo 11" in [n.text for n in names("The crew of Apollo 11 landed.")]


def test_year_of_orders_dates() -> None:
    assert year_of("14 March 1879") == (1879, 3, 14)
    assert year_of("June 1895") == (1895, 6, 0)
    assert year_of("16th century") == (1500, 0, 0)
    assert year_of("March 14, 1880") < year_of("14 March 1881")  # type: ignore[operator]

"""Dates read from a box value's running text (``dates_in``): both written orders, and
nothing from text that only looks close."""

from __future__ import annotations

import pytest

from kg_agent.ingest.facts import dates_in


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("17 August 1945 (Secker and Warburg, London)", [("17 August 1945", "1945-08-17")]),
        ("July 16, 1969, 13:32 UTC", [("July 16, 1969", "1969-07-16")]),
        ("1st Sept. 1939", [("1st Sept. 1939", "1939-09-01")]),
        (
            "Jan. 5 1901 and 6 March 1902",
            [("Jan. 5 1901", "1901-01-05"), ("6 March 1902", "1902-03-06")],
        ),
        # a month and a year without a day, a lower-case month, a bare number: no full date
        ("August 1945", []),
        ("17 august 1945", []),
        ("1,246,700 (2015 est.)", []),
        ("Euro", []),
        ("", []),
        # a capitalised word that is no month
        ("Route 66, 1926", []),
    ],
)
def test_dates_in_running_text(text: str, found: list[tuple[str, str]]) -> None:
    assert dates_in(text) == found

"""Section ids: the lead is ordinal 0, and only it is a lead, whatever the title holds."""

from __future__ import annotations

from kg_agent.store.section_ids import is_lead, lead_id, section_id


def test_ids_are_title_and_a_four_digit_ordinal() -> None:
    assert section_id("Alan Turing", 0) == lead_id("Alan Turing") == "Alan Turing::0000"
    assert section_id("Alan Turing", 12) == "Alan Turing::0012"
    assert section_id("A", 12345) == "A::12345"  # past four digits it grows, never wraps


def test_only_the_first_section_is_a_lead() -> None:
    assert is_lead(lead_id("Mark I"))
    assert not is_lead(section_id("Mark I", 1))
    assert not is_lead(section_id("Mark I", 10000))  # "…::10000" ends in "0000" but no "::"
    assert is_lead(lead_id("Apollo 10000"))  # digits in the title do not matter
    assert not is_lead(section_id("Apollo::0000", 3))

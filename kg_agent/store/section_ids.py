"""How a section is named: ``TITLE::0000`` for an article's lead, then ``TITLE::0001``
and on in reading order. The id is the section table's primary key, so an article's
sections (and its lead) are looked up without an index; the loader writes it and every
reader that needs a lead or an article's n-th section finds it here."""

from __future__ import annotations

__all__ = ["is_lead", "lead_id", "section_id"]

_LEAD = 0


def section_id(title: str, ordinal: int) -> str:
    """The id of the ``ordinal``-th section (from 0, the lead) of ``title``."""
    return f"{title}::{ordinal:04d}"


def lead_id(title: str) -> str:
    """The id of the lead section of ``title``."""
    return section_id(title, _LEAD)


def is_lead(sid: str) -> bool:
    """Whether ``sid`` names an article's lead section."""
    return sid.endswith("::" + f"{_LEAD:04d}")

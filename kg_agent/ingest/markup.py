"""Wikitext markup patterns that the page parser and the infobox reader both use."""

from __future__ import annotations

import re

__all__ = ["BAD_TARGET", "BRACKETS", "PIPE_TRICK", "QUOTES", "WORD", "interlanguage_args"]

#: Bold and italic quote runs.
QUOTES = re.compile(r"''+")
#: Any word character: text that says something.
WORD = re.compile(r"\w")
#: Characters MediaWiki forbids in titles.
BAD_TARGET = re.compile(r"[\[\]{}<>|\n]")
#: Link and template brackets left over.
BRACKETS = re.compile(r"\[\[|\]\]|\{\{|\}\}")
#: The "pipe trick" (``[[Paris (France)|]]``) drops a trailing parenthesis.
PIPE_TRICK = re.compile(r"\s*\([^()]*\)\s*$")
#: A language code: the first argument of an interlanguage link of the old form.
_LANGUAGE_CODE = re.compile(r"[a-z]{2,3}(?:-[a-z]{2,8})?")


def interlanguage_args(pos: list[str]) -> list[str]:
    """An interlanguage link's arguments from its local title on: today's form writes the
    title first (``{{ill|Gymnasium Ernestinum|de}}``), the old one the language
    (``{{ill|de|Gymnasium Ernestinum}}``), which would otherwise be read as the title."""
    if len(pos) > 1 and _LANGUAGE_CODE.fullmatch(pos[0].strip()):
        return pos[1:]
    return pos

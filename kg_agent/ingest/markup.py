"""Wikitext markup patterns that the page parser and the infobox reader both use."""

from __future__ import annotations

import re

__all__ = ["BAD_TARGET", "BRACKETS", "PIPE_TRICK", "QUOTES", "WORD"]

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

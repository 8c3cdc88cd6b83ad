"""MediaWiki's namespace names: what a page title's or a link's prefix means.

English names are always known; a dump adds its own (localised) names from
``<siteinfo>``. The wikitext cleaner and the infobox reader both need them.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["DEFAULT_NAMESPACES"]

# Canonical English names and aliases → namespace number. Dumps add their own
# (localised) names from <siteinfo>; see ``namespace_prefixes``.
DEFAULT_NAMESPACES: Mapping[str, int] = {
    "media": -2,
    "special": -1,
    "talk": 1,
    "user": 2,
    "user talk": 3,
    "wikipedia": 4,
    "wp": 4,
    "project": 4,
    "wikipedia talk": 5,
    "wt": 5,
    "project talk": 5,
    "file": 6,
    "image": 6,
    "file talk": 7,
    "image talk": 7,
    "mediawiki": 8,
    "mediawiki talk": 9,
    "template": 10,
    "template talk": 11,
    "help": 12,
    "help talk": 13,
    "category": 14,
    "category talk": 15,
    "portal": 100,
    "portal talk": 101,
    "book": 108,
    "book talk": 109,
    "draft": 118,
    "draft talk": 119,
    "education program": 446,
    "education program talk": 447,
    "timedtext": 710,
    "timedtext talk": 711,
    "module": 828,
    "module talk": 829,
    "gadget": 2300,
    "gadget talk": 2301,
    "gadget definition": 2302,
    "gadget definition talk": 2303,
    "topic": 2600,
}

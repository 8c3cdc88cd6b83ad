"""Which country a description puts its subject in: "an Italian- American mystery film"
(Italy, the United States), "a village … in northern Phocis, Greece" (Greece).

A lead sentence writes a thing's country in one of two ways: a nationality word in what
the subject *is* (between "is a" and the first clause that says more: "directed by",
"who", a comma), or the last place of a chain of places ("in Tulcea County, Romania",
"of Lipetsk Oblast, Russia"). Every chain's last place is kept: a region ("in Colorado
in the United States") is one more name, and only a shared name says "the same". Two
things are of the same country when any of one's names matches any of the other's;
of different ones when neither's matches. A nationality matches its country when they
share all but the last letter or so of the shorter ("Canadian" ~ "Canada", "Italian" ~
"Italy", "Peruvian" ~ "Peru"; "Austrian" is not "Australia"), and the nationalities
English does not write that way ("American", "British", "French", "Dutch", …) are a
short table.
"""

from __future__ import annotations

import re

from kg_agent.language.tokens import fold, wordset

__all__ = ["countries", "same_country"]

#: Nationalities and country names that do not share their stem, by the country they name
#: (a nation's constituent parts count as its citizens do: "English" is "British").
_IRREGULAR: dict[str, tuple[str, ...]] = {
    "united states": ("american", "america", "us", "u.s", "usa", "u.s.a", "united states"),
    "united kingdom": (
        *("british", "britain", "great britain", "uk", "u.k", "united kingdom", "english"),
        *("england", "scottish", "scots", "scotland", "welsh", "wales"),
    ),
    "france": ("french",),
    "spain": ("spanish",),
    "netherlands": ("dutch", "holland"),
    "switzerland": ("swiss",),
    "turkey": ("turkish",),
    "poland": ("polish",),
    "sweden": ("swedish",),
    "denmark": ("danish",),
    "norway": ("norwegian",),
    "finland": ("finnish",),
    "ireland": ("irish",),
    "philippines": ("filipino", "filipina", "philippine"),
    "portugal": ("portuguese",),
    "argentina": ("argentine", "argentinian"),
    "greece": ("greek",),
    "new zealand": ("new zealander", "kiwi"),
}
_CANONICAL = {alias: country for country, aliases in _IRREGULAR.items() for alias in aliases}

#: What a nationality word looks like ("Romanian", "Chinese", "Polish"), and some that
#: do not ("Israeli", "Thai").
_NATIONALITY = re.compile(r"^[A-Z][a-z]+(?:an|ese|ish|ian)$")
_OTHERS = wordset(
    "israeli pakistani iraqi kuwaiti saudi bangladeshi thai czech slovak icelandic omani qatari"
    " yemeni somali nepali"
)
#: Where the description of what the subject is ends.
_DESCRIPTION_END = re.compile(
    r",|;|\(|\bwho\b|\bwhich\b|\bthat\b|\bdirected\b|\bwritten\b|\bstarring\b|\bbased on\b"
    r"|\bknown (?:as|for)\b|\bborn\b|\bfounded\b|\bproduced\b|\bfrom\b"
)
_IS = re.compile(r"\b(?:is|was|are|were)\b(?: (?:an?|the|one of the))?")
_NAME = r"[A-Z][\w'.]*(?:[ -][A-Z][\w'.]*)*"
_LINK = re.compile(r", | of (?:the )?")
#: Places: "in [the] [north of the island of] Place[, Place| of Place]…", or two or more
#: names so linked ("Lipetsk Oblast, Russia"); a chain's last place is its widest.
_CHAIN = re.compile(
    rf"\bin (?:the )?(?:[a-z]+ ){{0,5}}({_NAME}(?:(?:, | of (?:the )?){_NAME})*)"
    rf"|({_NAME}(?:(?:, | of (?:the )?){_NAME})+)"
)


def _key(name: str) -> str:
    folded = fold(name).strip(" .")
    return _CANONICAL.get(folded, folded)


def _is_nationality(word: str) -> bool:
    folded = fold(word).strip(".")
    return bool(_NATIONALITY.match(word)) or folded in _CANONICAL or folded in _OTHERS


def countries(sentence: str, own: str = "") -> set[str]:
    """The countries and nationalities the sentence gives its subject, each as the
    country's name where the table knows it ("american" → "united states"), else folded;
    none of the subject's own name ``own`` ("Mother of George" is no place "George")."""
    out: set[str] = set()
    described = _IS.search(sentence)
    if described is not None:
        rest = sentence[described.end() :]
        end = _DESCRIPTION_END.search(rest)
        for run in re.findall(_NAME, rest[: end.start() if end else len(rest)]):
            parts = re.split(r"[ -]", run)
            out.update(_key(w) for w in parts if _is_nationality(w))
            pairs = (" ".join(parts[i : i + 2]) for i in range(len(parts) - 1))
            out.update(_key(p) for p in pairs if fold(p) in _CANONICAL)  # "United States Army"
    for m in _CHAIN.finditer(sentence):
        last = _LINK.split(m.group(1) or m.group(2))[-1]
        if last.split()[0] not in _MONTHS:
            out.add(_key(last))
    named = set(fold(own).split())
    return {k for k in out if not set(k.split()) <= named}


def _alike(a: str, b: str) -> bool:
    """The same country: equal, or their first words sharing all but a letter or so of
    the shorter ("canadian" ~ "canada", "italian" ~ "italy", "canada east" ~
    "canadian"); two names of several words only when equal ("new mexico", "mexico")."""
    if a == b:
        return True
    wa, wb = a.split(), b.split()
    if (len(wa) > 1 and len(wb) > 1) or wa[0] in _DIRECTIONS or wb[0] in _DIRECTIONS:
        return False
    a, b = wa[0], wb[0]
    shared = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        shared += 1
    return shared >= max(4, min(len(a), len(b)) - 1)


#: Words that begin the names of different countries ("South Korea", "South Africa").
_DIRECTIONS = frozenset(
    ["north", "south", "east", "west", "new", "united", "republic", "saint", "san", "st"]
)
_MONTHS = wordset(
    "January February March April May June July August September October November December"
)


def same_country(a: set[str], b: set[str]) -> bool | None:
    """Whether two things share a country (any of each one's), or None when either
    description gives none."""
    if not a or not b:
        return None
    return any(_alike(x, y) for x in a for y in b)

"""Which country a description puts its subject in: "an Italian- American mystery film"
(Italy, the United States), "a village … in northern Phocis, Greece" (Greece).

A lead sentence writes a thing's country in a few ways: a nationality word in what the
subject *is* (between "is a" and the first clause that says more: "directed by", "who",
a comma; not where it was born: "a Russian-born American novelist"), a country it names
there ("a province of Canada"), or the last place of a chain of places ("in Tulcea
County, Romania", "of Lipetsk Oblast, Russia"). Every chain's last place is kept: a
region ("in Colorado in the United States") is one more name.

Two things are of the same country when any name of one matches any of the other's, and
of different ones when none does and each has a country (a region is no country: "Texas"
against "United States" decides nothing). A nationality matches its country when they
share all but the last letter or so of the shorter ("Canadian" ~ "Canada", "Italian" ~
"Italy"; "Austrian" is not "Australia"); those English writes otherwise ("American",
"British", "French", "Dutch", …) are a short table.
"""

from __future__ import annotations

import re

from kg_agent.language.shape import AnswerKind, QuestionShape
from kg_agent.language.tokens import fold, wordset

__all__ = ["compares_countries", "countries", "same_country"]

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
#: The countries (and a few of the past) by the name the table or a lead writes them: a
#: place that is one of them is a country, another ("Texas", "Indiana") may be a region.
#: Georgia is left out: in leads it is more often the US state.
_COUNTRIES = wordset(
    "afghanistan albania algeria andorra angola argentina armenia australia austria azerbaijan"
    " bahamas bahrain bangladesh barbados belarus belgium belize benin bhutan bolivia bosnia"
    " botswana brazil brunei bulgaria burundi cambodia cameroon canada chad chile china"
    " colombia comoros congo croatia cuba cyprus czechia czechoslovakia denmark djibouti"
    " ecuador egypt eritrea estonia eswatini ethiopia fiji finland france gabon gambia"
    " germany ghana greece grenada guatemala guinea guyana haiti honduras hungary iceland india"
    " indonesia iran iraq ireland israel italy jamaica japan jordan kazakhstan kenya kiribati"
    " kosovo kuwait kyrgyzstan laos latvia lebanon lesotho liberia libya liechtenstein"
    " lithuania luxembourg madagascar malawi malaysia maldives mali malta mauritania mauritius"
    " mexico micronesia moldova monaco mongolia montenegro morocco mozambique myanmar burma"
    " namibia nauru nepal netherlands nicaragua niger nigeria norway oman pakistan palau"
    " palestine panama paraguay peru philippines poland portugal prussia qatar romania russia"
    " rwanda samoa senegal serbia seychelles singapore slovakia slovenia somalia spain sudan"
    " suriname sweden switzerland syria taiwan tajikistan tanzania thailand togo tonga tunisia"
    " turkey turkmenistan tuvalu uganda ukraine uruguay uzbekistan vanuatu venezuela vietnam"
    " yemen yugoslavia zambia zimbabwe"
) | {
    *("united states", "united kingdom", "new zealand", "south africa", "south korea"),
    *("north korea", "sri lanka", "costa rica", "el salvador", "saudi arabia", "sierra leone"),
    *("united arab emirates", "ivory coast", "czech republic", "dominican republic"),
    *("papua new guinea", "east timor", "soviet union", "east germany", "west germany"),
    *("burkina faso", "puerto rico", "hong kong", "north macedonia", "trinidad and tobago"),
}

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
#: Where one was born is not what one is ("a Russian-born American novelist").
_BORN = re.compile(r"\b[A-Z][\w]*- ?born\b")
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


def _country_of(nationality: str) -> str:
    """The country a nationality word names ("german" → "germany"), else the word."""
    key = _key(nationality)
    if key in _COUNTRIES:
        return key
    alike = [c for c in _COUNTRIES if _alike(key, c)]  # "nigerian": Nigeria, not Niger
    return max(alike, key=lambda c: (_shared(key, c), c)) if alike else key


def _is_nationality(word: str) -> bool:
    folded = fold(word).strip(".")
    return bool(_NATIONALITY.match(word)) or folded in _CANONICAL or folded in _OTHERS


def countries(sentence: str, own: str = "") -> set[str]:
    """The countries and nationalities the sentence gives its subject, each as the
    country's name where the table knows it ("american" → "united states"), else folded;
    none of the subject's own name ``own`` ("Mother of George" is no place "George")."""
    out: set[str] = set()
    copula = _IS.search(sentence)
    if copula is not None:
        rest = _BORN.sub("", sentence[copula.end() :])  # before its "born" ends it
        end = _DESCRIPTION_END.search(rest)
        what = rest[: end.start() if end else len(rest)]
        for run in re.findall(_NAME, what):
            parts = re.split(r"[ -]", run)
            out.update(_country_of(w) for w in parts if _is_nationality(w))
            if _key(run) in _COUNTRIES:  # "a western province of Canada"
                out.add(_key(run))
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
    return _shared(a, b) >= max(4, min(len(a), len(b)) - 1)


def _shared(a: str, b: str) -> int:
    """How many first letters two words share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


#: Words that begin the names of different countries ("South Korea", "South Africa").
_DIRECTIONS = frozenset(
    ["north", "south", "east", "west", "new", "united", "republic", "saint", "san", "st"]
)
_MONTHS = wordset(
    "January February March April May June July August September October November December"
)


def same_country(a: set[str], b: set[str]) -> bool | None:
    """Whether two things share a country: yes when any name of one matches any of the
    other's; no when none does and each has a country ("Texas" against "United States"
    decides nothing: a region is no country); else None."""
    if any(_alike(x, y) for x in a for y in b):
        return True
    if a & _COUNTRIES and b & _COUNTRIES:
        return False
    return None


def compares_countries(shape: QuestionShape) -> bool:
    """A yes/no question about a country or nationality ("Are A and B from the same
    country?"); what else two things can share ("the same family") is another question."""
    return shape.kind is AnswerKind.YES_NO and bool(shape.relation & {"nation", "country"})

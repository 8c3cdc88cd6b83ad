"""Relatives reached through relatives: "Who is X's paternal grandfather?" is X's
father's father, "X's mother-in-law" X's spouse's mother.

English names a relative of a relative with one word, and Wikipedia states only the
first link in each article ("She was a daughter of A by his first wife B"): so the
question's word is unfolded into steps (:data:`PATHS`), each step read from the article
of the person the previous one led to. A step reads the sentence that says whose child
the person is (the father written first, as English writes him: "son of A and B",
"daughter of A by his wife B") or whom they married, or names the relative outright
("her mother, B"). The next article is found among the evidence by the person's name;
the answer is the last step's name, in the graph's own spelling when it has an article.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kg_agent.language.tokens import fold

__all__ = ["PATHS", "KinStep", "answer_name", "follow", "kin_paths", "title_for"]

#: The steps behind a word for a relative of a relative, in the order they are taken;
#: a word with two readings ("uncle": the father's or the mother's brother) has both,
#: the one tried first first.
PATHS: dict[str, tuple[tuple[str, ...], ...]] = {
    "paternal grandfather": (("father", "father"),),
    "paternal grandmother": (("father", "mother"),),
    "maternal grandfather": (("mother", "father"),),
    "maternal grandmother": (("mother", "mother"),),
    "father-in-law": (("spouse", "father"),),
    "mother-in-law": (("spouse", "mother"),),
    "stepmother": (("father", "spouse"),),
    "stepfather": (("mother", "spouse"),),
    "uncle": (("father", "brother"), ("mother", "brother")),
    "aunt": (("father", "sister"), ("mother", "sister")),
    "brother-in-law": (("spouse", "brother"), ("sister", "spouse")),
    "sister-in-law": (("spouse", "sister"), ("brother", "spouse")),
    "sibling-in-law": (("spouse", "sibling"), ("sibling", "spouse")),
}
# "great-uncle" is another relative
_PATH = re.compile(r"(?<![\w-])(" + "|".join(re.escape(k) for k in PATHS) + r")\b", re.I)

_HONORIFIC = re.compile(
    r"^(?:(?:King|Queen|Prince|Princess|Duke|Duchess|Count|Countess|Emperor|Empress|Lord|"
    r"Lady|Sir|Saint|Infante|Infanta|Archduke|Archduchess|Margrave|Landgrave|Elector|"
    r"Sultan|Pharaoh|Chief|Dame|Grand Duke|Grand Duchess|Caliph|Emir|Tsar|Czar|Shah)s?\s+)+"
)
# Honorifics that say whether a parent is the father or the mother, whichever is
# written first ("son of Queen Sālote Tupou III and her consort Prince Viliami").
_FEMALE_TITLE = re.compile(
    r"^(?:Grand )?(?:Queen|Princess|Duchess|Countess|Empress|Lady|Dame|Archduchess|"
    r"Infanta|Landgravine|Margravine|Electress|Sultana|Tsarina|Baroness|Marchioness|"
    r"Viscountess|Mrs|Madame)\b"
)
_MALE_TITLE = re.compile(
    r"^(?:Grand )?(?:King|Prince|Duke|Count|Emperor|Lord|Sir|Archduke|Infante|Landgrave|"
    r"Margrave|Elector|Sultan|Caliph|Emir|Tsar|Czar|Shah|Baron|Marquess|Viscount|Mr)\b"
)
# A name as Wikipedia writes a person: capitalised words (an Arabic article may come
# first: "al-Walid"; a regnal number is one too), the lower-case particles of names, an
# ordinal, and a noble style after a comma ("Hugh IV, Duke of Burgundy"; "Rotrou I,
# Viscount of Châteaudun"). No word may be read two ways: a branch of its own for regnal
# numbers made a failed match try 2^n readings of n numerals ("I II III … XX, son of").
_PARTICLE = r"(?:of|de|da|del|der|di|du|la|le|van|von|y|al|el|bin|ibn|the)"
_ARTICLE = r"(?:(?:al|el|ad|an|ar|as|at|az|ul|ud)-)?"
_WORD = rf"(?:{_ARTICLE}[A-Z][\w'’.\-]*|\d+(?:st|nd|rd|th)?\b)"
_STYLE = (
    r"(?:\d+(?:st|nd|rd|th) )?(?:[A-Z][a-z]+ )?(?:Duke|Duchess|Count|Countess|Earl|King|"
    r"Queen|Prince|Princess|Marquess|Marquis|Marchioness|Baron|Baroness|Viscount|"
    r"Viscountess|Lord|Lady|Margrave|Landgrave|Elector|Electress|Emperor|Empress|"
    r"Bishop|Sultan)(?: of [A-Z][\w'’\-]*(?: [A-Z][\w'’\-]*)*)*"
)
_PERSON = re.compile(rf"{_WORD}(?: (?:{_PARTICLE} )*{_WORD})*(?:, {_STYLE})?")
# "son of", "the eldest son and heir of", "a daughter of", "born in X to", "daughter of
# actors A and B": whose child the subject is (at most two lower-case words before the
# name: a calling, "the late")
_CHILD_OF = re.compile(
    r"\b(?:(?:son|daughter|child|sons|daughters|issue)\b[^.;()]{0,40}?\bof"
    r"|[Bb]orn\b[^.;()]{0,60}?\bto)\s+(?:[a-z]+\s+){0,2}?(?=[A-Z])"
)
# What joins the second parent to the first: "and B", "by his first wife, B", "and her
# consort Prince B" (then the first one written is the mother), past the first one's
# dates ("Karl, 6th Prince of Leiningen( 1898 – 1946) and …")
_SECOND_PARENT = re.compile(
    r"^\s*(?:\([^()]*\))?,? (?:and|by)(?: of)?(?: (?P<whose>his|her|their))?"
    r"(?: (?:first|second|third|fourth|only))?"
    r"(?: (?:wife|husband|consort|spouse|mistress|concubine))?,?"
    r"(?: the [a-z]+)?"  # "and her husband, the cricketer B"
    r"(?: (?:queen|king|consort|princess|prince|duchess|duke|countess|count|lady|lord))*"
    r" (?=[A-Z])"
)
_PARENTS_WERE = re.compile(r"\b(?:[Hh]is|[Hh]er|[Tt]heir) parents (?:were|are) (?=[A-Z])")
_NAMED = {
    "father": re.compile(r"\b(?:[Hh]is|[Hh]er|[Tt]heir) father,? (?:was )?(?=[A-Z])"),
    "mother": re.compile(r"\b(?:[Hh]is|[Hh]er|[Tt]heir) mother,? (?:was )?(?=[A-Z])"),
    "spouse": re.compile(
        # "married B", "married twice; first to A, and secondly to B", "married the
        # actress B"; "wife of B" (not "Queen consort of Denmark": a title); "her husband, B"
        r"\bmarried\b(?! into)[^.A-Z]{0,30}?\s(?=[A-Z])"
        r"|\b(?:secondly|thirdly|then|later) to\s+(?=[A-Z])"
        r"|\bmarriage to\s+(?=[A-Z])"
        r"|(?<!Queen )(?<!King )\b(?:wife|husband|consort|spouse|widow|widower) of\s+(?:the )?"
        r"(?=[A-Z])"
        r"|\b(?:[Hh]is|[Hh]er) (?:first |second |third )?(?:wife|husband|consort),? (?=[A-Z])"
    ),
}
# Brothers and sisters of the subject: "his younger brother, B", "Ida's brother was B",
# "brother of B" (not inside a clause about another), "two older brothers B and C".
_SIBLING_WORDS = {"brother": "brother", "sister": "sister", "sibling": "(?:brother|sister|sibling)"}


def _sibling_pattern(word: str) -> re.Pattern[str]:
    mods = r"(?: (?:younger|elder|older|eldest|youngest|twin|only|late|half))*"
    return re.compile(
        rf"(?P<own>\b(?:[Hh]is|[Hh]er|[Tt]heir|[A-Z][\w-]*'s){mods} (?:half-)?{word}s?,? "
        r"(?:(?:was|were|is|are) )?(?=[A-Z]))"
        rf"|(?P<of>\b(?:half-)?{word}s? of (?:the )?(?=[A-Z]))"
        rf"|(?P<list>\b{word}s,? (?=[A-Z]))"
    )


_SIBLING = {k: _sibling_pattern(w) for k, w in _SIBLING_WORDS.items()}
_AND_NEXT = re.compile(r"^,? and (?=[A-Z])")

_HE = re.compile(r"\b(?:[Hh]e|[Hh]is|[Hh]im|[Hh]imself)\b")
_SHE = re.compile(r"\b(?:[Ss]he|[Hh]er|[Hh]ers|[Hh]erself)\b")

#: A person's sex as the evidence writes it: "f", "m" or "" (not said).
Sex = Callable[[str], str]


@dataclass(frozen=True, slots=True)
class KinStep:
    """One step taken: the relative's name and article (``title``, "" when the evidence
    has none), and the article and sentence it was read in."""

    relation: str
    name: str
    title: str
    source: str
    sentence: str


def kin_paths(question: str) -> tuple[tuple[str, ...], ...]:
    """The steps a question's relative-of-a-relative word stands for, each reading of it
    (none: no such word)."""
    m = _PATH.search(question)
    return PATHS[m.group(1).lower()] if m else ()


def _person_at(text: str) -> str | None:
    m = _PERSON.match(text)
    if m is None:
        return None
    name = m.group(0).rstrip(" ,.")
    return name or None


def _unsexed(name: str) -> str:
    return ""


def _parents(sentence: str, sex: Sex = _unsexed) -> tuple[str | None, str | None]:
    """The father and the mother a sentence gives its subject ("son of A and B"; "his
    parents were A and B"). English writes the father first, unless the sentence or the
    evidence says otherwise ("A and her consort B"; A is a queen; B's article says he)."""
    m = _PARENTS_WERE.search(sentence) or next(
        (m for m in _CHILD_OF.finditer(sentence) if not _about_another(sentence[: m.start()])),
        None,
    )
    if m is None:
        return None, None
    rest = sentence[m.end() :]
    father = _person_at(rest)
    if father is None:
        return None, None
    after = rest[len(father) :]
    second = _SECOND_PARENT.match(after)
    mother = _person_at(after[second.end() :]) if second else None
    if mother is not None and second is not None:
        if second.group("whose") == "her" or sex(father) == "f" or sex(mother) == "m":
            return mother, father
    elif sex(father) == "f":  # "daughter of Queen A": the mother alone
        return None, father
    return father, mother


def _about_another(before: str) -> bool:
    """Whether a child-of clause preceded by ``before`` describes someone named inside
    the sentence ("married Elizabeth Beckford, daughter of …") rather than its subject
    ("Dui Finn, son of …", "She was a daughter of …")."""
    before = before.rstrip()
    if not before.endswith(","):
        return False
    head = re.sub(r"\s*\([^()]*\)", "", before[:-1]).strip()  # '("of wages")'
    # a name written at the very start is the sentence's subject
    return _PERSON.fullmatch(head) is None


def _relatives(sentence: str, relation: str, sex: Sex = _unsexed) -> list[str]:
    """The ``relation``s (father, mother, spouse, brother, sister, sibling) of the
    sentence's subject that it names, in the order written."""
    if relation in _SIBLING:
        out: list[str] = []
        for m in _SIBLING[relation].finditer(sentence):
            if m.group("of") and _about_another(sentence[: m.start()]):
                continue
            rest = sentence[m.end() :]
            person = _person_at(rest)
            while person is not None:
                out.append(_HONORIFIC.sub("", person) or person)
                more = _AND_NEXT.match(rest[len(person) :])
                rest = rest[len(person) + more.end() :] if more else ""
                person = _person_at(rest) if more else None
        return out
    if relation == "spouse":
        # a wife or husband named inside a child-of clause is a parent's ("daughter of
        # A and her husband, B")
        child = _CHILD_OF.search(sentence) or _PARENTS_WERE.search(sentence)
        cut = child.start() if child is not None else len(sentence)
        found = [
            _person_at(sentence[m.end() :])
            for m in _NAMED["spouse"].finditer(sentence)
            if m.start() < cut
        ]
        return [f for f in found if f is not None]
    named = _NAMED[relation].search(sentence)
    if named is not None:
        person = _person_at(sentence[named.end() :])
        return [person] if person is not None else []
    father, mother = _parents(sentence, sex)
    person = father if relation == "father" else mother
    return [person] if person is not None else []


def sex_in(sentences_of: Callable[[str], Sequence[str]], titles: Sequence[str]) -> Sex:
    """A person's sex from an honorific ("Queen", "Prince") or, when the evidence holds
    their article, from its pronouns (twice as many of one kind as of the other)."""

    def sex(name: str) -> str:
        if _FEMALE_TITLE.match(name):
            return "f"
        if _MALE_TITLE.match(name):
            return "m"
        title = title_for(name, titles)
        if title is None:
            return ""
        text = " ".join(sentences_of(title))
        he, she = len(_HE.findall(text)), len(_SHE.findall(text))
        if he >= 2 * she and he >= 2:
            return "m"
        if she >= 2 * he and she >= 2:
            return "f"
        return ""

    return sex


def follow(
    start: str,
    steps: Sequence[str],
    sentences_of: Callable[[str], Sequence[str]],
    titles: Sequence[str],
) -> list[KinStep] | None:
    """Take ``steps`` from the article ``start``; None when a step is not written in the
    evidence or leads to a person without an article before the last step.

    A step takes the first relative written who fits: before the last step, one whose
    article the evidence holds; a spouse after a parent is not the start's own other
    parent (a stepmother is the father's wife, not the mother)."""
    sex = sex_in(sentences_of, titles)
    own_parents = {
        fold(p)
        for sentence in sentences_of(start)
        for p in _parents(sentence, sex)
        if p is not None
    }
    taken: list[KinStep] = []
    current = start
    for i, relation in enumerate(steps):
        last = i == len(steps) - 1
        chosen: tuple[str, str | None, str, str] | None = None
        for sentence in sentences_of(current):
            for found in _relatives(sentence, relation, sex):
                if relation == "spouse" and i > 0 and fold(found) in own_parents:
                    continue
                title = title_for(found, titles, exclude=(current, start))
                if title is None and not last:
                    continue
                chosen = (found, title, current, sentence)
                break
            if chosen is not None:
                break
        if chosen is None and relation == "spouse":
            # a marriage is often written in the other one's article only
            spouse = _married_to(current, sentences_of, titles, exclude=(start,))
            if spouse is not None:
                found, source, sentence = spouse
                chosen = (found, source, source, sentence)
        if chosen is None:
            return None
        found, title, source, sentence = chosen
        taken.append(KinStep(relation, found, title or "", source, sentence))
        current = title or ""
    return taken


def _married_to(
    person: str,
    sentences_of: Callable[[str], Sequence[str]],
    titles: Sequence[str],
    exclude: Sequence[str],
) -> tuple[str, str, str] | None:
    """The evidence article whose subject married ``person`` (name, title, sentence)."""
    for t in titles:
        if t == person or t in exclude:
            continue
        for sentence in sentences_of(t):
            if any(title_for(s, [person]) == person for s in _relatives(sentence, "spouse")):
                return t.split(" (")[0], t, sentence
    return None


def answer_name(step: KinStep) -> str:
    """The graph's title for the person when it has one, else the name as written
    without its honorific ("Prince Richard I of Capua" → "Richard I of Capua")."""
    if step.title:
        return step.title.split(" (")[0]
    return _HONORIFIC.sub("", step.name) or step.name


def title_for(name: str, titles: Sequence[str], exclude: Sequence[str] = ()) -> str | None:
    """The evidence article a person's name refers to: the title itself, its name before
    a disambiguation or a style ("Hugh IV" for "Hugh IV, Duke of Burgundy"), with or
    without an honorific ("Prince Jordan I of Capua"), or the style written first
    ("Archduke Ferdinand of Austria-Este" for "Ferdinand Karl, Archduke of Austria-Este")."""
    keys = {fold(name), fold(_HONORIFIC.sub("", name))}
    keys |= {k.split(", ")[0] for k in keys}
    styled = _styled(name)
    for t in titles:
        if t in exclude:
            continue
        base = fold(t.split(" (")[0])
        if base in keys or base.split(", ")[0] in keys:
            return t
        if styled is not None and ", " in base:
            given, style = base.split(", ", 1)
            if style == styled[1] and given.split()[0] == styled[0]:
                return t
    return None


_STYLED = re.compile(
    r"^(?P<rank>[A-Z][a-z]+(?: [A-Z][a-z]+)?) (?P<given>[A-Z]\w*)\b.* of (?P<place>.+)$"
)


def _styled(name: str) -> tuple[str, str] | None:
    """("ferdinand", "archduke of austria-este") for "Archduke Ferdinand of Austria-Este":
    the name a title writes as "Ferdinand Karl, Archduke of Austria-Este"."""
    m = _STYLED.match(name)
    if m is None or not _HONORIFIC.fullmatch(m.group("rank") + " "):
        return None
    return fold(m.group("given")), fold(f"{m.group('rank')} of {m.group('place')}")

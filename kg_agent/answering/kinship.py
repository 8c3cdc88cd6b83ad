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

from kg_agent.text import fold

__all__ = ["PATHS", "KinStep", "answer_name", "follow", "kin_path", "title_for"]

#: The steps behind a word for a relative of a relative, in the order they are taken.
PATHS: dict[str, tuple[str, ...]] = {
    "paternal grandfather": ("father", "father"),
    "paternal grandmother": ("father", "mother"),
    "maternal grandfather": ("mother", "father"),
    "maternal grandmother": ("mother", "mother"),
    "father-in-law": ("spouse", "father"),
    "mother-in-law": ("spouse", "mother"),
    "stepmother": ("father", "spouse"),
    "stepfather": ("mother", "spouse"),
}
_PATH = re.compile(r"\b(" + "|".join(re.escape(k) for k in PATHS) + r")\b", re.I)

_HONORIFIC = re.compile(
    r"^(?:(?:King|Queen|Prince|Princess|Duke|Duchess|Count|Countess|Emperor|Empress|Lord|"
    r"Lady|Sir|Saint|Infante|Infanta|Archduke|Archduchess|Margrave|Landgrave|Elector|"
    r"Sultan|Pharaoh|Chief|Dame|Grand Duke|Grand Duchess)\s+)+"
)
# A name as Wikipedia writes a person: capitalised words, the lower-case particles of
# names, an ordinal or a regnal number, and a noble style after a comma ("Hugh IV,
# Duke of Burgundy"; "Rotrou I, Viscount of Châteaudun").
_PARTICLE = r"(?:of|de|da|del|der|di|du|la|le|van|von|y|al|el|bin|ibn|the)"
_WORD = r"(?:[A-Z][\w'’.\-]*|[IVXL]+\b|\d+(?:st|nd|rd|th)?\b)"
_STYLE = (
    r"(?:\d+(?:st|nd|rd|th) )?(?:[A-Z][a-z]+ )?(?:Duke|Duchess|Count|Countess|Earl|King|"
    r"Queen|Prince|Princess|Marquess|Marquis|Marchioness|Baron|Baroness|Viscount|"
    r"Viscountess|Lord|Lady|Margrave|Landgrave|Elector|Electress|Emperor|Empress|"
    r"Bishop|Sultan)(?: of [A-Z][\w'’\-]*(?: [A-Z][\w'’\-]*)*)*"
)
_PERSON = re.compile(rf"{_WORD}(?: (?:{_PARTICLE} )*{_WORD})*(?:, {_STYLE})?")
# "son of", "the eldest son and heir of", "a daughter of", "born in X to": whose child
# the subject is
_CHILD_OF = re.compile(
    r"\b(?:(?:son|daughter|child|sons|daughters|issue)\b[^.;()]{0,40}?\bof"
    r"|born\b[^.;()]{0,60}?\bto)\s+(?=[A-Z])"
)
_SECOND_PARENT = re.compile(
    r"^,? (?:and|by (?:his|her) (?:first |second |third |fourth )?(?:wife|husband|consort),?)"
    r"(?: (?:queen|king|consort|princess|prince|duchess|duke|countess|count|lady|lord))*"
    r" (?=[A-Z])"
)
_NAMED = {
    "father": re.compile(r"\b(?:his|her|their) father,? (?:was )?(?=[A-Z])"),
    "mother": re.compile(r"\b(?:his|her|their) mother,? (?:was )?(?=[A-Z])"),
    "spouse": re.compile(
        r"\b(?:married|(?:wife|husband|consort|widow|widower) of|(?:his|her) "
        r"(?:first |second |third )?(?:wife|husband|consort),?)\s+(?=[A-Z])"
    ),
}


@dataclass(frozen=True, slots=True)
class KinStep:
    """One step taken: the relative's name and article (``title``, "" when the evidence
    has none), and the article and sentence it was read in."""

    relation: str
    name: str
    title: str
    source: str
    sentence: str


def kin_path(question: str) -> tuple[str, ...]:
    """The steps a question's relative-of-a-relative word stands for (none: no such word)."""
    m = _PATH.search(question)
    return PATHS[m.group(1).lower()] if m else ()


def _person_at(text: str) -> str | None:
    m = _PERSON.match(text)
    if m is None:
        return None
    name = m.group(0).rstrip(" ,.")
    return name or None


def _parents(sentence: str) -> tuple[str | None, str | None]:
    """The father and the mother a sentence gives its subject ("son of A and B")."""
    m = next(
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


def _relative(sentence: str, relation: str) -> str | None:
    """The ``relation`` (father, mother, spouse) of the sentence's subject, if it says."""
    named = _NAMED[relation].search(sentence)
    if named is not None:
        return _person_at(sentence[named.end() :])
    if relation in ("father", "mother"):
        father, mother = _parents(sentence)
        return father if relation == "father" else mother
    return None


def follow(
    start: str,
    steps: Sequence[str],
    sentences_of: Callable[[str], Sequence[str]],
    titles: Sequence[str],
) -> list[KinStep] | None:
    """Take ``steps`` from the article ``start``; None when a step is not written in the
    evidence or leads to a person without an article before the last step."""
    taken: list[KinStep] = []
    current = start
    for i, relation in enumerate(steps):
        found = None
        source = current
        for sentence in sentences_of(current):
            found = _relative(sentence, relation)
            if found is not None:
                break
        if found is None and relation == "spouse":
            # a marriage is often written in the other one's article only
            spouse = _married_to(current, sentences_of, titles, exclude=(start,))
            if spouse is not None:
                found, source, sentence = spouse
        if found is None:
            return None
        title = title_for(found, titles, exclude=(current, start))
        if title is None and i < len(steps) - 1:
            return None
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
            spouse = _relative(sentence, "spouse")
            if spouse is not None and title_for(spouse, [person]) == person:
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
    without an honorific ("Prince Jordan I of Capua")."""
    keys = {fold(name), fold(_HONORIFIC.sub("", name))}
    keys |= {k.split(", ")[0] for k in keys}
    for t in titles:
        if t in exclude:
            continue
        base = fold(t.split(" (")[0])
        if base in keys or base.split(", ")[0] in keys:
            return t
    return None

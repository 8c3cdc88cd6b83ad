"""What a question asks: the kind of answer, the relation, and for a comparison the options.

A few general rules of English questions, not templates of one dataset: the wh-word
and the noun after it give the answer kind ("when" → a date, "which country" → a place);
a trailing "A or B" makes a choice between two named things; an auxiliary verb first
makes a yes/no question; the question's remaining content words, reduced to stems
("directed" → ``direct``, "born" → ``birth``), are the relation an answer sentence
must express. A possessive names a hop: in "When did X's father die?" the father is
found first (``possessed``), then his death.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from kg_agent.language.spans import names
from kg_agent.language.tokens import STOP_WORDS, content_matches, content_tokens

__all__ = [
    "INVERSE",
    "KINSHIP",
    "POSSESSIVE",
    "AnswerKind",
    "QuestionShape",
    "analyse",
    "shares_stem",
    "stem",
]


class AnswerKind(str, Enum):
    PERSON = "person"
    PLACE = "place"
    DATE = "date"
    NUMBER = "number"
    YES_NO = "yes_no"
    CHOICE = "choice"  # one of the options the question names ("A or B")
    ENTITY = "entity"  # any other named thing ("which film", "what company")


AUXILIARIES = frozenset(
    [
        "is",
        "are",
        "was",
        "were",
        "do",
        "does",
        "did",
        "can",
        "could",
        "has",
        "have",
        "had",
        "will",
        "would",
        "should",
        "shall",
        "may",
        "might",
    ]
)
#: The words that ask; a question with none of them (nor an auxiliary first) is a
#: fragment ("number of printable ascii characters").
_WH_WORDS = frozenset(
    ["what", "whats", "which", "who", "whom", "whose", "when", "where", "why", "how"]
)
_DATE_NOUNS = frozenset(["year", "date", "century", "decade", "day", "month"])
#: "how" with a measure asks for a number ("how fast did the economy grow")
_HOW_MUCH = r"\bhow (many|much|old|long|tall|far|big|large|high|fast|deep|wide|heavy|hot|cold)\b"
_PLACE_NOUNS = frozenset(
    [
        "country",
        "city",
        "state",
        "town",
        "county",
        "village",
        "region",
        "province",
        "nation",
        "continent",
        "island",
        "river",
        "location",
        "place",
        "district",
        "borough",
        "suburb",
        "capital",
        "area",
        "municipality",
        "headquarters",
    ]
)
_PERSON_NOUNS = frozenset(
    [
        "person",
        "man",
        "woman",
        "actor",
        "actress",
        "singer",
        "writer",
        "author",
        "director",
        "player",
        "president",
        "king",
        "queen",
        "father",
        "mother",
        "son",
        "daughter",
        "husband",
        "wife",
        "spouse",
        "brother",
        "sister",
    ]
)
#: Words that say which end of a comparison wins: False → the earliest/smallest.
_LATEST = frozenset(
    [
        *("later", "last", "younger", "recently", "recent", "newer", "latest", "youngest"),
        *("longer", "more", "larger", "bigger", "higher", "taller"),
    ]
)
_EARLIEST = frozenset(
    [
        *("earlier", "first", "older", "before", "sooner", "oldest", "earliest", "fewer"),
        *("less", "shorter", "smaller", "lower"),
    ]
)
#: Irregular forms whose stems share nothing ("born" and "birth", "died" and "death").
_IRREGULAR = {
    "born": "birth",
    "birthplace": "birth",
    "birthday": "birth",
    "died": "death",
    "die": "death",
    "dies": "death",
    "dead": "death",
    "wrote": "write",
    "written": "write",
    "writer": "write",
    "author": "write",
    "married": "marri",
    "marry": "marri",
    "marriage": "marri",
    "wife": "spouse",
    "husband": "spouse",
    "spouse": "spouse",
    "made": "make",
    "ran": "run",
    "runs": "run",
    "released": "releas",
    "release": "releas",
    "came": "releas",
    "nationality": "nation",
    "national": "nation",
    "buried": "buri",
    "burial": "buri",
    "founded": "found",
    "founder": "found",
    "music": "compos",
    # "where did X study" is written "graduated from", "educated at", "attended"
    **dict.fromkeys(
        ["study", "studied", "studies", "graduate", "graduated", "educated", "education"],
        "educ",
    ),
    **dict.fromkeys(["attended", "attend", "alumnus", "alumni", "alma"], "educ"),
    # "where does X work" is written "professor at", "taught at", "employed by"
    **dict.fromkeys(["works", "worked", "professor", "taught", "teaches", "employed"], "work"),
    # kinship has two sides: "the father of X" is also written "X, son of Y"
    # (see INVERSE)
    "father": "parent",
    "mother": "parent",
    "parents": "parent",
    "son": "child",
    "sons": "child",
    "daughter": "child",
    "daughters": "child",
    "child": "child",
    "children": "child",
    "wives": "spouse",
    "husbands": "spouse",
}
#: Relations written from the other side: "the father of X" is stated "X, son of Y".
INVERSE = {"parent": "child", "child": "parent", "spouse": "marri"}
#: Kinship stems: a hop along one is read in its direction ("daughter of Y": Y is a
#: parent; "father of Y": Y is a child); a marriage reads the same from both sides.
KINSHIP = frozenset(["parent", "child", "spouse", "marri"])

#: Words that say what a question is, not what it asks about.
_FRAME = frozenset(
    [
        "name",
        "named",
        "called",
        "known",
        "film",
        "movie",
        "also",
        "one",
        "first",
        "whose",
        "many",
        "much",
        "long",
        "year",
        "date",
        "play",
        "played",
        "person",
    ]
)


def stem(word: str) -> str:
    """A crude English stem: irregular forms mapped, common suffixes cut to 4+ letters."""
    w = word.lower().strip("'’")
    if w.endswith(("'s", "’s")):
        w = w[:-2]
    if w in _IRREGULAR:
        return _IRREGULAR[w]
    if w.endswith("s") and w[:-1] in _IRREGULAR:  # "writers" as "writer"
        return _IRREGULAR[w[:-1]]
    for suffix in ("ation", "ities", "ing", "ion", "ers", "ors", "ed", "er", "or", "es", "s"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 4:
            return w[: -len(suffix)]
    return w


def shares_stem(word: str, noun: str) -> bool:
    """Whether one word names the other's kind ("Professor" a "professorship", "College" a
    "college"): one begins with the other, or both with the same six letters."""
    a, b = word.lower(), noun.lower()
    if len(a) < 3 or len(b) < 3:
        return False
    if a.startswith(b) or b.startswith(a):
        return min(len(a), len(b)) >= min(len(b), 5) or a == b
    return len(a) >= 6 and len(b) >= 6 and a[:6] == b[:6]


@dataclass(frozen=True, slots=True)
class QuestionShape:
    """How a question is answered: its kind, relation stems, named things and options."""

    question: str
    kind: AnswerKind
    relation: frozenset[str]  # stems of the words that say what is asked
    named: tuple[str, ...]  # capitalised names in the question (first word excluded)
    options: tuple[str, ...] = ()  # CHOICE: the two things to choose between
    latest: bool | None = None  # CHOICE by date or number: does the later/larger win?
    noun: str = ""  # the noun after the wh-word ("country" in "which country")
    #: the relation's stems grouped as written, in question order: "the father of the
    #: director of film X" → ({father}, {direct}); two or more make a chain of hops
    phrases: tuple[frozenset[str], ...] = ()
    #: the relation written after a possessive ("X's father" → {parent}): the first hop,
    #: wherever it stands in the question ("the place of death of X's father")
    possessed: frozenset[str] = frozenset()

    @property
    def chained(self) -> bool:
        """Whether the answer is a fact of what a first hop leads to: two relation
        phrases, or a possessed one whose fact the answer kind asks for ("Which country
        is X's father from?"; "Who is X's father?" is answered by the hop itself)."""
        if len(self.phrases) >= 2:
            return True
        return bool(self.possessed) and self.kind in (
            AnswerKind.PLACE,
            AnswerKind.DATE,
            AnswerKind.NUMBER,
        )

    @property
    def cues(self) -> frozenset[str]:
        """The relation's stems and their other sides ("parent" also finds "son of")."""
        return self.relation | {INVERSE[r] for r in self.relation if r in INVERSE}


#: Questions longer than this are not searched for options (a choice is short, and the
#: option rules must stay linear on a 4,000-character question).
_MAX_CHOICE_CHARS = 300
#: Comparatives of a quantity, not of a date: "longer", "more" compare numbers.
QUANTITY_WORDS = frozenset(
    [
        "longer",
        "shorter",
        "more",
        "fewer",
        "less",
        "larger",
        "bigger",
        "smaller",
        "higher",
        "taller",
        "lower",
    ]
)


_COMPARATIVES = _LATEST | _EARLIEST | QUANTITY_WORDS


_QUOTED_END = re.compile(r"[\"“]([^\"“”]{1,80})[\"”]\s*$")
_QUOTED_START = re.compile(r"\s*[\"“]([^\"“”]{1,80})[\"”]\s*$")


def _options(question: str, words: set[str]) -> tuple[str, ...]:
    """The two options of "…, A or B?", or of "(first) out of/between A and B" when the
    question compares ("Who was born first out of A and B?")."""
    q = question.strip().rstrip("?").strip()
    if len(q) > _MAX_CHOICE_CHARS:
        return ()
    cut = q.rfind(" or ")
    if cut > 0:
        # the options begin after the comma that ends the comparison ("… came out
        # first, Murder, She Said or …"), else after the last comma before "or"
        comma = q.rfind(",", 0, cut)
        compared = [
            m.end() for m in content_matches(q[:cut]) if m.group(0).lower() in _COMPARATIVES
        ]
        if compared:
            after = q.find(",", compared[-1], cut)
            comma = after if after >= 0 else comma
            if comma < compared[0] and not q[compared[0] :].lower().startswith(" than "):
                # no comma after the comparison ("which mission lasted longer apollo 8
                # or apollo 11", as people type): the options begin after its word
                comma = compared[0]
        quoted = _QUOTED_END.search(q, 0, cut), _QUOTED_START.match(q, cut + 4)
        if quoted[0] is not None and quoted[1] is not None:  # 'first "A" or "B"'
            return (quoted[0].group(1).strip(), quoted[1].group(1).strip())
        if comma < 0:
            return ()
        a, b = q[comma + 1 : cut].strip(), q[cut + 4 :].strip()
    else:
        if not words & (_LATEST | _EARLIEST):
            return ()  # "the distance between Paris and London" asks for no choice
        m = re.search(r"\b(?:out of|between) (.+?) and (.+)$", q)
        if m is None:
            return ()
        a, b = m.group(1).strip(), m.group(2).strip()
    a, b = _clean_option(a), _clean_option(b)
    if not a or not b or len(a.split()) > 12 or len(b.split()) > 12:
        return ()
    return (a, b)


_QUOTES = '"“”'


def _clean_option(text: str) -> str:
    """An option without the punctuation around it, a stray quote or a lowercase article
    ('" the French Bulldog' → 'French Bulldog'; "The Deer Hunter" keeps its article)."""
    text = text.strip(" ,;:")
    if sum(text.count(q) for q in _QUOTES) % 2:
        text = text.strip(_QUOTES).strip(" ,;:")
    return re.sub(r"^(?:the|a|an) (?=\S)", "", text)


_NAME_JOINS = frozenset(["of", "de", "von", "van", "the", "la", "le", "du", "da"])


def _aux_options(question: str, words: set[str]) -> tuple[str, ...]:
    """The options of "Was A or B born first?" and "Is A or B public?": a yes/no
    question's form, a choice's meaning, when a name follows "or" and something is said
    of the two after it."""
    m = re.match(r"^\w+ (.+?) or (.+)$", question.strip().rstrip("?").strip())
    if m is None or not m.group(1)[:1].isupper():
        return ()
    tail = m.group(2).split()
    name: list[str] = []
    for w in tail:
        if not (w[:1].isupper() or (name and w.lower() in _NAME_JOINS)):
            break
        name.append(w)
    while name and not name[-1][:1].isupper():
        name.pop()
    if not name or len(name) == len(tail):
        return ()
    return (_clean_option(m.group(1)), _clean_option(" ".join(name)))


def _strip_lead(name: str) -> str:
    """A name found at the start of a question, without its wh-word or auxiliary
    ("Which Bill Nelson" → "Bill Nelson"; "Who" → "")."""
    parts = name.split(" ")
    while parts and (parts[0].lower() in STOP_WORDS or parts[0].lower() in AUXILIARIES):
        parts.pop(0)
    return " ".join(parts)


#: A possessive ending ("Jansch's", "(Noble)'s", "Charles'"), cut before words are read.
POSSESSIVE = re.compile(r"(?<=[\w).])(?:['’]s|(?<=s)['’])(?=\s)")
_ORDINAL = re.compile(r"^\d+(?:st|nd|rd|th)$")
#: Words that qualify a possessed noun without ending it ("X's maternal grandfather").
_QUALIFIERS = frozenset(["paternal", "maternal", "elder", "eldest", "younger", "youngest"])


def _segments(q: str) -> tuple[list[str], set[int]]:
    """The question's words without possessive endings, and the positions of the words
    that follow a possessive (where a possessed relation begins)."""
    tokens: list[str] = []
    starts: set[int] = set()
    for i, part in enumerate(POSSESSIVE.split(q)):
        if i > 0:
            starts.add(len(tokens))
        tokens += [t.lower() for t in content_tokens(part) if t not in ("'s", "’s")]
    return tokens, starts


def analyse(question: str) -> QuestionShape:
    """The shape of ``question`` (see the module docstring for the rules)."""
    q = " ".join(question.split())
    tokens, possessive_starts = _segments(q)
    first = tokens[0] if tokens else ""
    noun = ""
    for i, t in enumerate(tokens[:-1]):
        if t in ("which", "what", "whose") and i < 4:
            # "what is the largest state", "which of them": a verb or a particle is no noun
            noun = tokens[i + 1] if tokens[i + 1] not in STOP_WORDS else ""
            break
    words = set(tokens)
    options = _options(q, words) if first not in AUXILIARIES or " or " in q else ()
    aux_choice = _aux_options(q, words) if first in AUXILIARIES and not options else ()
    if aux_choice:
        options = aux_choice
    lowered = q.lower()
    fragment = first not in AUXILIARIES and not words & _WH_WORDS
    if options and (first not in AUXILIARIES or aux_choice):
        kind = AnswerKind.CHOICE
    elif re.search(r"\b(place|city|country|location|site) of (birth|death|burial)\b", lowered):
        kind = AnswerKind.PLACE
    elif re.search(r"\b(?:(?:date|year|day) of|birthday)\b", lowered):
        kind = AnswerKind.DATE
    elif re.search(r"\b(population|number of|percentage|share of)\b", lowered) and (
        first in ("what", "which") or fragment
    ):
        # "what is the population of X", or a fragment: "number of printable characters"
        kind = AnswerKind.NUMBER
    elif first in AUXILIARIES:
        kind = AnswerKind.YES_NO
    elif (
        first == "when"
        or noun in _DATE_NOUNS
        or (fragment and bool(words & _DATE_NOUNS))  # "animalia, year published?"
        or ("what year" in q.lower() or "which year" in q.lower())
    ):
        kind = AnswerKind.DATE
    elif re.search(_HOW_MUCH, q, re.I):
        kind = AnswerKind.NUMBER
    elif first == "where" or noun in _PLACE_NOUNS or "nationality" in words:
        kind = AnswerKind.PLACE
    elif first in ("who", "whom", "whose") or noun in _PERSON_NOUNS:
        kind = AnswerKind.PERSON
    else:
        kind = AnswerKind.ENTITY
    bare = POSSESSIVE.sub("", q)
    found = [s for s in names(bare) if s.start > 0 or _strip_lead(s.text)]
    # what a title's parentheses hold ("Tiger Cage (Film)", "(Cricketer, Born 1929)")
    # is not a thing the question names, though its words are not the relation either
    named = tuple(
        n
        for s in found
        if bare.rfind("(", 0, s.start) <= bare.rfind(")", 0, s.start) and (n := _strip_lead(s.text))
    )
    named_words = {w.lower() for s in found for w in content_tokens(_strip_lead(s.text))}
    named_words |= {w.lower() for n in options for w in content_tokens(n)}
    relation = frozenset(
        stem(t)
        for t in tokens
        if t not in STOP_WORDS
        and t not in AUXILIARIES
        and t not in _FRAME
        and t not in named_words
        and t not in _LATEST
        and t not in _EARLIEST
        and not t.isdigit()
        and not _ORDINAL.match(t)  # "Thomas Stafford, 3rd Earl": part of a name
    )
    phrases: list[set[str]] = []
    previous = False
    possessed: set[str] = set()
    # after a possessive, the possessed noun (with its qualifiers) is a phrase of its own
    in_possessed = closes = False
    counted = False  # "how many vacuum tubes": what is counted, not a relation to follow
    for i, t in enumerate(tokens):
        is_relation = (
            stem(t) in relation and t not in named_words and t not in _PLACE_NOUNS | {"where"}
        )
        counted = (counted and is_relation) or (
            i > 0 and t in ("many", "much") and tokens[i - 1] == "how"
        )
        if counted:
            previous = False
            continue
        if i in possessive_starts:
            in_possessed, previous = True, False
        if is_relation and previous and not closes:
            phrases[-1].add(stem(t))
        elif is_relation:
            phrases.append({stem(t)})
        closes = False
        if in_possessed and is_relation:
            possessed.add(stem(t))
            if t not in _QUALIFIERS:  # the noun ends the possessed phrase
                in_possessed, closes = False, True
        elif in_possessed and t not in STOP_WORDS:
            in_possessed = False
        previous = is_relation
    latest = None
    if kind is AnswerKind.CHOICE:
        if words & _LATEST:
            latest = True
        elif words & _EARLIEST:
            latest = False
    return QuestionShape(
        q,
        kind,
        relation,
        named,
        options,
        latest,
        noun,
        tuple(frozenset(p) for p in phrases),
        frozenset(possessed),
    )

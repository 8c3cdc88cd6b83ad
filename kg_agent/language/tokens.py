"""Words, stop words, folding and sentences: the text handling every module shares.

Why one module: retrieval, synthesis, the multi-step rules, the Cypher packs and the
evaluation each split text into words, and each had its own regex and stop-word list;
two lists that drift apart make two parts of the product disagree on what a question
asks. The tokenisers here differ on purpose, and each says what it keeps:

* :func:`words`: runs of word characters, lower-cased ("Babbage's" → ``babbage``, ``s``);
* :func:`content_words`: words with inner apostrophes and hyphens kept ("Lovelace's",
  "Anglo-French"), minus :data:`STOP_WORDS`;
* :func:`terms`: words with inner ``'.-`` and a trailing full stop kept ("U.S.", "St."),
  as written, for queries built from terms;
* :func:`joined_words`: runs of word characters joined by inner apostrophes or hyphens
  ("Lovelace's", "Anglo-French"), as written, never starting or ending with one;
* :func:`content_matches`: :data:`CONTENT_WORD` matches with their offsets (for code
  that needs where a word stands, not only the word);
* :func:`split_sentences`: sentence ends followed by a capital, a digit or a quote.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

__all__ = [
    "CONTENT_WORD",
    "FUNCTION_WORDS",
    "NAME_PARTICLES",
    "QUOTES",
    "SENTENCE_BREAK",
    "STOP_WORDS",
    "UPPER",
    "content_matches",
    "content_tokens",
    "content_words",
    "fold",
    "joined_words",
    "split_sentences",
    "terms",
    "words",
    "wordset",
]

#: Words that carry no topic: dropped before two texts are compared word by word.
STOP_WORDS: frozenset[str] = frozenset(
    [
        "a",
        "about",
        "after",
        "all",
        "also",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "during",
        "each",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "more",
        "most",
        "my",
        "no",
        "not",
        "of",
        "on",
        "one",
        "or",
        "other",
        "our",
        "out",
        "over",
        "she",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "up",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "whose",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)

#: The articles, prepositions and conjunctions a name may be written with or without
#: ("The Beatles", "Museum of London"): ignored when a name is matched to a title.
FUNCTION_WORDS: frozenset[str] = frozenset(
    ["the", "a", "an", "of", "and", "in", "on", "for", "to", "at", "by"]
)

#: Quote marks stripped around a name.
QUOTES = "\"'`“”‘’«»"

#: The lower-case words a name holds between its capitalised ones ("Henriette of France",
#: "Piero della Francesca", "Ludwig van Beethoven"), as a regex alternation.
NAME_PARTICLES = "of|the|de|del|della|des|di|da|dos|du|la|le|von|van|der|den|y|zu"

#: A capital letter of any script, as a regex class ("Škoda", "Łódź", "Émile" open a name
#: as "Paris" does; Python's ``re`` has no ``\p{Lu}``).
UPPER = "[" + "".join(re.escape(c) for c in map(chr, range(0x10000)) if c.isupper()) + "]"

_WORD = re.compile(r"\w+")
#: A word as written with its inner apostrophes and hyphens ("Lovelace's", "Anglo-French");
#: a stray apostrophe or hyphen at either end is part of the match.
CONTENT_WORD = re.compile(r"[\w'’-]+", re.UNICODE)
_CONTENT = CONTENT_WORD
_JOINED = re.compile(r"\w+(?:['’-]\w+)*")
_TERM = re.compile(r"\w+(?:['’.-]\w+)*\.?")
#: Where one sentence ends and the next begins (also where long sections are cut).
SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")


def words(text: str) -> list[str]:
    """The lower-cased runs of word characters of ``text``."""
    return _WORD.findall(text.lower())


def content_words(text: str) -> set[str]:
    """Lower-cased words of ``text`` (inner ``'``/``-`` kept) that are not :data:`STOP_WORDS`."""
    found = (w.strip("'’-").lower() for w in _CONTENT.findall(text))
    return {w for w in found if w and w not in STOP_WORDS}


def content_tokens(text: str) -> list[str]:
    """The words of ``text`` as written (inner ``'``/``-`` kept), in order, stop words
    included: what :func:`content_words` filters."""
    return _CONTENT.findall(text)


def content_matches(text: str) -> Iterator[re.Match[str]]:
    """:data:`CONTENT_WORD` matches of ``text``, with their offsets."""
    return CONTENT_WORD.finditer(text)


def joined_words(text: str) -> list[str]:
    """Words as written, joined by inner apostrophes or hyphens, none at either end."""
    return _JOINED.findall(text)


def wordset(words: str) -> frozenset[str]:
    """A set from a space-separated word list (keeps long word lists readable)."""
    return frozenset(words.split())


def terms(text: str) -> list[str]:
    """Words as written, with inner ``'.-`` and a final full stop ("U.S.", "St.")."""
    return _TERM.findall(text)


def fold(text: str) -> str:
    """Lower-case, accents stripped, curly apostrophes straightened: the matching form."""
    if text.isascii():  # the same result without a pass per character (most text)
        return text.casefold()
    decomposed = unicodedata.normalize("NFKD", text.replace("’", "'"))
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def split_sentences(text: str, *, min_words: int = 4) -> list[str]:
    """Sentences of each line of ``text`` with at least ``min_words`` words."""
    out: list[str] = []
    for para in text.split("\n"):
        out.extend(s.strip() for s in SENTENCE_BREAK.split(para) if len(s.split()) >= min_words)
    return out

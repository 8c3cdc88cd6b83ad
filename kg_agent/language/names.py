"""Names in a question: the spans a title may be written as, and the things it names.

A name is a run of capitalised words. What counts as part of a run depends on what
the run is for, and the finders of this module (with :func:`kg_agent.language.spans.names`
for answer candidates in evidence sentences) are the product's only ones:

* :func:`lookup_spans`: every span of a question that an article title or redirect may
  be written as ("Pride and Prejudice", "Washington, D.C."), to look up by key when
  the title automaton is too large to build. Generous on purpose: a span that is no
  title costs one lookup.
* :func:`question_names`: the things a question names, stripped of question and
  connective words ("Compare France and Germany" → France, Germany), for checking
  which of them the evidence mentions. Strict on purpose: a stray "Compare" would be a
  gap that no search fills.
* :func:`kg_agent.language.spans.names`: candidate answers in a sentence, cut where a
  date begins ("died in Beaufort on June 30, 1816" → Beaufort).
* :func:`cased_spans`: for a question typed in lower case ("who wrote animal farm"),
  which has no capitals to find names by, the runs of its words a title may be, written
  as a title would be ("Animal Farm", "Animal farm"), longest first.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from kg_agent.language.query_type import find_years
from kg_agent.language.relations import RELATION_KEYS
from kg_agent.language.tokens import NAME_PARTICLES, UPPER, fold, wordset

__all__ = ["cased_spans", "is_lower_case", "lookup_spans", "question_names"]

#: A run of capitalised words, with the particles names hold between them (and the
#: words titles hold: "Pride and Prejudice", "Death in Venice", "The World as Will and
#: Representation", "Gone with the Wind").
_NAME_RUN = re.compile(
    rf"\b{UPPER}[\w'’.&-]*(?:\s+(?:(?:{NAME_PARTICLES}|and|in|on|as|with|the|to|for|a)\s+)*"
    rf"(?:{UPPER}|[0-9])[\w'’.&-]*)*"
)
_POSSESSIVE = re.compile(r"['’]s$")
_MAX_SPAN_WORDS = 8
_MAX_SPANS = 48


def lookup_spans(question: str, eligible: Callable[[str], bool]) -> list[str]:
    """The spans of the question a title or redirect may be written as: each run of
    capitalised words and every part of it that starts with a capitalised word and ends
    with one or a number (at most eight words, 48 spans a question, in the order
    written); a final full stop is tried with and without ("U.S.", "Washington,
    D.C."). ``eligible`` drops forms no title could match ("What", "New")."""
    out: dict[str, None] = {}
    for run in _NAME_RUN.finditer(question):
        words = run.group(0).split()
        for i in range(len(words)):
            if not words[i][:1].isupper():
                continue
            for j in range(min(len(words), i + _MAX_SPAN_WORDS), i, -1):
                last = words[j - 1]
                if not (last[:1].isupper() or last[:1].isdigit()):
                    continue
                span = " ".join([*words[i : j - 1], _POSSESSIVE.sub("", last)]).rstrip(",")
                for form in dict.fromkeys((span, span.rstrip("."))):
                    if eligible(form):
                        out[form] = None
                        if len(out) == _MAX_SPANS:
                            return list(out)
    return list(out)


# Words a capitalised span of the query may start or end with that are not names.
_SPAN_STOP = wordset(
    "a an the of in on at to for from by with and or but is are was were be been did "
    "do does has have had which who whom whose what when where why how compare "
    "compared comparison versus vs between both than in during since until after "
    "before please tell show list give find"
)
_CHUNK = re.compile(r"[^,;:?!()\[\]\"“”/]+")
_WORD = re.compile(r"\w[\w'’.-]*")


def _noise(word: str) -> bool:
    return fold(word) in _SPAN_STOP or find_years(word) == (word,)


def _capitalised_runs(query: str) -> list[list[str]]:
    """Runs of words that start upper-case (a run may go on with digits: "Apollo 11")."""
    spans: list[list[str]] = []
    for chunk in _CHUNK.findall(query):
        run: list[str] = []
        for word in _WORD.findall(chunk):
            if word.endswith(".") and word.count(".") == 1:  # "Paris." but not "U.S."
                word = word[:-1]
            if word[:1].isupper() or (run and word[:1].isdigit()):
                run.append(word)
            elif run:
                spans.append(run)
                run = []
        if run:
            spans.append(run)
    return spans


def question_names(query: str) -> tuple[str, ...]:
    """Capitalised spans of ``query`` that look like names, without the question and
    connective words at their ends and a possessive "'s"; one per folded form."""
    out: dict[str, str] = {}
    for span in _capitalised_runs(query):
        words = [w[:-2] if fold(w).endswith("'s") else w for w in span]
        while words and _noise(words[0]):
            words.pop(0)
        while words and _noise(words[-1]):
            words.pop()
        name = " ".join(words)
        if name:
            out.setdefault(fold(name), name)
    return tuple(out.values())


#: Words a lower-case name never starts or ends with (the question's frame).
_FRAME_WORDS = _SPAN_STOP | wordset(
    "who's what's where's when's how's it's is was were be been do does did has have had "
    "can could would should will shall may might get got go went live lives lived use used "
    "say says said call called name named mean means"
)
_LOWER_PARTICLES = frozenset(NAME_PARTICLES.split("|")) | {"and", "in", "on", "as", "at"}
_MAX_CASED_WORDS = 5


def is_lower_case(question: str) -> bool:
    """Whether ``question`` was typed without capitals (its first letter aside)."""
    return not any(c.isupper() for c in question[1:])


def cased_spans(question: str) -> list[str]:
    """The runs of a lower-case question's words (at most five, none starting or ending
    with a frame word) written as titles are: each word capitalised but the particles
    ("Brave New World", "The World as Will and Representation"), and only the first
    ("Animal farm"); longest first, then in question order."""
    words = [w.removesuffix("'s").removesuffix("’s") for w in _WORD.findall(question)]
    words = [w.strip(".") for w in words if w.strip(".")]
    out: dict[str, None] = {}
    for n in range(min(_MAX_CASED_WORDS, len(words)), 0, -1):
        for i in range(len(words) - n + 1):
            run = words[i : i + n]
            if fold(run[0]) in _FRAME_WORDS or fold(run[-1]) in _FRAME_WORDS:
                continue
            if n == 1 and (len(run[0]) < 4 or fold(run[0]) in RELATION_KEYS):
                continue  # "wrote", "capital": what is asked, not a name
            titled = " ".join(
                w if (j and w.lower() in _LOWER_PARTICLES) else w[:1].upper() + w[1:]
                for j, w in enumerate(run)
            )
            out[titled] = None
            out[run[0][:1].upper() + " ".join(run)[1:]] = None
            last = run[-1]
            if len(last) > 4 and last.endswith("s") and not last.endswith("ss"):
                # a plural ("aardvarks"): titles are singular
                out[titled[:-1]] = None
    return list(out)

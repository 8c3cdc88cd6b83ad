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
"""

from __future__ import annotations

import re
from collections.abc import Callable

from kg_agent.language.query_type import find_years
from kg_agent.language.tokens import NAME_PARTICLES, UPPER, fold, wordset

__all__ = ["lookup_spans", "question_names"]

#: A run of capitalised words, with the particles names hold between them (and the
#: words titles hold: "Pride and Prejudice", "Death in Venice").
_NAME_RUN = re.compile(
    rf"\b{UPPER}[\w'’.&-]*(?:\s+(?:(?:{NAME_PARTICLES}|and|in|on)\s+)*"
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

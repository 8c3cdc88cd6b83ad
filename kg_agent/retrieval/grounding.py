"""Is what the question asks about in the graph at all?

Text search always finds *something*: asked "Where was Greta Thunberg born?", a graph
without her finds other people's births, and the reader, handed sentences about birth
places, may quote one. So before anything is read, the question's names are looked up:
when it names things and none of them is an article of the graph (by the linking, a
title or redirect, or a close title: "Einstein" is the end of "Albert Einstein"), the
answer is "Not in the graph", whatever the search returned.

A name counts as in the graph when:

* an article the question was linked to holds all its words ("Einstein" in "Albert
  Einstein"; "Apollo 17" is not in "Apollo");
* it is a title or a redirect of an article with text, or another name of one (an
  acronym, "ANSI"; a name its lead gives, "the Oscars");
* a title of the full-text index holds all its words, with no comma before them (the
  "Arkansas" of "Aberdeen, Arkansas" is a place's state, not the topic);
* for a question that asks through another thing ("the state whose largest city is
  Anchorage", "the philosopher who wrote The World as Will and Representation"), an
  article without text that the graph links to;
* the evidence writes it in full (:func:`spelled_out`: "UK" as "United Kingdom", "A. S.
  Johnston" as "Albert Sidney Johnston"), and that is one of the above; else the name
  counts as mentioned, and an answer that quotes the full form is about it.

A word like "Chinese" before a noun qualifies a thing, it is not one (nor is a month);
an article the question was linked to by its other words ("Is the ampere an SI base
unit?": Ampere) is what it asks about.

A name the graph knows only as a link target (a stub: "Burkina Faso", linked from
Algeria's article) has no article: the question is "Not in the graph", however many
sentences mention it, unless a superlative ranks things in it ("the largest country in
*Africa*": the answer is another article). A name the graph has no node for at all but
that the evidence mentions (all its words in one section: a passage corpus names far
more than it has passages for) grounds the question **weakly**: the answer must then
quote a sentence that writes it, else it is "Not in the graph" (the pipeline checks,
:meth:`Grounding.answers_about`). A question
typed in lower case is grounded by what the linking found, else weakly by the longest
run of its words the evidence writes, else not at all.

These look-ups are exact, and they refuse answerable questions whose topic is written
otherwise (lower case, an initialism, a plural). When the graph has vectors, the
:class:`Grounder` hands their verdicts, with signals that need no name, to a learned
model (:mod:`kg_agent.retrieval.grounding_model`), whose probability decides instead.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from kg_agent.entities import alias_title
from kg_agent.language.names import cased_spans, is_lower_case, lookup_spans
from kg_agent.language.question import Question
from kg_agent.language.tokens import STOP_WORDS, fold, words
from kg_agent.retrieval.base import Evidence
from kg_agent.retrieval.grounding_model import GroundingModel, features
from kg_agent.store import GraphReader

__all__ = ["Grounder", "Grounding", "ground"]

_CANDIDATE_TITLES = 5
_MENTION_SECTIONS = 8  # the evidence a name may be mentioned in (what synthesis reads)


@dataclass(frozen=True, slots=True)
class Grounding:
    """The names a question asks about: the graph's articles for them, the names only
    the evidence mentions, and those the graph does not have."""

    names: tuple[str, ...]
    found: tuple[str, ...]
    missing: tuple[str, ...]
    mentioned: tuple[str, ...] = ()
    #: the learned model's probability that the graph holds the topic (None: the
    #: look-ups decide alone), and the probability below which the question is refused
    probability: float | None = None
    refuse_at: float = 0.5
    #: the names are runs of a lower-case question's words, not names it capitalised
    guessed: bool = False
    #: other ways the evidence writes a name (:func:`spelled_out`): (name, the runs)
    spelled: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def grounded(self) -> bool:
        """Whether the question may be answered at all: by the model's probability, else
        something it names is an article, or every name it lacks as an article the
        evidence mentions."""
        if self.probability is not None:
            return self.probability >= self.refuse_at
        return self.looked_up

    @property
    def looked_up(self) -> bool:
        """Whether the look-ups alone ground the question (the decision without a model)."""
        return bool(self.found) or not self.missing

    @property
    def weak(self) -> bool:
        """Grounded only by mentions: the answer may have to quote them
        (:attr:`must_quote`, :meth:`answers_about`)."""
        return not self.found and bool(self.mentioned)

    @property
    def must_quote(self) -> bool:
        """The answer must quote the names only mentioned (:attr:`weak`): names the
        question capitalised ("Who commanded *Apollo 17*?"), or any when no model
        weighed the runs guessed from a lower-case question."""
        return self.weak and (self.probability is None or not self.guessed)

    @property
    def unnamed(self) -> tuple[str, ...]:
        """What a refusal names: the names missing, else those only mentioned."""
        return self.missing or self.mentioned

    def refusal_names(self, question: Question) -> tuple[str, ...]:
        """What a refusal says the graph lacks: :attr:`unnamed`, when the question wrote
        them as names. A lower-case question's are runs of its words (or the whole
        question), and "no article about bates was a" would read as nonsense."""
        return () if is_lower_case(question.text) else self.unnamed

    def answers_about(self, answer: str) -> bool:
        """Whether ``answer`` is about the names only mentioned: it writes each of them,
        its words in a row ("Algeria is the largest country in *Africa*"; "Apollo and
        Diana … in 17 BCE" does not write "Apollo 17")."""
        said = f" {' '.join(words(fold(answer)))} "
        other = dict(self.spelled)
        return all(
            any(f" {' '.join(words(fold(v)))} " in said for v in (n, *other.get(n, ())))
            for n in self.mentioned
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "names": list(self.names),
            "found": list(self.found),
            "mentioned": list(self.mentioned),
            "missing": list(self.missing),
            "grounded": self.grounded,
            "weak": self.weak,
            "probability": self.probability,
            **({"spelled": {n: list(v) for n, v in self.spelled}} if self.spelled else {}),
        }


#: The reader's share of a question its evidence holds (the answering layer's
#: ``evidence_support``, handed in by the pipeline: retrieval sits below answering).
Support = Callable[[str, Sequence[Evidence]], float]


class Grounder:
    """:func:`ground`, then the model's probability when it has one and the evidence
    has cosines. ``support`` scores how much of the question the evidence holds (a
    feature); ``observer`` sees each question's features (training reads them)."""

    def __init__(
        self,
        store: GraphReader,
        model: GroundingModel | None = None,
        *,
        support: Support | None = None,
    ) -> None:
        self.store = store
        self.model = model
        self.support = support
        self.observer: Callable[[Question, np.ndarray], None] | None = None

    def __call__(self, question: Question, evidence: Sequence[Evidence]) -> Grounding:
        evidence = [ev for ev in evidence if ev.of_the_topic]
        topic = ground(question, self.store, evidence)
        if not question.words:
            return topic
        x = features(
            question,
            len(topic.found),
            topic.weak,
            len(topic.missing),
            evidence,
            self.store.word_rarity,
            self.support(question.text, evidence) if self.support is not None else 0.0,
        )
        if x is None:
            return topic
        if self.observer is not None:
            self.observer(question, x)
        if self.model is None:
            return topic
        p = round(self.model.probability(x), 4)
        return dataclasses.replace(topic, probability=p, refuse_at=self.model.refuse_at)


def _holds(title: str, name_words: list[str]) -> bool:
    """Whether ``title`` (its parenthesis aside) holds every word of a name, none of
    them after a comma."""
    base = fold(title.split(" (")[0])
    head = base.split(",")[0]
    return set(name_words) <= set(words(head))


#: words an initialism skips ("USA": "United States *of* America")
_SKIPPED = frozenset(["of", "and", "the", "for", "de", "du", "la", "&"])
_TOKEN = re.compile(r"[^\W\d_][\w'’-]*|&")


def spelled_out(name: str, text: str) -> list[str]:
    """The runs of ``text`` that write ``name`` in full: an initialism ("UK": "United
    Kingdom", "USA": "United States of America") or a name with initials ("A. S.
    Johnston", "S Johnston": "Sidney Johnston"). Capitalised words only, so "us" in
    running text never spells "US"."""
    parts = words(fold(name))
    tokens = [(m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(text)]
    out: list[str] = []
    if len(parts) == 1 and name.isalpha() and name.isupper() and 2 <= len(name) <= 6:
        letters = name.lower()
        for i, (tok, start, _) in enumerate(tokens):
            if not tok[0].isupper() or fold(tok[0]) != letters[0]:
                continue
            at, j, end = 1, i + 1, None
            while at < len(letters) and j < len(tokens):
                word = tokens[j][0]
                if word[0].isupper() and fold(word[0]) == letters[at]:
                    at += 1
                    end = tokens[j][2]
                elif word.lower() not in _SKIPPED:
                    break
                j += 1
            if at == len(letters) and end is not None:
                out.append(text[start:end])
    elif len(parts) > 1 and any(len(w) == 1 for w in parts) and any(len(w) > 1 for w in parts):
        n = len(parts)
        for i in range(len(tokens) - n + 1):
            run = tokens[i : i + n]
            if all(
                (tok[0].isupper() and fold(tok[0]) == w)
                if len(w) == 1
                else (fold(tok) == w and len(tok) > 1)
                for (tok, _, _), w in zip(run, parts, strict=True)
            ):
                out.append(text[run[0][1] : run[-1][2]])
    return list(dict.fromkeys(r for r in out if fold(r) != fold(name)))


def _linked_stub(store: GraphReader, text: str, name: str, name_words: list[str]) -> str | None:
    """An article without text, holding the name, that an infobox fact names or an
    article links to: the title written whole in the question ("The World as Will and
    Representation", which the name finder cuts at "as"), else the name's best titles."""
    spans = [
        s for s in lookup_spans(text, lambda _: True) if set(name_words) <= set(words(fold(s)))
    ]
    candidates = [store.resolve_title(s) for s in spans] + [store.resolve_title(name)]
    candidates += [t for t, _ in store.search_article_titles(name, k=_CANDIDATE_TITLES)]
    for t in dict.fromkeys(c for c in candidates if c):
        if set(words(fold(t.split(" (")[0]))) != set(name_words) and t not in spans:
            continue  # the name's own title, not one that holds it ("US Open" for "US")
        if store.fact_keys_naming([t]) or store.link_neighbourhood([t], limit=1):
            return t
    return None


def ground(question: Question, store: GraphReader, evidence: Sequence[Evidence] = ()) -> Grounding:
    """Which of the question's names the graph has (see the module docstring);
    ``evidence``: what the search found, for the names it mentions."""
    if not question.words:
        return Grounding((), (), ())  # "Who?": nothing to look up, nothing to refuse by
    entities = list(question.topics)
    names = list(question.names)
    read = evidence[:_MENTION_SECTIONS]
    texts = [set(words(fold(ev.content))) for ev in read]

    def said(name: str) -> bool:
        return any(set(words(fold(name))) <= t for t in texts)

    if not names:
        if entities:
            return Grounding((), tuple(entities), ())
        if is_lower_case(question.text):
            # no capitals to find names by: the longest run of its words the evidence
            # writes ("bbc sports personality of the year"), else nothing is grounded
            runs = [r for r in cased_spans(question.text) if " " in r and said(r)]
            if runs:
                return Grounding((question.text,), (), (), (runs[0],), guessed=True)
            return Grounding((question.text,), (), (question.text,))
        return Grounding((), (), ())
    found: list[str] = []
    missing: list[str] = []
    stubs: list[str] = []
    spelled: dict[str, tuple[str, ...]] = {}
    through = " whose " in f" {question.text.lower()} " or bool(_THROUGH.search(question.text[1:]))
    for name in names:
        name_words = words(fold(name))
        if not name_words or _qualifies(name, question.text):
            continue
        hit = _article_for(store, entities, name)
        if hit is None:  # written otherwise in the evidence: "UK", "A. S. Johnston"
            runs = [r for ev in read for r in spelled_out(name, ev.content)]
            if runs:
                spelled[name] = tuple(dict.fromkeys(runs))
                hit = next(
                    (h for r in spelled[name] if (h := _article_for(store, entities, r))), None
                )
        if hit is None and through:  # a stub the graph links to: asked through it
            hit = _linked_stub(store, question.text, name, name_words)
        if hit is None:
            missing.append(name)
            if store.resolve_title(name) is not None:
                stubs.append(name)  # the graph knows it as a link target, no article
        elif hit not in found:
            found.append(hit)
    # the articles linked by the question's other words, when they are not a part of a
    # name it lacks ("Apollo" of "Apollo 17")
    missing_words = {w for n in missing for w in words(fold(n))}
    for e in entities:
        if e not in found and not set(words(fold(e.split(" (")[0]))) & missing_words:
            found.append(e)
    ranked_in = _ranked_in(question.text)
    mentioned = [
        n for n in missing if (said(n) or n in spelled) and (n not in stubs or n in ranked_in)
    ]
    return Grounding(
        tuple(names),
        tuple(found),
        tuple(n for n in missing if n not in mentioned),
        tuple(mentioned),
        spelled=tuple((n, v) for n, v in spelled.items() if n in mentioned),
    )


def _article_for(store: GraphReader, entities: Sequence[str], name: str) -> str | None:
    """The article with text that ``name`` names: a linked entity holding its words, a
    title, redirect or other name of one, else a close title holding its words."""
    name_words = words(fold(name))
    hit = next((e for e in entities if _holds(e, name_words)), None)
    if hit is None:
        hit = store.resolve_title(name, with_text=True) or alias_title(store, name)
    if hit is None:
        hit = next(
            (
                t
                for t, _ in store.search_article_titles(name, k=_CANDIDATE_TITLES, with_text=True)
                if _holds(t, name_words)
            ),
            None,
        )
    return hit


#: A superlative and the name it ranks in: "the largest country in Africa", "the highest
#: capital city in Europe", "the most populous city of Alaska".
_RANKED_IN = re.compile(
    r"\b(?:\w+est|most\s+\w+|least\s+\w+|first)\b(?:\s+[a-z]+){0,3}\s+(?:in|of|on)\s+"
    r"(?:the\s+)?([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)"
)


def _ranked_in(text: str) -> set[str]:
    """The names a superlative ranks things in (see :data:`_RANKED_IN`)."""
    return {m.group(1) for m in _RANKED_IN.finditer(text)}


def _qualifies(name: str, text: str) -> bool:
    """ "a *Chinese* martial art", "which *Trojan* hero", "the top *PC* manufacturer",
    "every *May*": one word that describes the thing named after it (written before a
    lower-case word that is no small word; "the capital of Iran?" asks about Iran), or
    a month or a day."""
    if " " in name:
        return False
    if name.lower() in _CALENDAR:
        return True
    after = re.search(rf"\b{re.escape(name)}\s+([a-z][\w-]*)", text)
    return after is not None and after.group(1) not in STOP_WORDS


_CALENDAR = frozenset(
    [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
    ]
)
#: "the philosopher who wrote X", "the country whose capital is X": the question asks
#: through X, which the graph may know only as a link target.
_THROUGH = re.compile(r"\b(?:whose|who|which|that)\s+(?!is\b|are\b|was\b|were\b)[a-z]+", re.I)

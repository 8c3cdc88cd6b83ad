"""The evidence a question is read against, as sentences with what scoring needs.

The ranked sections are split into sentences (a break after an initial or an
abbreviation undone); each sentence is scored by what the question asks:

* the question's words, weighted by rarity among the candidate sentences, where a
  section's article title counts as part of each of its sentences ("He died in
  Moscow" is about the article's subject);
* the relation (``born``, ``directed``, ``capital``…) expressed in the sentence;
* a span of the kind asked for (a date for "when", a name for "who") that the
  question does not already hold;
* for a question with a chain ("the composer of film X"), a *bridge*: an article the
  question does not name but a named article's text mentions, and the *hops*, the
  articles the first hop's relation leads to, where the second hop's answer lives.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from kg_agent.language.shape import INVERSE, KINSHIP, AnswerKind, QuestionShape, stem
from kg_agent.language.spans import Span, dates, names, numbers
from kg_agent.language.tokens import (
    STOP_WORDS,
    content_matches,
    content_tokens,
    fold,
    split_sentences,
    words,
)
from kg_agent.retrieval.base import Evidence

__all__ = [
    "DEMONYM",
    "Context",
    "Sentence",
    "base_title",
    "folded_words",
    "inner_phrase",
    "mentions",
    "other_sides",
    "outer_relation",
    "spaced",
    "stems_of",
]

_W_RELATION = 1.5
_W_KIND = 1.0
_W_BRIDGE = 1.0
_PRONOUN_START = frozenset(
    [
        "he",
        "she",
        "it",
        "they",
        "his",
        "her",
        "its",
        "their",
        "this",
        "these",
        "that",
        "those",
        "in",
        "on",
        "at",
        "after",
        "before",
        "during",
        "from",
        "with",
        "for",
        "by",
        "as",
        "the",
        "a",
        "an",
        "when",
        "while",
        "although",
        "however",
        "since",
        # discourse adverbs a sentence opens with ("Usually such sites are listed …")
        "usually",
        "originally",
        "eventually",
        "finally",
        "initially",
        "currently",
        "formerly",
        "previously",
        "subsequently",
        "additionally",
        "typically",
        "generally",
        "traditionally",
        "historically",
        "ultimately",
        "meanwhile",
    ]
)


@dataclass(frozen=True, slots=True)
class Sentence:
    n: int  # the citation number of its section
    position: int  # its place in the section
    text: str
    title: str
    score: float = 0.0


def stems_of(text: str) -> set[str]:
    return {stem(t) for t in content_tokens(text) if t.lower() not in STOP_WORDS}


def base_title(title: str) -> str:
    return title.split(" (")[0]


def spaced(text: str) -> str:
    """Folded words joined by single spaces, padded: whole-word ``in`` tests."""
    return " " + " ".join(words(fold(text))) + " "


#: A participle and a preposition that open a capitalised span ("Born in", "Based on"; a
#: name joins no other preposition, see ``spans.names``).
_PARTICIPLE_LEAD = re.compile(r"^([A-Z][a-z]+ed|Born) (?:in|on) (?=[A-Z])")


def folded_words(text: str) -> set[str]:
    return {w for w in words(fold(text)) if w not in STOP_WORDS}


class Context:
    """The evidence split into sentences, with what scoring needs computed once."""

    def __init__(self, shape: QuestionShape, items: Sequence[tuple[int, Evidence]]) -> None:
        self.shape = shape
        self.items = list(items)
        self.q_stems = stems_of(shape.question)
        self.q_folded = folded_words(shape.question)
        self.q_lower = set(re.findall(r"\b[a-z]+\b", shape.question))
        q_fold = spaced(shape.question)
        titles = list(dict.fromkeys(ev.title for _, ev in self.items))
        # lists in evidence order, not sets: what is read first must not depend on
        # the process's string hashing (PYTHONHASHSEED), or answers change per run
        self.named = [
            t
            for t in titles
            if spaced(base_title(t)) in q_fold
            or any(ev.source == "entity" for _, ev in self.items if ev.title == t)
        ]
        text_of: dict[str, str] = {}
        for _, ev in self.items:
            text_of[ev.title] = text_of.get(ev.title, "") + "\n" + ev.content
        self.text_of = text_of
        # the names evidence articles are known by ("Albany County, New York" is
        # also "Albany County"), longest first
        self.title_names = sorted(
            {
                n
                for t in titles
                for n in (base_title(t), base_title(t).split(", ")[0])
                if len(n) >= 3
            },
            key=len,
            reverse=True,
        )
        self.titles_folded = {fold(n) for n in self.title_names}
        self.bridges = [
            t
            for t in titles
            if t not in self.named and any(mentions(text_of[a], t) for a in self.named)
        ]
        self.sentences: list[Sentence] = []
        self.stems: list[set[str]] = []
        self._spans: dict[tuple[int, int], list[Span]] = {}
        self.hops: list[str] = []  # set by _find_hops once the sentences are split
        for n, ev in self.items:
            # a box's line is one statement, whatever its value writes ("Mary Todd (m.
            # November 4, 1842–1865)" is no two sentences)
            lines = [ev.content] if ev.fact is not None else _sentences(ev.content)
            for pos, s in enumerate(lines):
                self.sentences.append(Sentence(n, pos, s, ev.title))
                self.stems.append(stems_of(s))
        df: Counter[str] = Counter()
        title_stems = {t: stems_of(base_title(t)) for t in titles}
        self.title_stems = title_stems
        for sentence, st in zip(self.sentences, self.stems, strict=True):
            df.update(st | title_stems[sentence.title])
        total = max(1, len(self.sentences))
        self.idf = {w: math.log(1 + total / c) for w, c in df.items()}
        # no relation word leads on ("The Queen of Spades … by Prokofiev"): when the
        # question reaches its name through something else ("the composer of X"), the
        # articles the named ones mention are the chain's candidates
        self.hops = _find_hops(self)
        if not self.hops and shape.chained and _leads_on(shape):
            self.hops = list(self.bridges)

    def candidates(self, s: Sentence) -> list[Span]:
        """Spans of the asked kind in ``s`` that the question does not already hold (found
        once a sentence: scoring, the sentence ranker and the reader all ask)."""
        key = (s.n, s.position)
        found = self._spans.get(key)
        if found is None:
            found = self._spans[key] = self._candidates(s)
        return list(found)  # a copy: a caller may add to it

    def _candidates(self, s: Sentence) -> list[Span]:
        kind = self.shape.kind
        if kind is AnswerKind.DATE:
            return dates(s.text)
        if kind is AnswerKind.NUMBER:
            return numbers(s.text)
        out = []
        taken = dates(s.text)
        for span in names(s.text):
            span = self._past_relation_word(span)
            words = folded_words(span.text)
            if not words or words <= self.q_folded:
                continue
            if span.start == 0 and span.text.split()[0].lower() in _PRONOUN_START:
                continue
            if any(d.start < span.end and span.start < d.end for d in taken):
                continue  # a date's month ("March 1967") is not a name
            text = span.text.rstrip(".") if not _INITIAL_END.search(span.text) else span.text
            out.append(Span(text, span.start, span.start + len(text)))
        return out

    def _past_relation_word(self, span: Span) -> Span:
        """A span that opens with the question's own participle, capitalised, and a
        preposition ("Born in Bucharest", "company Headquartered in Mumbai" for "where …
        headquartered?"): the name after them."""
        m = _PARTICIPLE_LEAD.match(span.text)
        if m is None or m.group(1).lower() not in self.q_lower:
            return span
        return Span(span.text[m.end() :], span.start + m.end(), span.end)

    def score(self, i: int) -> float:
        s, st = self.sentences[i], self.stems[i]
        # the article's title speaks for each of its sentences ("He died in Moscow"),
        # at half the weight of words the sentence itself writes
        title_only = self.title_stems[s.title] - st
        # fsum: exact whatever order the set yields its words, so ties break the same
        overlap = math.fsum(self.idf.get(w, 0.0) for w in self.q_stems & st)
        overlap += 0.5 * math.fsum(self.idf.get(w, 0.0) for w in self.q_stems & title_only)
        relation = len(self.shape.cues & st)
        score = overlap + _W_RELATION * relation + 0.3 / s.n + 0.1 / (1 + s.position)
        if self.candidates(s):
            score += _W_KIND
        chained = len(self.shape.relation) >= 2 and bool(self.named)
        if chained and s.title in self.bridges:
            score += _W_BRIDGE
        return score

    def ranked(self) -> list[Sentence]:
        scored = [
            Sentence(s.n, s.position, s.text, s.title, self.score(i))
            for i, s in enumerate(self.sentences)
        ]
        return sorted(scored, key=lambda s: -s.score)


_INITIAL_END = re.compile(r"(?:\b[A-Z]|\b(?:St|Dr|Mr|Mrs|Jr|Sr|Co|Inc|Ltd|No|vs|c|ca|fl))\.$")


def _sentences(text: str) -> list[str]:
    """The evidence's sentences, a break after an initial or an abbreviation undone
    ("directed by J. Searle Dawley" is one sentence)."""
    out: list[str] = []
    for part in split_sentences(text, min_words=1):
        if out and _INITIAL_END.search(out[-1]):
            out[-1] = f"{out[-1]} {part}"
        else:
            out.append(part)
    return [s for s in out if len(s.split()) >= 4]


def mentions(text: str, title: str) -> bool:
    base = base_title(title)
    return len(base) >= 3 and fold(base) in fold(text)


def _find_hops(ctx: Context) -> list[str]:
    """Articles a chain question's first hop leads to: in a named article's sentences,
    the evidence titles written next to the inner relation ("directed by Y" for "the
    director of film X"); the inner relation is the one written nearest
    the name. Kinship is read in its direction: for "X's father", "daughter of Y" and
    "his father, Y" lead to Y, "father of Y" does not (Y is a child), and the name
    nearest the kinship word comes first."""
    shape = ctx.shape
    if not shape.chained or not ctx.named:
        return []
    inner = inner_phrase(shape)
    other_side = other_sides(inner)
    by_base = {fold(base_title(t)): t for t in ctx.text_of if t not in ctx.named}
    found: dict[str, int] = {}  # title -> distance from the relation word
    for s in ctx.sentences:
        if s.title not in ctx.named:
            continue
        for m in content_matches(s.text):
            word = stem(m.group(0))
            if word not in inner | other_side:
                continue
            window, offset, owners = _hop_window(s.text, m, word, word in other_side)
            if window is None:
                continue
            for span in names(window):
                if owners and not _OWNER.search(span.text):
                    continue  # before "son": only a possessive names a parent
                for title, at in _titles_in(span.text, by_base):
                    distance = abs(offset + span.start + at - m.start())
                    if distance < found.get(title, 1 << 30):
                        found[title] = distance
    # the name written nearest the relation word first ("directed by Y and starring Z"),
    # after those whose text holds the question's numbers ("the 2001 film that…")
    wanted = set(re.findall(r"\b\d{2,}\b", shape.question))

    def missing(title: str) -> int:
        return sum(n not in ctx.text_of[title] for n in wanted)

    hops = sorted(found, key=lambda t: (missing(t), found[t]))
    # the multi-step bridge round's chain-linked evidence is a second hop by construction
    for _, ev in ctx.items:
        if ev.source == "bridge_linked" and ev.title not in hops and ev.title not in ctx.named:
            hops.append(ev.title)
    return hops


#: A name written as an owner ("Socrates'", "Xanthippe's").
_OWNER = re.compile(r"['’]s?$")


def _hop_window(
    text: str, m: re.Match[str], word: str, other_side: bool
) -> tuple[str | None, int, bool]:
    """Where the hop's name is written around the relation word ``m`` (the text, where
    it starts, and whether only owners count): after it for kinship, in its direction,
    or before it as an owner ("Y's eldest son": Y is a parent); on either side for a
    marriage ("married Y", "Y, whom she later married") and for other relations
    ("directed by Y", "Y's film")."""
    if word not in KINSHIP or word in ("spouse", "marri"):
        start = max(0, m.start() - 40)
        return text[start : m.end() + 80], start, False
    after = text[m.end() : m.end() + 80]
    of = re.match(r",?\s+of\s", after)
    if (of is not None) == other_side:
        return after, m.end(), False
    if other_side:
        start = max(0, m.start() - 60)
        return text[start : m.start()], start, True
    return None, 0, False


def _titles_in(name: str, by_base: dict[str, str]) -> list[tuple[str, int]]:
    """The evidence titles a name span stands for, with where each is written in it:
    the whole span's title, else each part of "A and B" by its whole name, by a name it
    begins, by the longest title it begins with, one word in at most ("King Oswiu of
    Northumbria"), or by a title of two words or more it ends with."""
    whole = _title_of(name, by_base, inside=False)
    if whole is not None:
        return [(whole, 0)]
    out: list[tuple[str, int]] = []
    at = 0
    for piece in re.split(r"(\s+and\s+|,\s+)", name):
        if piece and not re.fullmatch(r"\s+and\s+|,\s+", piece):
            title = _title_of(piece, by_base, inside=True)
            if title is not None:
                out.append((title, at))
        at += len(piece)
    return out


def _title_of(name: str, by_base: dict[str, str], *, inside: bool) -> str | None:
    key = fold(_OWNER.sub("", name.strip().rstrip(".")))
    if not key:
        return None
    title = by_base.get(key) or next(
        (t for b, t in by_base.items() if len(key) >= 5 and b.startswith(key)), None
    )
    if title is None and inside:
        # a title the part begins with, or after one word ("King Oswiu of Northumbria");
        # never one further in ("Portugal" in "Sancho I of Portugal" is not the hop)
        words = key.split()
        heads = (spaced(key), spaced(" ".join(words[1:])) if len(words) > 1 else "")
        within = [
            (len(b), t)
            for b, t in by_base.items()
            if len(b) >= 4 and any(h.startswith(spaced(b)) for h in heads if h)
        ]
        title = max(within)[1] if within else None
        if title is None:
            # a title of two words or more that the part ends with, the offices before
            # it ("Eastern Roman Emperor Theodosius II")
            title = next(
                (
                    by_base[tail]
                    for i in range(1, len(words) - 1)
                    if (tail := " ".join(words[i:])) in by_base
                ),
                None,
            )
    return title


def other_sides(stems: frozenset[str]) -> frozenset[str]:
    return frozenset(INVERSE[r] for r in stems if r in INVERSE)


def inner_phrase(shape: QuestionShape) -> frozenset[str]:
    """The relation a chain's first hop follows: a possessed one ("father" in "X's
    father"), else the phrase written nearest before the question's first name
    ("director" in "the father of the director of film X")."""
    if shape.possessed:
        return shape.possessed
    inner = shape.phrases[-1]
    lowered = shape.question.lower()
    spots = [lowered.find(n.lower()) for n in shape.named if n.lower() in lowered]
    # of several names, the chain starts at one written after "of" ("…at Cambridge was
    # held by the designer of the Analytical Engine")
    owned = [i for i in spots if re.search(r"\bof\s+(?:the\s+)?(?:\w+\s+)?$", lowered[:i])]
    spots = owned or spots
    if spots:
        first_name = min(spots)
        before = [p for p in shape.phrases if _phrase_at(lowered, p) < first_name]
        if before:
            inner = before[-1]
    return inner


def _leads_on(shape: QuestionShape) -> bool:
    """Whether the question goes through something it does not name: a possessive ("X's
    father"), "of" ("the composer of X"), a relative or a wh-word after its first word
    ("the arena where X played", "covered by what band"); "Which poems did X write?"
    asks X's own facts."""
    words = content_tokens(shape.question.lower())[1:]
    return bool(shape.possessed) or bool(_LEADS & set(words))


_LEADS = frozenset(["of", "that", "which", "who", "whom", "whose", "where", "when", "what"])


def outer_relation(ctx: Context, s: Sentence) -> frozenset[str] | None:
    """In a hop's article, the relation to look for is the chain's outer one ("died"
    in "when did the father of X die"), not the hop's own ("father")."""
    if not ctx.hops or s.title not in ctx.hops:
        return None
    outer = ctx.shape.relation - inner_phrase(ctx.shape)
    if ctx.shape.possessed:  # "which country is X's father from": no cue but the kind
        return outer | other_sides(outer)
    return (outer | other_sides(outer)) or None


def _phrase_at(lowered_question: str, phrase: frozenset[str]) -> int:
    for m in content_matches(lowered_question):
        if stem(m.group(0)) in phrase:
            return m.start()
    return -1


DEMONYM = re.compile(r"^(?:[\w-]+-born )?[A-Z][a-z]+(?:an|ese|ish|ian)$")

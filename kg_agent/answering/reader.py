"""Read ranked evidence for a question: the sentences that answer, the short answer in
them, and whether the evidence supports an answer at all.

Sentences are scored by what the question asks, not only by the words it shares:

* the question's words, weighted by rarity among the candidate sentences, where a
  section's article title counts as part of each of its sentences ("He died in
  Moscow" is about the article's subject);
* the relation (``born``, ``directed``, ``capital``…) expressed in the sentence;
* a span of the kind asked for (a date for "when", a name for "who") that the
  question does not already hold;
* for a question with a chain ("the composer of film X"), a *bridge*: an article the
  question does not name but a named article's text mentions, which is where the
  second hop's answer lives.

A choice ("Which film came out first, A or B?") reads each option's facts (and its
bridge's: "the director of A") and compares them; a yes/no question whose two named
things are compared ("same nationality") answers yes or no from their descriptions.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from kg_agent.answering.kinship import answer_name, follow, kin_path
from kg_agent.answering.question import (
    INVERSE,
    KINSHIP,
    POSSESSIVE,
    QUANTITY_WORDS,
    AnswerKind,
    QuestionShape,
    analyse,
    stem,
)
from kg_agent.answering.spans import Span, dates, names, numbers, year_of
from kg_agent.retrieval.base import Evidence
from kg_agent.text import STOP_WORDS, content_tokens, fold, split_sentences

__all__ = ["SUPPORT_THRESHOLD", "OfflineReading", "Sentence", "read_evidence"]

#: Below this support the evidence is taken not to answer the question (calibrated on
#: the dev sets' in-graph and out-of-graph questions: ``docs/BENCHMARKS.md``).
SUPPORT_THRESHOLD = 0.7
MAX_ANSWER_WORDS = 40

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
    ]
)


@dataclass(frozen=True, slots=True)
class Sentence:
    n: int  # the citation number of its section
    position: int  # its place in the section
    text: str
    title: str
    score: float = 0.0


@dataclass(slots=True)
class OfflineReading:
    """What the evidence says to a question, without a model."""

    shape: QuestionShape
    sentences: list[Sentence]  # the answer sentences, in the order to show them
    short_answer: str | None = None
    short_cites: tuple[int, ...] = ()
    answerable: bool = True
    support: float = 0.0
    notes: list[str] = field(default_factory=list)


def _stems(text: str) -> set[str]:
    return {stem(t) for t in content_tokens(text) if t.lower() not in STOP_WORDS}


def _base(title: str) -> str:
    return title.split(" (")[0]


def _spaced(text: str) -> str:
    """Folded words joined by single spaces, padded: whole-word ``in`` tests."""
    return " " + " ".join(re.findall(r"\w+", fold(text))) + " "


def _folded_words(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", fold(text)) if w not in STOP_WORDS}


class _Context:
    """The evidence split into sentences, with what scoring needs computed once."""

    def __init__(self, shape: QuestionShape, items: Sequence[tuple[int, Evidence]]) -> None:
        self.shape = shape
        self.items = list(items)
        self.q_stems = _stems(shape.question)
        self.q_folded = _folded_words(shape.question)
        q_fold = _spaced(shape.question)
        titles = list(dict.fromkeys(ev.title for _, ev in self.items))
        # lists in evidence order, not sets: what is read first must not depend on
        # the process's string hashing (PYTHONHASHSEED), or answers change per run
        self.named = [
            t
            for t in titles
            if _spaced(_base(t)) in q_fold
            or any(ev.source == "entity" for _, ev in self.items if ev.title == t)
        ]
        text_of: dict[str, str] = {}
        for _, ev in self.items:
            text_of[ev.title] = text_of.get(ev.title, "") + "\n" + ev.content
        self.text_of = text_of
        # the names evidence articles are known by ("Albany County, New York" is
        # also "Albany County"), longest first
        self.title_names = sorted(
            {n for t in titles for n in (_base(t), _base(t).split(", ")[0]) if len(n) >= 3},
            key=len,
            reverse=True,
        )
        self.titles_folded = {fold(n) for n in self.title_names}
        self.bridges = [
            t
            for t in titles
            if t not in self.named and any(_mentions(text_of[a], t) for a in self.named)
        ]
        self.sentences: list[Sentence] = []
        self.stems: list[set[str]] = []
        self.hops: list[str] = []  # set by _find_hops once the sentences are split
        for n, ev in self.items:
            for pos, s in enumerate(_sentences(ev.content)):
                self.sentences.append(Sentence(n, pos, s, ev.title))
                self.stems.append(_stems(s))
        df: Counter[str] = Counter()
        title_stems = {t: _stems(_base(t)) for t in titles}
        self.title_stems = title_stems
        for sentence, st in zip(self.sentences, self.stems, strict=True):
            df.update(st | title_stems[sentence.title])
        total = max(1, len(self.sentences))
        self.idf = {w: math.log(1 + total / c) for w, c in df.items()}
        self.hops = _find_hops(self)

    def candidates(self, s: Sentence) -> list[Span]:
        """Spans of the asked kind in ``s`` that the question does not already hold."""
        kind = self.shape.kind
        if kind is AnswerKind.DATE:
            return dates(s.text)
        if kind is AnswerKind.NUMBER:
            return numbers(s.text)
        out = []
        taken = dates(s.text)
        for span in names(s.text):
            words = _folded_words(span.text)
            if not words or words <= self.q_folded:
                continue
            if span.start == 0 and span.text.split()[0].lower() in _PRONOUN_START:
                continue
            if any(d.start < span.end and span.start < d.end for d in taken):
                continue  # a date's month ("March 1967") is not a name
            text = span.text.rstrip(".") if not _INITIAL_END.search(span.text) else span.text
            out.append(Span(text, span.start, span.start + len(text)))
        return out

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


_INITIAL_END = re.compile(r"(?:\b[A-Z]|\b(?:St|Dr|Mr|Mrs|Jr|Sr|Co|Inc|Ltd|No|vs|c))\.$")


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


def _mentions(text: str, title: str) -> bool:
    base = _base(title)
    return len(base) >= 3 and fold(base) in fold(text)


def _find_hops(ctx: _Context) -> list[str]:
    """Articles a chain question's first hop leads to: in a named article's sentences,
    the evidence titles written next to the inner relation ("directed by Y" for "the
    director of film X"); the inner relation is the one written nearest
    the name. Kinship is read in its direction: for "X's father", "daughter of Y" and
    "his father, Y" lead to Y, "father of Y" does not (Y is a child), and the name
    nearest the kinship word comes first."""
    shape = ctx.shape
    if not shape.chained or not ctx.named:
        return []
    inner = _inner_phrase(shape)
    other_side = _inverse(inner)
    by_base = {fold(_base(t)): t for t in ctx.text_of if t not in ctx.named}
    found: dict[str, int] = {}  # title -> distance from the relation word
    for s in ctx.sentences:
        if s.title not in ctx.named:
            continue
        for m in re.finditer(r"[\w'’-]+", s.text):
            word = stem(m.group(0))
            if word not in inner | other_side:
                continue
            window, offset = _hop_window(s.text, m, word, word in other_side)
            if window is None:
                continue
            for span in names(window):
                key = fold(span.text.rstrip("."))
                title = by_base.get(key) or next(
                    (t for b, t in by_base.items() if len(key) >= 5 and b.startswith(key)), None
                )
                if title is None:
                    continue
                distance = abs(offset + span.start - m.start())
                if distance < found.get(title, 1 << 30):
                    found[title] = distance
    hops = list(found)  # in the order the evidence gives them
    if inner <= KINSHIP:  # a relative: the name written nearest the kinship word
        hops.sort(key=lambda t: found[t])
    # the multi-step bridge round's chain-linked evidence is a second hop by construction
    for _, ev in ctx.items:
        if ev.source == "bridge_linked" and ev.title not in hops and ev.title not in ctx.named:
            hops.append(ev.title)
    return hops


def _hop_window(text: str, m: re.Match[str], word: str, other_side: bool) -> tuple[str | None, int]:
    """Where the hop's name is written around the relation word ``m``: after it for
    kinship, in its direction; on either side for other relations ("directed by Y",
    "Y's film")."""
    if word not in KINSHIP:
        start = max(0, m.start() - 40)
        return text[start : m.end() + 80], start
    after = text[m.end() : m.end() + 80]
    of = re.match(r",?\s+of\s", after)
    if word in ("spouse", "marri") or (of is not None) == other_side:
        return after, m.end()
    return None, 0


def _inverse(stems: frozenset[str]) -> frozenset[str]:
    return frozenset(INVERSE[r] for r in stems if r in INVERSE)


def _inner_phrase(shape: QuestionShape) -> frozenset[str]:
    """The relation a chain's first hop follows: a possessed one ("father" in "X's
    father"), else the phrase written nearest before the question's first name
    ("director" in "the father of the director of film X")."""
    if shape.possessed:
        return shape.possessed
    inner = shape.phrases[-1]
    lowered = shape.question.lower()
    spots = [lowered.find(n.lower()) for n in shape.named if n.lower() in lowered]
    if spots:
        first_name = min(spots)
        before = [p for p in shape.phrases if _phrase_at(lowered, p) < first_name]
        if before:
            inner = before[-1]
    return inner


def _outer(ctx: _Context, s: Sentence) -> frozenset[str] | None:
    """In a hop's article, the relation to look for is the chain's outer one ("died"
    in "when did the father of X die"), not the hop's own ("father")."""
    if not ctx.hops or s.title not in ctx.hops:
        return None
    outer = ctx.shape.relation - _inner_phrase(ctx.shape)
    if ctx.shape.possessed:  # "which country is X's father from": no cue but the kind
        return outer | _inverse(outer)
    return (outer | _inverse(outer)) or None


def _phrase_at(lowered_question: str, phrase: frozenset[str]) -> int:
    for m in re.finditer(r"[\w'’-]+", lowered_question):
        if stem(m.group(0)) in phrase:
            return m.start()
    return -1


# --------------------------------------------------------------------- short answers


def _pick(ctx: _Context, s: Sentence) -> Span | None:
    inverse = _inverse_subject(ctx, s)
    if inverse is not None:
        return inverse
    spans = ctx.candidates(s)
    if not spans:
        return None
    kind = ctx.shape.kind
    text = s.text
    cue = _cue_position(ctx.shape, text, _outer(ctx, s))
    if cue >= 0 and kind is AnswerKind.PERSON:
        m = re.match(r"[\w'’-]+", text[cue:])
        if m is not None and stem(m.group(0)) not in ctx.shape.relation:
            # the relation written from the other side ("X, son of Y" for "X's father"):
            # the answer follows it, and only when the question's name is not what
            # follows ("Carl was the son of Ben" says nothing of Ben's father)
            tail = _spaced(text[cue:])
            if any(_spaced(n).strip() and _spaced(n) in tail for n in ctx.shape.named):
                return None
            spans = [sp for sp in spans if sp.start > cue]
            if not spans:
                return None
    if kind is AnswerKind.DATE:
        span = _date_for(ctx.shape, text, spans, cue)
        if span is None:
            return None
        if re.search(r"\b(what|which) year\b|\byear\b.*\?$", ctx.shape.question, re.I):
            year = re.search(r"\b\d{3,4}\b", span.text)
            if year is not None:  # "in what year": the year, not the whole date
                return Span(year.group(0), span.start + year.start(), span.start + year.end())
        return span
    if kind is AnswerKind.NUMBER:
        nouns = ctx.q_stems
        for span in spans:
            after = content_tokens(text[span.end : span.end + 30])[:2]
            if any(stem(w) in nouns for w in after):
                return span
    known = {fold(_base(t)) for t in ctx.text_of}
    if kind in (AnswerKind.PERSON, AnswerKind.ENTITY):
        spans = [sp for sp in spans if not _DEMONYM.match(sp.text)]
        if not spans:
            return None
    if kind is AnswerKind.PLACE and not _asks_nationality(ctx.shape):
        # "where": a place is written after in/at/near/from; a demonym is not a place
        spans = [
            sp
            for sp in spans
            if re.search(r"\b(in|at|near|from)\s$", text[max(0, sp.start - 6) : sp.start])
        ]
        if not spans:
            return None

    def rank(span: Span) -> tuple[float, int]:
        bonus = 0.0
        before = text[max(0, span.start - 6) : span.start].lower()
        if kind is AnswerKind.PLACE and re.search(r"\b(in|at|near|from)\s$", before):
            bonus += 2.0
        if kind is AnswerKind.PERSON and re.search(r"\b(by|to|of|and)\s$", before):
            bonus += 0.5
        if kind is AnswerKind.PERSON and len(span.text.split()) >= 2:
            bonus += 1.0
        if fold(span.text) in known:
            bonus += 1.0
        if fold(span.text) == fold(_base(s.title)):
            bonus -= 2.0  # the sentence's own subject answers only when nothing else does
        distance = abs(span.start - cue) if cue >= 0 else span.start
        after_cue = cue >= 0 and span.start >= cue
        return (bonus + (0.5 if after_cue else 0.0) - distance / 60.0, -span.start)

    best = max(spans, key=rank)
    noun = ctx.shape.noun
    if kind is AnswerKind.ENTITY and noun and text[best.end :].lower().startswith(f" {noun}"):
        # "which numbers" → "Bernoulli numbers": the name with the noun asked for
        end = best.end + 1 + len(noun)
        return Span(text[best.start : end], best.start, end)
    return best


_DEMONYM = re.compile(r"^(?:[\w-]+-born )?[A-Z][a-z]+(?:an|ese|ish|ian)$")


def _inverse_subject(ctx: _Context, s: Sentence) -> Span | None:
    """ "X was the father of Y" answers "Who is Y's father?" with its subject X: the
    relation written before "of" and a name of the question, in a sentence about X."""
    shape = ctx.shape
    if shape.kind is not AnswerKind.PERSON or s.title in ctx.named:
        return None
    for m in re.finditer(r"[\w'’-]+", s.text):
        if stem(m.group(0)) not in shape.relation:
            continue
        after = s.text[m.end() : m.end() + 60]
        of = re.match(r"\s+of\s+(.*)", after)
        if of and any(fold(n).split(" ")[0] in fold(of.group(1)) for n in shape.named if n.strip()):
            base = _base(s.title)
            return Span(base, 0, len(base))
    return None


def _asks_nationality(shape: QuestionShape) -> bool:
    return shape.noun in ("country", "nationality", "nation") or "nation" in shape.relation


#: Relations that are events of a life: a sentence must state one to answer for it.
_EVENTS = frozenset({"birth", "death", "buri", "marri"})


def _cue_position(shape: QuestionShape, text: str, stems: frozenset[str] | None = None) -> int:
    """Where the question's relation (or ``stems``) is expressed in ``text`` (-1: nowhere)."""
    want = shape.cues if stems is None else stems
    for m in re.finditer(r"[\w'’-]+", text):
        if stem(m.group(0)) in want:
            return m.start()
    return -1


def _date_for(shape: QuestionShape, text: str, spans: list[Span], cue: int) -> Span | None:
    lifespan = _lifespan(text)
    if lifespan is not None:
        if "death" in shape.relation:
            return lifespan[1]
        if "birth" in shape.relation:
            return lifespan[0]
    if re.search(r"\bwhat (exact )?(date|day)\b", shape.question, re.I):
        spans = [s for s in spans if (key := year_of(s.text)) is not None and key[2]]
        if not spans:
            return None  # "on what date": a day, not a bare year
    if cue >= 0:
        after = [s for s in spans if s.start >= cue]
        # a date written before the relation is another event's ("proposed in 1961")
        return after[0] if after else None
    return spans[0]


#: A short parenthesis (linear to find: no nested quantifiers over a long text).
_PAREN = re.compile(r"\(([^()]{4,120})\)")
_DASH = re.compile(r"\s*[–—-]\s*")


def _lifespan(text: str) -> tuple[Span, Span] | None:
    """Birth and death dates of a "(14 March 1920 – 2 April 1990)" parenthesis."""
    for m in _PAREN.finditer(text):
        inside = m.group(1)
        for dash in _DASH.finditer(inside):
            first = dates(inside[: dash.start()])
            second = dates(inside[dash.end() :])
            if first and second:
                a, b = first[-1], second[0]
                off_a, off_b = m.start(1), m.start(1) + dash.end()
                return (
                    Span(a.text, off_a + a.start, off_a + a.end),
                    Span(b.text, off_b + b.start, off_b + b.end),
                )
    return None


def _option_titles(ctx: _Context, option: str) -> list[str]:
    """The evidence articles an option names: its title, or its title's base name."""
    want = fold(option).strip()
    exact = [t for t in ctx.text_of if fold(t) == want]
    return exact or [t for t in ctx.text_of if fold(_base(t)) == want]


def _fact_date(ctx: _Context, title: str) -> tuple[tuple[int, int, int], Sentence] | None:
    """The date a choice compares for the article ``title``: a birth or death when the
    question is about one ("died first", "older"), else the first date it gives."""
    shape = ctx.shape
    want_death = "death" in shape.relation or "lived" in shape.question.lower()
    want_birth = "birth" in shape.relation or (
        not want_death and re.search(r"\b(older|younger|oldest|youngest)\b", shape.question, re.I)
    )
    for s in ctx.sentences:
        if s.title != title:
            continue
        lifespan = _lifespan(s.text)
        if lifespan is not None and (want_death or want_birth):
            key = year_of(lifespan[1 if want_death else 0].text)
            if key is not None:
                return key, s
        if want_death or want_birth:
            cue = "death" if want_death else "birth"
            for m in re.finditer(r"[\w'’-]+", s.text):
                if stem(m.group(0)) == cue:
                    after = [d for d in dates(s.text) if d.start >= m.start()]
                    if after and (key := year_of(after[0].text)) is not None:
                        return key, s
            continue
        found = dates(s.text)
        if found and (key := year_of(found[0].text)) is not None:
            return key, s
    return None


def _lifetime(ctx: _Context, title: str) -> tuple[tuple[int, int, int], Sentence] | None:
    for s in ctx.sentences:
        if s.title == title and (life := _lifespan(s.text)) is not None:
            a, b = year_of(life[0].text), year_of(life[1].text)
            if a and b:
                days = (b[0] - a[0]) * 372 + (b[1] - a[1]) * 31 + (b[2] - a[2])
                return (days, 0, 0), s
    return None


def _choose(ctx: _Context) -> tuple[str, tuple[Sentence, ...]] | None:
    """The option the question's comparison picks, and the sentences it rests on."""
    shape = ctx.shape
    words = {w.lower() for w in re.findall(r"\w+", shape.question)}
    # "longer", "more" compare numbers, except where the question is about time
    # ("released more recently", "lived longer")
    quantity = bool(words & QUANTITY_WORDS) and not words & _TIME_WORDS
    facts: list[tuple[tuple[float, int, int], Sentence] | None] = []
    for option in shape.options:
        titles = _option_titles(ctx, option)
        fact: tuple[tuple[float, int, int], Sentence] | None = None
        for title in titles:
            # a fact of the option itself, else of what it links to ("the director of A")
            hops = [title] if not _needs_bridge(shape) else []
            hops += [t for t in ctx.text_of if t != title and _mentions(ctx.text_of[title], t)]
            for hop in hops:
                if "lived" in shape.question.lower() or "live" in shape.relation:
                    fact = _lifetime(ctx, hop)
                elif quantity:
                    fact = _fact_number(ctx, hop)
                else:
                    fact = _fact_date(ctx, hop)
                if fact is not None:
                    break
            if fact is not None:
                break
        facts.append(fact)
    if shape.latest is None or any(f is None for f in facts):
        return _choose_by_words(ctx)
    keys = [f[0] for f in facts if f is not None]
    if keys[0] == keys[1]:
        return None
    pick = keys.index(max(keys) if shape.latest else min(keys))
    return shape.options[pick], tuple(f[1] for f in facts if f is not None)


_TIME_WORDS = frozenset(
    {
        "recently",
        "recent",
        "earlier",
        "later",
        "first",
        "last",
        "older",
        "younger",
        "oldest",
        "youngest",
        "newer",
        "latest",
        "earliest",
        "before",
        "after",
        "sooner",
        "lived",
        "born",
        "died",
        "released",
        "date",
        "year",
    }
)


def _fact_number(ctx: _Context, title: str) -> tuple[tuple[float, int, int], Sentence] | None:
    """The quantity a "longer/more" choice compares for ``title``: the first number in
    its sentences that share a word with the question besides the options' names."""
    option_stems = {w for o in ctx.shape.options for w in _stems(o)}
    want = ctx.q_stems - option_stems
    for s in ctx.sentences:
        if s.title != title or not want & _stems(s.text):
            continue
        for span in numbers(s.text):
            value = _number_value(span.text)
            if value is not None:
                return (value, 0, 0), s
    return None


_WORD_NUMBERS = {
    w: i
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
        ]
    )
}


def _number_value(text: str) -> float | None:
    t = text.lower().replace(",", "")
    scale = 1.0
    for word, factor in (("billion", 1e9), ("million", 1e6), ("thousand", 1e3)):
        if word in t:
            scale, t = factor, t.replace(word, "")
    t = t.replace("%", "").strip()
    if t in _WORD_NUMBERS:
        return float(_WORD_NUMBERS[t]) * scale
    try:
        return float(t) * scale
    except ValueError:
        return None


def _needs_bridge(shape: QuestionShape) -> bool:
    """Whether the compared fact belongs to something the option links to: the question
    names a relation beyond the date itself ("the director died first")."""
    # events of the option itself ("filmed first", "aired first", "opened earlier")
    own = {"death", "birth", "releas", "live", "lived", "born", "out", "film", "air", "premier"}
    own |= {"record", "launch", "open", "built", "build", "creat"}
    return bool(shape.relation - own - {"come", "publish", "found", "establish", "form"})


def _shared(want: set[str], have: set[str]) -> int:
    """Words of ``want`` in ``have``, a word also matching its longer forms ("Japan" in
    "Japanese", "music" in "musician")."""
    return sum(1 for w in want if w in have or (len(w) >= 4 and any(h.startswith(w) for h in have)))


def _choose_by_words(ctx: _Context) -> tuple[str, tuple[Sentence, ...]] | None:
    """A choice without dates: the option whose article holds more of the question's
    other words ("Which film is from Japan, A or B?")."""
    shape = ctx.shape
    option_words = {w for o in shape.options for w in _folded_words(o)}
    want = {w for w in ctx.q_folded if w not in option_words}
    scores = []
    best: list[Sentence | None] = []
    for option in shape.options:
        top, top_s = 0.0, None
        for title in _option_titles(ctx, option):
            for s in ctx.sentences:
                if s.title == title:
                    got = _shared(want, _folded_words(s.text))
                    if got > top:
                        top, top_s = got, s
        scores.append(top)
        best.append(top_s)
    if len(scores) != 2 or scores[0] == scores[1]:
        return None
    pick = 0 if scores[0] > scores[1] else 1
    return shape.options[pick], tuple(s for s in best if s is not None)


# --------------------------------------------------------------------- yes / no


def _description(ctx: _Context, title: str) -> str | None:
    """The capitalised word a first sentence describes its subject with ("American")."""
    for s in ctx.sentences:
        if s.title == title:
            m = re.search(r"\b(?:is|was|are|were) (?:an?|the) ((?:[A-Z][\w-]+ ?)+)", s.text)
            if m:
                return m.group(1).split()[0]
            return None
    return None


def _yes_no(ctx: _Context) -> tuple[str, tuple[Sentence, ...]] | None:
    shape = ctx.shape
    if not shape.relation & {"nation", "country", "same"}:
        return None
    named = ctx.named[:4]
    if len(named) < 2:
        return None
    bridge = _needs_bridge(shape) and bool(shape.relation - {"nation", "country", "same"})
    facts: list[tuple[str, Sentence]] = []
    for title in named[:2]:
        hops = [title]
        if bridge:
            hops = [t for t in ctx.bridges if _mentions(ctx.text_of[title], t)] or hops
        for hop in hops:
            d = _description(ctx, hop)
            if d is not None:
                s = next(x for x in ctx.sentences if x.title == hop)
                facts.append((d, s))
                break
    if len(facts) != 2:
        return None
    same = facts[0][0].lower() == facts[1][0].lower()
    return ("yes" if same else "no"), (facts[0][1], facts[1][1])


# --------------------------------------------------------------------- kinship


def _kin(ctx: _Context, steps: tuple[str, ...]) -> tuple[str, tuple[Sentence, ...]] | None:
    """A relative of a relative ("paternal grandfather"), step by step from the article
    the question names (:mod:`kg_agent.answering.kinship`)."""

    def sentences_of(title: str) -> list[str]:
        return [s.text for s in ctx.sentences if s.title == title]

    for start in ctx.named[:2]:
        taken = follow(start, steps, sentences_of, list(ctx.text_of))
        if not taken:
            continue
        basis = tuple(
            next(s for s in ctx.sentences if s.title == k.source and s.text == k.sentence)
            for k in taken
        )
        return answer_name(taken[-1]), basis
    return None


# --------------------------------------------------------------------- in common

#: Nouns whose answer is a class, written in lower case ("What profession…": "writer").
_CLASS_NOUNS = frozenset(
    [
        "profession",
        "occupation",
        "job",
        "career",
        "type",
        "kind",
        "sort",
        "genre",
        "field",
        "service",
        "services",
        "sport",
        "position",
        "role",
        "instrument",
        "species",
    ]
)
_SHARED = re.compile(r"\b(?:in common|both|share[sd]?)\b", re.I)


def _in_common(ctx: _Context) -> tuple[str, tuple[Sentence, ...]] | None:
    """What two named things share ("What profession do A and B have in common?",
    "A and B are both which kind of animal?"): a name written in both articles (an
    evidence article first: what the graph knows), else the longest phrase of lowercase
    words both descriptions use ("film director", "martial artist")."""
    shape = ctx.shape
    if not _SHARED.search(shape.question) or len(ctx.named) < 2:
        return None
    a, b = ctx.named[:2]
    a_sents = [s for s in ctx.sentences if s.title == a]
    b_sents = [s for s in ctx.sentences if s.title == b]
    if not a_sents or not b_sents:
        return None
    b_text = _spaced(ctx.text_of[b])
    excluded = ctx.q_folded | _folded_words(a) | _folded_words(b)
    if shape.kind in (AnswerKind.PLACE, AnswerKind.PERSON) or (
        shape.kind is AnswerKind.ENTITY and shape.noun not in _CLASS_NOUNS
    ):
        found: list[tuple[bool, str, Sentence]] = []
        for s in a_sents:
            taken = dates(s.text)
            for span in names(s.text):
                words = _folded_words(span.text)
                if not words or words <= excluded or _DEMONYM.match(span.text):
                    continue
                if any(d.start < span.end and span.start < d.end for d in taken):
                    continue
                # the graph's name inside a longer one ("District Attorney of Albany
                # County" holds the article "Albany County, New York")
                text = next(
                    (
                        t
                        for t in ctx.title_names
                        if _spaced(t) in _spaced(span.text) and not _folded_words(t) <= excluded
                    ),
                    span.text,
                )
                if _spaced(text) in b_text:
                    found.append((fold(text) not in ctx.titles_folded, text, s))
        if found:
            _, text, s = min(found, key=lambda f: f[0])  # an evidence title first
            other = next((x for x in b_sents if _spaced(text) in _spaced(x.text)), b_sents[0])
            return text, (s, other)

    # lowercase phrases of both descriptions (their first two sentences), compared by
    # stems ("writers" is "writer"); the shorter form is the answer
    def grams(sents: list[Sentence]) -> dict[tuple[str, ...], tuple[str, Sentence]]:
        out: dict[tuple[str, ...], tuple[str, Sentence]] = {}
        for s in sents[:2]:
            words = re.findall(r"[\w'’-]+", s.text)
            for n in (3, 2, 1):
                for i in range(len(words) - n + 1):
                    part = words[i : i + n]
                    if any(w[:1].isupper() or w.isdigit() for w in part):
                        continue
                    low = [w.lower() for w in part]
                    if low[0] in STOP_WORDS or low[-1] in STOP_WORDS:
                        continue
                    if all(w in excluded for w in low):
                        continue
                    out.setdefault(tuple(stem(w) for w in low), (" ".join(low), s))
        return out

    ga, gb = grams(a_sents), grams(b_sents)
    both = [g for g in ga if g in gb]
    if not both:
        return None
    order = list(ga)
    best = max(both, key=lambda g: (len(g), -order.index(g)))
    (text_a, s_a), (text_b, s_b) = ga[best], gb[best]
    return min(text_a, text_b, key=len), (s_a, s_b)


# --------------------------------------------------------------------- support


def _support(ctx: _Context) -> float:
    """How much of the question the top evidence holds (0..1): the mean of two shares,
    the question's words found in the top five articles' text and titles, and its
    capitalised words (the names, first word aside) found there. A question about
    something the graph lacks keeps its names unmatched, whatever the words around them.
    """
    top_titles = list(dict.fromkeys(ev.title for _, ev in ctx.items))[:5]
    hay = _spaced(" ".join(ctx.text_of[t] + " " + t for t in top_titles))
    question = POSSESSIVE.sub("", ctx.shape.question)  # "Jansch's" is written "Jansch"
    qwords = [w for w in re.findall(r"\w+", fold(question)) if w not in STOP_WORDS]
    if not qwords:
        return 0.0
    share = sum(f" {w} " in hay for w in qwords) / len(qwords)
    caps = [m.group(0) for m in re.finditer(r"\b[A-Z][\w'-]+", question) if m.start() > 0]
    caps_share = sum(_spaced(w) in hay for w in caps) / len(caps) if caps else share
    return round((share + caps_share) / 2, 4)


# --------------------------------------------------------------------- the reading


def _trim(sentences: list[Sentence], limit: int) -> list[Sentence]:
    """Answer sentences up to ``limit`` words; the first is always kept."""
    out: list[Sentence] = []
    used = 0
    for s in sentences:
        n = len(s.text.split())
        if out and used + n > limit:
            break
        out.append(s)
        used += n
    return out


def read_evidence(
    question: str | QuestionShape,
    items: Sequence[tuple[int, Evidence]],
    *,
    max_words: int = MAX_ANSWER_WORDS,
    threshold: float = SUPPORT_THRESHOLD,
) -> OfflineReading:
    """Read numbered evidence for ``question`` (see the module docstring)."""
    shape = question if isinstance(question, QuestionShape) else analyse(question)
    ctx = _Context(shape, items)
    if not ctx.sentences:
        return OfflineReading(shape, [], answerable=False, notes=["no evidence"])
    ranked = ctx.ranked()
    support = _support(ctx)
    reading = OfflineReading(shape, [], support=support, answerable=support >= threshold)
    decided: tuple[str, tuple[Sentence, ...]] | None = None
    steps = kin_path(shape.question) if shape.kind is AnswerKind.PERSON else ()
    if steps:
        decided = _kin(ctx, steps)
        if decided is not None:
            reading.notes.append("kinship: " + " → ".join(steps))
    if decided is not None:
        pass
    elif shape.kind is AnswerKind.CHOICE:
        decided = _choose(ctx)
    elif shape.kind is AnswerKind.YES_NO:
        decided = _yes_no(ctx)
    else:
        decided = _in_common(ctx)
    if decided is not None:
        reading.short_answer, basis = decided
        reading.short_cites = tuple(dict.fromkeys(s.n for s in basis))
        reading.sentences = list(dict.fromkeys(basis))
        reading.notes.append(f"compared: {shape.kind.value}")
    elif shape.kind not in (AnswerKind.CHOICE, AnswerKind.YES_NO):
        order = ranked[:8]
        if ctx.hops:  # a chain: the answer is in the article the first hop leads to
            hop = [s for s in ranked if s.title in ctx.hops]
            # its sentences that express the outer relation (or give a lifespan) first
            hop.sort(
                key=lambda s: (
                    not (_cue_position(shape, s.text, _outer(ctx, s)) >= 0 or _lifespan(s.text))
                )
            )
            order = hop + [s for s in order if s.title not in ctx.hops]
            reading.notes.append("hops: " + ", ".join(ctx.hops))
        events = shape.relation & _EVENTS
        for s in order:
            if events and not (_cue_position(shape, s.text, events) >= 0 or _lifespan(s.text)):
                continue  # "where was X born": only a sentence about a birth answers
            span = _pick(ctx, s)
            if span is not None:
                reading.short_answer = span.text.strip(" ,;:")
                reading.short_cites = (s.n,)
                reading.sentences = [s]
                break
    shown = {(s.n, s.position) for s in reading.sentences}
    rest = [s for s in ranked if (s.n, s.position) not in shown]
    reading.sentences = _trim(reading.sentences + rest, max_words)
    if not reading.answerable:
        reading.short_answer = None
        reading.short_cites = ()
    return reading

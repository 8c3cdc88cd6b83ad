"""Answers that compare what the evidence says of two or more things: a choice ("Which
film came out first, A or B?": each option's date or number, its own or that of what
it links to, "the director of A"), a yes/no of two descriptions ("same nationality"),
what two things have in common, and a relative of a relative (:mod:`.kinship`).
Each returns the answer and the sentences it rests on, or None when the evidence
does not decide.
"""

from __future__ import annotations

import re

from kg_agent.answering.evidence import (
    DEMONYM,
    Context,
    Sentence,
    base_title,
    folded_words,
    mentions,
    spaced,
    stems_of,
)
from kg_agent.answering.kinship import answer_name, follow
from kg_agent.language.nationality import compares_countries, countries, same_country
from kg_agent.language.shape import QUANTITY_WORDS, AnswerKind, QuestionShape, stem
from kg_agent.language.spans import dates, duration, lifespan, names, numbers, year_of
from kg_agent.language.tokens import STOP_WORDS, content_matches, content_tokens, fold, words

__all__ = ["choose", "in_common", "relatives_of_relatives", "yes_no"]

Decision = tuple[str, tuple[Sentence, ...]]


def _option_titles(ctx: Context, option: str) -> list[str]:
    """The evidence articles an option names: its title, or its title's base name, else
    the titles that hold each of its words ("Einstein": Albert Einstein)."""
    want = fold(option).strip()
    exact = [t for t in ctx.text_of if fold(t) == want]
    based = exact or [t for t in ctx.text_of if fold(base_title(t)) == want]
    said = set(words(want))
    return based or [t for t in ctx.text_of if said and said <= set(words(fold(base_title(t))))]


def _fact_date(ctx: Context, title: str) -> tuple[tuple[int, int, int], Sentence] | None:
    """The date a choice compares for the article ``title``: a birth or death when the
    question is about one ("died first", "older"), else the first date it gives, its
    lead's first (what the thing is: "Apollo 8 … launched on December 21, 1968"; another
    section's first date may be of something else: "the first Earth Day in 1970")."""
    shape = ctx.shape
    want_death = "death" in shape.relation or "lived" in shape.question.lower()
    want_birth = "birth" in shape.relation or (
        not want_death and re.search(r"\b(older|younger|oldest|youngest)\b", shape.question, re.I)
    )
    leads = {n for n, ev in ctx.items if ev.is_lead}
    own = [s for s in ctx.sentences if s.title == title]
    for s in sorted(own, key=lambda s: s.n not in leads):  # stable: the leads first
        life = lifespan(s.text)
        if life is not None and (want_death or want_birth):
            key = year_of(life[1 if want_death else 0].text)
            if key is not None:
                return key, s
        if want_death or want_birth:
            cue = "death" if want_death else "birth"
            for m in content_matches(s.text):
                if stem(m.group(0)) == cue:
                    after = [d for d in dates(s.text) if d.start >= m.start()]
                    if after and (key := year_of(after[0].text)) is not None:
                        return key, s
            continue
        found = dates(s.text)
        if found and (key := year_of(found[0].text)) is not None:
            return key, s
    return None


def _lifetime(ctx: Context, title: str) -> tuple[tuple[int, int, int], Sentence] | None:
    for s in ctx.sentences:
        if s.title == title and (life := lifespan(s.text)) is not None:
            a, b = year_of(life[0].text), year_of(life[1].text)
            if a and b:
                days = (b[0] - a[0]) * 372 + (b[1] - a[1]) * 31 + (b[2] - a[2])
                return (days, 0, 0), s
    return None


def _choose_by_facts(ctx: Context) -> tuple[str, tuple[Sentence, ...]] | None:
    """The option whose infobox fact is the larger or later (or the smaller, earlier),
    when the fact retriever found one fact for each (``Algeria — area km2: 2381741``)."""
    shape = ctx.shape
    if shape.latest is None:
        return None
    keyed: list[tuple[tuple[float, int, int], Sentence]] = []
    for option in shape.options:
        titles = _option_titles(ctx, option)
        found = None
        for n, ev in ctx.items:
            if ev.fact is None or ev.fact.subject not in titles:
                continue
            dated = bool(ev.fact.rows) and ev.fact.rows[0].kind in ("date", "year")
            date = year_of(ev.fact.answer) if dated else None
            lasted = duration(ev.fact.answer)  # "100 minutes" against "2 hours"
            number = lasted if lasted is not None else _number_value(ev.fact.answer)
            key: tuple[float, int, int] | None = None
            if date is not None:
                key = (float(date[0]), date[1], date[2])
            elif number is not None:
                key = (number, 0, 0)
            basis = next((s for s in ctx.sentences if s.n == n), None)
            if key is not None and basis is not None:
                found = (key, basis)
                break
        if found is None:
            return None
        keyed.append(found)
    if len(keyed) != 2 or keyed[0][0] == keyed[1][0]:
        return None
    keys = [k for k, _ in keyed]
    pick = keys.index(max(keys) if shape.latest else min(keys))
    return shape.options[pick], (keyed[0][1], keyed[1][1])


def choose(ctx: Context) -> tuple[Decision, str] | None:
    """The option the question's comparison picks, the sentences it rests on, and how:
    the reader's source, each one's confidence measured on the dev sets (the reader's
    ``SOURCE_CONFIDENCE``). "compared": by the options' infobox facts when there are,
    else by the dates their text writes, or for a choice without a comparative ("which
    is from Japan") by which article holds more of its words; "counted": by the first
    number of a sentence that shares a word with the question ("more species");
    "matched": a comparative whose values the evidence lacks for an option, guessed by
    the words."""
    by_facts = _choose_by_facts(ctx)
    if by_facts is not None:
        return by_facts, "compared"
    shape = ctx.shape
    asked = set(words(shape.question))
    # "longer", "more" compare numbers, except where the question is about time
    # ("released more recently", "lived longer")
    quantity = bool(asked & QUANTITY_WORDS) and not asked & _TIME_WORDS
    facts: list[tuple[tuple[float, int, int], Sentence] | None] = []
    for option in shape.options:
        titles = _option_titles(ctx, option)
        fact: tuple[tuple[float, int, int], Sentence] | None = None
        for title in titles:
            # a fact of the option itself, else of what it links to ("the director of A")
            hops = [title] if not _needs_bridge(shape) else []
            hops += [t for t in ctx.text_of if t != title and mentions(ctx.text_of[title], t)]
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
        by_words = _choose_by_words(ctx)
        how = "compared" if shape.latest is None else "matched"
        return None if by_words is None else (by_words, how)
    keys = [f[0] for f in facts if f is not None]
    if keys[0] == keys[1]:
        return None
    pick = keys.index(max(keys) if shape.latest else min(keys))
    basis = tuple(f[1] for f in facts if f is not None)
    return (shape.options[pick], basis), "counted" if quantity else "compared"


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


def _fact_number(ctx: Context, title: str) -> tuple[tuple[float, int, int], Sentence] | None:
    """The quantity a "longer/more" choice compares for ``title``: the first number in
    its sentences that share a word with the question besides the options' names."""
    option_stems = {w for o in ctx.shape.options for w in stems_of(o)}
    named = {w for o in (*ctx.shape.options, title) for w in words(o)}
    want = set(ctx.q_stems - option_stems)
    # "shorter" is measured as a length is written ("6,400 km long"), "higher" as "highest"
    want |= {_SCALE[w] for w in want if w in _SCALE}
    for s in ctx.sentences:
        if s.title != title or not _shared(want, stems_of(s.text)):
            continue
        for span in numbers(s.text):
            if s.text[span.end : span.end + 2].lower() in _ORDINAL:
                continue  # a rank ("the 30th-most extensive"), of what the words say
            if span.text in named:
                continue  # a number of a name ("Apollo 8"), no measure of it
            value = _number_value(span.text)
            if value is not None:
                return (value, 0, 0), s
    return None


_ORDINAL = frozenset(["st", "nd", "rd", "th"])


#: A comparative's measure, as a sentence writes it ("shorter": "6,400 km long").
_SCALE = {"short": "long", "small": "larg", "lower": "high", "low": "high", "fewer": "more"}

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
    names someone's role beyond the date itself ("the director died first"); "went into
    space later" is the option's own event."""
    # events of the option itself ("filmed first", "aired first", "opened earlier")
    own = {"death", "birth", "releas", "live", "lived", "born", "out", "film", "air", "premier"}
    own |= {"record", "launch", "open", "built", "build", "creat"}
    other = shape.relation - own - {"come", "publish", "found", "establish", "form"}
    return bool(other & _ROLE_STEMS)


#: Roles a person holds towards the thing compared ("the director of the film").
_ROLE_STEMS = frozenset(
    stem(w)
    for w in [
        *("director", "composer", "performer", "producer", "writer", "author", "creator"),
        *("editor", "screenwriter", "designer", "owner", "father", "mother", "spouse"),
        *("husband", "wife", "son", "daughter", "star", "actor", "singer", "artist"),
        *("architect", "cinematographer", "lyricist", "presenter", "manager", "coach"),
    ]
)


def _shared(want: set[str], have: set[str]) -> int:
    """Words of ``want`` in ``have``, a word also matching its longer forms ("Japan" in
    "Japanese", "music" in "musician")."""
    return sum(1 for w in want if w in have or (len(w) >= 4 and any(h.startswith(w) for h in have)))


def _choose_by_words(ctx: Context) -> Decision | None:
    """A choice without dates: the option whose article holds more of the question's
    other words ("Which film is from Japan, A or B?")."""
    shape = ctx.shape
    # the noun asked for is what both options are ("Which species…, A or B?")
    option_words = {w for o in shape.options for w in folded_words(o)}
    option_words |= folded_words(shape.noun)
    want = {w for w in ctx.q_folded if w not in option_words}
    scores = []
    best: list[Sentence | None] = []
    for option in shape.options:
        top, top_s = 0.0, None
        for title in _option_titles(ctx, option):
            for s in ctx.sentences:
                if s.title == title:
                    got = _shared(want, folded_words(s.text))
                    if got > top:
                        top, top_s = got, s
        scores.append(top)
        best.append(top_s)
    if len(scores) != 2 or scores[0] == scores[1]:
        return None
    pick = 0 if scores[0] > scores[1] else 1
    return shape.options[pick], tuple(s for s in best if s is not None)


# --------------------------------------------------------------------- yes / no


#: How many of an article's lead sentences are read for its country.
_COUNTRY_SENTENCES = 3


def _countries_of(ctx: Context, title: str) -> tuple[set[str], Sentence] | None:
    """The countries of the article's first lead sentence (of three) that gives any, and
    it. Only the lead (its section ``TITLE::0000``) says what a thing is: another section
    names places it was in ("his youth in Indiana")."""
    leads = {n for n, ev in ctx.items if ev.is_lead}
    for s in [x for x in ctx.sentences if x.title == title and x.n in leads][:_COUNTRY_SENTENCES]:
        found = countries(s.text, base_title(title))
        if found:
            return found, s
    return None


def yes_no(ctx: Context) -> tuple[str, tuple[Sentence, ...]] | None:
    """Whether two named things (or what they link to: "the directors of films A and
    B") are of the same country or nationality, read from their descriptions."""
    shape = ctx.shape
    if not compares_countries(shape):
        return None
    named = ctx.named[:4]
    if len(named) < 2:
        return None
    bridge = _needs_bridge(shape) and bool(shape.relation - {"nation", "country", "same"})
    found: list[tuple[set[str], Sentence]] = []
    for title in named[:2]:
        hops = [title]
        if bridge:
            hops = [t for t in ctx.bridges if mentions(ctx.text_of[title], t)] or hops
        for hop in hops:
            if (got := _countries_of(ctx, hop)) is not None:
                found.append(got)
                break
    if len(found) != 2:
        return None
    same = same_country(found[0][0], found[1][0])
    if same is None:
        return None
    return ("yes" if same else "no"), (found[0][1], found[1][1])


# --------------------------------------------------------------------- kinship


def relatives_of_relatives(
    ctx: Context, paths: tuple[tuple[str, ...], ...]
) -> tuple[str, tuple[Sentence, ...], tuple[str, ...]] | None:
    """A relative of a relative ("paternal grandfather"), step by step from the article
    the question names, by the first reading of the word the evidence writes
    (:mod:`kg_agent.answering.kinship`)."""

    def sentences_of(title: str) -> list[str]:
        return [s.text for s in ctx.sentences if s.title == title]

    for start, steps in ((start, steps) for start in ctx.named[:2] for steps in paths):
        taken = follow(start, steps, sentences_of, list(ctx.text_of))
        if not taken:
            continue
        basis = tuple(
            next(s for s in ctx.sentences if s.title == k.source and s.text == k.sentence)
            for k in taken
        )
        return answer_name(taken[-1]), basis, steps
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


def in_common(ctx: Context) -> tuple[str, tuple[Sentence, ...]] | None:
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
    b_text = spaced(ctx.text_of[b])
    excluded = ctx.q_folded | folded_words(a) | folded_words(b)
    if shape.kind in (AnswerKind.PLACE, AnswerKind.PERSON) or (
        shape.kind is AnswerKind.ENTITY and shape.noun not in _CLASS_NOUNS
    ):
        found: list[tuple[bool, str, Sentence]] = []
        for s in a_sents:
            taken = dates(s.text)
            for span in names(s.text):
                words = folded_words(span.text)
                if not words or words <= excluded or DEMONYM.match(span.text):
                    continue
                if any(d.start < span.end and span.start < d.end for d in taken):
                    continue
                # the graph's name inside a longer one ("District Attorney of Albany
                # County" holds the article "Albany County, New York")
                text = next(
                    (
                        t
                        for t in ctx.title_names
                        if spaced(t) in spaced(span.text) and not folded_words(t) <= excluded
                    ),
                    span.text,
                )
                if spaced(text) in b_text:
                    found.append((fold(text) not in ctx.titles_folded, text, s))
        if found:
            _, text, s = min(found, key=lambda f: f[0])  # an evidence title first
            other = next((x for x in b_sents if spaced(text) in spaced(x.text)), b_sents[0])
            return text, (s, other)

    # lowercase phrases of both descriptions (their first two sentences), compared by
    # stems ("writers" is "writer"); the shorter form is the answer
    def grams(sents: list[Sentence]) -> dict[tuple[str, ...], tuple[str, Sentence]]:
        out: dict[tuple[str, ...], tuple[str, Sentence]] = {}
        for s in sents[:2]:
            words = content_tokens(s.text)
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

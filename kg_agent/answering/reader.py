"""Read ranked evidence for a question: the sentences that answer, the short answer in
them, and whether the evidence supports an answer at all.

The evidence is split and scored in :mod:`.evidence`; comparisons, yes/no, "in
common" and relatives of relatives are decided in :mod:`.compare`; this module takes
the short answer from another name the subject's article gives ("what does X stand
for"), else from a name that says it is the kind asked ("which professorship": "…
Professor of …"), else from the best sentence by the kind asked (a date, a number, a
place after "in", a person), offers it to the span model as one candidate among the
text's spans, checks the support ("not in the graph" below the threshold), and chooses the
sentences to show within the word budget. A chain ("X's father", "the director of film
X") is read in its hops' sentences alone, and shows both hops.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from kg_agent.answering.compare import choose, in_common, relatives_of_relatives, yes_no
from kg_agent.answering.evidence import (
    DEMONYM,
    Context,
    Sentence,
    base_title,
    folded_words,
    mentions,
    outer_relation,
    spaced,
)
from kg_agent.answering.kinship import kin_paths
from kg_agent.answering.sentence_ranker import SentenceRanker, default_sentence_ranker
from kg_agent.answering.span_ranker import RUNNERS_UP, FactCandidate, SpanRanker
from kg_agent.answering.verify import verify
from kg_agent.language.question import Question
from kg_agent.language.shape import (
    AUXILIARIES,
    POSSESSIVE,
    AnswerKind,
    QuestionShape,
    analyse,
    shares_stem,
    stem,
)
from kg_agent.language.spans import Span, lifespan, year_of
from kg_agent.language.tokens import (
    NAME_PARTICLES,
    STOP_WORDS,
    UPPER,
    content_matches,
    content_tokens,
    fold,
    words,
)
from kg_agent.retrieval.base import Evidence

__all__ = ["SUPPORT_THRESHOLD", "OfflineReading", "Sentence", "evidence_support", "read_evidence"]

#: Below this support the evidence is taken not to answer the question (calibrated on
#: the dev sets' in-graph and out-of-graph questions: ``docs/notes/answers.md``).
SUPPORT_THRESHOLD = 0.7
MAX_ANSWER_WORDS = 40
#: Sentences shown when no short answer is, whatever their words: on the plain set's text
#: questions the gold was in the reader's three best for 165 of 210 (two: 150), in the
#: unsure candidate's sentence and the next within the word budget for 113.
UNSURE_SENTENCES = 3
#: A short answer is shown (in bold, as *the* answer) at or above this confidence; below
#: it the answer is the sentences alone. Chosen so that shown answers are right at least
#: nine times in ten on the dev sets (docs/BENCHMARKS.md, "Answers a person can trust").
SHOW_THRESHOLD = 0.6
#: The reader's confidence in a short answer read from text, by how it was found and
#: the kind asked: the share of such answers that were right on the three dev sets
#: (470 questions; docs/BENCHMARKS.md, "Answers a person can trust"), rounded
#: down. A choice between two named things read from their dates or numbers, and a
#: relative of a relative read article by article, are right nine times in ten. A
#: comparative choice guessed from the options' words (a date or number missing) was
#: right for 1 of the dev sets' 4, one read from the first numbers of two sentences for
#: their 2 (and not for the plain set's 1: "16 mm film" against "Apollo 11"): neither is
#: shown in bold. A span picked from a sentence is right one to six times in ten, so it
#: is never shown in bold either.
SOURCE_CONFIDENCE: dict[tuple[str, str], float] = {
    ("kinship", "person"): 0.95,
    ("compared", "choice"): 0.9,
    ("counted", "choice"): 0.5,
    ("matched", "choice"): 0.25,
    ("compared", "yes_no"): 0.55,
    ("compared", "entity"): 0.55,
    ("alias", ""): 0.55,
    ("typed", ""): 0.25,
    ("verified", "yes_no"): 0.55,
    ("span", "date"): 0.55,
    ("span", "number"): 0.5,
    ("span", "place"): 0.4,
    ("span", "person"): 0.25,
    ("span", "entity"): 0.25,
}


#: The confidence of a choice read from two infobox facts (a date or a number each),
#: when both facts match the comparison fully: right for every such choice of the plain
#: set (docs/BENCHMARKS.md, "Answers a person can trust"), kept below certainty.
FACTS_COMPARED = 0.95


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
    #: how sure the reader is of ``short_answer`` (0..1; :data:`SHOW_THRESHOLD`), and how
    #: it was found: "fact", "kinship", "compared", "counted" (a choice by the numbers of
    #: two sentences), "matched" (a comparative guessed from words), "facts compared",
    #: "verified", "alias", "typed", "span" or "ranked"
    confidence: float = 0.0
    source: str = ""
    #: the confidence from which the short answer is shown (a fact's comes with it)
    show_at: float = SHOW_THRESHOLD
    #: the answers weighed after the short answer, best first, each with the evidence
    #: numbers that state it (another fact's value, the span model's runners-up)
    others: list[tuple[str, tuple[int, ...]]] = field(default_factory=list)

    @property
    def shown(self) -> bool:
        """Whether the short answer is sure enough to be shown as the answer."""
        return self.short_answer is not None and self.confidence >= self.show_at

    @property
    def candidates(self) -> list[tuple[str, tuple[int, ...]]]:
        """The short answer, then the others: what a model that writes the answer is
        told the reader found (empty when the evidence does not support an answer)."""
        if self.short_answer is None:
            return []
        theirs = {n for _, cites in self.others for n in cites}
        own = tuple(n for n in self.short_cites if n not in theirs) or self.short_cites
        return [(self.short_answer, own), *self.others]


# --------------------------------------------------------------------- short answers


def _pick(ctx: Context, s: Sentence) -> Span | None:
    inverse = _inverse_subject(ctx, s)
    if inverse is not None:
        return inverse
    spans = ctx.candidates(s)
    kind = ctx.shape.kind
    if not spans and not (kind is AnswerKind.DATE and lifespan(s.text)):
        return None  # (a lifespan's years may be bare: "(c. 848 – after 890)")
    text = s.text
    cue = _cue_position(ctx.shape, text, outer_relation(ctx, s))
    if cue >= 0 and kind is AnswerKind.PERSON:
        m = re.match(r"[\w'’-]+", text[cue:])
        if m is not None and stem(m.group(0)) not in ctx.shape.relation:
            # the relation written from the other side ("X, son of Y" for "X's father"):
            # the answer follows it, and only when the question's name is not what
            # follows ("Carl was the son of Ben" says nothing of Ben's father)
            tail = spaced(text[cue:])
            if any(spaced(n).strip() and spaced(n) in tail for n in ctx.shape.named):
                return None
            spans = [sp for sp in spans if sp.start > cue]
            if not spans:
                return None
    if kind is AnswerKind.DATE:
        span = _date_for(ctx.shape, text, spans, cue)
        if span is None:
            return None
        year = _year_asked(ctx.shape, span.text)
        if year != span.text:  # "in what year": the year, not the whole date
            at = span.start + span.text.index(year)
            return Span(year, at, at + len(year))
        return span
    if kind is AnswerKind.NUMBER:
        nouns = ctx.q_stems
        for span in spans:
            after = content_tokens(text[span.end : span.end + 30])[:2]
            if any(stem(w) in nouns for w in after):
                return _with_counted_noun(ctx, text, span)
    known = {fold(base_title(t)) for t in ctx.text_of}
    if kind in (AnswerKind.PERSON, AnswerKind.ENTITY):
        spans = [sp for sp in spans if not DEMONYM.match(sp.text)]
        if not spans:
            return None
    if kind is AnswerKind.PLACE and not _asks_nationality(ctx.shape):
        # "where": a place is written after in/at/near/from; a demonym is not a place
        spans = [sp for sp in spans if _PLACE_BEFORE.search(text[max(0, sp.start - 10) : sp.start])]
        if not spans:
            return None

    def rank(span: Span) -> tuple[float, int]:
        bonus = 0.0
        before = text[max(0, span.start - 10) : span.start].lower()
        if kind is AnswerKind.PLACE and (place := _PLACE_BEFORE.search(before)):
            bonus += 1.0 if place.group(1) else 2.0  # "at UC Berkeley" over "at the School"
        if kind is AnswerKind.PERSON and re.search(r"\b(by|to|of|and)\s$", before):
            bonus += 0.5
        if kind is AnswerKind.PERSON and len(span.text.split()) >= 2:
            bonus += 1.0
        if fold(span.text) in known:
            bonus += 1.0
        own = folded_words(base_title(s.title))
        if (own and folded_words(span.text) <= own) or (
            s.title in ctx.hops and s.position == 0 and span.start == 0
        ):
            # the sentence's own subject, or a part of its name, or a hop's full name
            # ("William Thomas "Billy" Murray") answers only when nothing else does
            bonus -= 2.0
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


def _year_asked(shape: QuestionShape, text: str) -> str:
    """The year of ``text`` when the question asks for one ("in what year"), else it."""
    if re.search(r"\b(what|which) year\b|\byear\b.*\?$", shape.question, re.I):
        year = re.search(r"\b\d{3,4}\b", text)
        if year is not None:
            return year.group(0)
    return text


#: A span ranker without weights: the hand reader's pick stands.
_NO_SPAN_RANKER = SpanRanker(None, models=())


#: What a place is written after: "in Paris", "at the University of Florida".
_PLACE_BEFORE = re.compile(r"\b(?:in|at|near|from)\s(the\s)?$", re.I)


def _with_counted_noun(ctx: Context, text: str, span: Span) -> Span:
    """ "How many members…?" → "seven members": the number with the words after it that
    the question counts (four at most), as the sentence writes them."""
    end = span.end
    for m in re.finditer(r"\s+([\w'’-]+)", text[span.end :]):
        if m.start() != end - span.end or len(text[span.end : end].split()) >= 4:
            break
        if stem(m.group(1)) not in ctx.q_stems or m.group(1).lower() in STOP_WORDS:
            break
        end = span.end + m.end()
    return Span(text[span.start : end], span.start, end)


def _inverse_subject(ctx: Context, s: Sentence) -> Span | None:
    """ "X was the father of Y" answers "Who is Y's father?" with its subject X: the
    relation written before "of" and a name of the question, in a sentence about X."""
    shape = ctx.shape
    if shape.kind is not AnswerKind.PERSON or s.title in ctx.named:
        return None
    for m in content_matches(s.text):
        if stem(m.group(0)) not in shape.relation:
            continue
        after = s.text[m.end() : m.end() + 60]
        of = re.match(r"\s+of\s+(.*)", after)
        if of and any(fold(n).split(" ")[0] in fold(of.group(1)) for n in shape.named if n.strip()):
            base = base_title(s.title)
            return Span(base, 0, len(base))
    return None


#: A question after another name of its subject: what it stands for, what it is also
#: or was once called, what its name means.
_ASKS_NAME = re.compile(
    r"\b(?:stand|stands) for\b|\b(?:another|other|alternative|common|former|original) names?\b"
    r"|\b(?:commonly|also|originally|formerly|usually|once)?\s*(?:called|known as|titled)\b"
    r"|\bname\b.*\bmean\b|\bmeaning of\b",
    re.I,
)
#: How a sentence gives another name: "abbreviated from X", "also called X", "its name
#: means 'X'", "originally titled 'X'", "X, or the Y, are" (the group: the name).
_GIVES_NAME = re.compile(
    r"\b(?:abbreviated from|short for|stands for|an acronym (?:for|of))\s+(?P<a>[^,;.()]+)"
    r"|\b(?:also|commonly|often|sometimes|originally|formerly|previously|once|usually)\s+"
    r"(?:known as|called|named|titled|referred to as)\s+(?:the\s+)?(?P<b>[\"“'][^\"”']+|[^,;.()]+)"
    r"|\b(?:was|were|is)\s+(?:originally\s+|formerly\s+|first\s+)?(?:called|titled|named|known as)"
    r"\s+(?:the\s+)?(?P<c>[\"“'][^\"”']+|[A-Z][^,;.()]+)"
    r"|\b(?:means?|meaning|literally)\s+(?:\"|“)(?P<d>[^\"”]+)"
    r"|^[^,()]{2,60},\s+or\s+(?:the\s+)?(?P<e>[^,]+),"
    r"|\b(?:original|former|old|earlier|previous|other) name (?:was|is)\s+(?:the\s+)?"
    r"(?P<f>[^,;.()]+)",
)
_NAME_WORDS = 8  # the longest other name taken


def _named_otherwise(ctx: Context, order: Sequence[Sentence]) -> tuple[Span, Sentence] | None:
    """Another name of the question's subject, as its article gives it ("What does ASCII
    stand for?": "abbreviated from American Standard Code for Information Interchange";
    "What does the name aardwolf mean?": "Its name means "earth wolf""), in the
    subject's best sentences (the subject: an article the question names, else one of
    the two the search ranked first)."""
    if not _ASKS_NAME.search(ctx.shape.question):
        return None
    # the articles the question names, else the two the search ranked first
    subjects = ctx.named or list(dict.fromkeys(ev.title for _, ev in ctx.items))[:2]
    for s in order:
        if s.title not in subjects:
            continue
        subject = s.title
        for m in _GIVES_NAME.finditer(s.text):
            group = next(g for g in "abcdef" if m.group(g) is not None)
            text = m.group(group).strip(" \"“”'")
            text = re.split(r"\s+(?:is|was|are|were|but|because|which|that)\s", text)[0]
            if not text or len(text.split()) > _NAME_WORDS:
                continue
            if folded_words(text) <= folded_words(subject):
                continue  # the subject's own name
            start = s.text.find(text, m.start(group))
            return Span(text, start, start + len(text)), s
    return None


#: "Which professorship at Cambridge was…", "What university did…", "Which Oxford college
#: did…": the noun a wh-word asks for, the last lowercase word before a verb or a
#: preposition (a capitalised word before it qualifies it: "Oxford").
_ASKED_NOUN = re.compile(
    r"\b(?i:what|which)\s+(?:[A-Z][\w'-]*\s+){0,3}([a-z][a-z-]{2,})\s+"
    r"(?:did|does|do|was|were|is|are|has|have|had|at|in|of|on|for|by|from|whose|that|who)\b"
)


def _named_as_asked(ctx: Context, order: Sequence[Sentence]) -> tuple[Span, Sentence] | None:
    """A name that says it is the kind of thing asked ("Which professorship…?":
    "Lucasian Professor of Mathematics"; "What university…?": "University of Notre
    Dame"), in the best sentences: its own words type it, no model needed."""
    m = _ASKED_NOUN.search(ctx.shape.question)
    if m is None:
        return None
    noun = m.group(1)
    if noun.lower() in STOP_WORDS or noun.lower() in AUXILIARIES:
        return None
    for s in order:
        for span in ctx.candidates(s):
            typed = any(shares_stem(w, noun) for w in re.findall(r"[\w'-]+", span.text))
            if typed and not folded_words(span.text) <= ctx.q_folded:
                return span, s
    return None


def _asks_nationality(shape: QuestionShape) -> bool:
    return shape.noun in ("country", "nationality", "nation") or "nation" in shape.relation


#: Relations that are events of a life: a sentence must state one to answer for it.
_EVENTS = frozenset({"birth", "death", "buri", "marri"})


def _cue_position(shape: QuestionShape, text: str, stems: frozenset[str] | None = None) -> int:
    """Where the question's relation (or ``stems``) is expressed in ``text`` (-1: nowhere)."""
    want = shape.cues if stems is None else stems
    for m in content_matches(text):
        if stem(m.group(0)) in want:
            return m.start()
    return -1


def _date_for(shape: QuestionShape, text: str, spans: list[Span], cue: int) -> Span | None:
    life = lifespan(text)
    if life is not None:
        if "death" in shape.relation:
            return life[1]
        if "birth" in shape.relation:
            return life[0]
    if re.search(r"\bwhat (exact )?(date|day)\b", shape.question, re.I):
        spans = [s for s in spans if (key := year_of(s.text)) is not None and key[2]]
        if not spans:
            return None  # "on what date": a day, not a bare year
    if cue >= 0:
        after = [s for s in spans if s.start >= cue]
        # a date written before the relation is another event's ("proposed in 1961")
        return after[0] if after else None
    return spans[0]


def _chain(ctx: Context, ranked: Sequence[Sentence], chosen: list[Sentence]) -> list[Sentence]:
    """A chain's answer shows both hops: the sentence in the hop's article (the one that
    answered, else its best by the outer relation) and the named article's sentence
    that leads to the hop ("…was the son of Paul Hamilton")."""
    hop_title = chosen[0].title if chosen else ctx.hops[0]
    if hop_title not in ctx.hops:
        return chosen
    if not chosen:
        outer = [
            s
            for s in ranked
            if s.title == hop_title
            and (_cue_position(ctx.shape, s.text, outer_relation(ctx, s)) >= 0 or lifespan(s.text))
        ]
        chosen = outer[:1]
    link = next((s for s in ranked if s.title in ctx.named and mentions(s.text, hop_title)), None)
    return chosen + ([link] if link is not None and link not in chosen else [])


# --------------------------------------------------------------------- support


#: A name in a question: capitalised words, with the lower-case particles names hold
#: between them ("Henriette of France", "Ludwig van Beethoven"); "and", commas and
#: other words end it. A capitalised word's lower-case hyphenated tail ("Lyric Street
#: Records-affiliated") is not part of the name.
_CAP = rf"{UPPER}[\w']*(?:-{UPPER}[\w']*)*"
_NAME = re.compile(rf"\b{_CAP}(?:\s+(?:(?:{NAME_PARTICLES})\s+)*{_CAP})*")
_NAME_WORD = re.compile(rf"\b{UPPER}[\w']+")
#: A question written in capitals word by word ("Who Died Later, A Or B?") has no runs
#: to read names from: above this share of capitalised words, each counts alone.
_HEADLINE_SHARE = 0.8


def _support(ctx: Context) -> float:
    return evidence_support(ctx.shape.question, [ev for _, ev in ctx.items if ev.of_the_topic])


def evidence_support(question: str, evidence: Sequence[Evidence]) -> float:
    """How much of the question the top evidence holds (0..1): the mean of two shares,
    the question's words found in the top five articles' text and titles, and its names
    (the first word aside) found there whole. A question about something the graph lacks
    keeps a name unmatched, whatever the words around it; counting names, not their
    words, keeps "Sigmund Jähn or Christer Fuglesang" from passing on "Christer" alone.
    """
    text_of: dict[str, str] = {}
    for ev in evidence:
        text_of[ev.title] = text_of.get(ev.title, "") + "\n" + ev.content
    top_titles = list(text_of)[:5]
    hay = spaced(" ".join(text_of[t] + " " + t for t in top_titles))
    question = POSSESSIVE.sub("", question)  # "Jansch's" is written "Jansch"
    qwords = [w for w in words(fold(question)) if w not in STOP_WORDS]
    if not qwords:
        return 0.0
    share = sum(f" {w} " in hay for w in qwords) / len(qwords)
    found: list[bool] = []
    caps = [w.group(0) for w in _NAME_WORD.finditer(question) if w.start() > 0]
    if len(caps) >= _HEADLINE_SHARE * max(1, len(question.split()) - 1):
        found = [spaced(w) in hay for w in caps]  # headline case: word by word
    else:
        for m in _NAME.finditer(question):
            name_words = [
                w.group(0) for w in _NAME_WORD.finditer(m.group(0)) if m.start() + w.start() > 0
            ]
            if name_words:
                found.append(all(spaced(w) in hay for w in name_words))
    names_share = sum(found) / len(found) if found else share
    return round((share + names_share) / 2, 4)


# --------------------------------------------------------------------- the reading


def _trim(sentences: list[Sentence], limit: int, keep: int = 1) -> list[Sentence]:
    """Answer sentences up to ``limit`` words; the first ``keep`` are always kept. A text
    is quoted once: an article may write one sentence twice ("Their son married an
    Armenian." in two sections), and a second copy says nothing new."""
    out: list[Sentence] = []
    seen: set[str] = set()
    used = 0
    for s in sentences:
        text = " ".join(s.text.split()).casefold()
        if text in seen:
            continue
        seen.add(text)
        n = len(s.text.split())
        if len(out) >= keep and used + n > limit:
            break
        out.append(s)
        used += n
    return out


def read_evidence(
    question: str | Question | QuestionShape,
    items: Sequence[tuple[int, Evidence]],
    *,
    max_words: int = MAX_ANSWER_WORDS,
    threshold: float = SUPPORT_THRESHOLD,
    sentences: SentenceRanker | None = None,
    spans: SpanRanker | None = None,
) -> OfflineReading:
    """Read numbered evidence for ``question`` (see the module docstring); ``sentences``
    orders the sentences shown (default: the committed model's order); ``spans`` chooses
    the short answer among the text's spans (default: none, the hand reader's pick; the
    agent hands its graph's, :attr:`kg_agent.pipeline.GraphComponents.spans`)."""
    if isinstance(question, Question):
        shape = question.shape
    else:
        shape = question if isinstance(question, QuestionShape) else analyse(question)
    ctx = Context(shape, items)
    if not ctx.sentences:
        return OfflineReading(shape, [], answerable=False, notes=["no evidence"])
    ranked = ctx.ranked()
    # the short answer is read in the hand-weighted order; what a person reads beside it
    # (or instead, with nothing in bold) in the learned one
    shown_order = (sentences or default_sentence_ranker()).order(ctx, ranked)
    support = _support(ctx)
    reading = OfflineReading(shape, [], support=support, answerable=support >= threshold)
    chooser = spans or _NO_SPAN_RANKER
    paths = kin_paths(shape.question) if shape.kind is AnswerKind.PERSON else ()
    # an infobox fact answers; one the fact ranker is not sure of is a candidate among
    # the text's spans, for the span model to weigh (it keeps the fact's reading when
    # it chooses the fact, or finds nothing better)
    fact_reading: OfflineReading | None = None
    fact: FactCandidate | None = None
    if _read_fact(ctx, reading, shown_order, max_words):
        alone = reading.shown or not chooser.active or bool(ctx.hops) or bool(paths)
        if alone or (fact := _fact_candidate(ctx, reading)) is None:
            return reading
        fact_reading = reading
        reading = OfflineReading(shape, [], support=support, answerable=support >= threshold)
    decided: tuple[str, tuple[Sentence, ...]] | None = None
    if paths:
        kin = relatives_of_relatives(ctx, paths)
        if kin is not None:
            name, basis, steps = kin
            decided = (name, basis)
            reading.notes.append("kinship: " + " → ".join(steps))
            reading.source = "kinship"
    if decided is not None:
        pass
    elif shape.kind is AnswerKind.CHOICE:
        chosen = choose(ctx)
        if chosen is not None:
            decided, reading.source = chosen
    elif shape.kind is AnswerKind.YES_NO:
        decided = yes_no(ctx)
        if decided is None and (decided := verify(ctx)) is not None:
            reading.source = "verified"
            # the claim is written in the subject's own sentence: the evidence answers,
            # whatever words of the question it lacks ("Chinese" of a Japanese art)
            reading.answerable = True
    else:
        decided = in_common(ctx)
    if fact_reading is not None and decided is not None:
        return fact_reading
    if decided is not None:
        reading.short_answer, basis = decided
        reading.short_cites = tuple(dict.fromkeys(s.n for s in basis))
        reading.sentences = list(dict.fromkeys(basis))
        reading.notes.append(f"compared: {shape.kind.value}")
        reading.source = reading.source or "compared"
        facts = {n: ev.fact for n, ev in ctx.items if ev.fact is not None}
        if shape.kind is AnswerKind.CHOICE and all(s.n in facts for s in basis):
            # each option's infobox fact: the graph states both values, however few of
            # the question's words the evidence holds ("became a US state")
            reading.source = "facts compared"
            reading.answerable = True
    elif shape.kind not in (AnswerKind.CHOICE, AnswerKind.YES_NO):
        order = ranked[:8]
        if ctx.hops:  # a chain: the answer is in the article the first hop leads to
            hop = [s for s in ranked if s.title in ctx.hops]
            # its sentences that express the outer relation (or give a lifespan) first; for
            # a place, the relation before a lifespan ("born in Liévin" says where, the
            # dates of a life do not)
            place = shape.kind is AnswerKind.PLACE

            def first(s: Sentence) -> tuple[bool, bool, bool]:
                cue = _cue_position(shape, s.text, outer_relation(ctx, s)) >= 0
                life = bool(lifespan(s.text))
                # a lifespan in the article's first sentence is its subject's; one
                # further on may be a term of office ("president (1994–2000)")
                lead = life and s.position == 0
                if place:
                    return (not cue, not life, not lead)
                if shape.kind is AnswerKind.DATE:
                    return (not (cue or life), not lead, False)
                return (not cue, False, False)  # a spouse is not in the dates of a life

            # the hop named nearest the relation first ("directed by Tim McCann and
            # starring Nick Krause")
            hop.sort(key=lambda s: (first(s), ctx.hops.index(s.title)))
            # the hops hold the answer, or the evidence does not: another article's
            # span of the kind asked would be a guess, and the named one's are its own
            # facts ("Julia Wendt was born in Apple River" is not her husband's birth)
            order = hop
            reading.notes.append("hops: " + ", ".join(ctx.hops))
        events = shape.relation & _EVENTS
        found = _named_otherwise(ctx, ranked[:12])  # "what does X stand for": its other name
        if found is not None:
            reading.notes.append("named otherwise")
            reading.source = "alias"
            reading.answerable = True  # the subject's own sentence names it
        elif shape.kind is AnswerKind.ENTITY and (typed := _named_as_asked(ctx, order[:3])):
            found = typed  # a name that says it is what was asked ("… Professor of …")
            reading.notes.append("named as asked")
            reading.source = "typed"
        for s in order if found is None else ():
            if events and not (_cue_position(shape, s.text, events) >= 0 or lifespan(s.text)):
                continue  # "where was X born": only a sentence about a birth answers
            span = _pick(ctx, s)
            if span is not None:
                found = span, s
                reading.source = "span"
                break
        hand = None if found is None else (found[0].text.strip(" ,;:"), found[1])
        # a chain is read through its hop (above), a relative of a relative article by
        # article: the model, fitted on questions about one article, picks the hop
        # itself ("the director of X" → the director)
        chained = bool(ctx.hops) or bool(paths)
        choice = None if chained else chooser.choose(ctx, ranked, hand, reading.source, fact)
        if fact_reading is not None and (choice is None or choice.fact or not reading.answerable):
            return fact_reading
        if choice is not None:  # the learned model chooses among every span, the hand's too
            reading.short_answer = _year_asked(shape, choice.text)
            reading.short_cites = (choice.sentence.n,)
            reading.confidence = choice.confidence
            reading.show_at = chooser.show_at
            reading.source = "ranked"
            # its sentence first (a person sees where the candidate comes from), and,
            # unsure, the next candidates' and the reader's own pick's after it
            reading.sentences = [choice.sentence]
            reading.others = [(_year_asked(shape, t), (o.n,)) for t, o in choice.others]
            if choice.confidence < chooser.show_at:
                more = [o for _, o in choice.others] + ([hand[1]] if hand is not None else [])
                said = {(choice.sentence.n, choice.sentence.position)}
                for s in more:
                    if (s.n, s.position) not in said:
                        said.add((s.n, s.position))
                        reading.sentences.append(s)
        elif hand is not None:
            reading.short_answer = hand[0]
            reading.short_cites = (hand[1].n,)
            reading.sentences = [hand[1]]
        if ctx.hops:
            reading.sentences = _chain(ctx, ranked, reading.sentences)
    shown = {(s.n, s.position) for s in reading.sentences}
    rest = [s for s in shown_order if (s.n, s.position) not in shown]
    # a chain's two hops are shown together while they fit half again the budget; a
    # choice shows both sentences it compared, however long: one option's is no reason,
    # and a person judges a choice not in bold by the two
    pair = sum(len(s.text.split()) for s in reading.sentences[:2])
    compared = shape.kind is AnswerKind.CHOICE and reading.short_answer is not None
    keep = 2 if len(reading.sentences) >= 2 and (compared or pair <= max_words * 3 // 2) else 1
    reading.sentences = _trim(reading.sentences + rest, max_words, keep)
    if not reading.answerable:
        reading.short_answer = None
        reading.short_cites = ()
        reading.others = []
    if reading.short_answer is not None:
        reading.confidence = _confidence(ctx, reading)
    framed = shape.kind in (AnswerKind.CHOICE, AnswerKind.YES_NO)
    if not reading.shown and not framed and reading.source != "kinship":
        # nothing in bold: three sentences, however long: a chain's hops, else the unsure
        # candidate's own, then the best others in the learned order; a reader then finds
        # the answer in them more often (docs/BENCHMARKS.md, "Answers a person can trust")
        if ctx.hops:
            lead = reading.sentences[:keep]
        elif reading.short_answer is not None:
            lead = reading.sentences[: UNSURE_SENTENCES if reading.source == "ranked" else 1]
        else:
            lead = []
        taken = {(s.n, s.position) for s in lead}
        more = [s for s in shown_order if (s.n, s.position) not in taken]
        reading.sentences = _trim(lead + more, max_words, UNSURE_SENTENCES)
    return reading


def _read_fact(
    ctx: Context, reading: OfflineReading, ranked: Sequence[Sentence], max_words: int
) -> bool:
    """An infobox fact that answers the question (the fact retriever's, ranked first):
    its answer, its confidence, its statement first and the text's best sentences after.
    False when there is none (or the question compares or asks yes or no)."""
    if ctx.shape.kind in (AnswerKind.CHOICE, AnswerKind.YES_NO):
        return False
    facts = [(n, ev.fact) for n, ev in ctx.items if ev.fact is not None]
    if not facts:
        return False
    fact = max((f for _, f in facts), key=lambda f: f.hop)
    if fact.searched and not reading.answerable:
        # a fact of an article only the search found answers where the text holds the
        # question (else "mozart birthplace" takes a catalogue's)
        return False
    reading.short_answer = fact.answer
    reading.short_cites = tuple(dict.fromkeys(m for m, _ in facts))
    said = {fold(fact.answer)}
    for m, f in facts:  # the other facts found, as their retriever ranked them
        if fold(f.answer) not in said and len(reading.others) < RUNNERS_UP:
            said.add(fold(f.answer))
            reading.others.append((f.answer, (m,)))
    reading.confidence = fact.confidence
    if fact.show_at is not None:
        reading.show_at = fact.show_at
    reading.source = "fact"
    reading.answerable = True
    stated = [s for s in ctx.sentences if s.n in reading.short_cites]
    stated.sort(key=lambda s: reading.short_cites.index(s.n))
    rest = [s for s in ranked if s.n not in reading.short_cites]
    # not in bold: the fact's line and the best sentences after it, three in all however
    # long, as for an unsure answer from the text (a box's line alone is a guess to check)
    keep = len(stated) if reading.shown else max(len(stated), UNSURE_SENTENCES)
    reading.sentences = _trim(stated + rest, max_words, keep)
    reading.notes.append(
        f"fact: {fact.subject} {fact.key}" + (" (two hops)" if fact.hop > 1 else "")
    )
    return True


def _fact_candidate(ctx: Context, reading: OfflineReading) -> FactCandidate | None:
    """The answer of the fact a reading gave, as a candidate beside the text's spans:
    its line among the sentences; None for a fact of two hops (a chain, which the
    model was not fitted on) or one with no line."""
    facts = [(n, ev.fact) for n, ev in ctx.items if ev.fact is not None]
    at, fact = max(facts, key=lambda nf: nf[1].hop)
    line = next((s for s in ctx.sentences if s.n == at), None)
    if line is None or fact.hop > 1 or reading.short_answer is None:
        return None
    return FactCandidate(reading.short_answer, (line.n, line.position), reading.confidence)


def _confidence(ctx: Context, reading: OfflineReading) -> float:
    """How sure a short answer read from text is: the measured share of right answers of
    its source and kind (:data:`SOURCE_CONFIDENCE`); a choice between two infobox facts
    is as sure as the surer fact match, at most :data:`FACTS_COMPARED`."""
    if reading.source == "ranked":  # the span model's calibrated probability
        return reading.confidence
    if reading.source == "facts compared":
        cited = [ev.fact.confidence for n, ev in ctx.items if ev.fact and n in reading.short_cites]
        return min([FACTS_COMPARED, *cited])
    kind = ctx.shape.kind.value
    table = SOURCE_CONFIDENCE
    found = table.get((reading.source, kind), table.get((reading.source, ""), 0.25))
    return found

"""Which span of the evidence answers a question: candidates, features, one learned model.

The hand reader (:func:`kg_agent.answering.reader.read_evidence`) finds a short answer in
the text by rules per question shape; on articles it was not written against, that
answer is right one time in four and never sure enough for bold. Here every span of the
sentences the reading ranks best is a candidate, as a pretrained pipeline finds them
(spaCy's named entities with their labels, and noun phrases:
:mod:`kg_agent.language.parser`), together with the reader's own typed spans and its
pick, and the answer of an infobox fact the fact ranker found but was not sure enough of
to show in bold (with its confidence: a span that writes the same words is the same
candidate, so the text and the box agree in one). Each is described by features
(:data:`FEATURES`): the question's expected kind crossed with the candidate's label, the
question's words near it and at its head in the parse, whether it names the kind of thing
asked ("which railway": "Benguela Railway"), whether the question or the
sentence's subject already holds it, how often the top sentences repeat it, how the
reader found its pick, its sentence's own signals and the embedder's cosine of that
sentence to the question. A conditional logit (a softmax
over one question's candidates) fitted by ``scripts/train_span_ranker.py`` on the plain
questions of the English sample scores them; its best candidate's share, calibrated on
held-out folds (Platt), is the answer's confidence, and the answer is shown in bold from
:attr:`SpanWeights.show_at`, where held-out answers were right nine times in ten by a
lower bound of that precision (none yet: ``docs/answers.md``).

Questions read hop by hop (a chain, a relative of a relative) are left to the reader:
fitted on questions about one article, the model picks the hop itself.

The weights are a small JSON file (:data:`DEFAULT_PATH`) that the script reproduces;
scoring is numpy alone.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from kg_agent.answering.evidence import Context, Sentence, base_title, folded_words
from kg_agent.answering.linear import LinearWeights
from kg_agent.answering.sentence_ranker import FEATURES as SENTENCE_FEATURES
from kg_agent.answering.sentence_ranker import sentence_features
from kg_agent.language import parser
from kg_agent.language.shape import AUXILIARIES, AnswerKind, shares_stem, stem
from kg_agent.language.tokens import STOP_WORDS, fold

__all__ = [
    "DEFAULT_PATH",
    "FEATURES",
    "FactCandidate",
    "SpanCandidate",
    "SpanChoice",
    "SpanRanker",
    "SpanWeights",
    "default_span_weights",
    "span_candidates",
]

log = logging.getLogger(__name__)

DEFAULT_PATH = Path(__file__).resolve().parent.parent / "data" / "span_ranker.json"
#: The sentences whose spans are candidates: the best of the hand order (on the plain
#: set's text questions a span of the best five matches the gold for 191 of 223; of the
#: best three, 179).
TOP_SENTENCES = 5
_MAX_WORDS = 10

#: The question kinds and candidate label groups whose pairs are features: the model
#: learns which labels answer which kind ("when" → DATE, "who" → PERSON).
_KINDS = ("person", "place", "date", "number", "entity")
_GROUPS = ("person", "place", "org", "date", "number", "other", "none")
_LABEL_GROUP = {
    "PERSON": "person",
    "GPE": "place",
    "LOC": "place",
    "FAC": "place",
    "ORG": "org",
    "DATE": "date",
    "TIME": "date",
    "CARDINAL": "number",
    "QUANTITY": "number",
    "MONEY": "number",
    "PERCENT": "number",
    "ORDINAL": "number",
}
#: the sentence ranker's features a candidate's sentence lends it
_SENTENCE: tuple[str, ...] = (
    "overlap_share",
    "title_share",
    "relation",
    "evidence_rank",
    "position",
    "bridge",
    "named",
    "fact",
    "covered",
)
_SENTENCE_AT = tuple(SENTENCE_FEATURES.index(f) for f in _SENTENCE)

#: What each candidate is described by, in the order of the weights.
FEATURES: tuple[str, ...] = (
    *(f"sentence_{f}" for f in _SENTENCE),  # its sentence's signals (the sentence ranker's)
    "sentence_rank",  # 1 / (1 + its sentence's place in the hand order)
    "sentence_similarity",  # the embedder's cosine of its sentence and the question
    "most_similar",  # its sentence is the top one nearest the question (by that cosine)
    "hand_pick",  # the hand reader's short answer, and how it found it:
    "hand_alias",  # another name the subject's article gives ("what does X stand for")
    "hand_typed",  # a name that says it is what was asked ("… Professor of …")
    "fact_answer",  # the answer of the infobox fact the fact ranker found (not in bold)
    "fact_confidence",  # the fact ranker's calibrated probability for it
    "typed",  # one of the reader's own spans of the kind asked
    "entity",  # a named entity of the pipeline
    "noun_phrase",  # a noun phrase of the pipeline
    "in_question",  # the share of its words the question writes
    "echo",  # the question writes every content word of it (it repeats what was asked)
    "names_asked",  # a word of it names what the question asks for ("which railway": "… Railway")
    "in_title",  # its words are all in its sentence's article title (the subject)
    "known_title",  # it is the title of an evidence article
    "near",  # 1 / (1 + distance in characters / 10) to the question's nearest word
    "near_words",  # the question's words within 50 characters of it
    "window",  # the question's words (by rarity) within 8 words of it, as a share
    "window_relation",  # the question's relation words within 8 words of it
    "head_asked",  # its head in the parse, or the head's head, is a word of the question
    "subject",  # it is a subject in the parse
    "object",  # an object, a preposition's object, an attribute or an apposition
    "after_cue",  # it follows the question's relation word in its sentence
    "repeated",  # the top sentences writing it, over their number
    "words",  # its words, up to 6, over 6
    "capitals",  # the share of its words that are capitalised
    "digits",  # it holds a digit
    "opens",  # it opens its sentence
    *(f"{k}~{g}" for k in _KINDS for g in _GROUPS),  # kind asked x label found
)
_AT = {f: i for i, f in enumerate(FEATURES)}
_WORD = re.compile(r"[\w'’-]+")


@dataclass(slots=True)
class SpanCandidate:
    """One candidate answer: its text as its first sentence (in the hand order) writes
    it, that sentence, and its features."""

    text: str
    sentence: Sentence
    start: int
    end: int
    x: np.ndarray = field(repr=False)
    fact: bool = False  # it is the infobox fact's answer


@dataclass(frozen=True, slots=True)
class SpanChoice:
    """The model's best candidate and its calibrated confidence; ``others`` the next best
    (their texts and sentences, best first), for a model that writes the answer to weigh."""

    text: str
    sentence: Sentence
    confidence: float
    others: tuple[tuple[str, Sentence], ...] = ()
    fact: bool = False  # the infobox fact's answer was chosen


@dataclass(frozen=True)
class SpanWeights(LinearWeights):
    """A conditional logit over standardised :data:`FEATURES` (a softmax over one
    question's candidates: which is the answer), with the Platt calibration of its best
    candidate's share and the confidence from which its answer is shown in bold."""

    FEATURES: ClassVar[tuple[str, ...]] = FEATURES
    MODEL: ClassVar[str] = "conditional logit: which candidate is a gold answer"

    a: float = 1.0
    b: float = 0.0
    show_at: float = 1.01  # above any confidence: nothing in bold until calibrated

    def confidence(self, z: np.ndarray) -> float:
        """How sure the best of candidates scored ``z`` is: the model's share of the
        choice (a softmax), calibrated (Platt) on its log-odds."""
        return platt(self.a, self.b, best_share(z))

    def _more_json(self) -> dict[str, Any]:
        return {"calibration": [round(self.a, 6), round(self.b, 6)], "show_at": self.show_at}

    @classmethod
    def _more_fields(cls, data: dict[str, Any]) -> dict[str, Any]:
        a, b = data.get("calibration", (1.0, 0.0))
        return {"a": float(a), "b": float(b), "show_at": float(data.get("show_at", 1.01))}


def best_share(z: np.ndarray) -> float:
    """The softmax share of the best of scores ``z``, as log-odds (clipped)."""
    shift = z - z.max()
    share = 1.0 / float(np.exp(shift).sum())
    share = min(max(share, 1e-6), 1 - 1e-6)
    return math.log(share / (1 - share))


def platt(a: float, b: float, t: float) -> float:
    return 1.0 / (1.0 + math.exp(-(a * t + b)))


def _group(label: str | None) -> str:
    if label is None:
        return "none"
    return _LABEL_GROUP.get(label, "other")


def _kind(ctx: Context) -> str | None:
    kind = ctx.shape.kind
    if kind in (AnswerKind.CHOICE, AnswerKind.YES_NO):
        return None
    return str(kind.value)


@dataclass(frozen=True, slots=True)
class FactCandidate:
    """An infobox fact's answer as a candidate: its words, the fact's line among the
    reading's sentences (its evidence number and position), the fact ranker's confidence."""

    text: str
    line_at: tuple[int, int]
    confidence: float


@dataclass(slots=True)
class _Found:
    """A candidate while the top sentences are read: where first written, what found it."""

    text: str
    rank: int  # its first sentence's place among the top ones
    sentence: Sentence
    start: int
    end: int
    typed: bool = False
    entity: bool = False
    chunk: bool = False
    hand: bool = False
    fact: float | None = None  # the fact ranker's confidence, for the fact's answer
    label: str | None = None
    sentences: set[int] = field(default_factory=set)
    token: Any = None  # the span's root in the parse


def _key(text: str) -> str:
    return " ".join(fold(w) for w in _WORD.findall(text) if w.lower() not in ("the", "a", "an"))


def span_candidates(
    ctx: Context,
    ranked: Sequence[Sentence],
    hand: tuple[str, Sentence] | None = None,
    docs: Sequence[Any] | None = None,
    similarity: Sequence[float] | None = None,
    hand_source: str = "",
    fact: FactCandidate | None = None,
) -> list[SpanCandidate]:
    """The candidates of the best :data:`TOP_SENTENCES` of ``ranked`` (the hand order),
    with the hand reader's pick ``hand``; ``docs`` are those sentences parsed (None:
    the reader's typed spans only), ``similarity`` their embedder cosines to the question
    (None: no vectors); ``hand_source`` how the reader found its pick ("alias", "typed",
    "span"); ``fact`` the answer of an infobox fact the fact ranker
    found but was not sure of (a span that writes the same words is the same candidate:
    the text agrees with the fact)."""
    top = list(ranked[:TOP_SENTENCES])
    found: dict[str, _Found] = {}

    def add(text: str, rank: int, s: Sentence, start: int, end: int) -> _Found | None:
        text = text.strip(" ,;:.")
        words = text.split()
        if not words or len(words) > _MAX_WORDS or not any(c.isalnum() for c in text):
            return None
        key = _key(text)
        if not key or all(w in STOP_WORDS for w in key.split()):
            return None
        f = found.get(key)
        if f is None:
            f = found[key] = _Found(text, rank, s, start, end)
        f.sentences.add(rank)
        return f

    for rank, s in enumerate(top):
        doc = docs[rank] if docs is not None and rank < len(docs) else None
        for sp in ctx.candidates(s):
            if (f := add(sp.text, rank, s, sp.start, sp.end)) is not None:
                f.typed = True
        if doc is None:
            continue
        for ent in doc.ents:
            if (f := add(ent.text, rank, s, ent.start_char, ent.end_char)) is not None:
                f.entity = True
                f.label = f.label or ent.label_
                f.token = f.token if f.token is not None else ent.root
        for chunk in doc.noun_chunks:
            if chunk.root.pos_ == "PRON":
                continue
            if (f := add(chunk.text, rank, s, chunk.start_char, chunk.end_char)) is not None:
                f.chunk = True
                f.token = f.token if f.token is not None else chunk.root
    if hand is not None:
        text, s = hand
        rank = next(
            (i for i, t in enumerate(top) if (t.n, t.position) == (s.n, s.position)), len(top)
        )
        at = s.text.find(text)
        f = add(text, rank, s, max(0, at), max(0, at) + len(text))
        if f is not None:
            f.hand = True
    if fact is not None:
        rank = next((i for i, t in enumerate(top) if (t.n, t.position) == fact.line_at), len(top))
        line = next(s for s in ctx.sentences if (s.n, s.position) == fact.line_at)
        if (f := add(fact.text, rank, line, 0, 0)) is not None:
            f.fact = fact.confidence
    if not found:
        return []
    rows = sentence_features(ctx)
    row_of = {(s.n, s.position): i for i, s in enumerate(ctx.sentences)}
    kind = _kind(ctx)
    q_words = folded_words(ctx.shape.question)
    asked = asked_nouns(ctx.shape.question)
    known = {fold(base_title(t)) for t in ctx.text_of}
    out = []
    for f in found.values():
        x = np.zeros(len(FEATURES))
        row = rows[row_of[(f.sentence.n, f.sentence.position)]]
        for j, i in enumerate(_SENTENCE_AT):
            x[j] = row[i]
        words = _WORD.findall(f.text)
        folded = [fold(w) for w in words]
        x[_AT["sentence_rank"]] = 1.0 / (1 + f.rank)
        if similarity is not None and f.rank < len(similarity):
            x[_AT["sentence_similarity"]] = similarity[f.rank]
            x[_AT["most_similar"]] = float(similarity[f.rank] >= max(similarity) - 1e-6)
        x[_AT["hand_pick"]] = float(f.hand)
        if f.hand and f"hand_{hand_source}" in _AT:
            x[_AT[f"hand_{hand_source}"]] = 1.0
        if f.fact is not None:
            x[_AT["fact_answer"]] = 1.0
            x[_AT["fact_confidence"]] = f.fact
        x[_AT["typed"]] = float(f.typed)
        x[_AT["entity"]] = float(f.entity)
        x[_AT["noun_phrase"]] = float(f.chunk)
        x[_AT["in_question"]] = sum(w in q_words for w in folded) / max(1, len(folded))
        content = [w for w in folded if w not in STOP_WORDS]
        x[_AT["echo"]] = float(bool(content) and all(w in q_words for w in content))
        own = folded_words(base_title(f.sentence.title))
        x[_AT["names_asked"]] = float(  # and names more than the question and its subject do
            bool(asked)
            and any(shares_stem(w, a) for w in folded for a in asked)
            and not set(folded) <= q_words | own
        )
        x[_AT["in_title"]] = float(bool(own) and set(folded) <= own)
        x[_AT["known_title"]] = float(fold(f.text) in known)
        near, near_words = _nearness(ctx, f)
        x[_AT["near"]], x[_AT["near_words"]] = near, near_words
        x[_AT["window"]], x[_AT["window_relation"]] = _window(ctx, f)
        x[_AT["head_asked"]] = _head_asked(ctx, f.token)
        dep = f.token.dep_ if f.token is not None else ""
        x[_AT["subject"]] = float(dep in ("nsubj", "nsubjpass"))
        x[_AT["object"]] = float(dep in ("dobj", "pobj", "attr", "appos"))
        x[_AT["after_cue"]] = _after_cue(ctx, f)
        x[_AT["repeated"]] = len(f.sentences) / max(1, len(top))
        x[_AT["words"]] = min(len(words), 6) / 6
        x[_AT["capitals"]] = sum(w[:1].isupper() for w in words) / max(1, len(words))
        x[_AT["digits"]] = float(any(c.isdigit() for c in f.text))
        x[_AT["opens"]] = float(f.start == 0)
        if kind is not None:
            group = (
                _group(f.label) if f.label else ("date" if kind == "date" and f.typed else "none")
            )
            x[_AT[f"{kind}~{group}"]] = 1.0
        out.append(
            SpanCandidate(f.text, f.sentence, f.start, f.end, np.round(x, 4), f.fact is not None)
        )
    return out


#: Words after which the asked thing is named by what follows ("what type of clock")
_OF_WHAT = frozenset({"type", "kind", "sort", "form", "name", "branch", "part"})


def asked_nouns(question: str) -> tuple[str, ...]:
    """The words of the phrase that opens with "which" or "what" and says what is asked for
    ("which angolan railway goes …": angolan, railway, goes), folded: up to four words,
    to the first function word ("what type of atomic clocks …" reads on past "type of").
    A candidate that writes one of them names itself as that kind of thing."""
    words = [w.lower() for w in _WORD.findall(question)]
    at = next((i for i, w in enumerate(words[:5]) if w in ("which", "what")), None)
    if at is None:
        return ()
    out: list[str] = []
    j = at + 1
    while j < len(words) and len(out) < 4:
        w = words[j]
        if w == "of" and out and out[-1] in _OF_WHAT:
            j += 1
            continue
        if w in STOP_WORDS or w in AUXILIARIES:
            break
        out.append(fold(w))
        j += 1
    return tuple(out)


def _stem_hits(ctx: Context, text: str) -> list[tuple[int, str]]:
    """Where ``text`` writes the question's content words: (offset, stem)."""
    return [
        (m.start(), st)
        for m in _WORD.finditer(text)
        if m.group(0).lower() not in STOP_WORDS and (st := stem(m.group(0))) in ctx.q_stems
    ]


def _nearness(ctx: Context, f: _Found) -> tuple[float, float]:
    hits = [(i, st) for i, st in _stem_hits(ctx, f.sentence.text) if not f.start <= i < f.end]
    if not hits:
        return 0.0, 0.0
    dist = [f.start - i if i < f.start else i - f.end for i, _ in hits]
    near = 1.0 / (1.0 + min(dist) / 10.0)
    close = {st for (_, st), d in zip(hits, dist, strict=True) if d <= 50}
    return near, float(len(close))


def _window(ctx: Context, f: _Found, width: int = 8) -> tuple[float, float]:
    """The question's words written within ``width`` words of the candidate (not in it),
    weighted by rarity as a share of the question's; and its relation words there."""
    tokens = list(_WORD.finditer(f.sentence.text))
    inside = [i for i, m in enumerate(tokens) if f.start <= m.start() < f.end]
    if not inside:
        return 0.0, 0.0
    lo, hi = max(0, inside[0] - width), inside[-1] + width + 1
    near = {
        stem(m.group(0))
        for i, m in enumerate(tokens[lo:hi], start=lo)
        if i not in inside and m.group(0).lower() not in STOP_WORDS
    }
    asked = math.fsum(ctx.idf.get(w, 0.0) for w in ctx.q_stems) or 1.0
    share = math.fsum(ctx.idf.get(w, 0.0) for w in ctx.q_stems & near) / asked
    return share, float(len(ctx.shape.cues & near))


def _head_asked(ctx: Context, token: Any) -> float:
    if token is None:
        return 0.0
    head = token.head
    for _ in range(2):
        if head is None or head is token:
            return 0.0
        if stem(head.text) in ctx.q_stems or stem(head.text) in ctx.shape.cues:
            return 1.0
        token, head = head, head.head
    return 0.0


def _after_cue(ctx: Context, f: _Found) -> float:
    cues = ctx.shape.cues
    if not cues:
        return 0.0
    for m in _WORD.finditer(f.sentence.text):
        if stem(m.group(0)) in cues:
            return float(f.start >= m.end())
    return 0.0


#: Sees each reading's question and its candidates (training).
Observer = Callable[[str, Sequence[SpanCandidate]], None]


#: How many candidates after the best a choice names (:attr:`SpanChoice.others`).
RUNNERS_UP = 2

#: The embedder's vectors of a few texts (rows, unit length).
Embed = Callable[[list[str]], np.ndarray]


class SpanRanker:
    """Chooses a reading's short answer among its spans: ``weights`` (None: the hand
    reader's pick stands); ``observer`` sees every reading's candidates (how the training
    script and ``answers --cv`` read them); ``models`` the spaCy models tried (an empty
    tuple: none); ``embed`` the embedder, for the sentences' nearness to the question
    (None: a graph without vectors). One per graph's components: cross-validation swaps
    its weights."""

    def __init__(
        self,
        weights: SpanWeights | None = None,
        *,
        models: tuple[str, ...] = parser.MODELS,
        embed: Embed | None = None,
    ) -> None:
        self.weights = weights
        self.models = models
        self.embed = embed
        self.observer: Observer | None = None

    @property
    def active(self) -> bool:
        """Whether readings are handed to it: it has weights, or an observer reads them."""
        return self.weights is not None or self.observer is not None

    @property
    def show_at(self) -> float:
        """The confidence from which the chosen span is shown in bold."""
        return self.weights.show_at if self.weights is not None else SpanWeights.show_at

    def choose(
        self,
        ctx: Context,
        ranked: Sequence[Sentence],
        hand: tuple[str, Sentence] | None,
        hand_source: str = "",
        fact: FactCandidate | None = None,
    ) -> SpanChoice | None:
        """The best candidate with its confidence (``hand``: the reader's pick, found by
        ``hand_source``; ``fact``: an infobox fact's answer the fact ranker was unsure of);
        None without weights, a kind of span to find, or candidates."""
        if not self.active or _kind(ctx) is None:
            return None
        top = [s.text for s in ranked[:TOP_SENTENCES]]
        docs = parser.parse(top, self.models) if self.models else None
        similarity = None
        if self.embed is not None and top:
            try:
                vectors = np.asarray(self.embed([ctx.shape.question, *top]), dtype=np.float64)
            except Exception as exc:  # the answer without the cosines, never no answer
                log.warning("span ranker: no sentence vectors (%s: %s)", type(exc).__name__, exc)
            else:
                similarity = [round(float(v), 4) for v in vectors[1:] @ vectors[0]]
        found = span_candidates(ctx, ranked, hand, docs, similarity, hand_source, fact)
        if self.observer is not None:
            self.observer(ctx.shape.question, found)
        if self.weights is None or not found:
            return None
        z = self.weights.scores(np.vstack([c.x for c in found]))
        best = int(np.argmax(z))  # ties: the first found (the better sentence)
        c = found[best]
        seen = {_key(c.text)}
        others: list[tuple[str, Sentence]] = []
        for i in np.argsort(-z, kind="stable"):
            o = found[int(i)]
            if len(others) < RUNNERS_UP and _key(o.text) not in seen:
                seen.add(_key(o.text))
                others.append((o.text, o.sentence))
        confidence = self.weights.confidence(z)
        return SpanChoice(c.text, c.sentence, confidence, tuple(others), c.fact)


@lru_cache(maxsize=1)
def default_span_weights() -> SpanWeights | None:
    """The committed weights (read once per process); None before any were trained, or
    when they were fitted on other features than this code's (a feature added and the
    model not yet refitted by ``scripts/train_span_ranker.py``, which reads the
    candidates without them): the reader's own pick answers, with a warning."""
    if not DEFAULT_PATH.exists():
        return None
    try:
        return SpanWeights.load(DEFAULT_PATH)
    except ValueError:
        log.warning(
            "span ranker off: %s was fitted on other features than this version's "
            "(refit it: scripts/train_span_ranker.py)",
            DEFAULT_PATH,
        )
        return None

"""Answers from infobox facts: the question's entity, the key its relation names, the value.

Most questions people type about a subject ask what its infobox states ("What is the
capital of Alabama?", "Who was Ayn Rand married to?"). :class:`FactRetriever` reads the
question once more than the text retrievers do:

1. its **topic entities**: the articles the question names (the pipeline's linking);
2. its **relation words**: the words left when the names and the question's frame are
   taken out ("capital", "married"), each with the key words it means
   (:mod:`kg_agent.language.relations`), and, when an embedder is given, the
   similarity of the relation phrase to a key's name in words;
3. **candidates**: every fact of the entity; a fact of the article one of its facts
   links to ("the director of X" → his birth place: two hops); and a fact of an article
   whose fact names the entity ("the country whose capital is Luanda" → its currency).
   A chain must explain a relation word with each of its two keys. When no key of
   these explains a word of the relation, the facts of the first articles the text
   search found that the question does not name, each key explaining one ("angola's
   military reserve" is a fact of Angolan Armed Forces): ranked by the same model,
   calibrated apart (their best is less often right), and an answer only where the
   text holds the question (:attr:`~kg_agent.retrieval.base.FactStatement.searched`).

Each candidate is described by the signals the rules used to weigh by hand (how many
relation words its key explains, whether its value is of the kind asked, the embedder's
similarity of the question to "topic + key"…) and ordered by one learned model,
:mod:`kg_agent.retrieval.fact_ranker`, whose calibrated probability is the confidence.

The best candidate, when the model gives it at least ``use_at``, becomes fact evidence
(cited like a section: "Alabama — infobox: capital") carrying a
:class:`~kg_agent.retrieval.base.FactStatement` with the short answer, its confidence and
the model's bold threshold. Otherwise the text retrievers answer as before.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass

import numpy as np

from kg_agent.language.question import Question, as_question
from kg_agent.language.relations import KIND_KEY_WORDS, key_label, key_terms, relation_terms
from kg_agent.language.shape import AnswerKind
from kg_agent.language.spans import dates, duration
from kg_agent.language.tokens import content_tokens, content_words, fold
from kg_agent.retrieval.base import (
    Evidence,
    FactStatement,
    Query,
    RetrievalResult,
    Retriever,
    score_offset,
)
from kg_agent.retrieval.fact_ranker import FEATURES, FactRanker, default_ranker
from kg_agent.retrieval.fact_rows import (
    Keyed,
    answer_echo,
    fact_years,
    group_facts,
    names_subject,
    row_labels,
    short_value,
)
from kg_agent.store import FactRow, GraphReader

__all__ = ["FactCandidate", "FactRetriever", "WithFacts", "short_value"]

#: Relation words that name the answer's type ("which country") more than a key: a key
#: that explains them counts half.
_TYPE_WORDS = frozenset(
    [
        "country",
        "city",
        "state",
        "town",
        "place",
        "film",
        "movie",
        "book",
        "novel",
        "person",
        "year",
        "date",
        "mission",
        "group",
        "language",
    ]
)
#: Verbs that say how a thing came to be more than which fact is asked: beside a noun
#: ("Who wrote the *music*…?") they count half.
_VERBS = frozenset(
    [
        "wrote",
        "written",
        "made",
        "created",
        "produced",
        "composed",
        "designed",
        "directed",
        "founded",
        "built",
    ]
)
_EMBED_MATCH = 0.55  # a relation phrase and a key name this similar: a partial match
_MAX_CACHED_LABELS = 50_000  # key names and "topic key" texts whose vectors are kept
_MAX_HOPS_FROM = 12  # link items followed from an entity's best-matching facts
#: The text search's first articles (of those the question does not name) whose facts
#: are the candidates when the topics' explain nothing asked: the question may ask the
#: box of an article it does not name ("angola's military reserve" is Angolan Armed
#: Forces')
FOUND_ARTICLES = 3
#: The text search's articles, or what gives them once the search is done.
Found = Sequence[str] | Callable[[], Sequence[str]]

#: The noun of what a question of a kind asks: "where was she born" asks a birth
#: *place*, which its relation phrase ("born") does not say and a key name does.
_KIND_NOUN: dict[AnswerKind, str] = {
    AnswerKind.PLACE: "place",
    AnswerKind.PERSON: "person",
    AnswerKind.DATE: "date",
    AnswerKind.NUMBER: "number",
}

#: What the question asks (its answer kind) → item kinds and target article kinds that
#: fit it: (literal kinds, article kinds).
_FITS: dict[AnswerKind, tuple[frozenset[str], frozenset[str]]] = {
    AnswerKind.PLACE: (frozenset(["text"]), frozenset(["place"])),
    AnswerKind.PERSON: (frozenset(["text"]), frozenset(["person", "organisation"])),
    AnswerKind.DATE: (frozenset(["date", "year"]), frozenset()),
    AnswerKind.NUMBER: (frozenset(["number"]), frozenset()),
}


@dataclass(frozen=True, slots=True)
class FactCandidate:
    """One way a question could be answered from facts: ``rows`` are the answering
    fact's items (of ``subject``'s ``key``); ``via`` the fact followed to reach it."""

    subject: str
    key: str
    rows: tuple[FactRow, ...]
    via: tuple[FactRow, ...]
    coverage: float
    fit: float
    score: float  # the fact ranker's score (a logit): candidates are ordered by it
    #: one of the facts of the articles the text search found, not of the topics'
    searched: bool = False

    @property
    def hop(self) -> int:
        return 2 if self.via else 1


#: an option's facts grouped (article, sub-box, key) → items, and the year the box
#: gives each (:func:`fact_years`): what a choice compares
_Box = tuple[dict[tuple[str, str, str], list[FactRow]], dict[tuple[str, str, str], int]]
_EXTRA_WORD = 0.05  # a key's word the question does not ask, off its score
#: threads a query engine's fact search runs in, beside the text search (``serve``
#: answers several questions at once)
_FACT_THREADS = 4
_RECENT = 0.02  # the score a fact of this year gains over one of long ago (ties only)


def _means(means: Sequence[str], key: str, raw_key: str) -> bool:
    """Whether a key is one of the key words a relation word means (by the table)."""
    terms = key_terms(key, raw_key)
    return any(m in terms or m in key for m in means)


def _unasked_words(rel: list[tuple[str, tuple[str, ...]]], label: str) -> int:
    """The words of a key's name (``label``) that no relation word means (units and
    numbers aside): "density" of ``population_density_km2`` for "How many people…?"."""
    asked = {m for _, means in rel for m in means}
    return sum(1 for w in label.split() if len(w) > 2 and not any(m in w or w in m for m in asked))


#: Comparatives and the facts they compare, when the question names no other
#: ("Is Algeria or Angola bigger?": area; "Who is older…?": a birth or a publication).
_COMPARATIVES: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(["bigger", "larger", "smaller", "biggest", "largest", "smallest"], ("area",)),
    **dict.fromkeys(
        ["older", "younger", "oldest", "youngest", "first", "earlier", "later", "newer"],
        ("birth", "published", "released", "founded", "established", "date"),
    ),
    **dict.fromkeys(["more", "fewer", "populous"], ("population",)),
    **dict.fromkeys(["taller", "higher"], ("elevation", "height")),
    **dict.fromkeys(["longer", "shorter"], ("length", "duration", "runtime")),
}
#: Key words of facts compared as dates.
_DATE_KEYS = frozenset(
    [
        "birth",
        "death",
        "date",
        "year",
        "published",
        "released",
        "founded",
        "established",
        "admittance",
        "admission",
        "ratified",
        "launch",
    ]
)


def _comparable(rows: Sequence[FactRow], dated: bool) -> str | None:
    """The item of a fact a comparison reads: its first date (for a date) or number (a
    duration in parts is one: "6 days, 3 hours, 42 minutes")."""
    for r in rows:
        if dated and r.kind in ("date", "year") and r.item:
            return r.item
        if not dated and r.item and (r.kind == "number" or duration(r.item) is not None):
            return r.item
    return None


class FactRetriever(Retriever):
    """Infobox facts that answer a question (see the module docstring).

    ``embed`` turns texts into unit vectors (the graph's embedder): with it, a relation
    phrase also matches a key by name similarity; without it, by the table alone.
    ``synonyms=False`` leaves the table out (a relation word then means only itself):
    how much each way finds is measured in docs/BENCHMARKS.md, "Answers from facts".
    """

    mode = "facts"

    def __init__(
        self,
        store: GraphReader,
        *,
        embed: Callable[[list[str]], np.ndarray] | None = None,
        min_confidence: float = 0.0,
        synonyms: bool = True,
        ranker: FactRanker | None = None,
    ) -> None:
        self.store = store
        self.embed = embed
        self.synonyms = synonyms
        self.min_confidence = min_confidence
        self.ranker = ranker or default_ranker()
        #: called with (question, candidates, features) for every question that has
        #: candidates, in the order that breaks ties (no model's): how the training
        #: script and ``answers --cv`` see them
        self.observer: Callable[[Question, list[FactCandidate], np.ndarray], None] | None = None
        self.row_labels: dict[str, np.ndarray] = {}

    # ------------------------------------------------------------------ matching
    def _relation(self, q: Question) -> list[tuple[str, tuple[str, ...]]]:
        named = {w.lower() for n in (*q.topics, *q.names) for w in content_tokens(fold(n))}
        words = [
            w.lower().removesuffix("'s").removesuffix("’s")
            for w in content_tokens(q.text)
            if w.lower() not in named
        ]
        found = relation_terms([w for w in words if w and w not in named])
        return found if self.synonyms else [(w, (w,)) for w, _ in found]

    def _phrase_vectors(self, phrases: Sequence[str]) -> list[np.ndarray | None]:
        """The vector of each phrase (None for an empty one, or without the embedder), in
        one call: a call costs the embedder more than a phrase does."""
        if self.embed is None:
            return [None] * len(phrases)
        todo = [p for p in dict.fromkeys(phrases) if p]
        got = {
            p: np.asarray(v, dtype=np.float32)
            for p, v in zip(todo, self.embed(todo) if todo else [], strict=True)
        }
        return [got.get(p) for p in phrases]

    def _similar(self, vector: np.ndarray | None, labels: Sequence[str]) -> dict[str, float]:
        """Cosine of a phrase's ``vector`` to each key name (cached per name)."""
        if self.embed is None or vector is None or not labels:
            return {}
        todo = [lb for lb in dict.fromkeys(labels) if lb not in self.row_labels]
        if todo:
            for lb, vec in zip(todo, self.embed(todo), strict=True):
                self.row_labels[lb] = np.asarray(vec, dtype=np.float32)
            if len(self.row_labels) > _MAX_CACHED_LABELS:
                self.row_labels = {lb: self.row_labels[lb] for lb in labels}
        return {lb: float(self.row_labels[lb] @ vector) for lb in labels}

    def _explained(
        self,
        rel: list[tuple[str, tuple[str, ...]]],
        keys: Sequence[tuple[str, str, str]],
        similar: dict[str, float],
        named: frozenset[str] = frozenset(),
    ) -> tuple[float, list[int]]:
        """How much of the relation the keys ``(key, raw_key, label)`` explain (0..1), and how
        many words each key explains (a chain must use both of its keys). A word some
        key of the subject means by the table (``named``: "music" → ``composer``) is
        not matched to another key by name similarity ("wrote music" is like "writer")."""
        if not rel:
            return 0.0, [0] * len(keys)
        got = 0.0
        per_key = [0] * len(keys)
        total = 0.0
        nouns = any(w not in _TYPE_WORDS and w not in _VERBS for w, _ in rel)
        for word, means in rel:
            weight = 0.5 if word in _TYPE_WORDS or (nouns and word in _VERBS) else 1.0
            total += weight
            best = 0.0
            for i, (key, raw, label) in enumerate(keys):
                said = label.lower().split()
                match = 1.0 if _means(means, key, raw) or any(m in said for m in means) else 0.0
                if not match and word not in named:
                    sim = similar.get(label, 0.0)
                    match = sim if sim >= _EMBED_MATCH else 0.0
                if match > 0 and match >= best:
                    if match > best:
                        best = match
                    per_key[i] += 1
            got += weight * best
        return got / total, per_key

    def _fit(self, rows: Sequence[FactRow], kind: AnswerKind, kinds: dict[str, str]) -> float:
        """1 when the value is of the kind asked, 0.5 when it could be, 0 when not; a key
        whose name says it holds that kind (``birth_place`` for "where") counts as 1."""
        wanted = _FITS.get(kind)
        if wanted is None:
            return 0.5
        literals, articles = wanted
        said = KIND_KEY_WORDS.get(kind.value, frozenset())
        # a key named for the kind holds it, when its items are of that kind at all
        # ("population census year" is named for a number and holds a year)
        named = bool(said & key_terms(rows[0].key, rows[0].raw_key))
        if named and (
            literals == frozenset(["text"])
            or any(r.kind in literals for r in rows)
            # a date the value writes beside its links ("384 BC [[Stagira]]")
            or (kind is AnswerKind.DATE and dates(rows[0].value))
        ):
            return 1.0
        best = 0.0
        for r in rows:
            if r.kind == "link" and not articles:
                continue  # an article is never a date or a number
            if r.kind == "link":
                k = kinds.get(r.target, "")
                best = max(best, 1.0 if k in articles else (0.5 if k in ("", "other") else 0.0))
            elif r.kind in literals:
                best = max(best, 1.0 if r.kind != "text" else 0.5)
        return best

    # ------------------------------------------------------------------ candidates
    def candidates(self, query: Query, found: Found = ()) -> list[FactCandidate]:
        """Every way the question could be answered from facts, best first: the topics'
        facts (and a hop through them); when no key of those explains a word of the
        relation, the facts of the first of ``found`` (the text search's articles) that
        the question does not name ("angola's military reserve" is a fact of Angolan
        Armed Forces, "angolan national anthem" one of Angola)."""
        q = as_question(query)
        rel = self._relation(q)
        if not rel or q.kind in (AnswerKind.YES_NO, AnswerKind.CHOICE):
            return []
        pool = self._topic_pool(q, rel)
        ranked, x = self._ranked(q, rel, pool, searched=False)
        if not any(c.coverage > 0 for c in ranked):
            titles = found() if callable(found) else found
            others = [t for t in titles if t not in q.topics][:FOUND_ARTICLES]
        else:
            others = []
        if others:
            facts = group_facts(self.store.facts_of(others))
            by_search, x_search = self._ranked(
                q, rel, [(tuple(rows), ()) for rows in facts.values()], searched=True
            )
            if by_search:
                ranked, x = by_search, x_search
        if self.observer is not None and ranked:
            # in the order of ties, which no model sets: samples in the ranked order
            # changed with each refit, so the training script could not reproduce them;
            # its first best (``argmax``) is still the one a tie gives the answer
            self.observer(q, *x)
        return ranked

    def _topic_pool(
        self, q: Question, rel: list[tuple[str, tuple[str, ...]]]
    ) -> list[tuple[tuple[FactRow, ...], tuple[FactRow, ...]]]:
        """The topics' facts, a fact of what their facts link to (two hops forward) and
        a fact of an article whose fact names a topic (two hops back), each with the
        fact it was reached through."""
        entities = list(q.topics)
        own = group_facts(self.store.facts_of(entities))
        named = list(entities)
        if " whose " in f" {q.text.lower()} ":  # "the state whose largest city is Anchorage"
            named += [t for n in q.names if (t := self.store.resolve_title(n)) is not None]
        # the facts naming the entity by their keys alone: the ones a hop follows are then
        # read whole among their articles' facts, which the hop reads anyway
        naming = group_facts(
            [r for r in self.store.fact_keys_naming(named) if r.article not in entities]
        )
        out: list[tuple[tuple[FactRow, ...], tuple[FactRow, ...]]] = []
        # one hop: the entity's own facts
        out += [(tuple(rows), ()) for rows in own.values()]
        # two hops forward: facts of what the entity's best-matching facts link to
        firsts = sorted(own.values(), key=lambda rows: -self._first_hop(rel, rows))
        targets: dict[str, tuple[FactRow, ...]] = {}
        for rows in firsts:
            if self._first_hop(rel, rows) <= 0:
                break
            for r in rows:
                if r.kind == "link" and r.target and r.target not in entities:
                    targets.setdefault(r.target, (r,))
            if len(targets) >= _MAX_HOPS_FROM:
                break
        # two hops the other way: facts of the articles whose fact names the entity
        backward: dict[str, str] = {}  # article → the id of its item naming the entity
        for named_by in naming.values():
            owner, item = named_by[0].article, named_by[0].id
            if self._first_hop(rel, named_by) > 0 and owner not in targets:
                backward.setdefault(owner, item)
        if targets or backward:
            fetched = self.store.facts_of([*targets, *backward])
            whole = {r.id: r for r in fetched if r.article in backward}
            for article, item in backward.items():
                if item in whole:
                    targets.setdefault(article, (whole[item],))
            for rows in group_facts(fetched).values():
                via = targets.get(rows[0].article, ())
                if via and via[0].key != rows[0].key:
                    out.append((tuple(rows), via))
        return out

    def _ranked(
        self,
        q: Question,
        rel: list[tuple[str, tuple[str, ...]]],
        out: list[tuple[tuple[FactRow, ...], tuple[FactRow, ...]]],
        *,
        searched: bool,
    ) -> tuple[list[FactCandidate], tuple[list[FactCandidate], np.ndarray]]:
        """The candidates of ``out`` ordered by the model, and (for the observer) the
        same in the order of ties with their features."""
        phrase = " ".join(w for w, _ in rel)
        label_of = row_labels([rows for rows, _ in out])
        label_of.update(row_labels([v for _, v in out if v]))

        def label(r: FactRow) -> str:
            return label_of.get((r.article, r.sub_box, r.key)) or key_label(r.raw_key)

        if not out:
            return [], ([], np.zeros((0, len(FEATURES))))
        labels = [label(rows[0]) for rows, _ in out] + [label(v[0]) for _, v in out if v]
        noun = _KIND_NOUN.get(q.kind)
        of_phrase, of_kind, of_question = self._phrase_vectors(
            [phrase, f"{phrase} {noun}" if noun and phrase else phrase, q.text]
        )
        similar = self._similar(of_phrase, labels)
        asked_kind = self._similar(of_kind, labels)
        # the kinds of what the facts link to, which only a question of a kind reads (_fit)
        kinds = (
            self.store.article_kinds(
                list({r.target for rows, _ in out for r in rows if r.kind == "link" and r.target})
            )
            if q.kind in _FITS
            else {}
        )
        by_table = frozenset(
            word
            for word, means in rel
            for rows, _ in out
            if _means(means, rows[0].key, rows[0].raw_key)
        )
        # a year the box gives the fact ("population_estimate_year"), not one its value
        # writes (a birth date's): which of two estimates is the latest
        years = fact_years([r for rows, _ in out for r in rows], companions_only=True)
        kept: list[tuple[tuple[FactRow, ...], tuple[FactRow, ...], float, float]] = []
        dated: list[int] = []
        rows_x: list[list[float]] = []
        asked = content_words(fold(q.text))
        for answer_rows, via in out:
            first = answer_rows[0]
            value = short_value(answer_rows, q.kind, q.text)
            if not value or names_subject(value, answer_rows):
                continue  # an empty parameter ("film_name = "), or the subject itself
            keys = [(first.key, first.raw_key, label(first))]
            if via:
                keys.insert(0, (via[0].key, via[0].raw_key, label(via[0])))
            coverage, per_key = self._explained(rel, keys, similar, by_table)
            if via and (coverage <= 0 or min(per_key) == 0):
                continue  # a chain explains a word with each of its two facts
            if searched and coverage <= 0:
                continue  # an article the question does not name: its key must say what
            fit = self._fit(answer_rows, q.kind, kinds)
            if fit == 0.0 and all(r.kind == "link" for r in answer_rows):
                # articles, none of the kind asked: the writer for "when … written", a
                # person for "where" (the model weighed a key the relation names more)
                continue
            year = years.get((first.article, first.sub_box, first.key), 0)
            feats = dict.fromkeys(FEATURES, 0.0)
            feats["coverage"] = coverage
            feats["fit"] = fit
            feats["two_hops"] = 1.0 if via else 0.0
            feats["unasked_words"] = float(min(3, _unasked_words(rel, label(first))))
            feats["key_asked"] = 1.0 if any(first.key in means for _, means in rel) else 0.0
            feats["items"] = math.log1p(len(answer_rows))
            feats["key_similarity"] = asked_kind.get(label(first), 0.0)
            feats["echo"] = answer_echo(value, asked)
            feats["searched"] = 1.0 if searched else 0.0
            kept.append((answer_rows, via, coverage, fit))
            rows_x.append([feats[f] for f in FEATURES])
            dated.append(year)
        if not kept:
            return [], ([], np.zeros((0, len(FEATURES))))
        x = np.asarray(rows_x, dtype=np.float64)
        self._add_agreement(x, [rows for rows, _, _, _ in kept])
        self._add_topic_similarity(
            x, of_question, [f"{rows[0].article} {label(rows[0])}" for rows, _, _, _ in kept]
        )
        x = np.round(x, 4)  # features as the training script saw them, on any machine
        weights = self.ranker.weights(self.embed is not None)
        scores = weights.scores(x)
        scored = [
            FactCandidate(
                rows[0].article, rows[0].key, rows, via, coverage, fit, float(z), searched
            )
            for (rows, via, coverage, fit), z in zip(kept, scores, strict=True)
        ]
        # candidates the model cannot tell apart: the latest first (the 2016 estimate
        # before the 2013 census; the year the box gives the fact), then the nearer
        tie_order = sorted(
            range(len(scored)),
            key=lambda i: (-dated[i], scored[i].hop, scored[i].subject, scored[i].key),
        )
        order = sorted(tie_order, key=lambda i: -round(scored[i].score, 6))  # stable
        return [scored[i] for i in order], ([scored[i] for i in tie_order], x[tie_order])

    @staticmethod
    def _add_agreement(x: np.ndarray, groups: list[tuple[FactRow, ...]]) -> None:
        values = [short_value(rows, AnswerKind.ENTITY).lower() for rows in groups]
        counts: dict[str, int] = {}
        for v in values:
            counts[v] = counts.get(v, 0) + 1
        col = FEATURES.index("agreement")
        for i, v in enumerate(values):
            x[i, col] = float(min(3, counts[v] - 1)) if v else 0.0

    def _add_topic_similarity(
        self, x: np.ndarray, question: np.ndarray | None, texts: list[str]
    ) -> None:
        """Cosine of the question to "topic + key name" (``texts``) of each candidate, and
        its rank: the match that named the right fact first most often on unseen articles."""
        if question is None:
            return
        sims = self._similar(question, texts)
        col = FEATURES.index("topic_key_similarity")
        rank_col = FEATURES.index("similarity_rank")
        values = [sims.get(t, 0.0) for t in texts]
        for rank, i in enumerate(sorted(range(len(values)), key=lambda i: -values[i]), start=1):
            x[i, col] = values[i]
            x[i, rank_col] = 1.0 / rank

    def _first_hop(self, rel: list[tuple[str, tuple[str, ...]]], rows: Sequence[Keyed]) -> float:
        """How much of the relation a fact explains by the table alone (a hop to follow)."""
        first = rows[0]
        coverage, _ = self._explained(rel, [(first.key, first.raw_key, "")], {})
        return coverage

    def confidence(self, best: FactCandidate) -> float:
        """The probability that the best candidate's answer is right (the ranker's
        score, calibrated on held-out questions)."""
        weights = self.ranker.weights(self.embed is not None)
        return round(weights.probability(best.score, best.searched), 4)

    # ------------------------------------------------------------------ comparisons
    def compared(self, query: Query) -> list[tuple[FactCandidate, str]]:
        """For a choice between two named things ("Is Algeria or Angola bigger?"), each
        one's fact the comparison reads (``area_km2``) and its value, both or none: the
        reader compares them (:func:`kg_agent.answering.compare.choose`)."""
        q = as_question(query)
        options = q.shape.options
        if q.kind is not AnswerKind.CHOICE or len(options) != 2:
            return []
        titles = [self._option_title(q, o) for o in options]
        if any(t is None for t in titles):
            return []
        option_words = {w.lower() for o in options for w in content_tokens(fold(o))}
        rel = [(w, m) for w, m in self._relation(q) if w not in option_words]
        # "which *country* is bigger": the options' type names no fact compared
        said = [(w, m) for w, m in rel if w not in _COMPARATIVES and w not in _TYPE_WORDS]
        measure = [(w, _COMPARATIVES[w]) for w, _ in rel if w in _COMPARATIVES]
        if not said and not measure:
            return []
        # each option's facts, read once for the words tried below
        boxes: list[_Box] = []
        for title in titles:
            groups = group_facts(self.store.facts_of([str(title)]))
            boxes.append((groups, fact_years([r for rows in groups.values() for r in rows])))
        # the question's other words name the facts compared, else its comparative does
        # ("which *lasted* longer": no key is "lasted"; a duration is longer)
        for words in (said, measure):
            out = self._compared_by(words, boxes)
            if out:
                return out
        return []

    def _compared_by(
        self,
        rel: list[tuple[str, tuple[str, ...]]],
        boxes: list[_Box],
    ) -> list[tuple[FactCandidate, str]]:
        """Each option's fact (of its ``boxes``: facts grouped, and the years the box
        gives them) that best explains ``rel`` with a comparable value, and the value:
        both or none."""
        if not rel:
            return []
        dated = any(m in _DATE_KEYS for _, means in rel for m in means)
        out = []
        for groups, years in boxes:
            best: tuple[float, FactCandidate, str] | None = None
            for rows in groups.values():
                first = rows[0]
                coverage, _ = self._explained(rel, [(first.key, first.raw_key, "")], {})
                value = _comparable(rows, dated)
                if coverage <= 0 or value is None:
                    continue
                score = coverage - _EXTRA_WORD * _unasked_words(rel, first.raw_key)
                score += _RECENT * years.get((first.article, first.sub_box, first.key), 0) / 3000
                if best is None or score > best[0]:
                    cand = FactCandidate(
                        first.article, first.key, tuple(rows), (), coverage, 1.0, score
                    )
                    best = (score, cand, value)
            if best is None:
                return []
            out.append((best[1], best[2]))
        if out[0][1] and out[0][1] == out[1][1] and out[0][0].key != out[1][0].key:
            return []
        return out

    def _option_title(self, q: Question, option: str) -> str | None:
        words = set(content_tokens(fold(option)))
        for e in q.topics:
            if words and words <= set(content_tokens(fold(e))):
                return e
        return self.store.resolve_title(option, with_text=True)

    # ------------------------------------------------------------------ retriever
    def search(self, query: Query, top_k: int = 10, found: Found = ()) -> RetrievalResult:
        """Fact evidence for the best candidate (its first hop too): at most two items;
        for a choice, each option's fact. ``found``: the text search's articles, best
        first, or what waits for them (read only when the topics' facts explain
        nothing: :meth:`candidates`)."""
        q = as_question(query)
        result = RetrievalResult(query=q.text, evidence=[])
        pair = self.compared(q)
        if pair:
            conf = round(min(c.coverage for c, _ in pair) ** 2, 4)
            result.evidence = [_evidence(c.rows, value, conf, 1) for c, value in pair]
            result.trace.append(
                {"stage": "facts", "compared": [f"{c.subject}.{c.key}" for c, _ in pair]}
            )
            return result
        ranked = self.candidates(q, found)
        if not ranked:
            return result
        best = ranked[0]
        conf = self.confidence(best)
        result.trace.append(
            {
                "stage": "facts",
                "subject": best.subject,
                "key": best.key,
                "via": best.via[0].key if best.via else None,
                "coverage": round(best.coverage, 3),
                "fit": best.fit,
                "confidence": conf,
                "candidates": len(ranked),
                "searched": best.searched,
            }
        )
        if conf < max(self.min_confidence, self.ranker.use_at):
            return result  # more likely wrong than right: the text answers, or nothing
        answer = short_value(best.rows, q.kind, q.text)
        show_at = self.ranker.show_at
        items = []
        if best.via:
            v = best.via[0]
            via_rows = tuple(r for r in self.store.facts_of([v.article]) if r.key == v.key)
            items.append(
                _evidence(
                    via_rows or best.via,
                    short_value(best.via, AnswerKind.ENTITY),
                    conf,
                    1,
                    show_at,
                )
            )
        items.append(_evidence(best.rows, answer, conf, best.hop, show_at, best.searched))
        result.evidence = items[: max(1, top_k)]
        return result


def _evidence(
    rows: Sequence[FactRow],
    answer: str,
    confidence: float,
    hop: int,
    show_at: float | None = None,
    searched: bool = False,
) -> Evidence:
    first = rows[0]
    label = key_label(first.raw_key) or first.key
    where = f" ({first.sub_box})" if first.sub_box else ""
    value = first.value or ", ".join(r.item for r in rows)
    statement = FactStatement(
        subject=first.article,
        key=first.key,
        label=label,
        value=value,
        answer=answer,
        confidence=confidence,
        rows=tuple(rows),
        hop=hop,
        show_at=show_at,
        searched=searched,
    )
    return Evidence(
        section_id=f"{first.article}::fact:{first.sub_box}:{first.key}",
        title=first.article,
        heading=f"infobox: {label}",
        heading_path=f"infobox{where} > {label}",
        content=f"{first.article} — {label}: {value}.",
        similarity=confidence,
        score=score_offset("fact") + confidence,
        source="fact",
        scores={"fact": confidence},
        fact=statement,
    )


class WithFacts(Retriever):
    """The configured retriever's evidence after the facts that answer the question.

    On a read-only store (one connection a thread) the fact search runs in a thread of
    its own while the text search runs: its ~15 ms of Kùzu lookups a question (an
    article's facts, the facts naming it, the kinds of what they link to) then add
    little to a question's time. It waits for the text search's articles only when the
    topics' facts explain nothing asked (:meth:`FactRetriever.candidates`). Both
    searches are deterministic, so the evidence is the same either way; a store with
    one connection (a writer's) runs them in turn.
    """

    def __init__(self, inner: Retriever, facts: FactRetriever) -> None:
        self.inner = inner
        self.facts = facts
        self.mode = inner.mode
        #: run the two searches at once where the store allows it
        self.concurrent = True

    def search(self, query: Query, top_k: int = 10) -> RetrievalResult:
        if self.concurrent and getattr(self.facts.store, "read_only", False):
            # the facts' search waits for the text's articles only where it needs them
            titles: Future[list[str]] = Future()
            pending = _fact_threads().submit(self.facts.search, query, top_k, titles.result)
            try:
                found = self.inner.search(query, top_k)
            except BaseException:
                titles.set_result([])
                wait([pending])  # never leave a read running on a store being closed
                raise
            titles.set_result(_found_titles(found))
            facts = pending.result()
        else:
            found = self.inner.search(query, top_k)
            facts = self.facts.search(query, top_k, _found_titles(found))
        if facts.trace:
            found.trace = [*facts.trace, *found.trace]
        if facts.evidence:
            seen = {e.section_id for e in facts.evidence}
            found.evidence = [
                *facts.evidence,
                *(e for e in found.evidence if e.section_id not in seen),
            ]
        return found


def _found_titles(found: RetrievalResult) -> list[str]:
    """The first articles of the text search, best first."""
    titles = dict.fromkeys(e.title for e in found.evidence if e.fact is None)
    return list(titles)[: FOUND_ARTICLES * 2]


_POOL: list[ThreadPoolExecutor] = []
_POOL_LOCK = threading.Lock()


def _fact_threads() -> ThreadPoolExecutor:
    """The process's threads for fact searches (made on first use; idle ones cost
    nothing, and Python joins them at exit)."""
    with _POOL_LOCK:
        if not _POOL:
            _POOL.append(
                ThreadPoolExecutor(max_workers=_FACT_THREADS, thread_name_prefix="kg-agent-facts")
            )
        return _POOL[0]

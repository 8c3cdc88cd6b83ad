"""QueryComplexityClassifier: each signal on questions a person can check, and forcing."""

from __future__ import annotations

import pytest

from kg_agent.exceptions import InvalidArgumentError
from kg_agent.language.complexity import (
    Complexity,
    ComplexityDecision,
    QueryComplexityClassifier,
)

TITLES = ("France", "Germany", "Alice Munro", "Doris Lessing", "Titanic", "Jaws", "Star Wars")


def count_titles(question: str) -> list[str]:
    """A stand-in for the graph's title index: titles named verbatim in the question."""
    return [t for t in TITLES if t.lower() in question.lower()]


@pytest.fixture
def clf() -> QueryComplexityClassifier:
    return QueryComplexityClassifier(count_titles)


@pytest.mark.parametrize(
    "question",
    [
        "When was Barack Obama born?",
        "What is the capital of Peru?",
        "Who is the director of Titanic?",  # one hop: a single relational phrase
        "Who was Obama's mother?",
        "Who was the first president of the United States?",
        "Tell me about Kurt Gödel",
    ],
)
def test_one_hop_questions_are_simple(clf: QueryComplexityClassifier, question: str) -> None:
    assert clf.classify(question).complexity is Complexity.SIMPLE


@pytest.mark.parametrize(
    ("question", "reason"),
    [
        ("Compare the economies of Peru and Chile", "indicator words: compare"),
        ("What was the impact of the printing press?", "indicator words: impact"),
        ("Give a timeline of the Apollo program", "indicator words: timeline"),
        ("Describe the history of Rome", "indicator words: history of"),
        ("Who is the mother of the director of film Polish-Russian War?", "2 relational hops"),
        ("Where was the father of Zhang Ji born?", "2 relational hops"),
        ("When did John V, Prince of Anhalt-Zerbst's father die?", "2 relational hops"),
        ("Which film came out first, Blind Shaft or The Mask Of Fu Manchu?", "multi-hop"),
        ("Who was born first?", "multi-hop"),
        ("Do the two films have the same nationality?", "multi-hop"),
        ("How did the population of Lima change between 1990 and 2010?", "2 years: 1990, 2010"),
        ("Is Alice Munro older than Doris Lessing?", "2 entities: Alice Munro; Doris Lessing"),
        ("Did Jaws and Star Wars have the same director?", "2 entities"),
    ],
)
def test_multi_hop_questions_are_complex(
    clf: QueryComplexityClassifier, question: str, reason: str
) -> None:
    decision = clf.classify(question)
    assert decision.complexity is Complexity.COMPLEX, decision
    assert any(reason in r for r in decision.reasons), decision.reasons


def test_decision_carries_score_reasons_and_entities(clf: QueryComplexityClassifier) -> None:
    decision = clf.classify("Compare the GDP of France and Germany in 1990 and 2000")
    assert isinstance(decision, ComplexityDecision)
    assert decision.score == 1.0  # capped
    assert decision.entities == ("France", "Germany")
    assert decision.reasons == (
        "indicator words: compare",
        "2 entities: France; Germany",
        "2 years: 1990, 2000",
    )


def test_one_comparative_alone_stays_below_the_threshold() -> None:
    decision = QueryComplexityClassifier().classify("Is gold heavier than lead?")
    assert decision.complexity is Complexity.SIMPLE
    assert decision.score == 0.3
    assert decision.reasons == ("comparatives: than",)


def test_one_year_is_not_a_signal_but_two_distinct_years_are() -> None:
    clf = QueryComplexityClassifier()
    assert clf.classify("Who won the 1998 World Cup?").complexity is Complexity.SIMPLE
    assert clf.classify("Who won in 1998 and in 1998?").complexity is Complexity.SIMPLE
    assert clf.classify("Who won in 1998 and 2002?").complexity is Complexity.COMPLEX
    assert clf.classify("Who won in 0998 or 2100?").complexity is Complexity.SIMPLE


def test_entities_are_counted_once_each() -> None:
    clf = QueryComplexityClassifier(lambda q: ["France", "france", " France "])
    decision = clf.classify("Tell me about France")
    assert decision.entities == ("France",)
    assert decision.complexity is Complexity.SIMPLE


def test_without_an_entity_counter_the_entity_signal_is_unused() -> None:
    decision = QueryComplexityClassifier().classify("Did Jaws and Star Wars share a composer?")
    assert decision.entities == ()
    assert decision.complexity is Complexity.SIMPLE


@pytest.mark.parametrize("force", [Complexity.COMPLEX, "complex", " COMPLEX "])
def test_forcing_complex_wins(clf: QueryComplexityClassifier, force: Complexity | str) -> None:
    decision = clf.classify("When was Barack Obama born?", force=force)
    assert decision.complexity is Complexity.COMPLEX
    assert decision.reasons[0] == "forced: complex"
    assert decision.score == 0.0  # the rules' own score is still reported


def test_forcing_simple_wins(clf: QueryComplexityClassifier) -> None:
    decision = clf.classify("Compare France and Germany", force="simple")
    assert decision.complexity is Complexity.SIMPLE
    assert decision.reasons[0] == "forced: simple"
    assert decision.score == 1.0


def test_auto_means_not_forced(clf: QueryComplexityClassifier) -> None:
    assert (
        clf.classify("Compare France and Germany", force="auto").reasons[0].startswith("indicator")
    )


def test_threshold_moves_the_boundary() -> None:
    strict = QueryComplexityClassifier(threshold=0.9)
    assert strict.classify("What was the impact of the printing press?").complexity is (
        Complexity.SIMPLE
    )
    lax = QueryComplexityClassifier(threshold=0.3)
    assert lax.classify("Who is the director of Titanic?").complexity is Complexity.COMPLEX


def test_deterministic(clf: QueryComplexityClassifier) -> None:
    q = "Which film came out first, Jaws or Star Wars?"
    assert len({clf.classify(q) for _ in range(5)}) == 1


@pytest.mark.parametrize("threshold", [0, -0.1, 1.5, True, "0.5"])
def test_bad_threshold_is_refused(threshold: object) -> None:
    with pytest.raises(InvalidArgumentError, match="threshold"):
        QueryComplexityClassifier(threshold=threshold)  # type: ignore[arg-type]


def test_bad_question_and_force_are_refused(clf: QueryComplexityClassifier) -> None:
    with pytest.raises(InvalidArgumentError, match="question"):
        clf.classify("   ")
    with pytest.raises(InvalidArgumentError, match="force"):
        clf.classify("Who?", force="maybe")

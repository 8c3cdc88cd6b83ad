"""Grounding: a question about something the graph has no article for is refused,
whatever the text search returns; one about what it has, or asked through it, is not."""

from __future__ import annotations

import pytest

from kg_agent.entities import QuestionEntityLinker, alias_title
from kg_agent.language.question import Question
from kg_agent.retrieval.base import Evidence
from kg_agent.retrieval.grounding import ground, spelled_out
from tests.support.memory_graph import MemoryArticle, MemoryGraph


def _a(title: str, text: str, **kw: object) -> MemoryArticle:
    return MemoryArticle(title, [("", text)], **kw)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def graph() -> MemoryGraph:
    return MemoryGraph(
        [
            _a("Albert Einstein", "Albert Einstein was a German-born theoretical physicist."),
            _a(
                "American National Standards Institute",
                "The American National Standards Institute (ANSI) is a private non-profit "
                "organization that oversees the development of voluntary standards.",
            ),
            _a(
                "Academy Awards",
                "The Academy Awards, or the Oscars, are an annual American awards ceremony.",
            ),
            _a(
                "Algeria",
                "Algeria is a sovereign state in North Africa and the largest country in "
                "Africa. It borders Mali and Niger.",
            ),
            _a("Apollo", "Apollo is one of the Olympian deities of Greek mythology."),
            _a("Aikido", "Aikido is a modern Japanese martial art."),
            _a(
                "Arthur Schopenhauer",
                "Arthur Schopenhauer wrote The World as Will and Representation.",
                links={"The World as Will and Representation": 1},
            ),
            _a(
                "Albert Sidney Johnston",
                "Albert Sidney Johnston served as a general in three different armies.",
            ),
            MemoryArticle("The World as Will and Representation", [], is_stub=True),
            MemoryArticle("Burkina Faso", [], is_stub=True),
        ]
    )


def grounding(graph: MemoryGraph, text: str, evidence: list[Evidence] | None = None):  # type: ignore[no-untyped-def]
    linker = QuestionEntityLinker(graph)
    return ground(Question(text, link=linker.link_any_case), graph, evidence or [])


def _ev(title: str, text: str) -> Evidence:
    return Evidence(f"{title}::0000", title, "", title, text, 0.5)


@pytest.mark.parametrize(
    "question",
    [
        "Where was Albert Einstein born?",
        "Who was Einstein's first wife?",  # a surname: the close title
        "where is ANSI headquartered",  # an acronym its article spells out
        "Where was the first Oscars ceremony held?",  # another name its lead gives
        "Is aikido a Chinese martial art?",  # "Chinese" qualifies; aikido is the topic
        # asked through a title the graph knows only as a link target
        "Where was the philosopher who wrote The World as Will and Representation born?",
    ],
)
def test_questions_about_what_the_graph_has_are_grounded(graph: MemoryGraph, question: str) -> None:
    found = grounding(graph, question)
    assert found.grounded, found


@pytest.mark.parametrize(
    ("question", "missing"),
    [
        ("Where was Marie Curie born?", "Marie Curie"),
        # "Apollo" is an article, "Apollo 17" is not
        ("Who commanded Apollo 17?", "Apollo 17"),
        ("where was greta thunberg born", "where was greta thunberg born"),
    ],
)
def test_questions_about_what_it_lacks_are_not(
    graph: MemoryGraph, question: str, missing: str
) -> None:
    found = grounding(graph, question)
    assert not found.grounded
    assert found.missing == (missing,)


def test_a_refusal_names_only_what_the_question_wrote_as_a_name(graph: MemoryGraph) -> None:
    """A lower-case question's names are guesses (runs of its words, or the whole
    question): a refusal that named them would read as nonsense."""
    curie = Question("Where was Marie Curie born?")
    assert grounding(graph, curie.text).refusal_names(curie) == ("Marie Curie",)
    lower = Question("where was greta thunberg born")
    refused = grounding(graph, lower.text)
    assert refused.missing and refused.refusal_names(lower) == ()


def test_a_name_the_evidence_only_mentions_grounds_an_answer_about_it(
    graph: MemoryGraph,
) -> None:
    algeria = [_ev("Algeria", "Algeria is the largest country in Africa. It borders Mali.")]
    largest = grounding(graph, "What is the largest country in Africa?", algeria)
    assert largest.grounded and largest.weak and largest.mentioned == ("Africa",)
    assert largest.answers_about("Algeria is the largest country in Africa. [1]")
    # mentioned, but the answer read is about something else: not in the graph
    mali = grounding(graph, "What is the capital of Mali?", algeria)
    assert mali.weak and not mali.answers_about("Algiers is the capital of Algeria. [1]")
    # a name of several words is written as one: its words scattered do not write it
    apollo = [_ev("Apollo", "Apollo is a god. The Secular Games of 17 BCE honoured him.")]
    seventeen = grounding(graph, "Who commanded Apollo 17?", apollo)
    assert seventeen.mentioned == ("Apollo 17",)
    assert not seventeen.answers_about("Prayers to Apollo ended the games of 17 BCE. [1]")
    assert seventeen.answers_about("Apollo 17 was commanded by Eugene Cernan. [1]")
    # not even mentioned: refused before anything is read
    assert not grounding(graph, "What is the capital of Niger?", algeria).grounded
    # a link target without an article: refused, however the evidence mentions it
    burkina = [_ev("Algeria", "Algeria borders Burkina Faso. Algiers is its capital.")]
    assert not grounding(graph, "What is the capital of Burkina Faso?", burkina).grounded


def test_words_that_qualify_and_months_are_not_topics(graph: MemoryGraph) -> None:
    assert grounding(graph, "Which Greek god did Aikido honour every May?").names == (
        "Greek",
        "Aikido",
        "May",
    )
    found = grounding(graph, "Which Greek god did Aikido honour every May?")
    assert found.found == ("Aikido",) and found.missing == ()


def test_alias_title_reads_acronyms_and_leads(graph: MemoryGraph) -> None:
    assert alias_title(graph, "ANSI") == "American National Standards Institute"
    assert alias_title(graph, "Oscars") == "Academy Awards"
    assert alias_title(graph, "Algeria") is None  # a title already
    assert alias_title(graph, "Mali") is None  # written, but not as the lead's subject


@pytest.mark.parametrize(
    ("name", "text", "runs"),
    [
        ("UK", "Aberdeen is a city in Scotland, United Kingdom.", ["United Kingdom"]),
        ("USA", "the United States of America and the USSR", ["United States of America"]),
        ("S Johnston", "General Albert Sidney Johnston served", ["Sidney Johnston"]),
        ("A. S. Johnston", "General Albert Sidney Johnston served", ["Albert Sidney Johnston"]),
        ("US", "let us say the united states", []),  # lower case spells nothing
        ("UK", "The UK is", []),  # the name as written is not another way of writing it
    ],
)
def test_spelled_out_finds_initialisms_and_initials_in_the_evidence(
    name: str, text: str, runs: list[str]
) -> None:
    assert spelled_out(name, text) == runs


def test_a_name_written_with_initials_grounds_the_article_it_abbreviates(
    graph: MemoryGraph,
) -> None:
    johnston = [_ev("Albert Sidney Johnston", "Albert Sidney Johnston served in three armies.")]
    found = grounding(graph, "How many armies was A. S. Johnston a general in?", johnston)
    assert found.found == ("Albert Sidney Johnston",) and not found.weak
    # without evidence that writes the name in full, nothing says who "A. S." is
    assert "Albert Sidney Johnston" not in grounding(graph, "Who was X. Y. Johnston?").found


def test_an_initialism_the_evidence_spells_out_is_quoted_in_full(graph: MemoryGraph) -> None:
    """ "the UK" is mentioned when a section writes "United Kingdom", and an answer that
    quotes "United Kingdom" is about it."""
    aberdeen = [_ev("Aberdeen", "Aberdeen is a city in Scotland, in the United Kingdom.")]
    uk = grounding(graph, "Aberdeen is in which part of the UK?", aberdeen)
    assert uk.grounded and uk.mentioned == ("Aberdeen", "UK")  # no article about Aberdeen
    assert uk.answers_about("Aberdeen is a city in Scotland, in the United Kingdom. [1]")
    assert not uk.answers_about("Aberdeen is a city. [1]")
    # with no section that spells it out, "UK" is not in the graph
    assert not grounding(graph, "Aberdeen is in which part of the UK?").grounded

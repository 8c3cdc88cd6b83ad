"""Plain questions read from the text: yes or no from a sentence that states or denies
the claim, another name of the subject, and a name that says it is what was asked."""

from __future__ import annotations

import pytest

from kg_agent.answering.reader import SHOW_THRESHOLD, read_evidence
from kg_agent.retrieval.base import Evidence


def _items(*articles: tuple[str, str]) -> list[tuple[int, Evidence]]:
    return [
        (n, Evidence(f"{title}::0000", title, "", title, text, 0.8, source="entity"))
        for n, (title, text) in enumerate(articles, 1)
    ]


ANDORRA = (
    "Andorra",
    "Andorra is a sovereign landlocked microstate in Southwestern Europe. Andorra is not "
    "a member of the European Union, but enjoys a special relationship with it.",
)
AIKIDO = ("Aikido", "Aikido is a modern Japanese martial art developed by Morihei Ueshiba.")
EINSTEIN = (
    "Albert Einstein",
    "In 1921, Einstein was awarded the Nobel Prize in Physics for his services to "
    "theoretical physics.",
)
ACTRIUS = ("Actrius", "Actrius is a 1996 film by Ventura Pons. The film has no male actors.")


@pytest.mark.parametrize(
    ("question", "evidence", "expected"),
    [
        ("Is Andorra in the European Union?", ANDORRA, "no"),  # denied
        ("Is Andorra landlocked?", ANDORRA, "yes"),  # stated
        ("Is aikido a Chinese martial art?", AIKIDO, "no"),  # another kind named
        ("Is aikido a Japanese martial art?", AIKIDO, "yes"),
        ("Did Einstein win the Nobel Prize in Physics?", EINSTEIN, "yes"),  # "awarded"
        ("Are there any male actors in the film Actrius?", ACTRIUS, "no"),
    ],
)
def test_yes_or_no_from_the_sentence_that_states_the_claim(
    question: str, evidence: tuple[str, str], expected: str
) -> None:
    reading = read_evidence(question, _items(evidence))
    assert (reading.short_answer, reading.source) == (expected, "verified")
    assert reading.sentences and reading.sentences[0].title == evidence[0]


def test_a_subject_the_question_writes_in_another_form_is_read() -> None:
    # no title written whole ("aardwolves", "einstein"), no linked entity: the best
    # article whose name the question writes otherwise is the subject
    aardwolf = Evidence(
        "Aardwolf::0000",
        "Aardwolf",
        "",
        "Aardwolf",
        "The aardwolf is a small insectivorous mammal. The aardwolf is nocturnal and shy.",
        0.8,
        source="hybrid",
    )
    reading = read_evidence("are aardwolves nocturnal?", [(1, aardwolf)])
    assert (reading.short_answer, reading.source) == ("yes", "verified")
    physics = Evidence(
        "Albert Einstein::0000",
        "Albert Einstein",
        "",
        "Albert Einstein",
        EINSTEIN[1],
        0.8,
        source="hybrid",
    )
    reading = read_evidence("did einstein win the nobel prize in physics", [(1, physics)])
    assert reading.short_answer == "yes"


WALSH = ("Joe Walsh", "Joe Walsh is an American singer, songwriter and guitarist.")
BENNINGTON = ("Chester Bennington", "Chester Bennington was an American singer and songwriter.")
PAGE = ("Jimmy Page", "Jimmy Page is an English musician, songwriter and guitarist.")
OUTSIDE = ("Ken Ray", "In 1990 Ray toured Europe with a band.")  # no sentence says what he is


@pytest.mark.parametrize(
    ("question", "evidence", "expected"),
    [
        # each one's sentence states it
        ("Are Joe Walsh and Jimmy Page both guitarists?", (WALSH, PAGE), "yes"),
        # one is described, and nothing of the other writes "guitarist"
        ("Are Joe Walsh and Chester Bennington both guitarists?", (WALSH, BENNINGTON), "no"),
        # the other is not described: its evidence not saying so decides nothing
        ("Are Joe Walsh and Ken Ray both guitarists?", (WALSH, OUTSIDE), None),
    ],
)
def test_both_is_read_of_each_named_thing(
    question: str, evidence: tuple[tuple[str, str], ...], expected: str | None
) -> None:
    reading = read_evidence(question, _items(*evidence))
    assert reading.short_answer == expected
    if expected is not None:
        assert {s.title for s in reading.sentences} == {t for t, _ in evidence}


def test_a_claim_no_sentence_writes_whole_decides_nothing() -> None:
    reading = read_evidence("Is Andorra a monarchy?", _items(ANDORRA))
    assert reading.short_answer is None


@pytest.mark.parametrize(
    ("question", "text", "expected"),
    [
        (
            "What does ASCII stand for?",
            "ASCII, abbreviated from American Standard Code for Information Interchange, "
            "is a character encoding standard.",
            "American Standard Code for Information Interchange",
        ),
        (
            "what is another name for an abacus",
            "The abacus (plural abaci or abacuses), also called a counting frame, is a "
            "calculating tool.",
            "a counting frame",
        ),
        (
            "What does the name aardwolf mean?",
            'The aardwolf is a small insectivorous mammal. Its name means "earth wolf" in '
            "Afrikaans and Dutch.",
            "earth wolf",
        ),
        (
            "What are Actinopterygii commonly called?",
            "Actinopterygii, or the ray-finned fishes, constitute a class of the bony fishes.",
            "ray-finned fishes",
        ),
    ],
)
def test_another_name_of_the_subject_from_its_own_sentence(
    question: str, text: str, expected: str
) -> None:
    title = {"ASCII": "ASCII", "abacus": "Abacus", "aardwolf": "Aardwolf"}.get(
        next((w for w in ("ASCII", "abacus", "aardwolf") if w in question), ""), "Actinopterygii"
    )
    reading = read_evidence(question, _items((title, text)))
    assert (reading.short_answer, reading.source) == (expected, "alias")


def test_which_noun_takes_the_name_that_says_it_is_one() -> None:
    babbage = (
        "Charles Babbage",
        "From 1828 to 1839 Babbage was Lucasian Professor of Mathematics at the University "
        "of Cambridge, the chair once held by Isaac Newton.",
    )
    reading = read_evidence(
        "Which professorship at Cambridge was held by Charles Babbage?", _items(babbage)
    )
    assert (reading.short_answer, reading.source) == ("Lucasian Professor of Mathematics", "typed")


def test_text_answers_below_the_threshold_are_not_shown() -> None:
    reading = read_evidence("Is Andorra in the European Union?", _items(ANDORRA))
    assert reading.short_answer == "no"
    assert reading.confidence < SHOW_THRESHOLD and not reading.shown

"""Numbered evidence (grouped by article or flat), citation mapping, the extractive answer."""

from __future__ import annotations

import re

import pytest

from kg_agent.answering import OfflineReading, analyse, read_evidence
from kg_agent.answering.evidence import Sentence
from kg_agent.language.tokens import split_sentences
from kg_agent.retrieval.base import Evidence
from kg_agent.synthesis.context import Citation, MultiDocSynthesizer, NumberedEvidence
from kg_agent.synthesis.extractive import (
    EXTRACTIVE_LABEL,
    NOT_IN_GRAPH,
    NOT_SURE,
    extractive_answer,
    format_reading,
)
from kg_agent.synthesis.synthesizer import ExtractiveSynthesizer


def ev(title: str, heading_path: str, content: str, similarity: float = 0.5) -> Evidence:
    slug = heading_path.replace(" ", "_") or "intro"
    return Evidence(
        section_id=f"{title}::{slug}",
        title=title,
        heading=heading_path.rsplit(" > ", 1)[-1],
        heading_path=heading_path,
        content=content,
        similarity=similarity,
    )


# Retrieval order interleaves two articles.
BABBAGE_INTRO = ev("Charles Babbage", "", "Charles Babbage was an English polymath.", 0.9)
ENGINE_DESIGN = ev("Analytical Engine", "Design", "The engine had a mill and a store.", 0.8)
BABBAGE_CAREER = ev(
    "Charles Babbage", "Career", "He held the Lucasian chair at Cambridge from 1828.", 0.7
)
EVIDENCE = [BABBAGE_INTRO, ENGINE_DESIGN, BABBAGE_CAREER]


def numbers(numbered: NumberedEvidence) -> list[tuple[int, str]]:
    return [(n, e.section_id) for n, e in numbered.items]


# --------------------------------------------------------------------------- numbering


def test_grouped_numbering_keeps_each_article_together() -> None:
    numbered = MultiDocSynthesizer(group=True).number(EVIDENCE)
    assert numbers(numbered) == [
        (1, BABBAGE_INTRO.section_id),
        (2, BABBAGE_CAREER.section_id),
        (3, ENGINE_DESIGN.section_id),
    ]
    lines = numbered.text.splitlines()
    assert lines == [
        "## Charles Babbage",
        "[1] (introduction) Charles Babbage was an English polymath.",
        "[2] (Career) He held the Lucasian chair at Cambridge from 1828.",
        "",
        "## Analytical Engine",
        "[3] (Design) The engine had a mill and a store.",
    ]


def test_flat_numbering_keeps_retrieval_order_and_names_article_per_line() -> None:
    numbered = MultiDocSynthesizer(group=False).number(EVIDENCE)
    assert numbers(numbered) == [(i, e.section_id) for i, e in enumerate(EVIDENCE, 1)]
    assert "##" not in numbered.text
    assert numbered.text.splitlines() == [
        "[1] Charles Babbage — introduction: Charles Babbage was an English polymath.",
        "[2] Analytical Engine — Design: The engine had a mill and a store.",
        "[3] Charles Babbage — Career: He held the Lucasian chair at Cambridge from 1828.",
    ]


@pytest.mark.parametrize("group", [True, False])
def test_long_sections_are_cut_with_an_ellipsis(group: bool) -> None:
    long = ev("ENIAC", "Design", "word " * 1000)
    numbered = MultiDocSynthesizer(group=group, max_chars_per_section=100).number([long])
    line = next(x for x in numbered.text.splitlines() if x.startswith("[1]"))
    assert line.endswith(" …")
    assert len(line) < 100 + 40
    assert numbered.items[0][1].content == long.content  # the evidence itself is untouched


def test_empty_evidence_numbers_nothing() -> None:
    for group in (True, False):
        numbered = MultiDocSynthesizer(group=group).number([])
        assert numbered.items == ()
        assert numbered.text == ""
        assert numbered.citations_in("see [1]") == []


# --------------------------------------------------------------------------- citations


def test_citations_map_numbers_to_article_and_section() -> None:
    numbered = MultiDocSynthesizer(group=True).number(EVIDENCE)
    answer = "Babbage [2] designed it [3]; he was a polymath [1]."
    cites = numbered.citations_in(answer)
    assert cites == [
        Citation(2, "Charles Babbage", "Career", BABBAGE_CAREER.section_id),
        Citation(3, "Analytical Engine", "Design", ENGINE_DESIGN.section_id),
        Citation(1, "Charles Babbage", "", BABBAGE_INTRO.section_id),
    ]
    assert cites[0].to_dict() == {
        "n": 2,
        "title": "Charles Babbage",
        "heading_path": "Career",
        "section_id": BABBAGE_CAREER.section_id,
    }


def test_same_number_maps_differently_in_flat_and_grouped_numbering() -> None:
    grouped = MultiDocSynthesizer(group=True).number(EVIDENCE)
    flat = MultiDocSynthesizer(group=False).number(EVIDENCE)
    assert grouped.citations_in("[2]")[0].section_id == BABBAGE_CAREER.section_id
    assert flat.citations_in("[2]")[0].section_id == ENGINE_DESIGN.section_id


def test_citations_ignore_invalid_numbers_and_repeat_each_once_in_order() -> None:
    numbered = MultiDocSynthesizer(group=False).number(EVIDENCE)
    answer = "A [3] b [0] c [4] d [99] e [3] f [1] g [-1] h [x] i [1000] j [2, 3]"
    assert [c.n for c in numbered.citations_in(answer)] == [3, 1, 2]  # [2, 3]: a group
    assert numbered.citation(0) is None
    assert numbered.citation(4) is None
    assert numbered.citations_in("no markers at all") == []


# --------------------------------------------------------------------------- extractive

ENIAC_EVIDENCE = [
    ev(
        "ENIAC",
        "",
        "ENIAC was the first programmable, electronic, general-purpose digital computer. "
        "It was built at the Moore School of the University of Pennsylvania.",
        0.8,
    ),
    ev(
        "ENIAC",
        "Design",
        "It worked in decimal rather than binary. "
        "ENIAC contained 17,468 vacuum tubes along with thousands of resistors. "
        "Programs were set up by hand with cables and switches.",
        0.7,
    ),
    ev(
        "EDVAC",
        "Design",
        "EDVAC used mercury delay lines instead of vacuum tubes for its memory. "
        "It was a binary machine.",
        0.6,
    ),
]


def test_extractive_answer_leads_with_the_sentence_and_shows_a_short_answer_only_when_sure() -> (
    None
):
    numbered = MultiDocSynthesizer(group=True).number(ENIAC_EVIDENCE)
    question = "How many vacuum tubes did ENIAC contain?"
    answer = extractive_answer(question, numbered)
    n = next(n for n, e in numbered.items if "17,468" in e.content)
    # a number read from a sentence is right about half the time: not shown in bold
    reading = read_evidence(question, numbered.items)
    assert (reading.short_answer, reading.shown) == ("17,468 vacuum tubes", False)
    assert answer.startswith(f"{EXTRACTIVE_LABEL}: ")
    body = answer.split(f"{EXTRACTIVE_LABEL}: ", 1)[1]
    sentence = "ENIAC contained 17,468 vacuum tubes along with thousands of resistors."
    assert body.startswith(f"{sentence} [{n}]")
    assert len(body.split()) <= 45  # ~40 words by default, the first sentence always whole


def test_extractive_answer_cites_only_numbers_that_exist() -> None:
    for group in (True, False):
        numbered = MultiDocSynthesizer(group=group).number(ENIAC_EVIDENCE)
        question = "Where was ENIAC built, and what memory did EDVAC use?"
        answer = extractive_answer(question, numbered)
        cited = [int(n) for n in re.findall(r"\[(\d+)\]", answer)]
        assert cited and set(cited) <= {n for n, _ in numbered.items}
        # Every quoted sentence sits in the evidence it cites.
        body = answer.split(f"{EXTRACTIVE_LABEL}: ", 1)[1]
        for sentence, n in re.findall(r"(.+?) \[(\d+)\]\s*", body):
            assert sentence.strip() in numbered.items[int(n) - 1][1].content
        assert len(numbered.citations_in(answer)) == len(set(cited))


def test_extractive_answer_says_not_in_the_graph_and_quotes_the_closest() -> None:
    numbered = MultiDocSynthesizer().number(ENIAC_EVIDENCE)
    answer = extractive_answer("Who won the 2022 FIFA World Cup final in Qatar?", numbered)
    assert answer.startswith(f"{NOT_IN_GRAPH}: ")
    assert re.search(r"\[\d+\]", answer)  # the closest evidence is still cited


def test_renumbered_numbers_citations_in_the_order_shown() -> None:
    numbered = MultiDocSynthesizer(group=False).number(ENIAC_EVIDENCE)
    texts, again = numbered.renumbered(["B [3] then A [1], B again [3], unknown [9]"])
    assert texts == ["B [1] then A [2], B again [1], unknown [9]"]
    assert [e.section_id for _, e in again.items] == [
        numbered.items[2][1].section_id,
        numbered.items[0][1].section_id,
        numbered.items[1][1].section_id,
    ]
    assert [n for n, _ in again.items] == [1, 2, 3]
    assert [c.n for c in again.citations_in(texts[0])] == [1, 2]


def test_extractive_answer_without_evidence_says_so() -> None:
    numbered = MultiDocSynthesizer().number([])
    answer = extractive_answer("How many vacuum tubes did ENIAC contain?", numbered)
    assert answer.startswith(EXTRACTIVE_LABEL)
    assert "no evidence" in answer
    assert not re.search(r"\[\d+\]", answer)


def test_split_sentences_drops_fragments() -> None:
    text = "See also. ENIAC contained 17,468 vacuum tubes. Short one.\nIt worked in decimal mode."
    assert split_sentences(text) == [
        "ENIAC contained 17,468 vacuum tubes.",
        "It worked in decimal mode.",
    ]


def test_renumbered_rewrites_grouped_and_ranged_markers() -> None:
    numbered = MultiDocSynthesizer(group=False).number(ENIAC_EVIDENCE)
    texts, again = numbered.renumbered(["C is true [3]. A and B agree [1, 2]. All [1–3]."])
    assert texts == ["C is true [1]. A and B agree [2, 3]. All [2, 3, 1]."]
    assert [c.n for c in again.citations_in(texts[0])] == [1, 2, 3]
    ids = [e.section_id for _, e in again.items]
    assert ids == [numbered.items[i][1].section_id for i in (2, 0, 1)]


def test_a_shown_answer_is_written_once_then_the_sentences_that_state_it() -> None:
    question = "What is the capital of Alabama?"
    fact = Sentence(1, 0, "Alabama — capital: Montgomery.", "Alabama")
    former = Sentence(2, 0, "From 1826 to 1846, Tuscaloosa served as the capital.", "Alabama")
    stated = Sentence(3, 0, "The capital of Alabama is Montgomery.", "Alabama")
    reading = OfflineReading(
        analyse(question), [fact, former, stated], "Montgomery", (1,), confidence=0.9
    )
    text = format_reading(reading)
    assert text == f"Montgomery [1]. {EXTRACTIVE_LABEL}: The capital of Alabama is Montgomery. [3]"
    # only the infobox states it: its line is the support
    alone = OfflineReading(analyse(question), [fact, former], "Montgomery", (1,), confidence=0.9)
    assert format_reading(alone).endswith(": Alabama — capital: Montgomery. [1]")
    # not shown: the sentences read, all of them
    unsure = OfflineReading(analyse(question), [fact, former, stated], "Montgomery", (1,))
    text = format_reading(unsure)
    assert "Tuscaloosa" in text and "Montgomery [1]." not in text


def test_a_choice_shows_both_sentences_it_compares() -> None:
    question = "Who was born first, Aldous Huxley or Allan Dwan?"
    huxley = Sentence(1, 0, "Aldous Huxley — birth date: 26 July 1894.", "Aldous Huxley")
    dwan = Sentence(2, 0, "Allan Dwan — birth date: 3 April 1885.", "Allan Dwan")
    other = Sentence(3, 0, "Dwan directed films.", "Allan Dwan")
    reading = OfflineReading(
        analyse(question), [huxley, dwan, other], "Allan Dwan", (1, 2), confidence=0.95
    )
    text = format_reading(reading)
    assert text == (
        f"Allan Dwan [1] [2]. {EXTRACTIVE_LABEL}: Aldous Huxley — birth date: 26 July 1894. [1] "
        "Allan Dwan — birth date: 3 April 1885. [2]"
    )


def test_an_unsure_answer_quotes_the_sentences_and_claims_nothing() -> None:
    """The look-ups find what the question names but the grounding model doubts it:
    the sentences are shown, labelled, with no short answer, and it is not answerable."""
    out = ExtractiveSynthesizer().unsure("Which chair did Charles Babbage hold?", EVIDENCE)
    assert out.answer.startswith(f"{NOT_SURE}. {EXTRACTIVE_LABEL}: ")
    assert "Lucasian chair" in out.answer and re.search(r"\[\d+\]", out.answer)
    assert not out.answerable and out.short_answer is None and out.candidate is None
    assert out.found_by == "grounding"


def test_a_refusal_names_what_the_graph_lacks_or_else_only_what_was_checked() -> None:
    synth = ExtractiveSynthesizer()
    named = synth.refuse("Where was Marie Curie born?", EVIDENCE, ["Marie Curie"])
    assert named.answer.startswith("Not in the graph: the graph has no article about Marie Curie")
    plain = synth.refuse("what university runs the pitch drop experiment", EVIDENCE, [])
    assert plain.answer == "Not in the graph: the evidence found does not answer this question."
    assert "pitch drop" not in plain.answer and "[1]" not in plain.answer
    assert not named.answerable and not plain.answerable and plain.found_by == "grounding"

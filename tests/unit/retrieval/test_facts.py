"""Answers from infobox facts, on an in-memory graph whose boxes are read as a load
reads them (real infobox wikitext, the load's parser and kinds)."""

from __future__ import annotations

import dataclasses

import pytest

from kg_agent.answering.reader import SHOW_THRESHOLD, read_evidence
from kg_agent.entities import QuestionEntityLinker
from kg_agent.language.question import Question
from kg_agent.language.relations import key_label, key_terms, split_run_together
from kg_agent.language.shape import AnswerKind
from kg_agent.retrieval.base import Evidence, RetrievalResult, Retriever
from kg_agent.retrieval.fact_rows import group_facts, row_labels
from kg_agent.retrieval.facts import FactRetriever, WithFacts, short_value
from kg_agent.store import FactRow
from tests.support.memory_graph import MemoryArticle, MemoryGraph

ALABAMA = """{{Infobox U.S. state
| Name = Alabama
| Capital = [[Montgomery, Alabama|Montgomery]]
| LargestCity = [[Birmingham, Alabama|Birmingham]]
| AdmittanceDate = December 14, 1819
| TotalArea = 135,765 km2
| 2010Pop = 4,858,979
}}"""
ALASKA = """{{Infobox U.S. state
| Name = Alaska
| Capital = [[Juneau, Alaska|Juneau]]
| LargestCity = [[Anchorage, Alaska|Anchorage]]
| AdmittanceDate = January 3, 1959
}}"""
ALGERIA = """{{Infobox country
| common_name = Algeria
| capital = [[Algiers]]
| population_estimate = 40,400,000
| population_estimate_year = 2016
| population_census = 37,900,000
| population_census_year = 2013
| population_density_km2 = 15.9
| area_km2 = 2,381,741
}}"""
ANGOLA = """{{Infobox country
| common_name = Angola
| capital = [[Luanda]]
| currency = [[Angolan kwanza|Kwanza]]
| area_km2 = 1,246,700
}}"""
EINSTEIN = """{{Infobox scientist
| name = Albert Einstein
| birth_place = [[Ulm]], [[Kingdom of Württemberg]], [[German Empire]]
| spouse = {{marriage|[[Mileva Marić]]|1903|1919|end=div}}<br />
{{marriage|[[Elsa Löwenthal]]|1919|1936|end=died}}
| doctoral_advisor = [[Alfred Kleiner]]
}}"""
SONG = """{{Infobox song
| name = America the Beautiful
| writer = [[Katharine Lee Bates]]
| composer = [[Samuel A. Ward]]
| published = 1895
}}"""
ALBANIA = """{{Infobox country
| common_name = Albania
| leader_title1 = [[President of Albania|President]]
| leader_name1 = [[Bujar Nishani]]
| leader_title2 = [[Prime Minister of Albania|Prime Minister]]
| leader_name2 = [[Edi Rama]]
| established_event1 = Independence from the [[Ottoman Empire]]
| established_date1 = 28 November 1912
| area_km2 = 28,748
}}"""
ACTRIUS = """{{Infobox film
| name = Actrius
| film name = (Catalan)
| director = [[Ventura Pons]]
| distributor = [[Buena Vista International]]
| released = 17 January 1997
}}"""
ANIMAL_FARM = """{{Infobox book
| name = Animal Farm
| author = [[George Orwell]]
| published = 17 August 1945 ([[Secker and Warburg]], London)
}}"""
LINCOLN = """{{Infobox officeholder
| name = Abraham Lincoln
| successor1 = [[Andrew Johnson]]
| president = Abraham Lincoln
}}"""
ARISTOTLE = """{{Infobox philosopher
| name = Aristotle
| birth_date = 384 BC {{longitem|padding-top:0;line-height:1.4em
|[[Stagira (ancient city)|Stagira]],<br/>Chalcidice ([[Chalkidiki]])}}
}}"""

APOLLO_8 = """{{Infobox spaceflight
| name = Apollo 8
| mission_duration = 6 days, 3 hours, 42 minutes
| orbit_period = 2 hours
}}"""
APOLLO_11 = """{{Infobox spaceflight
| name = Apollo 11
| mission_duration = 8 days, 3 hours, 18 minutes, 35 seconds
| orbit_period = 2 hours
}}"""


def _article(title: str, box: str = "", text: str = "", **kw: object) -> MemoryArticle:
    lead = text or f"{title} is an article of the test graph about {title}."
    return MemoryArticle(title, [("", lead)], infobox=box, **kw)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def graph() -> MemoryGraph:
    return MemoryGraph(
        [
            _article("Alabama", ALABAMA, categories=["States of the United States"]),
            _article("Alaska", ALASKA, categories=["States of the United States"]),
            _article("Algeria", ALGERIA, categories=["Countries in Africa"]),
            _article("Angola", ANGOLA, categories=["Countries in Africa"]),
            _article("Albert Einstein", EINSTEIN, categories=["1879 births"]),
            _article("America the Beautiful", SONG),
            _article("Aristotle", ARISTOTLE, categories=["384 BC births"]),
            _article("Albania", ALBANIA, categories=["Countries in Europe"]),
            _article("Actrius", ACTRIUS, categories=["1997 films"]),
            _article("Abraham Lincoln", LINCOLN, categories=["1809 births"]),
            _article("Animal Farm", ANIMAL_FARM, categories=["1945 novels"]),
            _article("Apollo 8", APOLLO_8, categories=["1968 in spaceflight"]),
            _article("Apollo 11", APOLLO_11, categories=["1969 in spaceflight"]),
            _article("Luanda", text="Luanda is the capital and largest city of Angola."),
            _article("Montgomery, Alabama", text="Montgomery is the capital of Alabama."),
            _article("Juneau, Alaska", text="Juneau is the capital of Alaska."),
            _article("Anchorage, Alaska", text="Anchorage is the largest city of Alaska."),
            _article("Mileva Marić", text="Mileva Marić was a Serbian physicist."),
        ],
        redirects={"Montgomery": "Montgomery, Alabama", "Einstein": "Albert Einstein"},
    )


@pytest.fixture(scope="module")
def linker(graph: MemoryGraph) -> QuestionEntityLinker:
    return QuestionEntityLinker(graph)


def ask(graph: MemoryGraph, linker: QuestionEntityLinker, text: str) -> RetrievalResult:
    return FactRetriever(graph).search(Question(text, link=linker.link_any_case))


def candidate_keys(graph: MemoryGraph, linker: QuestionEntityLinker, text: str) -> list[str]:
    """The keys of the fact candidates of ``text``, best first."""
    question = Question(text, link=linker.link_any_case)
    return [c.key for c in FactRetriever(graph).candidates(question)]


def answer(graph: MemoryGraph, linker: QuestionEntityLinker, text: str) -> str | None:
    found = ask(graph, linker, text)
    return found.evidence[-1].fact.answer if found.evidence and found.evidence[-1].fact else None


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What is the capital of Alabama?", "Montgomery"),
        ("what's the capital of angola", "Luanda"),
        ("What currency does Angola use?", "Kwanza"),
        ("Who was Albert Einstein's doctoral advisor?", "Alfred Kleiner"),
        ("When did Alabama become a state?", "December 14, 1819"),
        # the noun asked beats the verb ("wrote"), which the writer's key also means
        ("Who wrote the music for America the Beautiful?", "Samuel A. Ward"),
        ("Who wrote the lyrics to America the Beautiful?", "Katharine Lee Bates"),
        # the latest of two keys that answer alike, not the census of 2013
        ("How many people live in Algeria?", "40,400,000"),
        # an ordinal picks its item of a list
        ("Who was Einstein's first wife?", "Mileva Marić"),
        ("who was einstein's 2nd wife", "Elsa Löwenthal"),
        # one fact gives when and by whom: "who" takes the name, "when" the date
        ("who was the first publisher of animal farm", "Secker and Warburg"),
        ("when was animal farm published", "17 August 1945"),
        # for where: the place itself, not the whole value with its date
        ("Where was Aristotle born?", "Stagira"),
        # and for when, the year the box wrote before the links
        ("When was Aristotle born?", "384 BC"),
        # a box's numbered rows: the row's title names its other keys
        ("albania prime minister", "Edi Rama"),
        ("who is the president of albania", "Bujar Nishani"),
        ("when did albania become independent from the ottoman empire", "28 November 1912"),
        # a linked article (the director) is never a date
        ("when was actrius released", "17 January 1997"),
        # a verb the table does not hold meets its key by their stem
        ("who distributed actrius", "Buena Vista International"),
    ],
)
def test_a_fact_answers_the_question_its_relation_names(
    graph: MemoryGraph, linker: QuestionEntityLinker, question: str, expected: str
) -> None:
    assert answer(graph, linker, question) == expected


def test_a_numbered_row_is_named_by_its_title_and_a_unit_is_no_row(graph: MemoryGraph) -> None:
    labels = row_labels(list(group_facts(graph.facts_of(["Albania"])).values()))
    assert labels[("Albania", "", "leadername2")] == "Prime Minister leader name"
    assert labels[("Albania", "", "leadertitle2")] == "leader title"
    assert labels[("Albania", "", "establisheddate1")].startswith("Independence from the Ottoman")
    assert labels[("Albania", "", "areakm2")] == "area km2"  # "2" is a power, not row 2


def test_a_key_written_run_together_is_read_as_words() -> None:
    # old boxes name parameters without separators; the embedder and the relation table
    # read a key's name as words ("how often" meets "frequency", "buried" "burial")
    assert key_label("placeofburial") == "place of burial"
    assert key_label("vicepresident2") == "vice president"
    assert key_label("Wimbledonresult") == "wimbledon result"
    assert key_label("altname") == "alt name"
    # a word stays whole, and so does a run no dictionary words write
    assert key_label("frequency") == "frequency" and key_label("birthplace") == "birthplace"
    assert split_run_together("xqzvbnmwp") == ["xqzvbnmwp"]
    assert "burial" in key_terms("placeofburial", "placeofburial")


def test_an_empty_parameter_is_no_candidate(
    graph: MemoryGraph, linker: QuestionEntityLinker
) -> None:
    keys = candidate_keys(graph, linker, "what is the film name of actrius")
    assert "director" in keys and "filmname" not in keys


def test_a_fact_naming_its_own_subject_is_no_candidate(
    graph: MemoryGraph, linker: QuestionEntityLinker
) -> None:
    # "Abraham Lincoln — president: Abraham Lincoln" (the sample's cabinet box names
    # whose cabinet it is) restates the subject: it answered "who was president after
    # lincoln" with Lincoln himself, in bold
    keys = candidate_keys(graph, linker, "who was president after abraham lincoln")
    assert "president" in {r.key for r in graph.facts_of(["Abraham Lincoln"])}
    assert keys == ["successor1"]
    assert answer(graph, linker, "who was president after abraham lincoln") != "Abraham Lincoln"


def test_a_fact_of_links_alone_answers_no_date_and_no_number(
    graph: MemoryGraph, linker: QuestionEntityLinker
) -> None:
    # "when was animal farm written": the author (an article) is never a date
    keys = candidate_keys(graph, linker, "when was animal farm written")
    assert "published" in keys and "author" not in keys
    assert "author" in candidate_keys(graph, linker, "who wrote animal farm")


def test_fact_evidence_is_cited_like_a_section(
    graph: MemoryGraph, linker: QuestionEntityLinker
) -> None:
    (ev,) = ask(graph, linker, "What is the capital of Alabama?").evidence
    assert (ev.title, ev.heading, ev.source) == ("Alabama", "infobox: capital", "fact")
    assert ev.content == "Alabama — capital: Montgomery."
    assert ev.fact is not None and ev.fact.rows[0].target == "Montgomery, Alabama"
    assert ev.fact.confidence >= SHOW_THRESHOLD


def test_two_hops_the_other_way_through_a_fact_that_names_the_entity(
    graph: MemoryGraph, linker: QuestionEntityLinker
) -> None:
    found = ask(graph, linker, "What is the currency of the country whose capital is Luanda?")
    via, fact = found.evidence
    assert (via.title, via.fact and via.fact.key) == ("Angola", "capital")
    assert fact.fact is not None and (fact.fact.answer, fact.fact.hop) == ("Kwanza", 2)
    # a second hop is less sure than a first
    assert fact.fact.confidence < 1.0


def test_a_choice_reads_each_options_fact(graph: MemoryGraph, linker: QuestionEntityLinker) -> None:
    found = ask(graph, linker, "Is Algeria or Angola bigger?")
    assert [(e.title, e.fact and e.fact.key) for e in found.evidence] == [
        ("Algeria", "areakm2"),
        ("Angola", "areakm2"),
    ]
    items = list(enumerate(found.evidence, 1))
    question = Question("Is Algeria or Angola bigger?", link=linker.link_any_case)
    reading = read_evidence(question, items)
    assert reading.short_answer == "Algeria"
    first = ask(graph, linker, "Which became a US state first, Alabama or Alaska?")
    reading = read_evidence(
        Question("Which became a US state first, Alabama or Alaska?"),
        list(enumerate(first.evidence, 1)),
    )
    assert reading.short_answer == "Alabama"
    # the options' type ("which country") names no fact compared, typed with or without
    # the comma
    for typed in (
        "which country is bigger algeria or angola",
        "Which country is bigger, Algeria or Angola?",
    ):
        found = ask(graph, linker, typed)
        assert [(e.title, e.fact and e.fact.key) for e in found.evidence] == [
            ("Algeria", "areakm2"),
            ("Angola", "areakm2"),
        ], typed


def test_a_choice_compares_durations_its_comparative_names(
    graph: MemoryGraph, linker: QuestionEntityLinker
) -> None:
    # "longer" and "shorter" measure a duration too; "lasted" is no key, so the
    # comparative names the facts compared, and a duration in parts is a value
    for typed, gold in (
        ("Which lasted longer, Apollo 8 or Apollo 11?", "Apollo 11"),
        ("Which mission was shorter, Apollo 8 or Apollo 11?", "Apollo 8"),
    ):
        found = ask(graph, linker, typed)
        assert [(e.title, e.fact and e.fact.key) for e in found.evidence] == [
            ("Apollo 8", "missionduration"),
            ("Apollo 11", "missionduration"),
        ], typed
        reading = read_evidence(Question(typed), list(enumerate(found.evidence, 1)))
        assert (reading.short_answer, reading.source) == (gold, "facts compared"), typed


def test_no_fact_for_a_relation_no_key_names(
    graph: MemoryGraph, linker: QuestionEntityLinker
) -> None:
    assert ask(graph, linker, "What is the state bird of Alaska?").evidence == []
    assert ask(graph, linker, "Is Alabama landlocked?").evidence == []  # yes/no: not facts


def test_short_value_keeps_a_date_for_when_and_a_number_for_how_many(
    graph: MemoryGraph,
) -> None:
    rows = [r for r in graph.facts_of(["Alabama"]) if r.key == "admittancedate"]
    assert short_value(rows, AnswerKind.DATE) == "December 14, 1819"
    rows = [r for r in graph.facts_of(["Algeria"]) if r.key == "areakm2"]
    assert short_value(rows, AnswerKind.NUMBER).replace(",", "").startswith("2381741")


def _items(
    key: str, value: str, *items: tuple[str, str], article: str = "Subject"
) -> list[FactRow]:
    return [
        FactRow(f"1.{i}", article, "box", "", key, key, value, i, item, kind, "", None, "", "", "")
        for i, (item, kind) in enumerate(items)
    ]


def test_a_date_written_inside_a_value_answers_when_and_end_takes_the_last() -> None:
    war = _items(
        "date",
        "April 19, 1775 – September 3, 1783; Ratification effective: May 12, 1784",
        ("April 19, 1775 – September 3, 1783", "text"),
        ("Ratification effective: May 12, 1784", "text"),
    )
    assert short_value(war, AnswerKind.DATE, "when did the war begin") == "April 19, 1775"
    # the end of the range the first item writes, not the ratification after it
    assert short_value(war, AnswerKind.DATE, "When did the war end?") == "September 3, 1783"
    won = _items("wimbledonresult", "W (1992)", ("W (1992)", "text"))
    assert short_value(won, AnswerKind.DATE, "what year did agassi win wimbledon") == "1992"
    # a question that asks no date still reads the value
    assert short_value(won, AnswerKind.ENTITY, "how did he do at wimbledon") == "W"


@pytest.mark.parametrize("typed", [False, True], ids=["loaded before 2026-12-01", "typed years"])
def test_an_ancient_year_answers_when_and_the_places_after_it_where(typed: bool) -> None:
    """Aristotle's box: before, ``322 BC (aged 62)`` was a number and the year before the
    links was no item (the value's text holds it); a graph loaded since types both years."""
    died = _items("deathdate", "322 BC (aged 62); Euboea", ("322 BC (aged 62)", "number"))
    born = _items(
        "birthdate",
        "384 BC Stagira; Chalcidice (Chalkidiki)",
        *([("384 BC", "year")] if typed else []),
        ("Stagira", "link"),
        ("Chalkidiki", "link"),
    )
    if typed:
        died = [dataclasses.replace(r, kind="year") for r in died]
    assert short_value(died, AnswerKind.DATE, "what year did aristotle die") == "322 BC"
    assert short_value(born, AnswerKind.DATE, "when was aristotle born") == "384 BC"
    assert short_value(born, AnswerKind.PLACE, "where was aristotle born") == "Stagira"


def test_a_list_cut_short_says_so_and_one_that_fits_does_not() -> None:
    """Three of Angola's six national languages in bold must not read as all of them."""
    six = ["Kikongo", "Chokwe", "Umbundu", "Kimbundu", "Nganguela", "Kwanyama"]
    langs = _items("nationallanguages", "; ".join(six), *[(n, "link") for n in six])
    assert short_value(langs, AnswerKind.ENTITY, "what language is spoken in angola") == (
        "Kikongo, Chokwe, Umbundu, …"
    )
    three = _items("officiallanguages", "Kikongo; Chokwe; Umbundu", *[(n, "link") for n in six[:3]])
    assert short_value(three, AnswerKind.ENTITY) == "Kikongo; Chokwe; Umbundu"
    # who, of a value that also writes a date: the people, cut short the same way
    authors = _items(
        "author",
        "A; B; C; D (1 May 1990)",
        *[(n, "link") for n in "ABCD"],
        ("1 May 1990", "date"),
    )
    assert short_value(authors, AnswerKind.PERSON) == "A, B, C, …"


def test_of_a_list_the_one_item_that_writes_the_question_s_word_is_the_answer() -> None:
    known = _items(
        "knownfor",
        "Baum–Connes conjecture; Noncommutative geometry; Operator algebras",
        ("Baum–Connes conjecture", "link"),
        ("Noncommutative geometry", "link"),
        ("Operator algebra", "link"),
        article="Alain Connes",  # the subject's own words ("Connes") are not the question's
    )
    asked = "What branch of geometry is Alain Connes known for?"
    assert short_value(known, AnswerKind.ENTITY, asked) == "Noncommutative geometry"
    # none, or more than one, written: the list as before
    assert short_value(known, AnswerKind.ENTITY, "what is he known for").startswith("Baum")
    studied = _items(
        "almamater",
        "University of Göttingen; University of Jena",
        ("University of Göttingen", "link"),
        ("University of Jena", "link"),
    )
    assert "Göttingen" in short_value(studied, AnswerKind.ENTITY, "which university")
    assert "Jena" in short_value(studied, AnswerKind.ENTITY, "which university")


def test_places_joined_by_and_are_one_answer_to_where() -> None:
    region = _items(
        "region", "South and Southeast Asia", ("South", "link"), ("Southeast Asia", "link")
    )
    assert short_value(region, AnswerKind.PLACE, "where is it spoken") == "South and Southeast Asia"
    born = _items("birthplace", "Stagira, Chalcidice", ("Stagira", "link"), ("Chalcidice", "link"))
    assert short_value(born, AnswerKind.PLACE, "where was he born") == "Stagira"


class _Fixed(Retriever):
    mode = "fixed"

    def search(self, query: object, top_k: int = 10) -> RetrievalResult:
        text = "Montgomery is the capital of Alabama."
        ev = Evidence("Montgomery, Alabama::0000", "Montgomery, Alabama", "", "", text, 0.5)
        return RetrievalResult(str(query), [ev])


def test_with_facts_puts_the_facts_before_the_text(
    graph: MemoryGraph, linker: QuestionEntityLinker
) -> None:
    both = WithFacts(_Fixed(), FactRetriever(graph))
    found = both.search(Question("What is the capital of Alabama?", link=linker.link_any_case))
    assert [e.source for e in found.evidence] == ["fact", "semantic"]
    assert found.trace[0]["stage"] == "facts"


ARMED_FORCES = """{{Infobox national military
| name = Angolan Armed Forces
| active = 107,000
| reserve = 30,000
| conscription = 24 months
| minister = [[João Lourenço]]
}}"""


@pytest.fixture(scope="module")
def military() -> MemoryGraph:
    return MemoryGraph(
        [
            _article("Angola", ANGOLA, categories=["Countries in Africa"]),
            _article("Angolan Armed Forces", ARMED_FORCES, categories=["Military of Angola"]),
            _article("Luanda", text="Luanda is the capital and largest city of Angola."),
        ]
    )


def _found(graph: MemoryGraph, text: str, found: object) -> Evidence | None:
    question = Question(text, link=QuestionEntityLinker(graph).link_any_case)
    result = FactRetriever(graph).search(question, 10, found)  # type: ignore[arg-type]
    return result.evidence[-1] if result.evidence else None


def test_the_found_articles_facts_answer_what_the_topics_facts_do_not(
    military: MemoryGraph,
) -> None:
    # Angola's box says nothing of troops: the box of the article the search found does
    asked = "how many active troops does angola's military have"
    assert _found(military, asked, ()) is None
    ev = _found(military, asked, ["Angola", "Angolan Armed Forces", "Luanda"])
    assert ev is not None and ev.fact is not None
    assert (ev.title, ev.fact.answer, ev.fact.searched) == ("Angolan Armed Forces", "107,000", True)
    assert not ev.of_the_topic  # the grounding and the support leave it out


def test_the_topics_fact_that_explains_the_question_is_kept_and_found_is_not_read(
    military: MemoryGraph,
) -> None:
    asked: list[int] = []

    def titles() -> list[str]:  # what the text search gives, read only when needed
        asked.append(1)
        return ["Angolan Armed Forces"]

    ev = _found(military, "what's the capital of angola", titles)
    assert ev is not None and ev.fact is not None
    assert (ev.fact.answer, ev.fact.searched, ev.of_the_topic) == ("Luanda", False, True)
    assert asked == []
    # a found article's key must say what is asked: none of these does
    assert _found(military, "who founded angola", titles) is None
    assert asked == [1]


def test_a_found_articles_fact_alone_does_not_make_the_evidence_answer(
    military: MemoryGraph,
) -> None:
    asked = "how many active troops does angola's military have"
    ev = _found(military, asked, ["Angolan Armed Forces"])
    assert ev is not None and ev.fact is not None and ev.fact.searched
    unrelated = Evidence("Luanda::0000", "Luanda", "", "", "Luanda is a city.", 0.3)
    question = "how many active troops does mozart's military have"
    reading = read_evidence(question, [(1, ev), (2, unrelated)])
    assert not reading.answerable and reading.short_answer is None and reading.source != "fact"
    # the same fact of a named topic answers
    named = dataclasses.replace(ev, fact=dataclasses.replace(ev.fact, searched=False))
    assert read_evidence(question, [(1, named), (2, unrelated)]).answerable

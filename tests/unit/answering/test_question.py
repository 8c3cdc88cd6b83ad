"""What a question asks: kind, relation, options and chains, on hand-written questions."""

from __future__ import annotations

import pytest

from kg_agent.answering import AnswerKind, analyse
from kg_agent.language.shape import stem


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("When did Apollo 11 land?", AnswerKind.DATE),
        ("In what year was the Hubble Space Telescope launched?", AnswerKind.DATE),
        ("What is the date of death of Ada Lovelace?", AnswerKind.DATE),
        ("How many vacuum tubes did ENIAC contain?", AnswerKind.NUMBER),
        ("What is the population of Reykjavik?", AnswerKind.NUMBER),
        ("What percentage of Iceland is covered by glaciers?", AnswerKind.NUMBER),
        # a fragment asks for a number without a wh-word; "how" with any measure
        ("number of moons of jupiter", AnswerKind.NUMBER),
        ("reykjavik population 2020", AnswerKind.NUMBER),
        ("how fast does a cheetah run", AnswerKind.NUMBER),
        ("how deep is lake baikal", AnswerKind.NUMBER),
        ("who increased the number of moons known", AnswerKind.PERSON),
        ("animal farm, year published?", AnswerKind.DATE),
        ("golden gate bridge opening date", AnswerKind.DATE),
        ("What is the birthday of the first programmer?", AnswerKind.DATE),
        ("Where was Alan Turing born?", AnswerKind.PLACE),
        ("What is the place of birth of the director of film Brazil?", AnswerKind.PLACE),
        ("Which country is Lake Titicaca in?", AnswerKind.PLACE),
        ("Who designed the Analytical Engine?", AnswerKind.PERSON),
        ("Is Lima the capital of Peru?", AnswerKind.YES_NO),
        ("Which film came out first, Alien or Blade Runner?", AnswerKind.CHOICE),
        ("Who was born first out of Ada Lovelace and Charles Babbage?", AnswerKind.CHOICE),
        ("What company built the Colossus computer?", AnswerKind.ENTITY),
    ],
)
def test_answer_kind(question: str, kind: AnswerKind) -> None:
    assert analyse(question).kind is kind


@pytest.mark.parametrize(
    ("question", "noun"),
    [
        ("Which numbers are named after Bernoulli?", "numbers"),
        ("What company built the Colossus computer?", "company"),
        ("What is the largest state in New England?", ""),
        ("Which of Jonny Craig and Pete Doherty sang in more bands?", ""),
        ("What did Ada Lovelace write about?", ""),
    ],
)
def test_the_noun_asked_for_is_never_a_verb_or_a_particle(question: str, noun: str) -> None:
    assert analyse(question).noun == noun


def test_a_choice_names_its_options_and_which_end_wins() -> None:
    first = analyse("Which film came out first, Alien or Remorse, A Story Of Love?")
    assert first.options == ("Alien", "Remorse, A Story Of Love")
    assert first.latest is False
    later = analyse("Who was born later, Ada Lovelace or Charles Babbage?")
    assert later.options == ("Ada Lovelace", "Charles Babbage")
    assert later.latest is True
    assert "birth" in later.relation
    assert analyse("Which film is from Japan, Summer Wars or Akira?").latest is None
    quoted = analyse('Which movie was filmed first "The Guest" or "You\'re Next"?')
    assert quoted.options == ("The Guest", "You're Next")


def test_a_choice_typed_without_a_comma_reads_its_options_after_the_comparison() -> None:
    typed = analyse("which mission lasted longer apollo 8 or apollo 11")
    assert (typed.kind, typed.options) == (AnswerKind.CHOICE, ("apollo 8", "apollo 11"))
    colon = analyse("Who was born first: Einstein or Schopenhauer?")
    assert colon.options == ("Einstein", "Schopenhauer") and colon.latest is False
    # the first comparative, not one inside an option ("john more")
    assert analyse("who was born first john more or thomas less").options == (
        "john more",
        "thomas less",
    )
    # a comma after the comparison still starts the options ("The First 7Th Night")
    film = analyse("Which film was released first, The First 7Th Night or Aansoo Ban Gaye Phool?")
    assert film.options == ("The First 7Th Night", "Aansoo Ban Gaye Phool")
    # "longer than X or not" names no options
    assert analyse("is the amazon longer than the nile or not").options == ()


def test_a_yes_no_form_with_two_names_is_a_choice() -> None:
    born = analyse("Was Louise Of Hesse-Kassel or Viktor Šiljeg born first?")
    assert born.kind is AnswerKind.CHOICE
    assert born.options == ("Louise Of Hesse-Kassel", "Viktor Šiljeg")
    assert born.latest is False
    assert analyse("Did Ada Lovelace or Lord Byron die later?").latest is True
    # something said of both names, no comparative: a choice by their descriptions
    public = analyse("Is Rutgers University or Brown University public?")
    assert public.options == ("Rutgers University", "Brown University")
    assert public.latest is None
    assert analyse("Is Lima or Cusco the capital of Peru?").options == ("Lima", "Cusco")
    # no name after "or", or nothing said after it: yes/no as before
    for question in (
        "Was Ada Lovelace a mathematician or a writer?",
        "Was it Ada Lovelace or Lord Byron?",
    ):
        assert analyse(question).kind is AnswerKind.YES_NO, question


def test_options_lose_stray_punctuation_and_a_lowercase_article() -> None:
    bulldog = analyse(
        'Which Bulldog includes breeds such as "Standard" and "Classic," the French '
        "Bulldog or the American Bulldog?"
    )
    assert bulldog.options == ("French Bulldog", "American Bulldog")
    film = analyse("Which film came out first, The Deer Hunter or the Dark River?")
    assert film.options == ("The Deer Hunter", "Dark River")


def test_a_chain_has_two_relation_phrases_and_a_single_hop_one() -> None:
    chain = analyse("Where was the director of film Bollywood Calling born?")
    assert chain.phrases == (frozenset({"direct"}), frozenset({"birth"}))
    assert chain.chained
    one = analyse("Who is the paternal grandfather of Jordan II of Capua?")
    assert len(one.phrases) == 1  # "paternal grandfather" is one relation, written together
    assert not one.chained


def test_names_in_the_question_leave_out_the_wh_word() -> None:
    shape = analyse("Bill Nelson flew on a Space Shuttle launched in what year?")
    assert "Bill Nelson" in shape.named
    assert "Space Shuttle" in shape.named
    assert not any(n.lower().startswith(("who", "which")) for n in shape.named)


def test_stems_join_the_forms_a_relation_is_written_in() -> None:
    assert stem("born") == stem("birth") == "birth"
    assert stem("died") == stem("death")
    assert stem("directed") == stem("director") == "direct"
    # kinship has two sides, each its own stem; a question's cues hold both
    assert (stem("father"), stem("son")) == ("parent", "child")
    assert analyse("Who is the father of Ben Stone?").cues >= {"parent", "child"}


def test_options_come_from_the_last_comma_and_between_needs_a_comparison() -> None:
    shape = analyse("Which film, directed by Jo Smith, came out first, Alpha or Beta?")
    assert shape.options == ("Alpha", "Beta")
    assert analyse("What is the distance between Paris and London?").kind is not AnswerKind.CHOICE
    assert analyse("Who was born first between Ada Lovelace and Alan Turing?").options == (
        "Ada Lovelace",
        "Alan Turing",
    )


def test_a_possessive_names_the_first_hop_wherever_it_is_written() -> None:
    died = analyse("When did Cristina Rodríguez (Noble)'s father die?")
    assert died.possessed == {"parent"}
    assert died.phrases == ({"parent"}, {"death"})  # "father die": two phrases, not one
    assert "s" not in died.relation  # the possessive ending is not a word
    assert died.chained
    place = analyse("Where was the place of death of Licinia Eudoxia's father?")
    assert place.possessed == {"parent"} and place.named == ("Licinia Eudoxia",)
    # a possessed noun with its qualifiers; answered by the hop itself, so no chain
    grand = analyse("Who is Henriette Of France's maternal grandfather?")
    assert grand.possessed == {"maternal", "grandfath"}
    assert not grand.chained
    # the kind asks for the possessed one's fact: a chain with no outer phrase
    assert analyse("Which country Anthony I, Count Of Ligny's father is from?").chained
    assert analyse("Who was Charles' wife?").possessed == {"spouse"}
    # an ordinal belongs to the name, not to the relation
    assert analyse("Who is Thomas Stafford, 3Rd Earl Of Stafford's father?").relation == {"parent"}

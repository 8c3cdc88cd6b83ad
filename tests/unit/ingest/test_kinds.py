"""Entity kinds from box types first, categories second; the tables; real sample articles."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg_agent.ingest.infobox import extract_boxes
from kg_agent.ingest.kinds import (
    BOX_KIND_WORDS,
    BOX_KINDS,
    CATEGORY_KINDS,
    KINDS,
    entity_kind,
    kind_of_box,
    kind_of_categories,
)
from kg_agent.ingest.wikitext import parse_wikitext
from tests.unit.ingest.test_infobox import ENWIKI, sample_pages


def test_every_table_row_names_a_known_kind() -> None:
    assert set(BOX_KINDS.values()) <= set(KINDS)
    assert set(BOX_KIND_WORDS.values()) <= set(KINDS)
    assert {kind for _pattern, kind, _weight in CATEGORY_KINDS} <= set(KINDS)


@pytest.mark.parametrize(
    ("box", "kind"),
    [
        ("person", "person"),
        ("officeholder", "person"),
        ("scientist", "person"),
        ("musical artist", "person"),
        ("royalty", "person"),
        ("football biography", "person"),
        ("Infobox ice hockey player", "person"),
        ("settlement", "place"),
        ("Infobox settlement", "place"),
        ("Infobox_Country", "place"),
        ("u.s. state", "place"),
        ("island", "place"),
        ("river", "place"),
        ("mountain", "place"),
        ("company", "organisation"),
        ("organization", "organisation"),
        ("university", "organisation"),
        ("political party", "organisation"),
        ("sports team", "organisation"),
        ("book", "work"),
        ("film", "work"),
        ("album", "work"),
        ("song", "work"),
        ("video game", "work"),
        ("television", "work"),
        ("software", "work"),
        ("military conflict", "event"),
        ("spaceflight", "event"),
        ("election", "event"),
        ("olympic games", "event"),
        ("taxobox", "taxon"),
        ("Speciesbox", "taxon"),
        ("automatic taxobox", "taxon"),
        ("disease", "other"),
        ("language family", "other"),
        ("person/wikidata", "person"),
        ("spaceflight/ip", "event"),
    ],
)
def test_box_types_name_kinds(box: str, kind: str) -> None:
    assert kind_of_box(box) == kind


def test_unknown_box_types_name_no_kind() -> None:
    assert kind_of_box("weather") is None
    assert kind_of_box("") is None


@pytest.mark.parametrize(
    ("categories", "kind"),
    [
        (["1879 births", "1955 deaths", "German physicists"], "person"),
        (["Living people", "American male tennis players"], "person"),
        (["People from Ulm"], "person"),
        (["Capitals in Africa"], "place"),
        (["Countries in Africa", "Member states of the United Nations"], "place"),
        (["Populated places established in 1820"], "place"),
        (["Cities in Texas"], "place"),
        (["States of the United States"], "place"),
        (["Software companies of the United States"], "organisation"),
        (["Organizations established in 1970"], "organisation"),
        (["1945 novels", "Dystopian novels"], "work"),
        (["1997 films", "Films directed by Ventura Pons"], "work"),
        (["1969 albums"], "work"),
        (["1895 songs"], "work"),
        (["Secker & Warburg books"], "work"),
        (["Battles of the American Civil War"], "event"),
        (["Wars of independence", "1770s conflicts"], "event"),
        (["2016 elections in Europe"], "event"),
        (["Recurring events established in 1896"], "event"),
        (["Animals described in 1766", "Mammals of Africa"], "taxon"),
        (["Trilobite genera"], "taxon"),
        (["Language families"], "other"),
        (["Endosymbiotic events"], "other"),
        (["Lists of social scientists", "Anthropologists"], "other"),
        ([], "other"),
    ],
)
def test_categories_vote_for_kinds(categories: list[str], kind: str) -> None:
    assert kind_of_categories(categories) == kind


def test_the_box_decides_before_the_categories() -> None:
    assert entity_kind(["book"], ["1879 births"]) == "work"
    # An unknown box leaves the decision to the categories, a known "other" does not.
    assert entity_kind(["weather"], ["1879 births"]) == "person"
    assert entity_kind(["disease"], ["1879 births"]) == "other"
    # The first box that names a kind wins; an "other" box before it does not stop it.
    assert entity_kind(["u.s. state symbols", "u.s. state"], []) == "place"
    assert entity_kind(["officeholder", "u.s. cabinet"], []) == "person"
    assert entity_kind([], []) == "other"


@pytest.mark.parametrize(
    ("title", "kind"),
    [
        ("Albert Einstein", "person"),
        ("Aldous Huxley", "person"),
        ("Abraham Lincoln", "person"),
        ("Achilles", "person"),  # no box: "People of the Trojan War"
        ("Algeria", "place"),
        ("Alabama", "place"),
        ("Atlantic Ocean", "place"),  # no box: "Oceans"
        ("American National Standards Institute", "organisation"),
        ("American Football Conference", "organisation"),
        ("Animal Farm", "work"),
        ("Actrius", "work"),
        ("An American in Paris", "work"),  # no box: "1928 compositions"
        ("Apollo 11", "event"),  # spaceflight: an event in BOX_KINDS
        ("American Revolutionary War", "event"),
        ("Aardvark", "taxon"),
        ("Amphibian", "taxon"),
        ("Autism", "other"),
        ("Afroasiatic languages", "other"),
        ("Algorithm", "other"),
        ("List of anthropologists", "other"),
    ],
)
def test_sample_articles_get_their_kinds(shared_data_dir: Path, title: str, kind: str) -> None:
    path = shared_data_dir / "wiki" / ENWIKI
    if not path.exists():
        pytest.skip(f"{path} not found: the sample-article kinds need the English sample")
    wikitext = sample_pages(path)[title]
    boxes = [b.type for b in extract_boxes(wikitext)]
    categories = parse_wikitext(title, wikitext).categories
    assert entity_kind(boxes, categories) == kind

"""A thing's country from its lead sentence, and whether two things share one.

The sentences are written here the way Wikipedia writes leads.
"""

from __future__ import annotations

import pytest

from kg_agent.answering import read_evidence
from kg_agent.language.nationality import countries, same_country
from kg_agent.retrieval.base import Evidence


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        # a nationality in what the subject is; the table's and the stem's
        ("Mara Velde (born 3 May 1970) is an American sculptor.", {"united states"}),
        ("The Long Field is a 1994 Italian- American drama film.", {"italy", "united states"}),
        ("Kolva is an East German film.", {"germany"}),
        ("Tomas Ruiz was an Argentine footballer.", {"argentina"}),
        ("Kenora is a western province of Canada.", {"canada"}),
        # where one was born is not what one is
        ("Vera Lind was a Russian-born American novelist.", {"united states"}),
        ("Olaf Berg was a British- born American film director.", {"united states"}),
        ("Hollin Works was a British shipbuilding company.", {"united kingdom"}),
        # nothing said after the description ends: "directed by" another nation's person
        ("Blue Hour is a 1960 Iranian film directed by a French director.", {"iran"}),
        # the last place of an "in" chain, or of a chain of names
        ("The Varna is a tributary of the river Oltu in Romania.", {"romania"}),
        ("Pelko is a village in the north of the island of Hvar, Croatia.", {"croatia"}),
        # every chain's last place: a region is one more name
        (
            "Dunmore is a creek, long, in Colorado in the United States.",
            {"colorado", "united states"},
        ),
        ("Ossa is a mountain in the Andes of Peru, about high.", {"peru"}),
        ("Kirov is the centre of Kirovsky District of Kaluga Oblast, Russia.", {"russia"}),
        ("The Lone Hill School is a school on 12 Main Road, Aurora, Ontario, Canada.", {"canada"}),
        # a month is no place; the subject's own name is not its country
        ("The Pact is a thriller released in May 2002.", set()),
        ("Daughter of Anna is a 2013 Nigerian film.", {"nigeria"}),
        ("Mina Holt is a businesswoman and model.", set()),
    ],
)
def test_countries_a_lead_gives(sentence: str, expected: set[str]) -> None:
    own = sentence.split(" is ")[0].split(" was ")[0].split(" (")[0]
    assert countries(sentence, own) == expected


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ({"canadian"}, {"canada"}, True),
        ({"italian"}, {"italy"}, True),
        ({"peruvian"}, {"peru"}, True),
        ({"canada east"}, {"canadian"}, True),
        ({"united states", "japanese"}, {"united states"}, True),
        ({"austria"}, {"australia"}, False),
        # a region that is no country decides nothing against another country
        ({"new mexico"}, {"mexico"}, None),
        ({"texas"}, {"united states"}, None),
        ({"texas"}, {"texas", "united states"}, True),
        ({"south korea"}, {"south africa"}, False),
        ({"united kingdom"}, {"united states"}, False),
        ({"german"}, set(), None),
    ],
)
def test_same_country(a: set[str], b: set[str], same: bool | None) -> None:
    assert same_country(a, b) is same


def ev(title: str, content: str) -> Evidence:
    return Evidence(f"{title}::0000", title, "", "", content, 0.5, source="entity")


def test_two_places_and_two_films_are_compared_by_country() -> None:
    varna = ev("Varna (river)", "The Varna is a tributary of the river Oltu in Romania.")
    sava = ev("Sava Mica", "The Sava Mica is a river in Tulcea County, Romania.")
    creek = ev("Dunmore Creek", "Dunmore Creek is a creek, long, in Colorado in the United States.")
    q = "Are {} and {} located in the same country?"
    yes = read_evidence(q.format("Varna (river)", "Sava Mica"), list(enumerate([varna, sava], 1)))
    assert yes.short_answer == "yes"
    no = read_evidence(q.format("Sava Mica", "Dunmore Creek"), list(enumerate([sava, creek], 1)))
    assert no.short_answer == "no"
    # a lead that gives no country decides nothing
    model = ev("Mina Holt", "Mina Holt (born 1984) is a businesswoman and model.")
    none = read_evidence(
        "Are Mina Holt and Sava Mica of the same nationality?",
        list(enumerate([model, sava], 1)),
    )
    assert none.short_answer is None
    # a country is not what every "the same" asks for
    family = read_evidence(
        "Are Varna (river) and Sava Mica in the same family?", list(enumerate([varna, sava], 1))
    )
    assert family.short_answer is None

"""Relatives of relatives, read step by step from hand-written Wikipedia-style evidence."""

from __future__ import annotations

from kg_agent.answering import read_evidence
from kg_agent.answering.kinship import follow, kin_path, title_for
from kg_agent.retrieval.base import Evidence
from tests.unit.answering.test_reader import ev as reader_ev
from tests.unit.answering.test_reader import numbered


def ev(title: str, content: str, source: str = "graph") -> Evidence:
    return reader_ev(title, content, source=source)


ADELAIDE = ev(
    "Adelaide of Burgundy, Duchess of Brabant",
    "Adelaide of Burgundy (c. 1233 – 23 October 1273) was a daughter of Hugh IV, Duke of "
    "Burgundy by his first wife Yolande of Dreux. She married Henry III, Duke of Brabant.",
    source="entity",
)
HUGH = ev(
    "Hugh IV, Duke of Burgundy",
    "Hugh IV of Burgundy (9 March 1213 – 27 October 1272) was Duke of Burgundy. Hugh was "
    "the son of Odo III, Duke of Burgundy and Alice of Vergy.",
)
YOLANDE = ev(
    "Yolande of Dreux",
    "Yolande of Dreux (1212 – 1248) was a daughter of Robert III, Count of Dreux and "
    "Aénor of Saint-Valéry.",
)


def test_the_word_for_a_relative_of_a_relative_is_unfolded() -> None:
    assert kin_path("Who is X's paternal grandfather?") == ("father", "father")
    assert kin_path("Who is the maternal grandmother of X?") == ("mother", "mother")
    assert kin_path("Who is the father-in-law of X?") == ("spouse", "father")
    assert kin_path("Who is X's father?") == ()


def test_a_grandparent_is_read_through_the_parents_article() -> None:
    items = numbered(ADELAIDE, HUGH, YOLANDE)
    paternal = read_evidence(
        "Who is Adelaide Of Burgundy, Duchess Of Brabant's paternal grandfather?", items
    )
    # the father written first ("daughter of A by his first wife B"), then his father,
    # with his style ("Odo III, Duke of Burgundy"), not the mother's line
    assert paternal.short_answer == "Odo III, Duke of Burgundy"
    assert paternal.short_cites == (1, 2)
    maternal = read_evidence(
        "Who is the maternal grandfather of Adelaide of Burgundy, Duchess of Brabant?", items
    )
    assert maternal.short_answer == "Robert III, Count of Dreux"
    assert maternal.short_cites == (1, 3)


def test_a_lower_case_style_before_the_mother_and_an_honorific_are_read() -> None:
    child = ev(
        "Henriette of France",
        "Henriette of France (14 August 1727 – 10 February 1752) was the second child of "
        "King Louis XV of France and queen consort Marie Leszczyńska.",
        source="entity",
    )
    mother = ev(
        "Marie Leszczyńska",
        "Marie Leszczyńska (23 June 1703 – 24 June 1768) was a queen of France. She was "
        "the daughter of King Stanisław I Leszczyński and Catherine Opalińska.",
    )
    reading = read_evidence(
        "Who is Henriette of France's maternal grandfather?", numbered(child, mother)
    )
    assert reading.short_answer == "Stanisław I Leszczyński"  # without "King"


def test_an_in_law_skips_a_clause_about_someone_else() -> None:
    wife = ev(
        "Elizabeth Howard, Countess of Effingham",
        "Elizabeth Howard (died 13 October 1791) was the wife of Thomas Howard, 2nd Earl "
        "of Effingham.",
        source="entity",
    )
    husband = ev(
        "Thomas Howard, 2nd Earl of Effingham",
        "He married Elizabeth Beckford, daughter of Peter Beckford, in 1745. He was the son "
        "of Francis Howard, 1st Earl of Effingham.",
    )
    reading = read_evidence(
        "Who is the father-in-law of Elizabeth Howard, Countess of Effingham?",
        numbered(wife, husband),
    )
    # "Elizabeth Beckford, daughter of Peter Beckford" speaks of the wife, not of him
    assert reading.short_answer == "Francis Howard, 1st Earl of Effingham"


def test_a_marriage_written_only_in_the_spouses_article_is_found() -> None:
    ramiro = ev(
        "Ramiro Sánchez",
        "Ramiro Sánchez of Monzón (1070 – 1130) was a noble kinsman of the kings of Navarre.",
        source="entity",
    )
    cristina = ev(
        "Cristina Rodríguez",
        "Cristina Rodríguez (born c. 1075) was a daughter of El Cid and Jimena Díaz. In 1099 "
        "she married Ramiro Sánchez.",
    )
    reading = read_evidence(
        "Who is the mother-in-law of Ramiro Sánchez?", numbered(ramiro, cristina)
    )
    assert reading.short_answer == "Jimena Díaz"
    assert reading.short_cites == (2,)


def test_a_step_the_evidence_does_not_write_gives_no_answer() -> None:
    sentences = {"A": ["A was a daughter of B."], "B": ["B was a king of somewhere."]}
    assert follow("A", ("father", "father"), sentences.__getitem__, ["A", "B"]) is None
    # the first step leads to a person without an article: nowhere to read the second
    assert follow("A", ("father", "father"), sentences.__getitem__, ["A"]) is None


def test_a_title_is_found_with_or_without_honorific_and_style() -> None:
    titles = ["Richard I of Capua", "Hugh IV, Duke of Burgundy", "Paris (film)"]
    assert title_for("Prince Richard I of Capua", titles) == "Richard I of Capua"
    assert title_for("Hugh IV", titles) == "Hugh IV, Duke of Burgundy"
    assert title_for("Paris", titles) == "Paris (film)"
    assert title_for("Hugh V", titles) is None

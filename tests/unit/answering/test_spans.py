"""Candidate spans: dates, numbers and names as English writes them."""

from __future__ import annotations

from kg_agent.language.spans import dates, duration, lifespan, names, numbers, year_of


def test_dates_in_their_usual_forms() -> None:
    text = "Born 14 March 1879 in Ulm, he moved on March 14, 1880, then in June 1895 and in 1900."
    assert [d.text for d in dates(text)] == ["14 March 1879", "March 14, 1880", "June 1895", "1900"]
    assert [d.text for d in dates("It flourished in the 16th century.")] == ["16th century"]
    # a year of an era, of any length: ancient history writes its years so
    text = "Aristotle died in 322 BC (aged 62); Pompeii was buried in AD 79, Rome founded 753 BCE."
    assert [d.text for d in dates(text)] == ["322 BC", "AD 79", "753 BCE"]
    assert [d.text for d in dates("He lived in the 5th century BC.")] == ["5th century BC"]
    assert dates("Windows CE 5.0 shipped.") == []  # a version, not a year
    assert numbers(text) == [n for n in numbers(text) if n.text == "62"]


def test_numbers_leave_dates_alone() -> None:
    text = "In 1946 ENIAC contained 17,468 vacuum tubes and weighed 27 tonnes."
    assert [n.text for n in numbers(text)] == ["17,468", "27"]


def test_names_split_at_commas_and_never_swallow_a_year() -> None:
    found = [
        n.text for n in names("He was born in Kuwait in 1981 and lives in Ramallah, West Bank.")
    ]
    assert found == ["He", "Kuwait", "Ramallah", "West Bank."]
    assert [n.text for n in names("Louis IX of France met the Count of Toulouse.")] == [
        "Louis IX of France",
        "Count of Toulouse.",
    ]
    assert "Apollo 11" in [n.text for n in names("The crew of Apollo 11 landed.")]
    # an elided particle glued to the next word is part of the name
    found = [n.text for n in names("Messi won the Ballon d'Or five times.")]
    assert found == ["Messi", "Ballon d'Or"]
    # a name ends where a date begins, whatever joins them ("on", "in")
    found = [n.text for n in names("He died in Beaufort on June 30, 1816.")]
    assert found == ["He", "Beaufort"]
    found = [n.text for n in names("It opened in Paris in March 1967.")]
    assert found == ["It", "Paris"]


def test_year_of_orders_dates() -> None:
    assert year_of("14 March 1879") == (1879, 3, 14)
    assert year_of("June 1895") == (1895, 6, 0)
    assert year_of("16th century") == (1500, 0, 0)
    assert year_of("March 14, 1880") < year_of("14 March 1881")  # type: ignore[operator]
    # before the common era, a year counts down
    assert year_of("384 BC") == (-384, 0, 0) and year_of("AD 79") == (79, 0, 0)
    assert year_of("384 BC") < year_of("322 BC") < year_of("AD 79")  # type: ignore[operator]
    assert year_of("5th century BC") < year_of("4th century BC")  # type: ignore[operator]


def test_a_lifespan_takes_a_year_alone_of_three_or_four_digits() -> None:
    def texts(text: str) -> tuple[str, str] | None:
        life = lifespan(text)
        return (life[0].text, life[1].text) if life else None

    assert texts("Otto (14 March 1920 – 2 April 1990) was") == ("14 March 1920", "2 April 1990")
    # medieval and ancient lives: a bare year that dates() alone does not take
    assert texts("Oswiu (612 – 15 February 670) was a king.") == ("612", "15 February 670")
    assert texts("Godfrey (910 – 971) was a count.") == ("910", "971")
    assert texts("Socrates (c. 470 – 399 BC) was a philosopher.") == ("470", "399 BC")
    assert texts("Onneca (c. 848 – after 890) was a princess.") == ("848", "890")
    # "born …, died …" without a dash, and two dates whose dash the text lost
    assert texts("Martino Finotto (born 11 November 1933 in Camporosso, died 13 August 2014)") == (
        "11 November 1933",
        "13 August 2014",
    )
    assert texts("John Farrow (10 February 190427 January 1963) was") == (
        "10 February 1904",
        "27 January 1963",
    )
    assert texts("Dorothea Jordan (22 November 17615 July 1816) was") == (
        "22 November 1761",
        "5 July 1816",
    )
    # a range of other numbers, or one date, is not a life
    assert texts("The book (pages 12 – 34) says so.") is None
    assert texts("Ada (born 1815) wrote it.") is None


def test_a_duration_in_parts_is_its_seconds_and_nothing_else_is_one() -> None:
    assert duration("6 days, 3 hours, 42 minutes") == 6 * 86_400 + 3 * 3_600 + 42 * 60
    assert duration("2 days and 4 hours") == duration("52 hours") == 187_200
    assert duration("100 minutes") == 6_000
    # a length, a bare number and a duration among other words are no duration
    assert duration("8163 m") is None
    assert duration("12") is None
    assert duration("about 3 days") is None

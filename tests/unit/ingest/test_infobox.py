"""Infobox facts: box detection, keys, value items and their types, robustness, and
real boxes of the English sample dump (read at test time from ../shared/data)."""

from __future__ import annotations

import bz2
import xml.etree.ElementTree as ET
from functools import cache
from pathlib import Path

import pytest

from kg_agent.ingest.facts import Fact, Link, LiteralValue, normalize_key
from kg_agent.ingest.infobox import box_type, extract_boxes, extract_facts

ENWIKI = "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"


@cache
def sample_pages(path: Path) -> dict[str, str]:
    """Title → wikitext of the dump's articles (namespace 0, not redirects)."""
    pages: dict[str, str] = {}
    with bz2.open(path) as raw:
        for _event, elem in ET.iterparse(raw):
            if not elem.tag.endswith("}page"):
                continue
            fields = {child.tag.rsplit("}", 1)[-1]: child.text or "" for child in elem.iter()}
            text = fields.get("text", "")
            if fields.get("ns") == "0" and not text.lstrip().upper().startswith("#REDIRECT"):
                pages[fields["title"]] = text
            elem.clear()
    return pages


@pytest.fixture
def enwiki(shared_data_dir: Path) -> dict[str, str]:
    path = shared_data_dir / "wiki" / ENWIKI
    if not path.exists():
        pytest.skip(f"{path} not found: the real-infobox tests need the English sample")
    return sample_pages(path)


def box(body: str, name: str = "Infobox person") -> str:
    return "{{" + name + "\n" + body + "\n}}\n'''Subject''' is a subject.\n"


def facts_of(body: str, name: str = "Infobox person") -> dict[str, Fact]:
    return {f.key: f for f in extract_facts(box(body, name))}


def one(body: str) -> Fact:
    found = extract_facts(box(body))
    assert len(found) == 1, found
    return found[0]


def text(value: str) -> LiteralValue:
    return LiteralValue("text", value, value)


# ------------------------------------------------------------------ boxes and keys


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Infobox settlement", "settlement"),
        ("Infobox_Country", "country"),
        ("infobox person", "person"),
        ("Template:Infobox U.S. state", "u.s. state"),
        ("Infobox  officeholder ", "officeholder"),
        ("Infobox spaceflight/IP", "spaceflight/ip"),
        ("Infobox", "infobox"),
        ("Taxobox", "taxobox"),
        ("Speciesbox", "speciesbox"),
        ("Automatic taxobox", "automatic taxobox"),
        ("Chembox", "chembox"),
        ("Drugbox", "drugbox"),
        ("Geobox", "geobox"),
        ("Football club infobox", "football club"),
        ("Infobox ship begin", "ship"),
        ("Navbox", None),
        ("Cite web", None),
        ("Infoboxes", None),
        ("Userbox", None),
    ],
)
def test_box_type_normalises_box_names_and_rejects_others(name: str, expected: str) -> None:
    assert box_type(name) == expected


@pytest.mark.parametrize(
    "name",
    [
        "Infobox settlement",
        "Infobox_Country",
        "infobox book",
        "Taxobox",
        "Speciesbox",
        "Automatic taxobox",
        "Chembox",
        "Drugbox",
        "Geobox",
        "Infobox mountain",
        "Infobox language",
    ],
)
def test_every_kind_of_box_is_read(name: str) -> None:
    boxes = extract_boxes("{{Use dmy dates}}\n{{" + name + "\n| name = [[X]]\n}}\nProse.")
    assert [(b.type, b.name) for b in boxes] == [(box_type(name), name)]
    assert boxes[0].facts[0].items == (Link("X", "X"),)


def test_navboxes_citations_and_commented_boxes_are_not_boxes() -> None:
    page = (
        "<!-- {{Infobox person|name=Hidden}} -->\nText.<ref>{{cite web|author=A}}</ref>\n"
        "{{Navbox|name=N|list1=[[A]]}}"
    )
    assert extract_boxes(page) == ()
    assert extract_facts("No templates at all.") == ()


def test_every_box_of_a_page_is_read_in_order() -> None:
    page = (
        "{{Infobox U.S. state\n|Capital = [[Montgomery, Alabama|Montgomery]]\n}}\n"
        "Text.\n== Symbols ==\n{{Infobox U.S. state symbols\n|Bird = [[Northern flicker]]\n}}"
    )
    assert [(f.box, f.key) for f in extract_facts(page)] == [
        ("u.s. state", "capital"),
        ("u.s. state symbols", "bird"),
    ]


@pytest.mark.parametrize("raw", ["birth_place", "Birth place", "birthplace", "birth-place"])
def test_key_spellings_meet_in_one_key_and_the_raw_key_is_kept(raw: str) -> None:
    assert normalize_key(raw) == "birthplace"
    fact = one(f"| {raw} = [[Godalming]]")
    assert (fact.key, fact.raw_key) == ("birthplace", raw)


def test_key_normalisation_rule() -> None:
    assert normalize_key("2010Pop") == "2010pop"
    assert normalize_key(" Leader_Name 1 ") == "leadername1"
    assert normalize_key("GDP (PPP)") == "gdpppp"


def test_layout_keys_and_layout_values_are_not_facts() -> None:
    found = facts_of(
        "| image = Jane.jpg\n| image_size = 250px\n| caption = Jane in 1990\n| alt = A woman\n"
        "| map = Map.svg\n| logo = L.png\n| signature = Sig.svg\n"
        "| coordinates = {{coord|1|N|2|E}}\n"
        "| footnotes = A note\n| embed = yes\n| Flag = Flag of Alabama.svg\n| width = 270px\n"
        "| name = Jane"
    )
    assert list(found) == ["name"]


def test_only_named_parameters_of_the_box_itself_are_facts() -> None:
    found = facts_of(
        "| positional\n| occupation = [[Writer]]{{cite web|author=Smith|language=fr}}\n"
        "| known = {{hlist|[[A]]|title=B}}"
    )
    assert list(found) == ["occupation", "known"]
    assert found["known"].items == (Link("A", "A"),)


def test_the_last_of_a_repeated_parameter_wins() -> None:
    assert one("| spouse = [[A]]\n| spouse = [[B]]").items == (Link("B", "B"),)


def test_empty_and_markup_only_values_give_no_fact() -> None:
    found = facts_of(
        "| empty =\n| blank = <!-- fill in -->\n| image2 = [[File:X.png|thumb|[[Caption]]]]\n"
        "| picture = [[File:X.png]]\n| dash = {{nbsp}}\n| refs = <ref>[[Only a ref]]</ref>\n"
        "| name = Jane"
    )
    assert list(found) == ["name"]


# ------------------------------------------------------------------ values and items


def test_refs_and_comments_are_stripped_and_their_citations_are_not_facts() -> None:
    found = facts_of(
        "| capital = [[Paris]]<ref>{{cite web|author=Smith|title=T|language=fr}}</ref>"
        "<ref name=x/>\n| HDI = 0.825 <!--number only-->| currency = [[Euro]]"
    )
    assert set(found) == {"capital", "hdi", "currency"}
    assert found["capital"].value == "Paris"
    assert found["currency"].items == (Link("Euro", "Euro"),)


def test_links_give_normalised_targets_with_labels() -> None:
    fact = one("| capital = [[montgomery,_Alabama#History|Montgomery]]")
    assert fact.items == (Link("Montgomery, Alabama", "Montgomery"),)
    assert fact.value == "Montgomery"


def test_link_pipes_and_the_pipe_template_do_not_split_parameters() -> None:
    found = facts_of("| a = [[B|C]] and [[D|E]]\n| f = x{{!}}y")
    assert found["a"].items == (Link("B", "C"), Link("D", "E"))
    assert found["f"].value == "x|y"


@pytest.mark.parametrize("br", ["<br>", "<br />", "<br/>", "<BR>"])
def test_line_breaks_separate_items(br: str) -> None:
    fact = one(f"| senators = [[Richard Shelby]] (R){br}[[Jeff Sessions]] (R){br}Other")
    assert fact.items == (
        Link("Richard Shelby", "Richard Shelby"),
        Link("Jeff Sessions", "Jeff Sessions"),
        text("Other"),
    )
    assert fact.value == "Richard Shelby (R); Jeff Sessions (R); Other"


@pytest.mark.parametrize(
    "value",
    [
        "{{hlist|[[A]]|b|{{nowrap|c d}}}}",
        "{{plainlist|\n* [[A]]\n* b\n* c d\n}}",
        "{{ubl|[[A]]|b|c d}}",
        "{{unbulleted list|class=nowrap|[[A]]|b|c d}}",
        "{{flatlist|\n* [[A]]\n* b\n* c d\n}}",
        "\n* [[A]]\n* b\n* c d",
        "{{plainlist}}\n* [[A]]\n* b\n* c d\n{{endplainlist}}",
    ],
)
def test_list_templates_and_bullets_give_one_item_each(value: str) -> None:
    assert one(f"| known = {value}").items == (Link("A", "A"), text("b"), text("c d"))


@pytest.mark.parametrize(
    ("value", "iso"),
    [
        ("{{start date|1969|7|16}}", "1969-07-16"),
        ("{{start date and age|1969|7}}", "1969-07"),
        ("{{birth date|df=yes|1894|7|26}}", "1894-07-26"),
        ("{{birth date and age|mf=yes|1950|03|04}}", "1950-03-04"),
        ("{{death date and age|1963|11|22|1894|7|26}}", "1963-11-22"),
        ("{{dts|1969|7|16}}", "1969-07-16"),
        ("{{dts|1969|July|16}}", "1969-07-16"),
        ("{{start-date|July 16, 1969, 13:32:00|timezone=yes}}&nbsp;UTC", "1969-07-16"),
        ("{{start date|1969}}", "1969"),
        ("July 16, 1969", "1969-07-16"),
        ("16 July 1969", "1969-07-16"),
        ("1969-07-16", "1969-07-16"),
        ("July 19, 1969, 21:44&nbsp;UTC", "1969-07-19"),
        ("April 1709", "1709-04"),
    ],
)
def test_dates_become_iso_date_items(value: str, iso: str) -> None:
    (item,) = one(f"| date = {value}").items
    assert isinstance(item, LiteralValue)
    assert (item.kind, item.value) == ("date", iso)


def test_a_date_written_beside_links_is_an_item_too() -> None:
    # Animal Farm: the publication's day and its publisher in one value
    fact = one("| published = 17 August 1945 ([[Secker and Warburg]], London, England)")
    date, link = fact.items[:2]
    assert isinstance(date, LiteralValue) and (date.kind, date.value) == ("date", "1945-08-17")
    assert isinstance(link, Link) and link.target == "Secker and Warburg"
    # a date the links write is not read twice
    (only,) = one("| released = [[June 1, 1967]]").items
    assert isinstance(only, Link)


def test_bare_years_and_what_is_not_a_date() -> None:
    found = facts_of(
        "| founded = 1905\n| published = 1895 (poem)\n| period = 1934–1982\n"
        "| omim = 2098\n| pop = 1500\n| cospar = 1969-059A"
    )
    kinds = {k: (f.items[0].kind, f.items[0].value) for k, f in found.items()}  # type: ignore[union-attr]
    assert kinds == {
        "founded": ("year", 1905),
        "published": ("year", 1895),
        "period": ("text", "1934–1982"),
        "omim": ("number", 2098.0),
        "pop": ("number", 1500.0),
        "cospar": ("text", "1969-059A"),
    }


def test_a_year_of_an_era_is_a_year_counted_down_before_the_common_era() -> None:
    """Aristotle's ``death_date = 322 BC (aged 62)`` was the number 322 with the unit
    "BC"; a year before the common era is negative (as XSD's gYear and Wikidata write
    it), whatever the key, and "AD" marks a year too."""
    from kg_agent.ingest.shards import fact_rows

    found = facts_of(
        "| death_date = 322 BC (aged 62)\n| founded = 753 BCE\n| eruption = AD 79\n"
        "| reign = 27 BC – AD 14\n| pop = 322\n| os = CE 6"
    )
    kinds = {k: (f.items[0].kind, f.items[0].value) for k, f in found.items()}  # type: ignore[union-attr]
    assert kinds == {
        "deathdate": ("year", -322),
        "founded": ("year", -753),
        "eruption": ("year", 79),
        "reign": ("text", "27 BC – AD 14"),
        "pop": ("number", 322.0),
        "os": ("text", "CE 6"),
    }
    row = fact_rows("Aristotle", [found["deathdate"]], 0)[0]
    assert (row["kind"], row["number"], row["date"], row["unit"]) == ("year", -322.0, "-0322", "")
    # written before the box's links, as a full date beside them is: an item of its own
    born = one("| birth_date = 384 BC<br>[[Stagira]], [[Chalkidiki]], [[Greece]]")
    assert born.items[:2] == (LiteralValue("year", "384 BC", -384), Link("Stagira", "Stagira"))
    assert [i.target for i in born.items[1:]] == ["Stagira", "Chalkidiki", "Greece"]  # type: ignore[union-attr]
    (only,) = one("| launched = [[AD 79]]").items  # a year the links write is not read twice
    assert isinstance(only, Link)


def test_marriage_gives_the_spouse_with_the_years() -> None:
    assert one("| spouse = {{marriage|Frank O'Connor|1929|1979|end=w.}}").items == (
        LiteralValue("text", "Frank O'Connor", "Frank O'Connor", note="m. 1929–1979, w."),
    )
    fact = one(
        "| spouses = {{ubl|{{marriage|Maria Nys|1919|1955}}|{{marriage|[[Laura Huxley]]"
        "|()=smaller|1956|1963}}}}"
    )
    assert fact.items[1] == Link("Laura Huxley", "Laura Huxley", "m. 1956–1963")
    assert fact.value == "Maria Nys (m. 1919–1955); Laura Huxley (m. 1956–1963)"


@pytest.mark.parametrize(
    ("value", "number", "unit"),
    [
        ("{{convert|5|km|mi}}", 5.0, "km"),
        ("{{convert|135765|km2|sqmi}}", 135765.0, "km2"),
        ("{{convert|54.5|nmi|km|disp=flip}}", 54.5, "nmi"),
        ("{{cvt|1,600|km}}", 1600.0, "km"),
        ("{{val|1.5|e=3|u=kg}}", 1500.0, "kg"),
        ("4,858,979 (2015 est.)", 4858979.0, ""),
        ("US$2.616 billion", 2616000000.0, "US$"),
        ("$17.15 billion", 17150000000.0, "$"),
        ("178.91 km2", 178.91, "km2"),
        ("−4", -4.0, ""),
        ("8.4% (2012 est.)", 8.4, "%"),
    ],
)
def test_quantities_become_numbers_with_units(value: str, number: float, unit: str) -> None:
    (item,) = one(f"| area = {value}").items
    assert isinstance(item, LiteralValue)
    assert (item.kind, item.value, item.unit) == ("number", number, unit)


def test_ordinals_identifiers_and_ranges_stay_text() -> None:
    found = facts_of("| rank = 30th\n| medlineplus = 002912\n| convert = {{convert|5|to|10|km}}")
    assert [f.items[0].kind for f in found.values()] == ["text", "text", "text"]  # type: ignore[union-attr]
    assert found["convert"].value == "5 to 10 km"


def test_inline_templates_render_their_text() -> None:
    found = facts_of(
        "| a = {{nowrap|Alisa Rosenbaum}}\n| b = {{small|tiny}} text\n| c = {{lang|fr|texte}}\n"
        "| d = {{lang-ru|слово}}\n| e = {{native name|ar|{{noitalic|اسم}}}}\n"
        "| f = {{circa|1500}} AD\n| g = 5{{ndash}}6"
    )
    assert {k: f.value for k, f in found.items()} == {
        "a": "Alisa Rosenbaum",
        "b": "tiny text",
        "c": "texte",
        "d": "слово",
        "e": "اسم",
        "f": "c. 1500 AD",
        "g": "5–6",
    }


def test_flag_templates_give_the_country_or_nothing() -> None:
    found = facts_of(
        "| a = {{flag|Algeria}}\n| b = {{flagcountry|France}}\n"
        "| c = {{flagicon|USA}} [[United States]]\n| d = {{flagicon|USA}}"
    )
    assert found["a"].items == (Link("Algeria", "Algeria"),)
    assert found["b"].items == (Link("France", "France"),)
    assert found["c"].items == (Link("United States", "United States"),)
    assert "d" not in found


def test_interlanguage_links_of_either_form_give_the_local_title() -> None:
    # today's form writes the local title first, the old one (in the English sample's
    # Schopenhauer box) the language code
    found = facts_of(
        "| a = {{ill|Gymnasium Ernestinum Gotha|de}}\n"
        "| b = {{ill|de|Gymnasium Ernestinum Gotha|Gymnasium illustre zu Gotha}}"
    )
    gotha = (Link("Gymnasium Ernestinum Gotha", "Gymnasium Ernestinum Gotha"),)
    assert found["a"].items == gotha
    assert found["b"].items == gotha


def test_markup_images_and_entities_are_cleaned() -> None:
    found = facts_of(
        "| a = '''Bold''' and ''italic''\n| b = 5&nbsp;km&amp;more\n"
        "| c = [[File:Seal.svg|20px]] [[Seal of X|Seal]]\n| d = <small>As of 2010</small>\n"
        "| e = [http://example.org Example site]"
    )
    assert {k: f.value for k, f in found.items()} == {
        "a": "Bold and italic",
        "b": "5 km&more",
        "c": "Seal",
        "d": "As of 2010",
        "e": "Example site",
    }


def test_nested_templates_five_levels_deep() -> None:
    value = "{{nowrap|{{small|{{nobold|{{nowrap|{{small|[[Deep link]] text}}}}}}}}}}"
    fact = one(f"| deep = {value}")
    assert fact.items == (Link("Deep link", "Deep link"),)
    assert fact.value == "Deep link text"


def test_tables_inside_values_do_not_split_parameters() -> None:
    found = facts_of(
        '| members =\n{| class="wikitable"\n|-\n| [[A]] || style="x" | [[B|Bee]]\n|}\n| next = y'
    )
    assert found["members"].items == (Link("A", "A"), Link("B", "Bee"))
    assert found["next"].items == (text("y"),)


def test_embedded_sub_boxes_are_read_with_their_own_type() -> None:
    page = box(
        "| name = X\n| module = {{Infobox military person|embed=yes\n"
        "| allegiance = [[United States]]\n| rank = {{cite web|author=Z}}General}}\n"
        "| interplanetary = {{Infobox spaceflight/IP|type=orbiter|object=[[Moon|Lunar]]}}",
        "Infobox officeholder",
    )
    found = [(f.box, f.sub_box, f.key, f.value) for f in extract_facts(page)]
    assert found == [
        ("officeholder", "", "name", "X"),
        ("officeholder", "military person", "allegiance", "United States"),
        ("officeholder", "military person", "rank", "General"),
        ("officeholder", "spaceflight/ip", "type", "orbiter"),
        ("officeholder", "spaceflight/ip", "object", "Lunar"),
    ]
    assert [b.type for b in extract_boxes(page)] == ["officeholder"]


# ------------------------------------------------------------------ robustness


def test_an_unclosed_inner_template_does_not_swallow_the_box() -> None:
    page = (
        "{{Infobox person\n| a = {{nowrap|x\n| b = [[B]]\n}}\n'''Jane''' is a person.\n\n"
        "== Later ==\n{{Infobox award\n| c = [[C]]\n}}"
    )
    assert [(f.box, f.key, f.value) for f in extract_facts(page)] == [
        ("person", "b", "B"),
        ("award", "c", "C"),
    ]


def test_a_truncated_page_gives_the_facts_read_so_far() -> None:
    found = extract_facts("{{Infobox person\n| name = X\n| birth_place = [[Paris]]\n| death_da")
    assert [(f.key, f.value) for f in found] == [("name", "X"), ("birthplace", "Paris")]
    found = extract_facts("{{Infobox person\n| birth_place = [[Paris]]\n\nProse [[here]].\n")
    assert [(f.key, f.value) for f in found] == [("birthplace", "Paris")]


@pytest.mark.parametrize(
    "page",
    [
        "{{Infobox",
        "{{Infobox person|",
        "{{Infobox person|a=",
        "{{Infobox person|a=}}}}}}]]]][[[[",
        "{{Infobox person|a=[[b|{{c|d]]}}|e=<ref>x",
        "{{Infobox person|a=<!--",
        "{{Infobox person|a={|\n|x||y\n|b=1",
        "{{Infobox person|a={{{1}}}|b={{{{x}}}}}}",
        "{{Infobox person|={{birth date|x|y|z}}|a={{birth date|2001|13|40}}}}",
        "{{Infobox person|a={{convert|abc|km}}{{marriage}}{{flag}}{{dts}}{{val}}}}",
        "}}{{Infobox x|a=1|b={{Infobox y|c={{Infobox z|d=[[e]]",
        "{{infobox}}{{Infobox}}{{Taxobox|}}",
    ],
)
def test_bad_input_never_raises(page: str) -> None:
    extract_facts(page)
    extract_boxes(page)


def test_bad_dates_become_text_not_errors() -> None:
    fact = one("| a = {{birth date|2001|13|40}}")
    assert fact.items == (text("2001 13 40"),)


@pytest.mark.parametrize(
    ("page", "facts"),
    [
        ("{{Infobox x|a=" + "{{" * 20000 + "|b=[[B]]", 1),  # read to its end: b = B
        ("{{Infobox x|a=1}}" * 5000, 5000),
        ("{{Infobox x\n|a=[[b" * 5000, None),
        ("{{Infobox x|a=" + "[[a|" * 20000, None),
        ("box " * 50000, 0),
    ],
    ids=["unclosed-templates", "many-boxes", "unclosed-links", "nested-links", "box-words"],
)
def test_pathological_pages_are_read_whole(page: str, facts: int | None) -> None:
    """Pages built to make a scanner quadratic are read (how long they take is the
    parse benchmark's to measure: scripts/bench_scale.py)."""
    found = extract_facts(page)
    if facts is not None:
        assert len(found) == facts


# ------------------------------------------------------------------ the English sample


def fact(pages: dict[str, str], title: str, key: str) -> Fact:
    found = [f for f in extract_facts(pages[title]) if f.key == key and not f.sub_box]
    assert found, f"{title} has no {key!r} fact"
    return found[0]


def test_sample_alabama_capital_is_a_link_to_montgomery(enwiki: dict[str, str]) -> None:
    assert fact(enwiki, "Alabama", "capital").items == (Link("Montgomery, Alabama", "Montgomery"),)


def test_sample_huxley_birth_place_links_godalming(enwiki: dict[str, str]) -> None:
    got = fact(enwiki, "Aldous Huxley", "birthplace")
    assert got.raw_key == "birth_place"
    assert got.items[0] == Link("Godalming", "Godalming, England")


def test_sample_rand_spouse_comes_from_marriage(enwiki: dict[str, str]) -> None:
    (item,) = fact(enwiki, "Ayn Rand", "spouse").items
    assert isinstance(item, LiteralValue)
    assert (item.value, item.note) == ("Frank O'Connor", "m. 1929–1979, w.")


def test_sample_aruba_currency_links_the_florin(enwiki: dict[str, str]) -> None:
    # In the dump "currency" follows "| HDI = 0.825 <!--number only-->" on the same line.
    assert fact(enwiki, "Aruba", "currency").items == (Link("Aruban florin", "Aruban florin"),)


def test_sample_apollo_11_launch_date_is_iso(enwiki: dict[str, str]) -> None:
    (item,) = fact(enwiki, "Apollo 11", "launchdate").items
    assert item == LiteralValue("date", "16 July 1969", "1969-07-16")
    assert fact(enwiki, "Apollo 11", "launchmass").items == (
        LiteralValue("number", "100756 lb", 100756.0, "lb"),
    )


def test_sample_populations_are_numbers(enwiki: dict[str, str]) -> None:
    (item,) = fact(enwiki, "Algeria", "populationestimate").items
    assert (item.kind, item.value) == ("number", 40400000.0)  # type: ignore[union-attr]
    (item,) = fact(enwiki, "Alabama", "2010pop").items
    assert (item.kind, item.value) == ("number", 4858979.0)  # type: ignore[union-attr]


def test_sample_citation_parameters_are_not_facts(enwiki: dict[str, str]) -> None:
    # Algeria's box cites with {{cite web |author=Staff …|language=Arabic}} inside <ref>s.
    assert "author=Staff" in enwiki["Algeria"] and "|language=Arabic" in enwiki["Algeria"]
    keys = {f.key for f in extract_facts(enwiki["Algeria"])}
    assert not keys & {"author", "language", "title", "url", "accessdate", "publisher"}
    motto = fact(enwiki, "Algeria", "nationalmotto")
    assert "cite" not in motto.value and "Constitution" not in motto.value


def test_sample_sub_boxes_of_apollo_11(enwiki: dict[str, str]) -> None:
    subs = [f for f in extract_facts(enwiki["Apollo 11"]) if f.sub_box == "spaceflight/ip"]
    assert [f.value for f in subs if f.key == "type"] == ["orbiter", "lander"]
    assert all(f.box == "spaceflight" for f in subs)


def test_every_sample_article_parses_and_half_have_a_box(enwiki: dict[str, str]) -> None:
    assert len(enwiki) == 106
    with_box = 0
    total = 0
    for wikitext in enwiki.values():
        boxes = extract_boxes(wikitext)
        with_box += bool(boxes)
        total += sum(len(b.facts) for b in boxes)
        for b in boxes:
            for f in b.facts:
                assert f.key and f.items and f.value, f
    assert with_box == 50
    assert total > 1000

"""Exact behaviour of the wikitext cleaner on hand-written snippets."""

from __future__ import annotations

import time

import pytest

from kg_agent.ingest.records import ParsedSection
from kg_agent.ingest.wikitext import parse_wikitext


def lead(wikitext: str, **kwargs: object) -> ParsedSection:
    result = parse_wikitext("Page", wikitext, **kwargs)  # type: ignore[arg-type]
    assert result.sections, "expected a lead section"
    assert result.sections[0].heading == ""
    return result.sections[0]


# ---------------------------------------------------------------- links and labels


def test_piped_and_plain_links_give_label_text_and_normalised_targets() -> None:
    sec = lead("A [[political philosophy]] and [[state (polity)|the state]] and [[Foo_bar]].")
    assert sec.text == "A political philosophy and the state and Foo bar."
    assert sec.links == ("Political philosophy", "State (polity)", "Foo bar")


def test_anchor_underscore_and_lowercase_first_letter_are_normalised() -> None:
    sec = lead("See [[english_alphabet#Letter names|named]] and [[paris#History]] and [[#Local]].")
    # The anchor is dropped from the target; a bare "#Local" is not an article link.
    assert sec.links == ("English alphabet", "Paris")
    assert sec.text == "See named and paris and Local."


def test_link_trail_letters_join_the_label() -> None:
    sec = lead("Many [[consonant]]s and [[apple|pear]]s.")
    assert sec.text == "Many consonants and pears."
    assert sec.links == ("Consonant", "Apple")


def test_repeated_links_are_kept_in_order() -> None:
    sec = lead("[[B]] then [[A]] then [[B]].")
    assert sec.links == ("B", "A", "B")


def test_pipe_trick_shows_the_title_without_its_parenthesis() -> None:
    sec = lead("The [[Mercury (planet)|]] is small.")
    assert sec.text == "The Mercury is small."
    assert sec.links == ("Mercury (planet)",)


def test_entities_in_link_targets_are_decoded() -> None:
    assert lead("[[AT&amp;T]] grew.").links == ("AT&T",)


def test_namespace_and_interwiki_links_are_not_article_links() -> None:
    sec = lead(
        "See [[Wikipedia:Manual of Style|the manual]], [[Template:Infobox]], "
        "[[wikt:anarchy|a word]], [[Help:Contents]], [[:de:Anarchismus|German]] and [[Real]]."
    )
    assert sec.links == ("Real",)
    assert sec.text == ("See the manual, Template:Infobox, a word, Help:Contents, German and Real.")


def test_interlanguage_links_vanish_from_text() -> None:
    sec = lead("Text.\n[[de:Anarchismus]]\n[[zh-yue:無政府主義]]\n[[simple:Anarchism]]")
    assert sec.text == "Text."
    assert sec.links == ()


# ------------------------------------------------------------------ files, categories


def test_files_are_dropped_with_their_captions_and_caption_links() -> None:
    sec = lead(
        "[[File:Albedo-e hg.svg|thumb|Reflected [[sun]] light over [[Earth|the Earth]]]]"
        "'''Albedo''' is [[reflection]]. [[Image:X.png|left|[[Nested]] caption]] End."
    )
    assert sec.text == "Albedo is reflection. End."
    assert sec.links == ("Reflection",)


def test_localised_file_and_category_namespaces_come_from_siteinfo() -> None:
    text = "[[Fails:Flag.svg|thumb|[[Karūgs]]]] Albaneja [[Europa|Europā]].\n[[Kategoreja:X]]"
    result = parse_wikitext("Albaneja", text, namespace_prefixes={"Fails": 6, "Kategoreja": 14})
    assert result.sections[0].text == "Albaneja Europā."
    assert result.sections[0].links == ("Europa",)
    assert result.categories == ("X",)


def test_categories_are_collected_normalised_without_sort_keys() -> None:
    result = parse_wikitext(
        "Art",
        "Art is art.\n[[Category:Art| ]]\n[[category:non-verbal_communication|Art]]\n"
        "[[Category:Art]]\n[[:Category:Painters]] are listed.",
    )
    assert result.categories == ("Art", "Non-verbal communication")
    # A leading colon makes a link to the category page, shown as text, not a membership.
    assert result.sections[0].text == "Art is art.\n\nCategory:Painters are listed."
    assert result.sections[0].links == ()


# ----------------------------------------------------------- templates, refs, tables


def test_templates_are_removed_but_their_wikilinks_count() -> None:
    sec = lead(
        "{{Infobox person\n| name = Albert\n| birth_place = [[Ulm]], [[Kingdom of Württemberg|"
        "Württemberg]]\n| spouse = {{marriage|[[Mileva Marić]]|1903}}\n}}\n"
        "'''Albert''' was a physicist.{{citation needed|date=May 2020}}"
    )
    assert sec.text == "Albert was a physicist."
    assert sec.links == ("Ulm", "Kingdom of Württemberg", "Mileva Marić")


def test_main_and_see_also_hatnotes_are_links_but_not_text() -> None:
    result = parse_wikitext(
        "X",
        "Lead.\n== History ==\n{{Main|History of anarchism|l1=History}}\n"
        "{{See also|Anarchism in Spain|Category:Anarchists}}\nText.",
    )
    history = result.sections[1]
    assert history.text == "Text."
    assert history.links == ("History of anarchism", "Anarchism in Spain")


def test_a_few_inline_templates_keep_their_text() -> None:
    sec = lead(
        "He spoke {{lang|fr|le texte}} and {{lang-de|Deutsch}}, ran {{convert|5|km}} and "
        "{{convert|3|to|5|mi}}, was born {{birth date|1879|3|14}}, a {{nowrap|long word}}."
    )
    assert sec.text == (
        "He spoke le texte and Deutsch, ran 5 km and 3 to 5 mi, was born 14 March 1879, "
        "a long word."
    )


def test_an_interlanguage_link_shows_its_local_title_in_either_form() -> None:
    sec = lead("He went to {{ill|de|Gymnasium Gotha}} and {{ill|Old School|fr}}.")
    assert sec.text == "He went to Gymnasium Gotha and Old School."


def test_empty_parentheses_left_by_removed_templates_are_tidied() -> None:
    sec = lead("'''Albert Einstein''' ({{IPAc-en|ˈ|aɪ|n}}; {{IPA-de|ˈalbɛɐ̯t}}; 14 March 1879) was.")
    assert sec.text == "Albert Einstein (14 March 1879) was."
    assert lead("'''Bodmin''' ({{IPA|x}}) is.").text == "Bodmin is."


def test_refs_in_both_forms_are_removed_with_their_links() -> None:
    sec = lead(
        'Anarchism is a philosophy.<ref name="def">{{cite web|title=[[The Globe and Mail]]}}'
        '</ref> It is old.<ref name=def/><ref group="n">A [[note]].</ref>\n<references/>'
    )
    assert sec.text == "Anarchism is a philosophy. It is old."
    assert sec.links == ()


def test_tables_are_removed_but_their_links_count() -> None:
    sec = lead(
        'Before.\n{| class="wikitable"\n! Nr. !! Name\n|-\n| 1 || [[Daugpiļs]]\n|-\n'
        "| 2 || {{flag|Latvia}} [[Rēzne]]\n|}\nAfter."
    )
    assert sec.text == "Before.\n\nAfter."
    assert sec.links == ("Daugpiļs", "Rēzne")


def test_nested_tables_and_a_template_closing_at_line_start() -> None:
    sec = lead("{{Infobox\n|x = 1\n|}}\nA\n{|\n|\n{|\n| [[In]]\n|}\n|}\nB")
    assert sec.text == "A\n\nB"
    assert sec.links == ("In",)


def test_a_table_or_a_heading_at_the_very_start_of_the_text() -> None:
    # The scanners find a line's start by its "\n"; the text's first line has none.
    sec = lead("{|\n| a [[Table Link]] cell\n|}\nAfter the table [[Ulm]].")
    assert sec.text == "After the table Ulm."
    assert sec.links == ("Table Link", "Ulm")
    result = parse_wikitext("Page", "== Early life ==\nBorn in [[Ulm]].")
    assert [(s.heading, s.text, s.links) for s in result.sections] == [
        ("Early life", "Born in Ulm.", ("Ulm",))
    ]


def test_spaces_before_punctuation_are_closed_only_where_there_are_some() -> None:
    sec = lead("Born {{circa}} , in [[Ulm]] {{cite web|x}} .\n* item ( ; born 1879 )")
    assert sec.text == "Born c., in Ulm.\nitem (born 1879)"
    assert lead("Plain text (,) and (x, ) here.\nNo space , here").text == (
        "Plain text and (x) here. No space, here"
    )
    assert lead("A line (with [ spaced ] brackets) ends.").text == (
        "A line (with [spaced] brackets) ends."
    )


# ------------------------------------------------------------------- inline markup


def test_comments_formatting_html_and_entities() -> None:
    sec = lead(
        "<!-- hidden [[Secret]] -->'''Bold''' and ''italic'' and '''''both''''' "
        'H<sub>2</sub>O<br/>at&nbsp;20&nbsp;°C &amp; <span style="x">kept</span> a&lt;b.'
    )
    assert sec.text == "Bold and italic and both H2O at 20 °C & kept a<b."
    assert sec.links == ()


def test_external_links_keep_their_label_only() -> None:
    sec = lead("See [http://example.org the site] and [https://x.org] and http://bare.org here.")
    assert sec.text == "See the site and and http://bare.org here."


def test_nowiki_is_verbatim_and_math_is_dropped() -> None:
    sec = lead("Write <nowiki>[[not a link]]</nowiki> where <math>E=mc^2</math> holds.")
    assert sec.text == "Write [[not a link]] where holds."
    assert sec.links == ()


def test_lists_become_lines_and_paragraphs_blank_lines() -> None:
    sec = lead(
        "First line\ncontinues here.\n\nIntro:\n* [[One]]\n** Two\n# Three\n; Term : def\n\nLast."
    )
    assert sec.text == ("First line continues here.\n\nIntro:\nOne\nTwo\nThree\nTerm: def\n\nLast.")


def test_magic_words_vanish() -> None:
    assert lead("__NOTOC__Text __TOC__ here.").text == "Text here."


# ------------------------------------------------------------------------ sections


HIERARCHY = """Lead [[L]].
== History ==
{{Main|History of X}}
=== Early [[years]] ===
Early text.
==== ''Details'' ====
Detail text.
=== Late ===
Late text.
== Geography ==
Geo text.
== See also ==
* [[Related]]
== References ==
{{Reflist}}
=== Sub of references ===
Should vanish [[Gone]].
== External links ==
* [http://x.org Site]
[[Category:Things]]
"""


def test_heading_hierarchy_levels_and_paths() -> None:
    result = parse_wikitext("X", HIERARCHY)
    got = [(s.heading, s.heading_path, s.level) for s in result.sections]
    assert got == [
        ("", (), 1),
        # "History" itself holds no text (only a hatnote): dropped, but kept in paths.
        ("Early years", ("History", "Early years"), 3),
        ("Details", ("History", "Early years", "Details"), 4),
        ("Late", ("History", "Late"), 3),
        ("Geography", ("Geography",), 2),
        ("See also", ("See also",), 2),
    ]
    assert result.categories == ("Things",)


def test_links_in_headings_belong_to_their_section() -> None:
    sections = {s.heading: s for s in parse_wikitext("X", HIERARCHY).sections}
    assert sections["Early years"].links == ("Years",)
    assert sections["Early years"].text == "Early text."


def test_boilerplate_sections_and_their_subsections_are_dropped() -> None:
    result = parse_wikitext("X", HIERARCHY)
    all_text = " ".join(s.text for s in result.sections)
    all_links = [link for s in result.sections for link in s.links]
    assert "vanish" not in all_text and "Site" not in all_text
    assert "Gone" not in all_links


def test_see_also_is_an_ordinary_section() -> None:
    see_also = parse_wikitext("X", HIERARCHY).sections[-1]
    assert (see_also.text, see_also.links) == ("Related", ("Related",))


def test_link_only_sections_are_dropped_unless_asked() -> None:
    text = "Lead.\n== Winners ==\n{|\n| [[A]] || [[B]]\n|}\n== After ==\nx"
    assert [s.heading for s in parse_wikitext("X", text).sections] == ["", "After"]
    kept = parse_wikitext("X", text, keep_link_only_sections=True).sections
    assert [(s.heading, s.text, s.links) for s in kept][1] == ("Winners", "", ("A", "B"))


def test_heading_level_is_the_smaller_side_and_extra_equals_stay() -> None:
    result = parse_wikitext("X", "Lead.\n== A ===\nBody.\n")
    assert [(s.heading, s.level) for s in result.sections][1] == ("A =", 2)


def test_page_without_text_has_no_sections() -> None:
    result = parse_wikitext("X", "{{Infobox}}\n[[Category:Y]]")
    assert (result.sections, result.categories, result.is_disambiguation) == ((), ("Y",), False)
    # an empty box still says what the page is about (its type), with no fact
    assert [(b.type, b.facts) for b in result.boxes] == [("infobox", ())]


# ------------------------------------------------------------------ disambiguation


@pytest.mark.parametrize(
    "template",
    [
        "{{disambiguation}}",
        "{{Disambiguation|geo}}",
        "{{disambig}}",
        "{{Dab}}",
        "{{hndis|Smith, John}}",
        "{{geodis}}",
        "{{set index}}",
        "{{SIA}}",
        "{{Set index article}}",
        "{{Human name disambiguation}}",
        "{{Template:Disambiguation}}",
        "{{ place_name_disambiguation }}",
        "__DISAMBIG__",
    ],
)
def test_disambiguation_templates(template: str) -> None:
    text = f"'''Mercury''' may be:\n* [[A]]\n{template}"
    assert parse_wikitext("Mercury", text).is_disambiguation


@pytest.mark.parametrize("template", ["{{disambiguation needed}}", "{{dn}}", "{{About|x}}"])
def test_other_templates_are_not_disambiguation(template: str) -> None:
    assert not parse_wikitext("Mercury", f"Text [[A]]{template}.").is_disambiguation


def test_disambiguation_title() -> None:
    assert parse_wikitext("Austin (disambiguation)", "Austin may be: [[A]]").is_disambiguation


# ---------------------------------------------------------------------- robustness


@pytest.mark.parametrize(
    "wikitext",
    [
        "Before <ref>unclosed reference\n\nAfter [[link]].",
        "Before <nowiki>unclosed and <pre>unclosed\n\nAfter [[link]].",
        "Before {{unclosed template\n\nAfter [[link]].",
        "Before [[unclosed link\n\nAfter [[link]].",
        "Before ]] stray }} closers [[link]].",
    ],
)
def test_unbalanced_markup_does_not_swallow_the_section(wikitext: str) -> None:
    sec = lead(wikitext)
    assert sec.text.startswith("Before")
    assert sec.text.endswith("link.")
    assert "Link" in sec.links
    assert not any(tok in sec.text for tok in ("[[", "]]", "{{", "}}"))


@pytest.mark.parametrize(
    "wikitext",
    [
        "{{" * 20000,
        "[[a|" * 5000 + "]]" * 5000,
        ("[[A|" + "{{lang|x|") * 1000 + "}}]]" * 1000,
        "{{x|" + "[[A|{{lang|x|" * 1000 + "}}]]" * 1000 + "}}",
        "{|\n" * 5000,
    ],
)
def test_pathological_nesting_is_fast(wikitext: str) -> None:
    start = time.perf_counter()
    result = parse_wikitext("X", wikitext)
    assert time.perf_counter() - start < 2.0
    for sec in result.sections:
        assert not any(tok in sec.text for tok in ("[[", "]]", "{{", "}}"))

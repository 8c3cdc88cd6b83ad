"""The tantivy text index: analysis, BM25 search, deletes, title search (real index on disk)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg_agent.store.text_index import TextIndex


@pytest.fixture
def index(tmp_path: Path) -> TextIndex:
    ix = TextIndex(tmp_path / "gen", create=True)
    w = ix.writer()
    w.add_sections(
        ["Albedo::0000", "Albedo::0001", "Moon::0000", "Anarchism::0000"],
        ["Albedo", "Albedo", "Moon", "Anarchism"],
        ["", "Terrestrial albedo", "", ""],
        [
            "Albedo is the measure of the diffuse reflection of solar radiation.",
            "Snow has a high albedo; forests reflect less.",
            "The Moon is Earth's only natural satellite and reflects sunlight.",
            "Anarchism is a political philosophy that advocates stateless societies.",
        ],
    )
    w.add_titles(["Albedo", "Moon", "Anarchism", "Moon (disambiguation)"])
    w.commit()
    w.close()
    ix.reload()
    return ix


def test_terms_are_stemmed_lowercased_and_stop_words_dropped(index: TextIndex) -> None:
    assert index.terms("The Reflections of THE Moon?") == ["reflect", "moon"]
    assert index.terms("the of and") == []


def test_bm25_ranks_the_section_that_says_it(index: TextIndex) -> None:
    hits = index.search_sections("what does snow reflect?", 3)
    assert hits[0][0] == "Albedo::0001"
    assert [sid for sid, _ in index.search_sections("stateless philosophy", 5)] == [
        "Anarchism::0000"
    ]
    assert index.search_sections("the of", 5) == []  # only stop words: no query at all


def test_query_text_is_never_query_syntax(index: TextIndex) -> None:
    for text in ('title:"Moon" AND (x', "moon*", "-moon", "body:albedo", "\\"):
        index.search_sections(text, 3)  # no parse error, whatever the text
    assert index.search_sections("body:albedo", 3)[0][0].startswith("Albedo::")


def test_search_within_articles_and_delete_by_article(index: TextIndex) -> None:
    within = index.search_sections_of("reflect", ["Moon", "Anarchism"], 5)
    assert [sid for sid, _ in within] == ["Moon::0000"]
    w = index.writer()
    w.delete_article_sections(["Albedo"])
    w.commit()
    w.close()
    index.reload()
    assert all(not sid.startswith("Albedo") for sid, _ in index.search_sections("albedo", 5))
    assert index.counts() == (2, 4)


def test_titles_are_found_by_their_words(index: TextIndex) -> None:
    found = [t for t, _ in index.search_titles("the moon", 5)]
    assert found[:2] == ["Moon", "Moon (disambiguation)"]


def test_missing_index_is_an_error(tmp_path: Path) -> None:
    assert not TextIndex.exists(tmp_path)
    with pytest.raises(FileNotFoundError):
        TextIndex(tmp_path)

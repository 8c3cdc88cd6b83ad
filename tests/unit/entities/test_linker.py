"""The question entity linker's rules, on the in-memory graph."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg_agent.entities import QuestionEntityLinker
from kg_agent.store import GraphReader
from tests.support.memory_graph import MemoryArticle, MemoryGraph


def test_the_memory_graph_is_a_graph_reader(world_no_vectors: MemoryGraph) -> None:
    assert isinstance(world_no_vectors, GraphReader)


def test_a_parenthetical_title_is_found_by_its_base_name(world_no_vectors: MemoryGraph) -> None:
    linker = QuestionEntityLinker(world_no_vectors)
    q = "Who is the mother of the director of Polish-Russian War?"
    assert linker.link(q) == ["Polish-Russian War (film)"]


def test_an_ambiguous_base_name_seeds_every_candidate(world_no_vectors: MemoryGraph) -> None:
    linker = QuestionEntityLinker(world_no_vectors)
    assert sorted(linker.link("Who wrote Dark River?")) == [
        "Dark River (film)",
        "Dark River (novel)",
    ]


def test_titles_come_in_order_of_first_appearance(world_no_vectors: MemoryGraph) -> None:
    linker = QuestionEntityLinker(world_no_vectors)
    q = "Did Dorota Masłowska write the novel behind Polish-Russian War?"
    assert linker.link(q) == ["Dorota Masłowska", "Polish-Russian War (film)"]
    q = "Was Polish-Russian War based on a book by Dorota Masłowska?"
    assert linker.link(q) == ["Polish-Russian War (film)", "Dorota Masłowska"]


def test_a_redirect_links_its_target(world_no_vectors: MemoryGraph) -> None:
    linker = QuestionEntityLinker(world_no_vectors)
    assert linker.link("Where did Braunek teach?") == ["Małgorzata Braunek"]


def test_years_stubs_and_lower_case_words_are_not_entities(world_no_vectors: MemoryGraph) -> None:
    linker = QuestionEntityLinker(world_no_vectors)
    # "2009" is a title, "Szamotuły" a stub, "war film" a lower-case span of a title
    q = "Which war film of 2009 was shot in Szamotuły?"
    assert linker.link(q) == []


def test_the_full_text_fallback_wants_the_name_in_order(world_no_vectors: MemoryGraph) -> None:
    linker = QuestionEntityLinker(world_no_vectors, max_titles=0)  # above the automaton's size
    assert not linker.uses_automaton()
    assert linker.link("Who employed Anne Law at court?") == ["Anne Law"]
    # both words are in the question, but not as the name
    assert linker.link("Who was Anne Woodville's father-in-law?") == []
    # a stub has no text to seed: the automaton leaves it out, and so does the fallback
    assert linker.link("Which war film of 2009 was shot in Szamotuły?") == []
    # a redirect is not in the title index: the question's names are looked up by key
    assert linker.link("Where did Braunek teach?") == ["Małgorzata Braunek"]
    assert linker.link("Who directed PRW?") == ["Polish-Russian War (film)"]


def test_the_full_text_fallback_reads_its_titles_by_the_automaton_s_rules() -> None:
    # titles inside one another, a name that goes on, a base name shared by two
    # titles, a year that picks one: the fallback (a whole Wikipedia's path) links
    # what the automaton links, where the old phrase test took every title whose
    # words were in the question
    graph = MemoryGraph(
        (
            MemoryArticle(t, [("", f"{t} is a page.")])
            for t in (
                "New York",
                "New York City",
                "Stephen",
                "Stephen King",
                "Misery (1990 film)",
                "Misery (novel)",
                "Kathy Bates",
                "United States",
                "Škoda Auto",
            )
        ),
        redirects={"U.S.": "United States", "Škoda": "Škoda Auto", "Ghost": "Nowhere"},
    )
    automaton = QuestionEntityLinker(graph)
    fallback = QuestionEntityLinker(graph, max_titles=0)
    assert not fallback.uses_automaton()
    cases = {
        "Which New York City borough was Stephen King's editor from?": [
            "New York City",
            "Stephen King",
        ],
        "Who starred with Kathy Bates in the 1990 film Misery?": [
            "Kathy Bates",
            "Misery (1990 film)",
        ],
        "Who wrote Misery?": ["Misery (1990 film)", "Misery (novel)"],
        "Did Stephen Fry live in New York?": ["New York"],
        # redirects the title index does not hold, looked up by key: a final full stop,
        # a capital outside ASCII; a redirect to no article links nothing
        "Was Stephen King born in the U.S.?": ["Stephen King", "United States"],
        "Who founded Škoda?": ["Škoda Auto"],
        "Who is the Ghost?": [],
    }
    for question, linked in cases.items():
        assert sorted(automaton.link(question)) == sorted(linked), question
        assert sorted(fallback.link(question)) == sorted(linked), question


def test_a_lower_case_question_s_kind_word_picks_the_article_of_that_kind() -> None:
    # "animalia" is a title and the base of another: the question's "book" picks that
    # one, as the matcher picks "Love and Theft (duo)" for "the duo Love and Theft"
    graph = MemoryGraph(
        MemoryArticle(t, [("", f"{t} is a page.")])
        for t in ("Animalia", "Animalia (book)", "Animalia (band)", "Graeme Base")
    )
    linker = QuestionEntityLinker(graph)
    assert linker.topics_otherwise("who published the book animalia") == ["Animalia (book)"]
    assert linker.topics_otherwise("when did the animalia band form") == ["Animalia (band)"]
    # no kind word: the title itself; a kind the question does not write is not taken
    assert linker.topics_otherwise("what does animalia include") == ["Animalia"]
    assert linker.topics_otherwise("is a sponge in animalia or not") == ["Animalia"]


@pytest.fixture
def saved(world_no_vectors: MemoryGraph, tmp_path: Path) -> tuple[QuestionEntityLinker, Path]:
    """The world's linker, built and saved."""
    linker = QuestionEntityLinker(world_no_vectors)
    path = tmp_path / "linker.pkl"
    linker.save(path)
    return linker, path


def test_a_saved_linker_carried_over_to_a_new_key_serves_it_unchanged(
    saved: tuple[QuestionEntityLinker, Path], tmp_path: Path
) -> None:
    from kg_agent.entities.linker import _read, carry_over

    linker, path = saved
    was = linker.key()
    before = path.read_bytes()
    assert not carry_over(path, "another graph", "new"), "built for another key: left alone"
    assert path.read_bytes() == before
    assert not carry_over(tmp_path / "none.pkl", was, "new")
    assert carry_over(path, was, "new")
    assert _read(path, was) is None
    carried = _read(path, "new")
    assert carried is not None
    for q in ("Who wrote Dark River?", "Where did Braunek teach?"):
        assert carried.find(q) == linker._matcher.find(q)  # type: ignore[union-attr]


def test_a_change_of_names_is_saved_as_an_overlay_that_links_as_a_build(
    world_no_vectors: MemoryGraph, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kg_agent.entities import overlay
    from kg_agent.entities.linker import _overlay_path, _read, _read_saved, carry_over

    monkeypatch.setattr(overlay, "MAX_CHANGED_SHARE", 0.5)  # a small graph's few names
    world = world_no_vectors
    graph = MemoryGraph(world.articles.values(), redirects=world.redirects)  # a copy
    path = tmp_path / "linker.pkl"
    QuestionEntityLinker(graph).save(path)
    base = path.read_bytes()
    # an article added with a redirect to it, one deleted, a redirect moved
    graph.articles["Dark River (1990 film)"] = MemoryArticle(
        "Dark River (1990 film)", [("", "Dark River is a 1990 film.")]
    )
    graph.redirects["Zulawski"] = "Dark River (1990 film)"
    del graph.articles["Dark River (novel)"]
    graph.redirects["Braunek"] = "Polish-Russian War (film)"
    changed = QuestionEntityLinker(graph)
    assert changed.save_changes(path), "a few names changed: an overlay"
    assert path.read_bytes() == base, "the saved linker under it is left as it was"
    saved = QuestionEntityLinker(graph, saved=path)
    built = QuestionEntityLinker(graph)
    questions = [
        "Who wrote Dark River?",
        "Was the 1990 film Dark River shot by Zulawski?",
        "Where did Braunek teach?",
        "Did Dorota Masłowska write the novel behind Polish-Russian War?",
    ]
    assert [saved.link(q) for q in questions] == [built.link(q) for q in questions]
    assert saved.loaded_from == path
    assert sorted(saved.link("Who wrote Dark River?")) == [
        "Dark River (1990 film)",
        "Dark River (film)",
    ]
    # edits alone later: the overlay is re-labelled, the file under it untouched
    assert carry_over(path, changed.key(), "after edits")
    assert path.read_bytes() == base
    carried = _read_saved(path, "after edits")
    assert carried is not None
    assert [carried.find(q) for q in questions] == [
        built._matcher.find(q)  # type: ignore[union-attr]
        for q in questions
    ]
    # most names changed: a new build replaces the file, and its old overlay goes
    for n in range(40):
        graph.articles[f"Film Number {n}"] = MemoryArticle(f"Film Number {n}", [("", "A film.")])
    assert not QuestionEntityLinker(graph).save_changes(path)
    assert not _overlay_path(path).exists()
    assert _read(path, QuestionEntityLinker(graph).key()) is not None


def test_a_damaged_or_stale_overlay_is_never_laid_over_the_wrong_linker(
    saved: tuple[QuestionEntityLinker, Path],
) -> None:
    from kg_agent.entities.linker import _overlay_path, _read_saved, _write_overlay
    from kg_agent.entities.overlay import Overlay

    linker, path = saved
    key = linker.key()
    question = "Where did Braunek teach?"
    _overlay_path(path).write_bytes(b"\x80\x05 not a pickle")  # torn or damaged
    matcher = _read_saved(path, key)
    assert matcher is not None and matcher.find(question) == {"Małgorzata Braunek": 1}
    assert _read_saved(path, "another key") is None
    # an overlay made for another saved linker than the one beside it serves nothing
    empty = Overlay(titles=(), keys=(), entries=(), changed=0)
    _write_overlay(path, "newer", "some other linker", empty)
    assert _read_saved(path, "newer") is None
    _write_overlay(path, "newer", key, empty)
    matcher = _read_saved(path, "newer")
    assert matcher is not None and matcher.find(question) == {"Małgorzata Braunek": 1}
    # a byte changed in the overlay's payload: its digest fails, the file alone serves
    data = bytearray(_overlay_path(path).read_bytes())
    data[-3] ^= 0xFF
    _overlay_path(path).write_bytes(bytes(data))
    assert _read_saved(path, "newer") is None
    assert _read_saved(path, key) is not None


def test_a_linker_saved_by_other_rules_is_built_again_not_overlaid(
    world_no_vectors: MemoryGraph, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kg_agent.entities import linker as saved_form
    from kg_agent.entities import overlay
    from kg_agent.entities.linker import _overlay_path

    monkeypatch.setattr(overlay, "MAX_CHANGED_SHARE", 0.5)
    path = tmp_path / "linker.pkl"
    with monkeypatch.context() as older:  # as an older kg-agent would have saved it
        older.setattr(saved_form, "_build_identity", lambda: "older rules")
        QuestionEntityLinker(world_no_vectors).save(path)
    world = world_no_vectors
    graph = MemoryGraph(
        world.articles.values(), redirects={**world.redirects, "Zula": "Dark River (film)"}
    )
    assert not QuestionEntityLinker(graph).save_changes(path), "built again"
    assert not _overlay_path(path).exists()
    graph.redirects["Zulu"] = "Dark River (film)"
    assert QuestionEntityLinker(graph).save_changes(path), "today's file takes an overlay"


def test_an_overlay_left_by_a_crash_never_hides_the_file_it_was_not_made_for(
    saved: tuple[QuestionEntityLinker, Path],
) -> None:
    from kg_agent.entities.linker import (
        _overlay_path,
        _read_saved,
        _write_overlay,
        carry_over,
    )
    from kg_agent.entities.overlay import Overlay

    linker, path = saved
    key = linker.key()
    # the overlay of an older file, for the key the file is now saved for (a reindex
    # re-saves the linker for the same loads, and a crash left the overlay)
    _write_overlay(path, key, "an older file", Overlay((), (), (), 0))
    assert _read_saved(path, key) is not None, "the file serves its key"
    assert carry_over(path, key, "after edits")
    assert not _overlay_path(path).exists(), "the file was carried, the orphan dropped"
    assert _read_saved(path, "after edits") is not None

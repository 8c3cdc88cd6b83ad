"""The plain set's figures: how each question is judged and averaged."""

from __future__ import annotations

from kg_agent.evaluation.trust import PlainQuestion, run_plain, summarise_plain


def _q(qid: str, kind: str, answers: tuple[str, ...], answerable: bool = True) -> PlainQuestion:
    return PlainQuestion(qid, f"question {qid}?", kind, answerable, answers, ("Aruba",))


def test_the_answer_text_holds_the_gold_over_questions_whose_gold_can_be_words() -> None:
    questions = [
        _q("a", "text", ("Oranjestad",)),
        _q("b", "text", ("Willemstad",)),
        _q("c", "yes_no", ("yes",)),  # "yes" is no words of a text: left out
        _q("d", "unanswerable", (), answerable=False),
    ]
    replies = {
        "question a?": ("Oranjestad", True, 0.95, False, "Oranjestad [1]. Its capital."),
        "question b?": (None, False, 0.0, False, "Aruba is an island."),
        "question c?": ("yes", False, 0.55, False, "Yes: Aruba is a country of the Kingdom."),
        "question d?": (None, False, 0.0, True, "Not in the graph."),
    }
    results = run_plain(questions, lambda q: replies[q])
    assert [r.sentence for r in results] == [True, False, None, None]
    summary = summarise_plain(results)
    assert summary["overall"]["answerable sentence"] == 50.0  # 1 of a and b, not of 3
    assert summary["kinds"]["yes_no"]["sentence"] is None
    assert summary["kinds"]["unanswerable"]["sentence"] is None
    assert summary["kinds"]["yes_no"]["right"] == 100.0  # judged by the short answer
    assert summary["overall"]["answerable right"] == 66.7
    assert summary["overall"]["unanswerable refused"] == 100.0


def test_each_way_of_answering_has_its_own_precision() -> None:
    """The bold answers' precision per source: a source that shows wrong answers is seen
    apart from one whose bold answers are all right; a refusal and a question with no
    short answer are found by none, and an unanswerable question answered is wrong."""
    questions = [
        _q("a", "infobox", ("Oranjestad",)),
        _q("b", "infobox", ("Papiamento",)),
        _q("c", "text", ("1986",)),
        _q("d", "text", ("Dutch",)),
        _q("e", "unanswerable", (), answerable=False),
        _q("f", "text", ("Caribbean",)),
        _q("g", "unanswerable", (), answerable=False),
    ]
    replies = {
        "question a?": ("Oranjestad", True, 0.95, False, "Oranjestad [1].", "fact"),
        "question b?": ("Dutch", True, 0.8, False, "Dutch [1].", "fact"),
        "question c?": ("1986", False, 0.4, False, "In 1986 [1].", "ranked"),
        "question d?": ("Spanish", False, 0.3, False, "Spanish [1].", "ranked"),
        "question e?": ("Willemstad", False, 0.3, False, "Willemstad [1].", "ranked"),
        "question f?": (None, False, 0.0, False, "Aruba is an island.", ""),
        "question g?": ("Aruba", False, 0.0, True, "Not in the graph.", "grounding"),
    }
    results = run_plain(questions, lambda q: replies[q])
    assert [r.found_by for r in results] == ["fact", "fact", "ranked", "ranked", "ranked", "", ""]
    sources = summarise_plain(results)["sources"]
    assert list(sources) == ["ranked", "fact"]  # most used first
    assert sources["fact"] == {"n": 2, "right": 50.0, "shown": 2, "shown_right": 50.0}
    assert sources["ranked"] == {"n": 3, "right": 33.3, "shown": 0, "shown_right": None}

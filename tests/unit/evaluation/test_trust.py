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

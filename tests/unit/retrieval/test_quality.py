"""Section quality score: the exact formula of the spec, reproduced value by value.

``length_score = min(0.8, 0.2 + (words/200)*0.6)``, ``keyword_score = min(0.2,
overlap*0.2)`` over the question's words minus ``STOP_WORDS``, 0.0 under 20
words, capped at 1.0; sections under ``CONTENT_QUALITY_THRESHOLD`` (0.3) are
dropped before synthesis.
"""

from __future__ import annotations

import pytest

from kg_agent.agent import KnowledgeGraphAgent
from kg_agent.retrieval.quality import (
    CONTENT_QUALITY_THRESHOLD,
    STOP_WORDS,
    content_words,
    score_section_quality,
)

QUESTION = "Which professorship did Charles Babbage hold at Cambridge?"
KEYWORDS = ["professorship", "Charles", "Babbage", "hold", "Cambridge"]  # 5, minus stop words
FILLER = "lorem"  # shares nothing with QUESTION


def section(n_words: int, keywords: list[str] | tuple[str, ...] = ()) -> str:
    """A section of exactly ``n_words`` whitespace-separated words holding ``keywords``."""
    words = list(keywords) + [FILLER] * (n_words - len(keywords))
    assert len(words) == n_words
    return " ".join(words)


def test_question_keywords_are_its_words_minus_stop_words() -> None:
    assert content_words(QUESTION) == {k.lower() for k in KEYWORDS}
    assert {"which", "did", "at"} <= STOP_WORDS


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (section(20), 0.26),  # 0.2 + 0.1*0.6
        (section(50), 0.35),  # 0/5 keywords
        (section(50, KEYWORDS), 0.55),  # 5/5 keywords: +0.2
        (section(100), 0.50),
        (section(200), 0.80),
        (section(200, KEYWORDS), 1.0),
        ("See also.", 0.0),
    ],
    ids=["20w-0kw", "50w-0kw", "50w-all", "100w-0kw", "200w-0kw", "200w-all", "see-also"],
)
def test_spec_table(content: str, expected: float) -> None:
    assert score_section_quality(content, QUESTION) == pytest.approx(expected)
    # The agent's method is the same function.
    assert KnowledgeGraphAgent._score_section_quality(content, QUESTION) == pytest.approx(expected)


def test_threshold_is_0_3() -> None:
    assert CONTENT_QUALITY_THRESHOLD == 0.3
    # 34 words is the shortest keyword-free section that passes (0.2 + 34/200*0.6 = 0.302).
    assert score_section_quality(section(33), QUESTION) < CONTENT_QUALITY_THRESHOLD
    assert score_section_quality(section(34), QUESTION) >= CONTENT_QUALITY_THRESHOLD
    # With every keyword, a 20-word section passes.
    assert score_section_quality(section(20, KEYWORDS), QUESTION) == pytest.approx(0.46)


def test_under_20_words_is_zero_whatever_the_overlap() -> None:
    assert score_section_quality(section(19, KEYWORDS), QUESTION) == 0.0
    assert score_section_quality("", QUESTION) == 0.0
    assert score_section_quality(section(20), QUESTION) > 0.0


def test_partial_overlap_is_proportional() -> None:
    # 2 of 5 keywords: 0.35 + 0.4*0.2
    assert score_section_quality(section(50, KEYWORDS[:2]), QUESTION) == pytest.approx(0.43)
    # A keyword repeated counts once.
    repeated = section(50, ["Babbage"] * 10)
    assert score_section_quality(repeated, QUESTION) == pytest.approx(0.35 + 0.2 / 5)


def test_length_score_caps_at_0_8_and_total_at_1() -> None:
    assert score_section_quality(section(400), QUESTION) == pytest.approx(0.8)
    assert score_section_quality(section(5000), QUESTION) == pytest.approx(0.8)
    assert score_section_quality(section(5000, KEYWORDS), QUESTION) == pytest.approx(1.0)
    assert score_section_quality(section(199, KEYWORDS), QUESTION) == pytest.approx(0.997)


def test_keywords_are_case_insensitive() -> None:
    lower = section(50, [k.lower() for k in KEYWORDS])
    upper = section(50, [k.upper() for k in KEYWORDS])
    assert score_section_quality(lower, QUESTION) == pytest.approx(0.55)
    assert score_section_quality(upper, QUESTION) == pytest.approx(0.55)
    assert score_section_quality(lower, QUESTION.upper()) == pytest.approx(0.55)


def test_punctuation_does_not_hide_a_keyword() -> None:
    content = section(50, ["Babbage,", "(Cambridge)", "professorship."])
    assert score_section_quality(content, QUESTION) == pytest.approx(0.35 + 0.2 * 3 / 5)


def test_stop_words_are_ignored() -> None:
    # Stop words in the section earn nothing...
    stop_heavy = section(50, ["which", "did", "at", "the", "Which", "AT"])
    assert score_section_quality(stop_heavy, QUESTION) == pytest.approx(0.35)
    # ...and stop words in the question do not dilute the ratio.
    padded_question = "Which of the professorships was it that he did hold at Cambridge?"
    content = section(50, ["professorships", "hold", "Cambridge"])
    assert score_section_quality(content, padded_question) == pytest.approx(0.55)


def test_question_of_stop_words_only_scores_length_alone() -> None:
    assert content_words("What is it that was there?") == set()
    assert score_section_quality(section(50, ["what", "is", "it"]), "What is it?") == (
        pytest.approx(0.35)
    )
    assert score_section_quality(section(50), "") == pytest.approx(0.35)

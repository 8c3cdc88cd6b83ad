"""Section quality: is a retrieved section substantial and on topic enough to cite?

Stub sections ("See also.", a one-line list item) match queries well in
embedding space yet carry no facts. The score rewards length (up to 0.8) and
overlap with the question's content words (up to 0.2); sections under
:data:`CONTENT_QUALITY_THRESHOLD` are dropped before synthesis.
"""

from __future__ import annotations

from kg_agent.language.tokens import STOP_WORDS, content_words

CONTENT_QUALITY_THRESHOLD = 0.3
MIN_WORDS = 20

__all__ = [
    "CONTENT_QUALITY_THRESHOLD",
    "MIN_WORDS",
    "STOP_WORDS",
    "content_words",
    "score_section_quality",
]


def score_section_quality(content: str, question: str) -> float:
    """Quality in [0, 1] of ``content`` as evidence for ``question``.

    0.0 below 20 words; otherwise ``min(0.8, 0.2 + (words/200)*0.6)`` for length
    plus ``min(0.2, overlap*0.2)`` where overlap is the share of the question's
    content words found in the section; capped at 1.0.
    """
    word_count = len(content.split())
    if word_count < MIN_WORDS:
        return 0.0
    length_score = min(0.8, 0.2 + (word_count / 200) * 0.6)
    keywords = content_words(question)
    overlap_ratio = len(keywords & content_words(content)) / len(keywords) if keywords else 0.0
    keyword_score = min(0.2, overlap_ratio * 0.2)
    return min(1.0, length_score + keyword_score)

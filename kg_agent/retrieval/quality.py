"""Section quality: is a retrieved section substantial and on topic enough to cite?

Stub sections ("See also.", a one-line list item) match queries well in
embedding space yet carry no facts. The score rewards length (up to 0.8) and
overlap with the question's content words (up to 0.2); sections under
:data:`CONTENT_QUALITY_THRESHOLD` are dropped before synthesis.
"""

from __future__ import annotations

import re

CONTENT_QUALITY_THRESHOLD = 0.3
MIN_WORDS = 20

STOP_WORDS: frozenset[str] = frozenset(
    [
        "a",
        "about",
        "after",
        "all",
        "also",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "during",
        "each",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "more",
        "most",
        "my",
        "no",
        "not",
        "of",
        "on",
        "one",
        "or",
        "other",
        "our",
        "out",
        "over",
        "she",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "up",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "whose",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)

_WORD = re.compile(r"[\w'’-]+", re.UNICODE)


def content_words(text: str) -> set[str]:
    """Lower-cased words of ``text`` that are not :data:`STOP_WORDS`."""
    words = (w.strip("'’-").lower() for w in _WORD.findall(text))
    return {w for w in words if w and w not in STOP_WORDS}


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

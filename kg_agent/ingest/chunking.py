"""Split long sections into passages the embedding model can see whole.

all-MiniLM-L6-v2 reads at most 256 word-pieces (about 180 words); a Wikipedia
section of 2,000 words embedded as one vector is mostly truncated away. Each
part keeps its section's heading path, so evidence still cites the section.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from kg_agent.language.tokens import SENTENCE_BREAK

_SENTENCE_END = SENTENCE_BREAK

DEFAULT_MAX_WORDS = 160
DEFAULT_MIN_WORDS = 40


def _split_long_paragraph(paragraph: str, max_words: int) -> Iterator[str]:
    words = paragraph.split()
    if len(words) <= max_words:
        yield paragraph
        return
    current: list[str] = []
    count = 0
    for sentence in _SENTENCE_END.split(paragraph):
        n = len(sentence.split())
        if count and count + n > max_words:
            yield " ".join(current)
            current, count = [], 0
        if n > max_words:  # one huge "sentence" (a list flattened): cut by words
            sw = sentence.split()
            for i in range(0, len(sw), max_words):
                yield " ".join(sw[i : i + max_words])
            continue
        current.append(sentence)
        count += n
    if current:
        yield " ".join(current)


def chunk_text(
    text: str, *, max_words: int = DEFAULT_MAX_WORDS, min_words: int = DEFAULT_MIN_WORDS
) -> list[str]:
    """Pack paragraphs into parts of at most ``max_words`` words.

    Paragraph boundaries are preferred; a paragraph longer than the limit is
    cut at sentence ends. A trailing part shorter than ``min_words`` is merged
    into the previous one when that stays within 1.5x the limit, so no
    two-line fragment becomes a retrieval unit of its own.
    """
    text = text.strip()
    if not text:
        return []
    if len(text.split()) <= max_words:
        return [text]
    pieces: list[str] = []
    for para in re.split(r"\n\s*\n", text):
        para = para.strip()
        if para:
            pieces.extend(_split_long_paragraph(para, max_words))
    parts: list[str] = []
    current: list[str] = []
    count = 0
    for piece in pieces:
        n = len(piece.split())
        if count and count + n > max_words:
            parts.append("\n\n".join(current))
            current, count = [], 0
        current.append(piece)
        count += n
    if current:
        tail = "\n\n".join(current)
        if parts and count < min_words and len(parts[-1].split()) + count <= max_words * 1.5:
            parts[-1] = parts[-1] + "\n\n" + tail
        else:
            parts.append(tail)
    return parts


def embedding_input(title: str, heading_path: str, text: str) -> str:
    """The string that is embedded for a section part.

    Prefixing the article title and heading path gives a passage the context
    its text often leaves implicit ("He was born in ..." names no one).
    """
    head = f"{title} — {heading_path}" if heading_path else title
    return f"{head}: {text}"
